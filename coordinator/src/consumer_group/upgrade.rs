//! Online upgrade (Kafka's `validateOnlineUpgrade`, `convertToConsumerGroup` and
//! `ConsumerGroup.fromClassicGroup`): a ConsumerGroupHeartbeat joining a classic group that
//! has members turns it into a consumer group whose classic members keep what the classic
//! group gave them.
//!
//! ```text
//!   ClassicGroup (generation G, members with subscriptions and assignments)
//!      │ validate: policy allows upgrade, protocol type "consumer", ≤ group.consumer.max.size
//!      ▼
//!   GroupMetadata tombstone, then a ConsumerGroup at group epoch G = assignment epoch G:
//!   each member Stable at epoch G, target = assigned = its classic assignment, its
//!   JoinGroup protocols and session timeout kept (`ConsumerMemberValue::classic`)
//!      │ parked JoinGroup/SyncGroup answered REBALANCE_IN_PROGRESS (they rejoin)
//!      ▼
//!   the joining heartbeat continues on the converted group (its subscription bumps G)
//! ```
//!
//! The conversion is records like any other change: the group's tombstone, then the consumer
//! group's records, so replay and a compacted log rebuild the same group.

use crate::config::Config;
use crate::group::ClassicGroup;
use crate::ids::{GroupId, MemberId, PartitionIndex, TimestampMs, TopicName};
use crate::index::topics::TopicImage;
use crate::outcome::MemberReply;
use crate::record::assignment::Assignment;
use crate::record::consumer_group::{
    ClassicMemberMetadata, ConsumerGroup, ConsumerGroupValue, ConsumerMemberValue,
    CurrentAssignment, MemberState,
};
use crate::record::Record;
use crate::reply::{ErrorKind, JoinResponse, ParkedKind, Reply, SyncResponse};
use crate::subscription;
use crate::timer::{TimerKey, TimerOp};

/// What converting a classic group produces: the consumer group (the base the joining
/// heartbeat continues from), the records that create it, and the effects on the classic
/// members' parked requests and timers.
pub(crate) struct Upgraded {
    pub(crate) group: ConsumerGroup,
    pub(crate) records: Vec<Record>,
    pub(crate) member_replies: Vec<MemberReply>,
    pub(crate) timers: Vec<TimerOp>,
}

fn refused(group_id: &GroupId, why: &str) -> (ErrorKind, String) {
    (
        ErrorKind::GroupIdNotFound,
        format!("Cannot upgrade classic group {group_id} to consumer group because {why}."),
    )
}

/// Kafka's `validateOnlineUpgrade`: GROUP_ID_NOT_FOUND with Kafka's message when the group
/// may not be upgraded.
pub(crate) fn validate(
    config: &Config,
    group_id: &GroupId,
    classic: &ClassicGroup,
) -> Result<(), (ErrorKind, String)> {
    if !config.consumer_migration_policy.upgrade_enabled() {
        return Err(refused(group_id, "online upgrade is disabled"));
    }
    if !classic.uses_consumer_protocol() {
        return Err(refused(
            group_id,
            "the group does not use the consumer embedded protocol",
        ));
    }
    if classic.members.len() > config.max_consumer_members() {
        return Err(refused(
            group_id,
            "the group size exceeds the consumer group maximum size",
        ));
    }
    Ok(())
}

/// Topic-name partitions as topic-id partitions; topics the coordinator does not know are
/// dropped (Kafka's `toTopicPartitionMap` skips them too).
pub(crate) fn by_id(image: &TopicImage, named: &[(String, Vec<i32>)]) -> Assignment {
    Assignment::from_pairs(named.iter().flat_map(|(topic, partitions)| {
        let id = image.get(topic).map(|t| t.id);
        partitions
            .iter()
            .filter_map(move |p| id.map(|id| (id, PartitionIndex(*p))))
    }))
}

/// Converts `classic` (validated) into a consumer group; a member whose subscription or
/// assignment does not decode makes the upgrade fail as Kafka's does (GROUP_ID_NOT_FOUND).
pub(crate) fn convert(
    group_id: &GroupId,
    classic: &ClassicGroup,
    image: &TopicImage,
) -> Result<Upgraded, (ErrorKind, String)> {
    let malformed = || {
        (
            ErrorKind::GroupIdNotFound,
            format!(
                "Cannot upgrade classic group {group_id} to consumer group because the embedded consumer protocol is malformed."
            ),
        )
    };
    let generation = classic.generation.0;
    let mut group = ConsumerGroup::default();
    group.put_epochs(Some(ConsumerGroupValue {
        group_epoch: generation,
        assignment_epoch: generation,
    }));
    for (member_id, m) in &classic.members {
        // The selected protocol's metadata; before any protocol was selected (a first
        // rebalance still joining) the member's preferred one.
        let metadata = classic
            .protocol_name
            .as_deref()
            .and_then(|p| m.metadata_for(p))
            .or_else(|| m.protocols.first().map(|(_, md)| md))
            .ok_or_else(malformed)?;
        let sub = subscription::decode(metadata).map_err(|_| malformed())?;
        let assigned = subscription::decode_assignment(&m.assignment).map_err(|_| malformed())?;
        let assigned = by_id(image, &assigned);
        let mut topics: Vec<TopicName> = sub.topics.iter().cloned().map(TopicName::new).collect();
        topics.sort();
        topics.dedup();
        group.put_member(
            member_id,
            Some(&ConsumerMemberValue {
                instance_id: m.group_instance_id.clone(),
                rack_id: sub.rack.clone(),
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                subscribed_topic_names: topics,
                subscribed_topic_regex: None,
                server_assignor: None,
                rebalance_timeout_ms: m.rebalance_timeout_ms,
                classic: Some(ClassicMemberMetadata {
                    session_timeout_ms: m.session_timeout_ms,
                    protocols: m.protocols.clone(),
                }),
            }),
        );
        group.put_target(member_id, Some(&assigned));
        group.put_current(
            member_id,
            Some(&CurrentAssignment {
                member_epoch: generation,
                previous_member_epoch: generation,
                state: MemberState::Stable,
                assigned,
                pending_revocation: Assignment::new(),
            }),
        );
    }
    let mut records = vec![Record::GroupMetadata {
        group_id: group_id.clone(),
        value: None,
    }];
    records.extend(crate::index::consumer_records(group_id, &group));
    Ok(Upgraded {
        member_replies: parked_answers(group_id, classic),
        timers: timers(group_id, classic),
        group,
        records,
    })
}

/// A rebalance the classic group was in is over: its parked members are told to rejoin.
fn parked_answers(group_id: &GroupId, classic: &ClassicGroup) -> Vec<MemberReply> {
    let mut out = Vec::new();
    for (member_id, m) in &classic.members {
        if m.awaiting_join {
            out.push(MemberReply {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
                kind: ParkedKind::Join,
                reply: Reply::Join(JoinResponse::error(
                    ErrorKind::RebalanceInProgress,
                    member_id.clone(),
                )),
            });
        }
        if m.awaiting_sync {
            out.push(MemberReply {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
                kind: ParkedKind::Sync,
                reply: Reply::Sync(SyncResponse::error(ErrorKind::RebalanceInProgress)),
            });
        }
    }
    out
}

/// The classic group's deadlines end; its members' sessions are re-armed by the caller
/// (`session_timers`) at the command's time.
fn timers(group_id: &GroupId, classic: &ClassicGroup) -> Vec<TimerOp> {
    let mut out = Vec::new();
    if classic.join_deadline.is_some() {
        out.push(TimerOp::Cancel {
            key: TimerKey::JoinPhase {
                group_id: group_id.clone(),
                generation: classic.generation,
            },
        });
    }
    if classic.sync_deadline.is_some() {
        out.push(TimerOp::Cancel {
            key: TimerKey::SyncPhase {
                group_id: group_id.clone(),
                generation: classic.generation,
            },
        });
    }
    for member_id in classic.pending_members.keys() {
        out.push(TimerOp::Cancel {
            key: TimerKey::MemberHeartbeat {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
            },
        });
    }
    out
}

/// Every classic member's session from `now`, at its own session timeout (Kafka schedules
/// them as the conversion is written).
pub(crate) fn session_timers(
    group_id: &GroupId,
    group: &ConsumerGroup,
    now: TimestampMs,
    except: &MemberId,
) -> Vec<TimerOp> {
    group
        .members
        .iter()
        .filter(|(id, _)| *id != except)
        .filter_map(|(id, m)| {
            let classic = m.classic.as_ref()?;
            Some(TimerOp::Set {
                key: TimerKey::MemberHeartbeat {
                    group_id: group_id.clone(),
                    member_id: id.clone(),
                },
                at_ms: now.plus_ms(i64::from(classic.session_timeout_ms.max(0))),
            })
        })
        .collect()
}
