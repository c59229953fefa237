//! Key-based compaction over records: keep the latest record per key, in log order; drop
//! tombstones once they are older than the retention window.
//!
//! The invariant, checked by property tests: `replay(compact(log)) == replay(log)`. It holds
//! because a dropped record is either superseded by a later record of its key, or a tombstone
//! that is its key's latest record (replay ends with the key absent either way).

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;

use crate::types::{Offset, TimestampMs};

/// One keyed record: `value: None` is a tombstone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedRecord {
    /// Position in the log (log order is offset order).
    pub offset: Offset,
    /// When the record was written, by the caller's clock: tombstone expiry uses it.
    pub timestamp_ms: TimestampMs,
    /// The compaction key.
    pub key: Bytes,
    /// The value; `None` deletes the key.
    pub value: Option<Bytes>,
}

/// When a tombstone has served its purpose: readers that may have seen the deleted value had
/// `tombstone_retention_ms` to see the tombstone too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TombstonePolicy {
    /// The caller's clock; the crate reads none.
    pub now_ms: TimestampMs,
    /// A tombstone is dropped once `now_ms - timestamp > tombstone_retention_ms`.
    pub tombstone_retention_ms: i64,
}

impl TombstonePolicy {
    /// Whether a tombstone written at `timestamp` may be dropped.
    pub fn expired(&self, timestamp: TimestampMs) -> bool {
        self.now_ms.0.saturating_sub(timestamp.0) > self.tombstone_retention_ms
    }
}

/// Keeps the latest record per key (a later offset wins), in their original order, and drops
/// expired tombstones.
pub fn compact_records(records: &[KeyedRecord], policy: TombstonePolicy) -> Vec<KeyedRecord> {
    let mut latest: HashMap<&Bytes, usize> = HashMap::with_capacity(records.len());
    for (i, record) in records.iter().enumerate() {
        latest.insert(&record.key, i);
    }
    records
        .iter()
        .enumerate()
        .filter(|(i, record)| {
            latest.get(&record.key) == Some(i)
                && (record.value.is_some() || !policy.expired(record.timestamp_ms))
        })
        .map(|(_, record)| record.clone())
        .collect()
}

/// Applies records in order: the state a consumer of the log ends up with.
pub fn replay<'a>(records: impl IntoIterator<Item = &'a KeyedRecord>) -> BTreeMap<Bytes, Bytes> {
    let mut state = BTreeMap::new();
    for record in records {
        match &record.value {
            Some(value) => {
                state.insert(record.key.clone(), value.clone());
            }
            None => {
                state.remove(&record.key);
            }
        }
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn record(offset: u64, ts: i64, key: &str, value: Option<&str>) -> KeyedRecord {
        KeyedRecord {
            offset: Offset(offset),
            timestamp_ms: TimestampMs(ts),
            key: Bytes::copy_from_slice(key.as_bytes()),
            value: value.map(|v| Bytes::copy_from_slice(v.as_bytes())),
        }
    }

    #[test]
    fn keeps_latest_per_key_in_log_order_and_expires_old_tombstones() {
        let log = vec![
            record(0, 0, "a", Some("1")),
            record(1, 0, "b", Some("1")),
            record(2, 10, "a", Some("2")),
            record(3, 20, "b", None),
            record(4, 95, "c", None),
            record(5, 30, "d", Some("1")),
        ];
        let policy = TombstonePolicy {
            now_ms: TimestampMs(100),
            tombstone_retention_ms: 50,
        };
        let offsets: Vec<u64> = compact_records(&log, policy)
            .iter()
            .map(|r| r.offset.0)
            .collect();
        // b's tombstone (age 80) is dropped, c's (age 5) is kept.
        assert_eq!(offsets, vec![2, 4, 5]);
    }

    fn arb_log() -> impl Strategy<Value = (Vec<KeyedRecord>, i64, i64)> {
        let record = (0u8..6, proptest::option::weighted(0.7, 0u8..4), 0i64..1000);
        (
            proptest::collection::vec(record, 0..60),
            0i64..2000,
            0i64..1000,
        )
            .prop_map(|(raw, now, retention)| {
                let records = raw
                    .into_iter()
                    .enumerate()
                    .map(|(i, (k, v, ts))| KeyedRecord {
                        offset: Offset(i as u64),
                        timestamp_ms: TimestampMs(ts),
                        key: Bytes::from(vec![k]),
                        value: v.map(|v| Bytes::from(vec![v])),
                    })
                    .collect();
                (records, now, retention)
            })
    }

    proptest! {
        #[test]
        fn replay_of_compacted_equals_replay_of_log((log, now, retention) in arb_log()) {
            let policy = TombstonePolicy { now_ms: TimestampMs(now), tombstone_retention_ms: retention };
            let compacted = compact_records(&log, policy);
            prop_assert_eq!(replay(&compacted), replay(&log));
            // Idempotent, one key at most once, and a subsequence of the log.
            prop_assert_eq!(&compact_records(&compacted, policy), &compacted);
            let mut keys: Vec<&Bytes> = compacted.iter().map(|r| &r.key).collect();
            keys.sort();
            keys.dedup();
            prop_assert_eq!(keys.len(), compacted.len());
            prop_assert!(compacted.windows(2).all(|w| w[0].offset < w[1].offset));
        }
    }
}
