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

/// What a node advertises in the replicated membership: peers dial `raft_addr`; Kafka clients
/// and peers' inter-broker clients reach it at the address of a listener in `listeners`
/// (Kafka's rule: a client is told every node's address on the listener it came in on).
///
/// `kafka_addr` is the first listener's address (what `--peers` and `cohort cluster add-voter`
/// name, and all a record of version 1 carries). `listeners` is empty for such a record: the
/// node has not published its listeners yet (see [`crate::node_record`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeInfo {
    pub raft_addr: String,
    pub kafka_addr: String,
    pub listeners: Vec<KafkaListener>,
}

/// One Kafka listener of a node: its name and the `HOST:PORT` its clients are told.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct KafkaListener {
    pub name: String,
    pub addr: String,
}

impl NodeInfo {
    /// The node's address on listener `name`: `None` when the node published its listeners
    /// and has none of that name (Kafka leaves such a broker out); a node that has not
    /// published them (a version 1 record) is reached at `kafka_addr` on every listener, as
    /// before listeners were recorded.
    pub fn listener_addr(&self, name: &str) -> Option<&str> {
        if self.listeners.is_empty() {
            return Some(&self.kafka_addr);
        }
        self.listeners
            .iter()
            .find(|l| l.name == name)
            .map(|l| l.addr.as_str())
    }
}

impl fmt::Display for NodeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "raft={} kafka={}", self.raft_addr, self.kafka_addr)?;
        for l in &self.listeners {
            write!(f, " {}={}", l.name, l.addr)?;
        }
        Ok(())
    }
}

/// The node record's serde form (log entries, peer RPCs) is the two strings of version 1, the
/// second one carrying the versioned Kafka field ([`crate::node_record`]): postcard's layout of
/// every membership already written stays what it was.
impl Serialize for NodeInfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            // JSON (`cohort cluster status --json`): named fields, the listeners spelled out.
            return Readable {
                raft_addr: self.raft_addr.clone(),
                kafka_addr: self.kafka_addr.clone(),
                listeners: self.listeners.clone(),
            }
            .serialize(s);
        }
        (&self.raft_addr, crate::node_record::kafka_field(self)).serialize(s)
    }
}

impl<'de> Deserialize<'de> for NodeInfo {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            let r = Readable::deserialize(d)?;
            return Ok(NodeInfo {
                raft_addr: r.raft_addr,
                kafka_addr: r.kafka_addr,
                listeners: r.listeners,
            });
        }
        let (raft_addr, kafka) = <(String, String)>::deserialize(d)?;
        crate::node_record::from_fields(raft_addr, &kafka).map_err(serde::de::Error::custom)
    }
}

/// [`NodeInfo`] in human-readable formats.
#[derive(Serialize, Deserialize)]
struct Readable {
    raft_addr: String,
    kafka_addr: String,
    #[serde(default)]
    listeners: Vec<KafkaListener>,
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
