//! Newtypes for the two numbers every entry carries: its offsets and its timestamp.

use std::fmt;

/// A position in a log's offset space (a Kafka offset, a Raft log index).
///
/// Offsets are unsigned and capped at [`Offset::MAX`] (`i64::MAX`) so that every offset the
/// log hands out is also a valid Kafka offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Offset(pub u64);

impl Offset {
    /// The largest offset a log accepts: Kafka offsets are signed 64-bit.
    pub const MAX: Offset = Offset(i64::MAX as u64);

    /// The offset right after this one, or `None` past [`Offset::MAX`].
    pub fn next(self) -> Option<Offset> {
        if self.0 >= Self::MAX.0 {
            None
        } else {
            Some(Offset(self.0 + 1))
        }
    }

    /// The raw value.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Milliseconds since the Unix epoch, as the caller defines them; the crate never reads a clock.
///
/// Signed because Kafka uses `-1` for "no timestamp".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TimestampMs(pub i64);

impl TimestampMs {
    /// The raw value.
    pub fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for TimestampMs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}
