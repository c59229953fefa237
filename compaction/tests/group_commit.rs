#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Concurrent appenders share fsyncs, and readers never see a partial entry.

use std::sync::Arc;

use bytes::Bytes;
use compaction::{Entry, Log, LogConfig, Offset, TimestampMs};

#[test]
fn concurrent_durable_appends_share_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Log::open(dir.path(), LogConfig::default()).unwrap());
    let threads = 8;
    let per_thread = 50;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    // Offsets are assigned under the writer lock: retry on a lost race.
                    loop {
                        let next = log.next_offset();
                        let entry =
                            Entry::single(next, TimestampMs(0), Bytes::from(format!("{t}-{i}")));
                        match log.append(&[entry], TimestampMs(0)) {
                            Ok(info) => {
                                log.sync_to(info.next_offset).unwrap();
                                assert!(log.durable_offset() >= info.next_offset);
                                break;
                            }
                            Err(compaction::LogError::NonContiguous { .. }) => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let total = (threads * per_thread) as u64;
    assert_eq!(log.next_offset(), Offset(total));
    assert_eq!(log.durable_offset(), Offset(total));
    let syncs = log.sync_count();
    println!("{total} durable appends, {syncs} fdatasyncs");
    assert!(syncs <= total, "never more than one fsync per append");
    assert!(syncs >= 1);
}

#[test]
fn readers_run_while_a_writer_appends() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        max_segment_bytes: 64 << 10,
        max_entry_bytes: 4096,
        ..LogConfig::default()
    };
    let log = Arc::new(Log::open(dir.path(), config).unwrap());
    let writer = {
        let log = Arc::clone(&log);
        std::thread::spawn(move || {
            for i in 0..3000u64 {
                let body = Bytes::from(vec![(i % 251) as u8; 100 + (i % 300) as usize]);
                log.append(
                    &[Entry::single(Offset(i), TimestampMs(i as i64), body)],
                    TimestampMs(0),
                )
                .unwrap();
            }
        })
    };
    let mut reads = 0;
    while !writer.is_finished() || reads == 0 {
        let end = log.next_offset();
        let mut at = Offset(0);
        while at < end {
            let batch = log.read(at, 4096).unwrap();
            for entry in &batch {
                let i = entry.first_offset.0;
                assert_eq!(entry.payload.len(), 100 + (i % 300) as usize);
                assert!(entry.payload.iter().all(|b| *b == (i % 251) as u8));
            }
            at = batch.last().unwrap().next_offset();
        }
        reads += 1;
    }
    writer.join().unwrap();
    assert!(reads > 0);
}
