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
use crate::group::{ClassicGroup, Effects, GroupState, Member, CONSUMER_PROTOCOL_TYPE};
use crate::ids::{Generation, GroupId, MemberId, TimestampMs};
use crate::index::topics::TopicImage;
use crate::membership::rebalance::prepare_rebalance;
use crate::outcome::Outcome;
use crate::record::consumer_group::ConsumerGroup;
use crate::record::Record;
use crate::reply::Reply;
use crate::subscription;
use crate::timer::{TimerKey, TimerOp};
use bytes::Bytes;

/// Kafka's `validateOnlineDowngradeWithFencedMembers` for one leaving member.
fn allowed(config: &Config, group: &ConsumerGroup, leaving: &MemberId) -> bool {
    let remaining = group.members.len().saturating_sub(1);
    group.members.contains_key(leaving)
        && !group.uses_classic(leaving)
        && group.classic_member_count() == remaining
        && remaining > 0
        && config.consumer_migration_policy.downgrade_enabled()
        && remaining <= config.max_members()
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
    let mut classic = ClassicGroup::new(now);
    classic.state = GroupState::Stable;
    classic.generation = Generation(group.group_epoch());
    classic.protocol_type = Some(CONSUMER_PROTOCOL_TYPE.to_owned());
    for (member_id, m) in &group.members {
        if member_id == leaving {
            continue;
        }
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
        member.assignment =
            assignment_bytes(group, member_id, member.metadata_for(&protocol), image);
    }

    let mut fx = Effects::new(group_id, now, config);
    // The consumer group's timers end; each member's classic session starts now.
    for (member_id, m) in &group.members {
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
        if member_id != leaving {
            if let Some(c) = &m.classic {
                fx.set_heartbeat(member_id, c.session_timeout_ms);
            }
        }
    }
    prepare_rebalance(&mut classic, &mut fx);
    let mut records = crate::group::consumer::tombstones(group_id, group);
    records.push(Record::GroupMetadata {
        group_id: group_id.clone(),
        value: Some(Box::new(classic)),
    });
    Some(fx.finish_with_records(records, reply))
}
