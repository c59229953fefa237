use super::*;
use crate::client::TopicPartition;
use crate::lag::{LagStatus, LagTracker, LagTrackerConfig, Tracking};

/// Groups each consuming one partition with a steady lag over a whole window (so judged).
fn snapshot_with(groups: &[(&str, i64)]) -> Snapshot {
    let mut t = LagTracker::new(LagTrackerConfig::default());
    let window_ms = t.config().window_ms;
    let start = 1_000_000;
    for step in 0..=2u64 {
        let now = start + step * window_ms / 2;
        for (i, (g, lag)) in groups.iter().enumerate() {
            let tp = TopicPartition::new(format!("topic-{i}"), 0);
            let offset = 100 + step as i64;
            assert_eq!(t.record_group(g, "Stable", 1), Tracking::Tracked);
            assert_eq!(t.record_commit(g, &tp, offset, now), Tracking::Tracked);
            t.record_log_offsets(&tp, Some(0), offset + lag);
        }
        t.sample(now);
    }
    t.snapshot(start + window_ms)
}

#[test]
fn page_lists_groups_with_state_members_lag_and_status() {
    let page = render_console(&snapshot_with(&[("orders", 42), ("billing", 0)]));
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains(
        "<tr data-group=\"orders\"><td class=\"group\">orders</td><td class=\"state\">Stable</td><td class=\"members\">1</td><td class=\"lag\">42</td><td class=\"status status-OK\">OK</td></tr>"
    ));
    assert!(page.contains("<td class=\"lag\">0</td>"));
    assert!(page.contains("<figure class=\"chart\" data-group=\"billing\">"));
    assert!(page.contains(CONSOLE_JSON_PATH));
}

#[test]
fn routes() {
    let snap = snapshot_with(&[("orders", 1)]);
    let (kind, body) = respond("/console", &snap).unwrap();
    assert_eq!(kind, "text/html; charset=utf-8");
    assert!(body.contains("orders"));
    let (kind, body) = respond("/console.json", &snap).unwrap();
    assert_eq!(kind, "application/json");
    assert!(body.starts_with('{'));
    assert!(respond("/metrics", &snap).is_none());
}

#[test]
fn names_are_escaped() {
    let page = render_console(&snapshot_with(&[("<script>alert('x')</script>", 1)]));
    assert!(!page.contains("<script>alert"));
    assert!(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
}

#[test]
fn json_carries_the_snapshot() {
    let s = snapshot_with(&[("orders", 42)]);
    let v: serde_json::Value = serde_json::from_str(&render_json(&s)).unwrap();
    assert_eq!(v["taken_at_ms"], 1_060_000);
    assert_eq!(v["groups"][0]["group"], "orders");
    assert_eq!(v["groups"][0]["total_lag"], 42);
    assert_eq!(v["groups"][0]["status"], LagStatus::Ok.as_str());
    assert_eq!(v["groups"][0]["partitions"][0]["lag"], 42);
    assert_eq!(v["groups"][0]["history"][0]["total_lag"], 42);
    assert_eq!(v["groups"][0]["warming_up"], false);
    assert_eq!(v["groups"][0]["offset_commits"], 3);
    assert_eq!(v["usage"]["groups"], 1);
    assert_eq!(v["limits_notice"], "");
}

#[test]
fn a_group_warming_up_says_so_instead_of_a_status() {
    let mut t = LagTracker::new(LagTrackerConfig::default());
    let tp = TopicPartition::new("t", 0);
    assert_eq!(t.seed_commit("fresh", &tp, 10, 999_000), Tracking::Tracked);
    t.record_log_offsets(&tp, Some(0), 30);
    t.sample(1_000_000);
    let page = render_console(&t.snapshot(1_000_000));
    assert!(
        page.contains(
            "<td class=\"lag\">20</td><td class=\"status status-warming-up\">warming up</td>"
        ),
        "{page}"
    );
    let v: serde_json::Value = serde_json::from_str(&render_json(&t.snapshot(1_000_000))).unwrap();
    assert_eq!(v["groups"][0]["status"], serde_json::Value::Null);
    assert_eq!(v["groups"][0]["warming_up"], true);
}

#[test]
fn limits_that_left_groups_out_show_a_line_naming_the_flags() {
    let mut t = LagTracker::new(LagTrackerConfig {
        groups_max: 1,
        ..LagTrackerConfig::default()
    });
    let tp = TopicPartition::new("t", 0);
    assert_eq!(t.record_commit("a", &tp, 1, 0), Tracking::Tracked);
    assert_ne!(t.record_commit("b", &tp, 1, 0), Tracking::Tracked);
    assert_ne!(t.record_commit("c", &tp, 1, 0), Tracking::Tracked);
    let snap = t.snapshot(0);
    let line = "Lag tracker limit reached, not tracked: 2 committed offsets of groups over the limit of 1 groups (--lag-groups-max). Those groups and partitions have no lag figures or status here.";
    assert_eq!(limits_notice(&snap.usage), line);
    assert!(render_console(&snap).contains(&format!("<p id=\"limits\">{line}</p>")));
    let v: serde_json::Value = serde_json::from_str(&render_json(&snap)).unwrap();
    assert_eq!(v["limits_notice"], line);
    assert_eq!(
        limits_notice(&LagTracker::new(LagTrackerConfig::default()).usage()),
        ""
    );
}

#[test]
fn chart_points_span_the_last_hour() {
    let end = 10_000_000;
    let history = vec![
        LagPoint {
            at_ms: end - CHART_SPAN_MS - 1,
            total_lag: 5,
        },
        LagPoint {
            at_ms: end - CHART_SPAN_MS,
            total_lag: 0,
        },
        LagPoint {
            at_ms: end,
            total_lag: 10,
        },
    ];
    assert_eq!(chart_points(&history, end), "0.0,118.0 600.0,2.0");
    assert_eq!(chart_points(&[], end), "");
}

mod browser {
    //! The page in a real browser: headless Chromium loads it from a small HTTP server whose
    //! data changes between polls, and must show the groups, their lag, and a chart that grows.

    use super::*;
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    async fn serve(listener: TcpListener, tracker: Arc<Mutex<(LagTracker, u64)>>, start: u64) {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let tracker = tracker.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, kind, body) = {
                    let mut guard = tracker.lock().unwrap();
                    let (t, now) = &mut *guard;
                    if path == CONSOLE_JSON_PATH {
                        // Each poll moves time on and adds lag, so the chart must grow.
                        *now += 60_000;
                        let tp = TopicPartition::new("events", 0);
                        t.record_log_offsets(
                            &tp,
                            Some(0),
                            1_250 + ((*now - start) / 60_000) as i64 * 7,
                        );
                        t.sample(*now);
                        ("200 OK", "application/json", render_json(&t.snapshot(*now)))
                    } else if path == "/console" {
                        (
                            "200 OK",
                            "text/html; charset=utf-8",
                            render_console(&t.snapshot(*now)),
                        )
                    } else {
                        ("404 Not Found", "text/plain", String::from("not found"))
                    }
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(response.as_bytes()).await;
            });
        }
    }

    fn chromium(args: &[String], profile: &std::path::Path) -> std::process::Output {
        let mut cmd = std::process::Command::new("chromium");
        cmd.args([
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
        .args(args);
        cmd.output()
            .expect("chromium runs (installed by scripts/setup-clients.sh)")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn console_loads_lists_groups_and_the_chart_updates_in_chromium() {
        let mut t = LagTracker::new(LagTrackerConfig::default());
        let tp = TopicPartition::new("events", 0);
        let start = 1_700_000_000_000u64;
        assert_eq!(t.record_group("payments", "Stable", 3), Tracking::Tracked);
        assert_eq!(
            t.record_commit("payments", &tp, 1_000, start),
            Tracking::Tracked
        );
        t.record_log_offsets(&tp, Some(0), 1_250);
        t.sample(start);
        let state = Arc::new(Mutex::new((t, start)));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(serve(listener, state.clone(), start));
        let url = format!("http://{addr}/console");
        let profile = tempfile::tempdir().unwrap();

        // Load the page and let its timers run long enough for several polls.
        let dom = tokio::task::spawn_blocking({
            let url = url.clone();
            let profile = profile.path().to_path_buf();
            move || {
                chromium(
                    &[
                        "--virtual-time-budget=9000".into(),
                        "--dump-dom".into(),
                        url,
                    ],
                    &profile,
                )
            }
        })
        .await
        .unwrap();
        let html = String::from_utf8_lossy(&dom.stdout).to_string();
        assert!(
            dom.status.success(),
            "chromium failed: {}",
            String::from_utf8_lossy(&dom.stderr)
        );
        assert!(html.contains("<td class=\"group\">payments</td>"), "{html}");
        assert!(html.contains("<td class=\"members\">3</td>"), "{html}");
        // The page was redrawn from JSON: the snapshot time moved past the first render.
        let taken: u64 = html
            .split("data-taken-at=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .expect("snapshot time in the page");
        assert!(taken > start, "the page never refreshed: {taken}");
        // Lag shown is what the server computed for that snapshot: the log end grows by 7 per
        // simulated minute from 1250, the committed offset stays 1000; one history point per poll.
        let polls = (taken - start) / 60_000;
        assert!(polls >= 2, "too few polls reached the page: {polls}");
        let expected_lag = 250 + polls as i64 * 7;
        assert!(
            html.contains(&format!("<td class=\"lag\">{expected_lag}</td>")),
            "lag cell does not show {expected_lag}: {html}"
        );
        let shown_points: u64 = html
            .split("data-points=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .expect("chart in the page");
        assert_eq!(shown_points, polls + 1, "chart points");

        // And a screenshot, for people.
        let shot =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console-screenshot.png");
        // Under the repository's target/ whatever CARGO_TARGET_DIR says, so it is easy to find.
        std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&shot);
        let out = tokio::task::spawn_blocking({
            let profile = profile.path().to_path_buf();
            let shot = shot.clone();
            move || {
                chromium(
                    &[
                        "--virtual-time-budget=5000".into(),
                        "--window-size=900,700".into(),
                        format!("--screenshot={}", shot.display()),
                        url,
                    ],
                    &profile,
                )
            }
        })
        .await
        .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let png = std::fs::read(&shot).expect("screenshot written");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        server.abort();
    }
}
