//! One segment file: a header, then frames back to back. Creation, the header codec, and the
//! scan that rebuilds a segment's index and finds where its valid frames end.
//!
//! ```text
//!  0        6     7      8          16              24        28      32
//!  +--------+-----+------+----------+---------------+---------+-------+---------+---------+--
//!  | CHRTSG | ver | flags| base     | covers_until  | reserved| crc32c| frame 0 | frame 1 |..
//!  +--------+-----+------+----------+---------------+---------+-------+---------+---------+--
//! ```
//!
//! `flags` bit 0 marks a segment written by compaction (its offsets may have gaps);
//! `covers_until` is set on compaction output: the end of the offset range it replaces.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use bytes::Bytes;

use crate::entry::Entry;
use crate::error::{CorruptReason, LogError};
use crate::frame::{self, Decoded, FrameFault, FrameHeader, FRAME_HEADER_LEN};
use crate::fsutil;
use crate::index::SparseIndex;
use crate::open_files::{FileSlot, OpenFiles};
use crate::types::{Offset, TimestampMs};

/// Bytes of the segment file header.
pub const SEGMENT_HEADER_LEN: usize = 32;
const MAGIC: &[u8; 6] = b"CHRTSG";
/// The segment format this code writes and reads.
pub const SEGMENT_FORMAT_VERSION: u8 = 1;
const FLAG_COMPACTED: u8 = 0b1;
const NO_COVERS_UNTIL: u64 = u64::MAX;
/// Bytes read per IO while scanning a segment.
const SCAN_CHUNK_BYTES: usize = 1 << 20;

/// Extension of live segment files.
pub const LOG_SUFFIX: &str = "log";

/// The file name of the segment starting at `base`, with `suffix` as extension.
pub(crate) fn file_name(base: Offset, suffix: &str) -> String {
    format!("{:020}.{suffix}", base.0)
}

/// Parses `<20 digits>.<suffix>`; `None` for any other name.
pub(crate) fn parse_file_name(name: &str) -> Option<(Offset, &str)> {
    let (digits, suffix) = name.split_once('.')?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let base: u64 = digits.parse().ok()?;
    (base <= Offset::MAX.0).then_some((Offset(base), suffix))
}

/// What a segment header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SegmentHeader {
    pub base: Offset,
    pub compacted: bool,
    pub covers_until: Option<Offset>,
}

impl SegmentHeader {
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_LEN] {
        let mut out = [0u8; SEGMENT_HEADER_LEN];
        out[0..6].copy_from_slice(MAGIC);
        out[6] = SEGMENT_FORMAT_VERSION;
        out[7] = if self.compacted { FLAG_COMPACTED } else { 0 };
        out[8..16].copy_from_slice(&self.base.0.to_le_bytes());
        let covers = self.covers_until.map_or(NO_COVERS_UNTIL, |o| o.0);
        out[16..24].copy_from_slice(&covers.to_le_bytes());
        let crc = crc32c::crc32c(&out[0..28]);
        out[28..32].copy_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes a header; the error is a reason for [`CorruptReason::SegmentHeader`], or the
    /// unknown version.
    pub fn decode(buf: &[u8]) -> Result<SegmentHeader, HeaderFault> {
        if buf.len() < SEGMENT_HEADER_LEN {
            return Err(HeaderFault::Bad("shorter than a segment header"));
        }
        if &buf[0..6] != MAGIC {
            return Err(HeaderFault::Bad("bad magic"));
        }
        if crc32c::crc32c(&buf[0..28]) != frame::read_u32(buf, 28) {
            return Err(HeaderFault::Bad("header crc mismatch"));
        }
        if buf[6] != SEGMENT_FORMAT_VERSION {
            return Err(HeaderFault::Version(buf[6]));
        }
        if buf[7] & !FLAG_COMPACTED != 0 {
            return Err(HeaderFault::Bad("unknown header flags"));
        }
        let base = frame::read_u64(buf, 8);
        let covers = frame::read_u64(buf, 16);
        if base > Offset::MAX.0 {
            return Err(HeaderFault::Bad("base offset past the maximum"));
        }
        Ok(SegmentHeader {
            base: Offset(base),
            compacted: buf[7] & FLAG_COMPACTED != 0,
            covers_until: (covers != NO_COVERS_UNTIL).then_some(Offset(covers)),
        })
    }
}

/// Why a segment header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderFault {
    Bad(&'static str),
    Version(u8),
}

impl HeaderFault {
    pub fn into_error(self, path: &Path) -> LogError {
        match self {
            HeaderFault::Bad(reason) => LogError::Corrupt {
                path: path.to_owned(),
                position: 0,
                reason: CorruptReason::SegmentHeader(reason),
            },
            HeaderFault::Version(version) => LogError::UnsupportedVersion {
                path: path.to_owned(),
                version,
            },
        }
    }
}

/// A segment file. Immutable once opened; shared by the writer and readers through `Arc`
/// (positional IO needs no `&mut`). Its descriptor is under an [`OpenFiles`] budget: closed
/// while idle, reopened on use; a read takes the open file (`Arc<File>`) and keeps it, so it
/// keeps reading the file even after retention unlinks it.
#[derive(Debug)]
pub(crate) struct Segment {
    pub path: PathBuf,
    pub file: FileSlot,
    pub header: SegmentHeader,
    /// How many times published bytes of this file were cut (`truncate_from`). A reader that
    /// sends bytes by position long after it dropped the read view (sendfile, see
    /// [`crate::FileSlice`]) holds this for reading around each send and checks the count it
    /// located them under: a cut and re-append can then never slip new bytes into its answer.
    pub cuts: RwLock<u64>,
}

impl Segment {
    /// A segment over `file`, just opened at `path`, under the `files` budget.
    pub fn new(path: PathBuf, file: File, header: SegmentHeader, files: &OpenFiles) -> Segment {
        Segment {
            file: files.slot(path.clone(), file),
            path,
            header,
            cuts: RwLock::new(0),
        }
    }

    pub fn base(&self) -> Offset {
        self.header.base
    }

    /// Creates the file at `path`, writes and syncs its header. The caller syncs the directory.
    pub fn create(
        path: PathBuf,
        header: SegmentHeader,
        files: &OpenFiles,
    ) -> Result<Segment, LogError> {
        let file = fsutil::create_new(&path)?;
        let written = fsutil::write_all_at(&file, &path, &header.encode(), 0).and_then(|()| {
            file.sync_data()
                .map_err(|e| LogError::io("fdatasync", &path, e))
        });
        if let Err(error) = written {
            // Not in any view yet: remove it, or the next roll's `create_new` would find it (a
            // full disk fails here, and the roll is retried once space is freed).
            drop(file);
            let _ = fsutil::remove_file(&path);
            return Err(error);
        }
        Ok(Segment::new(path, file, header, files))
    }

    /// Opens an existing segment file and reads its header (if the file is long enough).
    pub fn open(
        path: PathBuf,
    ) -> Result<(File, u64, Result<SegmentHeader, HeaderFault>), LogError> {
        let file = fsutil::open_rw(&path)?;
        let len = fsutil::file_len(&file, &path)?;
        let mut buf = [0u8; SEGMENT_HEADER_LEN];
        let header = if len >= SEGMENT_HEADER_LEN as u64 {
            fsutil::read_exact_at(&file, &path, &mut buf, 0)?;
            SegmentHeader::decode(&buf)
        } else {
            Err(HeaderFault::Bad("shorter than a segment header"))
        };
        Ok((file, len, header))
    }

    pub fn corrupt(&self, position: u64, reason: CorruptReason) -> LogError {
        LogError::Corrupt {
            path: self.path.clone(),
            position,
            reason,
        }
    }

    /// Checks that a frame at this point of the segment has offsets that fit: inside the
    /// segment's range, after the previous entry, contiguous unless the segment is compacted.
    pub fn check_order(
        &self,
        header: &FrameHeader,
        previous_last: Option<Offset>,
        position: u64,
    ) -> Result<(), LogError> {
        let base = self.base();
        let relative_last = header.last_offset.0.checked_sub(base.0);
        let outside = header.first_offset < base
            || relative_last.is_none_or(|r| r > u64::from(u32::MAX))
            || self
                .header
                .covers_until
                .is_some_and(|c| header.last_offset >= c);
        if outside {
            return Err(self.corrupt(
                position,
                CorruptReason::OffsetOutsideSegment {
                    base,
                    found: header.first_offset,
                },
            ));
        }
        let in_order = match previous_last {
            None => self.header.compacted || header.first_offset == base,
            Some(prev) if self.header.compacted => header.first_offset > prev,
            Some(prev) => header.first_offset.0 == prev.0 + 1,
        };
        if !in_order {
            return Err(self.corrupt(
                position,
                match previous_last {
                    Some(previous_last) => CorruptReason::OffsetsOutOfOrder {
                        previous_last,
                        found: header.first_offset,
                    },
                    None => CorruptReason::OffsetOutsideSegment {
                        base,
                        found: header.first_offset,
                    },
                },
            ));
        }
        Ok(())
    }
}

/// A moving read window over a file: positional reads of large chunks, handed out as slices so
/// a scan does one IO per chunk and readers can keep zero-copy `Bytes` of the frames.
pub(crate) struct Window<'a> {
    file: &'a File,
    path: &'a Path,
    end: u64,
    chunk_bytes: usize,
    chunk: Bytes,
    chunk_start: u64,
    verify_crc: bool,
}

impl<'a> Window<'a> {
    /// A window over `file` bytes `..end`, reading at least `chunk_bytes` per IO.
    pub fn new(file: &'a File, path: &'a Path, end: u64, chunk_bytes: usize) -> Window<'a> {
        Window {
            file,
            path,
            end,
            chunk_bytes: chunk_bytes.max(FRAME_HEADER_LEN),
            chunk: Bytes::new(),
            chunk_start: 0,
            verify_crc: true,
        }
    }

    pub fn end(&self) -> u64 {
        self.end
    }

    /// Changes how much the next refill reads (a read sizes it to its remaining budget).
    pub fn set_chunk_bytes(&mut self, chunk_bytes: usize) {
        self.chunk_bytes = chunk_bytes.max(FRAME_HEADER_LEN);
    }

    /// The bytes from `position` to the end of the current chunk, after making sure they
    /// include `need` bytes (or everything up to the end of the window, if that is less).
    pub fn at(&mut self, position: u64, need: usize) -> Result<&[u8], LogError> {
        let wanted_end = position.saturating_add(need as u64).min(self.end);
        let chunk_end = self.chunk_start + self.chunk.len() as u64;
        if position < self.chunk_start || wanted_end > chunk_end {
            let len = (need.max(self.chunk_bytes) as u64).min(self.end.saturating_sub(position));
            let mut buf = crate::buffer_pool::take(len as usize);
            fsutil::read_exact_at(self.file, self.path, &mut buf, position)?;
            self.chunk = buf.freeze();
            crate::buffer_pool::give(&self.chunk);
            self.chunk_start = position;
        }
        let from = (position - self.chunk_start) as usize;
        Ok(&self.chunk[from..])
    }

    /// The header of the frame at `position` (the whole frame is then in the current chunk),
    /// or why there is no valid frame there.
    pub fn frame(&mut self, position: u64) -> Result<Result<FrameHeader, FrameFault>, LogError> {
        let end = self.end;
        let verify = self.verify_crc;
        let decoded = frame::decode_with(self.at(position, FRAME_HEADER_LEN)?, verify);
        let decoded = match decoded {
            Decoded::Incomplete {
                frame_len: Some(len),
            } if position + u64::from(len) <= end => {
                frame::decode_with(self.at(position, len as usize)?, verify)
            }
            other => other,
        };
        Ok(match decoded {
            Decoded::Frame(header) => Ok(header),
            Decoded::Incomplete { .. } => Err(FrameFault::PastEnd),
            Decoded::Invalid(fault) => Err(fault),
        })
    }

    /// The entry of the frame at `position` that [`Window::frame`] just decoded; key and
    /// payload are slices of the chunk.
    pub fn entry(&self, position: u64, header: &FrameHeader) -> Entry {
        header.to_entry_at(&self.chunk, (position - self.chunk_start) as usize)
    }

    /// Skip CRC checks (header sanity is still checked).
    pub fn trust_crc(&mut self) {
        self.verify_crc = false;
    }
}

/// How strictly a scan treats a bad frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanMode {
    /// A sealed segment was synced before the next one was created: any bad byte is damage.
    Sealed,
    /// The last segment: a bad frame with nothing valid after it is a torn write.
    Tail,
    /// The last segment, under an operator's explicit repair: everything from the first bad
    /// frame on is cut, valid frames after it included.
    TailRepair,
}

/// What a scan learned about a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    pub index: SparseIndex,
    /// Where the valid frames end (the file length, unless a torn tail was found).
    pub valid_len: u64,
    /// The offset after the last entry (the base if there is none).
    pub next_offset: Offset,
    pub max_timestamp: Option<TimestampMs>,
    pub last_offset: Option<Offset>,
    pub entry_count: u64,
    /// A torn tail found at this position, and why the frame there is bad.
    pub torn_at: Option<(u64, FrameFault)>,
}

/// Reads every frame of `segment` (whose file is `file_len` bytes), checking CRCs and offset
/// order, and builds its index. See [`ScanMode`] for what a bad frame means.
pub(crate) fn scan(
    segment: &Segment,
    file_len: u64,
    mode: ScanMode,
    index_interval_bytes: u32,
) -> Result<Scan, LogError> {
    let file = segment.file.get()?;
    let mut window = Window::new(&file, &segment.path, file_len, SCAN_CHUNK_BYTES);
    let mut scan = Scan {
        index: SparseIndex::new(),
        valid_len: SEGMENT_HEADER_LEN as u64,
        next_offset: segment.base(),
        max_timestamp: None,
        last_offset: None,
        entry_count: 0,
        torn_at: None,
    };
    let mut position = SEGMENT_HEADER_LEN as u64;
    while position < file_len {
        match window.frame(position)? {
            Ok(header) => {
                segment.check_order(&header, scan.last_offset, position)?;
                scan.index.observe(
                    segment.base(),
                    header.first_offset,
                    position,
                    u64::from(header.frame_len),
                    scan.max_timestamp,
                    index_interval_bytes,
                );
                scan.max_timestamp = Some(
                    scan.max_timestamp
                        .map_or(header.max_timestamp_ms, |t| t.max(header.max_timestamp_ms)),
                );
                scan.last_offset = Some(header.last_offset);
                scan.next_offset = header.next_offset();
                scan.entry_count += 1;
                position += u64::from(header.frame_len);
                scan.valid_len = position;
            }
            Err(fault) => match mode {
                ScanMode::Sealed => {
                    let reason = if fault == FrameFault::PastEnd {
                        CorruptReason::TruncatedSealedSegment
                    } else {
                        CorruptReason::FrameInSealedSegment(fault)
                    };
                    return Err(segment.corrupt(position, reason));
                }
                ScanMode::Tail | ScanMode::TailRepair => {
                    let valid_after = if mode == ScanMode::Tail {
                        find_valid_frame_after(&mut window, segment, position, scan.last_offset)?
                    } else {
                        None
                    };
                    if valid_after.is_some() {
                        return Err(
                            segment.corrupt(position, CorruptReason::FrameBeforeValidData(fault))
                        );
                    }
                    scan.torn_at = Some((position, fault));
                    break;
                }
            },
        }
    }
    Ok(scan)
}

/// Looks for any valid frame starting after `bad_position` whose offsets could follow
/// `previous_last`: its existence turns a bad frame from a torn tail into mid-log damage.
/// Every byte position is a candidate (the bad frame's length field cannot be trusted); a
/// header sanity check filters candidates before the CRC.
fn find_valid_frame_after(
    window: &mut Window<'_>,
    segment: &Segment,
    bad_position: u64,
    previous_last: Option<Offset>,
) -> Result<Option<u64>, LogError> {
    let end = window.end();
    let mut position = bad_position + 1;
    while position + FRAME_HEADER_LEN as u64 <= end {
        let candidate = frame::peek(window.at(position, FRAME_HEADER_LEN)?);
        if let Some(header) = candidate {
            let plausible = position + u64::from(header.frame_len) <= end
                && header.first_offset >= segment.base()
                && previous_last.is_none_or(|prev| header.first_offset > prev);
            if plausible && window.frame(position)?.is_ok() {
                return Ok(Some(position));
            }
        }
        position += 1;
    }
    Ok(None)
}
