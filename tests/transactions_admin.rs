//! The transaction operator surface (issue 13 item 5, decisions 0143–0145) with real parts:
//! DescribeTransactions, ListTransactions and DescribeProducers answered with Kafka's codes
//! over a raw socket, and a librdkafka transactional producer SIGKILLed by PID
//! mid-transaction — the coordinator aborts it when its `transaction.timeout.ms` passes,
//! read_committed consumers move past it, and `/metrics` counts the timeout and shows the LSO
//! lag it caused while it hung.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::metrics::{scrape, scrape_until};
use common::raw::{batches, RawClient};
use common::{python_script, Cohort};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use serde_json::Value;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn broker(dir: &tempfile::TempDir) -> Cohort {
    Cohort::start_logged(
        &dir.path().join("data"),
        &["--group-initial-rebalance-delay-ms", "100"],
        "info,cohort::group_coordinator=debug,cohort::handlers=debug",
    )
}

fn describe_txns(
    c: &mut RawClient,
    ids: &[&str],
) -> Vec<describe_transactions_response::TransactionState> {
    let req = DescribeTransactionsRequest::default()
        .with_transactional_ids(ids.iter().map(|i| TransactionalId(s(i))).collect());
    match c.call(
        ApiKey::DescribeTransactions,
        0,
        RequestKind::DescribeTransactions(req),
    ) {
        ResponseKind::DescribeTransactions(r) => r.transaction_states,
        other => panic!("{other:?}"),
    }
}

/// ListTransactions: (error code, unknown state filters, sorted (id, producer id, state)).
fn list_txns(
    c: &mut RawClient,
    version: i16,
    states: &[&str],
    producers: &[i64],
    duration_ms: i64,
) -> (i16, Vec<String>, Vec<(String, i64, String)>) {
    let mut req = ListTransactionsRequest::default()
        .with_state_filters(states.iter().map(|v| s(v)).collect())
        .with_producer_id_filters(producers.iter().map(|p| ProducerId(*p)).collect());
    if version >= 1 {
        req = req.with_duration_filter(duration_ms);
    }
    match c.call(
        ApiKey::ListTransactions,
        version,
        RequestKind::ListTransactions(req),
    ) {
        ResponseKind::ListTransactions(r) => {
            let mut listed: Vec<(String, i64, String)> = r
                .transaction_states
                .iter()
                .map(|t| {
                    (
                        t.transactional_id.to_string(),
                        t.producer_id.0,
                        t.transaction_state.to_string(),
                    )
                })
                .collect();
            listed.sort();
            (
                r.error_code,
                r.unknown_state_filters
                    .iter()
                    .map(|v| v.to_string())
                    .collect(),
                listed,
            )
        }
        other => panic!("{other:?}"),
    }
}

fn describe_producers(
    c: &mut RawClient,
    topic: &str,
    partitions: &[i32],
) -> Vec<describe_producers_response::PartitionResponse> {
    let req = DescribeProducersRequest::default().with_topics(vec![
        describe_producers_request::TopicRequest::default()
            .with_name(TopicName(s(topic)))
            .with_partition_indexes(partitions.to_vec()),
    ]);
    match c.call(
        ApiKey::DescribeProducers,
        0,
        RequestKind::DescribeProducers(req),
    ) {
        ResponseKind::DescribeProducers(mut r) => {
            assert_eq!(r.topics.len(), 1);
            assert_eq!(r.topics[0].name.to_string(), topic);
            r.topics.remove(0).partitions
        }
        other => panic!("{other:?}"),
    }
}

fn init(c: &mut RawClient, id: &str, timeout_ms: i32) -> (i64, i16) {
    let req = InitProducerIdRequest::default()
        .with_transactional_id(Some(TransactionalId(s(id))))
        .with_transaction_timeout_ms(timeout_ms);
    match c.call(ApiKey::InitProducerId, 4, RequestKind::InitProducerId(req)) {
        ResponseKind::InitProducerId(r) => {
            assert_eq!(r.error_code, 0, "{r:?}");
            (r.producer_id.0, r.producer_epoch)
        }
        other => panic!("{other:?}"),
    }
}

fn add_partitions(c: &mut RawClient, id: &str, pid: i64, epoch: i16, topic: &str, ps: &[i32]) {
    let req = AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(TransactionalId(s(id)))
        .with_v3_and_below_producer_id(ProducerId(pid))
        .with_v3_and_below_producer_epoch(epoch)
        .with_v3_and_below_topics(vec![
            add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                .with_name(TopicName(s(topic)))
                .with_partitions(ps.to_vec()),
        ]);
    match c.call(
        ApiKey::AddPartitionsToTxn,
        3,
        RequestKind::AddPartitionsToTxn(req),
    ) {
        ResponseKind::AddPartitionsToTxn(r) => {
            for t in &r.results_by_topic_v3_and_below {
                for p in &t.results_by_partition {
                    assert_eq!(p.partition_error_code, 0, "{r:?}");
                }
            }
        }
        other => panic!("{other:?}"),
    }
}

fn end_txn(c: &mut RawClient, id: &str, pid: i64, epoch: i16, commit: bool) -> i16 {
    let req = EndTxnRequest::default()
        .with_transactional_id(TransactionalId(s(id)))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_committed(commit);
    match c.call(ApiKey::EndTxn, 3, RequestKind::EndTxn(req)) {
        ResponseKind::EndTxn(r) => r.error_code,
        other => panic!("{other:?}"),
    }
}

/// Polls DescribeTransactions until `id` is in `state`.
fn wait_state(
    c: &mut RawClient,
    id: &str,
    state: &str,
    limit: Duration,
    broker: &Cohort,
) -> describe_transactions_response::TransactionState {
    let deadline = Instant::now() + limit;
    loop {
        let mut got = describe_txns(c, &[id]);
        let t = got.remove(0);
        if t.error_code == 0 && t.transaction_state.as_str() == state {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "{id} not {state} within {limit:?}: {t:?}\nlog:\n{}",
            broker.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn operator_apis_answer_kafkas_codes() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let mut c = RawClient::connect(b.kafka);
    assert_eq!(c.create_topic("adm-t", 2, &[]), 0);

    // Advertised at the versions served, and no further.
    let versions = c.api_versions();
    let range = |k: ApiKey| {
        versions
            .api_keys
            .iter()
            .find(|a| a.api_key == k as i16)
            .map(|a| (a.min_version, a.max_version))
    };
    assert_eq!(range(ApiKey::DescribeTransactions), Some((0, 0)));
    assert_eq!(range(ApiKey::ListTransactions), Some((0, 1)));
    assert_eq!(range(ApiKey::DescribeProducers), Some((0, 0)));

    // Nothing yet: an unknown id is TRANSACTIONAL_ID_NOT_FOUND, the list is empty, and a
    // state filter naming no state comes back as unknown.
    let got = describe_txns(&mut c, &["nobody"]);
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].error_code, got[0].transactional_id.to_string()),
        (105, "nobody".to_string())
    );
    assert_eq!(list_txns(&mut c, 0, &[], &[], -1), (0, vec![], vec![]));
    assert_eq!(
        list_txns(&mut c, 1, &["Ongoing", "Hanging"], &[], -1),
        (0, vec!["Hanging".to_string()], vec![])
    );

    // An open transaction over both partitions.
    let (pid, epoch) = init(&mut c, "adm-1", 45_000);
    let (pid2, _) = init(&mut c, "adm-2", 45_000);
    add_partitions(&mut c, "adm-1", pid, epoch, "adm-t", &[1, 0]);
    let got = describe_txns(&mut c, &["adm-1", "adm-2", "nobody"]);
    let ids: Vec<String> = got.iter().map(|t| t.transactional_id.to_string()).collect();
    assert_eq!(ids, ["adm-1", "adm-2", "nobody"]);
    let t = &got[0];
    assert_eq!(
        (
            t.error_code,
            t.transaction_state.as_str(),
            t.transaction_timeout_ms,
            t.producer_id.0,
            t.producer_epoch
        ),
        (0, "Ongoing", 45_000, pid, epoch)
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(
        (now - 60_000..=now).contains(&t.transaction_start_time_ms),
        "{t:?}"
    );
    let topics: Vec<(String, Vec<i32>)> = t
        .topics
        .iter()
        .map(|d| (d.topic.to_string(), d.partitions.clone()))
        .collect();
    assert_eq!(topics, [("adm-t".to_string(), vec![0, 1])]);
    assert_eq!(
        (
            got[1].error_code,
            got[1].transaction_state.as_str(),
            got[1].transaction_start_time_ms,
            got[1].topics.len()
        ),
        (0, "Empty", -1, 0)
    );
    assert_eq!(got[2].error_code, 105);

    // The filters: by state, by producer id, by duration (v1; v0 has none).
    let both = vec![
        ("adm-1".to_string(), pid, "Ongoing".to_string()),
        ("adm-2".to_string(), pid2, "Empty".to_string()),
    ];
    assert_eq!(
        list_txns(&mut c, 0, &[], &[], -1),
        (0, vec![], both.clone())
    );
    assert_eq!(
        list_txns(&mut c, 0, &["Ongoing"], &[], -1).2,
        [both[0].clone()]
    );
    assert_eq!(list_txns(&mut c, 1, &[], &[pid2], -1).2, [both[1].clone()]);
    assert_eq!(list_txns(&mut c, 1, &["Ongoing"], &[pid2], -1).2, []);
    // Running for less than an hour: filtered out; the Empty one has no start (−1) and
    // passes, as in Kafka.
    assert_eq!(
        list_txns(&mut c, 1, &[], &[], 3_600_000).2,
        [both[1].clone()]
    );
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(list_txns(&mut c, 1, &[], &[], 10).2, both);

    // DescribeProducers: an idempotent producer's batch on partition 1; unknown partitions
    // and topics are UNKNOWN_TOPIC_OR_PARTITION.
    let values: [&[u8]; 3] = [b"a", b"b", b"c"];
    let r = c.produce(
        "adm-t",
        1,
        batches::batch(&values, 5_000, Some((7_777, 2, 0))),
    );
    assert_eq!((r.error_code, r.base_offset), (0, 0));
    let got = describe_producers(&mut c, "adm-t", &[1, 0, 9]);
    let codes: Vec<(i32, i16)> = got
        .iter()
        .map(|p| (p.partition_index, p.error_code))
        .collect();
    assert_eq!(codes, [(1, 0), (0, 0), (9, 3)]);
    let p = &got[0].active_producers;
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(
        (
            p[0].producer_id.0,
            p[0].producer_epoch,
            p[0].last_sequence,
            p[0].last_timestamp,
            p[0].coordinator_epoch,
            p[0].current_txn_start_offset
        ),
        (7_777, 2, 2, 5_002, -1, -1)
    );
    assert!(got[1].active_producers.is_empty(), "{got:?}");
    let got = describe_producers(&mut c, "no-such-topic", &[0]);
    assert_eq!(got[0].error_code, 3);

    // The transaction aborted: its markers reach both partitions, it is CompleteAbort with no
    // start time and no partitions, and the idempotent producer's entry is unchanged.
    assert_eq!(end_txn(&mut c, "adm-1", pid, epoch, false), 0);
    let t = wait_state(
        &mut c,
        "adm-1",
        "CompleteAbort",
        Duration::from_secs(20),
        &b,
    );
    assert_eq!(
        (
            t.producer_id.0,
            t.producer_epoch,
            t.transaction_start_time_ms,
            t.topics.len()
        ),
        (pid, epoch, -1, 0)
    );
    assert_eq!(
        list_txns(&mut c, 0, &["CompleteAbort"], &[], -1).2,
        [("adm-1".to_string(), pid, "CompleteAbort".to_string())]
    );
    // The marker's producer is now known on partition 0 too, with no open transaction.
    let got = describe_producers(&mut c, "adm-t", &[0]);
    let p = &got[0].active_producers;
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(
        (
            p[0].producer_id.0,
            i16::try_from(p[0].producer_epoch).unwrap(),
            p[0].current_txn_start_offset
        ),
        (pid, epoch, -1)
    );
    assert!(p[0].coordinator_epoch >= 0, "{p:?}");
    assert!(p[0].last_timestamp > 0, "{p:?}");

    let m = scrape(&b);
    assert_eq!(
        m.get("cohort_transactions_started_total"),
        Some(&1.0),
        "{m:#?}"
    );
    assert_eq!(
        m.get("cohort_transactions_aborted_total"),
        Some(&1.0),
        "{m:#?}"
    );
    assert_eq!(m.get("cohort_transactions_timed_out_total"), None, "{m:#?}");
    assert_eq!(
        m.get("cohort_transactions{state=\"CompleteAbort\"}"),
        Some(&1.0)
    );
    assert_eq!(m.get("cohort_transactions{state=\"Empty\"}"), Some(&1.0));
    assert_eq!(
        m.get("cohort_transactions_oldest_open_age_seconds"),
        Some(&0.0)
    );
}

/// Reads the first stdout line of `child` (the script's "ready" line) within `limit`.
fn first_line(child: &mut std::process::Child, limit: Duration) -> Option<String> {
    let stdout = child.stdout.take()?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(limit).ok().filter(|l| !l.is_empty())
}

fn read(b: &Cohort, isolation: &str) -> Value {
    let out = python_script(
        "txn_read.py",
        &[&b.bootstrap(), "hang-t", isolation, "--idle", "2"],
        Duration::from_secs(90),
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn a_sigkilled_transactional_producer_is_aborted_by_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(&dir);
    let mut c = RawClient::connect(b.kafka);
    assert_eq!(c.create_topic("hang-t", 1, &[]), 0);

    let mut child = Command::new(common::python())
        .arg(common::repo_root().join("tests/clients/python/txn_hang.py"))
        .args([&b.bootstrap(), "hang-t", "hang-1", "4000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let line = first_line(&mut child, Duration::from_secs(90));
    if line.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the producer never reported its records\nlog:\n{}", b.log());
    }
    // Two plain records after the transaction's three: read_committed must wait for them.
    let after: [&[u8]; 2] = [b"after-0", b"after-1"];
    let r = c.produce("hang-t", 0, batches::batch(&after, 1_000, None));
    assert_eq!((r.error_code, r.base_offset), (0, 3));

    // While it hangs: the coordinator shows it Ongoing on the partition, the partition's
    // owner shows its open transaction from offset 0, and the LSO is held at 0.
    let t = wait_state(&mut c, "hang-1", "Ongoing", Duration::from_secs(5), &b);
    let (pid, epoch) = (t.producer_id.0, t.producer_epoch);
    assert_eq!(t.transaction_timeout_ms, 4000);
    let topics: Vec<(String, Vec<i32>)> = t
        .topics
        .iter()
        .map(|d| (d.topic.to_string(), d.partitions.clone()))
        .collect();
    assert_eq!(topics, [("hang-t".to_string(), vec![0])]);
    let got = describe_producers(&mut c, "hang-t", &[0]);
    assert_eq!(got[0].error_code, 0);
    let open: Vec<(i64, i32, i64)> = got[0]
        .active_producers
        .iter()
        .map(|p| {
            (
                p.producer_id.0,
                p.producer_epoch,
                p.current_txn_start_offset,
            )
        })
        .collect();
    assert_eq!(open, [(pid, i32::from(epoch), 0)], "{got:?}");
    assert_eq!(got[0].active_producers[0].last_sequence, 2);
    let m = scrape(&b);
    assert_eq!(
        m.get("cohort_partition_lso_lag{topic=\"hang-t\",partition=\"0\"}"),
        Some(&5.0),
        "{m:#?}"
    );
    assert_eq!(m.get("cohort_transactions{state=\"Ongoing\"}"), Some(&1.0));
    assert!(
        m["cohort_transactions_oldest_open_age_seconds"] > 0.0,
        "{m:#?}"
    );
    assert_eq!(m.get("cohort_transactions_started_total"), Some(&1.0));

    // SIGKILL by PID, mid-transaction.
    child.kill().unwrap();
    child.wait().unwrap();

    // The coordinator aborts it by timeout: fenced (epoch bumped), CompleteAbort.
    let t = wait_state(
        &mut c,
        "hang-1",
        "CompleteAbort",
        Duration::from_secs(30),
        &b,
    );
    assert_eq!(t.producer_id.0, pid);
    assert_eq!(t.producer_epoch, epoch + 1);
    let m = scrape_until(&b, Duration::from_secs(10), "the LSO caught up", |m| {
        m.get("cohort_partition_lso_lag{topic=\"hang-t\",partition=\"0\"}") == Some(&0.0)
    });
    assert_eq!(
        m.get("cohort_transactions_timed_out_total"),
        Some(&1.0),
        "{m:#?}"
    );
    assert_eq!(m.get("cohort_transactions_aborted_total"), Some(&1.0));
    assert_eq!(m.get("cohort_transactions_committed_total"), None);
    assert_eq!(
        m.get("cohort_transactions_oldest_open_age_seconds"),
        Some(&0.0)
    );
    let (code, _, listed) = list_txns(&mut c, 0, &["Ongoing"], &[], -1);
    assert_eq!((code, listed), (0, vec![]));

    // read_committed consumers move past it: the plain records after the aborted ones, and
    // the position past the ABORT marker (offset 5).
    let got = read(&b, "read_committed");
    assert_eq!(
        got["values"],
        serde_json::json!(["after-0", "after-1"]),
        "{got}"
    );
    let position = got["position"].as_i64().unwrap();
    assert!((5..=6).contains(&position), "{got}");
    let got = read(&b, "read_uncommitted");
    assert_eq!(
        got["values"],
        serde_json::json!(["hanging-0", "hanging-1", "hanging-2", "after-0", "after-1"]),
        "{got}"
    );

    // The owner's producer state: the fence's epoch, no open transaction.
    let got = describe_producers(&mut c, "hang-t", &[0]);
    let p: Vec<(i64, i32, i64)> = got[0]
        .active_producers
        .iter()
        .map(|p| {
            (
                p.producer_id.0,
                p.producer_epoch,
                p.current_txn_start_offset,
            )
        })
        .collect();
    assert_eq!(p, [(pid, i32::from(epoch) + 1, -1)], "{got:?}");
}
