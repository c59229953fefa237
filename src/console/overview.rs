//! The groups page: one row per group (linked to its page) and a chart of each group's lag.

use super::{
    chart, dash, escape_html, group_href, notices, seconds, status_class, status_text, updated,
    window_nav, Window, CONSOLE_PATH,
};
use crate::lag::{GroupSnapshot, Snapshot};

fn row(g: &GroupSnapshot, window: Window) -> String {
    let status = status_text(g.status, g.warming_up);
    format!(
        "<tr data-group=\"{id}\"><td class=\"group\"><a href=\"{href}?window={w}\">{id}</a></td><td class=\"type\">{kind}</td><td class=\"state\">{state}</td><td class=\"members\">{members}</td><td class=\"lag\">{lag}</td><td class=\"lag-seconds\">{secs}</td><td class=\"{class}\">{status}</td></tr>",
        id = escape_html(&g.group),
        href = escape_html(&group_href(&g.group)),
        w = window.param(),
        kind = g.group_type,
        state = escape_html(g.state.as_deref().unwrap_or("-")),
        members = dash(g.members),
        lag = dash(g.total_lag),
        secs = seconds(g.max_lag_ms),
        class = status_class(status),
    )
}

/// The page's `<main>`.
pub fn main(snapshot: &Snapshot, window: Window) -> String {
    let rows: String = snapshot.groups.iter().map(|g| row(g, window)).collect();
    let charts: String = snapshot
        .groups
        .iter()
        .map(|g| chart::render(&g.group, &g.history, snapshot.taken_at_ms, window))
        .collect();
    format!(
        "<h1>Consumer groups</h1>{notices}{updated}{nav}\
<table id=\"groups\"><thead><tr><th>Group</th><th>Type</th><th>State</th><th>Members</th><th>Total lag (records)</th><th>Max lag (s)</th><th>Status</th></tr></thead><tbody>{rows}</tbody></table>\
<div id=\"charts\">{charts}</div>",
        notices = notices(snapshot),
        updated = updated(snapshot),
        nav = window_nav(CONSOLE_PATH, window),
    )
}
