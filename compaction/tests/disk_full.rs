#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The log on a real full disk (a tmpfs with `size=` mounted by the test, decision 0112): an
//! append that meets ENOSPC is refused without a torn frame and without poisoning the log, the
//! guard refuses further appends until space is freed, reads go on, appends resume by themselves
//! once space is back, and every acknowledged entry reads back after reopening.

use crate::tmpfs;

use std::time::{Duration, Instant};

use bytes::Bytes;
use compaction::segment::SEGMENT_HEADER_LEN;
use compaction::{Entry, Log, LogConfig, LogError, Offset, SpaceGuard, TimestampMs};
use tmpfs::Tmpfs;

const ENTRY_PAYLOAD: usize = 10_000;

fn payload(offset: u64) -> Bytes {
    Bytes::from(
        (0..ENTRY_PAYLOAD)
            .map(|j| (offset.wrapping_mul(31).wrapping_add(j as u64) % 251) as u8)
            .collect::<Vec<u8>>(),
    )
}

fn entry(offset: u64) -> Entry {
    Entry::single(Offset(offset), TimestampMs(offset as i64), payload(offset))
}

fn config(max_segment_bytes: u64) -> LogConfig {
    LogConfig {
        max_segment_bytes,
        index_interval_bytes: 4096,
        ..LogConfig::default()
    }
}

/// Every acknowledged entry `0..acked` is there, intact, in order.
fn check_acked(log: &Log, acked: u64) {
    let mut at = 0;
    while at < acked {
        let entries = log.read(Offset(at), 1 << 20).unwrap();
        assert!(!entries.is_empty(), "entry {at} missing");
        for e in entries {
            if e.first_offset.0 >= acked {
                break;
            }
            assert_eq!(e.first_offset.0, at);
            assert_eq!(e.payload, payload(at), "entry {at} damaged");
            at += 1;
        }
    }
}

/// The active segment file holds exactly the published bytes: no half-written frame.
fn assert_no_torn_tail(log: &Log) {
    let active = log.segments().into_iter().last().unwrap();
    let on_disk = std::fs::metadata(&active.path).unwrap().len();
    assert_eq!(
        on_disk, active.size_bytes,
        "the active segment has bytes past the published end"
    );
}

/// Appends durable entries from `next` until one is refused; returns the new end and the error.
fn append_until_refused(log: &Log, mut next: u64) -> (u64, LogError) {
    loop {
        match log.append_durable(&[entry(next)], TimestampMs(next as i64)) {
            Ok(info) => next = info.next_offset.0,
            Err(e) => return (next, e),
        }
        assert!(next < 10_000, "the disk never filled");
    }
}

#[test]
fn a_full_disk_refuses_appends_keeps_reads_and_resumes_once_space_is_freed() {
    let Some(fs) = Tmpfs::mount(8 << 20) else {
        return;
    };
    let dir = fs.path().join("log");
    let guard = SpaceGuard::new("partition-log", fs.path(), 0);
    let index_guard = SpaceGuard::new("index", fs.path(), 0);
    let log = Log::open(&dir, config(256 << 10))
        .unwrap()
        .with_space(guard.clone(), Some(index_guard.clone()));
    let filler = fs.fill("filler", 2 << 20);

    let (acked, error) = append_until_refused(&log, 0);
    assert!(error.is_storage_full(), "refused with {error}");
    assert!(!matches!(error, LogError::Poisoned(_)));
    assert!(guard.is_full());
    assert!(acked > 100, "only {acked} entries fit in 2 MiB");
    assert_eq!(
        log.next_offset().0,
        acked,
        "a refused append left entries behind"
    );
    assert_eq!(log.durable_offset().0, acked);
    assert_no_torn_tail(&log);

    // While full: refused up front (nothing written), reads unaffected.
    let refused = log.append(&[entry(acked)], TimestampMs(0)).unwrap_err();
    assert!(matches!(refused, LogError::StorageFull(_)), "{refused}");
    assert!(guard.refused_count() >= 1);
    check_acked(&log, acked);
    assert_no_torn_tail(&log);

    // Space freed: the guard notices within its recheck period, appends go on.
    std::fs::remove_file(&filler).unwrap();
    let freed = Instant::now();
    while guard.recheck() {
        assert!(freed.elapsed() < Duration::from_secs(5), "never resumed");
        std::thread::sleep(Duration::from_millis(10));
    }
    let resumed_after = freed.elapsed();
    eprintln!("resumed {resumed_after:?} after space was freed");
    let mut next = acked;
    for _ in 0..50 {
        next = log
            .append_durable(&[entry(next)], TimestampMs(0))
            .unwrap()
            .next_offset
            .0;
    }
    assert_eq!(guard.full_episodes(), 1);
    drop(log);

    let reopened = Log::open(&dir, config(256 << 10)).unwrap();
    assert_eq!(
        reopened.next_offset().0,
        next,
        "recovery cut or found extra entries"
    );
    check_acked(&reopened, next);
}

#[test]
fn a_roll_that_meets_a_full_disk_is_retried_once_space_is_freed() {
    let Some(fs) = Tmpfs::mount(8 << 20) else {
        return;
    };
    let dir = fs.path().join("log");
    let frame = entry(0).frame_len();
    // Exactly four entries per segment: the fifth append must roll.
    let segment_bytes = SEGMENT_HEADER_LEN as u64 + 4 * frame;
    let guard = SpaceGuard::new("raft-log", fs.path(), 0);
    let index_guard = SpaceGuard::new("index", fs.path(), 0);
    let log = Log::open(&dir, config(segment_bytes))
        .unwrap()
        .with_space(guard.clone(), Some(index_guard.clone()));
    for i in 0..4 {
        log.append_durable(&[entry(i)], TimestampMs(0)).unwrap();
    }
    let filler = fs.fill_completely("filler");

    // The roll seals the segment (fdatasync: fine), then cannot write the index files nor
    // create the next segment.
    let error = log.append_durable(&[entry(4)], TimestampMs(0)).unwrap_err();
    assert!(error.is_storage_full(), "refused with {error}");
    assert!(guard.is_full());
    assert!(
        index_guard.is_full(),
        "the index files' failure is told to their guard"
    );
    assert_eq!(log.next_offset().0, 4);
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.len(),
        1,
        "a half-created segment or index file was left: {names:?}"
    );
    check_acked(&log, 4);

    std::fs::remove_file(&filler).unwrap();
    let freed = Instant::now();
    while guard.recheck() {
        assert!(freed.elapsed() < Duration::from_secs(5), "never resumed");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!index_guard.recheck(), "the index guard resumes too");
    for i in 4..20 {
        log.append_durable(&[entry(i)], TimestampMs(0)).unwrap();
    }
    assert!(log.segments().len() >= 5);
    drop(log);
    let reopened = Log::open(&dir, config(segment_bytes)).unwrap();
    assert_eq!(reopened.next_offset().0, 20);
    check_acked(&reopened, 20);
}

#[test]
fn a_reserve_refuses_appends_before_the_disk_is_full() {
    let Some(fs) = Tmpfs::mount(8 << 20) else {
        return;
    };
    let reserve = 3 << 20;
    let guard = SpaceGuard::new("partition-log", fs.path(), reserve);
    let log = Log::open(fs.path().join("log"), config(1 << 20))
        .unwrap()
        .with_space(guard.clone(), None);
    let (acked, error) = append_until_refused(&log, 0);
    assert!(matches!(error, LogError::StorageFull(_)), "{error}");
    let free = fs.free_bytes();
    assert!(
        free >= reserve,
        "the reserve was eaten: {free} bytes free, reserve {reserve}"
    );
    // Something else (the Raft log, in the broker) still has room to write.
    std::fs::write(fs.path().join("other"), vec![1u8; 1 << 20]).unwrap();
    std::fs::remove_file(fs.path().join("other")).unwrap();
    assert_no_torn_tail(&log);
    check_acked(&log, acked);
}

#[test]
fn a_snapshot_that_meets_a_full_disk_leaves_no_temp_file_and_the_previous_one_stands() {
    let Some(fs) = Tmpfs::mount(4 << 20) else {
        return;
    };
    let dir = fs.path().join("snapshots");
    std::fs::create_dir(&dir).unwrap();
    let write = |name: &str, records: usize| -> Result<(), compaction::SnapshotError> {
        let mut w = compaction::SnapshotWriter::create(
            &dir,
            name,
            b"meta",
            compaction::SnapshotLimits::default(),
        )?;
        for i in 0..records {
            w.push(
                format!("key-{i}").as_bytes(),
                Some(&[7u8; 1000]),
                TimestampMs(0),
            )?;
        }
        w.finish().map(|_| ())
    };
    write("old.snap", 100).unwrap();
    let _filler = fs.fill("filler", 256 << 10);
    let error = write("new.snap", 2_000).unwrap_err();
    assert!(error.is_storage_full(), "{error}");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["old.snap".to_owned()]);
    let mut reader = compaction::SnapshotReader::open(&dir.join("old.snap")).unwrap();
    let mut count = 0;
    while reader.next_record().unwrap().is_some() {
        count += 1;
    }
    assert_eq!(count, 100);
}

#[test]
fn a_small_state_file_that_meets_a_full_disk_keeps_the_previous_one_and_no_temp_file() {
    let Some(fs) = Tmpfs::mount(1 << 20) else {
        return;
    };
    compaction::write_file_atomically(fs.path(), "state", b"vote 1").unwrap();
    let _filler = fs.fill_completely("filler");
    let error = compaction::write_file_atomically(fs.path(), "state", &[9u8; 8192]).unwrap_err();
    assert!(error.is_storage_full(), "{error}");
    assert!(
        !fs.path().join("state.tmp").exists(),
        "temp file left behind"
    );
    let kept = compaction::read_file_checked(fs.path(), "state")
        .unwrap()
        .unwrap();
    assert_eq!(&kept[..], b"vote 1");
}
