//! Consumer groups with real clients none of us wrote: librdkafka (confluent-kafka), kafka-python
//! and kafkajs consumers consuming every produced record once across a leave; librdkafka consumers
//! forming, balancing and rebalancing a group and committing; its AdminClient; kafka-python's
//! admin (OffsetDelete, DescribeGroups with authorized operations, and at v6 a missing group's
//! GROUP_ID_NOT_FOUND; ListOffsets v10's earliest-local and latest-tiered specs); kafkajs's
//! admin; KIP-848 consumer groups with two independent implementations of the consumer
//! protocol (librdkafka, kafka-ts): balance, leave, join, exactly-once consumption, commits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::group_wire;

use std::time::Duration;

use common::raw::RawClient;
use common::{node_dir, node_script, python, python_script, repo_root, run_ok, Cohort};
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

/// Runs a KIP-848 client script (python or node) with COHORT_BIN set: the scripts lower the
/// broker-owned heartbeat interval with `cohort configs --broker-defaults`.
fn kip848_script(program: &str, script: &str, args: &[&str]) -> std::process::Output {
    let (exe, dir) = match program {
        "node" => ("node".into(), node_dir()),
        _ => (python(), repo_root().join("tests/clients/python")),
    };
    run_ok(
        std::process::Command::new(exe)
            .current_dir(&dir)
            .arg(dir.join(script))
            .args(args)
            .env("COHORT_BIN", env!("CARGO_BIN_EXE_cohort")),
        Duration::from_secs(150),
    )
}

/// What a three-consumer KIP-848 scenario (balanced, one leaves, one joins) must show: every
/// phase reached, 900 records consumed exactly once, no partition ever held by two members,
/// no commit refused, every partition committed at its log end (150).
fn assert_kip848_three(got: &Value, b: &Cohort) {
    let log = || b.log();
    for phase in [
        "three_balanced",
        "first_consumed",
        "after_leave_balanced",
        "second_consumed",
        "after_join_balanced",
        "third_consumed",
    ] {
        assert_eq!(got[phase], json!(true), "{phase}: {got}\nlog:\n{}", log());
    }
    assert_eq!(got["after_leave"], json!([3, 3]), "{got}");
    assert_eq!(got["after_join"], json!([2, 2, 2]), "{got}");
    assert_eq!(got["consumed"], json!(900), "{got}");
    assert_eq!(got["distinct"], json!(900), "{got}");
    assert_eq!(got["distinct_keys"], json!(900), "{got}");
    assert_eq!(got["violations"], json!([]), "{got}");
    let committed: Vec<Value> = (0..6).map(|p| json!([p, 150])).collect();
    assert_eq!(got["committed"], json!(committed), "{got}\nlog:\n{}", log());
}

/// Three librdkafka consumers with `group.protocol=consumer` on six partitions: the broker
/// balances them, rebalances when one leaves and when one joins, and every record is consumed
/// once with every commit (OffsetCommit v9, member epoch) accepted.
#[test]
fn three_librdkafka_consumer_protocol_members_balance_leave_join_and_consume_once() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = kip848_script(
        "python",
        "groups_kip848_three.py",
        &[&b.bootstrap(), "kip848-three", "kip848-three-group"],
    );
    let got = parse(&out, &b);
    assert_kip848_three(&got, &b);
    assert_eq!(got["commit_errors"], json!([]), "{got}");
    assert_eq!(
        got["described"],
        json!({
            "state": "STABLE",
            "type": "CONSUMER",
            "members": ["c1", "c2", "c4"],
            "partitions": [0, 1, 2, 3, 4, 5],
            "target_is_current": true,
        }),
        "{got}"
    );
}

/// The same scenario with kafka-ts, an independent (TypeScript) implementation of the
/// consumer protocol: full owned-partition lists on every heartbeat, its own reconciliation.
#[test]
fn three_kafka_ts_consumer_protocol_members_balance_leave_join_and_consume_once() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = kip848_script(
        "node",
        "groups_kip848_kafkats.js",
        &[&b.bootstrap(), "kip848-kts", "kip848-kts-group"],
    );
    let got = parse(&out, &b);
    assert_kip848_three(&got, &b);
    assert_eq!(got["errors"], json!([]), "{got}");
}

/// Static membership with the consumer protocol: a librdkafka member restarted within its
/// session (it left with epoch −2) gets back exactly its partitions; the other member sees no
/// assign or revoke, the group epoch does not move and the member epoch continues (as Kafka's
/// static-member replacement keeps it), read with `cohort groups --describe --verbose`.
#[test]
fn a_static_consumer_protocol_member_restarted_within_its_session_keeps_partitions_and_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = kip848_script(
        "python",
        "groups_kip848_static.py",
        &[&b.bootstrap(), "kip848-static", "kip848-static-group"],
    );
    let got = parse(&out, &b);
    for check in [
        "balanced",
        "b_kept_only_its_own",
        "a_partitions_unowned_while_away",
        "rejoined",
        "same_partitions",
        "b_untouched",
        "all_consumed",
        "group_epoch_unchanged",
        "member_epoch_continues",
        "assignment_listed_same",
    ] {
        assert_eq!(got[check], json!(true), "{check}: {got}\nlog:\n{}", b.log());
    }
    assert_eq!(got["consumed"], json!(240), "{got}");
    assert_eq!(got["distinct"], json!(240), "{got}");
    assert_eq!(got["commit_errors"], json!([]), "{got}");
    assert_eq!(got["violations"], json!([]), "{got}");
    let committed: Vec<Value> = (0..6).map(|p| json!([p, 40])).collect();
    assert_eq!(got["committed"], json!(committed), "{got}");
}

/// A regex subscription (librdkafka `subscribe(["^orders-.*"])` with the consumer protocol
/// sends SubscribedTopicRegex): the broker assigns the matching topic, picks up one created
/// later, and never assigns topics that do not match in full.
#[test]
fn a_consumer_protocol_regex_subscription_picks_up_a_topic_created_later() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = kip848_script(
        "python",
        "groups_kip848_regex.py",
        &[&b.bootstrap(), "kip848-regex-group"],
    );
    let got = parse(&out, &b);
    for check in [
        "orders_a_owned",
        "orders_a_consumed",
        "orders_b_owned",
        "orders_b_consumed",
        "balanced",
        "regex_sent",
    ] {
        assert_eq!(got[check], json!(true), "{check}: {got}\nlog:\n{}", b.log());
    }
    assert_eq!(got["names_sent"], json!(false), "{got}");
    assert_eq!(
        got["described_topics"],
        json!(["orders-a", "orders-b"]),
        "{got}"
    );
    assert_eq!(
        got["topics_ever_assigned"],
        json!(["orders-a", "orders-b"]),
        "{got}"
    );
    assert_eq!(got["consumed"], json!(120), "{got}");
    assert_eq!(got["distinct"], json!(120), "{got}");
    assert_eq!(got["commit_errors"], json!([]), "{got}");
    assert_eq!(got["violations"], json!([]), "{got}");
    let mut committed: Vec<Value> = (0..3).map(|p| json!(["orders-a", p, 20])).collect();
    committed.extend((0..4).map(|p| json!(["orders-b", p, 15])));
    assert_eq!(got["committed"], json!(committed), "{got}");
}
