//! One topic's page: its id and sums, each partition's leader, replicas, size on disk, log
//! start offset, log end offset (high watermark), records and newest record time, the groups
//! with offsets on it, and every config with its value and source as DescribeConfigs reports
//! them.

use super::topic_facts::{
    ConfigFact, Held, PartitionFacts, TopicDetail, Totals, PARTITIONS_LISTED_MAX,
};
use super::topics::total_cell;
use super::{bytes_text, escape_html, group_href, time_element, updated_at, TOPICS_PATH};

fn partition_row(p: &PartitionFacts) -> String {
    let replicas: Vec<String> = p.replicas.iter().map(i32::to_string).collect();
    let head = format!(
        "<tr data-partition=\"{index}\"><td class=\"num partition\">{index}</td><td class=\"num leader\">{leader}</td><td class=\"replicas\">{replicas}</td>",
        index = p.index,
        leader = p.leader,
        replicas = replicas.join(", "),
    );
    let figures = match &p.held {
        Held::Here(f) => format!(
            "<td class=\"num size\" data-bytes=\"{bytes}\" title=\"{bytes} bytes\">{size}</td><td class=\"num log-start\">{start}</td><td class=\"num log-end\">{end}</td><td class=\"num records\">{records}</td><td class=\"newest\">{newest}</td>",
            bytes = f.size_bytes,
            size = bytes_text(f.size_bytes),
            start = f.log_start,
            end = f.log_end,
            records = f.records(),
            newest = match f.max_timestamp_ms.and_then(|ms| u64::try_from(ms).ok()) {
                Some(ms) => time_element(ms),
                None => "-".to_owned(),
            },
        ),
        Held::Unavailable(why) => format!(
            "<td class=\"unavailable\" colspan=\"5\">not readable here now: {}</td>",
            escape_html(why)
        ),
        Held::Elsewhere { sampled_log_end } => {
            let on = format!("<span class=\"elsewhere\">on node {}</span>", p.leader);
            let end = match sampled_log_end {
                Some(end) => format!(
                    "{end} <span class=\"elsewhere\" title=\"as the lag sampler last heard it from node {}\">(sampled)</span>",
                    p.leader
                ),
                None => on.clone(),
            };
            format!(
                "<td class=\"num size\">{on}</td><td class=\"num log-start\">{on}</td><td class=\"num log-end\">{end}</td><td class=\"num records\">{on}</td><td class=\"newest\">{on}</td>"
            )
        }
    };
    format!("{head}{figures}</tr>")
}

fn config_row(c: &ConfigFact) -> String {
    format!(
        "<tr data-config=\"{name}\"{class}><td class=\"name\">{name}</td><td class=\"value\">{value}</td><td class=\"source\">{source}</td><td class=\"honoured\">{honoured}</td></tr>",
        name = escape_html(&c.name),
        class = if c.overridden { " class=\"override\"" } else { "" },
        value = c.value.as_deref().map_or_else(|| "-".to_owned(), escape_html),
        source = c.source,
        honoured = if c.honoured { "yes" } else { "kept, no effect" },
    )
}

fn facts(t: &TopicDetail, totals: &Totals) -> String {
    let groups: Vec<String> = t
        .groups
        .iter()
        .map(|g| {
            format!(
                "<a href=\"{}\">{}</a>",
                escape_html(&group_href(g)),
                escape_html(g)
            )
        })
        .collect();
    let replication = t.partitions.first().map_or(0, |p| p.replicas.len());
    format!(
        "<table class=\"sums\" id=\"sums\"><thead><tr><th>Topic id</th><th>Partitions</th><th>Replication factor</th><th>Size</th><th>Log start offsets (sum)</th><th>Log end offsets (sum)</th><th>Records</th></tr></thead>\
<tbody><tr data-topic=\"{name}\"><td class=\"topic-id\">{id}</td><td class=\"num partitions\">{count}</td><td class=\"num replication\">{replication}</td>{size}{start}{end}{records}</tr></tbody></table>\
<p class=\"groups\">Groups with committed offsets on it: {groups}</p>",
        name = escape_html(&t.name),
        id = escape_html(&t.id),
        count = t.partition_count,
        size = total_cell(
            "size",
            totals,
            &bytes_text(totals.size_bytes),
            &format!(" data-bytes=\"{}\"", totals.size_bytes)
        ),
        start = total_cell("log-start", totals, &totals.log_start.to_string(), ""),
        end = total_cell("log-end", totals, &totals.log_end.to_string(), ""),
        records = total_cell("records", totals, &totals.records.to_string(), ""),
        groups = match (groups.is_empty(), t.groups_known) {
            (false, _) => groups.join(", "),
            (true, true) => "none".to_owned(),
            (true, false) => {
                "not known on this node (the group coordinator's console shows them)".to_owned()
            }
        },
    )
}

/// The page's `<main>` for `topic` (`None`: no topic named `shown`; `notice`: why this node
/// cannot tell).
pub fn main(topic: Option<&TopicDetail>, shown: &str, notice: Option<&str>) -> String {
    let back = format!("<p class=\"back\"><a href=\"{TOPICS_PATH}\">← all topics</a></p>");
    let Some(t) = topic else {
        let why = match notice {
            Some(n) => escape_html(n),
            None => format!("There is no topic named {}.", escape_html(shown)),
        };
        return format!(
            "{back}<h1>Topic <span class=\"topic-name\">{}</span></h1><p class=\"missing\">{why}</p>",
            escape_html(shown)
        );
    };
    let totals = Totals::of(&t.partitions);
    let rows: String = t.partitions.iter().map(partition_row).collect();
    let more = if t.partition_count > t.partitions.len() {
        format!(
            "<p class=\"more\">The first {} of {} partitions are listed and summed (a page lists at most {PARTITIONS_LISTED_MAX}).</p>",
            t.partitions.len(),
            t.partition_count
        )
    } else {
        String::new()
    };
    let configs: String = t.configs.iter().map(config_row).collect();
    format!(
        "{back}<h1>Topic <span class=\"topic-name\">{name}</span></h1>{updated}{facts}\
<h2>Partitions</h2>\
<table id=\"partitions\"><thead><tr><th>Partition</th><th>Leader</th><th>Replicas</th><th>Size</th><th>Log start offset</th><th>Log end offset (high watermark)</th><th>Records</th><th>Newest record time</th></tr></thead><tbody>{rows}</tbody></table>{more}\
<h2>Configs</h2>\
<table id=\"configs\"><thead><tr><th>Name</th><th>Value</th><th>Source</th><th>Honoured by Cohort</th></tr></thead><tbody>{configs}</tbody></table>",
        name = escape_html(&t.name),
        updated = updated_at(t.taken_at_ms),
        facts = facts(t, &totals),
    )
}
