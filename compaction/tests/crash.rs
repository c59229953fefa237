#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Kill -9 a child process mid-stream, reopen, and check that every acknowledged (synced)
//! append is present and intact. The child is `src/bin/compaction-crash-child.rs`; entry
//! contents are a function of the offset (the same functions are repeated here).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use bytes::Bytes;
use compaction::{replay, Entry, KeyedRecord, Log, LogConfig, Offset, TimestampMs};

fn batch_len(first: u64) -> u64 {
    1 + first % 4
}

fn batch_payload(first: u64) -> Bytes {
    let len = 1 + (first * 7919 % 3000) as usize;
    Bytes::from(
        (0..len)
            .map(|j| (first.wrapping_mul(2_654_435_761).wrapping_add(j as u64) % 256) as u8)
            .collect::<Vec<u8>>(),
    )
}

fn keyed_record(offset: u64) -> KeyedRecord {
    KeyedRecord {
        offset: Offset(offset),
        timestamp_ms: TimestampMs(offset as i64),
        key: Bytes::from(format!("k{}", offset * 7 % 50)),
        value: (!offset.is_multiple_of(9)).then(|| Bytes::from(format!("v{offset}"))),
    }
}

fn config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 64 << 10,
        index_interval_bytes: 1024,
        max_entry_bytes: 8 << 10,
        ..LogConfig::default()
    }
}

/// Keyed records are small: small segments so that compaction has sealed ones to rewrite.
fn keyed_config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 2048,
        index_interval_bytes: 256,
        ..config()
    }
}

/// A small deterministic generator: the seed is printed so a failure can be replayed.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn seed() -> u64 {
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    println!("crash test seed: {seed} (rerun with CRASH_SEED={seed})");
    seed
}

/// Runs the child until it has acknowledged `acks` appends, then SIGKILLs it (by its PID, via
/// `Child::kill`). Returns the acknowledged offsets.
fn run_and_kill(args: &[&str], dir: &Path, acks: usize) -> Vec<u64> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_compaction-crash-child"))
        .args(&args[..1])
        .arg(dir)
        .args(&args[1..])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut acked = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let offset: u64 = line.strip_prefix("ack ").unwrap().parse().unwrap();
        acked.push(offset);
        if acked.len() >= acks {
            break;
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the child was killed, not finished: {status}"
    );
    assert_eq!(acked.len(), acks, "the child stopped early");
    acked
}

#[test]
fn every_acknowledged_append_survives_sigkill() {
    let mut rng = seed();
    let dir = tempfile::tempdir().unwrap();
    let mut acked = Vec::new();
    for round in 0..4 {
        let acks = 100 + (next_random(&mut rng) % 400) as usize;
        acked.extend(run_and_kill(&["append", "4"], dir.path(), acks));
        let log = Log::open(dir.path(), config()).unwrap();
        let end = log.next_offset();
        let entries: Vec<Entry> = log.read_range(log.start_offset(), end).unwrap();
        // Everything present is intact and dense...
        let mut expected_first = 0;
        for entry in &entries {
            assert_eq!(entry.first_offset.0, expected_first, "round {round}");
            assert_eq!(
                entry.last_offset.0,
                expected_first + batch_len(expected_first) - 1
            );
            assert_eq!(
                entry.payload,
                batch_payload(expected_first),
                "round {round}"
            );
            expected_first = entry.next_offset().0;
        }
        // ...and covers every acknowledged append.
        let max_acked = *acked.iter().max().unwrap();
        assert!(
            end.0 > max_acked,
            "round {round}: acked {max_acked}, log ends at {end}"
        );
        println!(
            "round {round}: {} acks so far, log end {end}, {} segments",
            acked.len(),
            log.segments().len()
        );
    }
}

#[test]
fn sigkill_during_compaction_keeps_the_replayed_state() {
    let mut rng = seed();
    let dir = tempfile::tempdir().unwrap();
    let mut max_acked = 0;
    for round in 0..4 {
        let acks = 150 + (next_random(&mut rng) % 300) as usize;
        max_acked = max_acked.max(
            *run_and_kill(&["keyed"], dir.path(), acks)
                .iter()
                .max()
                .unwrap(),
        );
        let log = Log::open(dir.path(), keyed_config()).unwrap();
        let end = log.next_offset();
        assert!(
            end.0 > max_acked,
            "round {round}: acked {max_acked}, log ends at {end}"
        );
        let present: Vec<KeyedRecord> = log
            .read_range(log.start_offset(), end)
            .unwrap()
            .into_iter()
            .map(|e| KeyedRecord {
                offset: e.first_offset,
                timestamp_ms: e.max_timestamp_ms,
                key: e.key.clone().unwrap(),
                value: e.value().cloned(),
            })
            .collect();
        for record in &present {
            assert_eq!(
                record,
                &keyed_record(record.offset.0),
                "round {round}: altered record"
            );
        }
        let written: Vec<KeyedRecord> = (0..end.0).map(keyed_record).collect();
        assert_eq!(replay(&present), replay(&written), "round {round}");
        let leftovers = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.ends_with(".cleaned") || name.ends_with(".swap")
            })
            .count();
        assert_eq!(
            leftovers, 0,
            "open finishes or discards every interrupted swap"
        );
        println!(
            "round {round}: log end {end}, {} records kept, {} segments",
            present.len(),
            log.segments().len()
        );
    }
}
