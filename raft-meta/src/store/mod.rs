//! Raft log storage: one trait (openraft's `RaftLogStorage`), two implementations, picked at
//! startup by [`RaftStore`].

pub(crate) mod errors;
pub mod probe;
pub mod sled_store;

use std::fmt::Debug;
use std::ops::RangeBounds;
use std::path::Path;
use std::str::FromStr;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{OptionalSend, RaftLogReader};

pub use probe::StoreProbe;
pub use sled_store::{SledLogStore, SledStoreError};

use crate::types::{Entry, LogId, StorageError, TypeConfig, Vote};

/// Which log store a node runs on (`--raft-store sled|segments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RaftStore {
    Sled,
}

impl RaftStore {
    pub fn name(self) -> &'static str {
        match self {
            RaftStore::Sled => "sled",
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("unknown raft store {0:?}; expected sled or segments")]
pub struct UnknownRaftStore(String);

impl FromStr for RaftStore {
    type Err = UnknownRaftStore;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "sled" => Ok(RaftStore::Sled),
            other => Err(UnknownRaftStore(other.to_owned())),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpenLogStoreError {
    #[error(transparent)]
    Sled(#[from] SledStoreError),
}

/// The log store a node runs on, dispatching to the selected implementation.
#[derive(Clone)]
pub enum LogStore {
    Sled(SledLogStore),
}

impl LogStore {
    /// Opens the selected store under `dir` (created if missing).
    pub fn open(kind: RaftStore, dir: &Path, probe: StoreProbe) -> Result<Self, OpenLogStoreError> {
        match kind {
            RaftStore::Sled => Ok(LogStore::Sled(SledLogStore::open(dir, probe)?)),
        }
    }

    /// Bytes the store occupies on disk.
    pub fn size_on_disk(&self) -> u64 {
        match self {
            LogStore::Sled(s) => s.size_on_disk(),
        }
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        match self {
            LogStore::Sled(s) => s.try_get_log_entries(range).await,
        }
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        match self {
            LogStore::Sled(s) => s.get_log_state().await,
        }
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        match self {
            LogStore::Sled(s) => s.save_vote(vote).await,
        }
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        match self {
            LogStore::Sled(s) => s.read_vote().await,
        }
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        match self {
            LogStore::Sled(s) => s.save_committed(committed).await,
        }
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        match self {
            LogStore::Sled(s) => s.read_committed().await,
        }
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        match self {
            LogStore::Sled(s) => s.append(entries, callback).await,
        }
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        match self {
            LogStore::Sled(s) => s.truncate(log_id).await,
        }
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        match self {
            LogStore::Sled(s) => s.purge(log_id).await,
        }
    }
}
