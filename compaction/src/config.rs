//! How a log is shaped and bounded. Every size has a limit; `validate` refuses nonsense.

use crate::error::LogError;
use crate::frame::{FORMAT_MAX_BODY_LEN, FRAME_HEADER_LEN, FRAME_PREFIX_LEN};
use crate::segment::SEGMENT_HEADER_LEN;

/// The largest segment the format admits: positions in the offset index are `u32`, and Kafka
/// itself caps `segment.bytes` at 2 GiB.
pub const FORMAT_MAX_SEGMENT_BYTES: u64 = 1 << 31;

/// Shape and limits of one log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// Roll to a new segment when the next entry would push the active one past this size.
    pub max_segment_bytes: u64,
    /// Roll when the active segment has taken appends for this long (by the `now_ms` the caller
    /// passes to `append`). `None`: roll by size only.
    pub segment_ms: Option<i64>,
    /// One sparse index point (offset, position, running max timestamp) per this many bytes.
    pub index_interval_bytes: u32,
    /// The largest frame (header + key + payload) an append accepts. An entry must also fit an
    /// empty segment: the effective limit is the smaller of the two
    /// ([`LogConfig::entry_limit`]).
    pub max_entry_bytes: u32,
    /// The longest key an append accepts.
    pub max_key_bytes: u32,
    /// Scan and CRC-check sealed segments at open even when their index files are valid.
    /// `false` opens large logs fast and leaves the check to reads (which verify every frame).
    pub verify_sealed_on_open: bool,
    /// Check each frame's CRC on `read`. Payloads that carry their own checksum (a Kafka record
    /// batch has a CRC32C its consumers verify) can skip ours to read at memory speed; open,
    /// compaction and index checks always verify.
    pub verify_crc_on_read: bool,
    /// An operator's escape hatch, off by default: cut the last segment at its first bad frame
    /// even when valid frames follow it (open otherwise refuses such a log). Everything after
    /// the bad frame is dropped and logged. Sealed segments are never repaired this way.
    pub repair_tail_corruption: bool,
    /// Compaction keeps one map entry per distinct key; this bounds its memory.
    pub max_compaction_keys: usize,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            max_segment_bytes: 1 << 30,
            segment_ms: None,
            index_interval_bytes: 4096,
            max_entry_bytes: 16 << 20,
            max_key_bytes: 64 << 10,
            verify_sealed_on_open: true,
            verify_crc_on_read: true,
            repair_tail_corruption: false,
            max_compaction_keys: 10_000_000,
        }
    }
}

impl LogConfig {
    /// The largest frame an append accepts: `max_entry_bytes`, or less if a segment is smaller.
    pub fn entry_limit(&self) -> u64 {
        u64::from(self.max_entry_bytes).min(
            self.max_segment_bytes
                .saturating_sub(SEGMENT_HEADER_LEN as u64),
        )
    }

    /// Refuses values the format or the engine cannot honour.
    pub fn validate(&self) -> Result<(), LogError> {
        if self.max_segment_bytes > FORMAT_MAX_SEGMENT_BYTES {
            return Err(LogError::InvalidConfig("max_segment_bytes above 2 GiB"));
        }
        if (self.max_entry_bytes as usize) < FRAME_HEADER_LEN {
            return Err(LogError::InvalidConfig(
                "max_entry_bytes below the frame header",
            ));
        }
        if u64::from(self.max_entry_bytes)
            > u64::from(FORMAT_MAX_BODY_LEN) + FRAME_PREFIX_LEN as u64
        {
            return Err(LogError::InvalidConfig(
                "max_entry_bytes above the format cap (1 GiB)",
            ));
        }
        if self.max_segment_bytes < (SEGMENT_HEADER_LEN + FRAME_HEADER_LEN) as u64 {
            return Err(LogError::InvalidConfig(
                "max_segment_bytes below one header and frame",
            ));
        }
        if self.index_interval_bytes == 0 {
            return Err(LogError::InvalidConfig(
                "index_interval_bytes must be positive",
            ));
        }
        if matches!(self.segment_ms, Some(ms) if ms <= 0) {
            return Err(LogError::InvalidConfig("segment_ms must be positive"));
        }
        if self.max_compaction_keys == 0 {
            return Err(LogError::InvalidConfig(
                "max_compaction_keys must be positive",
            ));
        }
        Ok(())
    }
}
