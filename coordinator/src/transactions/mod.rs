//! The transaction coordinator (KIP-98, KIP-360, KIP-447), as Kafka's `TransactionCoordinator`
//! decides, without its in-memory pending transitions: a transition is decided and replayed
//! at once on every replica, so "a transition in progress" is exactly a Prepare state whose
//! markers are still being written.
//!
//! ```text
//!   InitProducerId ──▶ Empty ──AddPartitions/AddOffsets──▶ Ongoing ──EndTxn──▶ PrepareCommit
//!        ▲                                                    │  │              PrepareAbort
//!        │                     (InitProducerId, timeout: ─────┘  │                  │
//!        │                      fence + PrepareAbort)            │    markers written (leader)
//!        └──────────── CompleteCommit / CompleteAbort ◀──────────┴──────────────────┘
//! ```
//!
//! Every command checks the producer first: an unknown transactional id or another producer
//! id is INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED; a Prepare state answers
//! CONCURRENT_TRANSACTIONS, which clients retry.

pub(crate) mod admin;

use crate::command::{
    AddOffsetsToTxn, AddPartitionsToTxn, EndTxn, InitTransactionalProducer, TxnMarkersWritten,
};
use crate::config::Config;
use crate::ids::{ProducerEpoch, ProducerId, TimestampMs, TransactionalId};
use crate::index::transactions::TxnIndex;
use crate::outcome::{Outcome, TxnMarkers};
use crate::record::transaction::{TransactionValue, TxnState};
use crate::record::Record;
use crate::reply::{ErrorKind, Reply};
use crate::timer::{TimerKey, TimerOp};
use std::collections::{BTreeMap, BTreeSet};

fn txn_record(id: &TransactionalId, value: TransactionValue) -> Record {
    Record::Transaction {
        transactional_id: id.clone(),
        value: Some(Box::new(value)),
    }
}

fn timeout_timer(id: &TransactionalId) -> TimerKey {
    TimerKey::TransactionTimeout {
        transactional_id: id.clone(),
    }
}

/// The outcome of a transition to `value`, with the timer and markers it implies.
fn transition(
    id: &TransactionalId,
    before: Option<&TransactionValue>,
    value: TransactionValue,
    reply: Reply,
) -> Outcome {
    let mut outcome = Outcome::reply(reply);
    let was_ongoing = before.is_some_and(|b| b.state == TxnState::Ongoing);
    match (value.state, value.start_timestamp) {
        (TxnState::Ongoing, Some(start)) if !was_ongoing => outcome.timers.push(TimerOp::Set {
            key: timeout_timer(id),
            at_ms: start.plus_ms(i64::from(value.timeout_ms)),
        }),
        (TxnState::Ongoing, _) => {}
        _ if was_ongoing => outcome.timers.push(TimerOp::Cancel {
            key: timeout_timer(id),
        }),
        _ => {}
    }
    if let Some(markers) = markers_of(id, &value) {
        outcome.txn_markers.push(markers);
    }
    outcome.records.push(txn_record(id, value));
    outcome
}

/// The markers a prepared transaction owes; `None` in any other state.
pub(crate) fn markers_of(id: &TransactionalId, t: &TransactionValue) -> Option<TxnMarkers> {
    t.state.is_prepared().then(|| TxnMarkers {
        transactional_id: id.clone(),
        producer_id: t.producer_id,
        producer_epoch: t.producer_epoch,
        commit: t.state == TxnState::PrepareCommit,
        partitions: t
            .partitions
            .iter()
            .map(|(topic, ps)| (topic.clone(), ps.iter().copied().collect()))
            .collect(),
    })
}

/// `t` moved to Prepare{Commit,Abort}: the partitions stay until the markers are written.
fn prepared(t: &TransactionValue, commit: bool, now: TimestampMs) -> TransactionValue {
    TransactionValue {
        state: if commit {
            TxnState::PrepareCommit
        } else {
            TxnState::PrepareAbort
        },
        last_update_timestamp: now,
        ..t.clone()
    }
}

/// Kafka's `prepareFenceProducerEpoch` then abort: the epoch is bumped (unless it is the
/// very last one) so that the producer of the open transaction is fenced, and the abort
/// markers carry the new epoch.
fn fenced_abort(t: &TransactionValue, now: TimestampMs) -> TransactionValue {
    let epoch = if t.producer_epoch.0 == i16::MAX {
        t.producer_epoch
    } else {
        t.producer_epoch.bumped()
    };
    TransactionValue {
        producer_epoch: epoch,
        last_producer_epoch: ProducerEpoch::NONE,
        ..prepared(t, false, now)
    }
}

/// The Empty state InitProducerId leaves: `(producer id, epoch)` and the KIP-360 `last` pair.
fn empty(
    c: &InitTransactionalProducer,
    (producer_id, producer_epoch): (ProducerId, ProducerEpoch),
    (last_producer_id, last_producer_epoch): (ProducerId, ProducerEpoch),
) -> TransactionValue {
    TransactionValue {
        producer_id,
        producer_epoch,
        last_producer_id,
        last_producer_epoch,
        timeout_ms: c.timeout_ms,
        state: TxnState::Empty,
        partitions: BTreeMap::new(),
        groups: BTreeSet::new(),
        start_timestamp: None,
        last_update_timestamp: c.now_ms,
    }
}

/// InitProducerId with a transactional id (`handleInitProducerId` with
/// `prepareInitProducerIdTransit`).
pub(crate) fn init_producer(
    config: &Config,
    txns: &TxnIndex,
    c: &InitTransactionalProducer,
) -> Outcome {
    let refuse = |e| Outcome::reply(Reply::InitProducer(Err(e)));
    if c.transactional_id.is_empty() || c.transactional_id.as_str().len() > config.field_max_bytes {
        return refuse(ErrorKind::InvalidRequest);
    }
    if c.timeout_ms <= 0 || c.timeout_ms > config.transaction_max_timeout_ms {
        return refuse(ErrorKind::InvalidTransactionTimeout);
    }
    let id = &c.transactional_id;
    let Some(t) = txns.get(id) else {
        if txns.len() >= config.transactions_max {
            return refuse(ErrorKind::TransactionsMaxReached);
        }
        // A new transactional id: a fresh producer id at epoch 0.
        let value = empty(
            c,
            (c.fresh_producer_id, ProducerEpoch(0)),
            (ProducerId::NONE, ProducerEpoch::NONE),
        );
        let reply = Reply::InitProducer(Ok((value.producer_id, value.producer_epoch)));
        return transition(id, None, value, reply);
    };
    // KIP-360: a producer that names its id and epoch is bumped, not fenced, if it is the
    // current one (or the one just rotated away from, retrying an answer it lost).
    let valid_expected = c.expected.is_none_or(|(pid, epoch)| {
        t.producer_epoch == ProducerEpoch::NONE
            || pid == t.producer_id
            || (pid == t.last_producer_id && epoch.is_exhausted())
    });
    if !valid_expected {
        return refuse(ErrorKind::ProducerFenced);
    }
    match t.state {
        TxnState::PrepareCommit | TxnState::PrepareAbort => {
            refuse(ErrorKind::ConcurrentTransactions)
        }
        TxnState::Ongoing => {
            // Abort the previous instance's transaction under a bumped epoch; the producer
            // retries on CONCURRENT_TRANSACTIONS and gets a second bump once it completes.
            let value = fenced_abort(t, c.now_ms);
            transition(
                id,
                Some(t),
                value,
                Reply::InitProducer(Err(ErrorKind::ConcurrentTransactions)),
            )
        }
        TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort => {
            let idle =
                |id, epoch, last_id, last_epoch| empty(c, (id, epoch), (last_id, last_epoch));
            let rotate = t.producer_epoch.is_exhausted()
                && c.expected
                    .is_none_or(|(_, epoch)| epoch == t.producer_epoch);
            let value = if rotate {
                // Kafka's `prepareProducerIdRotation`: the last epoch is remembered only
                // for a producer that named its epoch (it may retry).
                let last_epoch = if c.expected.is_some() {
                    t.producer_epoch
                } else {
                    ProducerEpoch::NONE
                };
                idle(
                    c.fresh_producer_id,
                    ProducerEpoch(0),
                    t.producer_id,
                    last_epoch,
                )
            } else {
                // Kafka's `prepareIncrementProducerEpoch`.
                match c.expected.map(|(_, epoch)| epoch) {
                    None => idle(
                        t.producer_id,
                        t.producer_epoch.bumped(),
                        t.last_producer_id,
                        ProducerEpoch::NONE,
                    ),
                    Some(e) if t.producer_epoch == ProducerEpoch::NONE || e == t.producer_epoch => {
                        idle(
                            t.producer_id,
                            t.producer_epoch.bumped(),
                            t.last_producer_id,
                            t.producer_epoch,
                        )
                    }
                    // A retry of a bump whose answer was lost: the same answer again.
                    Some(e) if e == t.last_producer_epoch => idle(
                        t.producer_id,
                        t.producer_epoch,
                        t.last_producer_id,
                        t.last_producer_epoch,
                    ),
                    Some(_) => return refuse(ErrorKind::ProducerFenced),
                }
            };
            let reply = Reply::InitProducer(Ok((value.producer_id, value.producer_epoch)));
            transition(id, Some(t), value, reply)
        }
    }
}

/// The transaction with `add` joined in (Kafka's `prepareAddPartitions`), or why not.
fn add_to(
    config: &Config,
    t: &TransactionValue,
    now: TimestampMs,
    add: impl FnOnce(&mut TransactionValue),
) -> Result<Option<TransactionValue>, ErrorKind> {
    if t.state.is_prepared() {
        return Err(ErrorKind::ConcurrentTransactions);
    }
    let mut next = t.clone();
    if t.state != TxnState::Ongoing {
        next.partitions.clear();
        next.groups.clear();
        next.start_timestamp = Some(now);
    }
    add(&mut next);
    if t.state == TxnState::Ongoing && next.partitions == t.partitions && next.groups == t.groups {
        // Already in the transaction: nothing to write.
        return Ok(None);
    }
    if next.partition_count() + next.groups.len() > config.transaction_partitions_max {
        return Err(ErrorKind::TransactionPartitionsMaxReached);
    }
    next.state = TxnState::Ongoing;
    next.last_update_timestamp = now;
    Ok(Some(next))
}

/// AddPartitionsToTxn v0–v3. An unknown partition fails alone with
/// UNKNOWN_TOPIC_OR_PARTITION and every other one with OPERATION_NOT_ATTEMPTED, as
/// KafkaApis answers; any other error applies to every partition.
pub(crate) fn add_partitions(config: &Config, txns: &TxnIndex, c: &AddPartitionsToTxn) -> Outcome {
    let answer = |error: &dyn Fn(bool) -> Option<ErrorKind>| {
        c.topics
            .iter()
            .map(|t| {
                let ps = t
                    .partitions
                    .iter()
                    .map(|p| (p.partition, error(p.partition_known)))
                    .collect();
                (t.name.clone(), ps)
            })
            .collect()
    };
    let any_unknown = c.topics.iter().any(|t| {
        t.name.as_str().len() > config.field_max_bytes
            || t.partitions.iter().any(|p| !p.partition_known)
    });
    if any_unknown {
        return Outcome::reply(Reply::AddPartitionsToTxn(answer(&|known| {
            Some(if known {
                ErrorKind::OperationNotAttempted
            } else {
                ErrorKind::UnknownTopicOrPartition
            })
        })));
    }
    let result = txns.producer(config, &c.producer).and_then(|t| {
        add_to(config, t, c.producer.now_ms, |next| {
            for topic in &c.topics {
                let set = next.partitions.entry(topic.name.clone()).or_default();
                set.extend(topic.partitions.iter().map(|p| p.partition));
            }
            next.partitions.retain(|_, ps| !ps.is_empty());
        })
        .map(|next| (t, next))
    });
    match result {
        Err(e) => Outcome::reply(Reply::AddPartitionsToTxn(answer(&|_| Some(e)))),
        Ok((_, None)) => Outcome::reply(Reply::AddPartitionsToTxn(answer(&|_| None))),
        Ok((t, Some(next))) => transition(
            &c.producer.transactional_id,
            Some(t),
            next,
            Reply::AddPartitionsToTxn(answer(&|_| None)),
        ),
    }
}

/// AddOffsetsToTxn v0–v4: the group joins the transaction (Kafka adds the group's
/// `__consumer_offsets` partition; here the group itself is what the marker completes).
pub(crate) fn add_offsets(config: &Config, txns: &TxnIndex, c: &AddOffsetsToTxn) -> Outcome {
    if c.group_id.as_str().len() > config.group_id_max_bytes {
        return Outcome::reply(Reply::Txn(Err(ErrorKind::InvalidGroupId)));
    }
    let result = txns.producer(config, &c.producer).and_then(|t| {
        add_to(config, t, c.producer.now_ms, |next| {
            next.groups.insert(c.group_id.clone());
        })
        .map(|next| (t, next))
    });
    match result {
        Err(e) => Outcome::reply(Reply::Txn(Err(e))),
        Ok((_, None)) => Outcome::reply(Reply::Txn(Ok(()))),
        Ok((t, Some(next))) => transition(
            &c.producer.transactional_id,
            Some(t),
            next,
            Reply::Txn(Ok(())),
        ),
    }
}

/// EndTxn v0–v3 (`handleEndTransaction`): an Ongoing transaction moves to its Prepare state
/// and is answered at once; the markers follow. A retried EndTxn of a completed transaction
/// with the same result succeeds; any other mismatch is INVALID_TXN_STATE.
pub(crate) fn end(config: &Config, txns: &TxnIndex, c: &EndTxn) -> Outcome {
    let t = match txns.producer(config, &c.producer) {
        Ok(t) => t,
        Err(e) => return Outcome::reply(Reply::Txn(Err(e))),
    };
    let error = match (t.state, c.commit) {
        (TxnState::Ongoing, _) => {
            let next = prepared(t, c.commit, c.producer.now_ms);
            return transition(
                &c.producer.transactional_id,
                Some(t),
                next,
                Reply::Txn(Ok(())),
            );
        }
        (TxnState::CompleteCommit, true) | (TxnState::CompleteAbort, false) => None,
        (TxnState::PrepareCommit, true) | (TxnState::PrepareAbort, false) => {
            Some(ErrorKind::ConcurrentTransactions)
        }
        _ => Some(ErrorKind::InvalidTxnState),
    };
    Outcome::reply(Reply::Txn(error.map_or(Ok(()), Err)))
}

/// The leader wrote the markers of a prepared transaction: it completes, and each of its
/// groups' pending offsets of this producer are applied (commit) or dropped (abort).
pub(crate) fn markers_written(
    txns: &TxnIndex,
    c: &TxnMarkersWritten,
    complete_offsets: impl Fn(&crate::ids::GroupId, ProducerId, bool) -> Vec<Record>,
) -> Outcome {
    let p = &c.producer;
    let Some(t) = txns.get(&p.transactional_id) else {
        return Outcome::reply(Reply::Txn(Err(ErrorKind::InvalidProducerIdMapping)));
    };
    let expected = if c.commit {
        TxnState::PrepareCommit
    } else {
        TxnState::PrepareAbort
    };
    if t.state != expected || t.producer_id != p.producer_id || t.producer_epoch != p.producer_epoch
    {
        // A re-drive of markers already completed, or of another transaction.
        return Outcome::reply(Reply::Txn(Err(ErrorKind::InvalidTxnState)));
    }
    let mut records = Vec::new();
    for group_id in &t.groups {
        records.extend(complete_offsets(group_id, t.producer_id, c.commit));
    }
    let next = TransactionValue {
        state: if c.commit {
            TxnState::CompleteCommit
        } else {
            TxnState::CompleteAbort
        },
        partitions: BTreeMap::new(),
        groups: BTreeSet::new(),
        start_timestamp: None,
        last_update_timestamp: p.now_ms,
        ..t.clone()
    };
    let mut outcome = transition(&p.transactional_id, Some(t), next, Reply::Txn(Ok(())));
    records.append(&mut outcome.records);
    outcome.records = records;
    outcome
}

/// The transaction timer fired: an Ongoing transaction past its timeout is aborted with its
/// producer fenced (`abortTimedOutTransactions`); one not yet due is re-armed.
pub(crate) fn timed_out(txns: &TxnIndex, id: &TransactionalId, now: TimestampMs) -> Outcome {
    let Some(t) = txns.get(id).filter(|t| t.state == TxnState::Ongoing) else {
        return Outcome::reply(Reply::Done);
    };
    let start = t.start_timestamp.unwrap_or(t.last_update_timestamp);
    let due = start.plus_ms(i64::from(t.timeout_ms));
    if now < due {
        let mut outcome = Outcome::reply(Reply::Done);
        outcome.timers.push(TimerOp::Set {
            key: timeout_timer(id),
            at_ms: due,
        });
        return outcome;
    }
    transition(id, Some(t), fenced_abort(t, now), Reply::Done)
}

/// The timers a new leader arms: each Ongoing transaction's timeout, from its recorded start.
pub(crate) fn arm_all(txns: &TxnIndex, timers: &mut Vec<TimerOp>) {
    for (id, t) in txns.iter().filter(|(_, t)| t.state == TxnState::Ongoing) {
        let start = t.start_timestamp.unwrap_or(t.last_update_timestamp);
        timers.push(TimerOp::Set {
            key: timeout_timer(id),
            at_ms: start.plus_ms(i64::from(t.timeout_ms)),
        });
    }
}
