//! Transaction state of one partition, observed from its log as batches are appended (or
//! replayed at open): the open transaction of each producer, the last stable offset, and the
//! aborted transactions read_committed fetches list (Kafka's `ProducerStateManager`
//! `ongoingTxns`/`unreplicatedTxns` and `TransactionIndex`).
//!
//! ```text
//!  transactional batch (attribute bit 4), producer p, no open txn ─> open txn of p at its offset
//!  control batch (bit 5) COMMIT/ABORT of p at offset m ─> closes p's txn [first, m]
//!        ABORT ─> aborted entry (p, first, m, LSO right after) in the index of m's segment
//!  last stable offset (hw) = min(first offset of every txn still open, or closed by a marker
//!                                not yet below hw; hw)
//! ```
//!
//! A closed transaction keeps holding the LSO back until the high watermark passes its marker,
//! so a read_committed consumer never reads records whose marker could still be lost.

use std::collections::{BTreeMap, HashMap};

use protocol::batch::control::ControlType;
use protocol::batch::BatchHeader;

use super::producers::{BatchPlacement, ProducerSnapshot};
use super::txn_index::AbortedTxn;

/// Every transaction fact of one partition.
#[derive(Debug, Default)]
pub struct Transactions {
    /// The open transaction of each producer: its first offset.
    open: HashMap<i64, i64>,
    /// Transactions that hold the LSO back, by first offset: `None` while open, `Some(marker)`
    /// once closed, until the high watermark passes the marker.
    unstable: BTreeMap<i64, Option<i64>>,
    /// Every aborted transaction whose marker is in the log, in marker order.
    aborted: Vec<AbortedTxn>,
}

impl Transactions {
    /// Whether `producer_id` has an open transaction.
    pub fn is_open(&self, producer_id: i64) -> bool {
        self.open.contains_key(&producer_id)
    }

    /// The open transactions, `(producer id, first offset)`.
    pub fn open_transactions(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.open.iter().map(|(p, f)| (*p, *f))
    }

    /// Records an appended batch spanning `[first_offset, last_offset]`; `control` is the
    /// marker type of a control batch. Returns the aborted entry an ABORT marker makes.
    pub fn observe(
        &mut self,
        header: &BatchHeader,
        first_offset: i64,
        last_offset: i64,
        control: Option<ControlType>,
    ) -> Option<AbortedTxn> {
        let pid = header.producer_id;
        if let Some(kind) = control {
            // Kafka: a marker with no open transaction closes an empty one at the marker.
            let first = self.open.remove(&pid).unwrap_or(last_offset);
            self.unstable.insert(first, Some(last_offset));
            if kind != ControlType::Abort {
                return None;
            }
            let last_stable_offset = self
                .unstable
                .iter()
                .find(|(_, marker)| marker.is_none())
                .map_or(last_offset + 1, |(f, _)| *f);
            let entry = AbortedTxn {
                producer_id: pid,
                first_offset: first,
                last_offset,
                last_stable_offset,
            };
            self.aborted.push(entry);
            return Some(entry);
        }
        if header.is_transactional() && !self.open.contains_key(&pid) {
            self.open.insert(pid, first_offset);
            self.unstable.insert(first_offset, None);
        }
        None
    }

    /// The last stable offset under high watermark `hw` (never below `log_start`): what
    /// read_committed consumers may read up to. Forgets closed transactions below `hw`.
    pub fn last_stable_offset(&mut self, hw: i64, log_start: i64) -> i64 {
        while let Some((first, marker)) = self.unstable.first_key_value() {
            match marker {
                Some(m) if *m < hw => {
                    let first = *first;
                    self.unstable.remove(&first);
                }
                _ => return (*first).min(hw).max(log_start),
            }
        }
        hw
    }

    /// The aborted transactions a fetch of `[from, upper)` must list: marker at or after
    /// `from`, first offset before `upper` (Kafka's `collectAbortedTxns`), stopping at the
    /// first entry whose LSO reached `upper` (no later abort can start before it).
    pub fn aborted_overlapping(&self, from: i64, upper: i64) -> Vec<AbortedTxn> {
        let at = self.aborted.partition_point(|e| e.last_offset < from);
        let mut out = Vec::new();
        for e in &self.aborted[at..] {
            if e.first_offset < upper {
                out.push(*e);
            }
            if e.last_stable_offset >= upper {
                break;
            }
        }
        out
    }

    /// The aborted entries whose marker lies in `[base, next)` (one segment's index).
    pub fn aborted_in(&self, base: i64, next: i64) -> Vec<AbortedTxn> {
        let from = self.aborted.partition_point(|e| e.last_offset < base);
        let to = self.aborted.partition_point(|e| e.last_offset < next);
        self.aborted[from..to].to_vec()
    }

    /// Every aborted entry (in marker order).
    pub fn aborted(&self) -> &[AbortedTxn] {
        &self.aborted
    }

    /// Replaces the aborted entries (recovery: read from the index files, then replayed).
    pub fn set_aborted(&mut self, entries: Vec<AbortedTxn>) {
        self.aborted = entries;
    }

    /// Forgets the entries of deleted segments (marker below the new log start).
    pub fn drop_aborted_below(&mut self, start: i64) {
        let n = self.aborted.partition_point(|e| e.last_offset < start);
        self.aborted.drain(..n);
    }

    /// Restores the open transactions of a snapshot.
    pub fn restore_open(&mut self, producers: &[ProducerSnapshot]) {
        for p in producers {
            if let Some(first) = p.txn_first_offset {
                self.open.insert(p.producer_id, first);
                self.unstable.insert(first, None);
            }
        }
    }
}

/// Version of the snapshot payload.
const SNAPSHOT_VERSION: i16 = 1;
/// Most batches a snapshot keeps per producer (the producer state keeps five).
const SNAPSHOT_BATCHES_MAX: usize = 5;

/// Encodes the producer state as of `offset` (the payload of a checked atomic file):
///
/// ```text
///  version i16 (1) | offset i64 | count i32 | count × producer:
///    producer id i64 | epoch i16 | open txn first offset i64 (-1: none) | batches u8 |
///    batches × (first seq i32 | last seq i32 | first offset i64 | last offset i64)
/// ```
pub fn encode_snapshot(offset: i64, producers: &[ProducerSnapshot]) -> Vec<u8> {
    let mut out = Vec::with_capacity(14 + producers.len() * 48);
    out.extend_from_slice(&SNAPSHOT_VERSION.to_be_bytes());
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&(i32::try_from(producers.len()).unwrap_or(i32::MAX)).to_be_bytes());
    for p in producers.iter().take(i32::MAX as usize) {
        out.extend_from_slice(&p.producer_id.to_be_bytes());
        out.extend_from_slice(&p.epoch.to_be_bytes());
        out.extend_from_slice(&p.txn_first_offset.unwrap_or(-1).to_be_bytes());
        let batches = &p.batches[p.batches.len().saturating_sub(SNAPSHOT_BATCHES_MAX)..];
        out.push(u8::try_from(batches.len()).unwrap_or(0));
        for b in batches {
            out.extend_from_slice(&b.first_seq.to_be_bytes());
            out.extend_from_slice(&b.last_seq.to_be_bytes());
            out.extend_from_slice(&b.first_offset.to_be_bytes());
            out.extend_from_slice(&b.last_offset.to_be_bytes());
        }
    }
    out
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let end = self.at.checked_add(N)?;
        let raw: [u8; N] = self.b.get(self.at..end)?.try_into().ok()?;
        self.at = end;
        Some(raw)
    }
    fn i16(&mut self) -> Option<i16> {
        self.take().map(i16::from_be_bytes)
    }
    fn i32(&mut self) -> Option<i32> {
        self.take().map(i32::from_be_bytes)
    }
    fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_be_bytes)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
}

/// Decodes [`encode_snapshot`]'s bytes: `(offset, producers)`, `None` if they do not decode
/// exactly.
pub fn decode_snapshot(bytes: &[u8]) -> Option<(i64, Vec<ProducerSnapshot>)> {
    let mut r = Reader { b: bytes, at: 0 };
    if r.i16()? != SNAPSHOT_VERSION {
        return None;
    }
    let offset = r.i64()?;
    let count = usize::try_from(r.i32()?).ok()?;
    // Each producer takes at least 19 bytes: a count the bytes cannot hold is damage.
    if count > bytes.len() / 19 {
        return None;
    }
    let mut producers = Vec::with_capacity(count);
    for _ in 0..count {
        let producer_id = r.i64()?;
        let epoch = r.i16()?;
        let first = r.i64()?;
        let n = usize::from(r.u8()?);
        if n > SNAPSHOT_BATCHES_MAX {
            return None;
        }
        let mut batches = Vec::with_capacity(n);
        for _ in 0..n {
            batches.push(BatchPlacement {
                first_seq: r.i32()?,
                last_seq: r.i32()?,
                first_offset: r.i64()?,
                last_offset: r.i64()?,
            });
        }
        producers.push(ProducerSnapshot {
            producer_id,
            epoch,
            txn_first_offset: (first >= 0).then_some(first),
            batches,
        });
    }
    (r.at == bytes.len()).then_some((offset, producers))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(pid: i64, attributes: i16) -> BatchHeader {
        BatchHeader {
            base_offset: 0,
            batch_length: 100,
            partition_leader_epoch: -1,
            magic: 2,
            crc: 0,
            attributes,
            last_offset_delta: 0,
            base_timestamp: 0,
            max_timestamp: 0,
            producer_id: pid,
            producer_epoch: 0,
            base_sequence: 0,
            record_count: 1,
        }
    }

    const TXN: i16 = 0x10;
    const CONTROL: i16 = 0x30;

    #[test]
    fn open_transactions_hold_the_lso_until_their_marker_is_below_the_high_watermark() {
        let mut t = Transactions::default();
        t.observe(&header(-1, 0), 0, 4, None);
        assert_eq!(t.last_stable_offset(5, 0), 5);
        t.observe(&header(1, TXN), 5, 9, None);
        t.observe(&header(2, TXN), 10, 10, None);
        t.observe(&header(1, TXN), 11, 12, None);
        assert_eq!(t.last_stable_offset(13, 0), 5);
        assert_eq!(
            t.observe(&header(1, CONTROL), 13, 13, Some(ControlType::Commit)),
            None
        );
        assert_eq!(t.last_stable_offset(13, 0), 5, "the marker is not below hw");
        assert_eq!(t.last_stable_offset(14, 0), 10, "producer 2 still open");
        let abort = t.observe(&header(2, CONTROL), 14, 14, Some(ControlType::Abort));
        assert_eq!(
            abort,
            Some(AbortedTxn {
                producer_id: 2,
                first_offset: 10,
                last_offset: 14,
                last_stable_offset: 15
            })
        );
        assert_eq!(t.last_stable_offset(15, 0), 15);
        assert!(!t.is_open(1) && !t.is_open(2));
    }

    #[test]
    fn an_abort_records_the_lso_of_the_other_open_transactions() {
        let mut t = Transactions::default();
        t.observe(&header(1, TXN), 0, 0, None);
        t.observe(&header(2, TXN), 1, 1, None);
        let e = t
            .observe(&header(2, CONTROL), 2, 2, Some(ControlType::Abort))
            .unwrap();
        assert_eq!((e.first_offset, e.last_stable_offset), (1, 0));
        // A marker without an open transaction closes an empty one at the marker.
        let e = t
            .observe(&header(3, CONTROL), 3, 3, Some(ControlType::Abort))
            .unwrap();
        assert_eq!((e.first_offset, e.last_offset), (3, 3));
    }

    #[test]
    fn fetches_list_the_aborts_that_overlap_their_range() {
        let mut t = Transactions::default();
        let entry = |pid, first, last, lso| AbortedTxn {
            producer_id: pid,
            first_offset: first,
            last_offset: last,
            last_stable_offset: lso,
        };
        t.set_aborted(vec![
            entry(1, 0, 5, 3),
            entry(2, 3, 10, 11),
            entry(3, 20, 30, 31),
            entry(4, 40, 50, 51),
        ]);
        let pids = |v: Vec<AbortedTxn>| v.iter().map(|e| e.producer_id).collect::<Vec<_>>();
        assert_eq!(pids(t.aborted_overlapping(0, 4)), vec![1, 2]);
        assert_eq!(pids(t.aborted_overlapping(6, 21)), vec![2, 3]);
        assert_eq!(pids(t.aborted_overlapping(11, 20)), Vec::<i64>::new());
        assert_eq!(pids(t.aborted_overlapping(31, 100)), vec![4]);
        assert_eq!(pids(t.aborted_in(10, 31)), vec![2, 3]);
        t.drop_aborted_below(11);
        assert_eq!(pids(t.aborted().to_vec()), vec![3, 4]);
    }

    #[test]
    fn snapshots_have_pinned_bytes_and_round_trip() {
        let producers = vec![ProducerSnapshot {
            producer_id: 7,
            epoch: 2,
            txn_first_offset: Some(100),
            batches: vec![BatchPlacement {
                first_seq: 0,
                last_seq: 4,
                first_offset: 100,
                last_offset: 104,
            }],
        }];
        let bytes = encode_snapshot(105, &producers);
        let golden: Vec<u8> = [
            &[0u8, 1][..],         // version 1
            &105i64.to_be_bytes(), // offset
            &1i32.to_be_bytes(),   // one producer
            &7i64.to_be_bytes(),   // producer id
            &2i16.to_be_bytes(),   // epoch
            &100i64.to_be_bytes(), // open transaction
            &[1],                  // one batch
            &0i32.to_be_bytes(),   // first sequence
            &4i32.to_be_bytes(),   // last sequence
            &100i64.to_be_bytes(), // first offset
            &104i64.to_be_bytes(), // last offset
        ]
        .concat();
        assert_eq!(bytes, golden);
        assert_eq!(decode_snapshot(&bytes), Some((105, producers)));
        assert_eq!(decode_snapshot(&bytes[..bytes.len() - 1]), None);
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode_snapshot(&longer), None);
        let mut huge = bytes;
        huge[10..14].copy_from_slice(&i32::MAX.to_be_bytes());
        assert_eq!(decode_snapshot(&huge), None);
    }
}
