//! Reads: entries from an offset, and lookups by timestamp. A read takes the view lock only to
//! pick files and byte ranges, then reads with `pread`, verifying each frame's CRC.

use std::fs::File;
use std::sync::Arc;

use crate::entry::Entry;
use crate::error::LogError;
use crate::log::{
    entry_bytes, for_each_frame, for_each_frame_sized, read_chunk_bytes, Log, MIN_READ_CHUNK,
};
use crate::segment::{Segment, SEGMENT_HEADER_LEN};
use crate::types::{Offset, TimestampMs};

/// How often a read retries when a truncation rewrote the bytes it was reading.
pub(crate) const READ_ATTEMPTS: usize = 8;

/// One segment range a read will visit.
pub(crate) struct Span {
    pub segment: Arc<Segment>,
    /// The segment's file, taken while the segment was in the published view (where its path
    /// surely names it): held, it cannot be closed while the read uses it.
    pub file: Arc<File>,
    pub from_position: u64,
    /// The end of the published bytes when the span was picked.
    pub end: u64,
}

impl Log {
    /// The entry containing `from` (or, across a compaction gap, the first entry after it) and
    /// the entries after it, up to `max_bytes` of payload and key; always at least one entry if
    /// any exists at or after `from`, as Kafka does. Empty at the log end.
    ///
    /// Entries' payloads are slices of the read buffers: no copy per entry.
    pub fn read(&self, from: Offset, max_bytes: usize) -> Result<Vec<Entry>, LogError> {
        for _ in 0..READ_ATTEMPTS {
            let Some((spans, generation)) = self.spans_from(from)? else {
                return Ok(Vec::new());
            };
            let result = self.read_spans(&spans, from, max_bytes);
            if self.read_view().generation == generation {
                return result;
            }
        }
        Err(LogError::Unsupported("read kept racing with truncations"))
    }

    /// The segment ranges holding `from` and everything after it, and the view generation
    /// they were picked under; `None` at the log end.
    pub(crate) fn spans_from(&self, from: Offset) -> Result<Option<(Vec<Span>, u64)>, LogError> {
        let view = self.read_view();
        let start = view.segments[0].segment.base();
        let next = view.segments[view.segments.len() - 1].next_offset;
        if from < start || from > next {
            return Err(LogError::OffsetOutOfRange {
                requested: from,
                start,
                next,
            });
        }
        if from == next {
            return Ok(None);
        }
        let first = view
            .segments
            .partition_point(|s| s.segment.base() <= from)
            .saturating_sub(1);
        let spans: Vec<Span> = view.segments[first..]
            .iter()
            .enumerate()
            .filter(|(i, s)| *i == 0 || !s.is_empty_view())
            .map(|(i, s)| {
                Ok(Span {
                    segment: Arc::clone(&s.segment),
                    file: s.segment.file.get()?,
                    from_position: if i == 0 {
                        s.index
                            .floor_position(s.segment.base(), from)
                            .unwrap_or(SEGMENT_HEADER_LEN as u64)
                    } else {
                        SEGMENT_HEADER_LEN as u64
                    },
                    end: s.end,
                })
            })
            .collect::<Result<_, LogError>>()?;
        Ok(Some((spans, view.generation)))
    }

    fn read_spans(
        &self,
        spans: &[Span],
        from: Offset,
        max_bytes: usize,
    ) -> Result<Vec<Entry>, LogError> {
        let chunk = read_chunk_bytes(max_bytes, self.config.index_interval_bytes);
        let mut entries: Vec<Entry> = Vec::new();
        let mut total = 0usize;
        let mut full = false;
        for span in spans {
            let visit = |_, entry: Entry| {
                if entry.last_offset < from {
                    return (true, None);
                }
                let size = entry_bytes(&entry);
                if !entries.is_empty() && total.saturating_add(size) > max_bytes {
                    full = true;
                    return (false, None);
                }
                total = total.saturating_add(size);
                entries.push(entry);
                let remaining = max_bytes.saturating_sub(total);
                (true, Some(read_chunk_bytes(remaining, 0)))
            };
            let verify = self.config.verify_crc_on_read;
            for_each_frame_sized(
                &span.segment,
                span.from_position,
                span.end,
                chunk,
                verify,
                visit,
            )?;
            if full {
                break;
            }
        }
        Ok(entries)
    }

    /// Every entry from `from` up to (excluding) `until`, in order: a range read for callers
    /// that want all of it (a Raft log range), in chunks of `max_bytes`.
    pub fn read_range(&self, from: Offset, until: Offset) -> Result<Vec<Entry>, LogError> {
        let mut out = Vec::new();
        let mut at = from;
        while at < until {
            let batch = self.read(at, 1 << 20)?;
            let Some(last) = batch.last() else { break };
            at = last.next_offset();
            out.extend(batch.into_iter().filter(|e| e.first_offset < until));
        }
        Ok(out)
    }

    /// The first entry (in offset order) whose max timestamp is `>= target`, found through the
    /// segments' max timestamps and the sparse time index; `None` if there is none.
    pub fn find_by_timestamp(&self, target: TimestampMs) -> Result<Option<Entry>, LogError> {
        for _ in 0..READ_ATTEMPTS {
            let (spans, generation) = {
                let view = self.read_view();
                let first = view
                    .segments
                    .iter()
                    .position(|s| s.max_timestamp.is_some_and(|t| t >= target));
                let Some(first) = first else { return Ok(None) };
                let spans: Vec<Span> = view.segments[first..]
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        Ok(Span {
                            segment: Arc::clone(&s.segment),
                            file: s.segment.file.get()?,
                            from_position: if i == 0 {
                                s.index
                                    .time_scan_range(target)
                                    .map_or(SEGMENT_HEADER_LEN as u64, |(from, _)| from)
                            } else {
                                SEGMENT_HEADER_LEN as u64
                            },
                            end: s.end,
                        })
                    })
                    .collect::<Result<_, LogError>>()?;
                (spans, view.generation)
            };
            let mut found = None;
            for span in &spans {
                for_each_frame(
                    &span.segment,
                    span.from_position,
                    span.end,
                    MIN_READ_CHUNK,
                    |_, entry| {
                        if entry.max_timestamp_ms >= target {
                            found = Some(entry.clone());
                            false
                        } else {
                            true
                        }
                    },
                )?;
                if found.is_some() {
                    break;
                }
            }
            if self.read_view().generation == generation {
                return Ok(found);
            }
        }
        Err(LogError::Unsupported("read kept racing with truncations"))
    }

    /// The first entry holding the log's largest timestamp (Kafka's ListOffsets
    /// `MAX_TIMESTAMP`); `None` for an empty log.
    pub fn find_max_timestamp(&self) -> Result<Option<Entry>, LogError> {
        let max = {
            let view = self.read_view();
            view.segments.iter().filter_map(|s| s.max_timestamp).max()
        };
        match max {
            Some(max) => self.find_by_timestamp(max),
            None => Ok(None),
        }
    }
}

impl crate::log::SegmentView {
    fn is_empty_view(&self) -> bool {
        self.last_offset.is_none()
    }
}
