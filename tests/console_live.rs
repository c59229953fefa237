//! The console of a live `cohort serve` in headless Chromium, with the groups made by real
//! clients (confluent-kafka): it loads, lists the groups with the lag `/metrics` exports, and
//! its chart follows the lag between two loads. A screenshot lands in
//! `target/console-live.png`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::Cohort;

fn chromium(profile: &Path, args: &[String]) -> Output {
    common::run(
        Command::new("/usr/bin/chromium")
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
    after.split("</td>").next().unwrap().to_string()
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
    // The latest point is at the top of the chart: 65 is the largest lag shown (y = 2 of 120).
    let last_y: f64 = after
        .split_whitespace()
        .last()
        .and_then(|p| p.split(',').nth(1))
        .and_then(|y| y.parse().ok())
        .expect("a last point");
    assert!(last_y < 3.0, "last point at y={last_y}: {after}");

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

    // A screenshot, for people.
    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console-live.png");
    std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&shot);
    let out = chromium(
        profile.path(),
        &[
            "--virtual-time-budget=3000".into(),
            "--window-size=900,800".into(),
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
