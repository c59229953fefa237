//! The Raft log on `compaction`'s segmented append-only log.
//!
//! ```text
//!  <dir>/segments/<base>.log ...   one compaction entry per Raft entry, offset = Raft index,
//!                                  payload = postcard(Entry) (the log store format, version 1:
//!                                  `store::format`); append + group-committed fdatasync
//!  <dir>/raft-state                tagged (0x0102 v1): vote, committed, last purged, replaced
//!                                  atomically (temp file, fsync, rename, directory fsync)
//! ```
//!
//! The entries appended last are also kept decoded in memory (`Tail`): openraft reads every
//! committed entry back to apply it, and the leader reads new entries to replicate them, right
//! after appending them; from the tail neither costs a trip to the blocking pool, a read or a
//! decode. Store work the caller waits for runs on the caller's worker thread
//! (`block_in_place`) on a multi-threaded runtime, not on the blocking pool: openraft's core
//! awaits each append's fdatasync before it does anything else, so handing it to another
//! thread only adds two wake-ups to every commit (decision 0131).
//!
//! Purge deletes whole sealed segments; entries at or below the purge point that still sit in a
//! kept segment are hidden by the recorded purge point. When a purge covers the whole log (a
//! follower that installed a snapshot ahead of its log) the log is emptied so the next append can
//! start right after the snapshot. Torn tails are compaction's job: it truncates a partial last
//! frame at open and refuses damage in the middle.

use std::collections::VecDeque;
use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use compaction::{Log, LogConfig, LogError, Offset, SpaceGuard, TimestampMs};
use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{OptionalSend, RaftLogReader};
use serde::Deserialize;

use crate::metrics as m;
use crate::store::errors;
use crate::store::probe::StoreProbe;
use crate::store::sled_store::last_of;
use crate::types::{Entry, LogId, StorageError, TypeConfig, Vote};

const STATE_FILE: &str = "raft-state";
/// Purge granularity: the log behind a snapshot goes away a segment at a time, so the disk holds
/// up to one segment more than the live log.
const SEGMENT_BYTES: u64 = 8 * 1024 * 1024;
/// The committed mark is written at most this often (it costs an atomic file replace); a
/// stale mark only means a restarted node waits for the leader before applying its tail.
const COMMITTED_WRITE_INTERVAL: std::time::Duration = std::time::Duration::from_millis(200);
/// Longest run of missing indexes an append may skip (filled with hole markers). openraft itself
/// always appends contiguously; its conformance suite writes sparse logs.
const HOLE_ENTRIES_MAX: u64 = 64 * 1024;
/// Entries and encoded bytes the in-memory tail keeps at most.
const TAIL_ENTRIES_MAX: usize = 1024;
const TAIL_BYTES_MAX: usize = 8 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum SegmentStoreError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    StateFile(#[from] compaction::AtomicFileError),
    #[error("undecodable {what}: {source}")]
    Decode {
        what: &'static str,
        source: postcard::Error,
    },
    #[error("cannot encode {what}: {source}")]
    Encode {
        what: &'static str,
        source: postcard::Error,
    },
    #[error("{path}: {source}")]
    StateFormat {
        path: PathBuf,
        source: crate::format::FormatError,
    },
    #[error("log entry at offset {offset} holds Raft index {index}")]
    IndexMismatch { offset: u64, index: u64 },
    #[error("cannot create {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("append at index {got} leaves a gap of more than {HOLE_ENTRIES_MAX} after {next}")]
    GapTooLarge { next: u64, got: u64 },
    #[error("background task failed: {0}")]
    Join(String),
}

impl SegmentStoreError {
    /// Whether the write failed for lack of space (ENOSPC, EDQUOT, or the guard refused it).
    pub fn is_storage_full(&self) -> bool {
        match self {
            SegmentStoreError::Log(e) => e.is_storage_full(),
            SegmentStoreError::StateFile(e) => e.is_storage_full(),
            _ => false,
        }
    }
}

/// The small state kept beside the log.
/// (Deserialize only reads the untagged file of c076aca and before.)
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RaftStateFile {
    pub vote: Option<Vote>,
    pub committed: Option<LogId>,
    pub last_purged: Option<LogId>,
}

impl RaftStateFile {
    /// `0x02 | 0x0102 | v1 | opt(vote) | opt(committed log id) | opt(last purged log id)`.
    pub fn encode(&self) -> Vec<u8> {
        use crate::format::openraft_codec::{put_log_id, put_vote};
        let mut w = crate::format::wire::Writer(Vec::with_capacity(64));
        crate::format::write_header(&mut w.0, crate::format::tags::SEGMENT_STORE_STATE, 1);
        w.opt(self.vote.as_ref(), put_vote);
        w.opt(self.committed.as_ref(), put_log_id);
        w.opt(self.last_purged.as_ref(), put_log_id);
        w.0
    }

    /// Reads the tagged file, or the bare postcard one of c076aca and before.
    pub fn decode(bytes: &[u8]) -> Result<Self, crate::format::FormatError> {
        use crate::format::openraft_codec::{get_log_id, get_vote};
        use crate::format::{tags, wire::Reader, Framed};
        match crate::format::split_bare(bytes)? {
            Framed::Untagged(raw) => crate::format::from_postcard(raw, "untagged raft state"),
            Framed::Tagged { tag, version, body } => {
                tags::check_exact(tag, version, tags::SEGMENT_STORE_STATE)?;
                let mut r = Reader::new(body, "segment store state");
                let state = RaftStateFile {
                    vote: r.opt("vote", get_vote)?,
                    committed: r.opt("committed", get_log_id)?,
                    last_purged: r.opt("last purged", get_log_id)?,
                };
                r.finish()?;
                Ok(state)
            }
        }
    }
}

/// The last entries appended, decoded, contiguous and ending at the log's last entry whenever
/// it is not empty (every append, truncation, purge and reset keeps it so).
#[derive(Default)]
struct Tail {
    /// Each entry with its encoded size.
    entries: VecDeque<(Entry, usize)>,
    bytes: usize,
}

impl Tail {
    fn first_index(&self) -> Option<u64> {
        self.entries.front().map(|(e, _)| e.log_id.index)
    }

    fn next_index(&self) -> Option<u64> {
        self.entries.back().map(|(e, _)| e.log_id.index + 1)
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// Forgets entries at `index` and after (a truncation).
    fn cut_from(&mut self, index: u64) {
        while self
            .entries
            .back()
            .is_some_and(|(e, _)| e.log_id.index >= index)
        {
            if let Some((_, size)) = self.entries.pop_back() {
                self.bytes -= size;
            }
        }
    }

    /// Forgets entries up to `index` included (a purge, or the size caps).
    fn drop_to(&mut self, index: u64) {
        while self
            .entries
            .front()
            .is_some_and(|(e, _)| e.log_id.index <= index)
        {
            self.pop_front();
        }
    }

    fn pop_front(&mut self) {
        if let Some((_, size)) = self.entries.pop_front() {
            self.bytes -= size;
        }
    }

    /// Adds entries just appended at `first..`; a gap before them (hole markers) restarts it.
    fn push(&mut self, first: u64, appended: Vec<(Entry, usize)>) {
        self.cut_from(first);
        if self.next_index().is_some_and(|next| next != first) {
            self.clear();
        }
        for (entry, size) in appended {
            self.bytes += size;
            self.entries.push_back((entry, size));
        }
        while self.entries.len() > TAIL_ENTRIES_MAX || self.bytes > TAIL_BYTES_MAX {
            self.pop_front();
        }
    }

    /// Entries `from..until` (clipped at the log's end), if the tail holds all of them.
    fn read(&self, from: u64, until: u64) -> Option<Vec<Entry>> {
        let first = self.first_index()?;
        let next = self.next_index()?;
        let until = until.min(next);
        if from < first || from >= until {
            return None;
        }
        let skip = usize::try_from(from - first).ok()?;
        let take = usize::try_from(until - from).ok()?;
        Some(
            self.entries
                .iter()
                .skip(skip)
                .take(take)
                .map(|(e, _)| e.clone())
                .collect(),
        )
    }
}

struct Inner {
    dir: PathBuf,
    log: Log,
    /// The Raft log's disk-full state (decision 0112): a write that meets a full disk waits
    /// here and is retried, never failed (a failed log write stops openraft for good).
    space: SpaceGuard,
    /// Mirrors the state file; `committed` may be ahead of the file (it is written lazily).
    state: Mutex<RaftStateFile>,
    /// The last entry's id, so `get_log_state` needs no read.
    last: Mutex<Option<LogId>>,
    /// When the state file was last written.
    state_written: Mutex<Instant>,
    /// The last entries appended, decoded (see the module doc).
    tail: Mutex<Tail>,
    timings: m::EntryTimings,
}

/// The segmented-log store; clones share the log, so a clone is the log reader.
#[derive(Clone)]
pub struct SegmentLogStore {
    inner: Arc<Inner>,
    probe: StoreProbe,
}

fn decode_entry(payload: &[u8], offset: u64) -> Result<Entry, SegmentStoreError> {
    let entry: Entry =
        postcard::from_bytes(payload).map_err(|source| SegmentStoreError::Decode {
            what: "log entry",
            source,
        })?;
    if entry.log_id.index != offset {
        return Err(SegmentStoreError::IndexMismatch {
            offset,
            index: entry.log_id.index,
        });
    }
    Ok(entry)
}

impl Inner {
    fn lock_state(&self) -> std::sync::MutexGuard<'_, RaftStateFile> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_last(&self) -> std::sync::MutexGuard<'_, Option<LogId>> {
        self.last.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_tail(&self) -> std::sync::MutexGuard<'_, Tail> {
        self.tail.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn write_state(&self, state: &RaftStateFile) -> Result<(), SegmentStoreError> {
        let raw = state.encode();
        let started = Instant::now();
        compaction::write_file_atomically(&self.dir, STATE_FILE, &raw)?;
        m::record_fsync(started.elapsed());
        *self.state_written.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        Ok(())
    }

    /// Runs `write` until it succeeds or fails for another reason than a full disk; while the
    /// disk is full it waits (re-measuring free space with a back-off up to 100 ms). The guard
    /// logs one line when the Raft log becomes full and one when it resumes.
    fn until_written<T>(
        &self,
        mut write: impl FnMut(&Inner) -> Result<T, SegmentStoreError>,
    ) -> Result<T, SegmentStoreError> {
        loop {
            match write(self) {
                Err(e) if e.is_storage_full() => {
                    if !self.space.is_full() {
                        self.space.mark_full(&e.to_string());
                    }
                    self.space.wait_until_writable();
                }
                other => return other,
            }
        }
    }

    fn last_entry(&self) -> Result<Option<LogId>, SegmentStoreError> {
        let next = self.log.next_offset().0;
        if next == self.log.start_offset().0 {
            return Ok(None);
        }
        let last = next - 1;
        let entries = self.log.read(Offset(last), 1)?;
        match entries.first() {
            Some(e) if !e.payload.is_empty() => {
                Ok(Some(decode_entry(&e.payload, e.first_offset.0)?.log_id))
            }
            _ => Ok(None),
        }
    }

    /// Empties the log and restarts it at `next` (a purge covered every entry, or an append
    /// overwrites the whole log).
    fn empty_log(&self, next: u64) -> Result<(), SegmentStoreError> {
        self.lock_tail().clear();
        self.log.reset(Offset(next))?;
        *self.lock_last() = None;
        Ok(())
    }

    /// Makes the log end at `first` so an append there is contiguous: an overlap is cut (Raft
    /// overwrites a conflicting suffix), a short gap is filled with hole markers (empty payloads,
    /// which no encoded entry ever is; reads skip them).
    fn make_room(&self, first: u64) -> Result<(), SegmentStoreError> {
        let start = self.log.start_offset().0;
        let next = self.log.next_offset().0;
        if next == start {
            return Ok(()); // An empty log accepts any first offset.
        }
        if first < next {
            if first <= start {
                self.empty_log(first)?;
            } else {
                self.lock_tail().cut_from(first);
                self.log.truncate_from(Offset(first))?;
            }
        } else if first > next {
            if first - next > HOLE_ENTRIES_MAX {
                return Err(SegmentStoreError::GapTooLarge { next, got: first });
            }
            let holes: Vec<compaction::Entry> = (next..first)
                .map(|i| compaction::Entry::single(Offset(i), TimestampMs(0), Bytes::new()))
                .collect();
            self.log.append(&holes, TimestampMs(0))?;
        }
        Ok(())
    }

    fn read_range(&self, from: u64, until: u64) -> Result<Vec<Entry>, SegmentStoreError> {
        let purged_next = self.lock_state().last_purged.map_or(0, |p| p.index + 1);
        let from = from.max(purged_next).max(self.log.start_offset().0);
        let until = until.min(self.log.next_offset().0);
        if from >= until {
            return Ok(Vec::new());
        }
        self.log
            .read_range(Offset(from), Offset(until))?
            .iter()
            .filter(|e| !e.payload.is_empty())
            .map(|e| decode_entry(&e.payload, e.first_offset.0))
            .collect()
    }
}

impl SegmentLogStore {
    pub fn open(dir: &Path, probe: StoreProbe) -> Result<Self, SegmentStoreError> {
        std::fs::create_dir_all(dir).map_err(|source| SegmentStoreError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let config = LogConfig {
            max_segment_bytes: SEGMENT_BYTES,
            ..LogConfig::default()
        };
        let space = SpaceGuard::new("raft-log", dir, 0);
        // Observed, not admitted: the store waits for room itself; the guard's reserve only
        // holds back new client commands (`Control::write`).
        let log = Log::open(dir.join("segments"), config)?.observed_by(space.clone());
        let state: RaftStateFile = match compaction::read_file_checked(dir, STATE_FILE)? {
            None => RaftStateFile::default(),
            Some(raw) => {
                RaftStateFile::decode(&raw).map_err(|source| SegmentStoreError::StateFormat {
                    path: dir.join(STATE_FILE),
                    source,
                })?
            }
        };
        probe.set_committed(state.committed.map(|c| c.index));
        let inner = Inner {
            dir: dir.to_path_buf(),
            log,
            space,
            state: Mutex::new(state),
            last: Mutex::new(None),
            state_written: Mutex::new(Instant::now()),
            tail: Mutex::new(Tail::default()),
            timings: m::EntryTimings::new(),
        };
        let last = inner.last_entry()?;
        let purged = inner.lock_state().last_purged;
        // A crash between recording a purge and emptying the log leaves entries the purge covers.
        if let (Some(last), Some(purged)) = (last, purged) {
            if last.index <= purged.index {
                inner.empty_log(purged.index + 1)?;
            } else {
                *inner.lock_last() = Some(last);
            }
        } else {
            *inner.lock_last() = last;
        }
        Ok(Self {
            inner: Arc::new(inner),
            probe,
        })
    }

    /// The Raft log's disk-full guard.
    pub fn space(&self) -> &SpaceGuard {
        &self.inner.space
    }

    /// Bytes of the segment files.
    pub fn size_on_disk(&self) -> u64 {
        self.inner.log.size_bytes()
    }

    /// fdatasyncs run by group commit since open (appends per sync is the batching ratio).
    pub fn sync_count(&self) -> u64 {
        self.inner.log.sync_count()
    }

    /// Runs store work the caller waits for: on this worker thread (its other tasks move to
    /// another) on a multi-threaded runtime, else on the blocking pool.
    async fn blocking<T, F>(&self, f: F) -> Result<T, SegmentStoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T, SegmentStoreError> + Send + 'static,
    {
        let inner = self.inner.clone();
        if tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::MultiThread
        {
            return tokio::task::block_in_place(move || f(&inner));
        }
        tokio::task::spawn_blocking(move || f(&inner))
            .await
            .map_err(|e| SegmentStoreError::Join(e.to_string()))?
    }
}

fn bounds<RB: RangeBounds<u64>>(range: &RB) -> (u64, u64) {
    let from = match range.start_bound() {
        Bound::Included(i) => *i,
        Bound::Excluded(i) => i.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let until = match range.end_bound() {
        Bound::Included(i) => i.saturating_add(1),
        Bound::Excluded(i) => *i,
        Bound::Unbounded => u64::MAX,
    };
    (from, until)
}

impl RaftLogReader<TypeConfig> for SegmentLogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        let (from, until) = bounds(&range);
        if let Some(entries) = self.inner.lock_tail().read(from, until) {
            return Ok(entries);
        }
        self.blocking(move |inner| inner.read_range(from, until))
            .await
            .map_err(errors::read_logs)
    }
}

impl RaftLogStorage<TypeConfig> for SegmentLogStore {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let purged = self.inner.lock_state().last_purged;
        let last = *self.inner.lock_last();
        Ok(LogState {
            last_purged_log_id: purged,
            last_log_id: last_of(last, purged),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        let vote = *vote;
        self.blocking(move |inner| {
            let mut next = inner.lock_state().clone();
            next.vote = Some(vote);
            inner.until_written(|inner| inner.write_state(&next))?;
            inner.lock_state().vote = Some(vote);
            Ok(())
        })
        .await
        .map_err(errors::write_vote)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        Ok(self.inner.lock_state().vote)
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        // Written with the next vote or purge, or on its own at most every 200 ms: an older
        // committed mark on disk only means replaying a little less at restart.
        self.inner.lock_state().committed = committed;
        self.probe.set_committed(committed.map(|c| c.index));
        let due = self
            .inner
            .state_written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
            >= COMMITTED_WRITE_INTERVAL;
        if due {
            self.blocking(|inner| {
                let state = inner.lock_state().clone();
                match inner.write_state(&state) {
                    // The mark is lazy: on a full disk it waits for the next vote, purge or
                    // turn, and the guard (now full) holds back new client writes.
                    Err(e) if e.is_storage_full() => {
                        if !inner.space.is_full() {
                            inner.space.mark_full(&e.to_string());
                        }
                        Ok(())
                    }
                    other => other,
                }
            })
            .await
            .map_err(errors::write_any)?;
        }
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        Ok(self.inner.lock_state().committed)
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
        let mut frames = Vec::new();
        let mut decoded = Vec::new();
        let mut last = None;
        for entry in entries {
            let raw = postcard::to_stdvec(&entry).map_err(|source| {
                errors::write_logs(SegmentStoreError::Encode {
                    what: "log entry",
                    source,
                })
            })?;
            let size = raw.len();
            frames.push(compaction::Entry::single(
                Offset(entry.log_id.index),
                TimestampMs(0),
                Bytes::from(raw),
            ));
            last = Some(entry.log_id);
            decoded.push((entry, size));
        }
        if frames.is_empty() {
            callback.log_io_completed(Ok(()));
            return Ok(());
        }
        let first = frames[0].first_offset.0;
        let result = self
            .blocking(move |inner| {
                // A full disk: the append waits and is retried (after cutting whatever prefix
                // of `frames` made it in), so openraft neither stops nor hears of a write that
                // did not happen. A failed fdatasync is not retried: the log is poisoned.
                let info = inner.until_written(|inner| {
                    inner.make_room(first)?;
                    Ok(inner.log.append(&frames, TimestampMs(0))?)
                })?;
                *inner.lock_last() = last;
                inner.lock_tail().push(first, decoded);
                let sync_started = Instant::now();
                inner.log.sync_to(info.next_offset)?;
                inner.timings.fsync(sync_started.elapsed());
                Ok(())
            })
            .await;
        self.inner.timings.append(started.elapsed());
        match result {
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
        self.blocking(move |inner| {
            let start = inner.log.start_offset().0;
            if log_id.index <= start {
                inner.empty_log(log_id.index)?;
            } else {
                inner.lock_tail().cut_from(log_id.index);
                inner.log.truncate_from(Offset(log_id.index))?;
                let last = inner.last_entry()?;
                *inner.lock_last() = last;
            }
            Ok(())
        })
        .await
        .map_err(errors::write_logs)
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        self.blocking(move |inner| {
            // Record the purge point first: a crash after it leaves covered entries that reads
            // hide and open removes, never a hole in front of the purge point.
            let mut next = inner.lock_state().clone();
            next.last_purged = Some(log_id);
            inner.until_written(|inner| inner.write_state(&next))?;
            inner.lock_state().last_purged = Some(log_id);
            inner.lock_tail().drop_to(log_id.index);
            let last = *inner.lock_last();
            if last.is_none_or(|l| l.index <= log_id.index) {
                inner.empty_log(log_id.index + 1)?;
            } else {
                inner.log.purge_to(Offset(log_id.index + 1))?;
            }
            Ok(())
        })
        .await
        .map_err(errors::write_logs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::CommandBatch;
    use openraft::{CommittedLeaderId, EntryPayload};

    fn entry(index: u64) -> (Entry, usize) {
        let e = Entry {
            log_id: LogId::new(CommittedLeaderId::new(1, 1), index),
            payload: EntryPayload::Normal(CommandBatch(vec![Bytes::from(vec![index as u8; 10])])),
        };
        (e, 100)
    }

    fn indexes(entries: Option<Vec<Entry>>) -> Option<Vec<u64>> {
        entries.map(|v| v.iter().map(|e| e.log_id.index).collect())
    }

    fn tail_of(range: std::ops::Range<u64>) -> Tail {
        let mut tail = Tail::default();
        tail.push(range.start, range.map(entry).collect());
        tail
    }

    #[test]
    fn reads_only_ranges_it_holds_whole() {
        let tail = tail_of(5..10);
        assert_eq!(indexes(tail.read(5, 10)), Some(vec![5, 6, 7, 8, 9]));
        assert_eq!(indexes(tail.read(7, u64::MAX)), Some(vec![7, 8, 9]));
        assert_eq!(indexes(tail.read(9, 10)), Some(vec![9]));
        assert_eq!(indexes(tail.read(4, 10)), None, "starts before the tail");
        assert_eq!(indexes(tail.read(10, 12)), None, "nothing there");
        assert_eq!(indexes(Tail::default().read(0, 1)), None);
    }

    #[test]
    fn an_overlapping_append_replaces_the_suffix_and_a_gap_restarts_the_tail() {
        let mut tail = tail_of(1..6);
        // Raft overwrites a conflicting suffix from index 4.
        tail.push(4, (4..6).map(entry).collect());
        assert_eq!(indexes(tail.read(1, u64::MAX)), Some(vec![1, 2, 3, 4, 5]));
        assert_eq!(tail.bytes, 500);
        // An append past the end (hole markers on disk in between) keeps only the new run.
        tail.push(9, vec![entry(9)]);
        assert_eq!(indexes(tail.read(9, u64::MAX)), Some(vec![9]));
        assert_eq!(indexes(tail.read(5, u64::MAX)), None);
        assert_eq!(tail.bytes, 100);
    }

    #[test]
    fn truncation_purge_and_caps_forget_entries() {
        let mut tail = tail_of(1..11);
        tail.cut_from(8);
        assert_eq!(indexes(tail.read(1, u64::MAX)), Some((1..8).collect()));
        tail.drop_to(3);
        assert_eq!(indexes(tail.read(4, u64::MAX)), Some((4..8).collect()));
        assert_eq!(indexes(tail.read(3, u64::MAX)), None);
        assert_eq!(tail.bytes, 400);

        let mut long = Tail::default();
        let n = TAIL_ENTRIES_MAX as u64 + 10;
        long.push(0, (0..n).map(entry).collect());
        assert_eq!(long.entries.len(), TAIL_ENTRIES_MAX);
        assert_eq!(long.first_index(), Some(10));
        assert_eq!(long.next_index(), Some(n));
    }
}
