//! Measures the offset index's memory per (group, topic, partition) key, and its lookups.
//!
//! ```sh
//! cargo run --release -p coordinator --example index_memory -- \
//!     <groups> <topics> <partitions> [sorted|shuffled] [simple|empty-consumer]
//! ```
//!
//! It replays `groups × topics × partitions` OffsetCommit records and reports the growth of
//! the process's resident memory (VmRSS, allocator overhead included) divided by the number
//! of keys. `sorted` (the default) replays groups in id order, as a replica restoring a
//! snapshot does; `shuffled` in a scrambled order, as groups appear in a live cluster.
//! `simple` groups (the default) have offsets only; `empty-consumer` groups also carry the
//! group record a consumer group keeps once its last member left. Then it looks every key
//! up once, in scrambled order, and reports the mean time per lookup. Run one shape per
//! process: memory freed by a previous shape would be reused and hide the cost.

use coordinator::{
    ClassicGroup, Config, CoordinatorState, Generation, GroupState, LeaderEpoch, Offset,
    OffsetCommitValue, PartitionIndex, Record, TimestampMs,
};
use std::process::ExitCode;

fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn arg(args: &[String], i: usize, default: u64) -> Option<u64> {
    match args.get(i) {
        None => Some(default),
        Some(s) => s.parse().ok(),
    }
}

/// A permutation of `0..n` when `scramble` (multiplication by a prime that does not divide
/// `n`), else the identity.
fn order(i: u64, n: u64, scramble: bool) -> u64 {
    const STEP: u64 = 1_000_003;
    if !scramble || n.is_multiple_of(STEP) {
        return i;
    }
    (i * STEP + 7) % n
}

fn group_id(g: u64) -> String {
    // Group ids of a realistic length (~20 bytes).
    format!("consumer-group-{g:06}")
}

/// What a consumer group's record holds once its last member left.
fn empty_consumer_group() -> ClassicGroup {
    let mut group = ClassicGroup::new(TimestampMs(1_700_000_000_000));
    group.state = GroupState::Empty;
    group.generation = Generation(7);
    group.protocol_type = Some("consumer".to_owned());
    group
}

// Timing lookups is part of the point of this file.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(groups), Some(topics), Some(partitions)) =
        (arg(&args, 1, 10_000), arg(&args, 2, 10), arg(&args, 3, 10))
    else {
        eprintln!("usage: index_memory [groups] [topics] [partitions] [sorted|shuffled] [simple|empty-consumer]");
        return ExitCode::FAILURE;
    };
    let order_name = args.get(4).map_or("sorted", String::as_str);
    let kind = args.get(5).map_or("simple", String::as_str);
    let (shuffled, with_group) = match (order_name, kind) {
        ("sorted" | "shuffled", "simple" | "empty-consumer") => {
            (order_name == "shuffled", kind == "empty-consumer")
        }
        _ => {
            eprintln!("order is sorted or shuffled, kind is simple or empty-consumer");
            return ExitCode::FAILURE;
        }
    };
    let topic_names: Vec<String> = (0..topics).map(|t| format!("topic-{t:04}")).collect();
    let Some(before) = rss_bytes() else {
        eprintln!("needs /proc/self/status (Linux)");
        return ExitCode::FAILURE;
    };
    let mut state = CoordinatorState::new(Config::default());
    for i in 0..groups {
        let g = order(i, groups, shuffled);
        let group_id = group_id(g);
        if with_group {
            state.replay(&Record::GroupMetadata {
                group_id: group_id.as_str().into(),
                value: Some(Box::new(empty_consumer_group())),
            });
        }
        for topic in &topic_names {
            for p in 0..partitions {
                state.replay(&Record::OffsetCommit {
                    group_id: group_id.as_str().into(),
                    topic: topic.as_str().into(),
                    partition: PartitionIndex(i32::try_from(p).unwrap_or(i32::MAX)),
                    value: Some(OffsetCommitValue {
                        offset: Offset(i64::try_from(p * 1000 + g).unwrap_or(0)),
                        leader_epoch: LeaderEpoch(5),
                        metadata: String::new(),
                        commit_timestamp: TimestampMs(1_700_000_000_000),
                        expire_timestamp: None,
                    }),
                });
            }
        }
    }
    let Some(after) = rss_bytes() else {
        return ExitCode::FAILURE;
    };
    let keys = state.offset_count() as u64;
    let grown = after.saturating_sub(before);

    // Every key once, groups in scrambled order; the ids are built beforehand so only the
    // lookups are timed.
    let ids: Vec<coordinator::GroupId> = (0..groups)
        .map(|i| group_id(order(i, groups, true)).into())
        .collect();
    let started = std::time::Instant::now();
    let mut found = 0u64;
    for id in &ids {
        for topic in &topic_names {
            for p in 0..partitions {
                let partition = PartitionIndex(i32::try_from(p).unwrap_or(i32::MAX));
                if state.committed_offset(id, topic, partition).is_some() {
                    found += 1;
                }
            }
        }
    }
    let lookup_ns = started.elapsed().as_nanos() as f64 / keys.max(1) as f64;
    println!(
        "groups={groups} topics={topics} partitions={partitions} order={order_name} kind={kind} keys={keys} rss_growth={grown} bytes_per_key={:.1} lookups_found={found} ns_per_lookup={lookup_ns:.0}",
        grown as f64 / keys.max(1) as f64
    );
    ExitCode::SUCCESS
}
