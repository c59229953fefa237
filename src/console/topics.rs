//! The topics page: one row per topic (linked to its page) with its partition count, size,
//! log start and end offsets and records summed over its partitions, and its retention and
//! cleanup policy.

use super::topic_facts::{
    ConfigFact, TopicList, TopicSummary, Totals, LIST_PARTITIONS_MEASURED_MAX,
};
use super::{bytes_text, duration_text, escape_html, topic_href, updated_at};

/// A summed figure's cell: the sum over the partitions read here, and which partitions it
/// leaves out (led by other nodes, unreadable now).
pub(super) fn total_cell(class: &str, totals: &Totals, value: &str, data: &str) -> String {
    let mut missing: Vec<String> = totals
        .elsewhere
        .iter()
        .map(|(node, n)| {
            format!(
                "{n} partition{s} on node {node}",
                s = if *n == 1 { "" } else { "s" }
            )
        })
        .collect();
    if totals.unavailable > 0 {
        missing.push(format!("{} unreadable here", totals.unavailable));
    }
    let shown = if totals.here == 0 && !missing.is_empty() {
        String::new()
    } else {
        value.to_owned()
    };
    let note = if missing.is_empty() {
        String::new()
    } else {
        format!(
            " <span class=\"elsewhere\">{}{}</span>",
            if shown.is_empty() { "" } else { "+ " },
            missing.join(", ")
        )
    };
    format!("<td class=\"num {class}\"{data}>{shown}{note}</td>")
}

/// A duration config's cell (`retention.ms`): readable, the exact value in `data-value`.
fn duration_cell(class: &str, c: Option<&ConfigFact>) -> String {
    config_cell(class, c, |v| {
        v.parse::<i64>()
            .map(duration_text)
            .unwrap_or_else(|_| escape_html(v))
    })
}

/// A size config's cell (`retention.bytes`).
fn bytes_config_cell(class: &str, c: Option<&ConfigFact>) -> String {
    config_cell(class, c, |v| match v.parse::<i64>() {
        Ok(n) if n < 0 => "unlimited".to_owned(),
        Ok(n) => bytes_text(n.unsigned_abs()),
        Err(_) => escape_html(v),
    })
}

/// A config's cell: `shown` of its value, the value itself in `data-value`; a value set on
/// the topic is marked as such.
fn config_cell(class: &str, c: Option<&ConfigFact>, shown: impl Fn(&str) -> String) -> String {
    let Some(c) = c else {
        return format!("<td class=\"{class}\">-</td>");
    };
    let value = c.value.as_deref().unwrap_or("");
    let (extra, mark) = if c.overridden {
        (
            " override",
            " <span class=\"set\">(set on the topic)</span>",
        )
    } else {
        ("", "")
    };
    format!(
        "<td class=\"{class}{extra}\" data-value=\"{v}\" title=\"{name}={v} ({source})\">{text}{mark}</td>",
        v = escape_html(value),
        name = escape_html(&c.name),
        source = c.source,
        text = if c.value.is_some() {
            shown(value)
        } else {
            "-".to_owned()
        },
    )
}

fn row(t: &TopicSummary) -> String {
    let figures = match &t.totals {
        Some(tot) => format!(
            "{}{}{}{}",
            total_cell(
                "size",
                tot,
                &bytes_text(tot.size_bytes),
                &format!(" data-bytes=\"{}\"", tot.size_bytes)
            ),
            total_cell("log-start", tot, &tot.log_start.to_string(), ""),
            total_cell("log-end", tot, &tot.log_end.to_string(), ""),
            total_cell("records", tot, &tot.records.to_string(), ""),
        ),
        None => "<td class=\"not-measured\" colspan=\"4\">not measured on this list: see the topic's page</td>".to_owned(),
    };
    format!(
        "<tr data-topic=\"{name}\"><td class=\"topic\"><a href=\"{href}\">{name}</a></td><td class=\"num partitions\">{parts}</td>{figures}{retention_ms}{retention_bytes}{cleanup}</tr>",
        name = escape_html(&t.name),
        href = escape_html(&topic_href(&t.name)),
        parts = t.partitions,
        retention_ms = duration_cell("retention-ms", t.retention_ms.as_ref()),
        retention_bytes = bytes_config_cell("retention-bytes", t.retention_bytes.as_ref()),
        cleanup = config_cell("cleanup-policy", t.cleanup_policy.as_ref(), escape_html),
    )
}

/// The page's `<main>`.
pub fn main(list: &TopicList) -> String {
    let rows: String = list.topics.iter().map(row).collect();
    let mut notes = String::new();
    if list.topics_total > list.topics.len() {
        notes.push_str(&format!(
            "<p class=\"more\">The first {} of {} topics are listed, by name.</p>",
            list.topics.len(),
            list.topics_total
        ));
    }
    let unmeasured = list.topics.iter().filter(|t| t.totals.is_none()).count();
    if unmeasured > 0 {
        notes.push_str(&format!(
            "<p class=\"more\">Topics listed without figures: {unmeasured} (one load measures at most {LIST_PARTITIONS_MEASURED_MAX} partitions; each topic's page has its own).</p>"
        ));
    }
    let empty = if list.topics_total == 0 {
        "<p class=\"empty\">No topics yet.</p>"
    } else {
        ""
    };
    format!(
        "<h1>Topics</h1>{updated}\
<p class=\"about\">Sums over each topic's partitions that node {node} leads; partitions led by other nodes are named, as only their leader measures them. Sizes are the partitions' files on disk, as DescribeLogDirs reports them.</p>{empty}\
<table id=\"topics\"><thead><tr><th>Topic</th><th>Partitions</th><th>Size</th><th>Log start offsets (sum)</th><th>Log end offsets (sum)</th><th>Records</th><th>Retention time</th><th>Retention size</th><th>Cleanup policy</th></tr></thead><tbody>{rows}</tbody></table>{notes}",
        updated = updated_at(list.taken_at_ms),
        node = list.node_id,
    )
}
