//! Raft log storage: one trait (openraft's `RaftLogStorage`), two implementations, picked at
//! startup by [`RaftStore`].

pub(crate) mod errors;
pub mod format;
pub mod probe;
pub mod segment_store;
pub mod sled_store;

use std::fmt::Debug;
use std::ops::RangeBounds;
use std::path::Path;
use std::str::FromStr;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{OptionalSend, RaftLogReader};

pub use probe::StoreProbe;
pub use segment_store::{SegmentLogStore, SegmentStoreError};
pub use sled_store::{SledLogStore, SledStoreError};

use crate::types::{Entry, LogId, StorageError, TypeConfig, Vote};

/// Which log store a node runs on (`--raft-store sled|segments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RaftStore {
    Sled,
    Segments,
}

/// The default is the segmented log, chosen by the bake-off
/// (docs/decisions/0009-segmented-log-store-by-default.md): real fdatasync durability, a tenth
/// of sled's disk use under purge, maintained code.
impl Default for RaftStore {
    fn default() -> Self {
        RaftStore::Segments
    }
}

impl RaftStore {
    pub fn name(self) -> &'static str {
        match self {
            RaftStore::Sled => "sled",
            RaftStore::Segments => "segments",
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
            "segments" => Ok(RaftStore::Segments),
            other => Err(UnknownRaftStore(other.to_owned())),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpenLogStoreError {
    #[error(transparent)]
    Sled(#[from] SledStoreError),
    #[error(transparent)]
    Segments(#[from] SegmentStoreError),
}

/// The log store a node runs on, dispatching to the selected implementation.
#[derive(Clone)]
pub enum LogStore {
    Sled(SledLogStore),
    Segments(SegmentLogStore),
}

impl LogStore {
    /// Opens the selected store under `dir` (created if missing).
    pub fn open(kind: RaftStore, dir: &Path, probe: StoreProbe) -> Result<Self, OpenLogStoreError> {
        match kind {
            RaftStore::Sled => Ok(LogStore::Sled(SledLogStore::open(dir, probe)?)),
            RaftStore::Segments => Ok(LogStore::Segments(SegmentLogStore::open(dir, probe)?)),
        }
    }

    /// The disk-full guard of the log (the segment store; sled reports its own IO errors).
    pub fn space(&self) -> Option<compaction::SpaceGuard> {
        match self {
            LogStore::Sled(_) => None,
            LogStore::Segments(s) => Some(s.space().clone()),
        }
    }

    /// Durability syncs run since open: sled flushes, or the segment log's group-committed
    /// fdatasyncs (appends per sync is the batching ratio).
    pub fn sync_count(&self) -> u64 {
        match self {
            LogStore::Sled(s) => s.sync_count(),
            LogStore::Segments(s) => s.sync_count(),
        }
    }

    /// Bytes the store occupies on disk.
    pub fn size_on_disk(&self) -> u64 {
        match self {
            LogStore::Sled(s) => s.size_on_disk(),
            LogStore::Segments(s) => s.size_on_disk(),
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
            LogStore::Segments(s) => s.try_get_log_entries(range).await,
        }
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        match self {
            LogStore::Sled(s) => s.get_log_state().await,
            LogStore::Segments(s) => s.get_log_state().await,
        }
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        match self {
            LogStore::Sled(s) => s.save_vote(vote).await,
            LogStore::Segments(s) => s.save_vote(vote).await,
        }
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        match self {
            LogStore::Sled(s) => s.read_vote().await,
            LogStore::Segments(s) => s.read_vote().await,
        }
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        match self {
            LogStore::Sled(s) => s.save_committed(committed).await,
            LogStore::Segments(s) => s.save_committed(committed).await,
        }
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        match self {
            LogStore::Sled(s) => s.read_committed().await,
            LogStore::Segments(s) => s.read_committed().await,
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
            LogStore::Segments(s) => s.append(entries, callback).await,
        }
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        match self {
            LogStore::Sled(s) => s.truncate(log_id).await,
            LogStore::Segments(s) => s.truncate(log_id).await,
        }
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        match self {
            LogStore::Sled(s) => s.purge(log_id).await,
            LogStore::Segments(s) => s.purge(log_id).await,
        }
    }
}
