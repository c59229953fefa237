//! The console: server-rendered HTML pages with a small inline script and no external assets.
//!
//! | URL                              | page                                                  |
//! |----------------------------------|-------------------------------------------------------|
//! | `/console`                       | every group: state, members, lag, lag in seconds, status, and a chart of each group's lag |
//! | `/console/groups/<id>`           | one group: type, state, epochs, and each partition's committed offset, log end, lag in records and seconds, status |
//! | `/console/topics`                | every topic: partitions, size, log start and end offsets summed, retention, cleanup policy |
//! | `/console/topics/<name>`         | one topic: each partition's leader, size, log start and end offsets, records, newest record time; its configs with value and source |
//! | `/console.json`                  | the lag snapshot behind the pages, for scripts         |
//!
//! Every page takes `?window=15m|1h|6h` (the charts' span, 1 h by default). The script
//! refreshes a page in place by fetching the same URL with `fragment=1` (the page's `<main>`
//! alone, rendered by the same code) every [`POLL_INTERVAL_MS`], and shows every time in the
//! reader's time zone; without the script the page reads in UTC.
//!
//! A group whose status still waits for its window (a coordinator that just took office)
//! shows "warming up" rather than a status it cannot know yet; when the lag tracker's limits
//! left groups or partitions out, a line says how many offsets and which flag raises the limit.
//!
//! The topics pages are rendered from figures gathered where the Admin APIs read them
//! ([`topic_facts`]: the catalog, the data plane, the partitions' files); a partition another
//! node leads is named as held there rather than given numbers this node does not have.

mod chart;
mod group;
mod overview;
mod shell;
mod topic;
pub mod topic_facts;
mod topics;

use serde::Serialize;

use crate::lag::{LagStatus, Snapshot, Usage};

pub use chart::points as chart_points;

/// What a group without a status yet shows in the status column.
pub const WARMING_UP: &str = "warming up";

/// Where the groups page is served.
pub const CONSOLE_PATH: &str = "/console";
/// Where one group's page is served: this prefix and the percent-encoded group id.
pub const GROUP_PATH_PREFIX: &str = "/console/groups/";
/// Where the topics page is served.
pub const TOPICS_PATH: &str = "/console/topics";
/// Where one topic's page is served: this prefix and the percent-encoded topic name.
pub const TOPIC_PATH_PREFIX: &str = "/console/topics/";
/// The snapshot as JSON.
pub const CONSOLE_JSON_PATH: &str = "/console.json";
/// How often a page refreshes itself, in ms.
pub const POLL_INTERVAL_MS: u64 = 2_000;
/// Longest group id a page URL may carry (Kafka's group ids are bounded by the request size;
/// this only bounds the work of decoding a URL).
const GROUP_ID_URL_BYTES_MAX: usize = 3 * 1024;
/// Longest topic name a page URL may carry: Kafka's 249 characters, each percent-encoded.
const TOPIC_NAME_URL_BYTES_MAX: usize = 3 * 249;

/// The span the charts show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Window {
    /// 15 minutes.
    Minutes15,
    /// One hour (the default).
    #[default]
    Hour1,
    /// Six hours (the lag history's length).
    Hours6,
}

impl Window {
    /// Every choice, in the order the pages offer them.
    pub const ALL: [Window; 3] = [Window::Minutes15, Window::Hour1, Window::Hours6];

    /// The span in ms.
    pub fn ms(self) -> u64 {
        match self {
            Window::Minutes15 => 15 * 60_000,
            Window::Hour1 => 3_600_000,
            Window::Hours6 => 6 * 3_600_000,
        }
    }

    /// The value of `?window=`.
    pub fn param(self) -> &'static str {
        match self {
            Window::Minutes15 => "15m",
            Window::Hour1 => "1h",
            Window::Hours6 => "6h",
        }
    }

    /// How a page names it.
    pub fn label(self) -> &'static str {
        match self {
            Window::Minutes15 => "15 min",
            Window::Hour1 => "1 h",
            Window::Hours6 => "6 h",
        }
    }
}

/// What a page request asks for besides its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Query {
    /// The charts' span; an unknown value gives the default.
    pub window: Window,
    /// Only the page's `<main>` (the script's refresh).
    pub fragment: bool,
}

impl Query {
    /// Reads `window=` and `fragment=1` from a URL's query string; anything else is ignored.
    pub fn parse(query: &str) -> Query {
        let mut q = Query::default();
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some(("window", v)) => {
                    if let Some(w) = Window::ALL.into_iter().find(|w| w.param() == v) {
                        q.window = w;
                    }
                }
                Some(("fragment", "1")) => q.fragment = true,
                _ => {}
            }
        }
        q
    }
}

/// One answer of the console's routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// `200 OK`, or `404 Not Found` for a group this node does not track.
    pub status: &'static str,
    /// Its content type.
    pub content_type: &'static str,
    /// Its body.
    pub body: String,
}

/// Whether `path` is one of the console's.
pub fn serves(path: &str) -> bool {
    path == CONSOLE_PATH
        || path == CONSOLE_JSON_PATH
        || path.starts_with(GROUP_PATH_PREFIX)
        || topics_route(path).is_some()
}

/// A topics page asked for; its figures are gathered (by the HTTP side, which holds the
/// broker) before it is rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicsRoute {
    /// `/console/topics`.
    All,
    /// `/console/topics/<name>`, decoded; `None` when the segment does not decode (or is too
    /// long to be a topic name): no topic has that name.
    One(Option<String>),
}

/// Which topics page `path` is, if any.
pub fn topics_route(path: &str) -> Option<TopicsRoute> {
    if path == TOPICS_PATH || path == TOPIC_PATH_PREFIX {
        return Some(TopicsRoute::All);
    }
    let encoded = path.strip_prefix(TOPIC_PATH_PREFIX)?;
    Some(TopicsRoute::One(
        (encoded.len() <= TOPIC_NAME_URL_BYTES_MAX)
            .then(|| percent_decode(encoded))
            .flatten()
            .filter(|name| !name.is_empty()),
    ))
}

/// A page in the shared document, or its `<main>` alone for the script's refresh.
fn html_page(q: Query, status: &'static str, main: String, title: &str, refresh: &str) -> Page {
    Page {
        status,
        content_type: "text/html; charset=utf-8",
        body: if q.fragment {
            main
        } else {
            shell::page(title, &main, refresh)
        },
    }
}

/// The topics page over `list`.
pub fn respond_topics(query: &str, list: &topic_facts::TopicList) -> Page {
    html_page(
        Query::parse(query),
        "200 OK",
        topics::main(list),
        "Cohort — topics",
        TOPICS_PATH,
    )
}

/// Topic `shown`'s page: `detail` as gathered, `None` (404) when there is no such topic.
pub fn respond_topic(query: &str, shown: &str, detail: Option<&topic_facts::TopicDetail>) -> Page {
    html_page(
        Query::parse(query),
        if detail.is_some() {
            "200 OK"
        } else {
            "404 Not Found"
        },
        topic::main(detail, shown, None),
        &format!("Cohort — topic {shown}"),
        &topic_href(shown),
    )
}

/// A topics page on a node that cannot gather figures yet (`notice` says why): 503, and the
/// script keeps trying.
pub fn respond_topics_unavailable(query: &str, route: &TopicsRoute, notice: &str) -> Page {
    let (main, title, refresh) = match route {
        TopicsRoute::All => (
            format!(
                "<h1>Topics</h1><p id=\"notice\">{}</p>",
                escape_html(notice)
            ),
            "Cohort — topics".to_owned(),
            TOPICS_PATH.to_owned(),
        ),
        TopicsRoute::One(name) => {
            let shown = name.as_deref().unwrap_or("");
            (
                topic::main(None, shown, Some(notice)),
                format!("Cohort — topic {shown}"),
                topic_href(shown),
            )
        }
    };
    html_page(
        Query::parse(query),
        "503 Service Unavailable",
        main,
        &title,
        &refresh,
    )
}

/// The console's routes over `snapshot`; `None` for a path that is not the console's.
pub fn respond(path: &str, query: &str, snapshot: &Snapshot) -> Option<Page> {
    let q = Query::parse(query);
    let html = |status, main: String, title: &str, refresh: String| {
        html_page(q, status, main, title, &refresh)
    };
    match path {
        CONSOLE_PATH => Some(html(
            "200 OK",
            overview::main(snapshot, q.window),
            "Cohort — consumer groups",
            format!("{CONSOLE_PATH}?window={}", q.window.param()),
        )),
        CONSOLE_JSON_PATH => Some(Page {
            status: "200 OK",
            content_type: "application/json",
            body: render_json(snapshot),
        }),
        _ => {
            let encoded = path.strip_prefix(GROUP_PATH_PREFIX)?;
            let id = (encoded.len() <= GROUP_ID_URL_BYTES_MAX)
                .then(|| percent_decode(encoded))
                .flatten();
            let found = id
                .as_deref()
                .and_then(|id| snapshot.groups.iter().find(|g| g.group == id));
            let shown = id.as_deref().unwrap_or("");
            Some(html(
                if found.is_some() {
                    "200 OK"
                } else {
                    "404 Not Found"
                },
                group::main(snapshot, found, shown, q.window),
                &format!("Cohort — group {shown}"),
                format!("{}?window={}", group_href(shown), q.window.param()),
            ))
        }
    }
}

/// The whole groups page for `snapshot`, charts over the default window.
pub fn render_console(snapshot: &Snapshot) -> String {
    shell::page(
        "Cohort — consumer groups",
        &overview::main(snapshot, Window::default()),
        CONSOLE_PATH,
    )
}

/// The page's data: the snapshot and the limits line made from it.
#[derive(Serialize)]
struct ConsoleData<'a> {
    #[serde(flatten)]
    snapshot: &'a Snapshot,
    limits_notice: String,
}

/// The snapshot as JSON (handy for scripts), with the limits line.
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

/// The URL path of `group`'s page: every byte but RFC 3986's unreserved ones percent-encoded.
pub fn group_href(group: &str) -> String {
    percent_encoded(GROUP_PATH_PREFIX, group)
}

/// The URL path of topic `name`'s page, encoded as [`group_href`] encodes.
pub fn topic_href(name: &str) -> String {
    percent_encoded(TOPIC_PATH_PREFIX, name)
}

fn percent_encoded(prefix: &str, segment: &str) -> String {
    let mut out = String::from(prefix);
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Bytes for people: `512 B`, `1.5 KiB`, `12.3 MiB` (the exact count goes in an attribute).
fn bytes_text(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A duration config for people: `7 d`, `1.5 h`, `30 s`, `250 ms`; a negative one (Kafka's
/// -1) is `unlimited`.
fn duration_text(ms: i64) -> String {
    const UNITS: [(i64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "min"),
        (1_000, "s"),
    ];
    if ms < 0 {
        return "unlimited".to_owned();
    }
    for (unit_ms, name) in UNITS {
        if ms >= unit_ms {
            return if ms % unit_ms == 0 {
                format!("{} {name}", ms / unit_ms)
            } else {
                format!("{:.1} {name}", ms as f64 / unit_ms as f64)
            };
        }
    }
    format!("{ms} ms")
}

/// Decodes a percent-encoded path segment; `None` when it is not valid UTF-8 or a `%` is not
/// followed by two hex digits.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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

/// A status cell's text: the status, "warming up", or `-`.
fn status_text(status: Option<LagStatus>, warming_up: bool) -> &'static str {
    match (status, warming_up) {
        (Some(s), _) => s.as_str(),
        (None, true) => WARMING_UP,
        (None, false) => "-",
    }
}

/// The status cell's class for a status text (`status-OK`, `status-warming-up`, ...).
fn status_class(status: &str) -> String {
    format!("status status-{}", status.replace(' ', "-"))
}

fn dash<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".to_string())
}

/// Lag in time as seconds with one decimal (`0` when caught up), `-` when unknown.
fn seconds(ms: Option<u64>) -> String {
    match ms {
        None => "-".into(),
        Some(0) => "0".into(),
        Some(ms) => format!("{}.{}", ms / 1_000, ms % 1_000 / 100),
    }
}

/// A `<time>` the script shows in the reader's time zone (UTC without it).
fn time_element(unix_ms: u64) -> String {
    let ms = i64::try_from(unix_ms).unwrap_or(i64::MAX);
    format!(
        "<time data-ms=\"{unix_ms}\">{}</time>",
        crate::clock::utc_date_time(ms)
    )
}

/// The window choice: a link per span, the current one marked.
fn window_nav(href_base: &str, current: Window) -> String {
    let links: Vec<String> = Window::ALL
        .into_iter()
        .map(|w| {
            if w == current {
                format!("<a aria-current=\"page\">{}</a>", w.label())
            } else {
                format!(
                    "<a href=\"{}?window={}\">{}</a>",
                    escape_html(href_base),
                    w.param(),
                    w.label()
                )
            }
        })
        .collect();
    format!(
        "<nav class=\"window\">Chart window: {}</nav>",
        links.join(" ")
    )
}

/// The notice and limits lines every page starts with.
fn notices(snapshot: &Snapshot) -> String {
    format!(
        "<p id=\"notice\">{}</p><p id=\"limits\">{}</p>",
        escape_html(snapshot.notice.as_deref().unwrap_or("")),
        escape_html(&limits_notice(&snapshot.usage)),
    )
}

/// When the figures were taken.
fn updated(snapshot: &Snapshot) -> String {
    updated_at(snapshot.taken_at_ms)
}

/// When figures taken at `taken_at_ms` were taken.
fn updated_at(taken_at_ms: u64) -> String {
    format!(
        "<p id=\"updated\" data-taken-at=\"{taken_at_ms}\">Figures as of {} (<span class=\"tz\">UTC</span>), refreshed every {} s.</p>",
        time_element(taken_at_ms),
        POLL_INTERVAL_MS / 1_000,
    )
}

#[cfg(test)]
mod tests;
