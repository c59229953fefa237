//! Errors the node handle returns. Domain replies (a fenced commit, a missing key) are not here:
//! they are the application's reply bytes.

use serde::{Deserialize, Serialize};

use crate::status::LeaderInfo;

/// Serializable: a leader answers a forwarded write with it.
#[derive(Debug, Clone, thiserror::Error, Serialize, Deserialize)]
pub enum WriteError {
    /// This node does not lead; the caller answers NOT_COORDINATOR / NOT_CONTROLLER and points at
    /// `leader` when known.
    #[error("not the leader (leader: {leader:?})")]
    NotLeader { leader: Option<LeaderInfo> },
    #[error("command of {bytes} bytes is over the {limit}-byte limit")]
    CommandTooLarge { bytes: usize, limit: usize },
    /// The queue of pending writes is full; retriable.
    #[error("too many pending writes")]
    Busy,
    #[error("raft node is shutting down")]
    ShuttingDown,
    /// No leader could be asked (none elected in time, or it could not be reached): nothing
    /// was written; retriable.
    #[error("no leader available: {0}")]
    Unavailable(String),
    /// The outcome is unknown (e.g. leadership lost mid-commit): the command may or may not have
    /// been applied, so the caller must not report success.
    #[error("write outcome unknown: {0}")]
    Indeterminate(String),
    /// The leader cannot apply this command (a kind or version newer than its binary reads):
    /// nothing was written. Replicating it would halt every replica like the leader.
    #[error("command refused by the leader: {0}")]
    Refused(String),
    /// The leader's Raft log is on a full disk (decision 0112): nothing was written; retriable
    /// once space is freed there. (Last variant: peers encode this enum by position.)
    #[error("{0}")]
    DiskFull(String),
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("not the leader (leader: {leader:?})")]
    NotLeader { leader: Option<LeaderInfo> },
    #[error("raft node is shutting down")]
    ShuttingDown,
    #[error("linearizable read failed: {0}")]
    Raft(String),
}

#[derive(Debug, thiserror::Error)]
pub enum MembershipError {
    #[error("not the leader (leader: {leader:?})")]
    NotLeader { leader: Option<LeaderInfo> },
    #[error("node {0} is not a voter")]
    UnknownNode(u64),
    #[error("membership change failed: {0}")]
    Raft(String),
    /// The leader could not replicate to the new node (unreachable, or it refuses the leader:
    /// another `--cluster-secret-file`); it was removed again, the membership is as before.
    #[error("node {node} did not catch up (no progress for {stalled_ms} ms: unreachable, or started with another --cluster-secret-file?); not added")]
    NotCaughtUp { node: u64, stalled_ms: u64 },
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("data directory {path}: {source}")]
    DataDir {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    LogStore(#[from] crate::store::OpenLogStoreError),
    #[error(transparent)]
    StateMachine(#[from] crate::state_machine::OpenStateMachineError),
    #[error("invalid raft config: {0}")]
    Config(String),
    /// The newest usable snapshot is older than the log's purge point (the newer one was corrupt
    /// and the log behind it is gone): starting would silently lose entries. Restore this node's
    /// data from a peer (wipe the data dir and add it back) instead.
    #[error("snapshot at {snapshot:?} is behind the log purged up to {purged}: entries in between are lost on this node")]
    SnapshotGap { snapshot: Option<u64>, purged: u64 },
    #[error("raft: {0}")]
    Raft(String),
    #[error("peer list: {0}")]
    Peers(String),
}
