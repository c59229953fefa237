//! The Raft leader (every group's coordinator) killed with SIGKILL under commit load from real
//! clients: three librdkafka consumers in a group committing after every record, plus a raw
//! committer. Every acknowledged commit is readable from the new coordinator, and the
//! consumers resume from their committed offsets: no record is skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use cluster_support::*;
use common::{python, repo_root};

const TOPIC: &str = "failover";
const PARTITIONS: i32 = 6;
const PER_PARTITION: i64 = 100;
const RAW_GROUP: &str = "raw-committer";
const CONSUMER_GROUP: &str = "failover-consumers";

/// The Kafka address of whoever a live node names as `group`'s coordinator.
fn coordinator(kafka: &[SocketAddr], group: &str) -> Option<SocketAddr> {
    kafka
        .iter()
        .find_map(|addr| match find_coordinator(*addr, group) {
            Ok((0, id)) => kafka
                .get(usize::try_from(id).ok()?.checked_sub(1)?)
                .copied(),
            _ => None,
        })
}

/// Acknowledged raw commits: partition -> highest offset, and when each was acknowledged.
#[derive(Default)]
struct Acks {
    highest: BTreeMap<i32, i64>,
    times: Vec<Instant>,
}

/// Commits increasing offsets round-robin over the partitions, to whoever coordinates, until
/// `stop`; only a commit answered with error code 0 counts as acknowledged.
fn raw_committer(kafka: Vec<SocketAddr>, acks: Arc<Mutex<Acks>>, stop: Arc<AtomicBool>) {
    let mut conn: Option<Conn> = None;
    let mut offset = 0i64;
    while !stop.load(Ordering::SeqCst) {
        let Some(c) = conn.as_mut() else {
            conn = coordinator(&kafka, RAW_GROUP)
                .and_then(|addr| Conn::open(addr, Duration::from_secs(8)).ok());
            if conn.is_none() {
                std::thread::sleep(Duration::from_millis(20));
            }
            continue;
        };
        offset += 1;
        let partition = (offset % i64::from(PARTITIONS)) as i32;
        match commit(c, RAW_GROUP, TOPIC, partition, offset) {
            Ok(0) => {
                let mut a = acks.lock().unwrap();
                a.highest.insert(partition, offset);
                a.times.push(Instant::now());
            }
            // NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, LOAD_IN_PROGRESS, a cut connection:
            // look the coordinator up again, as clients do.
            _ => {
                conn = None;
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

#[test]
fn killing_the_leader_under_commit_load_loses_no_acknowledged_commit() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ScriptCluster::up(dir.path(), &["--group-initial-rebalance-delay-ms", "0"]);
    let kafka: Vec<SocketAddr> = NODES.iter().map(|n| c.kafka(*n)).collect();
    let leader = c.wait_controller(&NODES, Duration::from_secs(30));
    assert_eq!(create_topic(c.kafka(leader), TOPIC, PARTITIONS), Ok(0));

    let acks: Arc<Mutex<Acks>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let committer = {
        let (kafka, acks, stop) = (kafka.clone(), acks.clone(), stop.clone());
        std::thread::spawn(move || raw_committer(kafka, acks, stop))
    };

    let bootstrap = kafka
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut consumers = Command::new(python())
        .arg(repo_root().join("tests/clients/python/cluster_failover_consumers.py"))
        .args([&bootstrap, TOPIC, CONSUMER_GROUP])
        .args([PARTITIONS.to_string(), PER_PARTITION.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    let stdout = consumers.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let stderr = consumers.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut s);
        s
    });
    let next_line = |limit: Duration| lines.recv_timeout(limit).ok();

    // Kill the leader a third of the way through the consumption.
    let kill_at = PER_PARTITION * i64::from(PARTITIONS) / 3;
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let line = next_line(Duration::from_secs(1));
        if let Some(n) = line.as_deref().and_then(|l| l.strip_prefix("progress ")) {
            if n.parse::<i64>().unwrap() >= kill_at {
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the consumers never got a third of the way"
        );
    }
    let acked_before = acks.lock().unwrap().times.len();
    assert!(
        acked_before > 0,
        "the raw committer never got an acknowledgement"
    );
    let killed = Instant::now();
    c.kill9(leader);
    let survivors: Vec<u64> = NODES.into_iter().filter(|n| *n != leader).collect();
    let new_leader = c.wait_controller(&survivors, Duration::from_secs(30));
    let first_ack = eventually(
        "an acknowledged commit on the new leader",
        Duration::from_secs(30),
        || {
            let a = acks.lock().unwrap();
            a.times.iter().find(|t| **t > killed).copied()
        },
    );
    eprintln!(
        "leader {leader} killed; node {new_leader} leads; first acknowledged commit {:?} after the kill",
        first_ack - killed
    );
    // Its partitions' data lives only on it (replication factor 1): bring it back so the
    // consumers can finish.
    c.start(leader);

    // The consumers finish; every record was consumed.
    let summary = loop {
        let Some(line) = next_line(Duration::from_secs(120)) else {
            break None;
        };
        if line.starts_with('{') {
            break Some(serde_json::from_str::<serde_json::Value>(&line).unwrap());
        }
    };
    let Some(summary) = summary else {
        let _ = consumers.kill();
        let _ = consumers.wait();
        panic!(
            "the consumers did not finish:\n{}",
            stderr.join().unwrap_or_default()
        );
    };
    let status = consumers.wait().unwrap();
    assert!(
        status.success(),
        "{status}: {}",
        stderr.join().unwrap_or_default()
    );
    eprintln!("consumers: {summary}");
    let total = PER_PARTITION * i64::from(PARTITIONS);
    assert_eq!(summary["distinct"], total, "records skipped: {summary}");
    assert_eq!(summary["missing"], serde_json::json!([]), "{summary}");

    stop.store(true, Ordering::SeqCst);
    committer.join().unwrap();
    let acks = acks.lock().unwrap();
    assert!(
        acks.times.len() > acked_before,
        "no commit acknowledged after the kill"
    );

    // Every acknowledged commit, raw and from the consumers, reads back from the coordinator.
    let check = |group: &str, acked: &BTreeMap<i32, i64>| {
        let coordinator_addr = eventually("a coordinator", Duration::from_secs(30), || {
            coordinator(&kafka, group)
        });
        let (code, stored) = fetch_offsets(coordinator_addr, group).unwrap();
        assert_eq!(code, 0);
        let stored: BTreeMap<i32, i64> = stored.into_iter().map(|(_, p, o)| (p, o)).collect();
        for (p, want) in acked {
            let got = stored.get(p).copied().unwrap_or(-1);
            assert!(
                got >= *want,
                "{group}/{p}: acknowledged {want}, read back {got}"
            );
        }
    };
    check(RAW_GROUP, &acks.highest);
    let consumer_acked: BTreeMap<i32, i64> = summary["acked"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(p, o)| (p.parse().unwrap(), o.as_i64().unwrap()))
        .collect();
    assert_eq!(
        consumer_acked,
        (0..PARTITIONS).map(|p| (p, PER_PARTITION)).collect(),
        "the consumers' last commits are their last records"
    );
    check(CONSUMER_GROUP, &consumer_acked);
    c.wait_healthy(Duration::from_secs(30));
}
