#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The compaction swap, interrupted at each of its steps: every on-disk state a crash can leave
//! reopens to a log whose replay equals the original's, with no leftover temp files.
//!
//! The states are built from real files: the log before compaction, and the segments the
//! compaction wrote, combined as a crash at each step would leave them.

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;
use compaction::{
    replay, Entry, KeyedRecord, Log, LogConfig, Offset, TimestampMs, TombstonePolicy,
};

type Files = BTreeMap<String, Vec<u8>>;

fn config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 1024,
        index_interval_bytes: 128,
        ..LogConfig::default()
    }
}

fn record(i: u64) -> Entry {
    // Mostly 17 hot keys, and every tenth record a key written once: survivors everywhere.
    let key = if i.is_multiple_of(10) {
        Bytes::from(format!("once-{i}"))
    } else {
        Bytes::from(format!("key-{}", i * 5 % 17))
    };
    let value = (i % 7 != 3).then(|| Bytes::from(format!("value-{i}")));
    Entry::keyed(Offset(i), TimestampMs(i as i64 * 10), key, value)
}

fn snapshot_files(dir: &Path) -> Files {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn materialize(dir: &Path, files: &Files) {
    for e in std::fs::read_dir(dir).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

fn records(log: &Log) -> Vec<KeyedRecord> {
    log.read_range(log.start_offset(), log.next_offset())
        .unwrap()
        .into_iter()
        .map(|e| KeyedRecord {
            offset: e.first_offset,
            timestamp_ms: e.max_timestamp_ms,
            key: e.key.clone().unwrap(),
            value: e.value().cloned(),
        })
        .collect()
}

/// Compacted segment files among `files`: (name, base, covers_until).
fn compacted_segments(files: &Files) -> Vec<(String, u64, u64)> {
    files
        .iter()
        .filter(|(name, bytes)| name.ends_with(".log") && bytes[7] & 1 == 1)
        .map(|(name, bytes)| {
            let base = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
            let until = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
            (name.clone(), base, until)
        })
        .collect()
}

fn segment_base(name: &str) -> Option<u64> {
    name.strip_suffix(".log")?.parse().ok()
}

/// Writes `state` into `dir`, opens it and checks it against the uncompacted log `original`.
fn check_state(dir: &Path, state: &Files, original: &[KeyedRecord], step: &str) {
    for (round, config) in [
        config(),
        LogConfig {
            verify_sealed_on_open: false,
            ..config()
        },
    ]
    .into_iter()
    .enumerate()
    {
        materialize(dir, state);
        let log = Log::open(dir, config).unwrap_or_else(|e| panic!("{step}: {e}"));
        let got = records(&log);
        assert_eq!(replay(&got), replay(original), "{step}");
        let mut from_original = original.iter();
        for record in &got {
            assert!(
                from_original.any(|o| o == record),
                "{step}: {record:?} is not from the log"
            );
        }
        assert_eq!(log.next_offset(), Offset(original.len() as u64), "{step}");
        let names: Vec<String> = snapshot_files(dir).into_keys().collect();
        assert!(
            !names
                .iter()
                .any(|n| n.ends_with(".cleaned") || n.ends_with(".swap")),
            "{step}: leftovers {names:?}"
        );
        // Compaction costs fsyncs: exercise it on the states that matter most.
        if round > 0 || !step.starts_with("step 2") && step != "done" {
            continue;
        }
        // Still a working log: appends and compaction go on.
        let next = log.next_offset().0;
        log.append(&[record(next)], TimestampMs(0)).unwrap();
        log.compact(TombstonePolicy {
            now_ms: TimestampMs(0),
            tombstone_retention_ms: i64::MAX,
        })
        .unwrap();
        let mut extended = original.to_vec();
        extended.push(records_of(&[record(next)])[0].clone());
        assert_eq!(
            replay(&records(&log)),
            replay(&extended),
            "{step}: after more work"
        );
    }
}

fn records_of(entries: &[Entry]) -> Vec<KeyedRecord> {
    entries
        .iter()
        .map(|e| KeyedRecord {
            offset: e.first_offset,
            timestamp_ms: e.max_timestamp_ms,
            key: e.key.clone().unwrap(),
            value: e.value().cloned(),
        })
        .collect()
}

#[test]
fn a_crash_at_every_step_of_the_swap_recovers_to_the_same_replay() {
    let dir = tempfile::tempdir().unwrap();
    let count = 400;
    let policy = TombstonePolicy {
        now_ms: TimestampMs(10 * count as i64),
        tombstone_retention_ms: 500,
    };
    {
        // A first compaction leaves small compacted segments, which the second one (the one
        // interrupted below) merges: its groups replace several segments each.
        let log = Log::open(dir.path(), config()).unwrap();
        for i in 0..count / 2 {
            log.append(&[record(i)], TimestampMs(0)).unwrap();
        }
        log.compact(policy).unwrap();
        for i in count / 2..count {
            log.append(&[record(i)], TimestampMs(0)).unwrap();
        }
    }
    let original: Vec<KeyedRecord> = (0..count)
        .map(|i| records_of(&[record(i)])[0].clone())
        .collect();
    let before = snapshot_files(dir.path());
    {
        let log = Log::open(dir.path(), config()).unwrap();
        let outcome = log.compact(policy).unwrap();
        assert!(
            outcome.segments_rewritten > outcome.segments_written,
            "{outcome:?}"
        );
    }
    let after = snapshot_files(dir.path());
    let replaced_by = |base: u64, until: u64| -> Vec<String> {
        before
            .keys()
            .filter(|n| segment_base(n).is_some_and(|b| b > base && b < until))
            .cloned()
            .collect()
    };
    // The groups this compaction wrote (new bytes), those merging the most segments first.
    let mut groups: Vec<(String, u64, u64)> = compacted_segments(&after)
        .into_iter()
        .filter(|(name, _, _)| before.get(name) != after.get(name))
        .collect();
    groups.sort_by_key(|(_, base, until)| std::cmp::Reverse(replaced_by(*base, *until).len()));
    groups.truncate(2);
    assert!(
        !replaced_by(groups[0].1, groups[0].2).is_empty(),
        "a group merges segments"
    );

    for (name, base, until) in &groups {
        let output = &after[name];
        let replaced = replaced_by(*base, *until);
        println!(
            "group {base}..{until} replaces {} more segments",
            replaced.len()
        );
        let index_names = [
            name.replace(".log", ".index"),
            name.replace(".log", ".timeindex"),
        ];

        // Step 1 interrupted: a partial or complete `.cleaned` file next to the old segments.
        for cut in [0, 10, output.len() / 2, output.len()] {
            let mut state = before.clone();
            state.insert(format!("{name}.cleaned"), output[..cut].to_vec());
            check_state(
                dir.path(),
                &state,
                &original,
                &format!("step 1, group {base}, cut {cut}"),
            );
        }
        // Step 2 done (the commit point), nothing of step 3 yet.
        let mut committed = before.clone();
        committed.insert(format!("{name}.swap"), output.clone());
        check_state(
            dir.path(),
            &committed,
            &original,
            &format!("step 2, group {base}"),
        );
        // Step 3 part way: some replaced segments and the old index files already gone.
        let mut steps = vec![0, 1, replaced.len() / 2, replaced.len()];
        steps.retain(|g| *g <= replaced.len());
        steps.dedup();
        for gone in steps {
            let mut state = committed.clone();
            for old in &replaced[..gone] {
                state.remove(old);
                state.remove(&old.replace(".log", ".index"));
                state.remove(&old.replace(".log", ".timeindex"));
            }
            if gone == replaced.len() {
                for index in &index_names {
                    state.remove(index);
                }
            }
            check_state(
                dir.path(),
                &state,
                &original,
                &format!("step 3, group {base}, {gone} gone"),
            );
        }
        // Step 4 done, step 5 not: the new segment in place with no index files, or with the
        // old segment's stale index files (which must not be trusted).
        let mut swapped = before.clone();
        for old in &replaced {
            swapped.remove(old);
            swapped.remove(&old.replace(".log", ".index"));
            swapped.remove(&old.replace(".log", ".timeindex"));
        }
        swapped.insert(name.clone(), output.clone());
        check_state(
            dir.path(),
            &swapped,
            &original,
            &format!("step 4 with stale indexes, group {base}"),
        );
        for index in &index_names {
            swapped.remove(index);
        }
        check_state(
            dir.path(),
            &swapped,
            &original,
            &format!("step 4 without indexes, group {base}"),
        );
    }
    // And the finished state.
    check_state(dir.path(), &after, &original, "done");
}
