//! Start-up never deletes partition data on stale knowledge (issue 9, item 1).
//!
//! A node used to prune, at start-up, every partition directory whose topic its applied state
//! did not know, after applying only up to the commit index its own log store had recorded:
//! a mark written lazily, so a topic created and produced to just before a SIGKILL was deleted
//! at restart. Here, on a real three-node cluster:
//!
//! - a topic is created while offset commits keep the Raft log busy (so the lazily written
//!   commit marks lag behind its creation), produced to with acks=all on every partition, and
//!   then one node, the whole cluster, or a node that joined with `--join` is SIGKILLed and
//!   restarted: every acknowledged record reads back;
//! - a deleted topic's directories are removed on every node once the deletion is applied,
//!   a node that was down during the deletion included;
//! - a directory no topic owns is moved aside under `stray/`, intact, with one log line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cluster_support::*;
use common::{run, Cohort};

const RECORDS_PER_PARTITION: usize = 5;

/// What a test wrote: each partition's owner (node id) and acknowledged values.
struct Written {
    topic: String,
    owners: Vec<i32>,
    values: Vec<Vec<Vec<u8>>>,
}

/// Admin offset commits to `coordinator`, back to back until `stop`: each is a Raft write,
/// so the commit index keeps moving while a topic is created next to them.
fn start_committing(
    coordinator: SocketAddr,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut conn = Conn::open(coordinator, Duration::from_secs(10)).unwrap();
        let mut acked = 0;
        let mut offset = 0;
        while !stop.load(Ordering::SeqCst) {
            offset += 1;
            if commit(&mut conn, "busy", "busy-topic", 0, offset) == Ok(0) {
                acked += 1;
            }
        }
        acked
    })
}

/// Creates `topic` on `leader` amid a stream of commits, then produces (acks=all) to every
/// partition at its owner, `kafka(owner)` giving the owner's address.
fn create_and_write(
    leader: SocketAddr,
    kafka: &dyn Fn(i32) -> SocketAddr,
    topic: &str,
    partitions: i32,
) -> Written {
    // 36: TOPIC_ALREADY_EXISTS, from an earlier call.
    let busy = create_topic(leader, "busy-topic", 1);
    assert!(matches!(busy, Ok(0 | 36)), "busy-topic: {busy:?}");
    let stop = Arc::new(AtomicBool::new(false));
    let committer = start_committing(leader, stop.clone());
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        create_topic(leader, topic, partitions),
        Ok(0),
        "create {topic}"
    );
    stop.store(true, Ordering::SeqCst);
    assert!(committer.join().unwrap() > 0, "no commit was acknowledged");
    let owners = eventually("partition leaders", Duration::from_secs(20), || {
        partition_leaders(leader, topic)
            .ok()
            .filter(|l| l.len() == partitions as usize && l.iter().all(|n| *n > 0))
    });
    let mut values = Vec::new();
    for (p, owner) in owners.iter().enumerate() {
        let p = p as i32;
        let mut acked = Vec::new();
        for i in 0..RECORDS_PER_PARTITION {
            let value = format!("{topic}/{p}/{i}").into_bytes();
            // A node answers UNKNOWN_TOPIC_OR_PARTITION until it has applied the creation;
            // a refused produce wrote nothing, so it is simply sent again.
            eventually(
                &format!("produce to {topic}-{p} at node {owner}"),
                Duration::from_secs(20),
                || match produce(kafka(*owner), topic, p, &value) {
                    Ok(0) => Some(()),
                    Ok(_) => None,
                    Err(e) => panic!("produce to {topic}-{p} at node {owner}: {e}"),
                },
            );
            acked.push(value);
        }
        values.push(acked);
    }
    Written {
        topic: topic.to_owned(),
        owners,
        values,
    }
}

/// Every acknowledged record of `w` reads back from its partition's owner.
fn assert_readable(w: &Written, kafka: &dyn Fn(i32) -> SocketAddr, logs: &dyn Fn() -> String) {
    for (p, owner) in w.owners.iter().enumerate() {
        let p = p as i32;
        let mut last = None;
        let read = (0..400).find_map(|_| {
            let answer = fetch_values(kafka(*owner), &w.topic, p, 0);
            let done = matches!(&answer, Ok((0, v)) if v.len() >= w.values[p as usize].len());
            last = Some(answer);
            if done {
                return last.clone();
            }
            std::thread::sleep(Duration::from_millis(50));
            None
        });
        let Some(Ok((0, values))) = read else {
            panic!(
                "{}-{p} at node {owner} after the restart: {last:?}\n{}",
                w.topic,
                logs()
            );
        };
        assert_eq!(
            values, w.values[p as usize],
            "{}-{p} at node {owner} after the restart",
            w.topic
        );
    }
}

/// Node id -> Kafka address, without holding on to the cluster (which tests kill and restart).
fn kafka_of(c: &ScriptCluster) -> impl Fn(i32) -> SocketAddr {
    let base = c.base;
    move |n| SocketAddr::from(([127, 0, 0, 1], base + n as u16))
}

fn partition_dir(node_dir: &Path, topic: &str, p: i32) -> PathBuf {
    node_dir.join("topics").join(format!("{topic}-{p}"))
}

#[test]
fn partitions_written_just_before_a_sigkill_survive_a_node_and_a_cluster_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ScriptCluster::up(dir.path(), &[]);
    let leader = c.wait_controller(&NODES, Duration::from_secs(30));
    let kafka = kafka_of(&c);

    // One node killed right after: a follower that owns a partition.
    let first = create_and_write(c.kafka(leader), &kafka, "fresh", 3);
    let victim = first
        .owners
        .iter()
        .map(|n| *n as u64)
        .find(|n| *n != leader)
        .expect("a partition on a follower");
    c.kill9(victim);
    c.start(victim);
    c.wait_healthy(Duration::from_secs(60));
    assert_readable(&first, &kafka, &|| c.logs());

    // The whole cluster killed at once, right after another topic was written.
    let leader = c.wait_controller(&NODES, Duration::from_secs(30));
    let second = create_and_write(c.kafka(leader), &kafka, "fresher", 3);
    for n in NODES {
        c.kill9(n);
    }
    for n in NODES {
        c.start(n);
    }
    c.wait_healthy(Duration::from_secs(60));
    assert_readable(&first, &kafka, &|| c.logs());
    assert_readable(&second, &kafka, &|| c.logs());
}

/// `cohort cluster ARGS` with the cluster's secret.
fn cohort_cluster(c: &ScriptCluster, args: &[&str]) -> (i32, String) {
    let out = run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg("cluster")
            .args(args)
            .arg("--cluster-secret-file")
            .arg(c.secret_file()),
        Duration::from_secs(90),
    );
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn a_node_that_joined_keeps_its_partitions_across_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let c = ScriptCluster::up(dir.path(), &[]);
    c.wait_controller(&NODES, Duration::from_secs(30));
    let raft4 = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let node4_dir = dir.path().join("node-4");
    let secret = c.secret_file();
    let node4_args = [
        "--node-id",
        "4",
        "--raft",
        &raft4,
        "--join",
        "--cluster-secret-file",
        secret.to_str().unwrap(),
    ];
    let mut fourth = Cohort::start(&node4_dir, &node4_args);
    let (code, out) = cohort_cluster(
        &c,
        &[
            "add-voter",
            "--bootstrap",
            &c.raft(1).to_string(),
            "--node-id",
            "4",
            "--node-raft",
            &raft4,
            "--node-kafka",
            &fourth.bootstrap(),
        ],
    );
    assert_eq!(code, 0, "{out}\n{}", fourth.log());
    let leader = c.wait_controller(&NODES, Duration::from_secs(30));

    let fourth_kafka = fourth.kafka;
    let kafka = |n: i32| {
        if n == 4 {
            fourth_kafka
        } else {
            c.kafka(n as u64)
        }
    };
    let written = create_and_write(c.kafka(leader), &kafka, "joined", 4);
    assert!(
        written.owners.contains(&4),
        "no partition on node 4: {:?}",
        written.owners
    );
    fourth.kill9();
    let fourth = Cohort::start(&node4_dir, &node4_args);
    let restarted = fourth.kafka;
    let kafka = |n: i32| {
        if n == 4 {
            restarted
        } else {
            c.kafka(n as u64)
        }
    };
    assert_readable(&written, &kafka, &|| {
        format!("{}\n{}", c.logs(), fourth.log())
    });
}

#[test]
fn a_deleted_topic_is_removed_everywhere_once_the_deletion_is_applied() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ScriptCluster::up(dir.path(), &[]);
    let leader = c.wait_controller(&NODES, Duration::from_secs(30));
    let kafka = kafka_of(&c);
    let doomed = create_and_write(c.kafka(leader), &kafka, "doomed", 3);
    let kept = create_and_write(c.kafka(leader), &kafka, "kept", 3);
    let node_dir = |n: i32| dir.path().join(format!("node-{n}"));
    for (p, owner) in doomed.owners.iter().enumerate() {
        assert!(partition_dir(&node_dir(*owner), "doomed", p as i32).is_dir());
    }

    // A partition owner is down while the topic is deleted; it learns of it after restart.
    let absent = doomed
        .owners
        .iter()
        .copied()
        .find(|n| *n as u64 != leader)
        .expect("a partition on a follower");
    c.kill9(absent as u64);
    assert_eq!(delete_topic(c.kafka(leader), "doomed"), Ok(0));
    for (p, owner) in doomed.owners.iter().enumerate() {
        if *owner == absent {
            continue;
        }
        let gone = partition_dir(&node_dir(*owner), "doomed", p as i32);
        eventually(
            &format!("{} removed", gone.display()),
            Duration::from_secs(20),
            || (!gone.exists()).then_some(()),
        );
    }
    c.start(absent as u64);
    c.wait_healthy(Duration::from_secs(60));
    for (p, owner) in doomed.owners.iter().enumerate() {
        let gone = partition_dir(&node_dir(*owner), "doomed", p as i32);
        eventually(
            &format!("{} removed after the restart", gone.display()),
            Duration::from_secs(30),
            || (!gone.exists()).then_some(()),
        );
        // Removed because the deletion was applied, not set aside as unknown.
        let stray = node_dir(*owner).join("stray");
        let set_aside = std::fs::read_dir(&stray)
            .map(|d| d.flatten().count())
            .unwrap_or(0);
        assert_eq!(
            set_aside,
            0,
            "{} holds {set_aside} entries",
            stray.display()
        );
    }
    assert_readable(&kept, &kafka, &|| c.logs());
}

/// A planted directory no topic owns (a marker naming an unknown topic id, or no marker).
fn plant(topics_dir: &Path, name: &str, marker: Option<&str>) -> Vec<u8> {
    let dir = topics_dir.join(name);
    std::fs::create_dir_all(dir.join("log")).unwrap();
    let content = format!("bytes of {name}").into_bytes();
    std::fs::write(dir.join("log").join("00000000000000000000.log"), &content).unwrap();
    if let Some(marker) = marker {
        std::fs::write(dir.join("partition.json"), marker).unwrap();
    }
    content
}

#[test]
fn a_directory_no_topic_owns_is_moved_aside_intact_with_one_log_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &[]);
    let mut raw = common::raw::RawClient::connect(broker.kafka);
    assert_eq!(raw.create_topic("kept", 1, &[]), 0);
    let batch = common::raw::batches::batch(&[b"kept value"], 0, None);
    assert_eq!(raw.produce("kept", 0, batch).error_code, 0);
    drop(raw);
    broker.terminate();

    let topics = data.join("topics");
    let ghost = plant(
        &topics,
        "ghost-0",
        Some(
            r#"{"topic":"ghost","topic_id":"7f0c6f2e-5a0e-4c53-9a52-1d2b3c4d5e6f","partition":0}"#,
        ),
    );
    let bare = plant(&topics, "bare-0", None);

    let broker = Cohort::start(&data, &[]);
    let stray = data.join("stray");
    for (name, content) in [("ghost-0", &ghost), ("bare-0", &bare)] {
        let moved = eventually(
            &format!("{name} moved under stray/"),
            Duration::from_secs(20),
            || {
                std::fs::read_dir(&stray).ok()?.flatten().find_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.starts_with(name).then(|| e.path())
                })
            },
        );
        assert!(!topics.join(name).exists(), "{name} still under topics/");
        assert_eq!(
            std::fs::read(moved.join("log").join("00000000000000000000.log")).unwrap(),
            *content,
            "{name} not intact"
        );
        let log = broker.log();
        let lines = log.lines().filter(|l| l.contains(name)).count();
        assert_eq!(lines, 1, "{name} reported {lines} times:\n{log}");
    }
    let (code, values) = fetch_values(broker.kafka, "kept", 0, 0).unwrap();
    assert_eq!((code, values), (0, vec![b"kept value".to_vec()]));
}
