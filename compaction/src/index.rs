//! The sparse in-memory index of one segment: one point per `index_interval_bytes` of frames.
//!
//! A point records an entry's offset (relative to the segment base), its byte position, and the
//! largest timestamp of every entry *before* it in the segment. Offsets and positions grow with
//! the points, and so does that running maximum, so both lookups are binary searches:
//!
//! - by offset: the last point at or below the offset, then scan forward;
//! - by timestamp: the last point whose running maximum is below the target; every entry before
//!   it is older than the target, and the next point bounds the scan.
//!
//! Index files on disk (see [`crate::index_file`]) are a cache of these points, never trusted
//! over the segment data.

use crate::types::{Offset, TimestampMs};

/// One sparse index point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexPoint {
    /// Entry first offset minus the segment base.
    pub relative_offset: u32,
    /// Byte position of the entry's frame in the segment file.
    pub position: u32,
    /// The largest timestamp of the entries before this one in the segment (`i64::MIN` if none).
    pub max_timestamp_before: i64,
}

/// The index points of one segment, plus the bookkeeping to add the next one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SparseIndex {
    points: Vec<IndexPoint>,
    /// Frame bytes appended since the last point.
    bytes_since_point: u64,
}

impl SparseIndex {
    pub fn new() -> SparseIndex {
        SparseIndex::default()
    }

    /// Rebuilds from persisted points; `bytes_since_point` only matters for a segment still
    /// taking appends, which is always rebuilt by a scan instead.
    pub fn from_points(points: Vec<IndexPoint>) -> SparseIndex {
        SparseIndex {
            points,
            bytes_since_point: 0,
        }
    }

    pub fn points(&self) -> &[IndexPoint] {
        &self.points
    }

    /// Records an entry that was appended at `position`, `frame_len` bytes long.
    pub fn observe(
        &mut self,
        base: Offset,
        first_offset: Offset,
        position: u64,
        frame_len: u64,
        max_timestamp_before: Option<TimestampMs>,
        interval_bytes: u32,
    ) {
        if self.points.is_empty() || self.bytes_since_point >= u64::from(interval_bytes) {
            // The caller keeps relative offsets and positions within u32 (segment limits).
            self.points.push(IndexPoint {
                relative_offset: (first_offset.0 - base.0) as u32,
                position: position as u32,
                max_timestamp_before: max_timestamp_before.map_or(i64::MIN, |t| t.0),
            });
            self.bytes_since_point = 0;
        }
        self.bytes_since_point += frame_len;
    }

    /// Drops the points at or after `position` (the segment was truncated there).
    pub fn truncate_at(&mut self, position: u64) {
        self.points.retain(|p| u64::from(p.position) < position);
        self.bytes_since_point = self
            .points
            .last()
            .map_or(0, |p| position - u64::from(p.position));
    }

    /// Byte position to start scanning from to find `offset`; `None` if the segment has no
    /// points (no entries).
    pub fn floor_position(&self, base: Offset, offset: Offset) -> Option<u64> {
        let rel = offset.0.saturating_sub(base.0);
        let idx = self
            .points
            .partition_point(|p| u64::from(p.relative_offset) <= rel);
        let point = if idx == 0 {
            self.points.first()
        } else {
            self.points.get(idx - 1)
        };
        point.map(|p| u64::from(p.position))
    }

    /// Byte range to scan for the first entry whose max timestamp is `>= target`: from the last
    /// point all of whose predecessors are older, up to (excluding) the next point's entry
    /// (`None`: the segment end).
    pub fn time_scan_range(&self, target: TimestampMs) -> Option<(u64, Option<u64>)> {
        let idx = self
            .points
            .partition_point(|p| p.max_timestamp_before < target.0);
        if idx == 0 {
            return self.points.first().map(|p| (u64::from(p.position), None));
        }
        let from = u64::from(self.points[idx - 1].position);
        // Some entry before the next point is at or above the target, so the answer lies
        // strictly before that point's entry.
        let until = self.points.get(idx).map(|p| u64::from(p.position));
        Some((from, until))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_every_interval_and_floor_lookup() {
        let mut index = SparseIndex::new();
        let base = Offset(100);
        let mut position = 32;
        let mut max = None;
        for i in 0..10u64 {
            index.observe(base, Offset(100 + i), position, 50, max, 100);
            position += 50;
            max = Some(TimestampMs(i as i64));
        }
        let offsets: Vec<u32> = index.points().iter().map(|p| p.relative_offset).collect();
        assert_eq!(offsets, vec![0, 2, 4, 6, 8]);
        assert_eq!(index.floor_position(base, Offset(100)), Some(32));
        assert_eq!(index.floor_position(base, Offset(103)), Some(132));
        assert_eq!(index.floor_position(base, Offset(50)), Some(32));
        assert_eq!(index.floor_position(base, Offset(999)), Some(432));
    }
}
