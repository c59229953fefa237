//! The cluster and log-dir admin APIs through real clients, against the files on disk:
//! kafka-python's `describe_log_dirs`, `describe_cluster` and `describe_topic_partitions`,
//! confluent-kafka's `describe_cluster`, `describe_topics` and `list_offsets`, both consumers
//! resuming from committed offsets with leader epochs (validated by OffsetForLeaderEpoch), and
//! `cohort log-dirs --describe`; all again after a restart on the same data. OffsetForLeaderEpoch
//! is also checked with raw requests at every served version, against the epochs in the stored
//! batches, Metadata and ListOffsets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::raw::{batches, RawClient};
use common::{python_script, run, Cohort};
use kafka_protocol::messages::offset_for_leader_epoch_request::{
    OffsetForLeaderPartition, OffsetForLeaderTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use serde_json::{json, Value};

fn run_script(broker: &Cohort, phase: &str) -> Value {
    let out = python_script(
        "admin_cluster.py",
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

/// Bytes of every file under `dir` (0 if it does not exist).
fn bytes_on_disk(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                bytes_on_disk(&e.path())
            } else {
                m.len()
            }
        })
        .sum()
}

/// `{"<topic>-<p>": size}` of the partitions' directories under `data`.
fn sizes(data: &Path, partitions: &[(&str, i32)]) -> BTreeMap<String, u64> {
    partitions
        .iter()
        .map(|(t, p)| {
            (
                format!("{t}-{p}"),
                bytes_on_disk(&data.join("topics").join(format!("{t}-{p}"))),
            )
        })
        .collect()
}

const ALL: &[(&str, i32)] = &[
    ("dirs", 0),
    ("dirs", 1),
    ("dirs", 2),
    ("other", 0),
    ("wide", 0),
    ("wide", 1),
    ("wide", 2),
    ("wide", 3),
    ("wide", 4),
];

/// The log dirs as the script reports them: `{"dirs-0": [size, lag, future]}`.
fn as_reported(disk: &BTreeMap<String, u64>) -> Value {
    Value::Object(
        disk.iter()
            .map(|(k, v)| (k.clone(), json!([v, 0, false])))
            .collect(),
    )
}

fn check_log_dirs(got: &Value, broker: &Cohort) {
    let data = std::path::absolute(&broker.data_dir).unwrap();
    let disk = sizes(&data, ALL);
    assert!(disk["dirs-0"] > 40 * 4, "{disk:?}");
    assert!(disk["dirs-2"] > 7 * 500, "{disk:?}");
    assert!(disk["dirs-1"] < disk["dirs-0"], "{disk:?}");
    let dirs = got["log_dirs"].as_array().unwrap();
    assert_eq!(dirs.len(), 1, "{got}");
    let d = &dirs[0];
    assert_eq!(d["broker"], 1);
    assert_eq!(d["log_dir"], data.to_str().unwrap());
    assert_eq!(d["error_code"], 0);
    let (total, usable) = (
        d["total_bytes"].as_i64().unwrap(),
        d["usable_bytes"].as_i64().unwrap(),
    );
    assert!(total > 0 && usable > 0 && usable <= total, "{d}");
    assert_eq!(
        d["partitions"],
        as_reported(&disk),
        "log:\n{}",
        broker.log()
    );
    let named = &got["log_dirs_named"].as_array().unwrap()[0]["partitions"];
    assert_eq!(
        named,
        &as_reported(&sizes(&data, &[("dirs", 0), ("dirs", 2)]))
    );
}

fn check_cluster_and_offsets(got: &Value, broker: &Cohort) {
    let port = broker.kafka.port();
    let kp = &got["kp_cluster"];
    let ck = &got["ck_cluster"];
    assert_eq!(kp["cluster_id"], ck["cluster_id"]);
    assert!(kp["cluster_id"].as_str().is_some_and(|c| !c.is_empty()));
    assert_eq!(kp["controller_id"], 1);
    assert_eq!(ck["controller_id"], 1);
    assert_eq!(kp["brokers"], json!([[1, "127.0.0.1", port]]));
    assert_eq!(ck["brokers"], json!([[1, "127.0.0.1", port]]));
    assert_eq!(
        ck["operations"],
        json!([
            "ALTER",
            "ALTER_CONFIGS",
            "CLUSTER_ACTION",
            "CREATE",
            "DESCRIBE",
            "DESCRIBE_CONFIGS",
            "IDEMPOTENT_WRITE"
        ])
    );
    let p = |ids: &[i32]| -> Vec<Value> { ids.iter().map(|i| json!([i, 1, 0])).collect() };
    assert_eq!(
        got["dtp_pages"],
        json!([
            [["dirs", 0, p(&[0, 1])]],
            [["dirs", 0, p(&[2])], ["nope", 3, []], ["wide", 0, p(&[0])]],
            [["wide", 0, p(&[1, 2])]],
            [["wide", 0, p(&[3, 4])]],
        ])
    );
    assert_eq!(
        got["ck_topic"],
        json!([[0, 1, [1], [1]], [1, 1, [1], [1]], [2, 1, [1], [1]]])
    );
    assert_eq!(
        got["list_offsets"],
        json!({
            "earliest": [0, 0],
            "latest": [40, 0],
            "max_timestamp": [39, 0],
            "at_ts": [10, 0],
        })
    );
    assert_eq!(got["ck_committed"], json!([25, 0]));
    assert_eq!(
        got["ck_resumed"],
        json!([25, "v025", 0]),
        "log:\n{}",
        broker.log()
    );
    assert_eq!(got["kp_committed"], json!([30, 0]));
    assert_eq!(
        got["kp_resumed"],
        json!([30, "v030", 0]),
        "log:\n{}",
        broker.log()
    );
}

/// `cohort log-dirs --describe` against the same broker: its three lines, the JSON parsed.
fn cohort_log_dirs(broker: &Cohort, extra: &[&str]) -> (i32, String, String) {
    let out = run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .args([
                "log-dirs",
                "--bootstrap-server",
                &broker.bootstrap(),
                "--describe",
            ])
            .args(extra),
        Duration::from_secs(60),
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn check_cohort_log_dirs(broker: &Cohort) {
    let data = std::path::absolute(&broker.data_dir).unwrap();
    let (code, stdout, stderr) = cohort_log_dirs(broker, &["--topic-list", "dirs,other"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0], "Querying brokers for log directories information");
    assert_eq!(
        lines[1],
        "Received log directory information from brokers 1"
    );
    assert!(
        lines[2].starts_with("{\"brokers\":[{\"broker\":1,\"logDirs\":[{\"partitions\":["),
        "{}",
        lines[2]
    );
    assert!(
        lines[2].contains("],\"error\":null,\"logDir\":"),
        "{}",
        lines[2]
    );
    assert!(lines[2].ends_with("}]}],\"version\":1}"), "{}", lines[2]);
    let doc: Value = serde_json::from_str(lines[2]).unwrap();
    let dir = &doc["brokers"][0]["logDirs"][0];
    assert_eq!(dir["logDir"], data.to_str().unwrap());
    assert_eq!(dir["error"], Value::Null);
    let disk = sizes(
        &data,
        &[("dirs", 0), ("dirs", 1), ("dirs", 2), ("other", 0)],
    );
    let printed: BTreeMap<String, u64> = dir["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert_eq!(
                (&p["offsetLag"], &p["isFuture"]),
                (&json!(0), &json!(false))
            );
            (
                p["partition"].as_str().unwrap().to_string(),
                p["size"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(printed, disk);
    let (code, stdout, stderr) = cohort_log_dirs(broker, &["--broker-list", "1,7"]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(
        stderr,
        "ERROR: The given brokers do not exist from --broker-list: 7. Current existent brokers: 1\n"
    );
}

#[test]
fn log_dirs_cluster_topic_partitions_and_epochs_through_real_clients_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &[]);
    let got = run_script(&broker, "first");
    check_log_dirs(&got, &broker);
    check_cluster_and_offsets(&got, &broker);
    check_cohort_log_dirs(&broker);
    broker.terminate();
    let broker = Cohort::start(&data, &[]);
    let again = run_script(&broker, "again");
    check_log_dirs(&again, &broker);
    check_cluster_and_offsets(&again, &broker);
    check_cohort_log_dirs(&broker);
}

fn offset_for_leader_epoch(
    client: &mut RawClient,
    version: i16,
    asks: &[(&str, i32, i32, i32)],
) -> Vec<(i16, i32, i64)> {
    let topics = asks
        .iter()
        .map(|(t, p, current, epoch)| {
            OffsetForLeaderTopic::default()
                .with_topic(TopicName(StrBytes::from_string((*t).into())))
                .with_partitions(vec![OffsetForLeaderPartition::default()
                    .with_partition(*p)
                    .with_current_leader_epoch(*current)
                    .with_leader_epoch(*epoch)])
        })
        .collect();
    let mut req = OffsetForLeaderEpochRequest::default().with_topics(topics);
    if version >= 3 {
        req = req.with_replica_id(BrokerId(-1));
    }
    match client.call(
        ApiKey::OffsetForLeaderEpoch,
        version,
        RequestKind::OffsetForLeaderEpoch(req),
    ) {
        ResponseKind::OffsetForLeaderEpoch(r) => r
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (p.error_code, p.leader_epoch, p.end_offset))
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

/// Every place a partition's leader epoch shows: (Metadata, ListOffsets latest, each fetched
/// batch's partition_leader_epoch).
fn epochs_everywhere(client: &mut RawClient, topic: &str) -> (i32, i32, Vec<i32>) {
    let metadata = match client.call(
        ApiKey::Metadata,
        12,
        RequestKind::Metadata(MetadataRequest::default().with_topics(Some(vec![
            metadata_request::MetadataRequestTopic::default()
                .with_name(Some(TopicName(StrBytes::from_string(topic.into())))),
        ]))),
    ) {
        ResponseKind::Metadata(r) => r.topics[0].partitions[0].leader_epoch,
        other => panic!("{other:?}"),
    };
    let listed = match client.call(
        ApiKey::ListOffsets,
        7,
        RequestKind::ListOffsets(
            ListOffsetsRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(vec![list_offsets_request::ListOffsetsTopic::default()
                    .with_name(TopicName(StrBytes::from_string(topic.into())))
                    .with_partitions(vec![
                        list_offsets_request::ListOffsetsPartition::default()
                            .with_partition_index(0)
                            .with_current_leader_epoch(0)
                            .with_timestamp(-1),
                    ])]),
        ),
    ) {
        ResponseKind::ListOffsets(r) => r.topics[0].partitions[0].leader_epoch,
        other => panic!("{other:?}"),
    };
    let fetched = client.fetch(topic, 0, 0, 0, 1);
    let mut records = fetched.records.unwrap_or_default();
    let mut stored = Vec::new();
    while records.len() >= 61 {
        let len = i32::from_be_bytes(records[8..12].try_into().unwrap()) as usize;
        stored.push(i32::from_be_bytes(records[12..16].try_into().unwrap()));
        records = records.slice(12 + len..);
    }
    (metadata, listed, stored)
}

#[test]
fn offset_for_leader_epoch_answers_the_epochs_the_batches_carry_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &[]);
    let mut client = RawClient::connect(broker.kafka);
    assert_eq!(client.create_topic("e", 2, &[]), 0);
    for i in 0..3 {
        let p = client.produce(
            "e",
            0,
            batches::batch(&[b"a", b"b", b"c", b"d"], 1_000 + i * 10, None),
        );
        assert_eq!(p.error_code, 0);
    }
    let asks: &[(&str, i32, i32, i32)] = &[
        ("e", 0, -1, 0), // a consumer without a current epoch: epoch 0 ends at the log end
        ("e", 0, 0, 0),  // with it
        ("e", 1, 0, 0),  // an empty partition: its epoch starts and ends at 0
        ("e", 0, -1, 3), // newer than any epoch: none qualifies
        ("e", 0, 1, 0),  // the client knows a newer leader epoch
        ("e", 0, -2, 0), // an older one
        ("e", 2, -1, 0), // no such partition
        ("nope", 0, -1, 0),
    ];
    let expected = vec![
        (0, 0, 12),
        (0, 0, 12),
        (0, 0, 0),
        (0, -1, -1),
        (75, -1, -1),
        (74, -1, -1),
        (3, -1, -1),
        (3, -1, -1),
    ];
    for v in 2..=4 {
        assert_eq!(
            offset_for_leader_epoch(&mut client, v, asks),
            expected,
            "v{v}"
        );
    }
    assert_eq!(epochs_everywhere(&mut client, "e"), (0, 0, vec![0, 0, 0]));
    // Unsupported versions are refused by the decoder (Kafka 4.0 has no v0-v1 either).
    let versions = client.api_versions();
    let served = versions
        .api_keys
        .iter()
        .find(|k| k.api_key == ApiKey::OffsetForLeaderEpoch as i16)
        .map(|k| (k.min_version, k.max_version));
    assert_eq!(served, Some((2, 4)));
    drop(client);
    broker.terminate();
    // The epoch cache is rebuilt from the stored batches.
    let broker = Cohort::start(&data, &[]);
    let mut client = RawClient::connect(broker.kafka);
    for v in 2..=4 {
        assert_eq!(
            offset_for_leader_epoch(&mut client, v, asks),
            expected,
            "v{v} after restart"
        );
    }
    assert_eq!(epochs_everywhere(&mut client, "e"), (0, 0, vec![0, 0, 0]));
}
