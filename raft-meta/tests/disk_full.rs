//! The Raft meta service on a real full disk (a tmpfs with `size=` the test mounts, decision
//! 0112): a log append that meets ENOSPC waits and is retried (the node neither stops nor
//! acknowledges it), new writes are refused with `DiskFull` meanwhile, reads go on, and writing
//! resumes by itself once space is freed; a snapshot build that meets ENOSPC is postponed (the
//! old snapshot kept, the log not purged) and built once there is room.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::tmpfs;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use raft_meta::{Bootstrap, RaftStore, WriteError};
use tmpfs::Tmpfs;
use tokio::net::TcpListener;

const VALUE_BYTES: usize = 8 * 1024;

fn value(i: usize) -> String {
    format!("{i:08}").repeat(VALUE_BYTES / 8)
}

/// One writer, one put at a time until `stop_after` are acknowledged; every acknowledgement
/// recorded, refusals counted.
fn spawn_writer(
    node: Arc<raft_meta::MetaNode<common::kv::KvApp>>,
    acked: Arc<Mutex<BTreeMap<usize, String>>>,
    refused: Arc<Mutex<usize>>,
    stop_after: usize,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for i in 0..100_000 {
            match write_put(&node, &format!("k{i}"), &value(i)).await {
                Ok(_) => {
                    acked.lock().unwrap().insert(i, value(i));
                }
                Err(WriteError::DiskFull(_)) => {
                    *refused.lock().unwrap() += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                // A put that met the full disk inside the log store: not acknowledged within
                // the request timeout, committed later (or never); not counted either way.
                Err(WriteError::Indeterminate(_)) => {}
                Err(e) => panic!("write {i}: {e}"),
            }
            if acked.lock().unwrap().len() >= stop_after {
                return;
            }
        }
    })
}

/// Restarts the node on the same directory and checks every acknowledged put.
async fn restart_and_check(
    node: Arc<raft_meta::MetaNode<common::kv::KvApp>>,
    fs: &Tmpfs,
    addr: std::net::SocketAddr,
    t: raft_meta::Tuning,
    acked: &BTreeMap<usize, String>,
) {
    Arc::try_unwrap(node).ok().unwrap().shutdown().await;
    let listener = TcpListener::bind(addr).await.unwrap();
    let node = start(
        1,
        fs.path(),
        listener,
        RaftStore::Segments,
        Bootstrap::Single,
        t,
    )
    .await;
    wait_for("restarted node to lead", Duration::from_secs(10), || {
        node.is_leader()
    })
    .await;
    for (i, v) in acked {
        assert_eq!(
            get(&node, &format!("k{i}")).await.as_deref(),
            Some(v.as_bytes()),
            "k{i}"
        );
    }
    node.shutdown().await;
}

#[test]
fn below_the_command_reserve_new_writes_are_refused_reads_go_on_and_writes_resume() {
    let Some(fs) = Tmpfs::mount(16 << 20) else {
        return;
    };
    run_alone(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut t = tuning();
        t.command_disk_reserve_bytes = 2 << 20;
        let node = Arc::new(
            start(
                1,
                fs.path(),
                listener,
                RaftStore::Segments,
                Bootstrap::Single,
                t.clone(),
            )
            .await,
        );
        wait_for("single node to lead", Duration::from_secs(5), || {
            node.is_leader()
        })
        .await;
        let log_guard = node
            .space_guards()
            .into_iter()
            .find(|g| g.kind() == "raft-log")
            .unwrap();
        let filler = fs.fill("filler", 3 << 20);

        let acked: Arc<Mutex<BTreeMap<usize, String>>> = Arc::default();
        let refused = Arc::new(Mutex::new(0usize));
        let writer = spawn_writer(node.clone(), acked.clone(), refused.clone(), 400);
        wait_for(
            "the command reserve to be reached",
            Duration::from_secs(30),
            || log_guard.is_full(),
        )
        .await;
        let acked_when_full = acked.lock().unwrap().len();
        assert!(acked_when_full > 20, "only {acked_when_full} puts fit");
        assert!(fs.free_bytes() >= 1 << 20, "the reserve was eaten");

        // While refused: at once, with DiskFull; linearizable reads and status answer.
        let asked = Instant::now();
        let answer = write_put(&node, "while-full", "x").await;
        assert!(matches!(answer, Err(WriteError::DiskFull(_))), "{answer:?}");
        assert!(asked.elapsed() < Duration::from_millis(500));
        assert_eq!(get(&node, "k0").await.unwrap(), value(0));
        assert!(node.status().halted.is_none());
        assert!(node.is_leader());

        std::fs::remove_file(&filler).unwrap();
        let freed = Instant::now();
        wait_for("writes to resume", Duration::from_secs(10), || {
            acked.lock().unwrap().len() > acked_when_full
        })
        .await;
        let resumed_after = freed.elapsed();
        writer.await.unwrap();
        eprintln!(
            "command reserve: {acked_when_full} puts before it was reached, {} refused, first \
             put acknowledged {resumed_after:?} after space was freed",
            refused.lock().unwrap()
        );
        let acked = acked.lock().unwrap().clone();
        restart_and_check(node, &fs, addr, t, &acked).await;
    });
}

#[test]
fn a_log_append_that_meets_enospc_waits_and_goes_through_once_space_is_freed() {
    let Some(fs) = Tmpfs::mount(16 << 20) else {
        return;
    };
    run_alone(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let t = tuning();
        let node = Arc::new(
            start(
                1,
                fs.path(),
                listener,
                RaftStore::Segments,
                Bootstrap::Single,
                t.clone(),
            )
            .await,
        );
        wait_for("single node to lead", Duration::from_secs(5), || {
            node.is_leader()
        })
        .await;
        let log_guard = node
            .space_guards()
            .into_iter()
            .find(|g| g.kind() == "raft-log")
            .unwrap();
        let filler = fs.fill("filler", 1 << 20);

        let acked: Arc<Mutex<BTreeMap<usize, String>>> = Arc::default();
        let refused = Arc::new(Mutex::new(0usize));
        let writer = spawn_writer(node.clone(), acked.clone(), refused.clone(), 300);
        wait_for(
            "the Raft log to meet the full disk",
            Duration::from_secs(30),
            || log_guard.is_full(),
        )
        .await;
        let acked_when_full = acked.lock().unwrap().len();
        assert!(acked_when_full > 20, "only {acked_when_full} puts fit");

        // The append waits in the store: the node neither halts nor stops (openraft would
        // shut down on a failed append), nothing is acknowledged, new commands are refused.
        let answer = write_put(&node, "while-full", "x").await;
        assert!(matches!(answer, Err(WriteError::DiskFull(_))), "{answer:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
        let status = node.status();
        assert!(status.halted.is_none());
        assert_eq!(status.role, "leader");
        assert_eq!(
            acked.lock().unwrap().len(),
            acked_when_full,
            "acknowledged while full"
        );

        std::fs::remove_file(&filler).unwrap();
        let freed = Instant::now();
        wait_for("writes to resume", Duration::from_secs(10), || {
            acked.lock().unwrap().len() > acked_when_full
        })
        .await;
        let resumed_after = freed.elapsed();
        writer.await.unwrap();
        assert!(!log_guard.is_full());
        eprintln!(
            "raft log ENOSPC: {acked_when_full} puts before the disk filled, {} refused, first \
             put acknowledged {resumed_after:?} after space was freed",
            refused.lock().unwrap()
        );
        let acked = acked.lock().unwrap().clone();
        restart_and_check(node, &fs, addr, t, &acked).await;
    });
}

#[test]
fn a_snapshot_build_on_a_full_disk_is_postponed_and_built_once_space_is_freed() {
    let Some(fs) = Tmpfs::mount(16 << 20) else {
        return;
    };
    run_alone(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut t = tuning();
        t.snapshot_every_entries = 1_000_000;
        let node = start(
            1,
            fs.path(),
            listener,
            RaftStore::Segments,
            Bootstrap::Single,
            t,
        )
        .await;
        wait_for("single node to lead", Duration::from_secs(5), || {
            node.is_leader()
        })
        .await;
        for i in 0..100 {
            write_put(&node, &format!("k{i}"), &value(i)).await.unwrap();
        }
        node.trigger_snapshot().await.unwrap();
        wait_for("first snapshot", Duration::from_secs(5), || {
            node.status().snapshot_index.is_some()
        })
        .await;
        let first = node.status().snapshot_index;
        for i in 100..200 {
            write_put(&node, &format!("k{i}"), &value(i)).await.unwrap();
        }
        let purged_before = node.status().purged_index;
        let snapshots = fs.path().join("node-1/snapshots");
        let snapshot_guard = node
            .space_guards()
            .into_iter()
            .find(|g| g.kind() == "snapshot")
            .unwrap();

        // A snapshot of 200 values (> 1.6 MB) cannot fit in the 512 KiB left.
        let filler = fs.fill("filler", 512 << 10);
        node.trigger_snapshot().await.unwrap();
        wait_for(
            "the snapshot build to meet the full disk",
            Duration::from_secs(5),
            || snapshot_guard.is_full(),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let status = node.status();
        assert_eq!(
            status.snapshot_index, first,
            "a snapshot was built on a full disk"
        );
        assert_eq!(status.purged_index, purged_before, "the log was purged");
        assert!(status.halted.is_none());
        assert!(node.is_leader());
        let names: Vec<String> = std::fs::read_dir(&snapshots)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names.len(),
            1,
            "old snapshot kept, no temp file left: {names:?}"
        );
        // The Raft log itself still has room: small writes go on.
        write_put(&node, "small", "1").await.unwrap();

        std::fs::remove_file(&filler).unwrap();
        let freed = Instant::now();
        wait_for("the postponed snapshot", Duration::from_secs(10), || {
            node.status().snapshot_index > first
        })
        .await;
        eprintln!(
            "postponed snapshot built {:?} after space was freed",
            freed.elapsed()
        );
        assert_eq!(get(&node, "k199").await.unwrap(), value(199));
        node.shutdown().await;
    });
}

#[test]
fn a_follower_whose_disk_is_full_holds_nothing_up_and_catches_up_once_space_is_freed() {
    // One tmpfs per node, so one follower's disk can fill while the others' do not.
    let Some(fses) = (0..3)
        .map(|_| Tmpfs::mount(16 << 20))
        .collect::<Option<Vec<_>>>()
    else {
        return;
    };
    run_alone(async {
        let (ls, peers) = listeners(3).await;
        let t = tuning();
        let mut nodes = Vec::new();
        for (i, l) in ls.into_iter().enumerate() {
            let id = i as u64 + 1;
            let b = Bootstrap::Cluster(peers.clone());
            nodes.push(start(id, fses[i].path(), l, RaftStore::Segments, b, t.clone()).await);
        }
        // A settled leader, not the first one elected: at start-up a second election can
        // still supersede the first (seen once with the binary's other tests beside it), and
        // this test is about the elections a full disk must not cause.
        wait_for(
            "all three nodes to agree on a leader and a term",
            Duration::from_secs(20),
            || {
                let seen: Vec<_> = nodes
                    .iter()
                    .map(|n| {
                        let s = n.status();
                        (s.leader.map(|l| l.node_id), s.term)
                    })
                    .collect();
                seen[0].0.is_some() && seen.iter().all(|s| *s == seen[0])
            },
        )
        .await;
        let leader = nodes.iter().position(|n| n.is_leader()).unwrap();
        let follower = (leader + 1) % 3;
        let term = nodes[leader].status().term;
        let guard = nodes[follower]
            .space_guards()
            .into_iter()
            .find(|g| g.kind() == "raft-log")
            .unwrap();
        let filler = fses[follower].fill("filler", 512 << 10);

        // 200 puts of 8 KiB (1.6 MB): more than the follower has room for; the other two make
        // the quorum, so every one is acknowledged.
        let started = Instant::now();
        for i in 0..200 {
            write_put(&nodes[leader], &format!("k{i}"), &value(i))
                .await
                .unwrap();
        }
        let elapsed = started.elapsed();
        wait_for(
            "the follower's log to meet the full disk",
            Duration::from_secs(10),
            || guard.is_full(),
        )
        .await;
        let behind = nodes[follower].status();
        assert!(behind.halted.is_none(), "the full follower halted");
        let leader_applied = nodes[leader].status().applied_index;
        assert!(
            behind.applied_index < leader_applied,
            "the follower kept up on a full disk?"
        );
        assert!(nodes[leader].is_leader(), "leadership moved");
        assert_eq!(nodes[leader].status().term, term, "an election happened");

        std::fs::remove_file(&filler).unwrap();
        let freed = Instant::now();
        wait_for("the follower to catch up", Duration::from_secs(20), || {
            nodes[follower].status().applied_index >= leader_applied
        })
        .await;
        eprintln!(
            "full follower: 200 puts acknowledged in {elapsed:?} without it; it caught up \
             {:?} after space was freed",
            freed.elapsed()
        );
        assert!(!guard.is_full());
        assert_eq!(get(&nodes[leader], "k199").await.unwrap(), value(199));
        for n in nodes {
            n.shutdown().await;
        }
    });
}
