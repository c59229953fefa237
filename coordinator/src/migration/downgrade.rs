//! Online downgrade (Kafka's `validateOnlineDowngradeWithFencedMembers`,
//! `convertToClassicGroup` and `ClassicGroup.fromConsumerGroup`): when the last
//! consumer-protocol member of a group leaves (ConsumerGroupHeartbeat with epoch −1) or is
//! fenced (session or revocation timeout), and every member left speaks the classic protocol,
//! the group becomes a classic group again and rebalances.
//!
//! ```text
//!   ConsumerGroup at group epoch E, the leaving member and classic members
//!      │ validate: others all classic, at least one, policy allows downgrade, ≤ group.max.size
//!      ▼
//!   tombstones of every consumer record, then a GroupMetadata record: generation E, protocol
//!   type "consumer", the protocol the members vote for, each member's target assignment
//!   encoded at its subscription's version; then PreparingRebalance (the members' heartbeats
//!   answer REBALANCE_IN_PROGRESS, they rejoin, the classic leader assigns)
//! ```

use crate::config::Config;
use crate::consumer_group::heartbeat::cancel_classic_deadlines;
use crate::group::{ClassicGroup, Effects, GroupState, Member, CONSUMER_PROTOCOL_TYPE};
use crate::ids::{Generation, GroupId, MemberId, TimestampMs};
use crate::index::topics::TopicImage;
use crate::membership::rebalance::prepare_rebalance;
use crate::outcome::Outcome;
use crate::record::consumer_group::{ConsumerGroup, ConsumerMemberValue};
use crate::record::Record;
use crate::reply::Reply;
use crate::subscription;
use crate::timer::{TimerKey, TimerOp};
use bytes::Bytes;

/// Kafka's `validateOnlineDowngradeWithFencedMembers` for one leaving (or fenced) member:
/// every other member speaks the classic protocol, at least one remains, the policy allows a
/// downgrade, and they fit in `group.max.size`.
fn allowed(config: &Config, group: &ConsumerGroup, leaving: &MemberId) -> bool {
    let remaining = group.members.len().saturating_sub(1);
    let leaving_classic = usize::from(group.uses_classic(leaving));
    group.members.contains_key(leaving)
        && group.classic_member_count() - leaving_classic == remaining
        && remaining > 0
        && config.consumer_migration_policy.downgrade_enabled()
        && remaining <= config.max_members()
}

/// Kafka's `validateOnlineDowngradeWithReplacedMember`: the static member a classic JoinGroup
/// replaces is the only one not speaking the classic protocol, the policy allows a downgrade,
/// and the group fits in `group.max.size`.
pub(crate) fn allowed_replacing(
    config: &Config,
    group: &ConsumerGroup,
    replaced: &MemberId,
) -> bool {
    group.members.contains_key(replaced)
        && !group.uses_classic(replaced)
        && group.classic_member_count() + 1 == group.members.len()
        && config.consumer_migration_policy.downgrade_enabled()
        && group.members.len() <= config.max_members()
}

/// The member's target as its ConsumerProtocol version encodes an assignment.
fn assignment_bytes(
    group: &ConsumerGroup,
    member_id: &MemberId,
    metadata: Option<&Bytes>,
    image: &TopicImage,
) -> Bytes {
    let version = metadata
        .and_then(|md| subscription::version_of(md))
        .unwrap_or(0);
    let named: Vec<(String, Vec<i32>)> = group
        .target_of(member_id)
        .topics()
        .filter_map(|(id, partitions)| {
            Some((
                image.name_of(id)?.as_str().to_owned(),
                partitions.iter().map(|p| p.0).collect(),
            ))
        })
        .collect();
    let refs: Vec<(&str, &[i32])> = named
        .iter()
        .map(|(n, p)| (n.as_str(), p.as_slice()))
        .collect();
    Bytes::from(subscription::encode_assignment(version, &refs))
}

/// If `leaving` leaving makes `group` all classic and the downgrade is allowed, the outcome
/// that converts it (with `reply` as the answer), else `None`.
pub(crate) fn after_leave(
    config: &Config,
    group_id: &GroupId,
    group: &ConsumerGroup,
    image: &TopicImage,
    leaving: &MemberId,
    now: TimestampMs,
    reply: Reply,
) -> Option<Outcome> {
    if !allowed(config, group, leaving) {
        return None;
    }
    Some(convert(
        Conversion {
            config,
            group_id,
            group,
            image,
            now,
        },
        leaving,
        None,
        true,
        reply,
    ))
}

/// A static classic member joining in place of the last consumer-protocol member `replaced`
/// (checked with `allowed_replacing`): the group becomes classic with `joining` in its place,
/// taking its target. It rebalances only when the join changed the subscriptions (Kafka's
/// KAFKA-20273: "with stale assignment"); otherwise it is Stable at the group epoch and every
/// member keeps its target as its assignment.
pub(crate) fn after_replace(
    conversion: Conversion<'_>,
    replaced: &MemberId,
    joining: (&MemberId, &ConsumerMemberValue),
    rebalance: bool,
    reply: Reply,
) -> Outcome {
    convert(conversion, replaced, Some(joining), rebalance, reply)
}

/// What every conversion reads.
pub(crate) struct Conversion<'a> {
    pub config: &'a Config,
    pub group_id: &'a GroupId,
    pub group: &'a ConsumerGroup,
    pub image: &'a TopicImage,
    pub now: TimestampMs,
}

/// Kafka's `convertToClassicGroup` and `ClassicGroup.fromConsumerGroup`: every member but
/// `leaving`, plus `joining` in its place (with its target) when a static member replaces it.
fn convert(
    conversion: Conversion<'_>,
    leaving: &MemberId,
    joining: Option<(&MemberId, &ConsumerMemberValue)>,
    rebalance: bool,
    reply: Reply,
) -> Outcome {
    let Conversion {
        config,
        group_id,
        group,
        image,
        now,
    } = conversion;
    let mut classic = ClassicGroup::new(now);
    classic.state = GroupState::Stable;
    classic.generation = Generation(group.group_epoch());
    classic.protocol_type = Some(CONSUMER_PROTOCOL_TYPE.to_owned());
    let kept = group
        .members
        .iter()
        .filter(|(member_id, _)| *member_id != leaving);
    for (member_id, m) in kept.chain(joining) {
        let c = m.classic.clone().unwrap_or_default();
        classic.members.insert(
            member_id.clone(),
            Member {
                group_instance_id: m.instance_id.clone(),
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                rebalance_timeout_ms: m.rebalance_timeout_ms,
                session_timeout_ms: c.session_timeout_ms,
                protocol_type: CONSUMER_PROTOCOL_TYPE.to_owned(),
                protocols: c.protocols,
                assignment: Bytes::new(),
                awaiting_join: false,
                awaiting_sync: false,
                is_new: false,
            },
        );
    }
    classic.leader = classic.members.keys().next().cloned();
    classic.protocol_name = classic.select_protocol();
    let protocol = classic.protocol_name.clone().unwrap_or_default();
    for (member_id, member) in classic.members.iter_mut() {
        // The joining member takes the target of the one it replaces.
        let owner = match joining {
            Some((joining_id, _)) if joining_id == member_id => leaving,
            _ => member_id,
        };
        member.assignment = assignment_bytes(group, owner, member.metadata_for(&protocol), image);
    }

    let mut fx = Effects::new(group_id, now, config);
    // The consumer group's timers end; each member's classic session starts now.
    for member_id in group.members.keys() {
        let current = group.current_of(member_id);
        fx.timer(TimerOp::Cancel {
            key: TimerKey::MemberHeartbeat {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
            },
        });
        if current.state == crate::record::consumer_group::MemberState::UnrevokedPartitions {
            fx.timer(TimerOp::Cancel {
                key: TimerKey::ConsumerRebalance {
                    group_id: group_id.clone(),
                    member_id: member_id.clone(),
                    member_epoch: current.member_epoch,
                },
            });
        }
        let mut classic_deadlines = Vec::new();
        cancel_classic_deadlines(
            group_id,
            member_id,
            current.member_epoch,
            &mut classic_deadlines,
        );
        for op in classic_deadlines {
            fx.timer(op);
        }
    }
    for (member_id, member) in &classic.members {
        fx.set_heartbeat(member_id, member.session_timeout_ms);
    }
    if rebalance {
        prepare_rebalance(&mut classic, &mut fx);
    }
    let mut records = crate::group::consumer::tombstones(group_id, group);
    records.push(Record::GroupMetadata {
        group_id: group_id.clone(),
        value: Some(Box::new(classic)),
    });
    fx.finish_with_records(records, reply)
}
