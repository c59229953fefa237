//! TxnOffsetCommit v0–v4 (KIP-98, KIP-447): a group's offsets inside a producer's
//! transaction. They are pending, per (group, producer), until the transaction's marker:
//! applied on commit, dropped on abort (`transactions::markers_written`).
//!
//! Checks, in order: the producer is the transaction's current one (INVALID_PRODUCER_ID_MAPPING,
//! PRODUCER_FENCED) and its Ongoing transaction holds the group (AddOffsetsToTxn first, or
//! INVALID_TXN_STATE) — what Kafka's transaction verification (KIP-890) checks before the
//! group coordinator; then the group, as OffsetCommit's with `isTransactional` (v3+ fences a
//! zombie consumer by generation or member epoch, member id and instance id); then each
//! partition as OffsetCommit checks it.

use crate::command::TxnOffsetCommit;
use crate::config::Config;
use crate::ids::{GroupId, ProducerId};
use crate::index::transactions::TxnIndex;
use crate::index::GroupIndex;
use crate::offsets::commit::{check_partitions, validate, Committer};
use crate::outcome::Outcome;
use crate::record::transaction::{PendingOffset, TxnOffsetsValue, TxnState};
use crate::record::Record;
use crate::reply::{CommitResponse, ErrorKind, Reply};
use std::collections::BTreeMap;

pub(crate) fn decide(
    config: &Config,
    groups: &GroupIndex,
    txns: &TxnIndex,
    c: &TxnOffsetCommit,
) -> Outcome {
    let p = &c.producer;
    let group_check = txns
        .producer(config, p)
        .and_then(|t| {
            if t.state == TxnState::Ongoing && t.groups.contains(&c.group_id) {
                Ok(())
            } else {
                Err(ErrorKind::InvalidTxnState)
            }
        })
        .and_then(|()| {
            validate(
                config,
                groups,
                &Committer {
                    api_version: p.api_version,
                    group_id: &c.group_id,
                    generation: c.generation,
                    member_id: &c.member_id,
                    group_instance_id: c.group_instance_id.as_ref(),
                    transactional: true,
                },
            )
        });
    let mut offsets = None;
    let topics = check_partitions(
        config,
        groups,
        &c.group_id,
        &c.topics,
        group_check.err(),
        p.now_ms,
        None,
        |topic, partition, value| {
            offsets
                .get_or_insert_with(|| {
                    txns.pending(&c.group_id, p.producer_id)
                        .map_or_else(BTreeMap::new, |v| v.offsets.clone())
                })
                .insert(
                    (topic, partition),
                    PendingOffset {
                        value,
                        superseded: false,
                    },
                );
        },
    );
    let mut outcome = Outcome::reply(Reply::Commit(CommitResponse { topics }));
    let Some(offsets) = offsets else {
        return outcome;
    };
    outcome.records.push(Record::TxnOffsets {
        group_id: c.group_id.clone(),
        producer_id: p.producer_id,
        value: Some(Box::new(TxnOffsetsValue {
            producer_epoch: p.producer_epoch,
            offsets,
        })),
    });
    outcome
}

/// The records that complete a producer's pending offsets for a group at its transaction's
/// marker: on commit each offset not superseded by a later plain commit becomes the
/// committed offset; either way the pending record goes.
pub(crate) fn complete(
    txns: &TxnIndex,
    group_id: &GroupId,
    producer_id: ProducerId,
    commit: bool,
) -> Vec<Record> {
    let Some(pending) = txns.pending(group_id, producer_id) else {
        return Vec::new();
    };
    let mut records = Vec::with_capacity(pending.offsets.len() + 1);
    if commit {
        for ((topic, partition), p) in &pending.offsets {
            if !p.superseded {
                records.push(Record::OffsetCommit {
                    group_id: group_id.clone(),
                    topic: topic.clone(),
                    partition: *partition,
                    value: Some(p.value.clone()),
                });
            }
        }
    }
    records.push(Record::TxnOffsets {
        group_id: group_id.clone(),
        producer_id,
        value: None,
    });
    records
}
