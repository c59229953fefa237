//! The Raft log on sled 0.34.7.
//!
//! ```text
//!  tree "log":  index (u64 big-endian, so sled's order is log order) -> postcard(Entry)
//!  tree "meta": "vote" | "committed" | "last_purged"                -> postcard(value)
//! ```
//!
//! sled only syncs every 500 ms on its own, so every append, vote and purge ends with
//! `flush_async` before openraft is told it is durable: Raft's safety assumes an acknowledged
//! append survives a crash. On Linux, sled 0.34's flush ends in `sync_file_range`, which writes
//! the pages but neither flushes the disk cache nor the file's metadata (the man page: no
//! guarantee the data survives a crash of the machine). So after the flush the store fdatasyncs
//! sled's `db` file itself through its own descriptor: the same inode, so the same guarantee as
//! the segment store's fdatasync.

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::time::Instant;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{OptionalSend, RaftLogReader};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::metrics as m;
use crate::store::errors;
use crate::store::probe::StoreProbe;
use crate::types::{Entry, LogId, StorageError, TypeConfig, Vote};

const KEY_VOTE: &[u8] = b"vote";
const KEY_COMMITTED: &[u8] = b"committed";
const KEY_LAST_PURGED: &[u8] = b"last_purged";

/// Failures of the sled store, before they become openraft `StorageError`s.
#[derive(Debug, thiserror::Error)]
pub enum SledStoreError {
    #[error("sled: {0}")]
    Sled(#[from] sled::Error),
    #[error("undecodable value under {what}: {source}")]
    Decode {
        what: &'static str,
        source: postcard::Error,
    },
    #[error("cannot encode {what}: {source}")]
    Encode {
        what: &'static str,
        source: postcard::Error,
    },
    #[error("sled data file: {0}")]
    DbFile(std::io::Error),
    #[error("log key of {0} bytes is not a big-endian u64")]
    BadKey(usize),
}

/// The sled-backed log store; clones share the same trees, so a clone is the log reader.
#[derive(Clone)]
pub struct SledLogStore {
    /// sled's data file, opened read-only: fdatasync on it makes sled's flushed pages durable.
    db_file: std::sync::Arc<std::fs::File>,
    db: sled::Db,
    log: sled::Tree,
    meta: sled::Tree,
    probe: StoreProbe,
    timings: m::EntryTimings,
}

impl SledLogStore {
    pub fn open(dir: &Path, probe: StoreProbe) -> Result<Self, SledStoreError> {
        let db = sled::Config::new().path(dir).open()?;
        let db_file = std::sync::Arc::new(
            std::fs::File::open(dir.join("db")).map_err(SledStoreError::DbFile)?,
        );
        let log = db.open_tree("log")?;
        let meta = db.open_tree("meta")?;
        let store = Self {
            db_file,
            db,
            log,
            meta,
            probe,
            timings: m::EntryTimings::new(),
        };
        if let Some(committed) = store.get_meta::<LogId>(KEY_COMMITTED, "committed")? {
            store.probe.set_committed(Some(committed.index));
        }
        Ok(store)
    }

    fn get_meta<T: DeserializeOwned>(
        &self,
        key: &[u8],
        what: &'static str,
    ) -> Result<Option<T>, SledStoreError> {
        match self.meta.get(key)? {
            None => Ok(None),
            Some(raw) => postcard::from_bytes(&raw)
                .map(Some)
                .map_err(|source| SledStoreError::Decode { what, source }),
        }
    }

    fn put_meta<T: Serialize>(
        &self,
        key: &[u8],
        value: &T,
        what: &'static str,
    ) -> Result<(), SledStoreError> {
        let raw =
            postcard::to_stdvec(value).map_err(|source| SledStoreError::Encode { what, source })?;
        self.meta.insert(key, raw)?;
        Ok(())
    }

    async fn flush(&self) -> Result<(), SledStoreError> {
        let started = Instant::now();
        self.db.flush_async().await?;
        let file = self.db_file.clone();
        tokio::task::spawn_blocking(move || file.sync_data())
            .await
            .map_err(|e| SledStoreError::DbFile(std::io::Error::other(e.to_string())))?
            .map_err(SledStoreError::DbFile)?;
        self.timings.fsync(started.elapsed());
        self.probe.count_sync();
        Ok(())
    }

    fn last_entry_log_id(&self) -> Result<Option<LogId>, SledStoreError> {
        match self.log.last()? {
            None => Ok(None),
            Some((_, raw)) => {
                let entry: Entry =
                    postcard::from_bytes(&raw).map_err(|source| SledStoreError::Decode {
                        what: "log entry",
                        source,
                    })?;
                Ok(Some(entry.log_id))
            }
        }
    }

    fn read_range<RB: RangeBounds<u64>>(&self, range: RB) -> Result<Vec<Entry>, SledStoreError> {
        let start = match range.start_bound() {
            Bound::Included(i) => Bound::Included(i.to_be_bytes()),
            Bound::Excluded(i) => Bound::Excluded(i.to_be_bytes()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let end = match range.end_bound() {
            Bound::Included(i) => Bound::Included(i.to_be_bytes()),
            Bound::Excluded(i) => Bound::Excluded(i.to_be_bytes()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let mut out = Vec::new();
        for item in self.log.range::<[u8; 8], _>((start, end)) {
            let (key, raw) = item?;
            if key.len() != 8 {
                return Err(SledStoreError::BadKey(key.len()));
            }
            let entry: Entry =
                postcard::from_bytes(&raw).map_err(|source| SledStoreError::Decode {
                    what: "log entry",
                    source,
                })?;
            out.push(entry);
        }
        Ok(out)
    }

    pub fn sync_count(&self) -> u64 {
        self.probe.syncs()
    }

    /// Disk bytes sled reports for its files; the bake-off's space-amplification figure.
    pub fn size_on_disk(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0)
    }
}

/// The last log id is the last entry's, unless a purge covered every entry (a crash between
/// recording the purge point and deleting the entries leaves some behind it).
pub(crate) fn last_of(last_entry: Option<LogId>, last_purged: Option<LogId>) -> Option<LogId> {
    match (last_entry, last_purged) {
        (Some(entry), Some(purged)) if entry.index <= purged.index => Some(purged),
        (entry, purged) => entry.or(purged),
    }
}

impl RaftLogReader<TypeConfig> for SledLogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        self.read_range(range).map_err(errors::read_logs)
    }
}

impl RaftLogStorage<TypeConfig> for SledLogStore {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let last_purged: Option<LogId> = self
            .get_meta(KEY_LAST_PURGED, "last_purged")
            .map_err(errors::read_logs)?;
        let last = self.last_entry_log_id().map_err(errors::read_logs)?;
        Ok(LogState {
            last_purged_log_id: last_purged,
            last_log_id: last_of(last, last_purged),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        self.put_meta(KEY_VOTE, vote, "vote")
            .map_err(errors::write_vote)?;
        self.flush().await.map_err(errors::write_vote)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        self.get_meta(KEY_VOTE, "vote").map_err(errors::read_vote)
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        // Not flushed: losing the committed mark only means replaying from the leader's
        // commit index later, never losing an entry.
        match &committed {
            Some(c) => self.put_meta(KEY_COMMITTED, c, "committed"),
            None => self
                .meta
                .remove(KEY_COMMITTED)
                .map(|_| ())
                .map_err(SledStoreError::from),
        }
        .map_err(errors::write_any)?;
        self.probe.set_committed(committed.map(|c| c.index));
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        self.get_meta(KEY_COMMITTED, "committed")
            .map_err(errors::read_any)
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
        let started = Instant::now();
        let mut batch = sled::Batch::default();
        for entry in entries {
            let raw = postcard::to_stdvec(&entry).map_err(|source| {
                errors::write_logs(SledStoreError::Encode {
                    what: "log entry",
                    source,
                })
            })?;
            batch.insert(&entry.log_id.index.to_be_bytes(), raw);
        }
        self.log.apply_batch(batch).map_err(errors::write_logs)?;
        let flushed = self.flush().await;
        self.timings.append(started.elapsed());
        match flushed {
            Ok(()) => {
                callback.log_io_completed(Ok(()));
                Ok(())
            }
            Err(e) => {
                callback.log_io_completed(Err(std::io::Error::other(e.to_string())));
                Err(errors::write_logs(e))
            }
        }
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let keys: Vec<_> = self
            .log
            .range(log_id.index.to_be_bytes()..)
            .keys()
            .collect::<Result<_, _>>()
            .map_err(errors::write_logs)?;
        let mut batch = sled::Batch::default();
        for key in keys {
            batch.remove(key);
        }
        self.log.apply_batch(batch).map_err(errors::write_logs)?;
        self.flush().await.map_err(errors::write_logs)
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        // Record the purge point first: a crash between the two steps leaves entries behind it
        // that get_log_state ignores, never a hole in front of it.
        self.put_meta(KEY_LAST_PURGED, &log_id, "last_purged")
            .map_err(errors::write_logs)?;
        self.flush().await.map_err(errors::write_logs)?;
        let keys: Vec<_> = self
            .log
            .range(..=log_id.index.to_be_bytes())
            .keys()
            .collect::<Result<_, _>>()
            .map_err(errors::write_logs)?;
        let mut batch = sled::Batch::default();
        for key in keys {
            batch.remove(key);
        }
        self.log.apply_batch(batch).map_err(errors::write_logs)?;
        Ok(())
    }
}
