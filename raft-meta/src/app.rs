//! The contract between the Raft machinery and what it replicates.
//!
//! ```text
//!  leader: write(cmd) ─► admit(cmd)? ─► batch ─► one log entry ─► quorum append ─► commit
//!  every node, in log order:  decode(cmd) for every command of the entry
//!                               ├─ all decode ─► apply(index, cmd) -> reply   (deterministic)
//!                               └─ one does not ─► the apply loop halts at this index
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

/// Why a command's bytes are not a command this binary can apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Undecodable(pub String);

/// A deterministic state machine replicated by Raft.
pub trait Application: Send + Sync + 'static {
    /// A decoded command.
    type Command: Send;

    /// A cheap check the leader runs before it replicates a command (for the Cohort
    /// application: the header names a command kind and version this binary reads), so a
    /// command forwarded by a newer node is refused to its writer instead of committed and
    /// halting every older replica.
    fn admit(_command: &[u8]) -> Result<(), Undecodable> {
        Ok(())
    }

    /// Decodes one committed command. An error halts this node's apply loop at the entry
    /// that holds the command (nothing of that entry is applied): skipping it would let this
    /// replica diverge from those that applied it. Must never panic.
    fn decode(command: &[u8]) -> Result<Self::Command, Undecodable>;

    /// Applies one committed command and returns the reply the writer gets back. It must be
    /// deterministic (no clock, no randomness, no IO): every replica runs it on the same commands
    /// and must reach the same state. Domain refusals are replies, never panics.
    fn apply(&mut self, index: LogIndex, command: Self::Command) -> Bytes;

    /// The live records of the current state. Called under a read lock, so it should clone
    /// cheaply (`Bytes`), not serialize.
    fn snapshot_records(&self) -> Vec<Record>;

    /// Replaces the whole state with the given records (a snapshot being loaded or installed).
    fn restore(&mut self, records: Vec<Record>) -> Result<(), RestoreError>;
}
