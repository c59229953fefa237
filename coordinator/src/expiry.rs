//! KIP-211 offset retention (Kafka's `cleanupGroupMetadata`), run by `ExpireOffsets` or the
//! `OffsetsRetention` timer every `offsets_retention_check_interval_ms`.
//!
//! Which offsets may expire, and counted from when (`ClassicGroup.offsetExpirationCondition`):
//!
//! | group                                        | expires `retention` after        |
//! |----------------------------------------------|----------------------------------|
//! | has a protocol type, Empty                   | the time it became Empty         |
//! | `consumer`, Stable, subscriptions decodable  | the commit, for unsubscribed topics only |
//! | simple (no protocol type)                    | the commit                       |
//! | anything else                                | never                            |
//!
//! An offset committed with an explicit retention (OffsetCommit v2–v4) expires at its own
//! expire timestamp instead. An Empty group left with no offset is deleted. An offset a
//! transaction has an uncompleted commit for never expires (Kafka's
//! `hasPendingTransactionalOffsets`), and the same pass forgets idle transactional ids
//! (`transactional.id.expiration.ms`).

use crate::config::Config;
use crate::group::{ClassicGroup, GroupState};
use crate::ids::{GroupId, TimestampMs};
use crate::index::transactions::TxnIndex;
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::record::offset_commit::OffsetCommitValue;
use crate::record::Record;
use crate::reply::Reply;
use crate::timer::{TimerKey, TimerOp};
use std::borrow::Cow;

/// The instant retention counts from, for one offset of this group; `None`: never expires.
fn base_timestamp(group: &ClassicGroup, value: &OffsetCommitValue) -> Option<TimestampMs> {
    match &group.protocol_type {
        None => Some(value.commit_timestamp),
        Some(_) if group.state == GroupState::Empty => Some(group.state_timestamp),
        Some(_) if group.state == GroupState::Stable && group.uses_consumer_protocol() => {
            Some(value.commit_timestamp)
        }
        Some(_) => None,
    }
}

fn may_expire(group: &ClassicGroup, subscriptions_known: bool) -> bool {
    match &group.protocol_type {
        None => true,
        Some(_) if group.state == GroupState::Empty => true,
        Some(_) => {
            group.state == GroupState::Stable
                && group.uses_consumer_protocol()
                && subscriptions_known
        }
    }
}

pub(crate) fn decide(
    config: &Config,
    groups: &GroupIndex,
    txns: &TxnIndex,
    now: TimestampMs,
) -> Outcome {
    let retention_ms = config.offsets_retention_ms;
    let mut records = Vec::new();
    for (group_id, entry) in groups.table.iter() {
        let gid = GroupId::from(group_id);
        let pending = |topic: &str, partition| txns.has_pending(&gid, topic, partition);
        if let Some(consumer) = groups.store.consumer_group(entry.group) {
            // Kafka's ConsumerGroup: offsets of topics no member uses expire `retention`
            // after their commit; an Empty group left without offsets is deleted.
            let mut all_expired = true;
            for (topic, partition, value) in entry.offsets.iter(&groups.topics) {
                let expired = !crate::group::consumer::is_subscribed_to(consumer, topic)
                    && !pending(topic, partition)
                    && match value.expire_timestamp {
                        Some(expire) => now >= expire,
                        None => now.0.saturating_sub(value.commit_timestamp.0) >= retention_ms,
                    };
                if expired {
                    records.push(Record::OffsetCommit {
                        group_id: group_id.into(),
                        topic: topic.into(),
                        partition,
                        value: None,
                    });
                } else {
                    all_expired = false;
                }
            }
            if all_expired && consumer.members.is_empty() {
                records.extend(crate::group::consumer::tombstones(
                    &group_id.into(),
                    consumer,
                ));
                records.extend(groups.group_config_tombstone(&gid));
            }
            continue;
        }
        let group = groups
            .store
            .group(entry.group)
            .unwrap_or_else(|| Cow::Owned(ClassicGroup::new(TimestampMs(0))));
        let subscribed = group.subscribed_topics();
        if !may_expire(&group, subscribed.is_some()) {
            continue;
        }
        let mut all_expired = true;
        for (topic, partition, value) in entry.offsets.iter(&groups.topics) {
            let expired = !group.is_subscribed_to(topic, subscribed.as_ref())
                && !pending(topic, partition)
                && match value.expire_timestamp {
                    Some(expire) => now >= expire,
                    None => base_timestamp(&group, &value)
                        .is_some_and(|base| now.0.saturating_sub(base.0) >= retention_ms),
                };
            if expired {
                records.push(Record::OffsetCommit {
                    group_id: group_id.into(),
                    topic: topic.into(),
                    partition,
                    value: None,
                });
            } else {
                all_expired = false;
            }
        }
        if all_expired && group.state == GroupState::Empty && entry.group.is_some() {
            records.push(Record::GroupMetadata {
                group_id: group_id.into(),
                value: None,
            });
            records.extend(groups.group_config_tombstone(&gid));
        }
    }
    records.extend(expired_transactional_ids(config, txns, now));
    Outcome {
        records,
        reply: Reply::Done,
        member_replies: Vec::new(),
        timers: vec![TimerOp::Set {
            key: TimerKey::OffsetsRetention,
            at_ms: now.plus_ms(config.offsets_retention_check_interval_ms),
        }],
        assignments: Vec::new(),
        txn_markers: Vec::new(),
    }
}

/// `transactional.id.expiration.ms`: idle transactional ids not updated for that long are
/// forgotten (Kafka's `removeExpiredTransactionalIds`); an open or completing one never is.
fn expired_transactional_ids(config: &Config, txns: &TxnIndex, now: TimestampMs) -> Vec<Record> {
    let expiration = i64::from(config.transactional_id_expiration_ms);
    txns.iter()
        .filter(|(_, t)| {
            t.state.is_idle() && now.0.saturating_sub(t.last_update_timestamp.0) >= expiration
        })
        .map(|(id, _)| Record::Transaction {
            transactional_id: id.clone(),
            value: None,
        })
        .collect()
}
