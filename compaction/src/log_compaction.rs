//! Key-based compaction of a segmented log, and the crash-safe swap of its output.
//!
//! Only sealed segments are rewritten; the active one keeps taking appends meanwhile. A keyed
//! record in a sealed segment survives if it is its key's latest record in the whole log
//! (active segment included) and is not an expired tombstone; unkeyed entries always survive.
//! Offsets are kept, so compacted segments have gaps (their header says so).
//!
//! # The swap, one group of adjacent sealed segments `[B, R)` at a time
//!
//! ```text
//!  1. write  B.log.cleaned     header {base B, compacted, covers_until R} + surviving frames
//!     fdatasync                 crash here: recovery deletes *.cleaned, old segments intact
//!  2. rename B.log.cleaned -> B.log.swap, fsync dir          <- commit point
//!  3. unlink the old segments in (B, R) and B's index files  crash here: recovery finds
//!  4. rename B.log.swap -> B.log (replaces the old B), fsync dir   B.log.swap and redoes 3-4
//!  5. write B's index files (a cache; rebuilt at open if lost)
//! ```
//!
//! Recovery at open (`recover_interrupted_swaps`) deletes every `*.cleaned` and completes
//! every `*.swap`, so after any crash the log is either wholly before or wholly after each
//! group's swap. Readers holding an old segment keep reading its (unlinked) file.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use crate::config::LogConfig;
use crate::error::{CorruptReason, LogError};
use crate::frame;
use crate::fsutil;
use crate::index::SparseIndex;
use crate::index_file;
use crate::keyed::TombstonePolicy;
use crate::log::{for_each_frame, list_segments, Log, SegmentView};
use crate::open_files::OpenFiles;
use crate::segment::{self, Segment, SegmentHeader, SEGMENT_HEADER_LEN};
use crate::types::{Offset, TimestampMs};

const CLEANED_SUFFIX: &str = "log.cleaned";
const SWAP_SUFFIX: &str = "log.swap";
/// Bytes buffered before each write of compaction output.
const WRITE_BUFFER_BYTES: usize = 1 << 20;
const SCAN_CHUNK_BYTES: usize = 1 << 20;

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompactionOutcome {
    /// Sealed segments rewritten (replaced by `segments_written` new ones).
    pub segments_rewritten: usize,
    /// New compacted segments.
    pub segments_written: usize,
    /// Size of the rewritten segments.
    pub bytes_before: u64,
    /// Size of what replaced them.
    pub bytes_after: u64,
    /// Superseded records dropped.
    pub records_removed: u64,
    /// Expired tombstones dropped.
    pub tombstones_removed: u64,
}

/// Per key: where its latest record is, and whether that record is an expired tombstone.
struct Latest {
    offset: Offset,
    expired_tombstone: bool,
}

impl Log {
    /// Compacts the sealed segments by key (see the module docs). `policy` decides which
    /// tombstones have been kept long enough.
    ///
    /// Truncating a compacted log below the end it had when compaction ran could lose values a
    /// later (truncated) record had superseded: compact logs that are never truncated, such as
    /// snapshots or Kafka compacted topics.
    pub fn compact(&self, policy: TombstonePolicy) -> Result<CompactionOutcome, LogError> {
        let _maintenance = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        self.commit.check_poisoned()?;
        let segments: Vec<SegmentView> = self.read_view().segments.clone();
        let sealed = segments.len() - 1;
        if sealed == 0 {
            return Ok(CompactionOutcome::default());
        }

        // Pass 1: the latest record of every key, and how much each sealed segment would lose.
        let mut latest: HashMap<Bytes, Latest> = HashMap::new();
        let mut removable = vec![0u64; sealed];
        let segment_of = |offset: Offset| -> usize {
            segments
                .partition_point(|s| s.segment.base() <= offset)
                .saturating_sub(1)
        };
        for view in &segments {
            let mut too_many = false;
            for_each_frame(
                &view.segment,
                SEGMENT_HEADER_LEN as u64,
                view.end,
                SCAN_CHUNK_BYTES,
                |_, entry| {
                    let Some(key) = &entry.key else { return true };
                    let record = Latest {
                        offset: entry.first_offset,
                        expired_tombstone: entry.tombstone
                            && policy.expired(entry.max_timestamp_ms),
                    };
                    match latest.insert(key.clone(), record) {
                        Some(previous) => {
                            let at = segment_of(previous.offset);
                            if at < sealed {
                                removable[at] += 1;
                            }
                        }
                        None if latest.len() > self.config.max_compaction_keys => {
                            too_many = true;
                            return false;
                        }
                        None => {}
                    }
                    true
                },
            )?;
            if too_many {
                return Err(LogError::TooManyKeys {
                    max: self.config.max_compaction_keys,
                });
            }
        }
        for record in latest.values().filter(|r| r.expired_tombstone) {
            let at = segment_of(record.offset);
            if at < sealed {
                removable[at] += 1;
            }
        }

        // Pass 2: rewrite groups of adjacent sealed segments that lose something.
        let mut outcome = CompactionOutcome::default();
        for group in plan_groups(&segments[..sealed], &removable, &self.config) {
            let until = segments[group.end].segment.base();
            let base = segments[group.start].segment.base();
            let rewritten = match self.rewrite_group(&segments[group.clone()], until, &latest) {
                Ok(rewritten) => rewritten,
                Err(error) => {
                    // The half-written `.cleaned` file is garbage (open removes it too); on a
                    // full disk it holds the space everything else needs. The sealed segments
                    // are untouched: compaction simply did not happen.
                    let cleaned = self.dir.join(segment::file_name(base, CLEANED_SUFFIX));
                    let _ = fsutil::remove_file(&cleaned);
                    return Err(error);
                }
            };
            outcome.segments_rewritten += group.len();
            outcome.segments_written += 1;
            outcome.bytes_before += segments[group.clone()].iter().map(|s| s.end).sum::<u64>();
            outcome.bytes_after += rewritten.view.end;
            outcome.records_removed += rewritten.records_removed;
            outcome.tombstones_removed += rewritten.tombstones_removed;
            let first_base = segments[group.start].segment.base();
            let mut published = self.write_view();
            let at = published
                .segments
                .iter()
                .position(|s| s.segment.base() == first_base)
                .ok_or(LogError::Unsupported(
                    "compacted segments vanished during compaction",
                ))?;
            published
                .segments
                .splice(at..at + group.len(), std::iter::once(rewritten.view));
        }
        Ok(outcome)
    }

    /// Writes the surviving records of `group` as one compacted segment covering
    /// `[group base, until)` and swaps it in (steps 1-5 of the module docs).
    fn rewrite_group(
        &self,
        group: &[SegmentView],
        until: Offset,
        latest: &HashMap<Bytes, Latest>,
    ) -> Result<Rewritten, LogError> {
        let base = group[0].segment.base();
        let cleaned_path = self.dir.join(segment::file_name(base, CLEANED_SUFFIX));
        let swap_path = self.dir.join(segment::file_name(base, SWAP_SUFFIX));
        let log_path = self.dir.join(segment::file_name(base, segment::LOG_SUFFIX));
        fsutil::remove_file(&cleaned_path)?;
        let header = SegmentHeader {
            base,
            compacted: true,
            covers_until: Some(until),
        };
        // Its own slot, never closed: its path changes twice before the swap is published.
        let output = Segment::create(cleaned_path.clone(), header, &OpenFiles::unlimited())?;
        let mut writer = SegmentWriter::new(&output, self.config.index_interval_bytes);
        let mut records_removed = 0;
        let mut tombstones_removed = 0;
        let mut buf = Vec::new();
        for view in group {
            let mut failure = None;
            for_each_frame(
                &view.segment,
                SEGMENT_HEADER_LEN as u64,
                view.end,
                SCAN_CHUNK_BYTES,
                |_, entry| {
                    if let Some(key) = &entry.key {
                        match latest.get(key) {
                            Some(l) if l.offset == entry.first_offset => {
                                if l.expired_tombstone {
                                    tombstones_removed += 1;
                                    return true;
                                }
                            }
                            _ => {
                                records_removed += 1;
                                return true;
                            }
                        }
                    }
                    buf.clear();
                    frame::encode_into(entry, &mut buf);
                    if let Err(error) = writer.push(entry, &buf) {
                        failure = Some(error);
                        return false;
                    }
                    true
                },
            )?;
            if let Some(error) = failure {
                return Err(error);
            }
        }
        writer.flush()?;
        let summary = writer.finish();
        crate::log::sync_segment(&output)?;
        // The old segments' paths are about to be renamed over or unlinked while they are
        // still published: keep their files open, never to be reopened by path.
        for view in group {
            view.segment.file.pin()?;
        }

        // Commit point: from here on recovery completes the swap.
        fsutil::rename(&cleaned_path, &swap_path)?;
        fsutil::sync_dir(&self.dir)?;
        finish_swap(&self.dir, base, until)?;

        let file = output
            .file
            .into_file()
            .ok_or(LogError::Unsupported("compaction output file still in use"))?;
        let segment = Segment::new(log_path, file, header, &self.files);
        let view = SegmentView {
            segment: Arc::new(segment),
            index: summary.index,
            end: summary.end,
            next_offset: summary.next_offset.unwrap_or(base),
            last_offset: summary.last_offset,
            max_timestamp: summary.max_timestamp,
        };
        if let Err(error) = index_file::write(&self.dir, &view) {
            tracing::warn!(%error, segment = %view.segment.path.display(), "could not write index files");
        }
        Ok(Rewritten {
            view,
            records_removed,
            tombstones_removed,
        })
    }
}

struct Rewritten {
    view: SegmentView,
    records_removed: u64,
    tombstones_removed: u64,
}

/// Groups adjacent sealed segments for rewriting, Kafka style: merged while the original sizes
/// fit one segment and the offsets fit the index's 32-bit relative offsets. A group is rewritten
/// if it loses records or merges several segments (small compacted segments coalesce); a lone
/// segment that loses nothing is left alone.
fn plan_groups(
    sealed: &[SegmentView],
    removable: &[u64],
    config: &LogConfig,
) -> Vec<std::ops::Range<usize>> {
    let payload = |view: &SegmentView| view.end - SEGMENT_HEADER_LEN as u64;
    let mut groups = Vec::new();
    let mut start = 0;
    let mut bytes = 0;
    for (i, view) in sealed.iter().enumerate() {
        let fits = i > start
            && bytes + payload(view) <= config.max_segment_bytes - SEGMENT_HEADER_LEN as u64
            && view.next_offset.0 - sealed[start].segment.base().0 <= u64::from(u32::MAX);
        if i > start && !fits {
            groups.push(start..i);
            start = i;
            bytes = 0;
        }
        bytes += payload(view);
    }
    if start < sealed.len() {
        groups.push(start..sealed.len());
    }
    groups.retain(|g| g.len() > 1 || removable[g.start] > 0);
    groups
}

/// What a compacted segment ended up holding.
struct WrittenSummary {
    index: SparseIndex,
    end: u64,
    next_offset: Option<Offset>,
    last_offset: Option<Offset>,
    max_timestamp: Option<TimestampMs>,
}

/// Buffered, indexed writing of frames into a new segment file.
struct SegmentWriter<'a> {
    segment: &'a Segment,
    interval: u32,
    buffer: Vec<u8>,
    /// File position of `buffer[0]`.
    flushed: u64,
    summary: WrittenSummary,
}

impl<'a> SegmentWriter<'a> {
    fn new(segment: &'a Segment, interval: u32) -> SegmentWriter<'a> {
        SegmentWriter {
            segment,
            interval,
            buffer: Vec::with_capacity(WRITE_BUFFER_BYTES),
            flushed: SEGMENT_HEADER_LEN as u64,
            summary: WrittenSummary {
                index: SparseIndex::new(),
                end: SEGMENT_HEADER_LEN as u64,
                next_offset: None,
                last_offset: None,
                max_timestamp: None,
            },
        }
    }

    fn push(&mut self, entry: &crate::Entry, frame: &[u8]) -> Result<(), LogError> {
        let position = self.summary.end;
        self.summary.index.observe(
            self.segment.base(),
            entry.first_offset,
            position,
            frame.len() as u64,
            self.summary.max_timestamp,
            self.interval,
        );
        self.summary.max_timestamp = Some(
            self.summary
                .max_timestamp
                .map_or(entry.max_timestamp_ms, |t| t.max(entry.max_timestamp_ms)),
        );
        self.summary.last_offset = Some(entry.last_offset);
        self.summary.next_offset = Some(entry.next_offset());
        self.summary.end += frame.len() as u64;
        self.buffer.extend_from_slice(frame);
        if self.buffer.len() >= WRITE_BUFFER_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), LogError> {
        fsutil::write_all_at(
            &*self.segment.file.for_write()?,
            &self.segment.path,
            &self.buffer,
            self.flushed,
        )?;
        self.flushed += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }

    fn finish(self) -> WrittenSummary {
        self.summary
    }
}

/// Steps 3-4 of the swap for the group starting at `base` and replacing `[base, until)`.
fn finish_swap(dir: &Path, base: Offset, until: Offset) -> Result<(), LogError> {
    for old in list_segments(dir)? {
        if old > base && old < until {
            fsutil::remove_file(&dir.join(segment::file_name(old, segment::LOG_SUFFIX)))?;
            index_file::remove(dir, old)?;
        }
    }
    index_file::remove(dir, base)?;
    fsutil::rename(
        &dir.join(segment::file_name(base, SWAP_SUFFIX)),
        &dir.join(segment::file_name(base, segment::LOG_SUFFIX)),
    )?;
    fsutil::sync_dir(dir)
}

/// Called at open: deletes unfinished compaction output (`*.cleaned`) and completes every
/// committed swap (`*.swap`).
pub(crate) fn recover_interrupted_swaps(dir: &Path, _config: &LogConfig) -> Result<(), LogError> {
    let mut cleaned = Vec::new();
    let mut swaps = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| LogError::io("list directory", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| LogError::io("list directory", dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        match segment::parse_file_name(name) {
            Some((base, CLEANED_SUFFIX)) => cleaned.push(base),
            Some((base, SWAP_SUFFIX)) => swaps.push(base),
            _ => {}
        }
    }
    for base in &cleaned {
        tracing::warn!(
            base = base.0,
            "deleting the output of an interrupted compaction"
        );
        fsutil::remove_file(&dir.join(segment::file_name(*base, CLEANED_SUFFIX)))?;
    }
    swaps.sort();
    for base in swaps {
        let path = dir.join(segment::file_name(base, SWAP_SUFFIX));
        let (_, _, header) = Segment::open(path.clone())?;
        let header = header.map_err(|fault| fault.into_error(&path))?;
        let Some(until) = header.covers_until.filter(|_| header.base == base) else {
            return Err(LogError::Corrupt {
                path,
                position: 0,
                reason: CorruptReason::SegmentHeader("swap file without its replaced range"),
            });
        };
        tracing::warn!(
            base = base.0,
            until = until.0,
            "completing an interrupted compaction swap"
        );
        finish_swap(dir, base, until)?;
    }
    if !cleaned.is_empty() {
        fsutil::sync_dir(dir)?;
    }
    Ok(())
}
