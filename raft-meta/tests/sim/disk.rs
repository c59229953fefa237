//! A simulated disk under openraft's log-store contract: appended entries are volatile until
//! their (simulated) sync completes, and only then is the flush acknowledged to openraft. A
//! crash keeps the synced entries and the vote and drops the unsynced tail, which is exactly
//! what a real crash may do to the segment store between its write and its fdatasync.
//!
//! `FlushMode::AckBeforeSync` is the deliberate bug: the flush is acknowledged at once and the
//! data synced later by a periodic flusher, so a crash can drop entries openraft counted
//! towards a commit. The deliberate-bug test shows the checker catches it.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::ops::RangeBounds;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{AnyError, OptionalSend, RaftLogReader, StorageIOError};
use raft_meta::types::{Entry, LogId, StorageError, TypeConfig, Vote};

use super::rng::SimRng;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushMode {
    /// Acknowledge a flush only once the entries are synced.
    Honest,
    /// The bug: acknowledge at once, sync on the periodic flusher.
    AckBeforeSync,
}

struct DiskState {
    /// Raft index → (entry, synced).
    entries: BTreeMap<u64, (Entry, bool)>,
    vote: Option<Vote>,
    last_purged: Option<LogId>,
    /// Bumped by a crash: a store handle of an older incarnation fails every call, as the
    /// process that held it is gone.
    incarnation: u64,
    rng: SimRng,
    mode: FlushMode,
}

/// One node's disk; it outlives the node's incarnations.
#[derive(Clone)]
pub struct SimDisk(Arc<Mutex<DiskState>>);

fn lock(state: &Mutex<DiskState>) -> MutexGuard<'_, DiskState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn crashed() -> StorageError {
    StorageIOError::write_logs(AnyError::error("the node crashed")).into()
}

impl SimDisk {
    pub fn new(rng: SimRng, mode: FlushMode) -> Self {
        Self(Arc::new(Mutex::new(DiskState {
            entries: BTreeMap::new(),
            vote: None,
            last_purged: None,
            incarnation: 0,
            rng,
            mode,
        })))
    }

    /// A store handle for the node incarnation starting now.
    pub fn store(&self) -> SimLogStore {
        SimLogStore {
            disk: self.0.clone(),
            incarnation: lock(&self.0).incarnation,
        }
    }

    /// Power loss: the unsynced tail is gone, and the running incarnation loses its disk.
    /// Returns how many entries were dropped.
    pub fn crash(&self) -> usize {
        let mut d = lock(&self.0);
        d.incarnation += 1;
        let before = d.entries.len();
        d.entries.retain(|_, (_, synced)| *synced);
        before - d.entries.len()
    }

    /// The last log id on disk (or the purge point), what a pre-vote compares.
    pub fn last_log_id(&self) -> Option<LogId> {
        let d = lock(&self.0);
        d.entries
            .values()
            .next_back()
            .map(|(e, _)| e.log_id)
            .or(d.last_purged)
    }

    /// The saved vote.
    pub fn vote(&self) -> Option<Vote> {
        lock(&self.0).vote
    }

    /// The index of the last entry on disk, synced or not.
    pub fn last_index(&self) -> Option<u64> {
        lock(&self.0).entries.keys().next_back().copied()
    }

    /// The periodic flusher of `AckBeforeSync`: everything written so far becomes durable.
    pub fn sync_all(&self) {
        for (_, synced) in lock(&self.0).entries.values_mut() {
            *synced = true;
        }
    }
}

/// What openraft holds: the disk, for as long as its incarnation lives.
#[derive(Clone)]
pub struct SimLogStore {
    disk: Arc<Mutex<DiskState>>,
    incarnation: u64,
}

impl SimLogStore {
    /// The disk, unless this incarnation crashed (callers turn `None` into `crashed()`).
    fn live(&self) -> Option<MutexGuard<'_, DiskState>> {
        let d = lock(&self.disk);
        (d.incarnation == self.incarnation).then_some(d)
    }
}

impl RaftLogReader<TypeConfig> for SimLogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        let d = self.live().ok_or_else(crashed)?;
        Ok(d.entries
            .range(range)
            .map(|(_, (entry, _))| entry.clone())
            .collect())
    }
}

impl RaftLogStorage<TypeConfig> for SimLogStore {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let d = self.live().ok_or_else(crashed)?;
        let last = d
            .entries
            .values()
            .next_back()
            .map(|(e, _)| e.log_id)
            .or(d.last_purged);
        Ok(LogState {
            last_purged_log_id: d.last_purged,
            last_log_id: last,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    /// Durable on return, as the segment store's atomic state-file replace is.
    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        self.live().ok_or_else(crashed)?.vote = Some(*vote);
        Ok(())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        Ok(self.live().ok_or_else(crashed)?.vote)
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
        let (sync_time, mode) = {
            let mut d = self.live().ok_or_else(crashed)?;
            for entry in entries {
                d.entries.insert(entry.log_id.index, (entry, false));
            }
            let micros = d.rng.range(100, 2_000);
            (Duration::from_micros(micros), d.mode)
        };
        match mode {
            FlushMode::AckBeforeSync => callback.log_io_completed(Ok(())),
            FlushMode::Honest => {
                // openraft's core awaits this, as it awaits the segment store's fdatasync; a
                // crash meanwhile finds these entries unsynced.
                tokio::time::sleep(sync_time).await;
                let mut d = self.live().ok_or_else(crashed)?;
                for (_, synced) in d.entries.values_mut() {
                    *synced = true;
                }
                drop(d);
                callback.log_io_completed(Ok(()));
            }
        }
        Ok(())
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut d = self.live().ok_or_else(crashed)?;
        d.entries.retain(|index, _| *index < log_id.index);
        Ok(())
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut d = self.live().ok_or_else(crashed)?;
        d.entries.retain(|index, _| *index > log_id.index);
        d.last_purged = Some(log_id);
        Ok(())
    }
}
