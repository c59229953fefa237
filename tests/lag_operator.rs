//! What the lag surface tells an operator beyond the figures, over the wire of a live
//! `cohort serve`: the tracker's limits (a counter and the limits on `/metrics`, one WARN line
//! per limit in the log, a line on `/console`), the per-group commit counter, and status
//! windows that a restarted coordinator seeds from the commits' timestamps (STOPPED at once for
//! a consumer that stopped before the restart, "warming up" rather than OK for the others).
//! Commits are raw OffsetCommit requests (admin commits of simple groups), so every count is
//! known exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::group_wire;

use std::time::{Duration, Instant};

use common::metrics::{scrape, scrape_until};
use common::raw::{batches, RawClient};
use common::Cohort;
use group_wire::{commit, delete_groups, Commit};

fn group_series(name: &str, group: &str) -> String {
    format!("{name}{{group=\"{group}\"}}")
}

fn partition_series(name: &str, group: &str, partition: i32) -> String {
    format!("{name}{{group=\"{group}\",topic=\"t\",partition=\"{partition}\"}}")
}

/// A topic `t` of `partitions` partitions with `records` records in each.
fn topic_with_records(c: &mut RawClient, partitions: i32, records: usize) {
    assert_eq!(c.create_topic("t", partitions, &[]), 0);
    let values: Vec<Vec<u8>> = (0..records).map(|i| format!("r{i}").into_bytes()).collect();
    let values: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
    for p in 0..partitions {
        let r = c.produce("t", p, batches::batch(&values, 0, None));
        assert_eq!(r.error_code, 0, "{r:?}");
    }
}

fn commit_ok(c: &mut RawClient, group: &str, partition: i32, offset: i64) {
    assert_eq!(
        commit(c, &Commit::admin(group, "t", partition, offset)),
        0,
        "commit {group} {partition} {offset}"
    );
}

#[test]
fn tracker_limits_reach_the_operator_on_metrics_log_and_console() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(
        &dir.path().join("data"),
        &[
            "--lag-sample-interval-ms",
            "100",
            "--lag-window-ms",
            "1000",
            "--lag-groups-max",
            "2",
            "--lag-partitions-per-group-max",
            "2",
            "--lag-partitions-max",
            "3",
        ],
    );
    scrape_until(
        &broker,
        Duration::from_secs(20),
        "the exporting coordinator",
        |m| m.contains_key("cohort_lag_tracked_groups"),
    );
    let mut c = RawClient::connect(broker.kafka);
    topic_with_records(&mut c, 3, 10);
    commit_ok(&mut c, "g1", 0, 1);
    commit_ok(&mut c, "g1", 1, 1);
    commit_ok(&mut c, "g1", 2, 1); // a third partition of g1: over the per-group limit
    commit_ok(&mut c, "g2", 0, 1); // the third partition in all
    commit_ok(&mut c, "g2", 1, 1); // a fourth: over the total
    commit_ok(&mut c, "g2", 1, 2); // again
    for offset in 0..3 {
        commit_ok(&mut c, "g3", 0, offset); // a third group: over the groups limit
    }

    let m = scrape(&broker);
    let get = |k: &str| m.get(k).copied();
    assert_eq!(
        get("cohort_lag_untracked_offsets_total{what=\"group\"}"),
        Some(3.0)
    );
    assert_eq!(
        get("cohort_lag_untracked_offsets_total{what=\"partition\"}"),
        Some(3.0)
    );
    assert_eq!(get("cohort_lag_tracked_groups"), Some(2.0));
    assert_eq!(get("cohort_lag_limit{limit=\"groups\"}"), Some(2.0));
    assert_eq!(get("cohort_lag_limit{limit=\"partitions\"}"), Some(3.0));
    assert_eq!(
        get("cohort_lag_limit{limit=\"partitions_per_group\"}"),
        Some(2.0)
    );
    // What is tracked keeps exact figures; what is not has none.
    let m = scrape_until(&broker, Duration::from_secs(20), "the tracked lags", |m| {
        m.contains_key(&partition_series("cohort_group_lag", "g2", 0))
    });
    assert_eq!(
        m.get(&partition_series("cohort_group_lag", "g1", 1)),
        Some(&9.0)
    );
    assert!(!m.contains_key(&partition_series("cohort_group_lag", "g1", 2)));
    assert!(!m.contains_key(&partition_series("cohort_group_lag", "g2", 1)));
    assert!(!m.keys().any(|k| k.contains("group=\"g3\"")), "{m:#?}");

    // One WARN line per limit, however many commits it refused.
    let log = broker.log();
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("lag tracker limit reached"))
        .collect();
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    for flag in [
        "--lag-groups-max",
        "--lag-partitions-per-group-max",
        "--lag-partitions-max",
    ] {
        assert_eq!(
            warnings.iter().filter(|l| l.contains(flag)).count(),
            1,
            "{flag}: {warnings:#?}"
        );
    }
    assert!(warnings.iter().all(|l| l.contains("WARN")), "{warnings:#?}");

    // The console says it, above the table.
    let line = "Lag tracker limit reached, not tracked: 3 committed offsets of groups over the limit of 2 groups (--lag-groups-max); 3 committed offsets of partitions over the limit of 3 group partitions (--lag-partitions-max) or 2 per group (--lag-partitions-per-group-max). Those groups and partitions have no lag figures or status here.";
    let (status, page) = broker.http_get("/console");
    assert!(status.contains("200"), "{status}");
    assert!(
        page.contains(&format!("<p id=\"limits\">{line}</p>")),
        "{page}"
    );
    let (_, json) = broker.http_get("/console.json");
    assert!(
        json.contains(&format!("\"limits_notice\":\"{line}\"")),
        "{json}"
    );
}

#[test]
fn each_group_has_a_commit_counter_that_leaves_with_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(
        &dir.path().join("data"),
        &["--lag-sample-interval-ms", "100", "--lag-window-ms", "1000"],
    );
    scrape_until(
        &broker,
        Duration::from_secs(20),
        "the exporting coordinator",
        |m| m.contains_key("cohort_lag_tracked_groups"),
    );
    let mut c = RawClient::connect(broker.kafka);
    topic_with_records(&mut c, 2, 10);
    // Five commits of one partition (two of them unchanged offsets) and three over two.
    for offset in [1, 2, 2, 3, 3] {
        commit_ok(&mut c, "orders", 0, offset);
    }
    commit_ok(&mut c, "billing", 0, 4);
    commit_ok(&mut c, "billing", 1, 4);
    commit_ok(&mut c, "billing", 1, 6);
    let counter = |g: &str| group_series("cohort_group_offset_commits_total", g);
    let m = scrape(&broker);
    assert_eq!(m.get(&counter("orders")), Some(&5.0));
    assert_eq!(m.get(&counter("billing")), Some(&3.0));
    let (_, body) = broker.http_get("/metrics");
    assert!(
        body.contains("# TYPE cohort_group_offset_commits_total counter"),
        "{body}"
    );
    // More commits move it; a deleted group leaves the family at once.
    commit_ok(&mut c, "orders", 0, 7);
    assert_eq!(delete_groups(&mut c, &["billing"]), vec![0]);
    let m = scrape(&broker);
    assert_eq!(m.get(&counter("orders")), Some(&6.0));
    assert!(!m.contains_key(&counter("billing")), "{m:#?}");
}

#[test]
fn a_restarted_coordinator_seeds_status_windows_from_commit_times() {
    const WINDOW_MS: u64 = 6_000;
    let flags = ["--lag-sample-interval-ms", "500", "--lag-window-ms", "6000"];
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &flags);
    scrape_until(
        &broker,
        Duration::from_secs(20),
        "the exporting coordinator",
        |m| m.contains_key("cohort_lag_tracked_groups"),
    );
    let mut c = RawClient::connect(broker.kafka);
    topic_with_records(&mut c, 1, 10);
    // `idle` commits once and stops; `recent` commits just before the restart.
    commit_ok(&mut c, "idle", 0, 5);
    std::thread::sleep(Duration::from_millis(WINDOW_MS + 300));
    commit_ok(&mut c, "recent", 0, 4);
    let recent_committed = Instant::now();
    drop(c);
    broker.kill9();

    let broker = Cohort::start(&data, &flags);
    let status = |g: &str| group_series("cohort_group_status", g);
    let warming = |g: &str| group_series("cohort_group_status_warming_up", g);
    // The first samples of the new coordinator: `idle` has not committed for longer than the
    // window, so it is STOPPED at once; `recent` cannot be judged yet and says so.
    let m = scrape_until(&broker, Duration::from_secs(20), "the first sample", |m| {
        m.contains_key(&partition_series("cohort_group_lag", "recent", 0))
            && m.contains_key(&partition_series("cohort_group_lag", "idle", 0))
    });
    assert!(
        recent_committed.elapsed() < Duration::from_millis(WINDOW_MS),
        "the restart took longer than the window: nothing left to check"
    );
    assert_eq!(m.get(&status("idle")), Some(&3.0), "idle is STOPPED");
    assert_eq!(
        m.get(&partition_series("cohort_group_lag_status", "idle", 0)),
        Some(&3.0)
    );
    assert_eq!(m.get(&warming("idle")), Some(&0.0));
    assert_eq!(
        m.get(&partition_series("cohort_group_lag", "recent", 0)),
        Some(&6.0)
    );
    assert_eq!(m.get(&warming("recent")), Some(&1.0));
    assert!(
        !m.contains_key(&status("recent")),
        "no status claimed: {m:#?}"
    );
    assert!(!m.contains_key(&partition_series("cohort_group_lag_status", "recent", 0)));
    assert_eq!(
        m.get(&group_series("cohort_group_offset_commits_total", "recent")),
        Some(&0.0)
    );
    let (_, page) = broker.http_get("/console");
    assert!(
        page.contains("<td class=\"status status-warming-up\">warming up</td>"),
        "{page}"
    );
    assert!(
        page.contains("<td class=\"status status-STOPPED\">STOPPED</td>"),
        "{page}"
    );

    // A window after its last commit, with no commit since, `recent` is STOPPED too.
    let m = scrape_until(&broker, Duration::from_secs(20), "recent judged", |m| {
        m.get(&warming("recent")) == Some(&0.0)
    });
    assert!(
        recent_committed.elapsed() >= Duration::from_millis(WINDOW_MS),
        "judged before a window had passed"
    );
    assert_eq!(m.get(&status("recent")), Some(&3.0), "recent is STOPPED");
}
