//! The leader epochs of one partition's log (Kafka's `LeaderEpochFileCache`): which epoch
//! starts at which offset, for OffsetForLeaderEpoch ("the end offset of the largest epoch
//! ≤ the one asked for") and for the epochs ListOffsets reports.
//!
//! ```text
//!  log:    [e0 e0 e0 | e3 e3 | e7 ...]          partition_leader_epoch of each stored batch
//!  cache:  (0, 0) (3, 300) (7, 520)             epoch, first offset; ascending in both
//!  end_offset_for(3) = (3, 520)   the next epoch's start
//!  end_offset_for(7) = (7, LEO)   the current epoch ends at the log end
//!  end_offset_for(5) = (3, 520)   the largest epoch ≤ 5, and where the next one starts
//! ```
//!
//! It is not kept in a file: [`rebuild`] reads it back from the batches at open by bisection
//! (epochs never decrease along the log), two batch reads when the log has one epoch and
//! O(log n) per epoch boundary otherwise, so a restart costs nothing like a scan. Then the
//! partition's current epoch is assigned at the log end, as a Kafka leader does when it takes
//! the partition. Appends write the current epoch into each batch, the one the cache already
//! ends with, so they change nothing here while the partition is open. Entries wholly below the
//! log start (retention, DeleteRecords) are dropped when the cache is next read, the oldest
//! surviving one moved up to the log start, as Kafka's `truncateFromStart` does. At most
//! [`MAX_EPOCH_ENTRIES`] entries are kept (the oldest go first): a partition led by thousands
//! of successive leaders still answers for its recent epochs in bounded memory.

use compaction::{Log, LogError, Offset};

/// Most epochs kept per partition.
pub const MAX_EPOCH_ENTRIES: usize = 4096;
/// Kafka's `UNDEFINED_EPOCH`: no epoch.
pub const UNDEFINED_EPOCH: i32 = -1;

/// One epoch and the first offset written in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEntry {
    /// The leader epoch.
    pub epoch: i32,
    /// Its first offset.
    pub start_offset: i64,
}

/// The epochs of one partition, ascending by epoch and by start offset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderEpochCache {
    entries: Vec<EpochEntry>,
}

impl LeaderEpochCache {
    /// The entries, oldest first.
    pub fn entries(&self) -> &[EpochEntry] {
        &self.entries
    }

    /// The newest epoch.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.epoch)
    }

    /// Records that `epoch` starts at `start_offset` (Kafka's `assign`): nothing for a negative
    /// epoch (a batch of a format without epochs) or one not newer than the latest; entries
    /// that would no longer be monotonic (starting at or after `start_offset`) are dropped.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) {
        if epoch < 0 || self.latest_epoch().is_some_and(|latest| latest >= epoch) {
            return;
        }
        while self
            .entries
            .last()
            .is_some_and(|last| last.start_offset >= start_offset)
        {
            self.entries.pop();
        }
        self.entries.push(EpochEntry {
            epoch,
            start_offset,
        });
        if self.entries.len() > MAX_EPOCH_ENTRIES {
            self.entries.remove(0);
        }
    }

    /// Kafka's `truncateFromStart`: entries starting at or below `log_start` collapse into the
    /// newest of them, moved to start at `log_start`.
    pub fn truncate_from_start(&mut self, log_start: i64) {
        let below = self
            .entries
            .iter()
            .take_while(|e| e.start_offset <= log_start)
            .count();
        if below == 0 {
            return;
        }
        let kept = self.entries[below - 1].epoch;
        self.entries.drain(..below - 1);
        self.entries[0] = EpochEntry {
            epoch: kept,
            start_offset: log_start,
        };
    }

    /// Kafka's `endOffsetFor`: for `requested`, the largest epoch ≤ it and the offset that
    /// epoch ends at (the next epoch's start, or `log_end` for the latest); `None` when no
    /// epoch qualifies (Kafka's `UNDEFINED_EPOCH_OFFSET`: the answer is -1, -1). An epoch
    /// below every known one answers itself with the first known epoch's start: the log
    /// before it is gone.
    pub fn end_offset_for(&self, requested: i32, log_end: i64) -> Option<(i32, i64)> {
        if requested == UNDEFINED_EPOCH {
            return None;
        }
        if self.latest_epoch() == Some(requested) {
            return Some((requested, log_end));
        }
        let higher = self.entries.iter().find(|e| e.epoch > requested)?;
        match self.entries.iter().rev().find(|e| e.epoch <= requested) {
            None => Some((requested, higher.start_offset)),
            Some(floor) => Some((floor.epoch, higher.start_offset)),
        }
    }

    /// Kafka's `epochForOffset`: the epoch the record at `offset` was written in.
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        let mut previous = None;
        for e in &self.entries {
            if e.start_offset == offset {
                return Some(e.epoch);
            }
            if e.start_offset > offset {
                return previous;
            }
            previous = Some(e.epoch);
        }
        previous
    }
}

/// One stored batch as the bisection sees it.
#[derive(Debug, Clone, Copy)]
struct Probe {
    first: i64,
    last: i64,
    epoch: i32,
}

/// Offset of `partition_leader_epoch` in a record batch, and of its magic byte.
const EPOCH_AT: usize = 12;
const MAGIC_AT: usize = 16;

/// The leader epoch of a stored batch (-1 for formats before v2, which carry none).
fn batch_epoch(payload: &[u8]) -> i32 {
    match (payload.get(EPOCH_AT..EPOCH_AT + 4), payload.get(MAGIC_AT)) {
        (Some(b), Some(2)) => i32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        _ => UNDEFINED_EPOCH,
    }
}

fn to_i64(o: Offset) -> i64 {
    i64::try_from(o.0).unwrap_or(i64::MAX)
}

/// The batch holding `offset`, or the first after it (across a compaction gap).
fn probe(log: &Log, offset: i64) -> Result<Option<Probe>, LogError> {
    let at = Offset(u64::try_from(offset).unwrap_or(0));
    let entries = match log.read(at, 1) {
        Ok(e) => e,
        // Retention moved the start meanwhile: the log from its new start is what counts.
        Err(LogError::OffsetOutOfRange { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(entries.first().map(|e| Probe {
        first: to_i64(e.first_offset),
        last: to_i64(e.last_offset),
        epoch: batch_epoch(&e.payload),
    }))
}

/// Reads the epochs back from the batches of `log` (see the module doc).
pub fn rebuild(log: &Log) -> Result<LeaderEpochCache, LogError> {
    let mut cache = LeaderEpochCache::default();
    let start = to_i64(log.start_offset());
    let end = to_i64(log.next_offset());
    if start >= end {
        return Ok(cache);
    }
    let (Some(mut current), Some(last)) = (probe(log, start)?, probe(log, end - 1)?) else {
        return Ok(cache);
    };
    cache.assign(current.epoch, current.first);
    for _ in 0..MAX_EPOCH_ENTRIES {
        let latest = cache.latest_epoch().unwrap_or(UNDEFINED_EPOCH);
        if last.epoch <= latest || last.first <= current.last {
            break;
        }
        // The first batch after `current` of an epoch above `latest`: the smallest offset
        // whose batch is newer, searched in [lo, up); `answer` is the earliest such batch yet.
        let mut answer = last;
        let mut lo = current.last + 1;
        let mut up = answer.first;
        while lo < up {
            let mid = lo + (up - lo) / 2;
            let Some(m) = probe(log, mid)? else { break };
            if m.first >= up {
                // Nothing starts in [mid, up).
                up = mid;
            } else if m.epoch > latest {
                answer = m;
                up = m.first;
            } else {
                lo = m.last + 1;
            }
        }
        cache.assign(answer.epoch, answer.first);
        current = answer;
    }
    Ok(cache)
}

#[cfg(test)]
mod tests {
    use super::*;
    use compaction::{Entry, LogConfig, TimestampMs};

    fn cache(entries: &[(i32, i64)]) -> LeaderEpochCache {
        let mut c = LeaderEpochCache::default();
        for (e, s) in entries {
            c.assign(*e, *s);
        }
        c
    }

    #[test]
    fn end_offsets_follow_kafkas_end_offset_for() {
        let c = cache(&[(0, 0), (3, 300), (7, 520)]);
        assert_eq!(c.end_offset_for(7, 900), Some((7, 900)));
        assert_eq!(c.end_offset_for(3, 900), Some((3, 520)));
        assert_eq!(c.end_offset_for(0, 900), Some((0, 300)));
        // Between known epochs: the largest below, ending where the next starts.
        assert_eq!(c.end_offset_for(5, 900), Some((3, 520)));
        assert_eq!(c.end_offset_for(1, 900), Some((0, 300)));
        // Newer than any known, and undefined: no answer.
        assert_eq!(c.end_offset_for(8, 900), None);
        assert_eq!(c.end_offset_for(UNDEFINED_EPOCH, 900), None);
        // Older than any known (the log before was deleted): itself, to the first start.
        let later = cache(&[(4, 100), (6, 200)]);
        assert_eq!(later.end_offset_for(2, 900), Some((2, 100)));
        assert_eq!(LeaderEpochCache::default().end_offset_for(0, 0), None);
    }

    #[test]
    fn assign_keeps_epochs_and_offsets_monotonic_and_bounded() {
        let mut c = cache(&[(0, 0), (3, 300)]);
        c.assign(2, 400);
        c.assign(3, 500);
        c.assign(-1, 600);
        assert_eq!(
            c.entries().len(),
            2,
            "older, equal and undefined epochs change nothing"
        );
        // A newer epoch at an offset an entry already starts at or after replaces it.
        c.assign(5, 300);
        assert_eq!(
            c.entries(),
            &[
                EpochEntry {
                    epoch: 0,
                    start_offset: 0
                },
                EpochEntry {
                    epoch: 5,
                    start_offset: 300
                }
            ]
        );
        let mut many = LeaderEpochCache::default();
        for e in 0..(MAX_EPOCH_ENTRIES as i32 + 10) {
            many.assign(e, i64::from(e) * 10);
        }
        assert_eq!(many.entries().len(), MAX_EPOCH_ENTRIES);
        assert_eq!(many.entries()[0].epoch, 10);
    }

    #[test]
    fn the_log_start_collapses_what_lies_below_it() {
        let mut c = cache(&[(0, 0), (3, 300), (7, 520)]);
        c.truncate_from_start(350);
        assert_eq!(
            c.entries()[0],
            EpochEntry {
                epoch: 3,
                start_offset: 350
            }
        );
        assert_eq!(c.entries().len(), 2);
        assert_eq!(c.end_offset_for(0, 900), Some((0, 350)));
        c.truncate_from_start(10);
        assert_eq!(c.entries()[0].start_offset, 350, "never moves back");
        assert_eq!(c.epoch_for_offset(350), Some(3));
        assert_eq!(c.epoch_for_offset(600), Some(7));
        assert_eq!(c.epoch_for_offset(100), None);
    }

    /// A v2 batch header carrying `epoch` (only the fields `batch_epoch` reads are real).
    fn batch(epoch: i32, magic: u8) -> bytes::Bytes {
        let mut b = vec![0u8; 61];
        b[EPOCH_AT..EPOCH_AT + 4].copy_from_slice(&epoch.to_be_bytes());
        b[MAGIC_AT] = magic;
        bytes::Bytes::from(b)
    }

    fn log_of(dir: &std::path::Path, epochs: &[i32]) -> Log {
        let log = Log::open(
            dir,
            LogConfig {
                max_segment_bytes: 4096,
                ..LogConfig::default()
            },
        )
        .unwrap();
        let mut at = 0u64;
        for e in epochs {
            // Batches of 3 records each.
            let entry = Entry::batch(Offset(at), Offset(at + 2), TimestampMs(0), batch(*e, 2));
            log.append(&[entry], TimestampMs(0)).unwrap();
            at += 3;
        }
        log
    }

    #[test]
    fn rebuild_finds_every_epoch_boundary_in_the_batches() {
        let dir = tempfile::tempdir().unwrap();
        let mut epochs = vec![-1, -1, 0, 0, 0];
        epochs.extend(std::iter::repeat_n(2, 40));
        epochs.extend(std::iter::repeat_n(5, 200));
        epochs.push(9);
        let log = log_of(dir.path(), &epochs);
        assert!(log.segments().len() > 3, "spans segments");
        let c = rebuild(&log).unwrap();
        let expected = [(0, 6), (2, 15), (5, 135), (9, 735)];
        let got: Vec<(i32, i64)> = c
            .entries()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect();
        assert_eq!(got, expected);
        // A log of one epoch, and an empty one.
        let one = tempfile::tempdir().unwrap();
        let c = rebuild(&log_of(one.path(), &[0; 50])).unwrap();
        assert_eq!(
            c.entries(),
            &[EpochEntry {
                epoch: 0,
                start_offset: 0
            }]
        );
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(rebuild(&log_of(empty.path(), &[])).unwrap().entries(), &[]);
        // Magic 1 batches carry no epoch.
        assert_eq!(batch_epoch(&batch(4, 1)), UNDEFINED_EPOCH);
        assert_eq!(batch_epoch(&[0u8; 5]), UNDEFINED_EPOCH);
    }
}
