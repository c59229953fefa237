//! Idempotent producer state of one partition: Kafka's sequence rules
//! (`ProducerAppendInfo.checkSequence`, `ProducerStateEntry.findDuplicateBatch`).
//!
//! Per producer id: its epoch and its last five batches (first/last sequence and offsets).
//! - epoch older than known → INVALID_PRODUCER_EPOCH;
//! - a batch equal (same epoch, same sequence range) to one of the last five → a duplicate:
//!   acknowledged again with its original offsets, not appended;
//! - same epoch: the first sequence must follow the last one (wrapping at `i32::MAX`), else
//!   OUT_OF_ORDER_SEQUENCE_NUMBER;
//! - newer epoch: the sequence must restart at 0, else OUT_OF_ORDER_SEQUENCE_NUMBER;
//! - unknown producer (new, or forgotten): any sequence is accepted, as Kafka does once a
//!   producer's state is gone.

use std::collections::{HashMap, VecDeque};

use protocol::batch::BatchHeader;

/// Batches remembered per producer for duplicate detection (Kafka: 5, the most in-flight
/// requests an idempotent producer may have).
pub const BATCHES_PER_PRODUCER: usize = 5;
/// Producers remembered per partition; the least recently active is forgotten beyond it.
pub const MAX_PRODUCERS_PER_PARTITION: usize = 10_000;

/// Where an accepted batch went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchPlacement {
    /// First sequence.
    pub first_seq: i32,
    /// Last sequence.
    pub last_seq: i32,
    /// First offset.
    pub first_offset: i64,
    /// Last offset.
    pub last_offset: i64,
}

#[derive(Debug, Clone)]
struct ProducerEntry {
    epoch: i16,
    batches: VecDeque<BatchPlacement>,
    last_active: u64,
    /// The max timestamp of its last batch or marker; −1 when only a snapshot told of it
    /// (DescribeProducers' `LastTimestamp`, kept in memory only: decision 0144).
    last_timestamp: i64,
    /// The coordinator epoch of its last marker; −1 before any (in memory only).
    coordinator_epoch: i32,
}

/// One producer as DescribeProducers shows it (Kafka's `ProducerStateEntry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveProducer {
    /// Producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub epoch: i16,
    /// The last sequence written; −1 when none since its epoch began.
    pub last_sequence: i32,
    /// The max timestamp of its last batch or marker; −1 when unknown.
    pub last_timestamp: i64,
    /// The coordinator epoch of its last marker; −1 when none.
    pub coordinator_epoch: i32,
}

/// Why a batch is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SequenceError {
    /// An older epoch than the partition has seen.
    #[error("producer {producer_id} epoch {epoch} is older than the last seen epoch {current}")]
    InvalidProducerEpoch {
        /// Producer.
        producer_id: i64,
        /// Batch epoch.
        epoch: i16,
        /// Known epoch.
        current: i16,
    },
    /// A transaction marker from a coordinator older than the one that last wrote a marker of
    /// this producer: a deposed coordinator (TRANSACTION_COORDINATOR_FENCED).
    #[error(
        "invalid coordinator epoch for producer {producer_id}: {coordinator_epoch} (zombie), \
         {current} (current)"
    )]
    CoordinatorFenced {
        /// Producer.
        producer_id: i64,
        /// The marker's coordinator epoch.
        coordinator_epoch: i32,
        /// The coordinator epoch of the producer's last marker.
        current: i32,
    },
    /// A gap (or a rewind) in the sequence.
    #[error(
        "out of order sequence number for producer {producer_id}: {first_seq} (incoming), \
         {expected_after} (current end)"
    )]
    OutOfOrder {
        /// Producer.
        producer_id: i64,
        /// Batch first sequence.
        first_seq: i32,
        /// Last accepted sequence (-1 for a new epoch).
        expected_after: i32,
    },
}

/// What to do with a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Append it.
    Append,
    /// Already appended: answer with its original placement.
    Duplicate(BatchPlacement),
}

/// One producer's state as a snapshot holds it (`transactions::encode_snapshot`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerSnapshot {
    /// Producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub epoch: i16,
    /// The first offset of its open transaction.
    pub txn_first_offset: Option<i64>,
    /// Its last batches, oldest first.
    pub batches: Vec<BatchPlacement>,
}

/// Every producer's state in one partition.
#[derive(Debug, Default)]
pub struct ProducerStates {
    producers: HashMap<i64, ProducerEntry>,
    clock: u64,
}

fn in_sequence(last: i32, next: i32) -> bool {
    i64::from(next) == i64::from(last) + 1 || (next == 0 && last == i32::MAX)
}

impl ProducerStates {
    /// The epoch `producer_id` is at here, if it is known.
    pub fn epoch_of(&self, producer_id: i64) -> Option<i16> {
        self.producers.get(&producer_id).map(|e| e.epoch)
    }

    /// Judges an incoming batch (non-idempotent batches always append).
    pub fn check(&self, header: &BatchHeader) -> Result<Verdict, SequenceError> {
        if !header.is_idempotent() {
            return Ok(Verdict::Append);
        }
        let Some(entry) = self.producers.get(&header.producer_id) else {
            return Ok(Verdict::Append);
        };
        if header.producer_epoch < entry.epoch {
            return Err(SequenceError::InvalidProducerEpoch {
                producer_id: header.producer_id,
                epoch: header.producer_epoch,
                current: entry.epoch,
            });
        }
        if header.producer_epoch == entry.epoch {
            if let Some(dup) = entry.batches.iter().find(|b| {
                b.first_seq == header.base_sequence && b.last_seq == header.last_sequence()
            }) {
                return Ok(Verdict::Duplicate(*dup));
            }
            let last = entry.batches.back().map_or(-1, |b| b.last_seq);
            if !in_sequence(last, header.base_sequence) {
                return Err(SequenceError::OutOfOrder {
                    producer_id: header.producer_id,
                    first_seq: header.base_sequence,
                    expected_after: last,
                });
            }
        } else if header.base_sequence != 0 {
            return Err(SequenceError::OutOfOrder {
                producer_id: header.producer_id,
                first_seq: header.base_sequence,
                expected_after: -1,
            });
        }
        Ok(Verdict::Append)
    }

    /// Records an appended batch (call only after [`ProducerStates::check`] said `Append` and
    /// the append succeeded, or while replaying the log at open).
    pub fn record(&mut self, header: &BatchHeader, first_offset: i64, last_offset: i64) {
        if !header.is_idempotent() {
            return;
        }
        self.clock += 1;
        let clock = self.clock;
        if !self.producers.contains_key(&header.producer_id)
            && self.producers.len() >= MAX_PRODUCERS_PER_PARTITION
        {
            self.forget_least_recent();
        }
        let entry = self
            .producers
            .entry(header.producer_id)
            .or_insert_with(|| ProducerEntry {
                epoch: header.producer_epoch,
                batches: VecDeque::with_capacity(BATCHES_PER_PRODUCER),
                last_active: clock,
                last_timestamp: -1,
                coordinator_epoch: -1,
            });
        if header.producer_epoch != entry.epoch {
            entry.epoch = header.producer_epoch;
            entry.batches.clear();
        }
        if entry.batches.len() == BATCHES_PER_PRODUCER {
            entry.batches.pop_front();
        }
        entry.batches.push_back(BatchPlacement {
            first_seq: header.base_sequence,
            last_seq: header.last_sequence(),
            first_offset,
            last_offset,
        });
        entry.last_active = clock;
        entry.last_timestamp = header.max_timestamp;
    }

    /// Judges a transaction marker of `producer_id` at `epoch` from coordinator epoch
    /// `coordinator_epoch`: an epoch older than known is INVALID_PRODUCER_EPOCH (Kafka's
    /// `checkProducerEpoch` for markers); a coordinator epoch older than the one of the
    /// producer's last marker is a deposed coordinator's (Kafka's `checkCoordinatorEpoch`).
    pub fn check_marker(
        &self,
        producer_id: i64,
        epoch: i16,
        coordinator_epoch: i32,
    ) -> Result<(), SequenceError> {
        match self.producers.get(&producer_id) {
            Some(entry) if epoch < entry.epoch => Err(SequenceError::InvalidProducerEpoch {
                producer_id,
                epoch,
                current: entry.epoch,
            }),
            Some(entry) if coordinator_epoch < entry.coordinator_epoch => {
                Err(SequenceError::CoordinatorFenced {
                    producer_id,
                    coordinator_epoch,
                    current: entry.coordinator_epoch,
                })
            }
            _ => Ok(()),
        }
    }

    /// Records an appended marker: the producer's epoch becomes the marker's (a fence bumps
    /// it), its sequences restart if the epoch changed.
    pub fn record_marker(
        &mut self,
        producer_id: i64,
        epoch: i16,
        coordinator_epoch: i32,
        timestamp: i64,
    ) {
        self.clock += 1;
        let clock = self.clock;
        if !self.producers.contains_key(&producer_id)
            && self.producers.len() >= MAX_PRODUCERS_PER_PARTITION
        {
            self.forget_least_recent();
        }
        let entry = self
            .producers
            .entry(producer_id)
            .or_insert_with(|| ProducerEntry {
                epoch,
                batches: VecDeque::with_capacity(BATCHES_PER_PRODUCER),
                last_active: clock,
                last_timestamp: -1,
                coordinator_epoch: -1,
            });
        if entry.epoch != epoch {
            entry.epoch = epoch;
            entry.batches.clear();
        }
        entry.last_active = clock;
        entry.coordinator_epoch = coordinator_epoch;
        entry.last_timestamp = timestamp;
    }

    /// Every producer, least recently active first, with its open transaction from `open`.
    pub fn snapshot(&self, open: impl Fn(i64) -> Option<i64>) -> Vec<ProducerSnapshot> {
        let mut entries: Vec<(&i64, &ProducerEntry)> = self.producers.iter().collect();
        entries.sort_by_key(|(_, e)| e.last_active);
        entries
            .into_iter()
            .map(|(id, e)| ProducerSnapshot {
                producer_id: *id,
                epoch: e.epoch,
                txn_first_offset: open(*id),
                batches: e.batches.iter().copied().collect(),
            })
            .collect()
    }

    /// Restores a snapshot (in its order, so the least recently active stays so).
    pub fn restore(&mut self, producers: &[ProducerSnapshot]) {
        for p in producers {
            if p.epoch < 0 && p.batches.is_empty() {
                // Only an open transaction of a producer the state had forgotten.
                continue;
            }
            self.clock += 1;
            let mut batches: VecDeque<BatchPlacement> = p.batches.iter().copied().collect();
            while batches.len() > BATCHES_PER_PRODUCER {
                batches.pop_front();
            }
            self.producers.insert(
                p.producer_id,
                ProducerEntry {
                    epoch: p.epoch,
                    batches,
                    last_active: self.clock,
                    last_timestamp: -1,
                    coordinator_epoch: -1,
                },
            );
        }
    }

    /// Every producer remembered, by producer id.
    pub fn active(&self) -> Vec<ActiveProducer> {
        let mut out: Vec<ActiveProducer> = self
            .producers
            .iter()
            .map(|(id, e)| ActiveProducer {
                producer_id: *id,
                epoch: e.epoch,
                last_sequence: e.batches.back().map_or(-1, |b| b.last_seq),
                last_timestamp: e.last_timestamp,
                coordinator_epoch: e.coordinator_epoch,
            })
            .collect();
        out.sort_by_key(|p| p.producer_id);
        out
    }

    fn forget_least_recent(&mut self) {
        if let Some(oldest) = self
            .producers
            .iter()
            .min_by_key(|(_, e)| e.last_active)
            .map(|(id, _)| *id)
        {
            self.producers.remove(&oldest);
        }
    }

    /// Producers remembered.
    pub fn len(&self) -> usize {
        self.producers.len()
    }

    /// Whether none is remembered.
    pub fn is_empty(&self) -> bool {
        self.producers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(pid: i64, epoch: i16, first_seq: i32, count: i32) -> BatchHeader {
        BatchHeader {
            base_offset: 0,
            batch_length: 100,
            partition_leader_epoch: -1,
            magic: 2,
            crc: 0,
            attributes: 0,
            last_offset_delta: count - 1,
            base_timestamp: 0,
            max_timestamp: 0,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: first_seq,
            record_count: count,
        }
    }

    fn accept(s: &mut ProducerStates, h: &BatchHeader, at: i64) {
        assert_eq!(s.check(h), Ok(Verdict::Append));
        s.record(h, at, at + i64::from(h.record_count) - 1);
    }

    #[test]
    fn in_order_batches_append_and_a_resend_is_a_duplicate() {
        let mut s = ProducerStates::default();
        accept(&mut s, &header(1, 0, 0, 10), 0);
        accept(&mut s, &header(1, 0, 10, 5), 10);
        assert_eq!(
            s.check(&header(1, 0, 0, 10)),
            Ok(Verdict::Duplicate(BatchPlacement {
                first_seq: 0,
                last_seq: 9,
                first_offset: 0,
                last_offset: 9
            }))
        );
        assert!(matches!(
            s.check(&header(1, 0, 20, 1)),
            Err(SequenceError::OutOfOrder {
                expected_after: 14,
                ..
            })
        ));
        assert!(matches!(
            s.check(&header(1, 0, 3, 2)),
            Err(SequenceError::OutOfOrder { .. })
        ));
    }

    #[test]
    fn epochs_fence_and_restart_sequences() {
        let mut s = ProducerStates::default();
        accept(&mut s, &header(1, 3, 0, 1), 0);
        assert!(matches!(
            s.check(&header(1, 2, 1, 1)),
            Err(SequenceError::InvalidProducerEpoch { current: 3, .. })
        ));
        assert!(matches!(
            s.check(&header(1, 4, 5, 1)),
            Err(SequenceError::OutOfOrder { .. })
        ));
        accept(&mut s, &header(1, 4, 0, 1), 1);
    }

    #[test]
    fn unknown_producers_and_plain_batches_always_append() {
        let mut s = ProducerStates::default();
        accept(&mut s, &header(9, 0, 42, 1), 0);
        let plain = header(-1, -1, -1, 3);
        assert_eq!(s.check(&plain), Ok(Verdict::Append));
        s.record(&plain, 1, 3);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn sequences_wrap_at_i32_max() {
        let mut s = ProducerStates::default();
        accept(&mut s, &header(1, 0, i32::MAX, 1), 0);
        accept(&mut s, &header(1, 0, 0, 1), 1);
    }

    #[test]
    fn only_the_last_five_batches_are_remembered() {
        let mut s = ProducerStates::default();
        for i in 0..6 {
            accept(&mut s, &header(1, 0, i, 1), i64::from(i));
        }
        assert!(matches!(
            s.check(&header(1, 0, 0, 1)),
            Err(SequenceError::OutOfOrder { .. })
        ));
        assert!(matches!(
            s.check(&header(1, 0, 1, 1)),
            Ok(Verdict::Duplicate(_))
        ));
    }
}
