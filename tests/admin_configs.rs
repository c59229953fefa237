//! Topic configs, partitions and records administered through real clients (confluent-kafka
//! and kafka-python): read back after a restart of the broker on the same data.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{python_script, Cohort};

fn run(broker: &Cohort, phase: &str) -> serde_json::Value {
    let out = python_script(
        "admin_configs.py",
        &[&broker.bootstrap(), phase],
        Duration::from_secs(180),
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\nstderr: {}\nlog:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            broker.log()
        )
    })
}

#[test]
fn configs_partitions_and_records_through_python_admin_clients_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &[]);
    let got = run(&broker, "first");
    let altered = serde_json::json!({
        "cleanup.policy": ["delete,compact", "DYNAMIC_TOPIC_CONFIG", false],
        "max.message.bytes": ["1048588", "DEFAULT_CONFIG", false],
        "retention.ms": ["604800000", "DEFAULT_CONFIG", false],
        "segment.bytes": ["2097152", "DYNAMIC_TOPIC_CONFIG", false],
    });
    let tp = "ConfigResource(ResourceType.TOPIC,cfg)";
    let expected = serde_json::json!({
        "created": {
            "cleanup.policy": ["delete", "DEFAULT_CONFIG", false],
            "max.message.bytes": ["1048588", "DEFAULT_CONFIG", false],
            "retention.ms": ["60000", "DYNAMIC_TOPIC_CONFIG", false],
            "segment.bytes": ["1073741824", "DEFAULT_CONFIG", false],
        },
        "synonyms": [
            ["retention.ms", "60000", "DYNAMIC_TOPIC_CONFIG"],
            ["log.retention.hours", "168", "DEFAULT_CONFIG"],
        ],
        "alter": {tp: "ok"},
        "altered": altered.clone(),
        "bad": {tp: [
            "INVALID_CONFIG",
            "Invalid value 12 for configuration segment.bytes: a number between 1048576 and 2147483647",
        ]},
        "validate_only": {tp: "ok"},
        "unknown_topic": "UNKNOWN_TOPIC_OR_PART",
        "broker": {
            "node.id": ["1", "DEFAULT_CONFIG", true],
            "num.partitions": ["1", "DEFAULT_CONFIG", true],
        },
        "broker_alter": {"ConfigResource(ResourceType.BROKER,1)": "INVALID_CONFIG"},
        "kp_alter": "{'topic': {'kp': 'OK'}}",
        "kp_describe": ["3600000", "DYNAMIC_TOPIC_CONFIG", 31],
        "kp_partitions": 3,
        "grow": {"grow": "ok"},
        "grow_again": {"grow": "INVALID_PARTITIONS"},
        "shrink": {"grow": "INVALID_PARTITIONS"},
        // The running consumer was given the new partition and read what was produced there.
        "grow_consumed": [0, 1],
        "delete_records": ["ok"],
        "delete_records_past_end": ["OFFSET_OUT_OF_RANGE"],
        // kafka-python's DeleteRecords moved the start on to 6; ListOffsets and a Fetch from
        // offset 0 (OFFSET_OUT_OF_RANGE, reset to earliest) agree.
        "earliest": [6],
        "latest": [10],
        "first_fetched": [6, "r6"],
    });
    assert_eq!(got, expected, "log:\n{}", broker.log());
    broker.terminate();
    let broker = Cohort::start(&data, &[]);
    let again = run(&broker, "again");
    let expected = serde_json::json!({
        "read_back": altered,
        "partitions": {"grow": 2, "kp": 3},
        "earliest": [6],
        "latest": [10],
        "first_fetched": [6, "r6"],
    });
    assert_eq!(again, expected, "log:\n{}", broker.log());
}
