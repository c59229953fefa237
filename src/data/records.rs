//! The record batches of one partition in a Fetch answer: bytes the read already holds, and
//! ranges of segment files sent later straight from the page cache (`sendfile(2)`).
//!
//! The log reads a small probe per large batch (to find its frame) and leaves the rest of the
//! batch in the file; small batches are read whole. The connection writes the parts in order
//! (see `server::send_records`).

use bytes::{Bytes, BytesMut};
use compaction::{FileSlice, LocatedEntry, LogError};
use protocol::splice::SplicedRecords;

/// One contiguous piece of a partition's records.
#[derive(Debug, Clone)]
pub enum RecordPart {
    /// Bytes already read (slices of the log's read buffers).
    Memory(Bytes),
    /// Bytes still in a segment file, held open.
    File(FileSlice),
}

impl RecordPart {
    /// Bytes of the part.
    pub fn len(&self) -> usize {
        match self {
            RecordPart::Memory(b) => b.len(),
            RecordPart::File(f) => f.len(),
        }
    }

    /// Whether the part is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whole batches of one partition, in offset order.
#[derive(Debug, Clone, Default)]
pub struct FetchRecords {
    parts: Vec<RecordPart>,
    len: usize,
}

impl FetchRecords {
    /// Appends one located batch (its head, then its rest in the file).
    pub fn push_entry(&mut self, entry: LocatedEntry) {
        self.push(RecordPart::Memory(entry.head));
        if let Some(tail) = entry.tail {
            self.push(RecordPart::File(tail));
        }
    }

    /// Appends bytes already in memory.
    pub fn push_bytes(&mut self, bytes: Bytes) {
        self.push(RecordPart::Memory(bytes));
    }

    fn push(&mut self, part: RecordPart) {
        if !part.is_empty() {
            self.len += part.len();
            self.parts.push(part);
        }
    }

    /// Total bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The parts, in wire order.
    pub fn parts(&self) -> &[RecordPart] {
        &self.parts
    }

    /// Whether any part is still in a file.
    pub fn has_file_parts(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, RecordPart::File(_)))
    }

    /// Everything in one buffer, file parts read (copies: tests, and the copying fallback).
    pub fn to_bytes(&self) -> Result<Bytes, LogError> {
        let mut out = BytesMut::with_capacity(self.len);
        for part in &self.parts {
            match part {
                RecordPart::Memory(b) => out.extend_from_slice(b),
                RecordPart::File(f) => out.extend_from_slice(&f.read()?),
            }
        }
        Ok(out.freeze())
    }
}

impl SplicedRecords for FetchRecords {
    fn wire_len(&self) -> usize {
        self.len
    }
}
