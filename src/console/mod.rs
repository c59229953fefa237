//! The console page: plain server-rendered HTML with a small inline script, no front-end
//! toolchain. It lists the groups (state, members, total lag, lag status) and charts each
//! group's total lag over the last hour as inline SVG; the script polls the JSON rendering of
//! the same snapshot and redraws the table and charts in place.
//!
//! A group whose status still waits for its window (a coordinator that just took office)
//! shows "warming up" rather than a status it cannot know yet; when the lag tracker's limits
//! left groups or partitions out, a line above the table says how many offsets and which flag
//! raises the limit.
//!
//! The server mounts two routes (see `respond`): `render_console` at `CONSOLE_PATH` and
//! `render_json` at `CONSOLE_JSON_PATH`.

use serde::Serialize;

use crate::lag::{GroupSnapshot, LagPoint, Snapshot, Usage};

/// What a group without a status yet shows in the status column.
pub const WARMING_UP: &str = "warming up";

/// Where the page polls for fresh data.
pub const CONSOLE_JSON_PATH: &str = "/console.json";
/// How often the page polls, in ms.
pub const POLL_INTERVAL_MS: u64 = 2_000;
/// The time span the charts show.
pub const CHART_SPAN_MS: u64 = 3_600_000;

const CHART_WIDTH: f64 = 600.0;
const CHART_HEIGHT: f64 = 120.0;

/// Where the page itself is served.
pub const CONSOLE_PATH: &str = "/console";

/// The console's routes: `(content type, body)` for `CONSOLE_PATH` and `CONSOLE_JSON_PATH`,
/// `None` for any other path. Mounting the console is one match arm in the HTTP server.
pub fn respond(path: &str, snapshot: &Snapshot) -> Option<(&'static str, String)> {
    match path {
        CONSOLE_PATH => Some(("text/html; charset=utf-8", render_console(snapshot))),
        CONSOLE_JSON_PATH => Some(("application/json", render_json(snapshot))),
        _ => None,
    }
}

/// The page's data: the snapshot and the limits line made from it.
#[derive(Serialize)]
struct ConsoleData<'a> {
    #[serde(flatten)]
    snapshot: &'a Snapshot,
    limits_notice: String,
}

/// The snapshot as JSON (the page's data feed; also handy for scripts), with the limits line.
pub fn render_json(snapshot: &Snapshot) -> String {
    let data = ConsoleData {
        snapshot,
        limits_notice: limits_notice(&snapshot.usage),
    };
    serde_json::to_string(&data)
        .unwrap_or_else(|e| format!("{{\"error\":{}}}", serde_json::Value::String(e.to_string())))
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The line saying what the lag tracker's limits left out; empty when nothing was.
pub fn limits_notice(usage: &Usage) -> String {
    let mut parts = Vec::new();
    if usage.untracked_group_offsets > 0 {
        parts.push(format!(
            "{} committed offsets of groups over the limit of {} groups (--lag-groups-max)",
            usage.untracked_group_offsets, usage.groups_max
        ));
    }
    if usage.untracked_partition_offsets > 0 {
        parts.push(format!(
            "{} committed offsets of partitions over the limit of {} group partitions (--lag-partitions-max) or {} per group (--lag-partitions-per-group-max)",
            usage.untracked_partition_offsets, usage.partitions_max, usage.partitions_per_group_max
        ));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "Lag tracker limit reached, not tracked: {}. Those groups and partitions have no lag figures or status here.",
        parts.join("; ")
    )
}

/// The status column of a group: its status, "warming up", or `-`.
fn status_text(g: &GroupSnapshot) -> &'static str {
    match (g.status, g.warming_up) {
        (Some(s), _) => s.as_str(),
        (None, true) => WARMING_UP,
        (None, false) => "-",
    }
}

fn dash<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".to_string())
}

/// SVG polyline points of `history` on a chart ending at `end_ms` and spanning `CHART_SPAN_MS`.
/// The page's script computes the same thing from JSON.
pub fn chart_points(history: &[LagPoint], end_ms: u64) -> String {
    let start_ms = end_ms.saturating_sub(CHART_SPAN_MS);
    let max = history
        .iter()
        .map(|p| p.total_lag)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    history
        .iter()
        .filter(|p| p.at_ms >= start_ms)
        .map(|p| {
            let x = (p.at_ms - start_ms) as f64 / CHART_SPAN_MS as f64 * CHART_WIDTH;
            let y = CHART_HEIGHT - (p.total_lag.max(0) as f64 / max) * (CHART_HEIGHT - 4.0) - 2.0;
            format!("{x:.1},{y:.1}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn group_row(g: &GroupSnapshot) -> String {
    let status = status_text(g);
    format!(
        "<tr data-group=\"{id}\"><td class=\"group\">{id}</td><td class=\"state\">{state}</td><td class=\"members\">{members}</td><td class=\"lag\">{lag}</td><td class=\"status status-{class}\">{status}</td></tr>",
        class = status.replace(' ', "-"),
        id = escape_html(&g.group),
        state = escape_html(g.state.as_deref().unwrap_or("-")),
        members = dash(g.members),
        lag = dash(g.total_lag),
    )
}

fn group_chart(g: &GroupSnapshot, end_ms: u64) -> String {
    format!(
        "<figure class=\"chart\" data-group=\"{id}\"><figcaption>{id} — total lag, last hour</figcaption><svg viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\"><rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" class=\"frame\"/><polyline class=\"lag-line\" data-points=\"{n}\" points=\"{points}\"/></svg></figure>",
        id = escape_html(&g.group),
        w = CHART_WIDTH,
        h = CHART_HEIGHT,
        n = g.history.len(),
        points = chart_points(&g.history, end_ms),
    )
}

/// The whole console page for `snapshot`.
pub fn render_console(snapshot: &Snapshot) -> String {
    let rows: String = snapshot.groups.iter().map(group_row).collect();
    let charts: String = snapshot
        .groups
        .iter()
        .map(|g| group_chart(g, snapshot.taken_at_ms))
        .collect();
    format!(
        r###"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Cohort — consumer groups</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; }}
th, td {{ padding: 4px 12px; border-bottom: 1px solid #ddd; text-align: left; }}
td.lag, td.members {{ text-align: right; font-variant-numeric: tabular-nums; }}
.status-OK {{ color: #17803d; }} .status-WARNING {{ color: #b36b00; }}
.status-STALLED, .status-STOPPED, .status-ERROR {{ color: #c0262d; font-weight: bold; }}
.chart {{ margin: 1em 0; }} .frame {{ fill: #fafafa; stroke: #ccc; }}
.lag-line {{ fill: none; stroke: #2463eb; stroke-width: 2; }}
#updated {{ color: #777; font-size: small; }}
#notice {{ background: #fff4d6; border: 1px solid #e6c86e; padding: 6px 10px; }}
#notice:empty, #limits:empty {{ display: none; }}
#limits {{ background: #fde8e8; border: 1px solid #e09a9a; padding: 6px 10px; }}
.status-warming-up {{ color: #777; font-style: italic; }}
</style>
</head>
<body>
<h1>Consumer groups</h1>
<p id="notice">{notice}</p>
<p id="limits">{limits}</p>
<p id="updated" data-taken-at="{taken}">snapshot at {taken} ms</p>
<table id="groups">
<thead><tr><th>Group</th><th>State</th><th>Members</th><th>Total lag</th><th>Status</th></tr></thead>
<tbody>{rows}</tbody>
</table>
<div id="charts">{charts}</div>
<script>
(function () {{
  var SPAN = {span}, W = {w}, H = {h};
  function text(v) {{ return v === null || v === undefined ? "-" : String(v); }}
  function points(history, end) {{
    var start = Math.max(0, end - SPAN), max = 1;
    history.forEach(function (p) {{ if (p.total_lag > max) max = p.total_lag; }});
    return history.filter(function (p) {{ return p.at_ms >= start; }}).map(function (p) {{
      var x = (p.at_ms - start) / SPAN * W;
      var y = H - (Math.max(0, p.total_lag) / max) * (H - 4) - 2;
      return x.toFixed(1) + "," + y.toFixed(1);
    }}).join(" ");
  }}
  function cell(cls, value) {{
    var td = document.createElement("td"); td.className = cls; td.textContent = value; return td;
  }}
  function render(s) {{
    var body = document.querySelector("#groups tbody"), charts = document.getElementById("charts");
    body.textContent = ""; charts.textContent = "";
    s.groups.forEach(function (g) {{
      var status = g.status ? g.status : (g.warming_up ? "{warming}" : "-");
      var tr = document.createElement("tr");
      tr.setAttribute("data-group", g.group);
      tr.appendChild(cell("group", g.group));
      tr.appendChild(cell("state", text(g.state)));
      tr.appendChild(cell("members", text(g.members)));
      tr.appendChild(cell("lag", text(g.total_lag)));
      tr.appendChild(cell("status status-" + status.replace(/ /g, "-"), status));
      body.appendChild(tr);
      var ns = "http://www.w3.org/2000/svg";
      var fig = document.createElement("figure"); fig.className = "chart"; fig.setAttribute("data-group", g.group);
      var cap = document.createElement("figcaption"); cap.textContent = g.group + " \u2014 total lag, last hour";
      var svg = document.createElementNS(ns, "svg");
      svg.setAttribute("viewBox", "0 0 " + W + " " + H); svg.setAttribute("width", W); svg.setAttribute("height", H);
      var rect = document.createElementNS(ns, "rect");
      rect.setAttribute("class", "frame"); rect.setAttribute("width", W); rect.setAttribute("height", H);
      var line = document.createElementNS(ns, "polyline");
      line.setAttribute("class", "lag-line"); line.setAttribute("data-points", g.history.length);
      line.setAttribute("points", points(g.history, s.taken_at_ms));
      svg.appendChild(rect); svg.appendChild(line); fig.appendChild(cap); fig.appendChild(svg);
      charts.appendChild(fig);
    }});
    document.getElementById("notice").textContent = s.notice || "";
    document.getElementById("limits").textContent = s.limits_notice || "";
    var u = document.getElementById("updated");
    u.setAttribute("data-taken-at", s.taken_at_ms); u.textContent = "snapshot at " + s.taken_at_ms + " ms";
  }}
  function poll() {{
    fetch("{json}", {{ cache: "no-store" }}).then(function (r) {{ return r.json(); }})
      .then(render).catch(function () {{}}).then(function () {{ setTimeout(poll, {interval}); }});
  }}
  setTimeout(poll, {interval});
}})();
</script>
</body>
</html>
"###,
        taken = snapshot.taken_at_ms,
        notice = escape_html(snapshot.notice.as_deref().unwrap_or("")),
        limits = escape_html(&limits_notice(&snapshot.usage)),
        warming = WARMING_UP,
        rows = rows,
        charts = charts,
        span = CHART_SPAN_MS,
        w = CHART_WIDTH,
        h = CHART_HEIGHT,
        json = CONSOLE_JSON_PATH,
        interval = POLL_INTERVAL_MS,
    )
}

#[cfg(test)]
mod tests;
