use super::*;
use crate::client::TopicPartition;
use crate::lag::{LagPoint, LagStatus, LagTracker, LagTrackerConfig, Tracking};

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
    assert!(
        page.contains(
            "<tr data-group=\"orders\"><td class=\"group\"><a href=\"/console/groups/orders?window=1h\">orders</a></td><td class=\"type\">classic</td><td class=\"state\">Stable</td><td class=\"members\">1</td><td class=\"lag\">42</td><td class=\"lag-seconds\">-</td><td class=\"status status-OK\">OK</td></tr>"
        ),
        "{page}"
    );
    assert!(page.contains("<td class=\"lag\">0</td>"));
    assert!(page.contains("<figure class=\"chart\" data-group=\"billing\">"));
    assert!(page.contains("<main id=\"page\" data-refresh=\"/console\">"));
}

#[test]
fn routes() {
    let snap = snapshot_with(&[("orders", 1)]);
    let page = respond("/console", "", &snap).unwrap();
    assert_eq!(page.status, "200 OK");
    assert_eq!(page.content_type, "text/html; charset=utf-8");
    assert!(page.body.contains("orders"));
    assert!(page.body.contains("data-refresh=\"/console?window=1h\""));
    let page = respond("/console.json", "", &snap).unwrap();
    assert_eq!(page.content_type, "application/json");
    assert!(page.body.starts_with('{'));
    let page = respond("/console/groups/orders", "window=6h", &snap).unwrap();
    assert_eq!(page.status, "200 OK");
    assert!(page
        .body
        .contains("<h1>Group <span class=\"group-id\">orders</span></h1>"));
    assert!(page.body.contains("total lag, last 6 h"));
    assert!(page
        .body
        .contains("data-refresh=\"/console/groups/orders?window=6h\""));
    let missing = respond("/console/groups/nobody", "", &snap).unwrap();
    assert_eq!(missing.status, "404 Not Found");
    assert!(missing
        .body
        .contains("This node tracks no group named nobody"));
    // The refresh asks for `<main>` alone.
    let fragment = respond("/console", "window=15m&fragment=1", &snap).unwrap();
    assert!(fragment.body.starts_with("<h1>Consumer groups</h1>"));
    assert!(fragment.body.contains("total lag, last 15 min"));
    assert!(!fragment.body.contains("<html"));
    // An unknown window is the default; a bad encoding is no group.
    assert!(respond("/console", "window=2d", &snap)
        .unwrap()
        .body
        .contains("total lag, last 1 h"));
    assert_eq!(
        respond("/console/groups/%zz", "", &snap).unwrap().status,
        "404 Not Found"
    );
    assert!(respond("/metrics", "", &snap).is_none());
    assert!(serves("/console/groups/x") && serves("/console") && !serves("/consoles"));
}

#[test]
fn group_ids_travel_percent_encoded() {
    let id = "billing/eu west?&#é";
    let href = group_href(id);
    assert_eq!(href, "/console/groups/billing%2Feu%20west%3F%26%23%C3%A9");
    let encoded = href.strip_prefix(GROUP_PATH_PREFIX).unwrap();
    assert_eq!(percent_decode(encoded).as_deref(), Some(id));
    assert_eq!(percent_decode("%C3"), None, "not UTF-8");
    assert_eq!(percent_decode("%4"), None, "cut short");
    let snap = snapshot_with(&[(id, 3)]);
    let page = respond(&href, "", &snap).unwrap();
    assert_eq!(page.status, "200 OK");
    assert!(page.body.contains("billing/eu west?&amp;#é"));
    assert!(render_console(&snap).contains(&format!("<a href=\"{href}?window=1h\">")));
}

#[test]
fn names_are_escaped() {
    let evil = "<script>alert('x')</script>";
    let snap = snapshot_with(&[(evil, 1)]);
    let escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;";
    for page in [
        render_console(&snap),
        respond(&group_href(evil), "", &snap).unwrap().body,
    ] {
        assert!(!page.contains("<script>alert"));
        assert!(page.contains(escaped));
    }
}

#[test]
fn a_group_page_shows_each_partition_with_its_lag_in_records_and_seconds() {
    let mut t = LagTracker::new(LagTrackerConfig::default());
    let (a, b) = (
        TopicPartition::new("orders", 0),
        TopicPartition::new("orders", 1),
    );
    let now = 1_796_418_309_250u64;
    assert_eq!(t.record_group("g", "Stable", 2), Tracking::Tracked);
    assert_eq!(t.record_commit("g", &a, 10, now), Tracking::Tracked);
    assert_eq!(t.record_commit("g", &b, 7, now), Tracking::Tracked);
    t.record_log_offsets(&a, Some(0), 25);
    t.record_log_offsets(&b, Some(0), 7);
    t.record_time(&a, 10, (now - 12_345) as i64);
    let owner = crate::lag::Owner {
        member_id: "m-1".into(),
        host: "/10.0.0.7".into(),
        client_id: "app<1>".into(),
    };
    t.record_owners("g", vec![(a.clone(), owner)]);
    t.record_owners(
        "not-tracked",
        vec![(
            a.clone(),
            crate::lag::Owner {
                member_id: "x".into(),
                host: "x".into(),
                client_id: "x".into(),
            },
        )],
    );
    t.sample(now);
    let snap = t.snapshot(now);
    let page = respond("/console/groups/g", "", &snap).unwrap().body;
    assert!(page.contains(
        "<tr data-partition=\"orders:0\"><td class=\"topic\"><a href=\"/console/topics/orders\">orders</a></td><td class=\"num partition\">0</td><td class=\"num committed\">10</td><td class=\"num log-end\">25</td><td class=\"lag\">15</td><td class=\"lag-seconds\">12.3</td><td class=\"owner\">m-1</td><td class=\"host\">/10.0.0.7</td><td class=\"client-id\">app&lt;1&gt;</td><td class=\"status status-warming-up\">warming up</td><td class=\"rule\">the window is not covered yet: no status can be claimed</td></tr>"
    ), "{page}");
    // Caught up is certain at once, and says why.
    assert!(page.contains("<td class=\"status status-OK\">OK</td><td class=\"rule\">the lag was zero at some point in the window</td>"), "{page}");
    // Partition 1 has no owner.
    assert!(page.contains("<td class=\"lag\">0</td><td class=\"lag-seconds\">0</td><td class=\"owner\">-</td><td class=\"host\">-</td><td class=\"client-id\">-</td>"), "{page}");
    assert_eq!(snap.groups.len(), 1, "owners alone do not track a group");
    assert!(page.contains("<dd class=\"type\">classic</dd>"));
    assert!(page.contains("<dd class=\"members\">2</dd>"));
    assert!(page.contains("<dd class=\"lag\">15</dd>"));
    assert!(page.contains("<dd class=\"max-lag-seconds\">12.3</dd>"));
    // Times are UTC until the script shows them in the reader's zone.
    assert!(page.contains("<time data-ms=\"1796418309250\">2026-12-04 21:05:09 UTC</time>"));
    assert!(page.contains("<a href=\"/console?window=1h\">← all groups</a>"));
    assert!(page.contains(
        "<a href=\"/console/groups/g?window=15m\">15 min</a> <a aria-current=\"page\">1 h</a> <a href=\"/console/groups/g?window=6h\">6 h</a>"
    ));
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
            "<td class=\"lag\">20</td><td class=\"lag-seconds\">-</td><td class=\"status status-warming-up\">warming up</td>"
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
fn chart_points_span_the_window_and_the_axes_are_labelled() {
    let end = 10_000_000;
    let span = Window::Hour1.ms();
    let history = vec![
        LagPoint {
            at_ms: end - span - 1,
            total_lag: 5,
        },
        LagPoint {
            at_ms: end - span,
            total_lag: 0,
        },
        LagPoint {
            at_ms: end,
            total_lag: 10,
        },
    ];
    // The plot runs from x 64 to 628 and from y 162 (0) up to 12 (the axis top, 10 here).
    assert_eq!(
        chart_points(&history, end, Window::Hour1, 10),
        "64.0,162.0 628.0,12.0"
    );
    assert_eq!(chart_points(&[], end, Window::Hour1, 10), "");
    // A 15-minute window keeps only the last point.
    assert_eq!(
        chart_points(&history, end, Window::Minutes15, 20),
        "628.0,87.0"
    );
    let svg = chart::render("g", &history, end, Window::Hour1);
    assert!(svg.contains(">lag (records)</text>"), "{svg}");
    assert!(svg.contains("time (<tspan class=\"tz\">UTC</tspan>)"));
    assert!(svg.contains("data-top=\"10\""));
    for tick in ["0", "5", "10"] {
        assert!(
            svg.contains(&format!("text-anchor=\"end\">{tick}</text>")),
            "{tick}"
        );
    }
    // Five time ticks over the hour before 02:46:40 UTC, as hours and minutes.
    assert_eq!(svg.matches("data-short=\"\"").count(), 5);
    assert!(svg.contains(&format!(
        "data-ms=\"{}\" data-short=\"\">01:46</text>",
        end - span
    )));
    assert!(svg.contains(&format!("data-ms=\"{end}\" data-short=\"\">02:46</text>")));
}

#[test]
fn the_lag_axis_tops_at_a_round_number() {
    for (max, top) in [
        (0, 1),
        (1, 1),
        (2, 2),
        (3, 5),
        (7, 10),
        (11, 20),
        (65, 100),
        (250, 500),
    ] {
        assert_eq!(chart::round_max(max), top, "{max}");
    }
    assert_eq!(chart::round_max(i64::MAX), i64::MAX);
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
                let target = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (path, query) = target.split_once('?').unwrap_or((&target, ""));
                let (status, kind, body) = {
                    let mut guard = tracker.lock().unwrap();
                    let (t, now) = &mut *guard;
                    if Query::parse(query).fragment {
                        // Each refresh moves time on and adds lag, so the chart must grow.
                        *now += 60_000;
                        let tp = TopicPartition::new("events", 0);
                        t.record_log_offsets(
                            &tp,
                            Some(0),
                            1_250 + ((*now - start) / 60_000) as i64 * 7,
                        );
                        t.sample(*now);
                    }
                    match respond(path, query, &t.snapshot(*now)) {
                        Some(page) => (page.status, page.content_type, page.body),
                        None => ("404 Not Found", "text/plain", String::from("not found")),
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
        cmd.env("TZ", "Asia/Kolkata")
            .output()
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
        assert!(
            html.contains("<td class=\"group\"><a href=\"/console/groups/payments?window=1h\">payments</a></td>"),
            "{html}"
        );
        assert!(html.contains("<td class=\"members\">3</td>"), "{html}");
        // The page was redrawn in place: the snapshot time moved past the first render, and
        // every time shows in the browser's zone (the test runs Chromium with TZ=Asia/Kolkata,
        // UTC+05:30, which has no daylight saving).
        assert!(
            html.contains("<span class=\"tz\">UTC+05:30</span>"),
            "{html}"
        );
        let taken: u64 = html
            .split("data-taken-at=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .expect("snapshot time in the page");
        assert!(taken > start, "the page never refreshed: {taken}");
        let local = crate::clock::utc_date_time(taken as i64 + 19_800_000);
        let local = local.trim_end_matches(" UTC");
        assert!(
            html.contains(&format!("<time data-ms=\"{taken}\">{local}</time>")),
            "the snapshot time is not shown as {local}: {html}"
        );
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

mod topic_pages {
    //! The topics pages' rendering over figures made here, and their gathering from a real
    //! broker (a data dir, the catalog, partition logs).
    use super::super::topic_facts::{
        self, ConfigFact, Held, LocalFigures, PartitionFacts, TopicDetail, TopicList, TopicSummary,
        Totals,
    };
    use super::super::*;
    use crate::lag::Snapshot;

    fn here(index: i32, size: u64, start: i64, end: i64, newest: Option<i64>) -> PartitionFacts {
        PartitionFacts {
            index,
            leader: 1,
            replicas: vec![1],
            held: Held::Here(LocalFigures {
                size_bytes: size,
                log_start: start,
                log_end: end,
                max_timestamp_ms: newest,
            }),
        }
    }

    fn config(name: &str, value: &str, overridden: bool) -> ConfigFact {
        ConfigFact {
            name: name.into(),
            value: Some(value.into()),
            source: if overridden {
                "DYNAMIC_TOPIC_CONFIG"
            } else {
                "DEFAULT_CONFIG"
            },
            overridden,
            honoured: true,
        }
    }

    fn detail(name: &str, partitions: Vec<PartitionFacts>, count: usize) -> TopicDetail {
        TopicDetail {
            taken_at_ms: 1_796_418_309_250,
            node_id: 1,
            name: name.into(),
            id: "2c4f5c86-2b4e-4f41-9d0a-2a5b0f7d3e11".into(),
            partition_count: count,
            partitions,
            configs: vec![config("retention.ms", "3600000", true)],
            groups: vec!["readers <eu>".into()],
            groups_known: true,
        }
    }

    fn summary(name: &str, totals: Option<Totals>) -> TopicSummary {
        TopicSummary {
            name: name.into(),
            partitions: 2,
            totals,
            retention_ms: Some(config("retention.ms", "604800000", false)),
            retention_bytes: Some(config("retention.bytes", "-1", false)),
            cleanup_policy: Some(config("cleanup.policy", "delete", false)),
        }
    }

    #[test]
    fn the_list_sums_each_topic_and_links_to_its_page() {
        let parts = [here(0, 2048, 5, 30, None), here(1, 100, 0, 20, None)];
        let list = TopicList {
            taken_at_ms: 1_796_418_309_250,
            node_id: 1,
            topics: vec![summary("orders", Some(Totals::of(&parts)))],
            topics_total: 1,
        };
        let page = respond_topics("", &list);
        assert_eq!(page.status, "200 OK");
        let body = page.body;
        assert!(body.contains(
            "<tr data-topic=\"orders\"><td class=\"topic\"><a href=\"/console/topics/orders\">orders</a></td><td class=\"num partitions\">2</td><td class=\"num size\" data-bytes=\"2148\">2.1 KiB</td><td class=\"num log-start\">5</td><td class=\"num log-end\">50</td><td class=\"num records\">45</td>\
<td class=\"retention-ms\" data-value=\"604800000\" title=\"retention.ms=604800000 (DEFAULT_CONFIG)\">7 d</td><td class=\"retention-bytes\" data-value=\"-1\" title=\"retention.bytes=-1 (DEFAULT_CONFIG)\">unlimited</td><td class=\"cleanup-policy\" data-value=\"delete\" title=\"cleanup.policy=delete (DEFAULT_CONFIG)\">delete</td></tr>"
        ), "{body}");
        assert!(body.contains("<main id=\"page\" data-refresh=\"/console/topics\">"));
        assert!(
            body.contains("<a href=\"/console/topics\">Topics</a>"),
            "the header links the list"
        );
        // The refresh asks for `<main>` alone.
        let fragment = respond_topics("fragment=1", &list).body;
        assert!(fragment.starts_with("<h1>Topics</h1>"), "{fragment}");
    }

    #[test]
    fn names_are_escaped_and_urls_encoded() {
        let evil = "<script>alert('x')</script>";
        let escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;";
        let list = TopicList {
            taken_at_ms: 0,
            node_id: 1,
            topics: vec![summary(evil, None)],
            topics_total: 1,
        };
        let one = respond_topic("", evil, Some(&detail(evil, vec![], 0))).body;
        let missing = respond_topic("", evil, None);
        assert_eq!(missing.status, "404 Not Found");
        for page in [respond_topics("", &list).body, one, missing.body] {
            assert!(!page.contains("<script>alert"), "{page}");
            assert!(page.contains(escaped), "{page}");
        }
        let href = topic_href(evil);
        assert_eq!(
            href,
            "/console/topics/%3Cscript%3Ealert%28%27x%27%29%3C%2Fscript%3E"
        );
        assert_eq!(
            topics_route(&href),
            Some(TopicsRoute::One(Some(evil.to_owned())))
        );
        assert_eq!(topics_route("/console/topics"), Some(TopicsRoute::All));
        assert_eq!(
            topics_route("/console/topics/a%2Eb"),
            Some(TopicsRoute::One(Some("a.b".into())))
        );
        assert_eq!(
            topics_route("/console/topics/%zz"),
            Some(TopicsRoute::One(None))
        );
        let long = format!("/console/topics/{}", "a".repeat(3 * 249 + 1));
        assert_eq!(topics_route(&long), Some(TopicsRoute::One(None)));
        assert_eq!(topics_route("/console/topicsx"), None);
        assert!(serves("/console/topics") && serves("/console/topics/x"));
        // The groups' routes do not answer for the topics pages.
        let snap = Snapshot::empty(0, String::new());
        assert!(
            respond("/console/topics", "", &snap).is_none(),
            "not the groups' route"
        );
    }

    #[test]
    fn an_empty_topic_reads_zero_and_no_newest_record() {
        let t = detail("empty", vec![here(0, 0, 0, 0, None)], 1);
        let page = respond_topic("", "empty", Some(&t)).body;
        assert!(page.contains(
            "<tr data-partition=\"0\"><td class=\"num partition\">0</td><td class=\"num leader\">1</td><td class=\"replicas\">1</td><td class=\"num size\" data-bytes=\"0\" title=\"0 bytes\">0 B</td><td class=\"num log-start\">0</td><td class=\"num log-end\">0</td><td class=\"num records\">0</td><td class=\"newest\">-</td></tr>"
        ), "{page}");
        assert!(
            page.contains(
                "<td class=\"num records\">0</td></tr></tbody></table>\
<p class=\"groups\">"
            ),
            "{page}"
        );
        assert!(!page.contains("class=\"more\""), "{page}");
        let mut none = t.clone();
        none.groups.clear();
        let page_none = respond_topic("", "empty", Some(&none)).body;
        assert!(
            page_none.contains("<p class=\"groups\">Groups with committed offsets on it: none</p>"),
            "{page_none}"
        );
        // The configs as DescribeConfigs reports them; the group links to its page.
        assert!(page.contains(
            "<tr data-config=\"retention.ms\" class=\"override\"><td class=\"name\">retention.ms</td><td class=\"value\">3600000</td><td class=\"source\">DYNAMIC_TOPIC_CONFIG</td><td class=\"honoured\">yes</td></tr>"
        ), "{page}");
        assert!(
            page.contains("<a href=\"/console/groups/readers%20%3Ceu%3E\">readers &lt;eu&gt;</a>"),
            "{page}"
        );
        assert!(page.contains("data-refresh=\"/console/topics/empty\""));
    }

    #[test]
    fn partitions_led_elsewhere_are_named_not_numbered() {
        let mut parts = vec![here(0, 10, 0, 4, Some(1_796_418_309_250))];
        for (index, sampled) in [(1, Some(77)), (2, None)] {
            parts.push(PartitionFacts {
                index,
                leader: 2,
                replicas: vec![2, 1],
                held: Held::Elsewhere {
                    sampled_log_end: sampled,
                },
            });
        }
        parts.push(PartitionFacts {
            index: 3,
            leader: 1,
            replicas: vec![1],
            held: Held::Unavailable("disk <gone>".into()),
        });
        let page = respond_topic("", "t", Some(&detail("t", parts, 4))).body;
        assert!(page.contains("<td class=\"newest\"><time data-ms=\"1796418309250\">2026-12-04 21:05:09 UTC</time></td>"), "{page}");
        assert!(page.contains(
            "<td class=\"num log-end\">77 <span class=\"elsewhere\" title=\"as the lag sampler last heard it from node 2\">(sampled)</span></td>"
        ), "{page}");
        let on2 = "<span class=\"elsewhere\">on node 2</span>";
        assert!(page.contains(&format!(
            "<tr data-partition=\"2\"><td class=\"num partition\">2</td><td class=\"num leader\">2</td><td class=\"replicas\">2, 1</td><td class=\"num size\">{on2}</td><td class=\"num log-start\">{on2}</td><td class=\"num log-end\">{on2}</td><td class=\"num records\">{on2}</td><td class=\"newest\">{on2}</td></tr>"
        )), "{page}");
        assert!(page.contains("<td class=\"unavailable\" colspan=\"5\">not readable here now: disk &lt;gone&gt;</td>"), "{page}");
        // The sums cover partition 0 alone and say what they leave out.
        assert!(page.contains(
            "<td class=\"num log-end\">4 <span class=\"elsewhere\">+ 2 partitions on node 2, 1 unreadable here</span></td>"
        ), "{page}");
    }

    #[test]
    fn many_partitions_are_listed_up_to_the_bound_with_a_note() {
        let parts: Vec<PartitionFacts> = (0..topic_facts::PARTITIONS_LISTED_MAX)
            .map(|i| here(i32::try_from(i).unwrap(), 1, 0, 1, None))
            .collect();
        let page = respond_topic("", "wide", Some(&detail("wide", parts, 5_000))).body;
        assert_eq!(page.matches("<tr data-partition=").count(), 1_000);
        assert!(page.contains("<p class=\"more\">The first 1000 of 5000 partitions are listed and summed (a page lists at most 1000).</p>"), "more note");
        assert!(page.len() < 1_000_000, "{} bytes", page.len());
        // The list says how many topics it left out and which it did not measure.
        let list = TopicList {
            taken_at_ms: 0,
            node_id: 1,
            topics: vec![summary("a", None)],
            topics_total: 900,
        };
        let body = respond_topics("", &list).body;
        assert!(
            body.contains("The first 1 of 900 topics are listed, by name."),
            "{body}"
        );
        assert!(
            body.contains(
                "Topics listed without figures: 1 (one load measures at most 5000 partitions; each topic's page has its own)."
            ),
            "{body}"
        );
    }

    #[test]
    fn sizes_and_durations_read_for_people() {
        assert_eq!(bytes_text(0), "0 B");
        assert_eq!(bytes_text(1023), "1023 B");
        assert_eq!(bytes_text(1536), "1.5 KiB");
        assert_eq!(bytes_text(5 * 1024 * 1024 * 1024), "5.0 GiB");
        assert_eq!(duration_text(-1), "unlimited");
        assert_eq!(duration_text(250), "250 ms");
        assert_eq!(duration_text(60_000), "1 min");
        assert_eq!(duration_text(90_000), "1.5 min");
        assert_eq!(duration_text(604_800_000), "7 d");
    }

    #[test]
    fn a_starting_node_answers_503_saying_why() {
        let page = respond_topics_unavailable("", &TopicsRoute::All, "starting <now>");
        assert_eq!(page.status, "503 Service Unavailable");
        assert!(page.body.contains("starting &lt;now&gt;"));
        let page = respond_topics_unavailable(
            "fragment=1",
            &TopicsRoute::One(Some("t".into())),
            "starting",
        );
        assert!(
            page.body.contains("<p class=\"missing\">starting</p>"),
            "{}",
            page.body
        );
    }

    #[tokio::test]
    async fn figures_are_gathered_from_the_catalog_the_logs_and_the_files() {
        use crate::handlers::test_support::{broker, create_topic, plain_batch};
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        create_topic(&b, "t", 3, &[("retention.ms", "60000")]).await;
        create_topic(&b, "u", 1, &[]).await;
        let p = b.data.partition("t", 0).await.unwrap();
        for _ in 0..2 {
            let records = plain_batch(4);
            let header = protocol::batch::validate_produced(&records).unwrap();
            p.append(bytes::BytesMut::from(&records[..]), header, 0)
                .unwrap();
        }
        assert_eq!(p.delete_records_before(3).unwrap(), 3);
        let snap = Snapshot::empty(0, String::new());
        let d = topic_facts::detail(&b, "t", &snap, 5, 2).await.unwrap();
        assert_eq!((d.partition_count, d.partitions.len()), (3, 2), "bounded");
        let Held::Here(f) = &d.partitions[0].held else {
            panic!("{:?}", d.partitions[0])
        };
        let size =
            crate::data::sizes::partition_bytes(p.dir(), b.catalog.topic("t").unwrap().id).unwrap();
        assert!(size > 0);
        assert_eq!(
            f,
            &LocalFigures {
                size_bytes: size,
                log_start: 3,
                log_end: 8,
                max_timestamp_ms: Some(1_003),
            }
        );
        // An empty partition: nothing to read, and its size is its directory's files.
        let Held::Here(empty) = &d.partitions[1].held else {
            panic!("{:?}", d.partitions[1])
        };
        let p1 = b.data.partition("t", 1).await.unwrap();
        let id = b.catalog.topic("t").unwrap().id;
        assert_eq!(
            empty,
            &LocalFigures {
                size_bytes: crate::data::sizes::partition_bytes(p1.dir(), id).unwrap(),
                log_start: 0,
                log_end: 0,
                max_timestamp_ms: None,
            }
        );
        let retention = d.configs.iter().find(|c| c.name == "retention.ms").unwrap();
        assert_eq!(retention.value.as_deref(), Some("60000"));
        assert_eq!(retention.source, "DYNAMIC_TOPIC_CONFIG");
        assert!(retention.overridden);
        let segment = d
            .configs
            .iter()
            .find(|c| c.name == "segment.bytes")
            .unwrap();
        assert_eq!(segment.source, "DEFAULT_CONFIG");
        // This snapshot is a non-coordinator's: the page says it does not know the groups.
        assert!(!d.groups_known);
        let page = respond_topic("", "t", Some(&d)).body;
        assert!(
            page.contains("Groups with committed offsets on it: not known on this node"),
            "{page}"
        );
        assert!(topic_facts::detail(&b, "nope", &snap, 5, 10)
            .await
            .is_none());

        // The list: both topics, by name; a budget of 3 partitions measures `t` but not `u`.
        let list = topic_facts::list(&b, &snap, 5, 3).await;
        assert_eq!(list.topics_total, 2);
        let names: Vec<&str> = list.topics.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["t", "u"]);
        let t = list.topics[0].totals.as_ref().unwrap();
        assert_eq!((t.here, t.log_start, t.log_end, t.records), (3, 3, 8, 5));
        assert!(t.size_bytes >= size);
        assert_eq!(list.topics[1].totals, None);
        assert_eq!(
            list.topics[0]
                .retention_ms
                .as_ref()
                .unwrap()
                .value
                .as_deref(),
            Some("60000")
        );
        let all = topic_facts::list(&b, &snap, 5, 100).await;
        assert!(all.topics.iter().all(|t| t.totals.is_some()));
    }
}
