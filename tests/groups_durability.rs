//! Durable before acknowledged: commits from several connections, the broker killed with
//! SIGKILL mid-load, restarted on the same data: every acknowledged commit reads back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod group_wire;

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
