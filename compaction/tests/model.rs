#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Model-based property test: random operations on a real log in a temp dir and on a plain
//! in-memory model (a `Vec` of entries), compared after every step. `Reboot` drops and reopens
//! the log; `Compact` runs key compaction. Decisions that depend on segment boundaries
//! (retention, purge, compaction) are predicted from the public `segments()` summary taken
//! before the operation, so the model stays independent of how the log rolls.
//!
//! The run prints its seed; `PROPTEST_RNG_SEED=<seed>` replays it.

use std::collections::HashMap;

use bytes::Bytes;
use compaction::{
    Entry, Log, LogConfig, LogError, Offset, OpenFiles, RetentionPolicy, SegmentInfo, TimestampMs,
    TombstonePolicy,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

#[derive(Debug, Clone)]
struct NewEntry {
    span: u64,
    key: Option<(u8, bool)>,
    payload_len: usize,
    timestamp_ms: i64,
}

#[derive(Debug, Clone)]
enum Op {
    Append(Vec<NewEntry>),
    AppendAt {
        offset: u64,
        entry: NewEntry,
    },
    Read {
        from_pick: u16,
        max_bytes: usize,
    },
    FindTimestamp(i64),
    Sync,
    Reboot {
        verify: bool,
    },
    AdvanceClock(i64),
    Retention {
        max_bytes: Option<u64>,
        max_age_ms: Option<i64>,
    },
    Truncate {
        pick: u16,
    },
    Purge {
        pick: u16,
    },
    Compact {
        tombstone_retention_ms: i64,
    },
    Reset {
        ahead: u64,
    },
}

fn new_entry() -> impl Strategy<Value = NewEntry> {
    (
        1u64..4,
        proptest::option::weighted(0.6, (0u8..6, proptest::bool::weighted(0.25))),
        0usize..120,
        0i64..2000,
    )
        .prop_map(|(span, key, payload_len, timestamp_ms)| NewEntry {
            span: if key.is_some() { 1 } else { span },
            key,
            payload_len: if matches!(key, Some((_, true))) {
                0
            } else {
                payload_len
            },
            timestamp_ms,
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => proptest::collection::vec(new_entry(), 1..4).prop_map(Op::Append),
        1 => (0u64..50, new_entry()).prop_map(|(offset, entry)| Op::AppendAt { offset, entry }),
        3 => (any::<u16>(), 0usize..400).prop_map(|(from_pick, max_bytes)| Op::Read { from_pick, max_bytes }),
        1 => (-10i64..2100).prop_map(Op::FindTimestamp),
        1 => Just(Op::Sync),
        2 => any::<bool>().prop_map(|verify| Op::Reboot { verify }),
        1 => (0i64..600).prop_map(Op::AdvanceClock),
        1 => (proptest::option::of(0u64..3000), proptest::option::of(0i64..3000))
            .prop_map(|(max_bytes, max_age_ms)| Op::Retention { max_bytes, max_age_ms }),
        1 => any::<u16>().prop_map(|pick| Op::Truncate { pick }),
        1 => any::<u16>().prop_map(|pick| Op::Purge { pick }),
        2 => (0i64..3000).prop_map(|tombstone_retention_ms| Op::Compact { tombstone_retention_ms }),
        1 => (0u64..20).prop_map(|ahead| Op::Reset { ahead }),
    ]
}

fn config() -> LogConfig {
    LogConfig {
        max_segment_bytes: 600,
        segment_ms: Some(1000),
        index_interval_bytes: 90,
        max_entry_bytes: 300,
        max_key_bytes: 16,
        ..LogConfig::default()
    }
}

/// The model: exactly the entries the log must hold.
#[derive(Debug, Default)]
struct Model {
    entries: Vec<Entry>,
    start: Offset,
    next: Offset,
    now_ms: i64,
    counter: u64,
}

impl Model {
    fn build(&mut self, first: Offset, spec: &NewEntry) -> Entry {
        self.counter += 1;
        let payload = Bytes::from(vec![(self.counter % 251) as u8; spec.payload_len]);
        let ts = TimestampMs(spec.timestamp_ms);
        match spec.key {
            Some((key, tombstone)) => Entry::keyed(
                first,
                ts,
                Bytes::from(vec![b'k', key]),
                (!tombstone).then_some(payload),
            ),
            None => Entry::batch(first, Offset(first.0 + spec.span - 1), ts, payload),
        }
    }

    /// Kafka's read rule over the model.
    fn read(&self, from: Offset, max_bytes: usize) -> Result<Vec<Entry>, ()> {
        if from < self.start || from > self.next {
            return Err(());
        }
        let mut out: Vec<Entry> = Vec::new();
        let mut total = 0;
        for entry in self.entries.iter().filter(|e| e.last_offset >= from) {
            let size = entry.payload.len() + entry.key.as_ref().map_or(0, |k| k.len());
            if !out.is_empty() && total + size > max_bytes {
                break;
            }
            total += size;
            out.push(entry.clone());
        }
        Ok(out)
    }

    fn drop_below(&mut self, start: Offset) {
        self.start = start;
        self.entries.retain(|e| e.first_offset >= start);
    }
}

fn pick_offset(model: &Model, pick: u16) -> Offset {
    let span = model.next.0 - model.start.0 + 3;
    Offset(model.start.0.saturating_sub(1) + u64::from(pick) % span)
}

fn check_everything(log: &Log, model: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(log.start_offset(), model.start);
    prop_assert_eq!(log.next_offset(), model.next);
    let all = log
        .read_range(model.start, model.next)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&all, &model.entries);
    Ok(())
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    run_with(ops, &|dir: &std::path::Path, config: LogConfig| {
        Log::open(dir, config).unwrap()
    })
}

/// The model run with every segment file under a budget of one open file: each read of
/// another segment closes one and reopens another, across retention, truncation and
/// compaction swaps.
fn run_one_open_file(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let files = OpenFiles::new(1);
    run_with(ops, &|dir: &std::path::Path, config: LogConfig| {
        Log::open_with_files(dir, config, files.clone()).unwrap()
    })
}

fn run_with(
    ops: Vec<Op>,
    open: &dyn Fn(&std::path::Path, LogConfig) -> Log,
) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Some(open(dir.path(), config()));
    let mut model = Model::default();
    for op in ops {
        let current = log.as_ref().unwrap();
        let segments: Vec<SegmentInfo> = current.segments();
        match op {
            Op::Append(specs) => {
                let mut first = model.next;
                let mut batch = Vec::new();
                for spec in &specs {
                    let entry = model.build(first, spec);
                    first = entry.next_offset();
                    batch.push(entry);
                }
                current.append(&batch, TimestampMs(model.now_ms)).unwrap();
                model.next = first;
                model.entries.extend(batch);
            }
            Op::AppendAt { offset, entry } => {
                let entry = model.build(Offset(offset), &entry);
                let log_empty =
                    segments.len() == 1 && segments[0].next_offset == segments[0].base_offset;
                let result =
                    current.append(std::slice::from_ref(&entry), TimestampMs(model.now_ms));
                if Offset(offset) == model.next {
                    result.unwrap();
                    model.next = entry.next_offset();
                    model.entries.push(entry);
                } else if log_empty {
                    result.unwrap();
                    model.start = Offset(offset);
                    model.next = entry.next_offset();
                    model.entries = vec![entry];
                } else {
                    prop_assert!(
                        matches!(result, Err(LogError::NonContiguous { .. })),
                        "{:?}",
                        result
                    );
                }
            }
            Op::Read {
                from_pick,
                max_bytes,
            } => {
                let from = pick_offset(&model, from_pick);
                match (current.read(from, max_bytes), model.read(from, max_bytes)) {
                    (Ok(got), Ok(expected)) => prop_assert_eq!(got, expected),
                    (Err(LogError::OffsetOutOfRange { .. }), Err(())) => {}
                    (got, expected) => {
                        prop_assert!(false, "read {}: {:?} vs {:?}", from, got, expected)
                    }
                }
            }
            Op::FindTimestamp(target) => {
                let got = current.find_by_timestamp(TimestampMs(target)).unwrap();
                let expected = model
                    .entries
                    .iter()
                    .find(|e| e.max_timestamp_ms >= TimestampMs(target));
                prop_assert_eq!(got.as_ref(), expected);
            }
            Op::Sync => {
                current.sync().unwrap();
                prop_assert_eq!(current.durable_offset(), model.next);
            }
            Op::Reboot { verify } => {
                drop(log.take());
                let config = LogConfig {
                    verify_sealed_on_open: verify,
                    ..config()
                };
                log = Some(open(dir.path(), config));
                prop_assert_eq!(log.as_ref().unwrap().durable_offset(), model.next);
            }
            Op::AdvanceClock(ms) => model.now_ms += ms,
            Op::Retention {
                max_bytes,
                max_age_ms,
            } => {
                let deleted = current
                    .apply_retention(
                        RetentionPolicy {
                            max_bytes,
                            max_age_ms,
                        },
                        TimestampMs(model.now_ms),
                    )
                    .unwrap();
                let total: u64 = segments.iter().map(|s| s.size_bytes).sum();
                let mut excess = max_bytes.map(|m| total.saturating_sub(m));
                let count = segments[..segments.len() - 1]
                    .iter()
                    .take_while(|s| {
                        let expired = max_age_ms.is_some_and(|age| {
                            s.max_timestamp.is_some_and(|t| model.now_ms - t.0 > age)
                        });
                        let over = match excess.as_mut() {
                            Some(e) if *e >= s.size_bytes => {
                                *e -= s.size_bytes;
                                true
                            }
                            _ => false,
                        };
                        expired || over
                    })
                    .count();
                prop_assert_eq!(deleted.segments, count);
                model.drop_below(segments[count].base_offset);
            }
            Op::Truncate { pick } => {
                let at = pick_offset(&model, pick);
                let result = current.truncate_from(at);
                if at >= model.next {
                    prop_assert_eq!(result.unwrap(), model.next);
                } else if at < model.start {
                    prop_assert!(
                        matches!(result, Err(LogError::OffsetOutOfRange { .. })),
                        "{:?}",
                        result
                    );
                } else {
                    let holder = segments.iter().rev().find(|s| s.base_offset <= at).unwrap();
                    if holder.compacted {
                        prop_assert!(
                            matches!(result, Err(LogError::Unsupported(_))),
                            "{:?}",
                            result
                        );
                    } else {
                        let cut = model
                            .entries
                            .iter()
                            .position(|e| e.last_offset >= at)
                            .unwrap();
                        model.next = model.entries[cut].first_offset;
                        model.entries.truncate(cut);
                        prop_assert_eq!(result.unwrap(), model.next);
                    }
                }
            }
            Op::Purge { pick } => {
                let to = pick_offset(&model, pick);
                let deleted = current.purge_to(to).unwrap();
                let count = segments[..segments.len() - 1]
                    .iter()
                    .take_while(|s| s.next_offset <= to)
                    .count();
                prop_assert_eq!(deleted.segments, count);
                model.drop_below(segments[count].base_offset);
            }
            Op::Reset { ahead } => {
                let next = Offset(model.next.0 + ahead);
                current.reset(next).unwrap();
                model.entries.clear();
                model.start = next;
                model.next = next;
            }
            Op::Compact {
                tombstone_retention_ms,
            } => {
                let policy = TombstonePolicy {
                    now_ms: TimestampMs(model.now_ms),
                    tombstone_retention_ms,
                };
                current.compact(policy).unwrap();
                let active_base = segments.last().unwrap().base_offset;
                let mut latest: HashMap<Bytes, Offset> = HashMap::new();
                for e in &model.entries {
                    if let Some(k) = &e.key {
                        latest.insert(k.clone(), e.first_offset);
                    }
                }
                model.entries.retain(|e| match &e.key {
                    Some(k) if e.first_offset < active_base => {
                        latest[k] == e.first_offset
                            && !(e.tombstone && policy.expired(e.max_timestamp_ms))
                    }
                    _ => true,
                });
            }
        }
        check_everything(log.as_ref().unwrap(), &model)?;
    }
    // A final reboot sees the same log.
    drop(log.take());
    let log = open(dir.path(), config());
    check_everything(&log, &model)
}

#[test]
fn log_matches_model() {
    run_model(run);
}

#[test]
fn log_matches_model_with_one_open_file() {
    run_model(run_one_open_file);
}

fn run_model(run: fn(Vec<Op>) -> Result<(), TestCaseError>) {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(7, |d| d.as_nanos() as u64)
        });
    println!("model test seed: {seed} (replay with PROPTEST_RNG_SEED={seed})");
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    let mut runner = TestRunner::new(Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&proptest::collection::vec(op(), 1..60), run);
    if let Err(error) = result {
        panic!("seed {seed}: {error}");
    }
}
