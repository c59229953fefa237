//! Records: the only way state changes, and what the log, compaction and snapshots hold.
//!
//! Keys carry an explicit type tag, values a version; an empty value is a tombstone. A group
//! record holds the whole group, so the latest record per key is the state: compacting the
//! log to the latest record per key and replaying it rebuilds exactly the same state.

use crate::ids::{GroupId, PartitionIndex, ProducerId, TopicName, TransactionalId};
use serde::{Deserialize, Serialize};

pub mod assignment;
pub mod codec;
mod codec_consumer;
mod codec_group_config;
mod codec_txn;
pub mod consumer_group;
pub mod group_config;
pub mod group_metadata;
pub mod offset_commit;
pub mod transaction;

use crate::ids::MemberId;
use assignment::Assignment;
use consumer_group::{ConsumerGroupValue, ConsumerMemberValue, CurrentAssignment, TopicValue};
use group_metadata::ClassicGroup;
use offset_commit::OffsetCommitValue;
use transaction::{TransactionValue, TxnOffsetsValue};

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
    ConsumerGroup {
        group_id: GroupId,
    },
    ConsumerMember {
        group_id: GroupId,
        member_id: MemberId,
    },
    ConsumerTarget {
        group_id: GroupId,
        member_id: MemberId,
    },
    ConsumerCurrent {
        group_id: GroupId,
        member_id: MemberId,
    },
    Topic {
        name: TopicName,
    },
    Transaction {
        transactional_id: TransactionalId,
    },
    TxnOffsets {
        group_id: GroupId,
        producer_id: ProducerId,
    },
    GroupConfig {
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
    /// A consumer-protocol group's epochs, or the group's deletion.
    ConsumerGroup {
        group_id: GroupId,
        value: Option<ConsumerGroupValue>,
    },
    /// A consumer-protocol member's metadata, or its removal.
    ConsumerMember {
        group_id: GroupId,
        member_id: MemberId,
        value: Option<Box<ConsumerMemberValue>>,
    },
    /// A consumer-protocol member's target assignment.
    ConsumerTarget {
        group_id: GroupId,
        member_id: MemberId,
        value: Option<Assignment>,
    },
    /// A consumer-protocol member's current assignment and reconciliation state.
    ConsumerCurrent {
        group_id: GroupId,
        member_id: MemberId,
        value: Option<Box<CurrentAssignment>>,
    },
    /// A topic as the coordinator knows it (id, partition count), or its deletion.
    Topic {
        name: TopicName,
        value: Option<TopicValue>,
    },
    /// A transactional id's state, or its expiry (`transactional.id.expiration.ms`).
    Transaction {
        transactional_id: TransactionalId,
        value: Option<Box<TransactionValue>>,
    },
    /// The offsets an open transaction of `producer_id` committed for `group_id`, or their
    /// removal once the transaction's marker applied them (commit) or dropped them (abort).
    TxnOffsets {
        group_id: GroupId,
        producer_id: ProducerId,
        value: Option<Box<TxnOffsetsValue>>,
    },
    /// A group's config overrides (the GROUP config resource), or their removal.
    GroupConfig {
        group_id: GroupId,
        value: Option<group_config::GroupConfigs>,
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
            Record::ConsumerGroup { group_id, .. } => RecordKey::ConsumerGroup {
                group_id: group_id.clone(),
            },
            Record::ConsumerMember {
                group_id,
                member_id,
                ..
            } => RecordKey::ConsumerMember {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
            },
            Record::ConsumerTarget {
                group_id,
                member_id,
                ..
            } => RecordKey::ConsumerTarget {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
            },
            Record::ConsumerCurrent {
                group_id,
                member_id,
                ..
            } => RecordKey::ConsumerCurrent {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
            },
            Record::Topic { name, .. } => RecordKey::Topic { name: name.clone() },
            Record::Transaction {
                transactional_id, ..
            } => RecordKey::Transaction {
                transactional_id: transactional_id.clone(),
            },
            Record::TxnOffsets {
                group_id,
                producer_id,
                ..
            } => RecordKey::TxnOffsets {
                group_id: group_id.clone(),
                producer_id: *producer_id,
            },
            Record::GroupConfig { group_id, .. } => RecordKey::GroupConfig {
                group_id: group_id.clone(),
            },
        }
    }

    pub fn is_tombstone(&self) -> bool {
        match self {
            Record::OffsetCommit { value, .. } => value.is_none(),
            Record::GroupMetadata { value, .. } => value.is_none(),
            Record::ConsumerGroup { value, .. } => value.is_none(),
            Record::ConsumerMember { value, .. } => value.is_none(),
            Record::ConsumerTarget { value, .. } => value.is_none(),
            Record::ConsumerCurrent { value, .. } => value.is_none(),
            Record::Topic { value, .. } => value.is_none(),
            Record::Transaction { value, .. } => value.is_none(),
            Record::TxnOffsets { value, .. } => value.is_none(),
            Record::GroupConfig { value, .. } => value.is_none(),
        }
    }
}
