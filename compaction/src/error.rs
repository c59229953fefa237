//! The log's typed errors. Each says which file and, for damage, which byte position.

use std::io;
use std::path::PathBuf;

use crate::frame::FrameFault;
use crate::types::Offset;

/// Everything a [`crate::Log`] operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// An IO call failed. `op` names the call (`"open"`, `"fdatasync"`...).
    #[error("{op} {}: {source}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Damaged bytes that recovery must not silently drop: mid-log, or in a sealed segment.
    #[error("corrupt log file {} at byte {position}: {reason}", path.display())]
    Corrupt {
        path: PathBuf,
        position: u64,
        reason: CorruptReason,
    },
    /// A segment file written by a newer (or unknown) format version.
    #[error("{}: unsupported segment format version {version}", path.display())]
    UnsupportedVersion { path: PathBuf, version: u8 },
    /// Segments do not follow each other: a segment file is missing or misplaced.
    #[error("{}: segment starts at offset {found} but the previous one ends at {expected}", path.display())]
    SegmentGap {
        path: PathBuf,
        expected: Offset,
        found: Offset,
    },
    /// An entry whose frame is larger than `max_entry_bytes`.
    #[error("entry of {size} bytes exceeds the limit of {max} bytes")]
    EntryTooLarge { size: u64, max: u64 },
    /// A key longer than `max_key_bytes`.
    #[error("key of {size} bytes exceeds the limit of {max} bytes")]
    KeyTooLarge { size: u64, max: u64 },
    /// An append whose first offset is not the log's next offset.
    #[error("append at offset {got} but the log ends at {expected}")]
    NonContiguous { expected: Offset, got: Offset },
    /// An entry that is malformed by itself (offsets reversed, a tombstone with a payload...).
    #[error("invalid entry: {0}")]
    InvalidEntry(&'static str),
    /// A read or a truncation outside `start_offset..=next_offset`.
    #[error("offset {requested} is outside the log [{start}, {next}]")]
    OffsetOutOfRange {
        requested: Offset,
        start: Offset,
        next: Offset,
    },
    /// `sync_to` asked for an end the log does not reach.
    #[error("sync to offset {requested} but the log ends at {end}")]
    SyncBeyondEnd { requested: Offset, end: Offset },
    /// An operation the log cannot perform in its current shape.
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// A configuration value out of range.
    #[error("invalid configuration: {0}")]
    InvalidConfig(&'static str),
    /// Compaction met more distinct keys than `max_compaction_keys`.
    #[error("compaction found more than {max} distinct keys")]
    TooManyKeys { max: usize },
    /// An fsync failed earlier. After a failed fsync the kernel may have dropped the dirty
    /// pages, so retrying could report data durable that is not: the log refuses every further
    /// write and sync until it is reopened (which re-reads what really is on disk).
    #[error("log stopped after a failed sync: {0}")]
    Poisoned(String),
    /// The log's [`crate::SpaceGuard`] refused the append before anything was written: the
    /// filesystem is full (or below its reserve). Retriable once space is freed.
    #[error(transparent)]
    StorageFull(#[from] crate::space::SpaceRefused),
}

/// What exactly is wrong at a corrupt position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CorruptReason {
    /// A bad frame in the last segment, followed by a valid frame: damage, not a torn write.
    #[error("bad frame ({0}) with valid frames after it")]
    FrameBeforeValidData(FrameFault),
    /// A bad frame in a sealed (fsynced before its successor existed) segment.
    #[error("bad frame in a sealed segment ({0})")]
    FrameInSealedSegment(FrameFault),
    /// A sealed segment ending inside a frame.
    #[error("truncated frame in a sealed segment")]
    TruncatedSealedSegment,
    /// The segment header is damaged or does not match its file name.
    #[error("bad segment header: {0}")]
    SegmentHeader(&'static str),
    /// A valid frame whose offsets do not follow the previous entry.
    #[error("entry offsets go backwards (entry at {found} after {previous_last})")]
    OffsetsOutOfOrder {
        previous_last: Offset,
        found: Offset,
    },
    /// A valid frame whose offsets lie outside the segment's range.
    #[error("entry offset {found} lies outside its segment (base {base})")]
    OffsetOutsideSegment { base: Offset, found: Offset },
    /// A published frame that no longer decodes when read back.
    #[error("frame read back does not match the index ({0})")]
    ReadMismatch(FrameFault),
}

impl LogError {
    /// Whether this is "no space left": a guard's refusal, or an IO call that failed with
    /// ENOSPC or EDQUOT. (A poisoned log is not: its fsync failed, whatever the reason.)
    pub fn is_storage_full(&self) -> bool {
        match self {
            LogError::StorageFull(_) => true,
            LogError::Io { source, .. } => crate::space::is_storage_full_io(source),
            _ => false,
        }
    }

    /// The IO error inside, if this is one.
    pub fn io_source(&self) -> Option<&io::Error> {
        match self {
            LogError::Io { source, .. } => Some(source),
            _ => None,
        }
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> LogError {
        LogError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}
