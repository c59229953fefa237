//! Removing entries: truncating a suffix (a Raft log conflict), purging a prefix (after a
//! snapshot), and retention by bytes and age. Whole segments are unlinked; only truncation cuts
//! inside a file.
//!
//! Crash safety: prefixes are deleted oldest first and suffixes newest first, so a crash in the
//! middle leaves a log whose segments still follow each other; every unlink is followed by a
//! directory fsync before the operation returns.

use std::sync::Arc;

use crate::error::LogError;
use crate::fsutil;
use crate::index_file;
use crate::log::{
    for_each_frame, DeletedSegments, Log, RetentionPolicy, SegmentView, MIN_READ_CHUNK,
};
use crate::segment::SEGMENT_HEADER_LEN;
use crate::types::{Offset, TimestampMs};

impl Log {
    /// Drops every entry at or after `offset` (the whole entry containing it, for a batch) and
    /// makes the cut durable before returning. Returns the new log end.
    ///
    /// Segments written by compaction cannot be cut (their offsets have gaps); truncation is for
    /// dense logs such as a Raft log.
    pub fn truncate_from(&self, offset: Offset) -> Result<Offset, LogError> {
        let _maintenance = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        self.commit.check_poisoned()?;
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let segments: Vec<SegmentView> = self.read_view().segments.clone();
        let start = segments[0].segment.base();
        let next = writer.next_offset;
        if offset >= next {
            return Ok(next);
        }
        if offset < start {
            return Err(LogError::OffsetOutOfRange {
                requested: offset,
                start,
                next,
            });
        }
        let mut keep = segments.partition_point(|s| s.segment.base() <= offset);
        // `keep >= 1` because `offset >= start`. The segment holding `offset` is `keep - 1`.
        if segments[keep - 1].segment.header.compacted {
            return Err(LogError::Unsupported("truncating into a compacted segment"));
        }
        let cut_view = &segments[keep - 1];
        let (cut_position, new_last, new_max) = find_cut(cut_view, offset)?;
        // A segment that would become empty goes entirely, unless it is the first one (the log
        // keeps one segment, and its base is the start offset) or the one before it is
        // compacted (a compacted segment never takes appends: its header bounds its offsets).
        let drop_cut_segment = cut_position == SEGMENT_HEADER_LEN as u64
            && keep > 1
            && !segments[keep - 2].segment.header.compacted;
        let first_dropped = if drop_cut_segment { keep - 1 } else { keep };

        let result = (|| {
            for view in segments[first_dropped..].iter().rev() {
                // Readers that located bytes in it keep the file; nobody reopens its path.
                view.segment.file.pin()?;
                fsutil::remove_file(&view.segment.path)?;
                index_file::remove(&self.dir, view.segment.base())?;
            }
            if first_dropped < segments.len() {
                fsutil::sync_dir(&self.dir)?;
            }
            if !drop_cut_segment {
                let segment = &cut_view.segment;
                // Senders of located bytes wait for the cut and then see it counted.
                {
                    let file = segment.file.for_write()?;
                    let mut cuts = segment.cuts.write().unwrap_or_else(|e| e.into_inner());
                    *cuts += 1;
                    file.set_len(cut_position)
                        .map_err(|e| LogError::io("ftruncate", &segment.path, e))?;
                }
                crate::log::sync_segment(segment)?;
                // It takes appends again: its index lives in memory until it is sealed anew.
                index_file::remove(&self.dir, segment.base())?;
            }
            Ok(())
        })();
        if let Err(error) = result {
            // Part of the cut may be on disk: nothing more may be appended until a reopen
            // re-reads what is really there.
            self.commit.poison(&error);
            return Err(error);
        }

        let mut published = self.write_view();
        published.generation += 1;
        if drop_cut_segment {
            keep -= 1;
        }
        published.segments.truncate(keep);
        let active = published
            .segments
            .last_mut()
            .ok_or(LogError::Unsupported("truncation removed every segment"))?;
        if !drop_cut_segment {
            active.index.truncate_at(cut_position);
            active.end = cut_position;
            active.last_offset = new_last;
            active.max_timestamp = new_max;
            active.next_offset = new_last.map_or(active.segment.base(), |l| Offset(l.0 + 1));
        }
        writer.active = Arc::clone(&active.segment);
        writer.position = active.end;
        writer.next_offset = active.next_offset;
        writer.roll_clock_start_ms = None;
        let new_next = active.next_offset;
        drop(published);
        let durable = self.commit.durable();
        self.commit.reset(new_next, durable);
        Ok(new_next)
    }

    /// Empties the log and restarts it at `next` (both its start and its end), durably: a Raft
    /// follower installing a snapshot past its log end. Segments go newest first, then the new
    /// empty segment is created; a crash in between leaves a prefix of the old log or an empty
    /// directory (which opens as an empty log, and an empty log takes an append anywhere).
    pub fn reset(&self, next: Offset) -> Result<(), LogError> {
        if next > Offset::MAX {
            return Err(LogError::InvalidEntry("offset past the maximum"));
        }
        let _maintenance = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        self.commit.check_poisoned()?;
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let segments: Vec<SegmentView> = self.read_view().segments.clone();
        let result = (|| {
            for view in segments.iter().rev() {
                view.segment.file.pin()?;
                fsutil::remove_file(&view.segment.path)?;
                index_file::remove(&self.dir, view.segment.base())?;
            }
            fsutil::sync_dir(&self.dir)?;
            crate::log::create_segment_view(&self.dir, next, &self.files)
        })();
        let view = match result {
            Ok(view) => view,
            Err(error) => {
                self.commit.poison(&error);
                return Err(error);
            }
        };
        writer.active = Arc::clone(&view.segment);
        writer.position = view.end;
        writer.next_offset = next;
        writer.roll_clock_start_ms = None;
        {
            let mut published = self.write_view();
            published.segments = vec![view];
            published.generation += 1;
        }
        self.commit.reset(next, next);
        Ok(())
    }

    /// Deletes the log's files and its directory (a deleted topic). Readers still holding
    /// entries keep them; the directory removal is made durable in the parent.
    pub fn destroy(self) -> Result<(), LogError> {
        let dir = self.dir.clone();
        self.forget_paths();
        drop(self);
        std::fs::remove_dir_all(&dir).map_err(|e| LogError::io("remove directory", &dir, e))?;
        match dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => fsutil::sync_dir(parent),
            None => Ok(()),
        }
    }

    /// The log's directory is about to go (a deleted topic): segment files open now stay
    /// open for whoever reads them, closed ones are never reopened by path (the path could
    /// name a new topic's file by then). Call it before removing the directory.
    pub fn forget_paths(&self) {
        for view in &self.read_view().segments {
            view.segment.file.forget_path();
        }
    }

    /// Deletes the oldest segments whose entries all lie below `offset`, never the active one.
    /// Returns what was deleted and the new start offset (`<= offset`).
    pub fn purge_to(&self, offset: Offset) -> Result<DeletedSegments, LogError> {
        self.delete_prefix(|view, _| view.next_offset <= offset)
    }

    /// Applies retention: deletes the oldest segments beyond the byte limit or older than the
    /// age limit (by their newest entry's timestamp against `now_ms`), never the active one.
    pub fn apply_retention(
        &self,
        policy: RetentionPolicy,
        now_ms: TimestampMs,
    ) -> Result<DeletedSegments, LogError> {
        let total: u64 = self.size_bytes();
        // Kafka's rule: delete the oldest segment while the rest still holds the limit.
        let mut excess = policy.max_bytes.map(|max| total.saturating_sub(max));
        self.delete_prefix(|view, _| {
            let expired = policy.max_age_ms.is_some_and(|age| {
                view.max_timestamp
                    .is_some_and(|t| now_ms.0.saturating_sub(t.0) > age)
            });
            let over_size = match excess.as_mut() {
                Some(excess) if *excess >= view.end => {
                    *excess -= view.end;
                    true
                }
                _ => false,
            };
            expired || over_size
        })
    }

    /// Deletes the longest prefix of sealed segments for which `deletable` holds.
    fn delete_prefix(
        &self,
        mut deletable: impl FnMut(&SegmentView, usize) -> bool,
    ) -> Result<DeletedSegments, LogError> {
        let _maintenance = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        let segments: Vec<SegmentView> = self.read_view().segments.clone();
        let sealed = segments.len() - 1;
        let count = segments[..sealed]
            .iter()
            .enumerate()
            .take_while(|(i, view)| deletable(view, *i))
            .count();
        let mut deleted = DeletedSegments {
            start_offset: segments[0].segment.base(),
            ..DeletedSegments::default()
        };
        if count == 0 {
            return Ok(deleted);
        }
        let mut removed = 0;
        let mut failure = None;
        for view in &segments[..count] {
            let unlinked = view
                .segment
                .file
                .pin()
                .and_then(|()| fsutil::remove_file(&view.segment.path))
                .and_then(|()| index_file::remove(&self.dir, view.segment.base()));
            if let Err(error) = unlinked {
                failure = Some(error);
                break;
            }
            removed += 1;
            deleted.segments += 1;
            deleted.bytes += view.end;
        }
        let synced = fsutil::sync_dir(&self.dir);
        {
            let mut published = self.write_view();
            published.segments.drain(..removed);
            deleted.start_offset = published.segments[0].segment.base();
        }
        match failure {
            Some(error) => Err(error),
            None => synced.map(|()| deleted),
        }
    }
}

/// Where to cut dense segment `view` so that no entry at or after `offset` remains: the byte
/// position, the last remaining entry, and the largest remaining timestamp.
fn find_cut(
    view: &SegmentView,
    offset: Offset,
) -> Result<(u64, Option<Offset>, Option<TimestampMs>), LogError> {
    let base = view.segment.base();
    // Start from the last index point at or before the entry holding `offset`; the point
    // remembers the largest timestamp of the entries before it.
    let points = view.index.points();
    let rel = offset.0.saturating_sub(base.0);
    let idx = points.partition_point(|p| u64::from(p.relative_offset) <= rel);
    let (from, mut max) = match idx.checked_sub(1).map(|i| points[i]) {
        Some(p) => (
            u64::from(p.position),
            (p.max_timestamp_before != i64::MIN).then_some(TimestampMs(p.max_timestamp_before)),
        ),
        None => (SEGMENT_HEADER_LEN as u64, None),
    };
    let mut cut = None;
    for_each_frame(
        &view.segment,
        from,
        view.end,
        MIN_READ_CHUNK,
        |at, entry| {
            if entry.last_offset >= offset {
                cut = Some((at, entry.first_offset));
                return false;
            }
            max = Some(max.map_or(entry.max_timestamp_ms, |m| m.max(entry.max_timestamp_ms)));
            true
        },
    )?;
    let (position, cut_first) = cut.unwrap_or((view.end, view.next_offset));
    // Dense segment: the entry before the cut ends right before the cut entry starts.
    let last =
        (position > SEGMENT_HEADER_LEN as u64).then(|| Offset(cut_first.0.saturating_sub(1)));
    Ok((position, last, if last.is_some() { max } else { None }))
}
