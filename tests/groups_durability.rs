//! Durable before acknowledged: commits from several connections, the broker killed with
//! SIGKILL mid-load, restarted on the same data: every acknowledged commit reads back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::group_wire;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::raw::RawClient;
use common::Cohort;
use group_wire::{commit, create_topic, fetch_all, Commit};

const WRITERS: usize = 4;
const PARTITIONS: i32 = 4;

#[test]
fn every_acknowledged_commit_survives_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut b = Cohort::start(&data, &[]);
    create_topic(&mut RawClient::connect(b.kafka), "t", PARTITIONS);

    // (group, partition) -> highest acknowledged offset.
    let acked: Arc<Mutex<BTreeMap<(String, i32), i64>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (acked, stop, addr) = (acked.clone(), stop.clone(), b.kafka);
            std::thread::spawn(move || {
                let group = format!("g{w}");
                let mut c = RawClient::connect(addr);
                let mut offset = 0i64;
                while !stop.load(Ordering::SeqCst) {
                    offset += 1;
                    let partition = (offset % i64::from(PARTITIONS)) as i32;
                    // A response cut by the kill panics this thread; only answers count.
                    let code = commit(&mut c, &Commit::admin(&group, "t", partition, offset));
                    assert_eq!(code, 0);
                    acked
                        .lock()
                        .unwrap()
                        .insert((group.clone(), partition), offset);
                }
            })
        })
        .collect();
    // Let load build up, then kill while requests are in flight.
    while acked.lock().unwrap().values().sum::<i64>() < 8_000 {
        std::thread::sleep(Duration::from_millis(20));
    }
    b.kill9();
    stop.store(true, Ordering::SeqCst);
    for w in writers {
        let _ = w.join();
    }
    let acked = acked.lock().unwrap().clone();
    assert_eq!(acked.len(), WRITERS * PARTITIONS as usize);

    let b = Cohort::start(&data, &[]);
    let mut c = RawClient::connect(b.kafka);
    for w in 0..WRITERS {
        let group = format!("g{w}");
        let stored: BTreeMap<i32, i64> = fetch_all(&mut c, &group)
            .into_iter()
            .map(|(_, p, o)| (p, o))
            .collect();
        for p in 0..PARTITIONS {
            let want = acked[&(group.clone(), p)];
            let got = stored.get(&p).copied().unwrap_or(-1);
            assert!(
                got >= want,
                "{group}/{p}: acknowledged {want}, read back {got}\nlog:\n{}",
                b.log()
            );
        }
    }
}

/// A group restarted from a snapshot plus log tail comes back as it was (members, generation,
/// offsets), and its member's session timer is re-armed: with no heartbeats the member expires.
#[test]
fn groups_come_back_from_a_snapshot_and_their_sessions_restart() {
    use group_wire::{describe, join_new_member, sync};

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let flags = [
        "--raft-snapshot-every-entries",
        "20",
        "--group-initial-rebalance-delay-ms",
        "0",
    ];
    let mut b = Cohort::start(&data, &flags);
    let mut c = RawClient::connect(b.kafka);
    create_topic(&mut c, "t", 2);
    let joined = join_new_member(&mut c, "g", &["t"]);
    let me = joined.member_id.to_string();
    assert_eq!(sync(&mut c, "g", 1, &me, &[(&me, b"a")]).error_code, 0);
    // Enough single-command entries for several snapshots, and a tail after the last one.
    for offset in 1..=75 {
        let commit_one = Commit {
            group: "g",
            generation: 1,
            member: &me,
            instance: None,
            topic: "t",
            partition: (offset % 2) as i32,
            offset,
            metadata: "",
        };
        assert_eq!(commit(&mut c, &commit_one), 0);
    }
    b.kill9();
    let snapshots = std::fs::read_dir(data.join("raft").join("snapshots"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(snapshots > 0, "no snapshot was written");

    let b = Cohort::start(&data, &flags);
    let mut c = RawClient::connect(b.kafka);
    assert_eq!(
        fetch_all(&mut c, "g"),
        vec![("t".into(), 0, 74), ("t".into(), 1, 75)]
    );
    let described = describe(&mut c, "g");
    assert_eq!(described.group_state.as_str(), "Stable", "{}", b.log());
    assert_eq!(described.members.len(), 1);
    assert_eq!(described.members[0].member_id.to_string(), me);
    // No heartbeats: the session (10 s in join_request) re-armed at restart expires it.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while describe(&mut c, "g").group_state.as_str() != "Empty" {
        assert!(
            std::time::Instant::now() < deadline,
            "the member never expired"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
