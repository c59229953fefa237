//! KIP-848 consumer groups on a three-node cluster with real clients: librdkafka and kafka-ts
//! members (`group.protocol=consumer`) balance, rebalance on a leave and a join, and consume
//! every record once with their commits accepted; a mixed group (librdkafka and kafka-python
//! classic members with a librdkafka consumer-protocol member) upgraded online, losing a
//! classic member and taking a new one, consumes every record once; and the Raft leader (every
//! group's coordinator) SIGKILLed while a reconciliation is under way: the group converges on
//! the new leader with no partition ever owned by two members.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use cluster_support::*;
use common::{node_dir, python, repo_root, run_ok};
use serde_json::{json, Value};

/// One cluster at a time: three nodes plus the clients already fill the two cores.
static SERIAL: Mutex<()> = Mutex::new(());

fn bootstrap(c: &ScriptCluster) -> String {
    NODES
        .iter()
        .map(|n| c.kafka(*n).to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn parse(out: &[u8], c: &ScriptCluster) -> Value {
    serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("{e}: stdout {}\n{}", String::from_utf8_lossy(out), c.logs()))
}

/// As tests/groups_clients.rs checks the same scripts on one node: every phase reached, 900
/// records consumed exactly once, no partition held twice, each partition committed at 150.
fn assert_three(got: &Value, c: &ScriptCluster) {
    for phase in [
        "three_balanced",
        "first_consumed",
        "after_leave_balanced",
        "second_consumed",
        "after_join_balanced",
        "third_consumed",
    ] {
        assert_eq!(got[phase], json!(true), "{phase}: {got}\n{}", c.logs());
    }
    assert_eq!(got["after_leave"], json!([3, 3]), "{got}");
    assert_eq!(got["after_join"], json!([2, 2, 2]), "{got}");
    assert_eq!(got["consumed"], json!(900), "{got}");
    assert_eq!(got["distinct"], json!(900), "{got}");
    assert_eq!(got["distinct_keys"], json!(900), "{got}");
    assert_eq!(got["violations"], json!([]), "{got}");
    let committed: Vec<Value> = (0..6).map(|p| json!([p, 150])).collect();
    assert_eq!(got["committed"], json!(committed), "{got}\n{}", c.logs());
}

#[test]
fn librdkafka_and_kafka_ts_consumer_protocol_groups_balance_and_consume_once_on_a_cluster() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let c = ScriptCluster::up(dir.path(), &[]);
    c.wait_controller(&NODES, Duration::from_secs(30));
    let servers = bootstrap(&c);

    let out = run_ok(
        Command::new(python())
            .arg(repo_root().join("tests/clients/python/groups_kip848_three.py"))
            .args([&servers, "kip848-three", "kip848-three-group"])
            .env("COHORT_BIN", env!("CARGO_BIN_EXE_cohort")),
        Duration::from_secs(150),
    );
    let got = parse(&out.stdout, &c);
    assert_three(&got, &c);
    assert_eq!(got["commit_errors"], json!([]), "{got}");
    assert_eq!(got["described"]["state"], json!("STABLE"), "{got}");
    assert_eq!(got["described"]["target_is_current"], json!(true), "{got}");

    let node = node_dir();
    let out = run_ok(
        Command::new("node")
            .current_dir(&node)
            .arg(node.join("groups_kip848_kafkats.js"))
            .args([&servers, "kip848-kts", "kip848-kts-group"])
            .env("COHORT_BIN", env!("CARGO_BIN_EXE_cohort")),
        Duration::from_secs(150),
    );
    let got = parse(&out.stdout, &c);
    assert_three(&got, &c);
    assert_eq!(got["errors"], json!([]), "{got}");
}

/// `cohort groups --describe --members --verbose`: (client id, UPGRADED) of every member,
/// sorted.
fn upgraded_column(members: &str) -> Vec<(String, String)> {
    let mut lines = members.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    // Dynamic members only: no GROUP-INSTANCE-ID column, CLIENT-ID is the fourth.
    assert_eq!(header.get(3), Some(&"CLIENT-ID"), "{members}");
    assert_eq!(header.last(), Some(&"UPGRADED"), "{members}");
    let mut rows: Vec<(String, String)> = lines
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols[3].to_owned(), cols.last().unwrap().to_string())
        })
        .collect();
    rows.sort();
    rows
}

fn pairs(rows: &[(&str, &str)]) -> Vec<(String, String)> {
    rows.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn a_mixed_group_upgraded_online_on_a_cluster_consumes_every_record_once_as_members_come_and_go() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let c = ScriptCluster::up(dir.path(), &["--group-initial-rebalance-delay-ms", "500"]);
    c.wait_controller(&NODES, Duration::from_secs(30));
    let servers = bootstrap(&c);
    let out = run_ok(
        Command::new(python())
            .arg(repo_root().join("tests/clients/python/groups_migration_cluster.py"))
            .args([&servers, "mig-cluster", "mig-cluster-group"])
            .env("COHORT_BIN", env!("CARGO_BIN_EXE_cohort")),
        Duration::from_secs(600),
    );
    let got = parse(&out.stdout, &c);
    eprintln!("mixed group on a cluster: {got}");
    for phase in [
        "classic_formed",
        "mixed_formed",
        "mixed_consumed",
        "after_leave_formed",
        "after_leave_consumed",
        "after_join_formed",
        "after_join_consumed",
    ] {
        assert_eq!(got[phase], json!(true), "{phase}: {got}\n{}", c.logs());
    }
    assert_eq!(
        got["type_classic"],
        json!(["CLASSIC", "STABLE", 2]),
        "{got}"
    );
    // Both kinds in the group: a consumer group (ConsumerGroupDescribe), the classic members
    // not upgraded, the consumer-protocol member upgraded.
    for (phase, members) in [("mixed", 3), ("after_leave", 2), ("after_join", 3)] {
        let described = &got[format!("type_{phase}")];
        assert_eq!(described[0], json!("CONSUMER"), "{phase}: {got}");
        assert_eq!(described[2], json!(members), "{phase}: {got}");
    }
    let column =
        |phase: &str| upgraded_column(got[format!("cli_members_{phase}")].as_str().unwrap());
    assert_eq!(
        column("mixed"),
        pairs(&[
            ("kp-classic", "false"),
            ("rd-classic", "false"),
            ("rd-consumer", "true")
        ]),
        "{got}"
    );
    assert_eq!(
        column("after_leave"),
        pairs(&[("rd-classic", "false"), ("rd-consumer", "true")]),
        "{got}"
    );
    assert_eq!(
        column("after_join"),
        pairs(&[
            ("kp-classic-2", "false"),
            ("rd-classic", "false"),
            ("rd-consumer", "true")
        ]),
        "{got}"
    );
    // Every record consumed once, by the consumers' own record; every consumer took part.
    assert_eq!(got["consumed"], json!(1200), "{got}\n{}", c.logs());
    assert_eq!(got["distinct"], json!(1200), "{got}");
    assert_eq!(got["errors"], json!([]), "{got}\n{}", c.logs());
    assert_eq!(
        got["every_consumer_consumed"],
        json!(["kp-classic", "kp-classic-2", "rd-classic", "rd-consumer"]),
        "{got}"
    );
    // The committed offsets are the log end offsets.
    let ends: Vec<Value> = (0..6).map(|p| json!([p, 200])).collect();
    assert_eq!(got["end_offsets"], json!(ends), "{got}");
    assert_eq!(got["committed"], got["end_offsets"], "{got}");
}

const TOPIC: &str = "kip848-failover";
const GROUP: &str = "kip848-failover-group";

#[test]
fn killing_the_leader_mid_reconciliation_converges_with_no_partition_owned_twice() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut c = ScriptCluster::up(dir.path(), &[]);
    let leader = c.wait_controller(&NODES, Duration::from_secs(30));

    let mut script = Command::new(python())
        .arg(repo_root().join("tests/clients/python/groups_kip848_failover.py"))
        .args([&bootstrap(&c), TOPIC, GROUP])
        .env("COHORT_BIN", env!("CARGO_BIN_EXE_cohort"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = script.id();
    let (tx, lines) = mpsc::channel();
    let stdout = script.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let stderr = script.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut s);
        s
    });
    // Stops the script by its pid if an assertion below fails.
    struct Stop(Option<std::process::Child>);
    impl Drop for Stop {
        fn drop(&mut self) {
            if let Some(mut child) = self.0.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
    let mut stdin = script.stdin.take().unwrap();
    let mut script = Stop(Some(script));

    let reconciling = lines
        .recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("script {pid} never reached the reconciliation"));
    assert_eq!(reconciling, "reconciling");
    let killed = Instant::now();
    c.kill9(leader);
    let survivors: Vec<u64> = NODES.into_iter().filter(|n| *n != leader).collect();
    let new_leader = c.wait_controller(&survivors, Duration::from_secs(30));
    eprintln!(
        "leader {leader} killed mid-reconciliation; node {new_leader} leads after {:?}",
        killed.elapsed()
    );
    // Its partitions' data lives only on it (replication factor 1).
    c.start(leader);
    writeln!(stdin, "restarted").unwrap();

    let summary = lines.recv_timeout(Duration::from_secs(180));
    let status = script.0.take().map(|mut s| s.wait().unwrap());
    let err = stderr.join().unwrap_or_default();
    let got = match summary {
        Ok(line) => parse(line.as_bytes(), &c),
        Err(_) => panic!(
            "no summary from the script ({status:?}):\n{err}\n{}",
            c.logs()
        ),
    };
    eprintln!("failover: {got}");
    for check in [
        "two_balanced",
        "first_consumed",
        "caught_mid_reconciliation",
        "restarted",
        "converged",
        "all_consumed",
    ] {
        assert_eq!(
            got[check],
            json!(true),
            "{check}: {got}\n{err}\n{}",
            c.logs()
        );
    }
    assert!(
        got["owned_at_kill"].as_u64().unwrap() < 6,
        "killed with every partition owned: {got}"
    );
    // The consumers' own ledger and every ConsumerGroupDescribe sample: never owned twice.
    assert_eq!(got["violations"], json!([]), "{got}");
    assert_eq!(got["samples_owned_twice"], json!([]), "{got}");
    assert!(
        got["samples_after_convergence"].as_u64().unwrap() >= 5,
        "{got}"
    );
    assert_eq!(got["final_owners"], json!([1, 1, 1, 1, 1, 1]), "{got}");
    // Every record consumed; a commit refused while the coordinator moved may redeliver a
    // record (at least once), never skip one.
    assert_eq!(got["distinct"], json!(600), "{got}");
    // Committed offsets at the log end, read from whoever coordinates now.
    let kafka: Vec<std::net::SocketAddr> = NODES.iter().map(|n| c.kafka(*n)).collect();
    let stored = eventually("the group's offsets", Duration::from_secs(30), || {
        let addr = kafka
            .iter()
            .find_map(|a| match find_coordinator(*a, GROUP) {
                Ok((0, id)) => kafka
                    .get(usize::try_from(id).ok()?.checked_sub(1)?)
                    .copied(),
                _ => None,
            })?;
        match fetch_offsets(addr, GROUP) {
            Ok((0, stored)) => Some(stored),
            _ => None,
        }
    });
    let committed: Vec<(String, i32, i64)> = (0..6).map(|p| (TOPIC.to_owned(), p, 100)).collect();
    assert_eq!(stored, committed, "{got}");
    assert!(status.is_some_and(|s| s.success()), "{status:?}\n{err}");
    c.wait_healthy(Duration::from_secs(30));
}
