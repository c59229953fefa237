//! Lag, everywhere an operator looks: the arithmetic (`offset_lag`, Kafka's rules), the lag
//! status evaluator in the manner of LinkedIn's Burrow (`status`), and the `LagTracker` the
//! server feeds with commits and log-end offsets and renders from (`tracker`), and its
//! `/metrics` families (`prometheus`).
//!
//! In the server: `feed` (the one tracker, fed by the coordinator runtime while this node is
//! the active coordinator), `log_offsets` (every partition's log offsets, from the data plane
//! and from the partitions' owners over their Kafka port) and `exporter` (the task that polls
//! and samples).
//!
//! ```text
//!  coordinator runtime ── applied records ──► LagFeed ◄── log offsets ── exporter ◄── owners
//!                                                │  ◄──── sample(now) ───┘
//!                                                └──► snapshot ──► /metrics, /console(.json)
//! ```
//!
//! Everything but `exporter` is clock-free: time comes in as `now_ms` arguments (the exporter
//! and the HTTP routes read `crate::clock`).

pub mod exporter;
pub mod feed;
pub mod log_offsets;
pub mod prometheus;
pub mod status;
pub mod tracker;

pub use exporter::run_exporter;
pub use feed::{LagFeed, LogOffsets, RecordTime};
pub use log_offsets::LogOffsetsPoller;
pub use status::{evaluate, judge, Coverage, LagStatus, Observation, Verdict};
pub use tracker::{
    GroupSnapshot, LagPoint, LagTracker, LagTrackerConfig, Limit, Owner, PartitionSnapshot,
    Snapshot, Tracking, Usage,
};

/// Lag as Kafka's tools compute it: log-end offset minus committed offset, only when both are
/// known and the committed offset is not −1; unknown (`None`, printed `-`) otherwise. No clamping:
/// a committed offset past the log end gives a negative lag, as in Kafka.
pub fn offset_lag(committed: Option<i64>, log_end: Option<i64>) -> Option<i64> {
    let committed = committed.filter(|c| *c != -1)?;
    Some(log_end?.saturating_sub(committed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_is_log_end_minus_committed() {
        assert_eq!(offset_lag(Some(5), Some(9)), Some(4));
        assert_eq!(offset_lag(Some(9), Some(9)), Some(0));
    }

    #[test]
    fn lag_is_unknown_without_both_offsets() {
        assert_eq!(offset_lag(None, Some(9)), None);
        assert_eq!(offset_lag(Some(5), None), None);
        assert_eq!(offset_lag(Some(-1), Some(9)), None);
    }

    #[test]
    fn lag_is_not_clamped() {
        assert_eq!(offset_lag(Some(12), Some(9)), Some(-3));
        assert_eq!(
            offset_lag(Some(i64::MIN + 1), Some(i64::MAX)),
            Some(i64::MAX)
        );
    }
}
