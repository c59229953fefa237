//! Reads that leave large payloads in the file: entries located by position, so a caller can
//! send them straight from the page cache (`sendfile(2)`) instead of copying them through
//! user space twice, as Kafka's `FileRecords` does.
//!
//! ```text
//!  read a probe at the frame ── header ── payload ────────────────────────────────┐
//!                               │          head: bytes already read (Bytes slice)  │
//!                               │          tail: the rest, left in the file ───────┘ FileSlice
//!  next frame: a small probe after a large payload (its header is all we need), a growing
//!  one while frames are small (they are simply read, as `Log::read` does)
//! ```
//!
//! A [`FileSlice`] holds the segment file open (its own `Arc<File>`, which the open-file budget
//! never closes), so retention, deletion or a compaction swap (which unlink or rename the
//! file) never change the bytes it stands for. A truncation cuts the
//! file in place and may re-append over it; a slice was located under a count of the file's
//! cuts and is only sent under that count (see [`FileSlice::with_file`]).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{CorruptReason, LogError};
use crate::frame::{self, FrameFault, FRAME_HEADER_LEN};
use crate::fsutil;
use crate::log::{read_chunk_bytes, Log, MAX_READ_CHUNK, MIN_READ_CHUNK};
use crate::log_read::{Span, READ_ATTEMPTS};
use crate::segment::Segment;
use crate::types::Offset;

/// A payload at least this long is left in the file past the bytes its probe read; a shorter
/// one is read whole (a syscall costs more than copying a few KiB).
pub const FILE_TAIL_MIN_BYTES: usize = 16 << 10;
/// Bytes read to find the next frame after one whose payload stayed in the file: its header is
/// all that is needed, and a small frame fits too.
const PROBE_AFTER_LARGE: usize = 4 << 10;

/// One entry of [`Log::read_located`]: its payload is `head` followed by `tail`.
#[derive(Debug, Clone)]
pub struct LocatedEntry {
    /// The first offset the entry covers.
    pub first_offset: Offset,
    /// The last offset the entry covers.
    pub last_offset: Offset,
    /// The payload's first bytes (all of it when `tail` is `None`), a slice of a read buffer.
    pub head: Bytes,
    /// The rest of the payload, still in the segment file.
    pub tail: Option<FileSlice>,
}

impl LocatedEntry {
    /// Payload bytes, head and tail.
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.as_ref().map_or(0, FileSlice::len)
    }

    /// Whether the payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A byte range of a segment file, located by a read and sent later by position.
#[derive(Debug, Clone)]
pub struct FileSlice {
    segment: Arc<Segment>,
    /// The open file the range was located in.
    file: Arc<File>,
    /// The segment's cut count when the range was located.
    cuts: u64,
    position: u64,
    len: usize,
}

/// A slice's file was cut (truncated) after it was located: its bytes may have changed.
#[derive(Debug, thiserror::Error)]
#[error("{}: truncated after a read located bytes {position}..{end} in it", path.display())]
pub struct SliceCut {
    /// The segment file.
    pub path: std::path::PathBuf,
    /// Where the slice starts.
    pub position: u64,
    /// Where the slice ends.
    pub end: u64,
}

impl FileSlice {
    /// Bytes in the slice.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the slice starts in its file.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The segment file's path (for messages: the file may be gone since).
    pub fn path(&self) -> &Path {
        &self.segment.path
    }

    /// Runs `send` with the open file while no truncation can cut it, or refuses if one did
    /// since the slice was located. A send that blocks holds truncations back: call it with a
    /// non-blocking destination. A file shorter than the slice (cut by something else) shows
    /// as a read or send that ends early, which the caller must treat as an error.
    pub fn with_file<T>(&self, send: impl FnOnce(&File) -> T) -> Result<T, SliceCut> {
        let cuts = self.segment.cuts.read().unwrap_or_else(|e| e.into_inner());
        if *cuts != self.cuts {
            return Err(SliceCut {
                path: self.segment.path.clone(),
                position: self.position,
                end: self.position + self.len as u64,
            });
        }
        Ok(send(&self.file))
    }

    /// The slice's bytes, copied (tests and copying fallbacks). Fails if the file was cut or
    /// is shorter than the slice.
    pub fn read(&self) -> Result<Bytes, LogError> {
        let mut buf = vec![0u8; self.len];
        self.with_file(|file| {
            fsutil::read_exact_at(file, &self.segment.path, &mut buf, self.position)
        })
        .map_err(|cut| LogError::io("read", &cut.path, std::io::Error::other(cut.to_string())))??;
        Ok(Bytes::from(buf))
    }
}

impl Log {
    /// [`Log::read`] that leaves payloads in the segment files where that saves copying: the
    /// entry containing `from` (or, across a compaction gap, the first after it) and the
    /// entries after it, up to `max_bytes` of payload and key, at least one entry if any
    /// exists. Keys are not returned.
    pub fn read_located(
        &self,
        from: Offset,
        max_bytes: usize,
    ) -> Result<Vec<LocatedEntry>, LogError> {
        for _ in 0..READ_ATTEMPTS {
            let Some((spans, generation)) = self.spans_from(from)? else {
                return Ok(Vec::new());
            };
            let mut located = Located {
                from,
                max_bytes,
                total: 0,
                entries: Vec::new(),
                probe: MIN_READ_CHUNK,
            };
            let mut result = Ok(());
            for span in &spans {
                match located.walk(span) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            if self.read_view().generation == generation {
                return result.map(|()| located.entries);
            }
        }
        Err(LogError::Unsupported("read kept racing with truncations"))
    }
}

/// A located read under way.
struct Located {
    from: Offset,
    max_bytes: usize,
    /// Payload and key bytes taken so far.
    total: usize,
    entries: Vec<LocatedEntry>,
    /// Bytes the next refill reads (carried across segments: frame sizes are alike).
    probe: usize,
}

impl Located {
    /// Walks one span's frames; false once the budget is spent.
    fn walk(&mut self, span: &Span) -> Result<bool, LogError> {
        let segment = &span.segment;
        let cuts = *segment.cuts.read().unwrap_or_else(|e| e.into_inner());
        let end = span.end;
        let mut position = span.from_position;
        let mut buf = Bytes::new();
        let mut buf_start = 0u64;
        while position < end {
            let buf_end = buf_start + buf.len() as u64;
            if position < buf_start || position + FRAME_HEADER_LEN as u64 > buf_end {
                buf = read_at(&span.file, segment, position, self.probe, end)?;
                buf_start = position;
            }
            let at = (position - buf_start) as usize;
            let header = frame::peek(&buf[at..]).ok_or_else(|| {
                segment.corrupt(position, CorruptReason::ReadMismatch(FrameFault::PastEnd))
            })?;
            let frame_end = position + u64::from(header.frame_len);
            if frame_end > end {
                return Err(
                    segment.corrupt(position, CorruptReason::ReadMismatch(FrameFault::PastEnd))
                );
            }
            if header.last_offset < self.from {
                position = frame_end;
                continue;
            }
            let payload = header.payload_range();
            let payload_len = payload.len();
            let size = payload_len + header.key_len as usize;
            if !self.entries.is_empty() && self.total.saturating_add(size) > self.max_bytes {
                return Ok(false);
            }
            self.total = self.total.saturating_add(size);
            let payload_start = position + payload.start as u64;
            let buf_end = buf_start + buf.len() as u64;
            let (head, tail) = if frame_end <= buf_end {
                // Small, or it happened to fit: already read.
                let from = (payload_start - buf_start) as usize;
                self.probe = if payload_len >= FILE_TAIL_MIN_BYTES {
                    PROBE_AFTER_LARGE
                } else {
                    grow(self.probe, self.max_bytes.saturating_sub(self.total))
                };
                (buf.slice(from..from + payload_len), None)
            } else if payload_len >= FILE_TAIL_MIN_BYTES {
                // Large: what the probe read goes from memory, the rest from the file.
                let split = buf_end.max(payload_start);
                let head = if payload_start < split {
                    buf.slice((payload_start - buf_start) as usize..)
                } else {
                    Bytes::new()
                };
                self.probe = PROBE_AFTER_LARGE;
                let tail = FileSlice {
                    segment: Arc::clone(segment),
                    file: Arc::clone(&span.file),
                    cuts,
                    position: split,
                    len: (frame_end - split) as usize,
                };
                (head, Some(tail))
            } else {
                // A small frame straddling the probe: read it whole, with what follows.
                let want = (header.frame_len as usize).max(self.probe);
                buf = read_at(&span.file, segment, position, want, end)?;
                buf_start = position;
                let from = payload.start;
                (buf.slice(from..from + payload_len), None)
            };
            self.entries.push(LocatedEntry {
                first_offset: header.first_offset,
                last_offset: header.last_offset,
                head,
                tail,
            });
            if self.total >= self.max_bytes {
                return Ok(false);
            }
            position = frame_end;
        }
        Ok(true)
    }
}

/// The next probe while frames are small: doubled, up to what the budget can still take.
fn grow(probe: usize, remaining: usize) -> usize {
    probe
        .saturating_mul(2)
        .min(read_chunk_bytes(remaining, 0))
        .clamp(MIN_READ_CHUNK, MAX_READ_CHUNK)
}

/// Reads up to `len` bytes of `segment` (open as `file`) at `position`, not past `end`.
fn read_at(
    file: &File,
    segment: &Segment,
    position: u64,
    len: usize,
    end: u64,
) -> Result<Bytes, LogError> {
    let len = (len as u64).min(end.saturating_sub(position)) as usize;
    if len <= PROBE_AFTER_LARGE {
        // Not from the pool: its buffers are 1 MiB, and a probe's bytes stay referenced until
        // the answer is sent, so every probe would take (and zero) a fresh MiB.
        let mut buf = vec![0u8; len];
        fsutil::read_exact_at(file, &segment.path, &mut buf, position)?;
        return Ok(Bytes::from(buf));
    }
    let mut buf = crate::buffer_pool::take(len);
    fsutil::read_exact_at(file, &segment.path, &mut buf, position)?;
    let buf = buf.freeze();
    crate::buffer_pool::give(&buf);
    Ok(buf)
}
