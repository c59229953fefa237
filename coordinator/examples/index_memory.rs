//! Measures the offset index's memory per (group, topic, partition) key.
//!
//! ```sh
//! cargo run --release -p coordinator --example index_memory -- <groups> <topics> <partitions>
//! ```
//!
//! It replays `groups × topics × partitions` OffsetCommit records (as a replica restoring a
//! snapshot does) and reports the growth of the process's resident memory (VmRSS, allocator
//! overhead included) divided by the number of keys. Run one shape per process: memory freed
//! by a previous shape would be reused and hide the cost.

use coordinator::{
    Config, CoordinatorState, LeaderEpoch, Offset, OffsetCommitValue, PartitionIndex, Record,
    TimestampMs,
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(groups), Some(topics), Some(partitions)) =
        (arg(&args, 1, 10_000), arg(&args, 2, 10), arg(&args, 3, 10))
    else {
        eprintln!("usage: index_memory [groups] [topics] [partitions]");
        return ExitCode::FAILURE;
    };
    let Some(before) = rss_bytes() else {
        eprintln!("needs /proc/self/status (Linux)");
        return ExitCode::FAILURE;
    };
    let mut state = CoordinatorState::new(Config::default());
    for g in 0..groups {
        // Group ids of a realistic length (~20 bytes).
        let group_id = format!("consumer-group-{g:06}");
        for t in 0..topics {
            let topic = format!("topic-{t:04}");
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
    println!(
        "groups={groups} topics={topics} partitions={partitions} keys={keys} rss_growth={grown} bytes_per_key={:.1}",
        grown as f64 / keys.max(1) as f64
    );
    ExitCode::SUCCESS
}
