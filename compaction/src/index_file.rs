//! Index files of sealed segments: `<base>.index` (offset -> position) and `<base>.timeindex`
//! (running max timestamp -> offset). They are a cache that saves scanning sealed segments at
//! open, never a source of truth:
//!
//! - written when a segment is sealed (and rebuilt at open when missing or stale), without
//!   fsync: a torn or lost index file only costs a scan;
//! - each carries a CRC, the segment's length and header CRC, and the position and last offset
//!   of the segment's final entry;
//! - loading checks all of that against the segment file and decodes (with its CRC) the last
//!   indexed frame and the final frame. Any mismatch: the segment is scanned instead.

use std::path::{Path, PathBuf};

use crate::error::LogError;
use crate::frame;
use crate::fsutil;
use crate::index::{IndexPoint, SparseIndex};
use crate::log::SegmentView;
use crate::segment::{self, Segment, Window, SEGMENT_HEADER_LEN};
use crate::types::{Offset, TimestampMs};

const OFFSET_INDEX_SUFFIX: &str = "index";
const TIME_INDEX_SUFFIX: &str = "timeindex";
const OFFSET_MAGIC: &[u8; 6] = b"CHRTIX";
const TIME_MAGIC: &[u8; 6] = b"CHRTTI";
const VERSION: u8 = 1;
/// magic, version, pad, segment_len, header_crc, count, next, last, last_position, max_ts,
/// flags, last frame crc, reserved
const OFFSET_HEADER_LEN: usize = 6 + 1 + 1 + 8 + 4 + 4 + 8 + 8 + 8 + 8 + 8 + 4 + 4;
const TIME_HEADER_LEN: usize = 6 + 1 + 1 + 8 + 4 + 4;
const NONE: u64 = u64::MAX;

/// What an index file pair says about its segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentSummary {
    pub index: SparseIndex,
    pub end: u64,
    pub next_offset: Offset,
    pub last_offset: Option<Offset>,
    pub max_timestamp: Option<TimestampMs>,
    /// Position of the segment's final frame.
    pub last_position: Option<u64>,
    /// The stored CRC of the final frame: binds the index to that frame's content, not only to
    /// its offsets and size (a truncated and rewritten segment can repeat those).
    pub last_frame_crc: u32,
}

fn paths(dir: &Path, base: Offset) -> (PathBuf, PathBuf) {
    (
        dir.join(segment::file_name(base, OFFSET_INDEX_SUFFIX)),
        dir.join(segment::file_name(base, TIME_INDEX_SUFFIX)),
    )
}

/// Deletes index files whose segment does not exist (a crash between unlinking a segment and
/// its index files leaves them), so a later segment with the same base never meets them.
pub fn remove_orphans(dir: &Path, live: &[Offset]) -> Result<(), LogError> {
    let entries = std::fs::read_dir(dir).map_err(|e| LogError::io("list directory", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| LogError::io("list directory", dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some((base, OFFSET_INDEX_SUFFIX | TIME_INDEX_SUFFIX)) =
            segment::parse_file_name(name)
        {
            if live.binary_search(&base).is_err() {
                fsutil::remove_file(&entry.path())?;
            }
        }
    }
    Ok(())
}

/// Deletes both index files of the segment at `base` (missing files are fine).
pub fn remove(dir: &Path, base: Offset) -> Result<(), LogError> {
    let (offsets, times) = paths(dir, base);
    fsutil::remove_file(&offsets)?;
    fsutil::remove_file(&times)
}

fn header_crc(segment: &Segment) -> u32 {
    crc32c::crc32c(&segment.header.encode())
}

/// Finds the position of the final frame of `view` by walking from its last index point.
fn last_position(view: &SegmentView) -> Result<Option<u64>, LogError> {
    let Some(point) = view.index.points().last() else {
        return Ok(None);
    };
    let mut last = None;
    crate::log::for_each_frame(
        &view.segment,
        u64::from(point.position),
        view.end,
        crate::log::MIN_READ_CHUNK,
        |at, _| {
            last = Some(at);
            true
        },
    )?;
    Ok(last)
}

/// Writes both index files for a sealed segment.
pub fn write(dir: &Path, view: &SegmentView) -> Result<(), LogError> {
    let points = view.index.points();
    let last_pos = last_position(view)?;
    let crc = header_crc(&view.segment);
    let last_frame_crc = match last_pos {
        Some(at) => {
            let mut prefix = [0u8; 8];
            let file = view.segment.file.get()?;
            fsutil::read_exact_at(&file, &view.segment.path, &mut prefix, at)?;
            frame::read_u32(&prefix, 4)
        }
        None => 0,
    };

    let mut offsets = Vec::with_capacity(OFFSET_HEADER_LEN + points.len() * 8 + 4);
    offsets.extend_from_slice(OFFSET_MAGIC);
    offsets.push(VERSION);
    offsets.push(0);
    offsets.extend_from_slice(&view.end.to_le_bytes());
    offsets.extend_from_slice(&crc.to_le_bytes());
    offsets.extend_from_slice(&(points.len() as u32).to_le_bytes());
    offsets.extend_from_slice(&view.next_offset.0.to_le_bytes());
    offsets.extend_from_slice(&view.last_offset.map_or(NONE, |o| o.0).to_le_bytes());
    offsets.extend_from_slice(&last_pos.unwrap_or(NONE).to_le_bytes());
    offsets.extend_from_slice(&view.max_timestamp.map_or(0, |t| t.0).to_le_bytes());
    offsets.extend_from_slice(&u64::from(view.max_timestamp.is_some()).to_le_bytes());
    offsets.extend_from_slice(&last_frame_crc.to_le_bytes());
    offsets.extend_from_slice(&0u32.to_le_bytes());
    for p in points {
        offsets.extend_from_slice(&p.relative_offset.to_le_bytes());
        offsets.extend_from_slice(&p.position.to_le_bytes());
    }
    let sum = crc32c::crc32c(&offsets);
    offsets.extend_from_slice(&sum.to_le_bytes());

    let mut times = Vec::with_capacity(TIME_HEADER_LEN + points.len() * 12 + 4);
    times.extend_from_slice(TIME_MAGIC);
    times.push(VERSION);
    times.push(0);
    times.extend_from_slice(&view.end.to_le_bytes());
    times.extend_from_slice(&crc.to_le_bytes());
    times.extend_from_slice(&(points.len() as u32).to_le_bytes());
    for p in points {
        times.extend_from_slice(&p.max_timestamp_before.to_le_bytes());
        times.extend_from_slice(&p.relative_offset.to_le_bytes());
    }
    let sum = crc32c::crc32c(&times);
    times.extend_from_slice(&sum.to_le_bytes());

    let (offsets_path, times_path) = paths(dir, view.segment.base());
    std::fs::write(&offsets_path, &offsets).map_err(|e| LogError::io("write", &offsets_path, e))?;
    std::fs::write(&times_path, &times).map_err(|e| LogError::io("write", &times_path, e))?;
    Ok(())
}

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, LogError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LogError::io("read", path, e)),
    }
}

fn checked_body<'a>(bytes: &'a [u8], magic: &[u8; 6], header_len: usize) -> Option<&'a [u8]> {
    if bytes.len() < header_len + 4 || &bytes[0..6] != magic || bytes[6] != VERSION {
        return None;
    }
    let body = &bytes[..bytes.len() - 4];
    (crc32c::crc32c(body) == frame::read_u32(bytes, bytes.len() - 4)).then_some(body)
}

/// Decodes the index files of `segment` (a file of `len` bytes) and checks them against the
/// segment; `None` when they are missing, damaged or do not match it.
pub fn load(dir: &Path, segment: &Segment, len: u64) -> Result<Option<SegmentSummary>, LogError> {
    let (offsets_path, times_path) = paths(dir, segment.base());
    let (Some(offsets), Some(times)) = (read_optional(&offsets_path)?, read_optional(&times_path)?)
    else {
        return Ok(None);
    };
    let Some(summary) = decode(&offsets, &times, segment, len) else {
        return Ok(None);
    };
    if !tail_matches(segment, &summary)? {
        return Ok(None);
    }
    Ok(Some(summary))
}

fn decode(offsets: &[u8], times: &[u8], segment: &Segment, len: u64) -> Option<SegmentSummary> {
    let o = checked_body(offsets, OFFSET_MAGIC, OFFSET_HEADER_LEN)?;
    let t = checked_body(times, TIME_MAGIC, TIME_HEADER_LEN)?;
    let crc = header_crc(segment);
    if frame::read_u64(o, 8) != len || frame::read_u32(o, 16) != crc {
        return None;
    }
    if frame::read_u64(t, 8) != len || frame::read_u32(t, 16) != crc {
        return None;
    }
    let count = frame::read_u32(o, 20) as usize;
    if frame::read_u32(t, 20) as usize != count
        || o.len() != OFFSET_HEADER_LEN + count * 8
        || t.len() != TIME_HEADER_LEN + count * 12
    {
        return None;
    }
    let next_offset = Offset(frame::read_u64(o, 24));
    let last = frame::read_u64(o, 32);
    let last_position = frame::read_u64(o, 40);
    let max_ts = frame::read_u64(o, 48) as i64;
    let has_max = frame::read_u64(o, 56);
    let last_frame_crc = frame::read_u32(o, 64);
    let mut points = Vec::with_capacity(count);
    for i in 0..count {
        let relative_offset = frame::read_u32(o, OFFSET_HEADER_LEN + i * 8);
        let position = frame::read_u32(o, OFFSET_HEADER_LEN + i * 8 + 4);
        let max_timestamp_before = frame::read_u64(t, TIME_HEADER_LEN + i * 12) as i64;
        if frame::read_u32(t, TIME_HEADER_LEN + i * 12 + 8) != relative_offset {
            return None;
        }
        let point = IndexPoint {
            relative_offset,
            position,
            max_timestamp_before,
        };
        let ordered = match points.last() {
            None => u64::from(position) == SEGMENT_HEADER_LEN as u64,
            Some(prev) => {
                let prev: &IndexPoint = prev;
                prev.relative_offset < relative_offset
                    && prev.position < position
                    && prev.max_timestamp_before <= max_timestamp_before
            }
        };
        if !ordered || u64::from(position) >= len {
            return None;
        }
        points.push(point);
    }
    let empty = count == 0;
    let consistent = if empty {
        len == SEGMENT_HEADER_LEN as u64 && last == NONE && last_position == NONE && has_max == 0
    } else {
        last != NONE && last_position != NONE && last_position < len && has_max == 1
    };
    if !consistent {
        return None;
    }
    Some(SegmentSummary {
        index: SparseIndex::from_points(points),
        end: len,
        next_offset,
        last_offset: (last != NONE).then_some(Offset(last)),
        max_timestamp: (has_max == 1).then_some(TimestampMs(max_ts)),
        last_position: (last_position != NONE).then_some(last_position),
        last_frame_crc,
    })
}

/// Reads the last indexed frame and the final frame back from the segment.
fn tail_matches(segment: &Segment, summary: &SegmentSummary) -> Result<bool, LogError> {
    let (Some(point), Some(last_position), Some(last_offset)) = (
        summary.index.points().last(),
        summary.last_position,
        summary.last_offset,
    ) else {
        return Ok(summary.index.points().is_empty() && summary.next_offset == segment.base());
    };
    let file = segment.file.get()?;
    let mut window = Window::new(&file, &segment.path, summary.end, 1 << 16);
    let Ok(at_point) = window.frame(u64::from(point.position))? else {
        return Ok(false);
    };
    if at_point.first_offset.0 != segment.base().0 + u64::from(point.relative_offset) {
        return Ok(false);
    }
    let Ok(final_frame) = window.frame(last_position)? else {
        return Ok(false);
    };
    if frame::read_u32(window.at(last_position, 8)?, 4) != summary.last_frame_crc {
        return Ok(false);
    }
    Ok(final_frame.last_offset == last_offset
        && last_position + u64::from(final_frame.frame_len) == summary.end
        && final_frame.next_offset() == summary.next_offset
        && last_position >= u64::from(point.position))
}

/// Whether the index files on disk describe `view` exactly.
pub fn matches(dir: &Path, view: &SegmentView) -> Result<bool, LogError> {
    let Some(summary) = load(dir, &view.segment, view.end)? else {
        return Ok(false);
    };
    Ok(summary.index.points() == view.index.points()
        && summary.next_offset == view.next_offset
        && summary.last_offset == view.last_offset
        && summary.max_timestamp == view.max_timestamp)
}
