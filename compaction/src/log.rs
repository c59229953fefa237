//! [`Log`]: a directory of segment files behaving as one append-only log, shared by one writer
//! at a time and any number of concurrent readers.
//!
//! # Write path
//!
//! ```text
//!  append(entries, now_ms)                                  (writer mutex held)
//!   1. check limits and offsets (contiguous with the log end, or anywhere if the log is empty)
//!   2. roll if the active segment is full or old enough:
//!        fdatasync old segment  ── a sealed segment is always durable, so recovery can treat
//!                                  any bad byte in it as damage, never as a torn write
//!        create <base>.log, write + fdatasync its header, fsync the directory
//!   3. encode frames into one buffer; one pwrite at the end of the active segment
//!   4. publish: readers' view gets the new end, next offset and index points
//!  sync_to(end)                                             (no log lock held)
//!   5. group commit (see `group_commit`): one fdatasync of the active segment covers every
//!      append published before it started; `durable_offset` moves
//! ```
//!
//! Readers take the view's read lock only to find a file and a byte range, then read with
//! `pread` outside any lock: a Fetch never waits for an append or an fsync.
//!
//! # Recovery at open
//!
//! Segments are scanned in order; every frame's CRC and offsets are checked (sealed segments
//! with valid index files may skip this, see `LogConfig::verify_sealed_on_open`).
//! - In the **last** segment, a bad or partial frame with no valid frame anywhere after it is a
//!   torn write: the file is truncated there (and synced). A bad frame *followed* by a valid
//!   frame is damage: open fails with [`LogError::Corrupt`] naming the file and byte position.
//! - In a **sealed** segment any bad frame is damage (it was fsynced before the next segment
//!   existed), reported the same way.
//! - Segments must follow each other (`base == previous next offset`, or `>=` after a
//!   compacted segment); a gap is [`LogError::SegmentGap`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use bytes::Bytes;

use crate::config::LogConfig;
use crate::entry::Entry;
use crate::error::{CorruptReason, LogError};
use crate::frame::{self, FRAME_HEADER_LEN};
use crate::fsutil;
use crate::group_commit::{GroupCommit, SyncTarget};
use crate::index::SparseIndex;
use crate::index_file;
use crate::open_files::OpenFiles;
use crate::segment::{self, ScanMode, Segment, SegmentHeader, Window, SEGMENT_HEADER_LEN};
use crate::space::SpaceGuard;
use crate::types::{Offset, TimestampMs};

/// Where an append landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendInfo {
    /// First offset of the first appended entry.
    pub first_offset: Offset,
    /// Last offset of the last appended entry.
    pub last_offset: Offset,
    /// The log end after the append: pass it to [`Log::sync_to`] to wait for durability.
    pub next_offset: Offset,
}

/// A public summary of one segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The segment file.
    pub path: PathBuf,
    /// The segment's first offset (its file name).
    pub base_offset: Offset,
    /// The offset after the segment's last entry (its base if it has none).
    pub next_offset: Offset,
    /// File size, header included.
    pub size_bytes: u64,
    /// The largest entry timestamp (`None` when empty): time retention uses it.
    pub max_timestamp: Option<TimestampMs>,
    /// Written by compaction: offsets may have gaps.
    pub compacted: bool,
    /// The segment taking appends.
    pub active: bool,
}

/// Retention limits, applied by [`Log::apply_retention`]. `None` means unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RetentionPolicy {
    /// Delete the oldest segments while the log would still hold at least this many bytes
    /// without them (Kafka's `retention.bytes`).
    pub max_bytes: Option<u64>,
    /// Delete segments whose newest entry is older than this (Kafka's `retention.ms`).
    pub max_age_ms: Option<i64>,
}

/// What retention or a purge deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeletedSegments {
    /// Segment files deleted.
    pub segments: usize,
    /// Their total size.
    pub bytes: u64,
    /// The log's start offset afterwards.
    pub start_offset: Offset,
}

/// The readers' view of one segment.
#[derive(Debug, Clone)]
pub(crate) struct SegmentView {
    pub segment: Arc<Segment>,
    pub index: SparseIndex,
    /// Bytes of the file that hold published frames.
    pub end: u64,
    pub next_offset: Offset,
    pub last_offset: Option<Offset>,
    pub max_timestamp: Option<TimestampMs>,
}

impl SegmentView {
    fn base(&self) -> Offset {
        self.segment.base()
    }

    fn is_empty(&self) -> bool {
        self.last_offset.is_none()
    }

    fn info(&self, active: bool) -> SegmentInfo {
        SegmentInfo {
            path: self.segment.path.clone(),
            base_offset: self.base(),
            next_offset: self.next_offset,
            size_bytes: self.end,
            max_timestamp: self.max_timestamp,
            compacted: self.segment.header.compacted,
            active,
        }
    }
}

/// What readers see; the writer replaces parts of it after the bytes are in the files.
#[derive(Debug)]
pub(crate) struct Published {
    /// Ordered by base offset; never empty; the last one takes appends.
    pub segments: Vec<SegmentView>,
    /// Bumped when published bytes are rewritten (truncation, re-basing an empty log): a read
    /// that overlapped it retries.
    pub generation: u64,
}

impl Published {
    fn active(&self) -> &SegmentView {
        // `segments` is never empty (open creates a segment, nothing removes the last one).
        &self.segments[self.segments.len() - 1]
    }

    fn active_mut(&mut self) -> &mut SegmentView {
        let last = self.segments.len() - 1;
        &mut self.segments[last]
    }

    fn start_offset(&self) -> Offset {
        self.segments[0].base()
    }

    fn next_offset(&self) -> Offset {
        self.active().next_offset
    }

    fn is_empty(&self) -> bool {
        self.segments.len() == 1 && self.segments[0].is_empty()
    }
}

/// The writer's own state: where the next frame goes.
#[derive(Debug)]
pub(crate) struct Writer {
    pub active: Arc<Segment>,
    pub position: u64,
    pub next_offset: Offset,
    /// `now_ms` of the first append into the active segment in this process: the segment's
    /// age for time-based rolling starts there (after a restart the clock starts again, as
    /// Kafka's does for segments without a usable timestamp).
    pub roll_clock_start_ms: Option<i64>,
    /// The roll limits in force: the config's at open, changed by [`Log::set_roll_limits`].
    pub max_segment_bytes: u64,
    pub segment_ms: Option<i64>,
    encode_buf: Vec<u8>,
    /// A failed write left bytes past `position` in the active segment and cutting them
    /// failed for lack of space (btrfs needs space to truncate under a quota): the cut is
    /// retried before the next write, which is refused until it succeeds. The bytes are past
    /// the published end, so no reader sees them; a restart before the cut may recover whole
    /// frames of the refused write, exactly as a crash between a write and its
    /// acknowledgement does.
    uncut_tail: bool,
}

/// An append-only log of [`Entry`]s over segment files in one directory.
///
/// `Log` is `Send + Sync`: share it in an `Arc`. Appends, truncation, retention and compaction
/// serialize on an internal writer lock; reads run concurrently with all of them.
#[derive(Debug)]
pub struct Log {
    pub(crate) dir: PathBuf,
    pub(crate) config: LogConfig,
    /// Serializes maintenance (retention, purge, truncation, compaction) with each other.
    /// Appends do not take it, so a long compaction does not stop them.
    pub(crate) maintenance: Mutex<()>,
    pub(crate) writer: Mutex<Writer>,
    pub(crate) published: RwLock<Published>,
    pub(crate) commit: GroupCommit,
    /// The budget its segment files are open under.
    pub(crate) files: OpenFiles,
    /// Told of every ENOSPC/EDQUOT of an append (decision 0112); `None`: only the errors say.
    pub(crate) space: Option<SpaceGuard>,
    /// Whether `space` also refuses appends up front (while full, or below its reserve).
    pub(crate) space_admits: bool,
    /// Told when a sealed segment's index files could not be written for lack of space.
    pub(crate) index_space: Option<SpaceGuard>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The log never panics while holding a lock; should a caller's panic poison one anyway,
    // the data it guards is still consistent (every update is done before the guard drops).
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Log {
    /// Opens (or creates) the log in `dir`, recovering it as the module docs describe; its
    /// segment files stay open for as long as they exist.
    pub fn open(dir: impl AsRef<Path>, config: LogConfig) -> Result<Log, LogError> {
        Log::open_with_files(dir, config, OpenFiles::unlimited())
    }

    /// [`Log::open`], with the segment files under a budget shared with other logs: idle
    /// ones are closed and reopened on use (see `open_files`).
    pub fn open_with_files(
        dir: impl AsRef<Path>,
        config: LogConfig,
        files: OpenFiles,
    ) -> Result<Log, LogError> {
        config.validate()?;
        let dir = dir.as_ref().to_path_buf();
        fsutil::create_dir_durably(&dir)?;
        crate::log_compaction::recover_interrupted_swaps(&dir, &config)?;
        let bases = list_segments(&dir)?;
        index_file::remove_orphans(&dir, &bases)?;
        let mut views = Vec::with_capacity(bases.len().max(1));
        if bases.is_empty() {
            views.push(create_segment_view(&dir, Offset(0), &files)?);
        }
        for (i, base) in bases.iter().enumerate() {
            let is_last = i + 1 == bases.len();
            let view = open_segment(&dir, *base, is_last, &config, &files)?;
            if let Some(previous) = views.last() {
                check_follows(previous, &view)?;
            }
            views.push(view);
        }
        let active = views
            .last()
            .map(|v| (Arc::clone(&v.segment), v.end, v.next_offset))
            .ok_or(LogError::Unsupported("log without segments"))?;
        // Bytes read back at open may still sit only in the page cache (a crash of the process,
        // not of the machine): sync once so `durable_offset` starts out true.
        sync_segment(&active.0)?;
        let writer = Writer {
            active: active.0,
            position: active.1,
            next_offset: active.2,
            roll_clock_start_ms: None,
            max_segment_bytes: config.max_segment_bytes,
            segment_ms: config.segment_ms,
            encode_buf: Vec::new(),
            uncut_tail: false,
        };
        Ok(Log {
            dir,
            config,
            maintenance: Mutex::new(()),
            writer: Mutex::new(writer),
            published: RwLock::new(Published {
                segments: views,
                generation: 0,
            }),
            commit: GroupCommit::new(active.2),
            files,
            space: None,
            space_admits: false,
            index_space: None,
        })
    }

    /// Puts the log's appends under `space` (checked before every append, told of every
    /// ENOSPC/EDQUOT) and its index files under `index_space` (see [`SpaceGuard`]).
    pub fn with_space(mut self, space: SpaceGuard, index_space: Option<SpaceGuard>) -> Log {
        self.space = Some(space);
        self.space_admits = true;
        self.index_space = index_space;
        self
    }

    /// Tells `space` of every ENOSPC/EDQUOT of an append without letting it refuse any: for a
    /// writer that waits for room itself and must not be refused by a reserve meant for others
    /// (the Raft log store).
    pub fn observed_by(mut self, space: SpaceGuard) -> Log {
        self.space = Some(space);
        self.space_admits = false;
        self
    }

    /// The guard of the log's appends, if it has one.
    pub fn space(&self) -> Option<&SpaceGuard> {
        self.space.as_ref()
    }

    /// Tells the guard about a failed append step (ENOSPC/EDQUOT makes it full).
    fn note_write_error(&self, error: &LogError) {
        if let (Some(space), Some(source)) = (&self.space, error.io_source()) {
            space.observe(source);
        }
    }

    /// The directory holding the segment files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Changes when the active segment rolls (a topic's `segment.bytes` / `segment.ms` altered
    /// while the log is open), from the next append on. The entry size limit stays the one the
    /// log was opened with: an entry never has to fit a segment smaller than it allowed.
    pub fn set_roll_limits(
        &self,
        max_segment_bytes: u64,
        segment_ms: Option<i64>,
    ) -> Result<(), LogError> {
        LogConfig {
            max_segment_bytes,
            segment_ms,
            ..self.config.clone()
        }
        .validate()?;
        let mut writer = lock(&self.writer);
        writer.max_segment_bytes = max_segment_bytes;
        writer.segment_ms = segment_ms;
        Ok(())
    }

    /// The configuration the log was opened with.
    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    pub(crate) fn read_view(&self) -> RwLockReadGuard<'_, Published> {
        self.published.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn write_view(&self) -> RwLockWriteGuard<'_, Published> {
        self.published.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The first offset of the log (its oldest segment's base).
    pub fn start_offset(&self) -> Offset {
        self.read_view().start_offset()
    }

    /// The log end: the offset the next append must start at.
    pub fn next_offset(&self) -> Offset {
        self.read_view().next_offset()
    }

    /// Every entry below this offset is on disk (fdatasync'ed).
    pub fn durable_offset(&self) -> Offset {
        self.commit.durable()
    }

    /// Total bytes of the segment files.
    pub fn size_bytes(&self) -> u64 {
        self.read_view().segments.iter().map(|s| s.end).sum()
    }

    /// The base offset of the segment taking appends (it changes when the log rolls).
    pub fn active_base_offset(&self) -> Offset {
        let view = self.read_view();
        view.segments.last().map_or(Offset(0), |s| s.segment.base())
    }

    /// A summary of every segment, oldest first.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        let view = self.read_view();
        let last = view.segments.len() - 1;
        view.segments
            .iter()
            .enumerate()
            .map(|(i, s)| s.info(i == last))
            .collect()
    }

    fn check_entries(&self, entries: &[Entry]) -> Result<(), LogError> {
        let mut previous: Option<&Entry> = None;
        for entry in entries {
            let key_len = entry.key.as_ref().map_or(0, |k| k.len() as u64);
            if key_len > u64::from(self.config.max_key_bytes) {
                return Err(LogError::KeyTooLarge {
                    size: key_len,
                    max: u64::from(self.config.max_key_bytes),
                });
            }
            if entry.frame_len() > self.config.entry_limit() {
                return Err(LogError::EntryTooLarge {
                    size: entry.frame_len(),
                    max: self.config.entry_limit(),
                });
            }
            if entry.last_offset < entry.first_offset {
                return Err(LogError::InvalidEntry("last offset before first offset"));
            }
            if entry.last_offset > Offset::MAX {
                return Err(LogError::InvalidEntry("offset past the maximum"));
            }
            if entry.last_offset.0 - entry.first_offset.0 > u64::from(u32::MAX) {
                return Err(LogError::InvalidEntry("entry spans more than 2^32 offsets"));
            }
            if entry.tombstone && (entry.key.is_none() || !entry.payload.is_empty()) {
                return Err(LogError::InvalidEntry(
                    "a tombstone needs a key and no payload",
                ));
            }
            if let Some(previous) = previous {
                if entry.first_offset != previous.next_offset() {
                    return Err(LogError::NonContiguous {
                        expected: previous.next_offset(),
                        got: entry.first_offset,
                    });
                }
            }
            previous = Some(entry);
        }
        Ok(())
    }

    /// Appends `entries` (contiguous, starting at [`Log::next_offset`], or anywhere if the log
    /// is empty) and publishes them to readers. Not durable yet: see [`Log::sync_to`].
    ///
    /// `now_ms` only drives time-based segment rolling. Limits and offsets are checked before
    /// anything is written; an IO error mid-way (while rolling to a new segment) can leave a
    /// prefix of `entries` appended: [`Log::next_offset`] says where the log ends.
    pub fn append(&self, entries: &[Entry], now_ms: TimestampMs) -> Result<AppendInfo, LogError> {
        let (Some(first), Some(last)) = (entries.first(), entries.last()) else {
            return Err(LogError::InvalidEntry("an append needs at least one entry"));
        };
        self.check_entries(entries)?;
        self.commit.check_poisoned()?;
        if let Some(space) = self.space.as_ref().filter(|_| self.space_admits) {
            space.admit(entries.iter().map(Entry::frame_len).sum())?;
        }
        let mut writer = lock(&self.writer);
        if writer.uncut_tail {
            let position = writer.position;
            let file = writer.active.file.for_write()?;
            self.cut_tail(&mut writer, &file, position)
                .inspect_err(|e| self.note_write_error(e))?;
        }
        if first.first_offset != writer.next_offset {
            if self.read_view().is_empty() {
                self.rebase_empty(&mut writer, first.first_offset)?;
            } else {
                return Err(LogError::NonContiguous {
                    expected: writer.next_offset,
                    got: first.first_offset,
                });
            }
        }
        let mut pending: Vec<&Entry> = Vec::new();
        for entry in entries {
            if self.should_roll(&writer, &pending, entry, now_ms.0) {
                self.write_pending(&mut writer, &mut pending)
                    .and_then(|()| self.roll(&mut writer))
                    .inspect_err(|e| self.note_write_error(e))?;
            }
            if writer.roll_clock_start_ms.is_none() {
                writer.roll_clock_start_ms = Some(now_ms.0);
            }
            pending.push(entry);
        }
        self.write_pending(&mut writer, &mut pending)
            .inspect_err(|e| self.note_write_error(e))?;
        Ok(AppendInfo {
            first_offset: first.first_offset,
            last_offset: last.last_offset,
            next_offset: writer.next_offset,
        })
    }

    /// Whether `entry` must go to a new segment, given the `pending` entries not yet written.
    fn should_roll(&self, writer: &Writer, pending: &[&Entry], entry: &Entry, now_ms: i64) -> bool {
        let pending_bytes: u64 = pending.iter().map(|e| e.frame_len()).sum();
        let position = writer.position + pending_bytes;
        if position == SEGMENT_HEADER_LEN as u64 {
            return false; // An empty segment takes any entry that fits the limits.
        }
        let too_big = position + entry.frame_len() > writer.max_segment_bytes;
        let offsets_overflow = entry.last_offset.0 - writer.active.base().0 > u64::from(u32::MAX);
        let too_old = match (writer.segment_ms, writer.roll_clock_start_ms) {
            (Some(segment_ms), Some(start)) => now_ms.saturating_sub(start) >= segment_ms,
            _ => false,
        };
        too_big || offsets_overflow || too_old
    }

    /// Writes the `pending` entries at the end of the active segment and publishes them.
    fn write_pending(
        &self,
        writer: &mut Writer,
        pending: &mut Vec<&Entry>,
    ) -> Result<(), LogError> {
        if pending.is_empty() {
            return Ok(());
        }
        let mut buf = std::mem::take(&mut writer.encode_buf);
        buf.clear();
        for entry in pending.iter() {
            frame::encode_into(entry, &mut buf);
        }
        let position = writer.position;
        let file = match writer.active.file.for_write() {
            Ok(file) => file,
            Err(error) => {
                writer.encode_buf = buf;
                return Err(error);
            }
        };
        let written = fsutil::write_all_at(&file, &writer.active.path, &buf, position);
        if let Err(error) = written {
            // A partial write may have left bytes past the published end; cut them so a later,
            // shorter append cannot leave stale frames behind it.
            let _ = self.cut_tail(writer, &file, position);
            writer.encode_buf = buf;
            return Err(error);
        }
        {
            let mut view = self.write_view();
            let interval = self.config.index_interval_bytes;
            let active = view.active_mut();
            let mut at = position;
            for entry in pending.iter() {
                active.index.observe(
                    active.segment.base(),
                    entry.first_offset,
                    at,
                    entry.frame_len(),
                    active.max_timestamp,
                    interval,
                );
                at += entry.frame_len();
                active.max_timestamp = Some(
                    active
                        .max_timestamp
                        .map_or(entry.max_timestamp_ms, |t| t.max(entry.max_timestamp_ms)),
                );
                active.last_offset = Some(entry.last_offset);
                active.next_offset = entry.next_offset();
            }
            active.end = at;
            writer.position = at;
            writer.next_offset = active.next_offset;
        }
        if buf.capacity() > 4 << 20 {
            buf = Vec::new(); // Do not pin a huge buffer after one large append.
        }
        writer.encode_buf = buf;
        pending.clear();
        Ok(())
    }

    /// Cuts the active segment back to `position`. Out of space, the cut waits for the next
    /// write (`uncut_tail`); any other failure leaves the file's state unknown: poisoned.
    fn cut_tail(
        &self,
        writer: &mut Writer,
        file: &std::fs::File,
        position: u64,
    ) -> Result<(), LogError> {
        match file.set_len(position) {
            Ok(()) => {
                writer.uncut_tail = false;
                Ok(())
            }
            Err(cut) => {
                let cut = LogError::io("ftruncate", &writer.active.path, cut);
                if cut.is_storage_full() {
                    writer.uncut_tail = true;
                } else {
                    self.commit.poison(&cut);
                }
                Err(cut)
            }
        }
    }

    /// Seals the active segment (fdatasync, index files) and starts a new one at the log end.
    fn roll(&self, writer: &mut Writer) -> Result<(), LogError> {
        let old = Arc::clone(&writer.active);
        if let Err(error) = sync_segment(&old) {
            self.commit.poison(&error);
            return Err(error);
        }
        self.commit.mark_durable(writer.next_offset);
        let sealed = self.read_view().active().clone();
        // Index files are a cache: failing to write one costs a scan at the next open, nothing
        // more, so the roll goes on.
        if let Err(error) = index_file::write(&self.dir, &sealed) {
            self.index_write_failed(&error, &old.path, old.base());
        }
        let view = create_segment_view(&self.dir, writer.next_offset, &self.files)?;
        writer.active = Arc::clone(&view.segment);
        writer.position = SEGMENT_HEADER_LEN as u64;
        writer.roll_clock_start_ms = None;
        self.write_view().segments.push(view);
        Ok(())
    }

    /// A sealed segment's index files could not be written: a partial file is removed (it would
    /// only hold space and fail its check at open) and a full disk is told to the index guard.
    pub(crate) fn index_write_failed(&self, error: &LogError, segment: &Path, base: Offset) {
        if error.is_storage_full() {
            if let (Some(space), Some(source)) = (&self.index_space, error.io_source()) {
                space.observe(source);
            }
            if let Err(removed) = index_file::remove(&self.dir, base) {
                tracing::warn!(error = %removed, segment = %segment.display(), "could not remove partial index files");
            }
        } else {
            tracing::warn!(%error, segment = %segment.display(), "could not write index files");
        }
    }

    /// Replaces the only, empty segment by one starting at `base` (an empty log may start
    /// anywhere). Old file first: a crash in between leaves an empty directory, which opens as
    /// an empty log too.
    fn rebase_empty(&self, writer: &mut Writer, base: Offset) -> Result<(), LogError> {
        let old = Arc::clone(&writer.active);
        old.file.pin()?;
        fsutil::remove_file(&old.path)?;
        index_file::remove(&self.dir, old.base())?;
        fsutil::sync_dir(&self.dir)?;
        let view = create_segment_view(&self.dir, base, &self.files)?;
        writer.active = Arc::clone(&view.segment);
        writer.position = SEGMENT_HEADER_LEN as u64;
        writer.next_offset = base;
        writer.roll_clock_start_ms = None;
        {
            let mut published = self.write_view();
            published.segments = vec![view];
            published.generation += 1;
        }
        self.commit.reset(base, base);
        Ok(())
    }

    /// Appends and waits until the entries are durable (group commit with concurrent callers).
    pub fn append_durable(
        &self,
        entries: &[Entry],
        now_ms: TimestampMs,
    ) -> Result<AppendInfo, LogError> {
        let info = self.append(entries, now_ms)?;
        self.sync_to(info.next_offset)?;
        Ok(info)
    }

    /// Returns once every entry below `end` is durable. Concurrent callers share fsyncs: the
    /// first caller finding no sync running performs one covering every append published so
    /// far; the others wait for it (see `group_commit`).
    pub fn sync_to(&self, end: Offset) -> Result<(), LogError> {
        self.commit.sync_to(end, || {
            let view = self.read_view();
            let active = Arc::clone(&view.active().segment);
            SyncTarget {
                end: view.next_offset(),
                sync: Box::new(move || sync_segment(&active)),
            }
        })
    }

    /// Makes every entry appended so far durable; returns the durable end.
    pub fn sync(&self) -> Result<Offset, LogError> {
        let end = self.next_offset();
        self.sync_to(end)?;
        Ok(end.max(self.durable_offset()))
    }

    /// How many fdatasyncs group commit has run since open (appends per sync is the batching
    /// ratio).
    pub fn sync_count(&self) -> u64 {
        self.commit.sync_count()
    }

    /// Whether some appended entries are not durable yet (for a periodic flusher).
    pub fn has_unsynced(&self) -> bool {
        self.durable_offset() < self.next_offset()
    }
}

/// Lists the `<base>.log` files in `dir`, sorted by base.
pub(crate) fn list_segments(dir: &Path) -> Result<Vec<Offset>, LogError> {
    let mut bases = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| LogError::io("list directory", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| LogError::io("list directory", dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some((base, segment::LOG_SUFFIX)) = segment::parse_file_name(name) {
            bases.push(base);
        }
    }
    bases.sort();
    Ok(bases)
}

/// fdatasyncs `segment`'s file; once it succeeded, the writes it covered no longer keep the
/// file open.
pub(crate) fn sync_segment(segment: &Segment) -> Result<(), LogError> {
    let (file, writes) = segment.file.for_sync()?;
    file.sync_data()
        .map_err(|e| LogError::io("fdatasync", &segment.path, e))?;
    segment.file.synced(writes);
    Ok(())
}

/// Creates an empty segment at `base` and makes its name durable.
pub(crate) fn create_segment_view(
    dir: &Path,
    base: Offset,
    files: &OpenFiles,
) -> Result<SegmentView, LogError> {
    let path = dir.join(segment::file_name(base, segment::LOG_SUFFIX));
    let segment = Segment::create(
        path,
        SegmentHeader {
            base,
            compacted: false,
            covers_until: None,
        },
        files,
    )?;
    fsutil::sync_dir(dir)?;
    Ok(SegmentView {
        segment: Arc::new(segment),
        index: SparseIndex::new(),
        end: SEGMENT_HEADER_LEN as u64,
        next_offset: base,
        last_offset: None,
        max_timestamp: None,
    })
}

/// Opens one segment at open time: header, then index files or a scan.
fn open_segment(
    dir: &Path,
    base: Offset,
    is_last: bool,
    config: &LogConfig,
    files: &OpenFiles,
) -> Result<SegmentView, LogError> {
    let path = dir.join(segment::file_name(base, segment::LOG_SUFFIX));
    let (file, len, header) = Segment::open(path.clone())?;
    let header = match header {
        Ok(header) => header,
        // The header is written and synced before the directory entry is: a last segment with
        // no frames and a short or unreadable header is a creation the crash interrupted.
        Err(_) if is_last && len <= SEGMENT_HEADER_LEN as u64 => {
            tracing::warn!(segment = %path.display(), "rewriting the torn header of an empty segment");
            let header = SegmentHeader {
                base,
                compacted: false,
                covers_until: None,
            };
            file.set_len(0)
                .map_err(|e| LogError::io("ftruncate", &path, e))?;
            fsutil::write_all_at(&file, &path, &header.encode(), 0)?;
            file.sync_data()
                .map_err(|e| LogError::io("fdatasync", &path, e))?;
            header
        }
        Err(fault) => return Err(fault.into_error(&path)),
    };
    if header.base != base {
        return Err(LogError::Corrupt {
            path,
            position: 0,
            reason: CorruptReason::SegmentHeader("base offset does not match the file name"),
        });
    }
    let segment = Segment::new(path, file, header, files);
    if !is_last && !config.verify_sealed_on_open {
        if let Some(summary) = index_file::load(dir, &segment, len)? {
            return Ok(SegmentView {
                segment: Arc::new(segment),
                index: summary.index,
                end: summary.end,
                next_offset: summary.next_offset,
                last_offset: summary.last_offset,
                max_timestamp: summary.max_timestamp,
            });
        }
    }
    let mode = match (is_last, config.repair_tail_corruption) {
        (true, false) => ScanMode::Tail,
        (true, true) => ScanMode::TailRepair,
        (false, _) => ScanMode::Sealed,
    };
    let scan = segment::scan(&segment, len, mode, config.index_interval_bytes)?;
    if let Some((position, fault)) = scan.torn_at {
        tracing::warn!(
            segment = %segment.path.display(),
            position,
            dropped_bytes = len - position,
            %fault,
            "truncating a torn tail"
        );
        segment
            .file
            .for_write()?
            .set_len(scan.valid_len)
            .map_err(|e| LogError::io("ftruncate", &segment.path, e))?;
        sync_segment(&segment)?;
    }
    let view = SegmentView {
        segment: Arc::new(segment),
        index: scan.index,
        end: scan.valid_len,
        next_offset: scan.next_offset,
        last_offset: scan.last_offset,
        max_timestamp: scan.max_timestamp,
    };
    if is_last {
        // The active segment changes; its index lives in memory until it is sealed.
        index_file::remove(dir, base)?;
    } else if !index_file::matches(dir, &view)? {
        if let Err(error) = index_file::write(dir, &view) {
            tracing::warn!(%error, segment = %view.segment.path.display(), "could not write index files");
        }
    }
    Ok(view)
}

/// Checks that `next` starts where `previous` ends.
fn check_follows(previous: &SegmentView, next: &SegmentView) -> Result<(), LogError> {
    let ok = if previous.segment.header.compacted {
        next.base() >= previous.next_offset
            && previous
                .segment
                .header
                .covers_until
                .is_none_or(|c| c == next.base())
    } else {
        next.base() == previous.next_offset
    };
    if ok {
        Ok(())
    } else {
        Err(LogError::SegmentGap {
            path: next.segment.path.clone(),
            expected: previous.next_offset,
            found: next.base(),
        })
    }
}

/// Reads frames of one segment from `position` to `end`, calling `visit` with each until it
/// returns `false`. A bad frame inside published bytes is reported as corruption.
pub(crate) fn for_each_frame(
    segment: &Segment,
    position: u64,
    end: u64,
    chunk_bytes: usize,
    mut visit: impl FnMut(u64, &Entry) -> bool,
) -> Result<(), LogError> {
    for_each_frame_sized(segment, position, end, chunk_bytes, true, |at, entry| {
        (visit(at, &entry), None)
    })
}

/// [`for_each_frame`] where `visit` may also resize the next read (`Some(bytes)`): a read sizes
/// it to its remaining budget so a frame crossing a chunk end does not cost a full chunk.
pub(crate) fn for_each_frame_sized(
    segment: &Segment,
    mut position: u64,
    end: u64,
    chunk_bytes: usize,
    verify_crc: bool,
    mut visit: impl FnMut(u64, Entry) -> (bool, Option<usize>),
) -> Result<(), LogError> {
    let file = segment.file.get()?;
    let mut window = Window::new(&file, &segment.path, end, chunk_bytes);
    if !verify_crc {
        window.trust_crc();
    }
    while position < end {
        let header = match window.frame(position)? {
            Ok(header) => header,
            Err(fault) => {
                return Err(segment.corrupt(position, CorruptReason::ReadMismatch(fault)));
            }
        };
        let entry = window.entry(position, &header);
        let (more, resize) = visit(position, entry);
        if !more {
            return Ok(());
        }
        if let Some(chunk_bytes) = resize {
            window.set_chunk_bytes(chunk_bytes);
        }
        position += u64::from(header.frame_len);
    }
    Ok(())
}

/// Bytes of payload and key: what a read's `max_bytes` counts.
pub(crate) fn entry_bytes(entry: &Entry) -> usize {
    entry.payload.len() + entry.key.as_ref().map_or(0, Bytes::len)
}

/// The smallest read chunk: small reads still get one reasonably sized IO.
pub(crate) const MIN_READ_CHUNK: usize = 64 << 10;
pub(crate) const MAX_READ_CHUNK: usize = 16 << 20;

pub(crate) fn read_chunk_bytes(max_bytes: usize, interval: u32) -> usize {
    max_bytes
        .saturating_add(interval as usize + FRAME_HEADER_LEN)
        .clamp(MIN_READ_CHUNK, MAX_READ_CHUNK)
}
