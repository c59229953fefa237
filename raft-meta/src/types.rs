//! The openraft type configuration: what a log entry carries, what apply returns, what a node
//! advertises.

use std::fmt;
use std::io::Cursor;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// A Raft node id. Kept as `u64` (openraft's own choice) so the CLI can print and parse it.
pub type NodeId = u64;

/// Index of an entry in the Raft log; a command's apply sees the index of the entry carrying it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LogIndex(pub u64);

impl fmt::Display for LogIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a node advertises in the replicated membership: peers dial `raft_addr`; Kafka clients are
/// sent to `kafka_addr` when this node leads, so every node can name the coordinator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub raft_addr: String,
    pub kafka_addr: String,
}

impl fmt::Display for NodeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "raft={} kafka={}", self.raft_addr, self.kafka_addr)
    }
}

/// The payload of one normal log entry: many opaque commands, so that concurrent writers share
/// one entry, one append and one fsync.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandBatch(pub Vec<Bytes>);

impl CommandBatch {
    /// Total payload bytes, the measure the batcher and the snapshot policy bound.
    pub fn payload_bytes(&self) -> usize {
        self.0.iter().map(Bytes::len).sum()
    }
}

impl fmt::Display for CommandBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CommandBatch({} commands, {} bytes)",
            self.0.len(),
            self.payload_bytes()
        )
    }
}

/// What applying one entry returned: one opaque reply per command, in command order. Blank and
/// membership entries yield an empty batch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyBatch(pub Vec<Bytes>);

openraft::declare_raft_types!(
    /// The type configuration every Cohort Raft group uses.
    pub TypeConfig:
        D = CommandBatch,
        R = ReplyBatch,
        NodeId = NodeId,
        Node = NodeInfo,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = Cursor<Vec<u8>>,
        AsyncRuntime = openraft::TokioRuntime,
);

pub type Raft = openraft::Raft<TypeConfig>;
pub type Entry = openraft::Entry<TypeConfig>;
pub type LogId = openraft::LogId<NodeId>;
pub type Vote = openraft::Vote<NodeId>;
pub type StorageError = openraft::StorageError<NodeId>;
pub type StoredMembership = openraft::StoredMembership<NodeId, NodeInfo>;
pub type SnapshotMeta = openraft::SnapshotMeta<NodeId, NodeInfo>;
pub type Snapshot = openraft::storage::Snapshot<TypeConfig>;
pub type RaftMetrics = openraft::RaftMetrics<NodeId, NodeInfo>;
