//! The transaction data plane over real TCP (issue 13, item 3):
//!
//! - against the `cohort` binary: transactional batches open a transaction at their first
//!   offset, the last stable offset holds read_committed fetches and ListOffsets back, Kafka's
//!   refusals, and a SIGKILL restart keeps it all (producer state rebuilt from the
//!   `.snapshot` and `.txnindex` files and the log);
//! - against an in-process broker whose markers the test writes the way the marker writer
//!   does: confluent-kafka with `isolation.level=read_committed` never delivers aborted
//!   records, stops at an open transaction and goes on once it commits; read_uncommitted
//!   delivers everything.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use bytes::Bytes;
use common::raw::{batches, RawClient};
use common::Cohort;
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::fetch_response::PartitionData;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    AddPartitionsToTxnRequest, ApiKey, BrokerId, FetchRequest, InitProducerIdRequest,
    ListOffsetsRequest, ProduceRequest, ProducerId, RequestKind, ResponseKind, TopicName,
    TransactionalId,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::RecordBatchDecoder;
use protocol::batch::control::{encode_control_batch, ControlMarker, ControlType};

/// The wall clock: records carry it, so that retention (7 days by default) keeps them.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A batch of `n` records of producer `(pid, epoch, first sequence)`, values `pid/sequence`.
fn batch(pid: i64, epoch: i16, seq0: i32, n: usize, transactional: bool) -> Bytes {
    let values: Vec<String> = (0..n)
        .map(|i| format!("{pid}/{}", seq0 + i as i32))
        .collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    values_batch(Some((pid, epoch, seq0)), &values, transactional)
}

/// Produce v9 with `transactional_id`: (error code, base offset).
fn produce(c: &mut RawClient, txn: Option<&str>, records: Bytes) -> (i16, i64) {
    let req = ProduceRequest::default()
        .with_transactional_id(txn.map(|t| TransactionalId(StrBytes::from_string(t.into()))))
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(StrBytes::from_static_str("t")))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    match c.call(ApiKey::Produce, 9, RequestKind::Produce(req)) {
        ResponseKind::Produce(mut r) => {
            let p = r.responses.remove(0).partition_responses.remove(0);
            (p.error_code, p.base_offset)
        }
        other => panic!("{other:?}"),
    }
}

/// InitProducerId for `transactional.id` `id` (`bumps` more times, so the epoch is `bumps`),
/// then AddPartitionsToTxn of `t-0`: the producer id and epoch the coordinator registered, which
/// transactional batches must carry (KIP-890 part 1, decision 0165). The transaction timeout is
/// the largest allowed, so no timeout abort lands inside a test.
fn register(c: &mut RawClient, id: &str, bumps: usize) -> (i64, i16) {
    let tid = TransactionalId(StrBytes::from_string(id.into()));
    let mut registered = (-1, -1);
    for _ in 0..=bumps {
        let req = InitProducerIdRequest::default()
            .with_transactional_id(Some(tid.clone()))
            .with_transaction_timeout_ms(15 * 60 * 1000);
        match c.call(ApiKey::InitProducerId, 4, RequestKind::InitProducerId(req)) {
            ResponseKind::InitProducerId(r) => {
                assert_eq!(r.error_code, 0, "{r:?}");
                registered = (r.producer_id.0, r.producer_epoch);
            }
            other => panic!("{other:?}"),
        }
    }
    let req = AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(tid)
        .with_v3_and_below_producer_id(ProducerId(registered.0))
        .with_v3_and_below_producer_epoch(registered.1)
        .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
            .with_name(TopicName(StrBytes::from_static_str("t")))
            .with_partitions(vec![0])]);
    match c.call(
        ApiKey::AddPartitionsToTxn,
        3,
        RequestKind::AddPartitionsToTxn(req),
    ) {
        ResponseKind::AddPartitionsToTxn(r) => {
            let code =
                r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code;
            assert_eq!(code, 0, "{r:?}");
        }
        other => panic!("{other:?}"),
    }
    registered
}

/// Fetch v12 of `t-0` from `offset` at `isolation_level`.
fn fetch(c: &mut RawClient, offset: i64, isolation_level: i8) -> PartitionData {
    let req = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_min_bytes(0)
        .with_max_bytes(1 << 20)
        .with_isolation_level(isolation_level)
        .with_session_epoch(-1)
        .with_topics(vec![FetchTopic::default()
            .with_topic(TopicName(StrBytes::from_static_str("t")))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])]);
    match c.call(ApiKey::Fetch, 12, RequestKind::Fetch(req)) {
        ResponseKind::Fetch(mut r) => r.responses.remove(0).partitions.remove(0),
        other => panic!("{other:?}"),
    }
}

/// The offsets of the records of a fetch answer.
fn offsets(p: &PartitionData) -> Vec<i64> {
    let mut bytes = p.records.clone().unwrap_or_default();
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let set = RecordBatchDecoder::decode(&mut bytes).unwrap();
        out.extend(set.records.iter().map(|r| r.offset));
    }
    out
}

/// ListOffsets v7 latest of `t-0` at `isolation_level`.
fn latest(c: &mut RawClient, isolation_level: i8) -> i64 {
    let req = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_isolation_level(isolation_level)
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(TopicName(StrBytes::from_static_str("t")))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(0)
                .with_timestamp(-1)])]);
    match c.call(ApiKey::ListOffsets, 7, RequestKind::ListOffsets(req)) {
        ResponseKind::ListOffsets(r) => {
            let p = &r.topics[0].partitions[0];
            assert_eq!(p.error_code, 0);
            p.offset
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_open_transaction_holds_read_committed_back_across_a_sigkill_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &[]);
    let mut c = RawClient::connect(broker.kafka);
    // One segment per produce (segment.ms=1, produces more than 1 ms apart or not): rolls
    // write .txnindex files and snapshots.
    assert_eq!(c.create_topic("t", 1, &[("segment.ms", "1")]), 0);
    let (pid, epoch) = register(&mut c, "tx", 1);
    assert_eq!(epoch, 1);
    assert_eq!(produce(&mut c, None, batch(77, 0, 0, 3, false)), (0, 0));
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(
        produce(&mut c, Some("tx"), batch(pid, epoch, 0, 2, true)),
        (0, 3)
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(produce(&mut c, None, batch(78, 0, 0, 2, false)), (0, 5));
    // A transactional batch without a transactional id: Kafka refuses the whole request.
    assert_eq!(
        produce(&mut c, None, batch(pid, epoch, 2, 1, true)).0,
        53,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    );
    // A zombie of an older epoch.
    assert_eq!(
        produce(&mut c, Some("tx"), batch(pid, epoch - 1, 0, 1, true)).0,
        47,
        "INVALID_PRODUCER_EPOCH"
    );
    // A plain idempotent write of the producer inside its open transaction.
    assert_eq!(
        produce(&mut c, None, batch(pid, epoch, 2, 1, false)).0,
        48,
        "INVALID_TXN_STATE"
    );

    let check = |c: &mut RawClient| {
        let committed = fetch(c, 0, 1);
        assert_eq!(committed.error_code, 0);
        assert_eq!(
            (committed.high_watermark, committed.last_stable_offset),
            (7, 3)
        );
        assert_eq!(offsets(&committed), vec![0, 1, 2], "stops at the LSO");
        assert_eq!(committed.aborted_transactions, Some(Vec::new()));
        let past = fetch(c, 3, 1);
        assert_eq!((past.error_code, offsets(&past)), (0, vec![]));
        let uncommitted = fetch(c, 0, 0);
        assert_eq!(offsets(&uncommitted), (0..7).collect::<Vec<_>>());
        assert_eq!(uncommitted.last_stable_offset, 3);
        assert_eq!(uncommitted.aborted_transactions, None);
        assert_eq!((latest(c, 0), latest(c, 1)), (7, 3));
    };
    check(&mut c);

    broker.kill9();
    let broker = Cohort::start(&data, &[]);
    let mut c = RawClient::connect(broker.kafka);
    check(&mut c);
    // The producer state survived too: its next batch continues the transaction's sequence,
    // a gap is refused.
    assert_eq!(
        produce(&mut c, Some("tx"), batch(pid, epoch, 5, 1, true)).0,
        45,
        "OUT_OF_ORDER_SEQUENCE_NUMBER"
    );
    assert_eq!(
        produce(&mut c, Some("tx"), batch(pid, epoch, 2, 1, true)),
        (0, 7)
    );
    assert_eq!(latest(&mut c, 1), 3, "still open");
    let txn_dir = data.join("topics/t-0/txn");
    let names: Vec<String> = std::fs::read_dir(&txn_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.ends_with(".txnindex")),
        "sealed segments have their index: {names:?}"
    );
}

/// A batch of `values` of producer `(pid, epoch, first sequence)` (`None`: a plain batch).
fn values_batch(producer: Option<(i64, i16, i32)>, values: &[&str], transactional: bool) -> Bytes {
    let values: Vec<&[u8]> = values.iter().map(|v| v.as_bytes()).collect();
    match (producer, transactional) {
        (Some(p), true) => batches::transactional_batch(&values, now_ms(), p),
        _ => batches::batch(&values, now_ms(), producer),
    }
}

/// confluent-kafka reads `t-0` from the beginning at `isolation`: the values it delivers.
fn client_reads(bootstrap: &str, isolation: &str) -> Vec<String> {
    let out = common::python_script(
        "txn_read.py",
        &[bootstrap, "t", isolation, "--idle", "3"],
        std::time::Duration::from_secs(90),
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["errors"], serde_json::json!([]), "{got}");
    got["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// An in-process broker (its data plane reachable, so the test can write markers the way the
/// marker writer does), produced to over TCP and read by confluent-kafka over TCP.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn confluent_kafka_read_committed_skips_aborted_and_stops_at_open_transactions() {
    #[derive(clap::Parser)]
    struct Serve {
        #[command(flatten)]
        args: cohort::config::ServeArgs,
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let serve = <Serve as clap::Parser>::try_parse_from([
        "serve",
        "--data-dir",
        data.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--http",
        "127.0.0.1:0",
    ])
    .unwrap();
    let server = cohort::server::Server::start(serve.args).await.unwrap();
    let addr = server.kafka_addr();
    let bootstrap = addr.to_string();
    let produce_all = |batches: Vec<(Option<&'static str>, Bytes)>| {
        tokio::task::spawn_blocking(move || {
            let mut c = RawClient::connect(addr);
            batches
                .into_iter()
                .map(|(txn, b)| produce(&mut c, txn, b))
                .collect::<Vec<_>>()
        })
    };
    // Three transactional producers the coordinator registers with `t-0` in their
    // transactions; the test then writes their markers itself.
    let (p1, p2, p3) = tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        assert_eq!(c.create_topic("t", 1, &[]), 0);
        (
            register(&mut c, "t1", 0),
            register(&mut c, "t2", 0),
            register(&mut c, "t3", 0),
        )
    })
    .await
    .unwrap();
    let producer = |(pid, epoch): (i64, i16), seq: i32| Some((pid, epoch, seq));
    let written = produce_all(vec![
        (None, values_batch(None, &["p0"], false)),
        (
            Some("t1"),
            values_batch(producer(p1, 0), &["c1a", "c1b"], true),
        ),
        (Some("t2"), values_batch(producer(p2, 0), &["a2a"], true)),
        (None, values_batch(None, &["p1"], false)),
        (Some("t2"), values_batch(producer(p2, 1), &["a2b"], true)),
    ])
    .await
    .unwrap();
    assert!(written.iter().all(|(code, _)| *code == 0), "{written:?}");
    let partition = server.broker().data.partition("t", 0).await.unwrap();
    let mark = |(pid, epoch): (i64, i16), kind: ControlType| {
        let p = std::sync::Arc::clone(&partition);
        tokio::task::spawn_blocking(move || {
            let m = encode_control_batch(&ControlMarker {
                kind,
                producer_id: pid,
                producer_epoch: epoch,
                coordinator_epoch: 0,
                timestamp_ms: now_ms(),
            });
            p.append_marker(&m, now_ms()).unwrap().base_offset
        })
    };
    mark(p1, ControlType::Commit).await.unwrap();
    mark(p2, ControlType::Abort).await.unwrap();
    let written = produce_all(vec![
        (None, values_batch(None, &["p2"], false)),
        (Some("t3"), values_batch(producer(p3, 0), &["o3"], true)),
        (None, values_batch(None, &["p3"], false)),
    ])
    .await
    .unwrap();
    assert!(written.iter().all(|(code, _)| *code == 0), "{written:?}");

    let b = bootstrap.clone();
    let (committed, uncommitted) = tokio::task::spawn_blocking(move || {
        (
            client_reads(&b, "read_committed"),
            client_reads(&b, "read_uncommitted"),
        )
    })
    .await
    .unwrap();
    assert_eq!(
        committed,
        ["p0", "c1a", "c1b", "p1", "p2"],
        "committed only, nothing from the open transaction on"
    );
    assert_eq!(
        uncommitted,
        ["p0", "c1a", "c1b", "a2a", "p1", "a2b", "p2", "o3", "p3"]
    );
    mark(p3, ControlType::Commit).await.unwrap();
    let b = bootstrap.clone();
    let committed = tokio::task::spawn_blocking(move || client_reads(&b, "read_committed"))
        .await
        .unwrap();
    assert_eq!(committed, ["p0", "c1a", "c1b", "p1", "p2", "o3", "p3"]);
    server.shutdown().await;
}
