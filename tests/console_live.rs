//! The console of a live `cohort serve` in headless Chromium, with the groups made by real
//! clients (confluent-kafka): the groups page lists the groups with the lag `/metrics` exports
//! and its chart follows the lag between two loads; a group's page shows each partition's
//! committed offset and log end as two Admin clients (confluent-kafka, kafka-python) report
//! them; times show in the browser's zone; the topics pages show what confluent-kafka's
//! AdminClient, kafka-python's describe_log_dirs and the files on disk say. Screenshots land in
//! `target/console-live.png`, `target/console-live-group.png`, `target/console-live-topics.png`
//! and `target/console-live-topic.png`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::Cohort;

fn chromium(profile: &Path, args: &[String]) -> Output {
    common::run(
        Command::new("/usr/bin/chromium")
            // A zone without daylight saving, far from UTC: times on the pages must follow it.
            .env("TZ", "Asia/Kolkata")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-dev-shm-usage",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(args),
        Duration::from_secs(90),
    )
}

/// The page as Chromium left it after running its script for `budget_ms` of virtual time.
fn load(profile: &Path, url: &str, budget_ms: u64) -> String {
    let out = chromium(
        profile,
        &[
            format!("--virtual-time-budget={budget_ms}"),
            "--dump-dom".into(),
            url.into(),
        ],
    );
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The text of the `<td class="CLASS">` cell in the row of `group`.
fn cell(html: &str, group: &str, class: &str) -> String {
    let row = html
        .split("<tr data-group=\"")
        .find(|r| r.starts_with(&format!("{group}\"")))
        .unwrap_or_else(|| panic!("no row for {group}:\n{html}"));
    let row = row.split("</tr>").next().unwrap();
    let start = format!("<td class=\"{class}");
    let after = row
        .split(&start)
        .nth(1)
        .unwrap_or_else(|| panic!("no {class} cell for {group}: {row}"));
    let after = &after[after.find('>').unwrap() + 1..];
    strip_tags(after.split("</td>").next().unwrap())
}

/// Text without its tags (a cell holding a link reads as the link's text).
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The text of the `<td class="CLASS">` cell of partition `key` ("topic:partition") on a
/// group's page.
fn partition_cell(html: &str, key: &str, class: &str) -> String {
    let row = html
        .split("<tr data-partition=\"")
        .find(|r| r.starts_with(&format!("{key}\"")))
        .unwrap_or_else(|| panic!("no row for {key}:\n{html}"));
    let row = row.split("</tr>").next().unwrap();
    let start = format!("<td class=\"{class}\">");
    let after = row
        .split(&start)
        .nth(1)
        .unwrap_or_else(|| panic!("no {class} cell for {key}: {row}"));
    strip_tags(after.split("</td>").next().unwrap())
}

/// The `points` of the lag line in the chart of `group`.
fn chart_points(html: &str, group: &str) -> String {
    let fig = html
        .split("<figure class=\"chart\" data-group=\"")
        .find(|f| f.starts_with(&format!("{group}\"")))
        .unwrap_or_else(|| panic!("no chart for {group}:\n{html}"));
    let line = fig.split("<polyline").nth(1).expect("a lag line");
    let points = line.split(" points=\"").nth(1).expect("points");
    points.split('"').next().unwrap().to_string()
}

/// `lag_setup.py hold`: a consumer that stays in group `lag-live` until dropped (killed by PID).
struct Holder(std::process::Child);

impl Holder {
    fn start(broker: &Cohort) -> Holder {
        use std::io::BufRead;
        let mut child = Command::new(common::python())
            .arg(common::repo_root().join("tests/clients/python/lag_setup.py"))
            .args([broker.bootstrap().as_str(), "hold"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let holder = Holder(child);
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("assigned"), "holder: {line:?}");
        holder
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn total_lag_on_metrics(broker: &Cohort, group: &str) -> Option<i64> {
    let (_, body) = broker.http_get("/metrics");
    let series = format!("cohort_group_total_lag{{group=\"{group}\"}} ");
    body.lines()
        .find_map(|l| l.strip_prefix(&series))
        .and_then(|v| v.parse().ok())
}

fn wait_total_lag(broker: &Cohort, group: &str, lag: i64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while total_lag_on_metrics(broker, group) != Some(lag) {
        assert!(
            Instant::now() < deadline,
            "{group}: total lag {:?} on /metrics, {lag} expected",
            total_lag_on_metrics(broker, group)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_console_lists_groups_with_their_lag_and_its_chart_follows_the_lag() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(
        &dir.path().join("data"),
        &["--lag-sample-interval-ms", "200", "--lag-window-ms", "2000"],
    );
    common::python_script(
        "lag_setup.py",
        &[&broker.bootstrap(), "setup"],
        Duration::from_secs(90),
    );
    // lag-reader: (30 − 12) + (20 − 20) + (10 − 3); lag-done: none.
    wait_total_lag(&broker, "lag-reader", 25);
    wait_total_lag(&broker, "lag-done", 0);
    let url = format!("http://{}/console", broker.http);
    let profile = tempfile::tempdir().unwrap();

    // The page loads, runs its refresh for a few seconds, and lists both groups.
    let first = load(profile.path(), &url, 5_000);
    for (group, lag, status) in [("lag-reader", "25", "STOPPED"), ("lag-done", "0", "OK")] {
        assert_eq!(cell(&first, group, "group"), group);
        assert_eq!(cell(&first, group, "state"), "Empty");
        assert_eq!(cell(&first, group, "members"), "0");
        assert_eq!(cell(&first, group, "lag"), lag, "{group}");
        assert_eq!(cell(&first, group, "status"), status, "{group}");
    }
    assert!(
        first.contains("<p id=\"notice\"></p>"),
        "a notice on the coordinator"
    );
    let before = chart_points(&first, "lag-reader");
    assert!(!before.is_empty(), "no chart points");

    // More records on lagged-0: the lag grows by 40, and the next load's chart shows it.
    common::python_script(
        "lag_setup.py",
        &[&broker.bootstrap(), "produce", "0", "40"],
        Duration::from_secs(60),
    );
    wait_total_lag(&broker, "lag-reader", 65);
    let second = load(profile.path(), &url, 3_000);
    assert_eq!(cell(&second, "lag-reader", "lag"), "65");
    assert_eq!(cell(&second, "lag-done", "lag"), "40");
    let after = chart_points(&second, "lag-reader");
    assert_ne!(before, after, "the chart did not change");
    // The latest point is the highest: 65 is the largest lag shown, drawn at 65/top of the
    // plot's height (150 units from y = 162 up), top being the lag axis's round maximum.
    let top: f64 = second
        .split("<figure class=\"chart\" data-group=\"lag-reader\"")
        .nth(1)
        .and_then(|f| f.split("data-top=\"").nth(1))
        .and_then(|t| t.split('"').next())
        .and_then(|t| t.parse().ok())
        .expect("the chart's lag axis top");
    assert_eq!(top, 100.0);
    let ys: Vec<f64> = after
        .split_whitespace()
        .filter_map(|p| p.split(',').nth(1))
        .filter_map(|y| y.parse().ok())
        .collect();
    let last_y = *ys.last().expect("a last point");
    assert!(
        (last_y - (162.0 - 65.0 / top * 150.0)).abs() < 0.06,
        "last point at y={last_y}: {after}"
    );
    assert!(ys.iter().all(|y| *y >= last_y), "{after}");
    // Times show in the browser's zone (Asia/Kolkata, UTC+05:30).
    assert!(
        second.contains("<span class=\"tz\">UTC+05:30</span>"),
        "{second}"
    );

    // The group's page, reached by the link on the groups page, against two Admin clients.
    let link = format!("http://{}/console/groups/lag-reader?window=1h", broker.http);
    assert!(second.contains("<a href=\"/console/groups/lag-reader?window=1h\">lag-reader</a>"));
    let report = common::python_script(
        "operator_report.py",
        &[&broker.bootstrap(), "lag-reader"],
        Duration::from_secs(60),
    );
    let report: serde_json::Value =
        serde_json::from_str(String::from_utf8(report.stdout).unwrap().trim()).unwrap();
    let group_page = load(profile.path(), &link, 3_000);
    for admin in ["confluent", "kafka_python"] {
        let g = &report[admin]["lag-reader"];
        // confluent-kafka names states in capitals (EMPTY), kafka-python as the broker does.
        let state = g["state"].as_str().unwrap().to_ascii_lowercase();
        assert_eq!(state, "empty", "{admin}: {g}");
        let committed = g["committed"].as_object().unwrap();
        assert_eq!(committed.len(), 3, "{admin}: {g}");
        for (key, offset) in committed {
            let end = g["log_end"][key].as_i64().unwrap();
            let offset = offset.as_i64().unwrap();
            assert_eq!(
                partition_cell(&group_page, key, "num committed"),
                offset.to_string(),
                "{admin} {key}"
            );
            assert_eq!(
                partition_cell(&group_page, key, "num log-end"),
                end.to_string(),
                "{admin} {key}"
            );
            assert_eq!(
                partition_cell(&group_page, key, "lag"),
                (end - offset).to_string(),
                "{admin} {key}"
            );
        }
    }
    assert!(
        group_page.contains("<dd class=\"state\">Empty</dd>"),
        "{group_page}"
    );
    // Each partition's topic links to the topic's page.
    assert!(
        group_page
            .contains("<td class=\"topic\"><a href=\"/console/topics/lagged\">lagged</a></td>"),
        "{group_page}"
    );
    assert!(group_page.contains("<dd class=\"members\">0</dd>"));
    assert!(group_page.contains("<dd class=\"lag\">65</dd>"));
    assert!(group_page.contains("<span class=\"tz\">UTC+05:30</span>"));
    let (status, _) = broker.http_get("/console/groups/no-such-group");
    assert!(status.contains("404"), "{status}");

    // A live member: the group page names the member consuming each partition, its host and
    // client id, as the Admin clients describe the group.
    let holder = Holder::start(&broker);
    let live = format!("http://{}/console/groups/lag-live?window=15m", broker.http);
    let deadline = Instant::now() + Duration::from_secs(30);
    let live_page = loop {
        let (_, fragment) = broker.http_get("/console/groups/lag-live?fragment=1");
        if fragment.matches("<td class=\"owner\">-</td>").count() == 0
            && fragment.matches("<tr data-partition=").count() == 3
        {
            break load(profile.path(), &live, 2_000);
        }
        assert!(Instant::now() < deadline, "no owners shown: {fragment}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let report = common::python_script(
        "operator_report.py",
        &[&broker.bootstrap(), "lag-live"],
        Duration::from_secs(60),
    );
    let report: serde_json::Value =
        serde_json::from_str(String::from_utf8(report.stdout).unwrap().trim()).unwrap();
    for admin in ["confluent", "kafka_python"] {
        let members = report[admin]["lag-live"]["members"].as_array().unwrap();
        assert_eq!(members.len(), 1, "{admin}: {members:?}");
        let [member_id, client_id, host, partitions] = members[0].as_array().unwrap().as_slice()
        else {
            panic!("{admin}: {members:?}")
        };
        assert_eq!(partitions.as_array().unwrap().len(), 3, "{admin}");
        for key in partitions.as_array().unwrap() {
            let key = key.as_str().unwrap();
            assert_eq!(
                partition_cell(&live_page, key, "owner"),
                member_id.as_str().unwrap(),
                "{admin} {key}"
            );
            assert_eq!(
                partition_cell(&live_page, key, "host"),
                host.as_str().unwrap(),
                "{admin} {key}"
            );
            assert_eq!(
                partition_cell(&live_page, key, "client-id"),
                client_id.as_str().unwrap(),
                "{admin} {key}"
            );
        }
        assert_eq!(client_id, "lag-live-client");
    }
    drop(holder);

    // The JSON feed the page polls carries the same figures.
    let (status, json) = broker.http_get("/console.json");
    assert!(status.contains("200"), "{status}");
    let feed: serde_json::Value = serde_json::from_str(&json).unwrap();
    let reader = feed["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "lag-reader")
        .expect("lag-reader in the feed");
    assert_eq!(reader["total_lag"], 65);
    assert!(reader["history"].as_array().unwrap().len() >= 2);

    // Screenshots, for people.
    for (url, name) in [(url, "console-live.png"), (link, "console-live-group.png")] {
        screenshot(profile.path(), url, name);
    }
}

/// Saves `url` as `target/NAME` (a PNG), as Chromium draws it after its script ran.
fn screenshot(profile: &Path, url: String, name: &str) {
    let shot = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(name);
    std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&shot);
    let out = chromium(
        profile,
        &[
            "--virtual-time-budget=3000".into(),
            "--window-size=1100,900".into(),
            format!("--screenshot={}", shot.display()),
            url,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

/// The `<td class="CLASS...">` cell of the row whose `ATTR` is `key` (`data-topic="..."`,
/// `data-partition="..."`, `data-config="..."`): its text and its whole opening tag.
fn row_cell(html: &str, attr: &str, key: &str, class: &str) -> (String, String) {
    let row = html
        .split(&format!("<tr {attr}=\""))
        .find(|r| r.starts_with(&format!("{key}\"")))
        .unwrap_or_else(|| panic!("no row {attr}={key}:\n{html}"));
    let row = row.split("</tr>").next().unwrap();
    let start = format!("<td class=\"{class}");
    let after = row
        .split(&start)
        .nth(1)
        .unwrap_or_else(|| panic!("no {class} cell in {attr}={key}: {row}"));
    let open = after[..after.find('>').unwrap()].to_string();
    let after = &after[after.find('>').unwrap() + 1..];
    (strip_tags(after.split("</td>").next().unwrap()), open)
}

/// The value of attribute `name` in a cell's opening tag.
fn attr(open: &str, name: &str) -> String {
    open.split(&format!("{name}=\""))
        .nth(1)
        .and_then(|v| v.split('"').next())
        .unwrap_or_else(|| panic!("no {name} in {open}"))
        .to_string()
}

/// Bytes of the files under `dir` (a partition's directory), as DescribeLogDirs counts them.
fn bytes_on_disk(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let m = e.metadata().unwrap();
        total += if m.is_dir() {
            bytes_on_disk(&e.path())
        } else {
            m.len()
        };
    }
    total
}

#[test]
fn the_topics_pages_show_what_the_admin_clients_and_the_files_say() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    common::python_script(
        "console_topics.py",
        &[&broker.bootstrap(), "setup"],
        Duration::from_secs(90),
    );
    let report = common::python_script(
        "console_topics.py",
        &[&broker.bootstrap(), "report"],
        Duration::from_secs(90),
    );
    let report: serde_json::Value =
        serde_json::from_str(String::from_utf8(report.stdout).unwrap().trim()).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let list_url = format!("http://{}/console/topics", broker.http);
    let list = load(profile.path(), &list_url, 3_000);
    let topics_dir = broker.data_dir.join("topics");

    for (topic, partitions) in [("shop-orders", 3), ("shop-trimmed", 2)] {
        let admin = &report[topic];
        let parts = admin["partitions"].as_object().unwrap();
        assert_eq!(parts.len(), partitions, "{admin}");
        let (mut start, mut end, mut size) = (0, 0, 0);
        for p in parts.values() {
            start += p["earliest"].as_i64().unwrap();
            end += p["latest"].as_i64().unwrap();
            size += p["size"].as_u64().unwrap();
        }
        let cell = |class| row_cell(&list, "data-topic", topic, class);
        assert_eq!(cell("topic").0, topic);
        assert!(list.contains(&format!("<a href=\"/console/topics/{topic}\">{topic}</a>")));
        assert_eq!(cell("num partitions").0, partitions.to_string());
        assert_eq!(cell("num log-start").0, start.to_string(), "{topic}");
        assert_eq!(cell("num log-end").0, end.to_string(), "{topic}");
        assert_eq!(cell("num records").0, (end - start).to_string(), "{topic}");
        assert_eq!(
            attr(&cell("num size").1, "data-bytes"),
            size.to_string(),
            "{topic}"
        );
        let configs = &admin["configs"];
        for (class, key) in [
            ("retention-ms", "retention.ms"),
            ("retention-bytes", "retention.bytes"),
            ("cleanup-policy", "cleanup.policy"),
        ] {
            assert_eq!(
                attr(&cell(class).1, "data-value"),
                configs[key][0].as_str().unwrap(),
                "{topic} {key}"
            );
        }

        // The topic's page, reached by the link on the list.
        let page = load(
            profile.path(),
            &format!("http://{}/console/topics/{topic}", broker.http),
            3_000,
        );
        let mut on_disk = 0;
        for (index, p) in parts {
            let cell = |class| row_cell(&page, "data-partition", index, class);
            let leader = p["leader"].as_i64().unwrap();
            assert_eq!(cell("num leader").0, leader.to_string(), "{topic}-{index}");
            let replicas: Vec<String> = p["replicas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.to_string())
                .collect();
            assert_eq!(cell("replicas").0, replicas.join(", "), "{topic}-{index}");
            let (earliest, latest) = (
                p["earliest"].as_i64().unwrap(),
                p["latest"].as_i64().unwrap(),
            );
            assert_eq!(
                cell("num log-start").0,
                earliest.to_string(),
                "{topic}-{index}"
            );
            assert_eq!(cell("num log-end").0, latest.to_string(), "{topic}-{index}");
            assert_eq!(
                cell("num records").0,
                (latest - earliest).to_string(),
                "{topic}-{index}"
            );
            let bytes = bytes_on_disk(&topics_dir.join(format!("{topic}-{index}")));
            assert_eq!(
                p["size"].as_u64().unwrap(),
                bytes,
                "{topic}-{index}: log dirs vs disk"
            );
            assert_eq!(
                attr(&cell("num size").1, "data-bytes"),
                bytes.to_string(),
                "{topic}-{index}"
            );
            on_disk += bytes;
            let newest = p["max_timestamp_ms"].as_i64().unwrap();
            let (text, _) = cell("newest");
            if newest < 0 {
                assert_eq!(text, "-", "{topic}-{index}: an empty partition");
            } else {
                assert!(
                    page.contains(&format!("<td class=\"newest\"><time data-ms=\"{newest}\">")),
                    "{topic}-{index}: newest {newest}\n{page}"
                );
                // Shown in the browser's zone, not in UTC.
                assert!(!text.contains("UTC"), "{text}");
            }
        }
        assert_eq!(on_disk, size, "{topic}: the sum of the files on disk");
        let (sum, open) = row_cell(&page, "data-topic", topic, "num size");
        assert_eq!(
            attr(&open, "data-bytes"),
            size.to_string(),
            "{topic}: {sum}"
        );
        // Every config as DescribeConfigs reports it: value and source.
        let configs = configs.as_object().unwrap();
        assert_eq!(page.matches("<tr data-config=").count(), configs.len());
        for (key, v) in configs {
            let value = v[0].as_str().unwrap_or("-");
            assert_eq!(
                row_cell(&page, "data-config", key, "value").0,
                value,
                "{topic} {key}"
            );
            assert_eq!(
                row_cell(&page, "data-config", key, "source").0,
                v[1].as_str().unwrap(),
                "{topic} {key}"
            );
        }
        screenshot(
            profile.path(),
            format!("http://{}/console/topics/{topic}", broker.http),
            &format!("console-live-topic-{topic}.png"),
        );
    }
    // What the setup did, as the pages show it.
    let orders = load(profile.path(), &format!("{list_url}/shop-orders"), 2_000);
    assert_eq!(
        row_cell(&orders, "data-config", "retention.ms", "source").0,
        "DYNAMIC_TOPIC_CONFIG"
    );
    assert_eq!(
        row_cell(&orders, "data-partition", "2", "num records").0,
        "0",
        "the empty partition"
    );
    assert_eq!(
        row_cell(&list, "data-topic", "shop-trimmed", "num log-start").0,
        "15"
    );
    // This node is the coordinator and knows no group with offsets on the topic.
    assert!(
        orders.contains("<p class=\"groups\">Groups with committed offsets on it: none</p>"),
        "{orders}"
    );
    // Unknown and undecodable topics are 404s; names travel percent-encoded.
    let (status, _) = broker.http_get("/console/topics/no-such-topic");
    assert!(status.contains("404"), "{status}");
    let (status, _) = broker.http_get("/console/topics/%zz");
    assert!(status.contains("404"), "{status}");
    let (status, body) = broker.http_get("/console/topics/shop%2Dorders?fragment=1");
    assert!(status.contains("200"), "{status}");
    assert!(body.starts_with("<p class=\"back\">"), "{body}");
    screenshot(profile.path(), list_url, "console-live-topics.png");
}
