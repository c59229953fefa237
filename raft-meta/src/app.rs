//! The contract between the Raft machinery and what it replicates.
//!
//! ```text
//!  leader: write(cmd) ─► batch ─► one log entry ─► quorum append ─► commit
//!  every node, in log order:      apply(index, cmd) -> reply   (deterministic)
//!  snapshot:  snapshot_records() -> live (key, value) records  -> snapshot file
//!  restart / install:  restore(records) then apply the log tail
//! ```
//!
//! The machinery never looks inside a command or a record, so the group coordinator, topic
//! metadata or the test key-value store plug in without touching Raft code.

use bytes::Bytes;

use crate::types::LogIndex;

/// One live record of an application's state: the latest value for a key. A snapshot is the set of
/// these, i.e. the compacted log of the state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub key: Bytes,
    pub value: Bytes,
}

/// Why an application refused a snapshot's records.
#[derive(Debug, thiserror::Error)]
#[error("application cannot restore from snapshot: {0}")]
pub struct RestoreError(pub String);

/// A deterministic state machine replicated by Raft.
pub trait Application: Send + Sync + 'static {
    /// Applies one committed command and returns the reply the writer gets back. It must be
    /// deterministic (no clock, no randomness, no IO): every replica runs it on the same commands
    /// and must reach the same state. A command it cannot parse is answered with an error reply,
    /// never a panic, since a panic here would stop every replica at the same entry.
    fn apply(&mut self, index: LogIndex, command: &[u8]) -> Bytes;

    /// The live records of the current state. Called under a read lock, so it should clone
    /// cheaply (`Bytes`), not serialize.
    fn snapshot_records(&self) -> Vec<Record>;

    /// Replaces the whole state with the given records (a snapshot being loaded or installed).
    fn restore(&mut self, records: Vec<Record>) -> Result<(), RestoreError>;
}
