#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `Log::read_located`: the same entries and bytes as `Log::read`, with large payloads left in
//! the file, and slices that keep their bytes (or refuse) when the file changes after the read.

use bytes::Bytes;
use compaction::{
    Entry, LocatedEntry, Log, LogConfig, Offset, OpenFiles, TimestampMs, TombstonePolicy,
    FILE_TAIL_MIN_BYTES,
};

fn config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 1 << 20,
        index_interval_bytes: 4096,
        verify_crc_on_read: false,
        ..LogConfig::default()
    }
}

fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn seed() -> u64 {
    let seed = std::env::var("LOCATED_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    println!("seed {seed} (LOCATED_SEED={seed} replays it)");
    seed
}

/// A payload whose bytes say which entry and position they are.
fn payload(first: u64, len: usize) -> Bytes {
    (0..len)
        .map(|i| (first as usize * 31 + i * 7 + i / 251) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// Appends batches of 10 offsets with sizes drawn from small, medium and large.
fn fill(log: &Log, rng: &mut u64, count: usize) -> Vec<(u64, Bytes)> {
    let mut out = Vec::new();
    for _ in 0..count {
        let first = log.next_offset().0;
        let len = match next_random(rng) % 4 {
            0 => (next_random(rng) % 3000) as usize + 1,
            1 => (next_random(rng) % 20_000) as usize + 1,
            _ => (next_random(rng) % 200_000) as usize + 1,
        };
        let p = payload(first, len);
        log.append(
            &[Entry::batch(
                Offset(first),
                Offset(first + 9),
                TimestampMs(first as i64),
                p.clone(),
            )],
            TimestampMs(0),
        )
        .unwrap();
        out.push((first, p));
    }
    log.sync().unwrap();
    out
}

fn bytes_of(e: &LocatedEntry) -> Bytes {
    let mut v = e.head.to_vec();
    if let Some(t) = &e.tail {
        v.extend_from_slice(&t.read().unwrap());
    }
    Bytes::from(v)
}

#[test]
fn located_reads_return_what_reads_return_across_segments() {
    let mut rng = seed();
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), config()).unwrap();
    let written = fill(&log, &mut rng, 120);
    assert!(log.segments().len() > 3, "the test needs several segments");
    let end = log.next_offset().0;
    let mut tails = 0;
    for _ in 0..200 {
        let from = next_random(&mut rng) % end;
        let max_bytes = match next_random(&mut rng) % 3 {
            0 => (next_random(&mut rng) % 100_000) as usize,
            1 => (next_random(&mut rng) % 3_000_000) as usize,
            _ => 64 << 20,
        };
        let read = log.read(Offset(from), max_bytes).unwrap();
        let located = log.read_located(Offset(from), max_bytes).unwrap();
        assert_eq!(located.len(), read.len(), "from {from} max {max_bytes}");
        for (l, r) in located.iter().zip(&read) {
            assert_eq!(l.first_offset, r.first_offset);
            assert_eq!(l.last_offset, r.last_offset);
            assert_eq!(l.len(), r.payload.len());
            assert_eq!(bytes_of(l), r.payload, "entry at {}", r.first_offset.0);
            if l.tail.is_some() {
                assert!(l.len() >= FILE_TAIL_MIN_BYTES);
                tails += 1;
            }
        }
    }
    assert!(tails > 0, "large payloads stay in the file");
    // Everything, in one read: each written payload exactly once, in order.
    let all = log.read_located(Offset(0), usize::MAX).unwrap();
    assert_eq!(all.len(), written.len());
    for (l, (first, p)) in all.iter().zip(&written) {
        assert_eq!(l.first_offset.0, *first);
        assert_eq!(&bytes_of(l), p);
    }
}

#[test]
fn slices_keep_their_bytes_after_retention_deletes_the_segment() {
    let mut rng = seed();
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), config()).unwrap();
    let written = fill(&log, &mut rng, 60);
    let located = log.read_located(Offset(0), usize::MAX).unwrap();
    assert!(located.iter().any(|e| e.tail.is_some()));
    let cut = log.segments()[log.segments().len() - 1].base_offset;
    log.purge_to(cut).unwrap();
    assert!(log.start_offset() > Offset(0), "segments were deleted");
    for (l, (_, p)) in located.iter().zip(&written) {
        assert_eq!(&bytes_of(l), p);
    }
}

#[test]
fn under_a_budget_of_two_open_files_slices_keep_their_files_and_the_rest_reopen() {
    let mut rng = seed();
    let files = OpenFiles::new(2);
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let logs: Vec<Log> = dirs
        .iter()
        .map(|d| Log::open_with_files(d.path(), config(), files.clone()).unwrap())
        .collect();
    let written: Vec<_> = logs.iter().map(|log| fill(log, &mut rng, 100)).collect();
    for log in &logs {
        log.sync().unwrap();
        assert!(
            log.segments().len() > 2,
            "the test needs several segments per log"
        );
    }
    let segments: usize = logs.iter().map(|l| l.segments().len()).sum();
    assert!(
        files.open() <= 2,
        "{} of {segments} segment files open",
        files.open()
    );
    // Located slices hold their files: reading every log keeps every slice valid, even those
    // whose segment the budget would otherwise have closed many times over.
    let located: Vec<Vec<LocatedEntry>> = logs
        .iter()
        .map(|log| log.read_located(Offset(0), usize::MAX).unwrap())
        .collect();
    let held = files.open();
    assert!(held > 2, "slices hold their files open ({held})");
    // Retention deletes the oldest segments of each log meanwhile.
    for log in &logs {
        let cut = log.segments()[log.segments().len() - 1].base_offset;
        log.purge_to(cut).unwrap();
    }
    for (entries, written) in located.iter().zip(&written) {
        assert_eq!(entries.len(), written.len());
        for (l, (_, p)) in entries.iter().zip(written) {
            assert_eq!(&bytes_of(l), p);
        }
    }
    drop(located);
    // New reads reopen what they need and the budget holds again once they are done.
    for (log, written) in logs.iter().zip(&written) {
        let start = log.start_offset().0;
        let read = log.read(Offset(start), usize::MAX).unwrap();
        let tail: Vec<_> = written
            .iter()
            .filter(|(first, _)| *first >= start)
            .collect();
        assert_eq!(read.len(), tail.len());
    }
    assert!(files.reopened_total() > 0 && files.closed_total() > 0);
    let after = logs.iter().map(|l| l.segments().len()).sum::<usize>();
    let extra = logs.len(); // the last opened may still be registered beyond the budget
    assert!(
        files.open() <= 2 + extra,
        "{} open of {after}",
        files.open()
    );
}

#[test]
fn slices_keep_their_bytes_after_compaction_swaps_the_segment() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), config()).unwrap();
    let mut written = Vec::new();
    for i in 0..40u64 {
        let value = payload(i, 40_000 + i as usize);
        let key = Bytes::from(format!("key-{}", i % 4));
        log.append(
            &[Entry::keyed(
                Offset(i),
                TimestampMs(i as i64),
                key,
                Some(value.clone()),
            )],
            TimestampMs(0),
        )
        .unwrap();
        written.push(value);
    }
    log.sync().unwrap();
    let located = log.read_located(Offset(0), usize::MAX).unwrap();
    assert_eq!(located.len(), written.len());
    // The first read probes 64 KiB, which holds the first value whole; after that a large
    // value leaves a small probe and its tail in the file.
    let whole: Vec<usize> = (0..located.len())
        .filter(|i| located[*i].tail.is_none())
        .collect();
    assert_eq!(whole, vec![0], "entries read whole");
    let outcome = log
        .compact(TombstonePolicy {
            now_ms: TimestampMs(0),
            tombstone_retention_ms: i64::MAX,
        })
        .unwrap();
    assert!(outcome.segments_rewritten > 0, "{outcome:?}");
    for (l, p) in located.iter().zip(&written) {
        assert_eq!(&bytes_of(l), p);
    }
}

#[test]
fn a_slice_of_a_cut_file_refuses_instead_of_sending_new_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), config()).unwrap();
    for i in 0..3u64 {
        log.append(
            &[Entry::batch(
                Offset(i * 10),
                Offset(i * 10 + 9),
                TimestampMs(0),
                payload(i, 100_000),
            )],
            TimestampMs(0),
        )
        .unwrap();
    }
    log.sync().unwrap();
    let located = log.read_located(Offset(0), usize::MAX).unwrap();
    assert_eq!(located.len(), 3);
    // Cut the last two batches and write others in their place.
    log.truncate_from(Offset(10)).unwrap();
    for i in 1..3u64 {
        log.append(
            &[Entry::batch(
                Offset(i * 10),
                Offset(i * 10 + 9),
                TimestampMs(0),
                Bytes::from(vec![0xEE; 100_000]),
            )],
            TimestampMs(0),
        )
        .unwrap();
    }
    log.sync().unwrap();
    for l in &located {
        let tail = l.tail.as_ref().unwrap();
        // The file was cut once: every slice located before the cut refuses, even the one
        // whose bytes survived (the count is per file, not per range).
        assert!(tail.with_file(|_| ()).is_err());
        assert!(tail.read().is_err());
    }
    let again = log.read_located(Offset(0), usize::MAX).unwrap();
    assert_eq!(bytes_of(&again[0]), payload(0, 100_000));
    assert_eq!(bytes_of(&again[1]), Bytes::from(vec![0xEE; 100_000]));
}
