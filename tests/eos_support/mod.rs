//! The exactly-once ledger test shared by `tests/transactions_crash.rs` (librdkafka) and
//! `tests/transactions_crash_kafkajs.rs` (kafkajs): a consume–transform–produce application runs
//! to completion while nodes are SIGKILLed under it. The ledger is the input: every input record
//! must appear in the output exactly once to a read_committed reader (librdkafka's, whichever
//! client wrote), and the group's committed offsets must equal the input's ends (offsets and
//! output became visible together).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::cluster_support::{self, fetch_offsets, ScriptCluster};
use crate::common::raw::{batches, RawClient};
use crate::common::{node_dir, python, python_script, repo_root, Cohort};
use serde_json::Value;

/// The application under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// `tests/clients/python/eos_pipeline.py` (confluent-kafka).
    Librdkafka,
    /// `tests/clients/node/eos_pipeline_kafkajs.js`.
    Kafkajs,
}

impl Client {
    fn command(self) -> Command {
        match self {
            Client::Librdkafka => {
                let mut c = Command::new(python());
                c.arg(repo_root().join("tests/clients/python/eos_pipeline.py"));
                c
            }
            Client::Kafkajs => {
                let dir = node_dir();
                let mut c = Command::new("node");
                c.current_dir(&dir).arg(dir.join("eos_pipeline_kafkajs.js"));
                c
            }
        }
    }
}

const IN: &str = "eos-in";
const OUT: &str = "eos-out";
const GROUP: &str = "eos-app";
const PARTITIONS: i32 = 3;
const PER_PARTITION: usize = 400;
const TOTAL: usize = PER_PARTITION * PARTITIONS as usize;
/// How long the applications hold each transaction open before committing it, in ms.
const HOLD_MS: &str = "150";

/// The input values, partition by partition: "p-i", unique.
fn input_values(partition: i32) -> Vec<String> {
    (0..PER_PARTITION)
        .map(|i| format!("{partition}-{i}"))
        .collect()
}

/// Writes the input with acks=all through whichever node owns each partition, stamped with
/// the wall clock (retention would delete records from 1970 at the restart's first pass).
fn write_input(owner_of: impl Fn(i32) -> SocketAddr) {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    for p in 0..PARTITIONS {
        let mut c = RawClient::connect(owner_of(p));
        for chunk in input_values(p).chunks(100) {
            let values: Vec<&[u8]> = chunk.iter().map(|v| v.as_bytes()).collect();
            let r = c.produce(IN, p, batches::batch(&values, now_ms, None));
            assert_eq!(r.error_code, 0, "input to partition {p}");
        }
    }
}

/// The running application: its stdout lines arrive on `lines`.
struct Pipeline {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Pipeline {
    fn start(client: Client, bootstrap: &str) -> Pipeline {
        let mut child = client
            .command()
            .args(["run", bootstrap, IN, OUT, GROUP, "eos-txn"])
            .arg(TOTAL.to_string())
            // 30 transactions, each held open HOLD_MS before its commit: the kills, sent right
            // after a commit is reported, land inside the next transaction (one alone takes
            // milliseconds since decision 0152).
            .args(["--batch", "40", "--deadline", "200", "--hold-ms", HOLD_MS])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Pipeline { child, lines }
    }

    /// Waits until the application reports `at_least` input records committed, and checks
    /// that it has not committed everything yet (what comes next must land mid-run).
    fn wait_committed(&self, at_least: usize, limit: Duration, log: impl Fn() -> String) {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(n) = line.strip_prefix("committed ") {
                        let n = n.trim().parse::<usize>().unwrap();
                        if n >= at_least {
                            assert!(n < TOTAL, "the application finished before the kill");
                            return;
                        }
                    } else if line.starts_with('{') {
                        panic!("the pipeline ended early: {line}\n{}", log());
                    }
                }
                Err(_) => panic!("fewer than {at_least} records committed in time\n{}", log()),
            }
        }
    }

    /// The application's last line (its JSON summary).
    fn finish(mut self, limit: Duration, log: impl Fn() -> String) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with('{') => {
                    let _ = self.child.wait();
                    return serde_json::from_str(&line).unwrap();
                }
                Ok(_) => {}
                Err(_) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!("the pipeline did not finish in time\n{}", log());
                }
            }
        }
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a read_committed reader of the output sees, checked against the ledger: every input
/// value transformed exactly once, nothing else.
fn check_output(bootstrap: &str, summary: &Value) {
    let out = python_script(
        "eos_pipeline.py",
        &["verify", bootstrap, OUT, &PARTITIONS.to_string()],
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{out:?}");
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for v in got["committed"].as_array().unwrap() {
        *seen.entry(v.as_str().unwrap().to_string()).or_default() += 1;
    }
    let expected: Vec<String> = (0..PARTITIONS)
        .flat_map(input_values)
        .map(|v| format!("out-{v}"))
        .collect();
    let missing: Vec<&String> = expected.iter().filter(|v| !seen.contains_key(*v)).collect();
    let twice: Vec<(&String, &usize)> = seen.iter().filter(|(_, n)| **n > 1).collect();
    let foreign: Vec<&String> = seen.keys().filter(|v| !expected.contains(v)).collect();
    assert!(
        missing.is_empty() && twice.is_empty() && foreign.is_empty(),
        "missing {} (e.g. {:?}), duplicated {} (e.g. {:?}), unknown {:?}; summary {summary}",
        missing.len(),
        missing.first(),
        twice.len(),
        twice.first(),
        foreign
    );
    // Aborted attempts stay in the log for read_uncommitted readers, never for read_committed.
    let uncommitted = got["uncommitted"].as_u64().unwrap() as usize;
    assert!(uncommitted >= TOTAL, "{got}");
    eprintln!(
        "exactly once: {TOTAL} records; {uncommitted} in the log with aborted attempts; \
         application: {summary}"
    );
}

/// The group's committed offsets: every partition at the input's end.
fn check_offsets(coordinator: SocketAddr) {
    let (code, committed) = fetch_offsets(coordinator, GROUP).unwrap();
    assert_eq!(code, 0);
    let by_partition: Vec<(i32, i64)> = committed
        .iter()
        .filter(|(topic, _, _)| topic == IN)
        .map(|(_, partition, offset)| (*partition, *offset))
        .collect();
    let expected: Vec<(i32, i64)> = (0..PARTITIONS).map(|p| (p, PER_PARTITION as i64)).collect();
    assert_eq!(by_partition, expected);
}

/// (a) The single node is SIGKILLed twice mid-run, each time restarted on the same port.
pub fn survives_sigkill_of_the_single_node(client: Client) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let flags = ["--group-initial-rebalance-delay-ms", "100"];
    let mut broker = Cohort::start(&data, &flags);
    let port = broker.kafka.port();
    let bootstrap = broker.bootstrap();
    {
        let mut c = RawClient::connect(broker.kafka);
        assert_eq!(c.create_topic(IN, PARTITIONS, &[]), 0);
        assert_eq!(c.create_topic(OUT, PARTITIONS, &[]), 0);
    }
    write_input(|_| broker.kafka);

    let app = Pipeline::start(client, &bootstrap);
    let listeners = format!("PLAINTEXT://127.0.0.1:{port}");
    let restart_flags = [flags[0], flags[1], "--listeners", &listeners];
    for third in [1, 2] {
        let log_path = broker.log_path.clone();
        let log = move || std::fs::read_to_string(&log_path).unwrap_or_default();
        app.wait_committed(TOTAL * third / 3, Duration::from_secs(120), log);
        broker.kill9();
        broker = Cohort::start(&data, &restart_flags);
        assert_eq!(broker.kafka.port(), port);
    }
    let log = || broker.log();
    let summary = app.finish(Duration::from_secs(200), log);
    assert_eq!(summary["done"], Value::Bool(true), "{summary}\n{}", log());
    check_output(&bootstrap, &summary);
    check_offsets(broker.kafka);
}

/// (b) The Raft leader of a three-node cluster — the transaction and group coordinator — is
/// SIGKILLed and restarted a third of the way; with `then_a_follower`, a node that does not
/// lead (it owns data partitions: replication factor 1) is SIGKILLed and restarted two thirds
/// of the way.
pub fn survives_sigkill_of_cluster_nodes(client: Client, then_a_follower: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut cluster = ScriptCluster::up(dir.path(), &["--group-initial-rebalance-delay-ms", "100"]);
    cluster.wait_healthy(Duration::from_secs(60));
    let nodes = cluster_support::NODES;
    let bootstrap = nodes
        .iter()
        .map(|n| cluster.kafka(*n).to_string())
        .collect::<Vec<_>>()
        .join(",");
    let leader = cluster.wait_controller(&nodes, Duration::from_secs(30));
    assert_eq!(
        cluster_support::create_topic(cluster.kafka(leader), IN, PARTITIONS).unwrap(),
        0
    );
    assert_eq!(
        cluster_support::create_topic(cluster.kafka(leader), OUT, PARTITIONS).unwrap(),
        0
    );
    // Each partition lives on one node: write the input through its owner.
    let owners = cluster_support::eventually(
        "every input partition has an owner",
        Duration::from_secs(30),
        || {
            let leaders = cluster_support::partition_leaders(cluster.kafka(leader), IN).ok()?;
            (leaders.len() == PARTITIONS as usize && leaders.iter().all(|l| *l > 0))
                .then_some(leaders)
        },
    );
    write_input(|p| cluster.kafka(owners[p as usize] as u64));

    let app = Pipeline::start(client, &bootstrap);
    let log = cluster.logs();
    app.wait_committed(TOTAL / 3, Duration::from_secs(120), || log.clone());
    let leader = cluster.wait_controller(&nodes, Duration::from_secs(30));
    cluster.kill9(leader);
    let others: Vec<u64> = nodes.iter().copied().filter(|n| *n != leader).collect();
    let new_leader = cluster.wait_controller(&others, Duration::from_secs(30));
    assert_ne!(new_leader, leader);
    // Its partitions live only on it (replication factor 1): back it comes.
    cluster.start(leader);
    cluster.wait_healthy(Duration::from_secs(60));

    if then_a_follower {
        let log = cluster.logs();
        app.wait_committed(TOTAL * 2 / 3, Duration::from_secs(120), || log.clone());
        let leader = cluster.wait_controller(&nodes, Duration::from_secs(30));
        let follower = nodes.iter().copied().find(|n| *n != leader).unwrap();
        cluster.kill9(follower);
        // The coordinator keeps its quorum; the follower's partitions are down until it is back.
        std::thread::sleep(Duration::from_secs(1));
        cluster.start(follower);
        cluster.wait_healthy(Duration::from_secs(60));
    }

    let summary = app.finish(Duration::from_secs(200), || cluster.logs());
    assert_eq!(
        summary["done"],
        Value::Bool(true),
        "{summary}\n{}",
        cluster.logs()
    );
    check_output(&bootstrap, &summary);
    let coordinator = cluster.wait_controller(&nodes, Duration::from_secs(30));
    check_offsets(cluster.kafka(coordinator));
}
