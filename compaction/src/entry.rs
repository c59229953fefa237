//! What a log stores: one entry covering a contiguous range of offsets, with an opaque payload.

use bytes::Bytes;

use crate::types::{Offset, TimestampMs};

/// One log entry: a Kafka record batch, a Raft log entry, or one keyed record.
///
/// The log never looks inside `payload`. An entry covers `first_offset..=last_offset` (a Kafka
/// batch spans many offsets; a Raft entry or a keyed record exactly one). Keyed entries take part
/// in key-based compaction; a tombstone is a keyed entry whose value is deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The first offset the entry covers.
    pub first_offset: Offset,
    /// The last offset the entry covers (`>= first_offset`).
    pub last_offset: Offset,
    /// The largest timestamp inside the entry; the time index and time retention use it.
    pub max_timestamp_ms: TimestampMs,
    /// The compaction key, if the entry is keyed.
    pub key: Option<Bytes>,
    /// The opaque payload (empty for a tombstone).
    pub payload: Bytes,
    /// A keyed entry that deletes its key. Always has a key and an empty payload.
    pub tombstone: bool,
}

impl Entry {
    /// An unkeyed entry covering `first_offset..=last_offset` (a Kafka record batch).
    pub fn batch(
        first_offset: Offset,
        last_offset: Offset,
        max_timestamp_ms: TimestampMs,
        payload: Bytes,
    ) -> Entry {
        Entry {
            first_offset,
            last_offset,
            max_timestamp_ms,
            key: None,
            payload,
            tombstone: false,
        }
    }

    /// An unkeyed entry covering exactly one offset (a Raft log entry).
    pub fn single(offset: Offset, timestamp_ms: TimestampMs, payload: Bytes) -> Entry {
        Entry::batch(offset, offset, timestamp_ms, payload)
    }

    /// A keyed record at `offset`: `Some(value)` sets the key, `None` is a tombstone.
    pub fn keyed(
        offset: Offset,
        timestamp_ms: TimestampMs,
        key: Bytes,
        value: Option<Bytes>,
    ) -> Entry {
        let tombstone = value.is_none();
        Entry {
            first_offset: offset,
            last_offset: offset,
            max_timestamp_ms: timestamp_ms,
            key: Some(key),
            payload: value.unwrap_or_default(),
            tombstone,
        }
    }

    /// The offset right after this entry: where the next entry of a dense log starts.
    pub fn next_offset(&self) -> Offset {
        Offset(self.last_offset.0.saturating_add(1))
    }

    /// The value of a keyed entry: `None` for a tombstone.
    pub fn value(&self) -> Option<&Bytes> {
        if self.tombstone {
            None
        } else {
            Some(&self.payload)
        }
    }

    /// Bytes this entry occupies on disk, framing included.
    pub fn frame_len(&self) -> u64 {
        crate::frame::FRAME_HEADER_LEN as u64
            + self.key.as_ref().map_or(0, |k| k.len() as u64)
            + self.payload.len() as u64
    }
}
