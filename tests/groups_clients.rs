//! Consumer groups with real clients none of us wrote: librdkafka (confluent-kafka), kafka-python
//! and kafkajs consumers consuming every produced record once across a leave; librdkafka consumers
//! forming, balancing and rebalancing a group and committing; its AdminClient; kafka-python's
//! admin (OffsetDelete, DescribeGroups with authorized operations, and at v6 a missing group's
//! GROUP_ID_NOT_FOUND; ListOffsets v10's earliest-local and latest-tiered specs); kafkajs's
//! admin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::group_wire;

use std::time::Duration;

use common::raw::RawClient;
use common::{node_script, python_script, Cohort};
use group_wire::{commit, create_topic, Commit};
use serde_json::{json, Value};

fn broker(dir: &tempfile::TempDir) -> Cohort {
    // A short initial rebalance delay keeps the test fast; the rule itself is the core's.
    // Group debug logs tell a failed rebalance's story (joins, syncs, heartbeats refused,
    // state transitions, timers) in the log a failing assertion prints.
    Cohort::start_logged(
        &dir.path().join("data"),
        &["--group-initial-rebalance-delay-ms", "500"],
        "info,cohort::group=debug",
    )
}

fn parse(out: &std::process::Output, broker: &Cohort) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}\nlog:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            broker.log()
        )
    })
}

#[test]
fn librdkafka_consumers_balance_rebalance_commit_and_admin_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = python_script(
        "groups_confluent.py",
        &[&b.bootstrap()],
        Duration::from_secs(150),
    );
    let got = parse(&out, &b);
    let expected = json!({
        "three_balanced": true,
        "three_cover_all": true,
        "commit_errors": [],
        "committed": [[0, 10], [1, 11], [2, 12], [3, 13], [4, 14], [5, 15]],
        "alter_active": "UNKNOWN_MEMBER_ID",
        "describe_active": ["STABLE", 3],
        "two_balanced": true,
        "listed": [["billing", "EMPTY"]],
        "describe_empty": ["EMPTY", 0],
        "after_alter": [[0, 5], [1, 11]],
        "after_delete": [],
    });
    assert_eq!(got, expected, "log:\n{}", b.log());
}

#[test]
fn kafka_python_admin_reads_and_deletes_offsets_and_groups() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = python_script(
        "groups_kafka_python.py",
        &[&b.bootstrap(), "kp-events"],
        Duration::from_secs(120),
    );
    let got = parse(&out, &b);
    let expected = json!({
        "committed": [3, 4],
        "listed": [["kp-group", "Empty"]],
        "described": ["Empty", "", 0],
        "offsets": [[0, 3], [1, 4]],
        "delete_offsets": [[0, "NoError"]],
        "offsets_after": [[1, 4]],
        "delete_groups": [["kp-group", "OK"], ["never-was", "GroupIdNotFoundError"]],
        "versions": {"DescribeGroups": 6, "FindCoordinator": 6, "ListOffsets": 10},
        "described_gone": [
            "Dead",
            "[Error 69] GroupIdNotFoundError: Group never-was not found."
        ],
        // Log start 2 after DeleteRecords; nothing tiered; log end 5.
        "offsets_by_spec": [[2, -1], [2, -1], [-1, -1], [5, -1]],
    });
    assert_eq!(got, expected, "log:\n{}", b.log());
}

#[test]
fn kafkajs_admin_sets_offsets_of_a_new_group_fetches_describes_lists_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let mut c = RawClient::connect(b.kafka);
    create_topic(&mut c, "kjs-events", 3);
    assert_eq!(
        commit(&mut c, &Commit::admin("kjs-group", "kjs-events", 0, 5)),
        0
    );
    assert_eq!(
        commit(&mut c, &Commit::admin("kjs-group", "kjs-events", 2, 9)),
        0
    );
    let out = node_script(
        "groups_kafkajs.js",
        &[&b.bootstrap()],
        Duration::from_secs(120),
    );
    let got = parse(&out, &b);
    let expected = json!({
        "set_fresh": [[0, "-1"], [1, "3"], [2, "-1"]],
        "fetched": [[0, "5"], [1, "-1"], [2, "9"]],
        "described": [["kjs-group", "Empty", 0], ["kjs-never", "Dead", 0]],
        "listed": ["kjs-fresh", "kjs-group"],
        "after_delete": [],
    });
    assert_eq!(got, expected, "log:\n{}", b.log());
}

#[test]
fn a_static_librdkafka_member_restarted_within_its_session_keeps_its_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = python_script(
        "groups_static.py",
        &[&b.bootstrap()],
        Duration::from_secs(150),
    );
    let got = parse(&out, &b);
    let expected = json!({
        "balanced": true,
        "rejoined": true,
        "same_partitions": true,
        "b_untouched": true,
    });
    assert_eq!(got, expected, "log:\n{}", b.log());
}

/// Every record consumed exactly once, each partition's committed offset at its end, and the
/// two consumers left after one leaves share all six partitions.
fn assert_consumed_exactly_once(got: &Value, total: u64, b: &Cohort) {
    let per_partition = total / 6;
    let committed: Vec<Value> = (0..6).map(|p| json!([p, per_partition])).collect();
    assert_eq!(got["consumed"], json!(total), "{got}\nlog:\n{}", b.log());
    assert_eq!(got["distinct"], json!(total), "{got}");
    assert_eq!(got["left"], json!(true), "{got}");
    assert_eq!(got["after_leave"], json!([3, 3]), "{got}");
    assert_eq!(got["committed"], json!(committed), "{got}");
}

#[test]
fn librdkafka_group_consumes_every_record_once_across_a_leave() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = python_script(
        "groups_confluent_e2e.py",
        &[&b.bootstrap()],
        Duration::from_secs(150),
    );
    let got = parse(&out, &b);
    assert_consumed_exactly_once(&got, 600, &b);
    let no_lag: Vec<Value> = (0..6).map(|p| json!([p, 0])).collect();
    assert_eq!(
        got["lag"],
        json!(no_lag),
        "AdminClient list_offsets vs committed: {got}"
    );
}

#[test]
fn kafka_python_group_consumes_every_record_once_across_a_leave() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = python_script(
        "groups_kafka_python_e2e.py",
        &[&b.bootstrap()],
        Duration::from_secs(150),
    );
    assert_consumed_exactly_once(&parse(&out, &b), 300, &b);
}

#[test]
fn kafkajs_group_consumes_every_record_once_across_a_leave() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = node_script(
        "groups_kafkajs_e2e.js",
        &[&b.bootstrap()],
        Duration::from_secs(150),
    );
    assert_consumed_exactly_once(&parse(&out, &b), 300, &b);
}

#[test]
fn a_killed_librdkafka_consumer_costs_only_its_uncommitted_records() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = python_script(
        "groups_crash_consumer.py",
        &[&b.bootstrap()],
        Duration::from_secs(150),
    );
    let got = parse(&out, &b);
    let expected = json!({
        "killed": true,
        "distinct": 600,
        "duplicates_within_bound": true,
        "duplicates_only_from_victim": true,
        "after_crash": [3, 3],
    });
    assert_eq!(got, expected, "log:\n{}", b.log());
}

/// KIP-848 end to end over TCP: librdkafka with `group.protocol=consumer` is assigned by the
/// broker (ConsumerGroupHeartbeat), commits with its member epoch (OffsetCommit v9), fetches
/// (OffsetFetch v9); the AdminClient lists by type (ListGroups v5) and describes the group
/// (ConsumerGroupDescribe); a second consumer resumes exactly where the first committed.
#[test]
fn a_librdkafka_consumer_protocol_group_is_assigned_by_the_broker_and_resumes_from_commits() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = python_script(
        "groups_consumer_protocol.py",
        &[&b.bootstrap()],
        Duration::from_secs(120),
    );
    let got = parse(&out, &b);
    let log = || b.log();
    assert_eq!(got["errors"], json!([]), "{got}\nlog:\n{}", log());
    assert_eq!(got["c1_assignment"], json!([0, 1, 2]), "{got}");
    assert_eq!(got["committed_first"], json!(150), "{got}\nlog:\n{}", log());
    assert_eq!(
        got["listed_consumer"],
        json!([["kip848-group", "CONSUMER"]]),
        "{got}"
    );
    assert_eq!(got["listed_classic"], json!([]), "{got}");
    assert_eq!(
        got["described"],
        json!(["STABLE", "CONSUMER", ["c1"], [0, 1, 2]]),
        "{got}"
    );
    assert_eq!(got["c2_assignment"], json!([0, 1, 2]), "{got}");
    assert_eq!(got["consumed"], json!(300), "{got}\nlog:\n{}", log());
    assert_eq!(got["distinct"], json!(300), "{got}");
    assert_eq!(
        got["committed_end"],
        json!([[0, 100], [1, 100], [2, 100]]),
        "{got}"
    );
}
