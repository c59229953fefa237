//! One group's page: what kind of group it is and where it stands, its lag chart, and each
//! partition's committed offset, log end, lag in records and in seconds, the member consuming
//! it (member id, host, client id), and its status with the rule that decided it.

use super::{
    chart, dash, escape_html, group_href, notices, seconds, status_class, status_text, topic_href,
    updated, window_nav, Window, CONSOLE_PATH,
};
use crate::lag::{GroupSnapshot, PartitionSnapshot, Snapshot};

fn fact(class: &str, name: &str, value: &str) -> String {
    format!("<dt>{name}</dt><dd class=\"{class}\">{value}</dd>")
}

fn facts(g: &GroupSnapshot) -> String {
    let mut out = String::from("<dl class=\"facts\">");
    out.push_str(&fact("type", "Type", g.group_type));
    out.push_str(&fact(
        "state",
        "State",
        &escape_html(g.state.as_deref().unwrap_or("-")),
    ));
    out.push_str(&fact("members", "Members", &dash(g.members)));
    if let Some(c) = &g.consumer {
        out.push_str(&fact(
            "group-epoch",
            "Group epoch",
            &c.group_epoch.to_string(),
        ));
        out.push_str(&fact(
            "assignment-epoch",
            "Target assignment epoch",
            &c.assignment_epoch.to_string(),
        ));
        out.push_str(&fact(
            "members-reconciling",
            "Members reconciling",
            &c.members_reconciling.to_string(),
        ));
    }
    if let Some(ms) = g.reconciling_ms {
        out.push_str(&fact(
            "reconciling-seconds",
            "Rebalancing for (s)",
            &seconds(Some(ms)),
        ));
    }
    out.push_str(&fact("lag", "Total lag (records)", &dash(g.total_lag)));
    out.push_str(&fact(
        "max-lag-seconds",
        "Max lag (s)",
        &seconds(g.max_lag_ms),
    ));
    let status = status_text(g.status, g.warming_up);
    out.push_str(&format!(
        "<dt>Status</dt><dd class=\"{}\">{status}</dd>",
        status_class(status)
    ));
    out.push_str(&fact(
        "offset-commits",
        "Offset commits seen",
        &g.offset_commits.to_string(),
    ));
    out.push_str("</dl>");
    out
}

fn partition_row(p: &PartitionSnapshot) -> String {
    let status = status_text(p.status, p.warming_up);
    format!(
        "<tr data-partition=\"{topic}:{partition}\"><td class=\"topic\"><a href=\"{topic_href}\">{topic}</a></td><td class=\"num partition\">{partition}</td><td class=\"num committed\">{committed}</td><td class=\"num log-end\">{end}</td><td class=\"lag\">{lag}</td><td class=\"lag-seconds\">{secs}</td><td class=\"owner\">{owner}</td><td class=\"host\">{host}</td><td class=\"client-id\">{client}</td><td class=\"{class}\">{status}</td><td class=\"rule\">{rule}</td></tr>",
        owner = escape_html(p.owner.as_ref().map_or("-", |o| o.member_id.as_str())),
        host = escape_html(p.owner.as_ref().map_or("-", |o| o.host.as_str())),
        client = escape_html(p.owner.as_ref().map_or("-", |o| o.client_id.as_str())),
        topic = escape_html(&p.topic),
        topic_href = escape_html(&topic_href(&p.topic)),
        rule = match (p.rule, p.warming_up) {
            (Some(rule), _) => rule,
            (None, true) => "the window is not covered yet: no status can be claimed",
            (None, false) => "-",
        },
        partition = p.partition,
        committed = dash(p.committed),
        end = dash(p.log_end),
        lag = dash(p.lag),
        secs = seconds(p.lag_ms),
        class = status_class(status),
    )
}

/// The page's `<main>` for `group` (`None`: not tracked here, named `shown`).
pub fn main(
    snapshot: &Snapshot,
    group: Option<&GroupSnapshot>,
    shown: &str,
    window: Window,
) -> String {
    let back = format!(
        "<p class=\"back\"><a href=\"{CONSOLE_PATH}?window={}\">← all groups</a></p>",
        window.param()
    );
    let Some(g) = group else {
        return format!(
            "{back}<h1>Group <span class=\"group-id\">{id}</span></h1>{notices}<p class=\"missing\">This node tracks no group named {id}: it has no committed offsets here, or this node is not the group coordinator.</p>",
            id = escape_html(shown),
            notices = notices(snapshot),
        );
    };
    let rows: String = g.partitions.iter().map(partition_row).collect();
    format!(
        "{back}<h1>Group <span class=\"group-id\">{id}</span></h1>{notices}{updated}{facts}{nav}{chart}\
<table id=\"partitions\"><thead><tr><th>Topic</th><th>Partition</th><th>Committed offset</th><th>Log end offset</th><th>Lag (records)</th><th>Lag (s)</th><th>Owner (member id)</th><th>Host</th><th>Client id</th><th>Status</th><th>Why</th></tr></thead><tbody>{rows}</tbody></table>",
        id = escape_html(&g.group),
        notices = notices(snapshot),
        updated = updated(snapshot),
        facts = facts(g),
        nav = window_nav(&group_href(&g.group), window),
        chart = chart::render(&g.group, &g.history, snapshot.taken_at_ms, window),
    )
}
