//! A single node as a real process, killed with SIGKILL while it writes: every acknowledged write
//! must be there after restart (snapshot + log tail), also when the newest snapshot is corrupt.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::process;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process::*;

/// Writers put keys until the node dies; returns the keys whose PUT was acknowledged.
async fn write_until_killed(
    node: &mut KvProc,
    round: &str,
    writers: usize,
    run_for: Duration,
) -> BTreeSet<String> {
    let acked = Arc::new(Mutex::new(BTreeSet::new()));
    let mut tasks = Vec::new();
    for w in 0..writers {
        let addr = node.client_addr.clone();
        let acked = acked.clone();
        let round = round.to_owned();
        tasks.push(tokio::spawn(async move {
            let Ok(mut c) = Client::connect(&addr).await else {
                return;
            };
            for i in 0.. {
                let key = format!("{round}-w{w}-{i}");
                match c.ask(&format!("PUT {key} v{i}")).await {
                    Ok(a) if a == "OK" => {
                        acked.lock().unwrap().insert(key);
                    }
                    Ok(other) => {
                        println!("writer {w} stops on: {other}");
                        return;
                    }
                    Err(_) => return,
                }
            }
        }));
    }
    tokio::time::sleep(run_for).await;
    node.kill9();
    for t in tasks {
        t.await.unwrap();
    }
    Arc::try_unwrap(acked).unwrap().into_inner().unwrap()
}

async fn check_all_present(node: &KvProc, acked: &BTreeSet<String>) {
    wait_until(
        "restarted node to serve reads",
        Duration::from_secs(20),
        || async {
            ask(&node.client_addr, "COUNT")
                .await
                .is_ok_and(|a| a.starts_with("COUNT"))
        },
    )
    .await;
    let mut c = Client::connect(&node.client_addr).await.unwrap();
    for key in acked {
        let got = c.ask(&format!("GET {key}")).await.unwrap();
        assert!(
            got.starts_with("VAL "),
            "acknowledged {key} lost after SIGKILL: {got}"
        );
    }
}

fn newest_snapshot(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut snaps: Vec<_> = std::fs::read_dir(dir.join("snapshots"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
        .collect();
    snaps.sort();
    snaps.pop()
}

async fn sigkill_keeps_acknowledged_writes(store: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("n1");
    let args = ["--snapshot-every", "30"];
    let mut node = KvProc::spawn(1, &dir, store, "127.0.0.1:0", &args);
    let listen = node.raft_addr.clone();
    wait_until("leader", Duration::from_secs(10), || async {
        ask(&node.client_addr, "STATUS")
            .await
            .is_ok_and(|s| status_field(&s, "leader").as_deref() == Some("1"))
    })
    .await;

    // Round 1: kill mid-write, restart, everything acknowledged is there.
    let acked = write_until_killed(&mut node, "r1", 8, Duration::from_millis(1500)).await;
    assert!(
        acked.len() > 200,
        "only {} writes acknowledged before the kill",
        acked.len()
    );
    let node = KvProc::spawn(1, &dir, store, &listen, &args);
    check_all_present(&node, &acked).await;
    let status = ask(&node.client_addr, "STATUS").await.unwrap();
    assert_ne!(
        status_field(&status, "snapshot").as_deref(),
        Some("-"),
        "no snapshot was built: {status}"
    );
    println!(
        "round 1: {} acked writes survived SIGKILL ({status})",
        acked.len()
    );

    // Round 2: more writes, kill, then corrupt the newest snapshot: the node falls back to the
    // previous snapshot and replays the log kept behind it.
    let mut node = node;
    let more = write_until_killed(&mut node, "r2", 8, Duration::from_millis(1500)).await;
    let newest = newest_snapshot(&dir).expect("a snapshot file");
    let mut raw = std::fs::read(&newest).unwrap();
    let mid = raw.len() / 2;
    raw[mid] ^= 0x5a;
    std::fs::write(&newest, raw).unwrap();
    let node = KvProc::spawn(1, &dir, store, &listen, &args);
    assert!(!more.is_empty(), "no write acknowledged in round 2");
    let all: BTreeSet<String> = acked.union(&more).cloned().collect();
    check_all_present(&node, &all).await;
    assert!(
        std::fs::read_dir(dir.join("snapshots"))
            .unwrap()
            .flatten()
            .any(|e| e.path().to_string_lossy().ends_with(".corrupt")),
        "the corrupt snapshot was not set aside"
    );
    println!(
        "round 2: {} acked writes survived SIGKILL and a corrupt newest snapshot",
        all.len()
    );
}

#[test]
fn sled_sigkill_keeps_acknowledged_writes() {
    run_alone(sigkill_keeps_acknowledged_writes("sled"));
}

#[test]
fn segments_sigkill_keeps_acknowledged_writes() {
    run_alone(sigkill_keeps_acknowledged_writes("segments"));
}
