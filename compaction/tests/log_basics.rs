#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The log's behaviour through its public API, on real files in temp dirs.

use bytes::Bytes;
use compaction::{
    Entry, Log, LogConfig, LogError, Offset, RetentionPolicy, TimestampMs, TombstonePolicy,
};

fn small_config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 1024,
        index_interval_bytes: 128,
        max_entry_bytes: 512,
        max_key_bytes: 64,
        ..LogConfig::default()
    }
}

fn payload(i: u64) -> Bytes {
    Bytes::from(format!(
        "payload-{i:06}-{}",
        "x".repeat((i % 7) as usize * 10)
    ))
}

fn append_singles(log: &Log, from: u64, count: u64, ts: i64) {
    for i in from..from + count {
        log.append(
            &[Entry::single(
                Offset(i),
                TimestampMs(ts + i as i64),
                payload(i),
            )],
            TimestampMs(0),
        )
        .unwrap();
    }
}

fn read_all(log: &Log) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut at = log.start_offset();
    loop {
        let batch = log.read(at, 300).unwrap();
        let Some(last) = batch.last() else { break };
        at = last.next_offset();
        out.extend(batch);
    }
    out
}

#[test]
fn append_read_roll_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let log = Log::open(dir.path(), small_config()).unwrap();
        assert_eq!(
            (log.start_offset(), log.next_offset()),
            (Offset(0), Offset(0))
        );
        append_singles(&log, 0, 100, 1000);
        assert_eq!(log.next_offset(), Offset(100));
        assert!(log.segments().len() > 3, "small segments roll");
        log.sync().unwrap();
        assert_eq!(log.durable_offset(), Offset(100));
    }
    let log = Log::open(dir.path(), small_config()).unwrap();
    assert_eq!(log.next_offset(), Offset(100));
    assert_eq!(log.durable_offset(), Offset(100));
    let all = read_all(&log);
    assert_eq!(all.len(), 100);
    for (i, entry) in all.iter().enumerate() {
        assert_eq!(entry.first_offset, Offset(i as u64));
        assert_eq!(entry.payload, payload(i as u64));
        assert_eq!(entry.max_timestamp_ms, TimestampMs(1000 + i as i64));
    }
    // Reads from every offset start at that offset.
    for i in 0..100 {
        let got = log.read(Offset(i), 1).unwrap();
        assert_eq!(got.len(), 1, "at least one entry even past max_bytes");
        assert_eq!(got[0].first_offset, Offset(i));
    }
    assert!(log.read(Offset(100), 1000).unwrap().is_empty());
    assert!(matches!(
        log.read(Offset(101), 10),
        Err(LogError::OffsetOutOfRange { .. })
    ));
}

#[test]
fn reopen_with_index_files_and_without_verification() {
    let dir = tempfile::tempdir().unwrap();
    {
        let log = Log::open(dir.path(), small_config()).unwrap();
        append_singles(&log, 0, 80, 0);
    }
    let fast = LogConfig {
        verify_sealed_on_open: false,
        ..small_config()
    };
    let index_files = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "index")
        })
        .count();
    assert!(index_files > 0);
    let log = Log::open(dir.path(), fast.clone()).unwrap();
    assert_eq!(read_all(&log).len(), 80);
    assert_eq!(
        log.find_by_timestamp(TimestampMs(33))
            .unwrap()
            .unwrap()
            .first_offset,
        Offset(33)
    );
    drop(log);
    // A stale index file (here: damaged) is ignored and rebuilt, never trusted.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "index") {
            let mut bytes = std::fs::read(&path).unwrap();
            let last = bytes.len() - 5;
            bytes[last] ^= 0xff;
            std::fs::write(&path, bytes).unwrap();
        }
    }
    let log = Log::open(dir.path(), fast).unwrap();
    assert_eq!(read_all(&log).len(), 80);
}

#[test]
fn non_contiguous_appends_and_limits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), small_config()).unwrap();
    // An empty log may start anywhere.
    log.append(
        &[Entry::single(Offset(500), TimestampMs(0), payload(0))],
        TimestampMs(0),
    )
    .unwrap();
    assert_eq!(log.start_offset(), Offset(500));
    assert!(matches!(
        log.append(
            &[Entry::single(Offset(502), TimestampMs(0), payload(0))],
            TimestampMs(0)
        ),
        Err(LogError::NonContiguous { .. })
    ));
    assert!(matches!(
        log.append(
            &[Entry::single(
                Offset(501),
                TimestampMs(0),
                Bytes::from(vec![0u8; 600])
            )],
            TimestampMs(0)
        ),
        Err(LogError::EntryTooLarge { .. })
    ));
    assert!(matches!(
        log.append(
            &[Entry::keyed(
                Offset(501),
                TimestampMs(0),
                Bytes::from(vec![1u8; 65]),
                None
            )],
            TimestampMs(0)
        ),
        Err(LogError::KeyTooLarge { .. })
    ));
    assert!(matches!(
        log.append(
            &[Entry::batch(
                Offset(501),
                Offset(500),
                TimestampMs(0),
                payload(0)
            )],
            TimestampMs(0)
        ),
        Err(LogError::InvalidEntry(_))
    ));
    assert!(matches!(
        log.append(&[], TimestampMs(0)),
        Err(LogError::InvalidEntry(_))
    ));
    assert_eq!(log.next_offset(), Offset(501));
    drop(log);
    let log = Log::open(dir.path(), small_config()).unwrap();
    assert_eq!(
        (log.start_offset(), log.next_offset()),
        (Offset(500), Offset(501))
    );
}

#[test]
fn batches_spanning_offsets_are_found_by_any_offset_inside() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), small_config()).unwrap();
    let mut next = 0;
    for i in 0..30u64 {
        let count = i % 5 + 1;
        log.append(
            &[Entry::batch(
                Offset(next),
                Offset(next + count - 1),
                TimestampMs(i as i64),
                payload(i),
            )],
            TimestampMs(0),
        )
        .unwrap();
        next += count;
    }
    for offset in 0..next {
        let got = log.read(Offset(offset), 1).unwrap();
        assert!(got[0].first_offset <= Offset(offset) && Offset(offset) <= got[0].last_offset);
    }
}

#[test]
fn time_index_and_time_roll() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        segment_ms: Some(100),
        max_segment_bytes: 4096,
        ..small_config()
    };
    let log = Log::open(dir.path(), config).unwrap();
    // Timestamps not monotonic: 0, 10, 5, 20, 15, ...
    for i in 0..40u64 {
        let ts = (i as i64 / 2) * 10 + if i % 2 == 0 { 5 } else { 0 };
        log.append(
            &[Entry::single(
                Offset(i),
                TimestampMs(ts),
                Bytes::from_static(b"x"),
            )],
            TimestampMs(0),
        )
        .unwrap();
    }
    assert_eq!(
        log.segments().len(),
        1,
        "tiny entries, no time passing: one segment"
    );
    for target in [-5i64, 0, 5, 6, 50, 51, 195, 196] {
        let expected = read_all(&log)
            .into_iter()
            .find(|e| e.max_timestamp_ms >= TimestampMs(target))
            .map(|e| e.first_offset);
        let got = log
            .find_by_timestamp(TimestampMs(target))
            .unwrap()
            .map(|e| e.first_offset);
        assert_eq!(got, expected, "target {target}");
    }
    assert_eq!(
        log.find_max_timestamp().unwrap().unwrap().first_offset,
        Offset(38)
    );
    // Time passes: the next append rolls, the one after does not.
    log.append(
        &[Entry::single(
            Offset(40),
            TimestampMs(0),
            Bytes::from_static(b"x"),
        )],
        TimestampMs(100),
    )
    .unwrap();
    log.append(
        &[Entry::single(
            Offset(41),
            TimestampMs(0),
            Bytes::from_static(b"x"),
        )],
        TimestampMs(150),
    )
    .unwrap();
    assert_eq!(log.segments().len(), 2);
}

#[test]
fn retention_by_bytes_and_age_never_deletes_the_active_segment() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), small_config()).unwrap();
    append_singles(&log, 0, 100, 0);
    let before = log.segments();
    let by_age = log
        .apply_retention(
            RetentionPolicy {
                max_bytes: None,
                max_age_ms: Some(1000),
            },
            TimestampMs(1050),
        )
        .unwrap();
    // Entries with ts < 50 are older than 1000 ms; a segment goes when its newest entry is.
    let expected: Vec<_> = before
        .iter()
        .take_while(|s| !s.active && s.max_timestamp.is_some_and(|t| 1050 - t.0 > 1000))
        .collect();
    assert_eq!(by_age.segments, expected.len());
    assert_eq!(log.start_offset(), before[expected.len()].base_offset);
    let by_size = log
        .apply_retention(
            RetentionPolicy {
                max_bytes: Some(1500),
                max_age_ms: None,
            },
            TimestampMs(0),
        )
        .unwrap();
    assert!(by_size.segments > 0);
    assert!(log.size_bytes() >= 1500 || log.segments().len() == 1);
    let everything = log
        .apply_retention(
            RetentionPolicy {
                max_bytes: Some(0),
                max_age_ms: Some(0),
            },
            TimestampMs(i64::MAX),
        )
        .unwrap();
    assert!(everything.start_offset <= Offset(99));
    assert_eq!(log.segments().len(), 1);
    assert_eq!(log.next_offset(), Offset(100));
    let remaining = read_all(&log);
    assert_eq!(remaining.last().unwrap().first_offset, Offset(99));
    drop(log);
    let log = Log::open(dir.path(), small_config()).unwrap();
    assert_eq!(read_all(&log), remaining);
}

#[test]
fn truncate_and_purge_like_a_raft_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), small_config()).unwrap();
    append_singles(&log, 1, 120, 0);
    log.sync().unwrap();
    assert_eq!(log.truncate_from(Offset(90)).unwrap(), Offset(90));
    assert_eq!(log.next_offset(), Offset(90));
    assert!(log.durable_offset() <= Offset(90));
    append_singles(&log, 90, 10, 5000);
    assert_eq!(
        log.read(Offset(95), 1).unwrap()[0].max_timestamp_ms,
        TimestampMs(5095)
    );
    let purged = log.purge_to(Offset(50)).unwrap();
    assert!(purged.start_offset <= Offset(50) && purged.start_offset > Offset(1));
    assert_eq!(log.start_offset(), purged.start_offset);
    assert!(matches!(
        log.read(Offset(1), 10),
        Err(LogError::OffsetOutOfRange { .. })
    ));
    drop(log);
    let log = Log::open(dir.path(), small_config()).unwrap();
    assert_eq!(log.start_offset(), purged.start_offset);
    let all = read_all(&log);
    assert_eq!(all.first().unwrap().first_offset, purged.start_offset);
    assert_eq!(all.last().unwrap().first_offset, Offset(99));
    // Truncating to the start empties the log but keeps its start.
    let start = log.start_offset();
    assert_eq!(log.truncate_from(start).unwrap(), start);
    assert!(read_all(&log).is_empty());
    drop(log);
    let log = Log::open(dir.path(), small_config()).unwrap();
    assert_eq!((log.start_offset(), log.next_offset()), (start, start));
}

#[test]
fn compaction_keeps_latest_per_key_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), small_config()).unwrap();
    for i in 0..200u64 {
        let key = Bytes::from(format!("k{}", i % 10));
        let value = (i % 13 != 0).then(|| Bytes::from(format!("v{i}")));
        log.append(
            &[Entry::keyed(Offset(i), TimestampMs(i as i64), key, value)],
            TimestampMs(0),
        )
        .unwrap();
    }
    let before = read_all(&log);
    let outcome = log
        .compact(TombstonePolicy {
            now_ms: TimestampMs(1000),
            tombstone_retention_ms: 10,
        })
        .unwrap();
    assert!(outcome.records_removed > 0);
    let after = read_all(&log);
    assert!(after.len() < before.len());
    assert_eq!(log.next_offset(), Offset(200));
    assert_eq!(log.start_offset(), Offset(0));
    let to_records = |entries: &[Entry]| -> Vec<compaction::KeyedRecord> {
        entries
            .iter()
            .map(|e| compaction::KeyedRecord {
                offset: e.first_offset,
                timestamp_ms: e.max_timestamp_ms,
                key: e.key.clone().unwrap(),
                value: e.value().cloned(),
            })
            .collect()
    };
    assert_eq!(
        compaction::replay(&to_records(&after)),
        compaction::replay(&to_records(&before))
    );
    // Appends keep going after compaction, and reopen sees the same log.
    log.append(
        &[Entry::keyed(
            Offset(200),
            TimestampMs(0),
            Bytes::from_static(b"k1"),
            None,
        )],
        TimestampMs(0),
    )
    .unwrap();
    let after = read_all(&log);
    drop(log);
    let log = Log::open(dir.path(), small_config()).unwrap();
    assert_eq!(read_all(&log), after);
    // Reads inside a compaction gap return the next surviving entry.
    for offset in 0..200u64 {
        let got = log.read(Offset(offset), 1).unwrap();
        let expected = after
            .iter()
            .find(|e| e.last_offset >= Offset(offset))
            .unwrap();
        assert_eq!(&got[0], expected);
    }
}

#[test]
fn stale_index_files_of_a_rewritten_segment_are_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let fast = LogConfig {
        verify_sealed_on_open: false,
        ..small_config()
    };
    let entry =
        |i: u64, ts: i64| Entry::single(Offset(i), TimestampMs(ts), Bytes::from(vec![7u8; 40]));
    let log = Log::open(dir.path(), fast.clone()).unwrap();
    for i in 0..60 {
        log.append(&[entry(i, i as i64)], TimestampMs(0)).unwrap();
    }
    let first = log.segments()[0].clone();
    let index = first.path.with_extension("index");
    let time_index = first.path.with_extension("timeindex");
    let stale = (
        std::fs::read(&index).unwrap(),
        std::fs::read(&time_index).unwrap(),
    );
    // Rewrite the first segment with entries of the same offsets and sizes, other timestamps.
    log.truncate_from(Offset(1)).unwrap();
    for i in 1..60 {
        log.append(&[entry(i, 1000 + i as i64)], TimestampMs(0))
            .unwrap();
    }
    assert_eq!(log.segments()[0].size_bytes, first.size_bytes);
    drop(log);
    std::fs::write(&index, &stale.0).unwrap();
    std::fs::write(&time_index, &stale.1).unwrap();
    let log = Log::open(dir.path(), fast).unwrap();
    let found = log.find_by_timestamp(TimestampMs(1001)).unwrap().unwrap();
    assert_eq!(found.first_offset, Offset(1));
    assert_eq!(
        log.segments()[0].max_timestamp,
        Some(TimestampMs(1000 + first.next_offset.0 as i64 - 1))
    );
}

#[test]
fn reset_restarts_the_log_past_its_end_and_destroy_removes_it() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("topics").join("t-0");
    let log = Log::open(&dir, small_config()).unwrap();
    append_singles(&log, 0, 50, 0);
    log.reset(Offset(1000)).unwrap();
    assert_eq!(
        (log.start_offset(), log.next_offset()),
        (Offset(1000), Offset(1000))
    );
    assert!(read_all(&log).is_empty());
    assert!(matches!(
        log.read(Offset(10), 10),
        Err(LogError::OffsetOutOfRange { .. })
    ));
    append_singles(&log, 1000, 5, 0);
    drop(log);
    let log = Log::open(&dir, small_config()).unwrap();
    assert_eq!(
        (log.start_offset(), log.next_offset()),
        (Offset(1000), Offset(1005))
    );
    assert_eq!(read_all(&log)[0].payload, payload(1000));
    log.destroy().unwrap();
    assert!(!dir.exists());
    assert!(parent.path().join("topics").exists());
}

#[test]
fn roll_limits_changed_while_open_apply_from_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(
        dir.path(),
        LogConfig {
            max_segment_bytes: 1 << 20,
            ..small_config()
        },
    )
    .unwrap();
    append_singles(&log, 0, 40, 1_000);
    assert_eq!(log.segments().len(), 1);
    log.set_roll_limits(1024, None).unwrap();
    append_singles(&log, 40, 40, 1_000);
    let segments = log.segments();
    assert!(segments.len() > 2, "{} segments", segments.len());
    // Segments written after the change respect it (the first one was already larger).
    assert!(segments[1..].iter().all(|s| s.size_bytes <= 1024));
    assert!(log.set_roll_limits(1 << 32, None).is_err());
    assert!(log.set_roll_limits(1024, Some(0)).is_err());
    assert_eq!(read_all(&log).len(), 80);
}
