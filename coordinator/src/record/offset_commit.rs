//! The value of an `OffsetCommit` record. The index keeps it in a packed form of its own
//! (`crate::index::offsets`) and hands it back as this.

use crate::ids::{LeaderEpoch, Offset, TimestampMs};

/// A committed offset as stored and replicated.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OffsetCommitValue {
    pub offset: Offset,
    pub leader_epoch: LeaderEpoch,
    pub metadata: String,
    pub commit_timestamp: TimestampMs,
    /// Set only by OffsetCommit v2–v4 with an explicit retention time (legacy semantics:
    /// expires at this instant whatever the group does).
    pub expire_timestamp: Option<TimestampMs>,
}
