#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Open-time recovery on damaged files: torn tails are cut back to the complete prefix at every
//! byte position; damage before the tail is refused with the file and byte position.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use compaction::{CorruptReason, Entry, Log, LogConfig, LogError, Offset, TimestampMs};

/// Replaces a file's content in place. `std::fs::write` truncates to zero first, which makes
/// ext4 flush the file on close (its replace-by-truncate heuristic) and costs an IO per call.
fn overwrite(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    use std::io::Write;
    let bytes = bytes.as_ref();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    file.write_all(bytes)?;
    file.set_len(bytes.len() as u64)
}

fn config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 2048,
        index_interval_bytes: 100,
        max_entry_bytes: 1024,
        ..LogConfig::default()
    }
}

fn entry(i: u64) -> Entry {
    let body = Bytes::from(vec![(i * 31 % 251) as u8; 10 + (i % 5) as usize * 9]);
    if i.is_multiple_of(3) {
        Entry::keyed(
            Offset(i),
            TimestampMs(i as i64),
            Bytes::from(format!("key{}", i % 4)),
            Some(body),
        )
    } else {
        Entry::single(Offset(i), TimestampMs(i as i64), body)
    }
}

/// Builds a log of `count` entries, returns the segment files (oldest first) and each entry's
/// (segment index, frame start, frame end).
fn build(dir: &Path, count: u64) -> (Vec<PathBuf>, Vec<(usize, u64, u64)>) {
    let log = Log::open(dir, config()).unwrap();
    for i in 0..count {
        log.append(&[entry(i)], TimestampMs(0)).unwrap();
    }
    log.sync().unwrap();
    let segments = log.segments();
    drop(log);
    let mut frames = Vec::new();
    for (s, info) in segments.iter().enumerate() {
        let mut position = 32u64;
        for i in info.base_offset.0..info.next_offset.0 {
            let end = position + entry(i).frame_len();
            frames.push((s, position, end));
            position = end;
        }
        assert_eq!(position, info.size_bytes);
    }
    (segments.into_iter().map(|s| s.path).collect(), frames)
}

fn read_everything(log: &Log) -> Vec<Entry> {
    log.read_range(log.start_offset(), log.next_offset())
        .unwrap()
}

#[test]
fn torn_tail_at_every_byte_of_the_last_frames_keeps_the_complete_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, frames) = build(dir.path(), 60);
    let last = segments.last().unwrap().clone();
    let original = std::fs::read(&last).unwrap();
    let last_segment = segments.len() - 1;
    let in_last: Vec<_> = frames
        .iter()
        .enumerate()
        .filter(|(_, f)| f.0 == last_segment)
        .collect();
    assert!(in_last.len() >= 3, "the last segment holds several frames");
    // Every cut from the start of the third-to-last frame to one byte short of the end, with
    // the rest either missing (short file) or zero-filled (a file extended by the crash).
    let from = in_last[in_last.len() - 3].1 .1;
    for cut in from..original.len() as u64 {
        for zero_fill in [false, true] {
            let mut torn = original[..cut as usize].to_vec();
            if zero_fill {
                torn.resize(original.len(), 0);
            }
            overwrite(&last, &torn).unwrap();
            let log = Log::open(dir.path(), config())
                .unwrap_or_else(|e| panic!("cut {cut} zero_fill {zero_fill}: {e}"));
            let complete = frames
                .iter()
                .filter(|f| f.0 < last_segment || f.2 <= cut)
                .count() as u64;
            let got = read_everything(&log);
            assert_eq!(
                got.len() as u64,
                complete,
                "cut {cut} zero_fill {zero_fill}"
            );
            for (i, e) in got.iter().enumerate() {
                assert_eq!(e, &entry(i as u64));
            }
            assert_eq!(log.next_offset(), Offset(complete));
            // The tail is gone from the file, and appends continue right after the prefix
            // (checked at every fifth cut: each costs fsyncs).
            if cut % 5 != 0 {
                continue;
            }
            log.append(&[entry(complete)], TimestampMs(0)).unwrap();
            drop(log);
            let log = Log::open(dir.path(), config()).unwrap();
            assert_eq!(log.next_offset(), Offset(complete + 1));
        }
    }
    overwrite(&last, &original).unwrap();
}

#[test]
fn a_bad_crc_in_the_last_frame_with_nothing_after_it_is_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, frames) = build(dir.path(), 40);
    let last = segments.last().unwrap();
    let mut bytes = std::fs::read(last).unwrap();
    let (_, start, end) = *frames.last().unwrap();
    for at in start..end {
        let mut damaged = bytes.clone();
        damaged[at as usize] ^= 0x01;
        overwrite(last, &damaged).unwrap();
        let log = Log::open(dir.path(), config()).unwrap_or_else(|e| panic!("flip at {at}: {e}"));
        assert_eq!(
            log.next_offset(),
            Offset(frames.len() as u64 - 1),
            "flip at {at}"
        );
        drop(log);
        overwrite(last, &bytes).unwrap();
    }
    bytes.truncate(0);
}

fn expect_corrupt(dir: &Path, path: &Path, position: u64) -> CorruptReason {
    match Log::open(dir, config()) {
        Err(LogError::Corrupt {
            path: p,
            position: at,
            reason,
        }) => {
            assert_eq!(p, path);
            assert_eq!(at, position);
            let message = LogError::Corrupt {
                path: p,
                position: at,
                reason: reason.clone(),
            }
            .to_string();
            assert!(
                message.contains(&path.display().to_string())
                    && message.contains(&position.to_string())
            );
            reason
        }
        Err(other) => panic!("expected corruption at {position}, got {other}"),
        Ok(log) => panic!(
            "expected corruption at {position}, opened at {}",
            log.next_offset()
        ),
    }
}

#[test]
fn a_flipped_bit_mid_log_is_refused_with_file_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, frames) = build(dir.path(), 60);
    let last_segment = segments.len() - 1;
    // Every frame of the last segment but the final one, every sealed frame: any bit.
    for (index, &(s, start, end)) in frames.iter().enumerate() {
        let is_final = index + 1 == frames.len();
        if is_final {
            continue;
        }
        let path = &segments[s];
        let original = std::fs::read(path).unwrap();
        for at in [
            start,
            start + 4,
            start + 8,
            start + 20,
            (start + end) / 2,
            end - 1,
        ] {
            for bit in [0, 7] {
                let mut damaged = original.clone();
                damaged[at as usize] ^= 1 << bit;
                overwrite(path, &damaged).unwrap();
                let reason = expect_corrupt(dir.path(), path, start);
                if s == last_segment {
                    assert!(
                        matches!(reason, CorruptReason::FrameBeforeValidData(_)),
                        "{reason}"
                    );
                }
            }
        }
        overwrite(path, &original).unwrap();
    }
    // Intact again: opens with everything.
    let log = Log::open(dir.path(), config()).unwrap();
    assert_eq!(log.next_offset(), Offset(60));
}

#[test]
fn a_truncated_sealed_segment_and_a_missing_segment_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, _) = build(dir.path(), 80);
    assert!(segments.len() >= 3);
    let sealed = &segments[0];
    let original = std::fs::read(sealed).unwrap();
    overwrite(sealed, &original[..original.len() - 3]).unwrap();
    let reason = expect_corrupt(dir.path(), sealed, {
        // The last frame of the sealed segment starts where it can no longer be read whole.
        let log_frames = build_positions(&original);
        *log_frames.last().unwrap()
    });
    assert_eq!(reason, CorruptReason::TruncatedSealedSegment);
    overwrite(sealed, &original).unwrap();
    // A segment in the middle disappears.
    let middle = &segments[1];
    let kept = std::fs::read(middle).unwrap();
    std::fs::remove_file(middle).unwrap();
    assert!(matches!(
        Log::open(dir.path(), config()),
        Err(LogError::SegmentGap { .. })
    ));
    overwrite(middle, kept).unwrap();
    // A damaged segment header.
    let mut header = original.clone();
    header[3] ^= 0xff;
    overwrite(sealed, &header).unwrap();
    assert!(matches!(
        Log::open(dir.path(), config()),
        Err(LogError::Corrupt {
            reason: CorruptReason::SegmentHeader(_),
            position: 0,
            ..
        })
    ));
    // A newer format version.
    let mut newer = original.clone();
    newer[6] = 9;
    let crc = crc32c::crc32c(&newer[..28]);
    newer[28..32].copy_from_slice(&crc.to_le_bytes());
    overwrite(sealed, &newer).unwrap();
    assert!(matches!(
        Log::open(dir.path(), config()),
        Err(LogError::UnsupportedVersion { version: 9, .. })
    ));
}

/// Frame start positions in a segment file's bytes.
fn build_positions(bytes: &[u8]) -> Vec<u64> {
    let mut positions = Vec::new();
    let mut at = 32usize;
    while at + 4 <= bytes.len() {
        positions.push(at as u64);
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        at += 8 + len;
    }
    positions
}

#[test]
fn a_torn_segment_creation_is_repaired_and_garbage_files_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), 30);
    let log = Log::open(dir.path(), config()).unwrap();
    let next = log.next_offset();
    drop(log);
    // The crash hit between creating the next segment and writing its header.
    let torn = dir.path().join(format!("{:020}.log", next.0));
    overwrite(&torn, [0u8; 7]).unwrap();
    overwrite(dir.path().join("notes.txt"), b"not a segment").unwrap();
    let log = Log::open(dir.path(), config()).unwrap();
    assert_eq!(log.next_offset(), next);
    log.append(&[entry(next.0)], TimestampMs(0)).unwrap();
    assert_eq!(read_everything(&log).len() as u64, next.0 + 1);
}

#[test]
fn megabytes_of_garbage_after_the_last_frame_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, frames) = build(dir.path(), 30);
    let last = segments.last().unwrap();
    let mut bytes = std::fs::read(last).unwrap();
    let clean_len = bytes.len();
    // Random garbage (xorshift, fixed seed) and then zeros: what a crash mid-write can leave.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..(2 << 20) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.push(state as u8);
    }
    bytes.resize(bytes.len() + (1 << 20), 0);
    overwrite(last, &bytes).unwrap();
    let started = std::time::Instant::now();
    let log = Log::open(dir.path(), config()).unwrap();
    let took = started.elapsed();
    println!("opened past 3 MiB of garbage in {took:?}");
    assert_eq!(log.next_offset(), Offset(frames.len() as u64));
    assert_eq!(std::fs::metadata(last).unwrap().len(), clean_len as u64);
}

#[test]
fn an_explicit_repair_cuts_mid_tail_damage_that_a_normal_open_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let (segments, frames) = build(dir.path(), 40);
    let last_segment = segments.len() - 1;
    let last = &segments[last_segment];
    let (index, &(_, start, _)) = frames
        .iter()
        .enumerate()
        .find(|(_, f)| f.0 == last_segment)
        .unwrap();
    let mut bytes = std::fs::read(last).unwrap();
    bytes[start as usize + 20] ^= 0x40;
    overwrite(last, &bytes).unwrap();
    expect_corrupt(dir.path(), last, start);
    let repair = LogConfig {
        repair_tail_corruption: true,
        ..config()
    };
    let log = Log::open(dir.path(), repair).unwrap();
    assert_eq!(log.next_offset(), Offset(index as u64));
    drop(log);
    let log = Log::open(dir.path(), config()).unwrap();
    assert_eq!(read_everything(&log).len(), index);
}
