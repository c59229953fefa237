//! The values of the transaction coordinator's records: one `Transaction` record per
//! `transactional.id` (Kafka's `TransactionMetadata`, minus its in-memory pending transition:
//! here a transition is decided and replayed at once), and one `TxnOffsets` record per
//! (group, producer) holding the offsets a transaction committed but has not completed
//! (Kafka's pending transactional offsets, KIP-98/KIP-447).

use crate::ids::{GroupId, PartitionIndex, ProducerEpoch, ProducerId, TimestampMs, TopicName};
use crate::record::offset_commit::OffsetCommitValue;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Kafka's `TransactionState`, without the transient `PrepareEpochFence` (a fence and its
/// abort are one decision here) and `Dead` (a tombstone).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TxnState {
    /// A producer id and epoch, no transaction.
    Empty,
    /// Partitions or groups have been added; records may be written.
    Ongoing,
    /// EndTxn(commit) is decided; the markers are being written.
    PrepareCommit,
    /// EndTxn(abort), a fence or a timeout is decided; the markers are being written.
    PrepareAbort,
    /// Every marker of the last transaction was a COMMIT and is written.
    CompleteCommit,
    /// Every marker of the last transaction was an ABORT and is written.
    CompleteAbort,
}

impl TxnState {
    /// The byte the codec writes.
    pub(crate) fn tag(self) -> u8 {
        match self {
            TxnState::Empty => 0,
            TxnState::Ongoing => 1,
            TxnState::PrepareCommit => 2,
            TxnState::PrepareAbort => 3,
            TxnState::CompleteCommit => 4,
            TxnState::CompleteAbort => 5,
        }
    }

    pub(crate) fn from_tag(tag: u8) -> Option<TxnState> {
        Some(match tag {
            0 => TxnState::Empty,
            1 => TxnState::Ongoing,
            2 => TxnState::PrepareCommit,
            3 => TxnState::PrepareAbort,
            4 => TxnState::CompleteCommit,
            5 => TxnState::CompleteAbort,
            _ => return None,
        })
    }

    /// Kafka's name for the state (DescribeTransactions, ListTransactions' filter).
    pub fn as_str(self) -> &'static str {
        match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::PrepareCommit => "PrepareCommit",
            TxnState::PrepareAbort => "PrepareAbort",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
        }
    }

    /// Whether markers are owed for the transaction (a new leader re-drives them).
    pub fn is_prepared(self) -> bool {
        matches!(self, TxnState::PrepareCommit | TxnState::PrepareAbort)
    }

    /// Whether no transaction is open or completing.
    pub fn is_idle(self) -> bool {
        matches!(
            self,
            TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort
        )
    }
}

/// The state of one transactional id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionValue {
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
    /// KIP-360: the producer id before the last rotation, so that a producer retrying an
    /// InitProducerId whose answer it lost is recognised; −1 when none.
    pub last_producer_id: ProducerId,
    /// KIP-360: the epoch before the last bump; −1 when a fence or a new producer cleared it.
    pub last_producer_epoch: ProducerEpoch,
    /// The producer's `transaction.timeout.ms`.
    pub timeout_ms: i32,
    pub state: TxnState,
    /// The data partitions of the transaction (empty once it completes).
    pub partitions: BTreeMap<TopicName, BTreeSet<PartitionIndex>>,
    /// The groups whose offsets the transaction commits (AddOffsetsToTxn).
    pub groups: BTreeSet<GroupId>,
    /// When the transaction became Ongoing; `None` when there is none.
    pub start_timestamp: Option<TimestampMs>,
    pub last_update_timestamp: TimestampMs,
}

impl TransactionValue {
    /// How many partitions the transaction holds.
    pub fn partition_count(&self) -> usize {
        self.partitions.values().map(BTreeSet::len).sum()
    }

    /// Whether the transaction holds `partition` of `topic`.
    pub fn has_partition(&self, topic: &str, partition: PartitionIndex) -> bool {
        self.partitions
            .get(topic)
            .is_some_and(|p| p.contains(&partition))
    }
}

/// One pending transactional offset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingOffset {
    pub value: OffsetCommitValue,
    /// A plain OffsetCommit of the same partition was applied after this one: Kafka keeps the
    /// offset written last, so a commit marker must not overwrite it.
    pub superseded: bool,
}

/// The offsets one producer's open transaction committed for one group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnOffsetsValue {
    /// The epoch of the producer that committed them (for describing; markers match by id).
    pub producer_epoch: ProducerEpoch,
    pub offsets: BTreeMap<(TopicName, PartitionIndex), PendingOffset>,
}
