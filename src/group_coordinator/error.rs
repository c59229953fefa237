//! Why a group request could not be served by this node (domain answers such as
//! ILLEGAL_GENERATION are not here: they are `coordinator::ErrorKind` inside replies).

use raft_meta::{ReadError, WriteError};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    /// This node does not lead the Raft group, or lost leadership while the request waited:
    /// the client looks the coordinator up again.
    #[error("this node is not the group coordinator")]
    NotCoordinator,
    /// This node just became leader and is still applying entries committed before.
    #[error("the group coordinator is still loading")]
    LoadInProgress,
    /// Retriable trouble: a write whose outcome is unknown, too many requests in flight.
    #[error("the group coordinator is not available: {0}")]
    NotAvailable(String),
}

impl From<WriteError> for GroupError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::NotLeader { .. } | WriteError::ShuttingDown => GroupError::NotCoordinator,
            WriteError::CommandTooLarge { .. }
            | WriteError::Busy
            | WriteError::Unavailable(_)
            | WriteError::Indeterminate(_)
            // The leader's Raft log is on a full disk: retriable once space is freed there
            // (decision 0112); Kafka clients retry COORDINATOR_NOT_AVAILABLE.
            | WriteError::DiskFull(_)
            // The leader runs an older binary than the command's writer: retriable once the
            // upgrade reaches it.
            | WriteError::Refused(_) => GroupError::NotAvailable(e.to_string()),
        }
    }
}

impl From<ReadError> for GroupError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::NotLeader { .. } | ReadError::ShuttingDown => GroupError::NotCoordinator,
            ReadError::Raft(_) => GroupError::NotAvailable(e.to_string()),
        }
    }
}
