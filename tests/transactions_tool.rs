//! `cohort transactions` (Kafka 4.0's `kafka-transactions.sh`, decision 0150) against a real
//! `cohort serve`: a librdkafka transactional producer hangs mid-transaction and is SIGKILLed by
//! PID; `list`, `describe` and `describe-producers` show it, `find-hanging` does not count it
//! (its coordinator still awaits the partition) but does count an orphan transaction no
//! coordinator knows, and both `abort` forms end them — after which the partition's last stable
//! offset reaches its high watermark and a read_committed consumer reads past it. Output lines
//! and exit codes are asserted exactly, the errors for bad arguments included.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::raw::{batches, RawClient};
use common::{python_script, run, Cohort};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::TopicName;
use kafka_protocol::messages::{ApiKey, BrokerId, ListOffsetsRequest, RequestKind, ResponseKind};
use kafka_protocol::messages::{ProduceRequest, TransactionalId};
use kafka_protocol::protocol::StrBytes;

const TOPIC: &str = "tool-t";
const ORPHAN_TOPIC: &str = "tool-orphan";
const TXN_ID: &str = "tool-hang";
/// Long enough that the coordinator does not abort the hanging transaction during the test.
const TXN_TIMEOUT_MS: &str = "600000";
/// A producer id no coordinator handed out.
const ORPHAN_PID: i64 = 987_654_321;

/// `cohort transactions <args>`: (stdout, stderr, exit code).
fn tool(args: &[&str]) -> (String, String, Option<i32>) {
    let o: Output = run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg("transactions")
            .args(args),
        Duration::from_secs(90),
    );
    (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
        o.status.code(),
    )
}

/// The same with `--bootstrap-server` first, as Kafka's tool takes it.
fn tool_at(b: &Cohort, args: &[&str]) -> (String, String, Option<i32>) {
    let bootstrap = b.bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    tool(&all)
}

/// A table's rows as trimmed cells (every line ends with a tab).
fn cells(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .map(|l| {
            assert!(l.ends_with('\t'), "{l:?}");
            l.trim_end_matches('\t')
                .split('\t')
                .map(|c| c.trim_end().to_string())
                .collect()
        })
        .collect()
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Reads the first stdout line of `child` within `limit`.
fn first_line(child: &mut Child, limit: Duration) -> Option<String> {
    let stdout = child.stdout.take()?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(limit).ok().filter(|l| !l.is_empty())
}

/// ListOffsets v7 of partition 0 at `isolation` (0 uncommitted, 1 committed): the latest offset.
fn latest(c: &mut RawClient, topic: &str, isolation: i8) -> i64 {
    let req = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_isolation_level(isolation)
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(TopicName(StrBytes::from_string(topic.to_string())))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(0)
                .with_timestamp(-1)])]);
    match c.call(ApiKey::ListOffsets, 7, RequestKind::ListOffsets(req)) {
        ResponseKind::ListOffsets(r) => {
            let p = &r.topics[0].partitions[0];
            assert_eq!(p.error_code, 0, "{r:?}");
            p.offset
        }
        other => panic!("{other:?}"),
    }
}

/// Produce v9 of a transactional batch to partition 0 under `transactional_id`, as a client
/// that skipped AddPartitionsToTxn sends it: (error code, base offset).
fn produce_transactional(
    c: &mut RawClient,
    topic: &str,
    transactional_id: &str,
    records: bytes::Bytes,
) -> (i16, i64) {
    let req = ProduceRequest::default()
        .with_transactional_id(Some(TransactionalId(StrBytes::from_string(
            transactional_id.to_string(),
        ))))
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(StrBytes::from_string(topic.to_string())))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    match c.call(ApiKey::Produce, 9, RequestKind::Produce(req)) {
        ResponseKind::Produce(r) => {
            let p = &r.responses[0].partition_responses[0];
            (p.error_code, p.base_offset)
        }
        other => panic!("{other:?}"),
    }
}

const HANGING_HEADER: &str =
    "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)\t\n";

#[test]
fn cohort_transactions_finds_and_aborts_a_hanging_transaction() {
    let dir = tempfile::tempdir().unwrap();
    // Verification off (Kafka's `transaction.partition.verification.enable=false`): the orphan
    // below is a batch no coordinator registered, which a verifying broker refuses
    // (decision 0165); hanging transactions come from brokers that did not verify.
    let b = Cohort::start_logged(
        &dir.path().join("data"),
        &["--transaction-partition-verification-enable=false"],
        "info,cohort::handlers=debug",
    );
    let mut c = RawClient::connect(b.kafka);
    assert_eq!(c.create_topic(TOPIC, 1, &[]), 0);
    assert_eq!(c.create_topic(ORPHAN_TOPIC, 1, &[]), 0);

    let mut child = Command::new(common::python())
        .arg(common::repo_root().join("tests/clients/python/txn_hang.py"))
        .args([&b.bootstrap(), TOPIC, TXN_ID, TXN_TIMEOUT_MS])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    if first_line(&mut child, Duration::from_secs(90)).is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the producer never reported its records\nlog:\n{}", b.log());
    }
    // SIGKILL by PID, mid-transaction: nothing will end it but the coordinator's 10-minute
    // timeout or an operator.
    child.kill().unwrap();
    child.wait().unwrap();
    // Plain records after the transaction's three: read_committed waits for them.
    let after: [&[u8]; 2] = [b"after-0", b"after-1"];
    let r = c.produce(TOPIC, 0, batches::batch(&after, now_ms(), None));
    assert_eq!((r.error_code, r.base_offset), (0, 3));
    assert_eq!(
        latest(&mut c, TOPIC, 1),
        0,
        "the LSO is held at the open transaction"
    );

    // describe: its coordinator's view.
    let (out, err, code) = tool_at(&b, &["describe", "--transactional-id", TXN_ID]);
    assert_eq!((code, err.as_str()), (Some(0), ""), "{out}");
    let rows = cells(&out);
    assert_eq!(
        rows[0],
        [
            "CoordinatorId",
            "TransactionalId",
            "ProducerId",
            "ProducerEpoch",
            "TransactionState",
            "TransactionTimeoutMs",
            "CurrentTransactionStartTimeMs",
            "TransactionDurationMs",
            "TopicPartitions"
        ]
    );
    assert_eq!(rows.len(), 2, "{out}");
    let row = &rows[1];
    let coordinator = row[0].clone();
    let pid = row[2].clone();
    assert!(coordinator.parse::<i32>().unwrap() >= 0);
    assert!(pid.parse::<i64>().unwrap() >= 0);
    assert_eq!(
        row[1..].iter().map(String::as_str).collect::<Vec<_>>()[..5],
        [TXN_ID, pid.as_str(), "0", "Ongoing", TXN_TIMEOUT_MS]
    );
    let start: i64 = row[6].parse().unwrap();
    let duration: i64 = row[7].parse().unwrap();
    assert!(start > now_ms() - 300_000 && start <= now_ms(), "{out}");
    assert!((0..300_000).contains(&duration), "{out}");
    assert_eq!(row[8], "tool-t-0");
    // The header pads to the widest cell: the row's columns line up with it.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0].split('\t').map(str::len).collect::<Vec<_>>(),
        lines[1].split('\t').map(str::len).collect::<Vec<_>>()
    );

    // list: one row per transaction, by coordinator.
    let (out, err, code) = tool_at(&b, &["list"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let pad = |s: &str, w: usize| format!("{s:<w$}");
    assert_eq!(
        out,
        format!(
            "TransactionalId\tCoordinator\tProducerId{}\tTransactionState\t\n{}\t{}\t{}\t{}\t\n",
            " ".repeat(pid.len().saturating_sub(10)),
            pad(TXN_ID, 15),
            pad(&coordinator, 11),
            pad(&pid, 10),
            pad("Ongoing", 16),
        )
    );
    // --command-config, here after the command (cohort's tools take it anywhere): its client
    // keys are used, the others warned about as Kafka's clients do.
    let config = dir.path().join("admin.properties");
    std::fs::write(&config, "client.id=ops\nsasl.mechanism=PLAIN\n").unwrap();
    let (out2, err, code) = tool_at(&b, &["list", "--command-config", config.to_str().unwrap()]);
    assert_eq!(
        (code, err.as_str(), out2.as_str()),
        (
            Some(0),
            "WARN These configurations '[sasl.mechanism]' were supplied but are not used yet.\n",
            out.as_str()
        )
    );
    // Kafka 4.0's duration filter (ListTransactions v1): nothing has run for an hour.
    let (out, _, code) = tool_at(&b, &["list", "--duration-filter", "3600000"]);
    assert_eq!(
        (code, out.as_str()),
        (
            Some(0),
            "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n"
        )
    );

    // describe-producers: the producer, its open transaction from offset 0.
    let (out, err, code) = tool_at(
        &b,
        &["describe-producers", "--topic", TOPIC, "--partition", "0"],
    );
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let rows = cells(&out);
    assert_eq!(
        rows[0],
        [
            "ProducerId",
            "ProducerEpoch",
            "LatestCoordinatorEpoch",
            "LastSequence",
            "LastTimestamp",
            "CurrentTransactionStartOffset"
        ]
    );
    assert_eq!(rows.len(), 2, "{out}");
    let last_ts: i64 = rows[1][4].parse().unwrap();
    assert!(last_ts > now_ms() - 300_000, "{out}");
    assert_eq!(
        [&rows[1][..4], &rows[1][5..]].concat(),
        [pid.as_str(), "0", "-1", "2", "0"]
    );
    // The same asked of a named broker (the leader here).
    let (out2, _, code) = tool_at(
        &b,
        &[
            "describe-producers",
            "--topic",
            TOPIC,
            "--partition",
            "0",
            "--broker-id",
            &coordinator,
        ],
    );
    assert_eq!((code, out2), (Some(0), out));

    // find-hanging: the coordinator still awaits the partition, so however old it is not hanging.
    let (out, err, code) = tool_at(
        &b,
        &[
            "find-hanging",
            "--topic",
            TOPIC,
            "--max-transaction-timeout",
            "0",
        ],
    );
    assert_eq!(
        (code, err.as_str(), out.as_str()),
        (Some(0), "", HANGING_HEADER)
    );

    // An orphan transaction: a transactional batch 20.5 minutes old from a producer id no
    // coordinator knows (taken because verification is off, as a Kafka broker without
    // KIP-890 verification takes it).
    let orphan_ts = now_ms() - 20 * 60_000 - 30_000;
    let (code, base) = produce_transactional(
        &mut c,
        ORPHAN_TOPIC,
        "orphan",
        batches::transactional_batch(&[b"orphan"], orphan_ts, (ORPHAN_PID, 0, 0)),
    );
    assert_eq!((code, base), (0, 0));
    // The header pads to the widest cell of each column ("tool-orphan", the 9-digit id is not
    // wider than "ProducerId").
    let orphan_row = format!(
        "Topic      \tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\t\
         LastTimestamp\tDuration(min)\t\n\
         tool-orphan\t0        \t{ORPHAN_PID} \t0            \t-1              \t0          \t\
         {orphan_ts}\t20           \t\n"
    );
    let (out, err, code) = tool_at(&b, &["find-hanging", "--topic", ORPHAN_TOPIC]);
    assert_eq!(
        (code, err, out),
        (Some(0), String::new(), orphan_row.clone())
    );
    // By broker: every partition it holds a replica of, the hanging one found among them.
    let (out, _, code) = tool_at(&b, &["find-hanging", "--broker-id", &coordinator]);
    assert_eq!((code, out), (Some(0), orphan_row.clone()));
    // Younger than a 30-minute bound: not a candidate.
    let (out, _, code) = tool_at(
        &b,
        &[
            "find-hanging",
            "--topic",
            ORPHAN_TOPIC,
            "--partition",
            "0",
            "--max-transaction-timeout",
            "30",
        ],
    );
    assert_eq!((code, out.as_str()), (Some(0), HANGING_HEADER));
    // The older brokers' form of abort: producer id, epoch, coordinator epoch (-1 → 0).
    let orphan_pid = ORPHAN_PID.to_string();
    let (out, err, code) = tool_at(
        &b,
        &[
            "abort",
            "--topic",
            ORPHAN_TOPIC,
            "--partition",
            "0",
            "--producer-id",
            &orphan_pid,
            "--producer-epoch",
            "0",
            "--coordinator-epoch",
            "-1",
        ],
    );
    assert_eq!((code, out.as_str(), err.as_str()), (Some(0), "", ""));
    assert_eq!(
        latest(&mut c, ORPHAN_TOPIC, 1),
        latest(&mut c, ORPHAN_TOPIC, 0)
    );
    let (out, _, code) = tool_at(&b, &["find-hanging", "--topic", ORPHAN_TOPIC]);
    assert_eq!((code, out.as_str()), (Some(0), HANGING_HEADER));

    // abort by start offset: a wrong offset is refused, the right one aborts it.
    let (out, err, code) = tool_at(
        &b,
        &[
            "abort",
            "--topic",
            TOPIC,
            "--partition",
            "0",
            "--start-offset",
            "3",
        ],
    );
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            Some(1),
            "",
            "Could not find any open transactions starting at offset 3 on partition tool-t-0\n"
        )
    );
    let (out, err, code) = tool_at(
        &b,
        &[
            "abort",
            "--topic",
            TOPIC,
            "--partition",
            "0",
            "--start-offset",
            "0",
        ],
    );
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (Some(0), "", ""),
        "{}",
        b.log()
    );

    // The last stable offset reaches the high watermark (3 + 2 records and the ABORT marker).
    let deadline = Instant::now() + Duration::from_secs(10);
    while latest(&mut c, TOPIC, 1) != latest(&mut c, TOPIC, 0) {
        assert!(Instant::now() < deadline, "LSO stuck\nlog:\n{}", b.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(latest(&mut c, TOPIC, 1), 6);
    let (out, _, code) = tool_at(
        &b,
        &["describe-producers", "--topic", TOPIC, "--partition", "0"],
    );
    assert_eq!(code, Some(0));
    let rows = cells(&out);
    assert_eq!(rows[1][5], "None", "{out}");

    // A read_committed consumer reads past it: the plain records, none of the aborted ones.
    let o = python_script(
        "txn_read.py",
        &[&b.bootstrap(), TOPIC, "read_committed", "--idle", "2"],
        Duration::from_secs(90),
    );
    let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    assert_eq!(
        got["values"],
        serde_json::json!(["after-0", "after-1"]),
        "{got}"
    );
    assert!(got["position"].as_i64().unwrap() >= 5, "{got}");

    // Errors of calls: Kafka's messages on stderr, exit 1.
    let (out, err, code) = tool_at(&b, &["describe", "--transactional-id", "nobody"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            Some(1),
            "",
            "Failed to describe transaction state of transactional-id `nobody`: DescribeTransactions \
             request for transactionalId `nobody` failed because the ID could not be found. Enable \
             debug logging for additional detail.\n"
        )
    );
}

#[test]
fn bad_arguments_get_kafkas_messages_and_exit_1() {
    // No broker is needed: every one of these is refused before any call.
    let b = "127.0.0.1:1";
    let cases: [(&[&str], &str); 7] = [
        (
            &["--bootstrap-server", b, "describe"],
            "usage: cohort transactions describe [-h] --transactional-id TRANSACTIONAL_ID\n\
             cohort transactions describe: error: argument --transactional-id is required\n",
        ),
        (
            &["describe", "--transactional-id", "x"],
            "usage: cohort transactions [-h] [-v] [--command-config FILE]\n\
             \x20                          --bootstrap-server host:port COMMAND ...\n\
             cohort transactions: error: argument --bootstrap-server is required\n",
        ),
        (
            &[
                "--bootstrap-server",
                b,
                "describe-producers",
                "--topic",
                "t",
            ],
            "usage: cohort transactions describe-producers [-h] [--broker-id BROKER_ID]\n\
             \x20                                             --topic TOPIC\n\
             \x20                                             --partition PARTITION\n\
             cohort transactions describe-producers: error: argument --partition is required\n",
        ),
        (
            &[
                "--bootstrap-server",
                b,
                "abort",
                "--topic",
                "t",
                "--partition",
                "0",
            ],
            "The transaction to abort must be identified either with --start-offset (for brokers \
             on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch \
             (for older brokers)\n",
        ),
        (
            &[
                "--bootstrap-server",
                b,
                "abort",
                "--topic",
                "t",
                "--partition",
                "0",
                "--producer-id",
                "1",
            ],
            "Missing required argument --producer-epoch\n",
        ),
        (
            &["--bootstrap-server", b, "find-hanging"],
            "The `find-hanging` command requires either --topic or --broker-id to limit the scope \
             of the search\n",
        ),
        (
            &[
                "--bootstrap-server",
                b,
                "find-hanging",
                "--broker-id",
                "1",
                "--partition",
                "0",
            ],
            "The --partition argument requires --topic to be provided\n",
        ),
    ];
    for (args, stderr) in cases {
        assert_eq!(
            tool(args),
            (String::new(), stderr.to_string(), Some(1)),
            "{args:?}"
        );
    }
    let (out, err, code) = tool(&["--bootstrap-server", b, "list", "-h"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert!(
        out.starts_with(
            "usage: cohort transactions list [-h] [--duration-filter DURATION_FILTER]\n"
        ),
        "{out}"
    );
}
