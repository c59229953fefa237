//! Transactions (issue 13) with real parts: librdkafka's transactional producer committing a
//! consumer group's offsets with send_offsets_to_transaction, aborting, and being fenced by a
//! second producer of the same transactional.id; the COMMIT and ABORT control batches read back
//! from the log; and the requests no client library sends wrong, answered with Kafka's codes
//! and changing nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::group_wire;

use std::time::Duration;

use bytes::Bytes;
use common::raw::RawClient;
use common::{python_script, Cohort};
use group_wire::{create_topic, fetch_all, s};
use kafka_protocol::messages::*;
use protocol::batch::control::{decode_control_batch, ControlType};
use protocol::batch::BatchHeader;
use serde_json::{json, Value};

fn broker(dir: &tempfile::TempDir) -> Cohort {
    Cohort::start_logged(
        &dir.path().join("data"),
        &["--group-initial-rebalance-delay-ms", "100"],
        "info,cohort::group_coordinator=debug,cohort::handlers=debug",
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

/// Every batch of a partition from offset 0: (base offset, header, bytes).
fn batches(c: &mut RawClient, topic: &str) -> Vec<(i64, BatchHeader, Bytes)> {
    let p = c.fetch(topic, 0, 0, 100, 1);
    assert_eq!(p.error_code, 0, "{p:?}");
    let mut records = p.records.unwrap_or_default();
    let mut out = Vec::new();
    while !records.is_empty() {
        let h = BatchHeader::parse(&records).unwrap();
        let one = records.split_to(h.total_bytes());
        out.push((h.base_offset, h, one));
    }
    out
}

#[test]
fn librdkafka_commits_offsets_in_a_transaction_aborts_and_is_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = python_script(
        "txn_confluent.py",
        &[&b.bootstrap()],
        Duration::from_secs(180),
    );
    let got = parse(&out, &b);
    let upper: Vec<String> = (0..10).map(|i| format!("IN-{i}")).collect();
    let aborted: Vec<String> = (0..3).map(|i| format!("aborted-{i}")).collect();
    // Offsets 0-9 the committed records, 10 its COMMIT marker, 11-13 the aborted ones, 14
    // the ABORT marker: a read_uncommitted consumer gets every record, never a marker.
    let mut uncommitted_offsets: Vec<i64> = (0..10).collect();
    uncommitted_offsets.extend(11..14);
    let mut values = upper.clone();
    values.extend(aborted.iter().cloned());
    let mut final_values = values.clone();
    // The zombie's record (offset 15) is aborted by the fence (marker 16); the survivor's
    // (17) committed (marker 18).
    final_values.extend(["zombie".to_string(), "survivor".to_string()]);
    // A read_committed consumer sees only the committed transactions' records.
    let mut committed_final = upper.clone();
    committed_final.push("survivor".to_string());
    let expected = json!({
        "inputs": 10,
        "sent_offsets": [["txn-in", 0, 10]],
        "committed_after_commit": [["txn-in", 0, 10]],
        "committed_after_abort": [["txn-in", 0, 10]],
        "uncommitted_offsets": uncommitted_offsets,
        "uncommitted_values": values,
        "high_watermark": 15,
        "committed_values": upper,
        "zombie_commit": "_FENCED",
        "zombie_fatal": true,
        "survivor_committed": true,
        "final_values": final_values,
        "final_high_watermark": 19,
        "final_committed_values": committed_final,
    });
    assert_eq!(got, expected, "log:\n{}", b.log());

    // The log holds the markers where the offsets skipped: control batches with the
    // transaction's producer, one COMMIT/ABORT record each.
    let mut c = RawClient::connect(b.kafka);
    let all = batches(&mut c, "txn-out");
    let markers: Vec<(i64, ControlType, i64, i16)> = all
        .iter()
        .filter(|(_, h, _)| h.is_control())
        .map(|(base, h, bytes)| {
            assert!(h.is_transactional());
            let m = decode_control_batch(bytes).unwrap();
            (*base, m.kind, m.producer_id, m.producer_epoch)
        })
        .collect();
    let data: Vec<&BatchHeader> = all
        .iter()
        .filter(|(_, h, _)| !h.is_control())
        .map(|(_, h, _)| h)
        .collect();
    assert!(data.iter().all(|h| h.is_transactional()), "{data:?}");
    let kinds: Vec<(i64, ControlType)> = markers.iter().map(|m| (m.0, m.1)).collect();
    assert_eq!(
        kinds,
        [
            (10, ControlType::Commit),
            (14, ControlType::Abort),
            (16, ControlType::Abort),
            (18, ControlType::Commit)
        ],
        "log:\n{}",
        b.log()
    );
    // The first two are txn-1's producer at one epoch; the fence's abort carries the bumped
    // epoch of txn-fence, the survivor's commit the epoch after it.
    assert_eq!((markers[0].2, markers[0].3), (markers[1].2, markers[1].3));
    assert_eq!(markers[2].2, markers[3].2);
    assert!(markers[2].3 < markers[3].3, "{markers:?}");
    let first_data = data[0];
    assert_eq!(
        (first_data.producer_id, first_data.producer_epoch),
        (markers[0].2, markers[0].3)
    );
}

fn tid(v: &str) -> TransactionalId {
    TransactionalId(s(v))
}

fn init(c: &mut RawClient, id: &str, timeout_ms: i32, version: i16) -> InitProducerIdResponse {
    let req = InitProducerIdRequest::default()
        .with_transactional_id(Some(tid(id)))
        .with_transaction_timeout_ms(timeout_ms);
    match c.call(
        ApiKey::InitProducerId,
        version,
        RequestKind::InitProducerId(req),
    ) {
        ResponseKind::InitProducerId(r) => r,
        other => panic!("{other:?}"),
    }
}

fn add_partitions(
    c: &mut RawClient,
    id: &str,
    pid: i64,
    epoch: i16,
    topics: &[(&str, &[i32])],
    version: i16,
) -> Vec<(String, i32, i16)> {
    let req = AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(tid(id))
        .with_v3_and_below_producer_id(ProducerId(pid))
        .with_v3_and_below_producer_epoch(epoch)
        .with_v3_and_below_topics(
            topics
                .iter()
                .map(|(t, ps)| {
                    add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                        .with_name(TopicName(s(t)))
                        .with_partitions(ps.to_vec())
                })
                .collect(),
        );
    match c.call(
        ApiKey::AddPartitionsToTxn,
        version,
        RequestKind::AddPartitionsToTxn(req),
    ) {
        ResponseKind::AddPartitionsToTxn(r) => {
            let mut out: Vec<(String, i32, i16)> = r
                .results_by_topic_v3_and_below
                .iter()
                .flat_map(|t| {
                    t.results_by_partition.iter().map(|p| {
                        (
                            t.name.to_string(),
                            p.partition_index,
                            p.partition_error_code,
                        )
                    })
                })
                .collect();
            out.sort();
            out
        }
        other => panic!("{other:?}"),
    }
}

fn add_offsets(c: &mut RawClient, id: &str, pid: i64, epoch: i16, group: &str, v: i16) -> i16 {
    let req = AddOffsetsToTxnRequest::default()
        .with_transactional_id(tid(id))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_group_id(GroupId(s(group)));
    match c.call(
        ApiKey::AddOffsetsToTxn,
        v,
        RequestKind::AddOffsetsToTxn(req),
    ) {
        ResponseKind::AddOffsetsToTxn(r) => r.error_code,
        other => panic!("{other:?}"),
    }
}

fn end_txn(c: &mut RawClient, id: &str, pid: i64, epoch: i16, commit: bool, v: i16) -> i16 {
    let req = EndTxnRequest::default()
        .with_transactional_id(tid(id))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_committed(commit);
    match c.call(ApiKey::EndTxn, v, RequestKind::EndTxn(req)) {
        ResponseKind::EndTxn(r) => r.error_code,
        other => panic!("{other:?}"),
    }
}

fn txn_commit(c: &mut RawClient, id: &str, pid: i64, epoch: i16, group: &str, offset: i64) -> i16 {
    let req = TxnOffsetCommitRequest::default()
        .with_transactional_id(tid(id))
        .with_group_id(GroupId(s(group)))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_generation_id(-1)
        .with_member_id(s(""))
        .with_topics(vec![
            txn_offset_commit_request::TxnOffsetCommitRequestTopic::default()
                .with_name(TopicName(s("raw-t")))
                .with_partitions(vec![
                    txn_offset_commit_request::TxnOffsetCommitRequestPartition::default()
                        .with_partition_index(0)
                        .with_committed_offset(offset)
                        .with_committed_leader_epoch(-1),
                ]),
        ]);
    match c.call(
        ApiKey::TxnOffsetCommit,
        3,
        RequestKind::TxnOffsetCommit(req),
    ) {
        ResponseKind::TxnOffsetCommit(r) => r.topics[0].partitions[0].error_code,
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_transaction_requests_get_kafkas_codes_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let mut c = RawClient::connect(b.kafka);
    create_topic(&mut c, "raw-t", 2);

    // FindCoordinator for a transactional id names this node, batched (v4) or not (v1).
    let req = FindCoordinatorRequest::default()
        .with_key_type(1)
        .with_coordinator_keys(vec![s("raw-1"), s("raw-2")]);
    match c.call(
        ApiKey::FindCoordinator,
        4,
        RequestKind::FindCoordinator(req),
    ) {
        ResponseKind::FindCoordinator(r) => {
            assert_eq!(r.coordinators.len(), 2);
            for k in &r.coordinators {
                assert_eq!(
                    (k.error_code, k.port),
                    (0, i32::from(b.kafka.port())),
                    "{k:?}"
                );
            }
        }
        other => panic!("{other:?}"),
    }
    let req = FindCoordinatorRequest::default()
        .with_key_type(1)
        .with_key(s("raw-1"));
    match c.call(
        ApiKey::FindCoordinator,
        1,
        RequestKind::FindCoordinator(req),
    ) {
        ResponseKind::FindCoordinator(r) => {
            assert_eq!((r.error_code, r.port), (0, i32::from(b.kafka.port())))
        }
        other => panic!("{other:?}"),
    }

    // A timeout above transaction.max.timeout.ms (15 min): INVALID_TRANSACTION_TIMEOUT.
    let r = init(&mut c, "raw-1", 15 * 60 * 1000 + 1, 4);
    assert_eq!((r.error_code, r.producer_id.0), (50, -1));
    let r = init(&mut c, "raw-1", 60_000, 4);
    assert_eq!((r.error_code, r.producer_epoch), (0, 0));
    let (pid, epoch) = (r.producer_id.0, r.producer_epoch);
    assert!(pid >= 0);

    // EndTxn with no transaction open: INVALID_TXN_STATE.
    assert_eq!(end_txn(&mut c, "raw-1", pid, epoch, true, 3), 48);
    assert_eq!(end_txn(&mut c, "raw-1", pid, epoch, false, 0), 48);
    // TxnOffsetCommit for a group the transaction did not add: INVALID_TXN_STATE.
    assert_eq!(txn_commit(&mut c, "raw-1", pid, epoch, "raw-g", 5), 48);
    // AddPartitionsToTxn naming an unknown partition: it fails alone, the others are
    // OPERATION_NOT_ATTEMPTED, and nothing is added.
    let got = add_partitions(
        &mut c,
        "raw-1",
        pid,
        epoch,
        &[("raw-t", &[0, 7]), ("nope", &[0])],
        3,
    );
    assert_eq!(
        got,
        [
            ("nope".to_string(), 0, 3),
            ("raw-t".to_string(), 0, 55),
            ("raw-t".to_string(), 7, 3)
        ]
    );
    assert_eq!(end_txn(&mut c, "raw-1", pid, epoch, true, 3), 48);
    // A wrong epoch: PRODUCER_FENCED (v2+), INVALID_PRODUCER_EPOCH before; another producer
    // id: INVALID_PRODUCER_ID_MAPPING; an unknown transactional id too.
    let got = add_partitions(&mut c, "raw-1", pid, epoch + 1, &[("raw-t", &[0])], 3);
    assert_eq!(got, [("raw-t".to_string(), 0, 90)]);
    let got = add_partitions(&mut c, "raw-1", pid, epoch + 1, &[("raw-t", &[0])], 1);
    assert_eq!(got, [("raw-t".to_string(), 0, 47)]);
    assert_eq!(add_offsets(&mut c, "raw-1", pid, epoch + 1, "raw-g", 3), 90);
    assert_eq!(add_offsets(&mut c, "raw-1", pid, epoch + 1, "raw-g", 1), 47);
    assert_eq!(add_offsets(&mut c, "raw-1", pid + 1, epoch, "raw-g", 3), 49);
    assert_eq!(end_txn(&mut c, "raw-1", pid, epoch + 1, true, 3), 90);
    assert_eq!(end_txn(&mut c, "raw-1", pid, epoch + 1, true, 1), 47);
    assert_eq!(end_txn(&mut c, "nobody", pid, epoch, true, 3), 49);
    assert_eq!(txn_commit(&mut c, "raw-1", pid, epoch + 1, "raw-g", 5), 90);
    // Nothing changed: the group has no offset, and the partitions' logs are empty.
    assert_eq!(fetch_all(&mut c, "raw-g"), []);
    assert!(batches(&mut c, "raw-t").is_empty());

    // The same producer, right: a transaction with the partition and the group commits, its
    // offset becomes the group's and each partition holds one COMMIT marker.
    assert_eq!(
        add_partitions(&mut c, "raw-1", pid, epoch, &[("raw-t", &[0, 1])], 3),
        [("raw-t".to_string(), 0, 0), ("raw-t".to_string(), 1, 0)]
    );
    assert_eq!(add_offsets(&mut c, "raw-1", pid, epoch, "raw-g", 3), 0);
    assert_eq!(txn_commit(&mut c, "raw-1", pid, epoch, "raw-g", 5), 0);
    assert_eq!(fetch_all(&mut c, "raw-g"), [], "pending until the marker");
    assert_eq!(end_txn(&mut c, "raw-1", pid, epoch, true, 3), 0);
    // EndTxn is answered once the markers are written and the completion applied (decision
    // 0152): the offset is the group's and the markers are in the logs at once.
    assert_eq!(fetch_all(&mut c, "raw-g"), [("raw-t".to_string(), 0, 5)]);
    let all = batches(&mut c, "raw-t");
    assert_eq!(all.len(), 1, "{all:?}");
    let m = decode_control_batch(&all[0].2).unwrap();
    assert_eq!(
        (m.kind, m.producer_id, m.producer_epoch),
        (ControlType::Commit, pid, epoch)
    );
    assert!(m.coordinator_epoch > 0, "the Raft term: {m:?}");
    // Markers of a wrong epoch: an older coordinator epoch than the partition's last marker
    // of the producer is TRANSACTION_COORDINATOR_FENCED (decision 0153), an older producer
    // epoch INVALID_PRODUCER_EPOCH; neither writes anything.
    let stale = |producer_epoch: i16, coordinator_epoch: i32| {
        WriteTxnMarkersRequest::default().with_markers(vec![
            write_txn_markers_request::WritableTxnMarker::default()
                .with_producer_id(ProducerId(pid))
                .with_producer_epoch(producer_epoch)
                .with_transaction_result(false)
                .with_coordinator_epoch(coordinator_epoch)
                .with_topics(vec![
                    write_txn_markers_request::WritableTxnMarkerTopic::default()
                        .with_name(TopicName(s("raw-t")))
                        .with_partition_indexes(vec![0]),
                ]),
        ])
    };
    for (producer_epoch, coordinator_epoch, code) in [
        (epoch, m.coordinator_epoch - 1, 52),
        (epoch - 1, m.coordinator_epoch, 47),
    ] {
        match c.call(
            ApiKey::WriteTxnMarkers,
            1,
            RequestKind::WriteTxnMarkers(stale(producer_epoch, coordinator_epoch)),
        ) {
            ResponseKind::WriteTxnMarkers(r) => assert_eq!(
                r.markers[0].topics[0].partitions[0].error_code, code,
                "{r:?}"
            ),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(batches(&mut c, "raw-t").len(), 1, "nothing was written");
    // Committing again after completion is Kafka's retry: NONE; aborting it is not.
    assert_eq!(end_txn(&mut c, "raw-1", pid, epoch, true, 3), 0);
    assert_eq!(end_txn(&mut c, "raw-1", pid, epoch, false, 3), 48);

    // A second InitProducerId bumps the epoch; the old epoch is fenced from then on.
    let r = init(&mut c, "raw-1", 60_000, 4);
    assert_eq!(
        (r.error_code, r.producer_id.0, r.producer_epoch),
        (0, pid, epoch + 1)
    );
    assert_eq!(add_offsets(&mut c, "raw-1", pid, epoch, "raw-g", 3), 90);
}

#[test]
fn kafkajs_transaction_sends_and_commits_offsets_then_aborts() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let out = common::node_script(
        "txn_kafkajs.js",
        &[&b.bootstrap()],
        Duration::from_secs(120),
    );
    let got = parse(&out, &b);
    // Offsets 0-4 committed, 5 its marker, 6 the aborted record (read_uncommitted sees it), 7
    // the abort marker; the group keeps the committed transaction's offset only.
    let expected = json!({
        "group_offsets": [["kjs-txn-in", 0, "5"]],
        "seen": [[0, "v-0"], [1, "v-1"], [2, "v-2"], [3, "v-3"], [4, "v-4"], [6, "gone"]],
    });
    assert_eq!(got, expected, "log:\n{}", b.log());
}

/// A transactional Produce of `(pid, epoch, first sequence)` with `transactional.id` `id` to
/// `topic`-`partition` at `version`: (error code, base offset).
fn txn_produce(
    c: &mut RawClient,
    id: &str,
    (topic, partition): (&str, i32),
    producer: (i64, i16, i32),
    version: i16,
) -> (i16, i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let records = common::raw::batches::transactional_batch(&[b"v"], now, producer);
    let req = ProduceRequest::default()
        .with_transactional_id(Some(tid(id)))
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![produce_request::TopicProduceData::default()
            .with_name(TopicName(s(topic)))
            .with_partition_data(vec![
                produce_request::PartitionProduceData::default()
                    .with_index(partition)
                    .with_records(Some(records)),
            ])]);
    match c.call(ApiKey::Produce, version, RequestKind::Produce(req)) {
        ResponseKind::Produce(mut r) => {
            let p = r.responses.remove(0).partition_responses.remove(0);
            (p.error_code, p.base_offset)
        }
        other => panic!("{other:?}"),
    }
}

/// KIP-890 part 1 (decision 0165): the first transactional batch of a transaction in a
/// partition is written only if the coordinator registered the partition in the producer's
/// ongoing transaction at that producer id and epoch; anything else gets Kafka's code and
/// writes nothing.
#[test]
fn transactional_batches_are_verified_against_the_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let mut c = RawClient::connect(b.kafka);
    create_topic(&mut c, "ver-t", 2);
    let r = init(&mut c, "ver-1", 60_000, 4);
    assert_eq!(r.error_code, 0);
    // A second InitProducerId bumps the epoch, so an older one exists to be stale.
    let r = init(&mut c, "ver-1", 60_000, 4);
    assert_eq!(r.error_code, 0);
    let (pid, epoch) = (r.producer_id.0, r.producer_epoch);
    assert_eq!(epoch, 1);
    let end = |c: &mut RawClient, p: i32| c.list_offset("ver-t", p, -1).1;

    // Nothing added yet: Produce up to v10 gets INVALID_TXN_STATE, v11+ TRANSACTION_ABORTABLE.
    assert_eq!(
        txn_produce(&mut c, "ver-1", ("ver-t", 0), (pid, epoch, 0), 9).0,
        48
    );
    assert_eq!(
        txn_produce(&mut c, "ver-1", ("ver-t", 0), (pid, epoch, 0), 11).0,
        120
    );
    assert_eq!(
        add_partitions(&mut c, "ver-1", pid, epoch, &[("ver-t", &[0])], 3),
        [("ver-t".to_string(), 0, 0)]
    );
    // Partition 1 was not added to the transaction: refused, nothing written there.
    assert_eq!(
        txn_produce(&mut c, "ver-1", ("ver-t", 1), (pid, epoch, 0), 9).0,
        48
    );
    assert_eq!(
        txn_produce(&mut c, "ver-1", ("ver-t", 1), (pid, epoch, 0), 12).0,
        120
    );
    // A stale epoch on the added partition: INVALID_PRODUCER_EPOCH (Kafka turns the
    // coordinator's PRODUCER_FENCED into it for the producer); another producer id:
    // INVALID_PRODUCER_ID_MAPPING; an unknown transactional id too.
    assert_eq!(
        txn_produce(&mut c, "ver-1", ("ver-t", 0), (pid, epoch - 1, 0), 9).0,
        47
    );
    assert_eq!(
        txn_produce(&mut c, "ver-1", ("ver-t", 0), (pid + 1, epoch, 0), 9).0,
        49
    );
    assert_eq!(
        txn_produce(&mut c, "nobody", ("ver-t", 0), (pid, epoch, 0), 9).0,
        49
    );
    assert_eq!((end(&mut c, 0), end(&mut c, 1)), (0, 0), "nothing written");
    let p1 = c.fetch("ver-t", 1, 0, 0, 0);
    assert_eq!(p1.error_code, 0);
    assert_eq!(p1.high_watermark, 0);
    assert!(
        p1.records.as_ref().is_none_or(|r| r.is_empty()),
        "a read_uncommitted fetch sees nothing: {p1:?}"
    );

    // The registered producer on the added partition: written; its next batch in the same
    // transaction needs no new verification.
    assert_eq!(
        txn_produce(&mut c, "ver-1", ("ver-t", 0), (pid, epoch, 0), 9),
        (0, 0)
    );
    assert_eq!(
        txn_produce(&mut c, "ver-1", ("ver-t", 0), (pid, epoch, 1), 11),
        (0, 1)
    );
    assert_eq!(end_txn(&mut c, "ver-1", pid, epoch, true, 3), 0);
    assert_eq!(end(&mut c, 0), 3, "two records and the COMMIT marker");
    // After the marker, a batch that would open a new transaction the producer did not add
    // the partition to is refused again.
    assert_eq!(
        txn_produce(&mut c, "ver-1", ("ver-t", 0), (pid, epoch, 2), 9).0,
        48
    );
    assert_eq!((end(&mut c, 0), end(&mut c, 1)), (3, 0));
    let p1 = c.fetch("ver-t", 1, 0, 0, 0);
    assert!(p1.records.as_ref().is_none_or(|r| r.is_empty()), "{p1:?}");
}
