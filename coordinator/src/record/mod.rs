//! Records: the only way state changes, and what the log, compaction and snapshots hold.
//!
//! Keys carry an explicit type tag, values a version; an empty value is a tombstone. A group
//! record holds the whole group, so the latest record per key is the state: compacting the
//! log to the latest record per key and replaying it rebuilds exactly the same state.

use crate::ids::{GroupId, PartitionIndex, TopicName};
use serde::{Deserialize, Serialize};

pub mod assignment;
pub mod codec;
pub mod group_metadata;
pub mod offset_commit;

use group_metadata::ClassicGroup;
use offset_commit::OffsetCommitValue;

/// A record's key, what compaction keeps the latest value of.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RecordKey {
    OffsetCommit {
        group_id: GroupId,
        topic: TopicName,
        partition: PartitionIndex,
    },
    GroupMetadata {
        group_id: GroupId,
    },
}

/// One change to the coordinator's state.
/// Serde is derived for convenience (e.g. to ship an `Outcome` between threads or in tests);
/// the log and snapshots use [`Record::encode_key`] / [`Record::encode_value`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Record {
    /// A committed offset, or its removal (`value: None`).
    OffsetCommit {
        group_id: GroupId,
        topic: TopicName,
        partition: PartitionIndex,
        value: Option<OffsetCommitValue>,
    },
    /// A group's whole state, or the group's deletion (`value: None`).
    GroupMetadata {
        group_id: GroupId,
        value: Option<Box<ClassicGroup>>,
    },
}

impl Record {
    pub fn key(&self) -> RecordKey {
        match self {
            Record::OffsetCommit {
                group_id,
                topic,
                partition,
                ..
            } => RecordKey::OffsetCommit {
                group_id: group_id.clone(),
                topic: topic.clone(),
                partition: *partition,
            },
            Record::GroupMetadata { group_id, .. } => RecordKey::GroupMetadata {
                group_id: group_id.clone(),
            },
        }
    }

    pub fn is_tombstone(&self) -> bool {
        match self {
            Record::OffsetCommit { value, .. } => value.is_none(),
            Record::GroupMetadata { value, .. } => value.is_none(),
        }
    }
}
