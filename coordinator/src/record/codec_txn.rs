//! The byte encoding of the transaction coordinator's records, in the format of `codec.rs`:
//! u16 key type, u16 value version, big-endian integers, u32-length strings, 0/1-prefixed
//! options, maps and sets strictly increasing. Golden bytes: `coordinator/tests/record_golden.rs`.
//!
//! | key type | key fields          | value (version 0)                                        |
//! |----------|---------------------|----------------------------------------------------------|
//! | 8        | transactional id    | producer id i64, epoch i16, last id i64, last epoch i16, timeout i32, state u8, [topic, [partition i32]], [group], start?, last update i64 |
//! | 9        | group, producer id  | epoch i16, [topic, partition i32, offset value, superseded u8] |
//!
//! An offset value is laid out as in an `OffsetCommit` record's value (without its version).

use super::codec::{DecodeError, Reader, Writer};
use super::offset_commit::OffsetCommitValue;
use super::transaction::{PendingOffset, TransactionValue, TxnOffsetsValue, TxnState};
use super::{Record, RecordKey};
use crate::ids::{
    GroupId, LeaderEpoch, Offset, PartitionIndex, ProducerEpoch, ProducerId, TimestampMs,
    TopicName, TransactionalId,
};
use std::collections::{BTreeMap, BTreeSet};

pub(super) const KEY_TRANSACTION: u16 = 8;
pub(super) const KEY_TXN_OFFSETS: u16 = 9;
const VERSION: u16 = 0;

pub(super) fn encode_key(w: &mut Writer, key: &RecordKey) {
    match key {
        RecordKey::Transaction { transactional_id } => {
            w.u16(KEY_TRANSACTION);
            w.str(transactional_id.as_str());
        }
        RecordKey::TxnOffsets {
            group_id,
            producer_id,
        } => {
            w.u16(KEY_TXN_OFFSETS);
            w.str(group_id.as_str());
            w.i64(producer_id.0);
        }
        // Other keys are written by `codec.rs` and `codec_consumer.rs`.
        _ => {}
    }
}

pub(super) fn decode_key(r: &mut Reader<'_>, tag: u16) -> Result<RecordKey, DecodeError> {
    Ok(match tag {
        KEY_TRANSACTION => RecordKey::Transaction {
            transactional_id: TransactionalId::new(r.string("transactional id")?),
        },
        KEY_TXN_OFFSETS => RecordKey::TxnOffsets {
            group_id: GroupId::new(r.string("group id")?),
            producer_id: ProducerId(r.i64("producer id")?),
        },
        other => return Err(DecodeError::UnknownRecordType(other)),
    })
}

fn encode_offset(w: &mut Writer, v: &OffsetCommitValue) {
    w.i64(v.offset.0);
    w.i32(v.leader_epoch.0);
    w.str(&v.metadata);
    w.i64(v.commit_timestamp.0);
    w.opt_i64(v.expire_timestamp.map(|t| t.0));
}

fn decode_offset(r: &mut Reader<'_>) -> Result<OffsetCommitValue, DecodeError> {
    Ok(OffsetCommitValue {
        offset: Offset(r.i64("offset")?),
        leader_epoch: LeaderEpoch(r.i32("leader epoch")?),
        metadata: r.string("metadata")?,
        commit_timestamp: TimestampMs(r.i64("commit timestamp")?),
        expire_timestamp: r.opt_i64("expire timestamp")?.map(TimestampMs),
    })
}

pub(super) fn encode_value(w: &mut Writer, record: &Record) {
    match record {
        Record::Transaction { value: Some(t), .. } => {
            w.u16(VERSION);
            w.i64(t.producer_id.0);
            w.i16(t.producer_epoch.0);
            w.i64(t.last_producer_id.0);
            w.i16(t.last_producer_epoch.0);
            w.i32(t.timeout_ms);
            w.u8(t.state.tag());
            w.len(t.partitions.len());
            for (topic, partitions) in &t.partitions {
                w.str(topic.as_str());
                w.len(partitions.len());
                for p in partitions {
                    w.i32(p.0);
                }
            }
            w.len(t.groups.len());
            for g in &t.groups {
                w.str(g.as_str());
            }
            w.opt_i64(t.start_timestamp.map(|t| t.0));
            w.i64(t.last_update_timestamp.0);
        }
        Record::TxnOffsets { value: Some(v), .. } => {
            w.u16(VERSION);
            w.i16(v.producer_epoch.0);
            w.len(v.offsets.len());
            for ((topic, partition), pending) in &v.offsets {
                w.str(topic.as_str());
                w.i32(partition.0);
                encode_offset(w, &pending.value);
                w.u8(u8::from(pending.superseded));
            }
        }
        // Tombstones have an empty value; other records are written elsewhere.
        _ => {}
    }
}

fn decode_transaction(r: &mut Reader<'_>) -> Result<TransactionValue, DecodeError> {
    r.version(VERSION, KEY_TRANSACTION)?;
    let producer_id = ProducerId(r.i64("producer id")?);
    let producer_epoch = ProducerEpoch(r.i16("producer epoch")?);
    let last_producer_id = ProducerId(r.i64("last producer id")?);
    let last_producer_epoch = ProducerEpoch(r.i16("last producer epoch")?);
    let timeout_ms = r.i32("transaction timeout")?;
    let state =
        TxnState::from_tag(r.u8("transaction state")?).ok_or(DecodeError::InvalidField {
            field: "transaction state",
        })?;
    // A topic takes at least 4 + 4 bytes, a partition 4.
    let topic_count = r.count(8, "transaction topics")?;
    let mut partitions: BTreeMap<TopicName, BTreeSet<PartitionIndex>> = BTreeMap::new();
    for _ in 0..topic_count {
        let topic = TopicName::new(r.string("transaction topic")?);
        if partitions
            .last_key_value()
            .is_some_and(|(last, _)| *last >= topic)
        {
            return Err(DecodeError::Unordered {
                field: "transaction topics",
            });
        }
        let n = r.count(4, "transaction partitions")?;
        if n == 0 {
            return Err(DecodeError::InvalidField {
                field: "transaction partitions",
            });
        }
        let mut set = BTreeSet::new();
        for _ in 0..n {
            let p = PartitionIndex(r.i32("transaction partition")?);
            if set.last().is_some_and(|last| *last >= p) {
                return Err(DecodeError::Unordered {
                    field: "transaction partitions",
                });
            }
            set.insert(p);
        }
        partitions.insert(topic, set);
    }
    let group_count = r.count(4, "transaction groups")?;
    let mut groups = BTreeSet::new();
    for _ in 0..group_count {
        let g = GroupId::new(r.string("transaction group")?);
        if groups.last().is_some_and(|last| *last >= g) {
            return Err(DecodeError::Unordered {
                field: "transaction groups",
            });
        }
        groups.insert(g);
    }
    Ok(TransactionValue {
        producer_id,
        producer_epoch,
        last_producer_id,
        last_producer_epoch,
        timeout_ms,
        state,
        partitions,
        groups,
        start_timestamp: r.opt_i64("transaction start")?.map(TimestampMs),
        last_update_timestamp: TimestampMs(r.i64("transaction last update")?),
    })
}

fn decode_txn_offsets(r: &mut Reader<'_>) -> Result<TxnOffsetsValue, DecodeError> {
    r.version(VERSION, KEY_TXN_OFFSETS)?;
    let producer_epoch = ProducerEpoch(r.i16("producer epoch")?);
    // topic 4 + partition 4 + offset 8 + epoch 4 + metadata 4 + timestamp 8 + option 1 + flag 1.
    let n = r.count(34, "pending offsets")?;
    let mut offsets = BTreeMap::new();
    for _ in 0..n {
        let topic = TopicName::new(r.string("pending offset topic")?);
        let partition = PartitionIndex(r.i32("pending offset partition")?);
        let value = decode_offset(r)?;
        let superseded = r.bool("pending offset superseded")?;
        let key = (topic, partition);
        if offsets
            .last_key_value()
            .is_some_and(|(last, _)| *last >= key)
        {
            return Err(DecodeError::Unordered {
                field: "pending offsets",
            });
        }
        offsets.insert(key, PendingOffset { value, superseded });
    }
    Ok(TxnOffsetsValue {
        producer_epoch,
        offsets,
    })
}

/// Decodes the value of a transaction key; empty bytes are a tombstone.
pub(super) fn decode_value(key: RecordKey, value: &[u8]) -> Result<Record, DecodeError> {
    let tombstone = value.is_empty();
    let mut r = Reader(value);
    let record = match key {
        RecordKey::Transaction { transactional_id } => Record::Transaction {
            transactional_id,
            value: if tombstone {
                None
            } else {
                Some(Box::new(decode_transaction(&mut r)?))
            },
        },
        RecordKey::TxnOffsets {
            group_id,
            producer_id,
        } => Record::TxnOffsets {
            group_id,
            producer_id,
            value: if tombstone {
                None
            } else {
                Some(Box::new(decode_txn_offsets(&mut r)?))
            },
        },
        _ => return Err(DecodeError::InvalidField { field: "key" }),
    };
    r.finish()?;
    Ok(record)
}
