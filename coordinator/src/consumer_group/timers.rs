//! Consumer-group timers: a member's session (`MemberHeartbeat`, re-armed by each of its
//! heartbeats on the leader), its revocation deadline (`ConsumerRebalance`, armed when it
//! is asked to revoke), and a classic member's join and sync deadlines (`ClassicMemberJoin`,
//! `ClassicMemberSync`). All are soft state, as Kafka's are: the leader's firing is trusted
//! and re-checked against the member (still there; still at that epoch; still classic), and a
//! new leader re-arms them from its own clock (all but the sync deadline, see `TimerKey`).

use super::plan::Plan;
use super::target::maybe_assign;
use super::{fence_member, finish, session_timeout_ms};
use crate::config::Config;
use crate::ids::{GroupId, MemberId, TimestampMs};
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::record::consumer_group::{ConsumerGroup, MemberState};
use crate::reply::Reply;
use crate::timer::{TimerKey, TimerOp};

/// Fences the member the timer names, if the firing is still relevant.
pub(crate) fn decide(config: &Config, groups: &GroupIndex, key: &TimerKey) -> Outcome {
    let (group_id, member_id, epoch) = match key {
        TimerKey::MemberHeartbeat {
            group_id,
            member_id,
        } => (group_id, member_id, None),
        TimerKey::ConsumerRebalance {
            group_id,
            member_id,
            member_epoch,
        }
        | TimerKey::ClassicMemberJoin {
            group_id,
            member_id,
            member_epoch,
        }
        | TimerKey::ClassicMemberSync {
            group_id,
            member_id,
            member_epoch,
        } => (group_id, member_id, Some(*member_epoch)),
        _ => return Outcome::reply(Reply::Done),
    };
    let Some(group) = groups.consumer_group(group_id.as_str()) else {
        return Outcome::reply(Reply::Done);
    };
    if !group.members.contains_key(member_id) {
        return Outcome::reply(Reply::Done);
    }
    if let Some(epoch) = epoch {
        // The member left that epoch (revoked in time; rejoined): nothing to do.
        if group.current_of(member_id).member_epoch != epoch {
            return Outcome::reply(Reply::Done);
        }
    }
    let classic_deadline = matches!(
        key,
        TimerKey::ClassicMemberJoin { .. } | TimerKey::ClassicMemberSync { .. }
    );
    if classic_deadline && !group.uses_classic(member_id) {
        return Outcome::reply(Reply::Done);
    }
    let mut plan = Plan::new(group_id, Some(group));
    let mut timers = Vec::new();
    fence_member(&mut plan, member_id, &mut timers);
    maybe_assign(&mut plan, &groups.topic_image, config);
    finish(plan, Reply::Done, timers)
}

/// The timers a consumer group implies for a leader that takes over: every member's session
/// from `now`, and the revocation deadline of members still revoking.
pub(crate) fn arm_all(
    group_id: &GroupId,
    group: &ConsumerGroup,
    now: TimestampMs,
    config: &Config,
    overrides: Option<&crate::group_config::GroupConfigs>,
    timers: &mut Vec<TimerOp>,
) {
    for (member_id, member) in &group.members {
        timers.push(TimerOp::Set {
            key: TimerKey::MemberHeartbeat {
                group_id: group_id.clone(),
                member_id: MemberId::clone(member_id),
            },
            // A classic member of the group keeps the session it joined with.
            at_ms: now.plus_ms(i64::from(member.classic.as_ref().map_or_else(
                || session_timeout_ms(config, overrides),
                |c| c.session_timeout_ms,
            ))),
        });
        let current = group.current_of(member_id);
        // A classic member that must rejoin is told so by its next heartbeat, which arms
        // its join deadline if absent: armed here, it counts from the takeover instead.
        if member.classic.is_some() && classic_must_rejoin(group, member_id) {
            timers.push(TimerOp::SetIfAbsent {
                key: TimerKey::ClassicMemberJoin {
                    group_id: group_id.clone(),
                    member_id: member_id.clone(),
                    member_epoch: current.member_epoch,
                },
                at_ms: now.plus_ms(i64::from(member.rebalance_timeout_ms.max(0))),
            });
        }
        if current.state == MemberState::UnrevokedPartitions {
            timers.push(TimerOp::Set {
                key: TimerKey::ConsumerRebalance {
                    group_id: group_id.clone(),
                    member_id: member_id.clone(),
                    member_epoch: current.member_epoch,
                },
                at_ms: now.plus_ms(i64::from(member.rebalance_timeout_ms.max(0))),
            });
        }
    }
}

/// Kafka's `waitingOnUnreleasedPartition`: a partition of the member's target is still held
/// by another member.
fn waiting_on_unreleased(group: &ConsumerGroup, member_id: &MemberId) -> bool {
    let current = group.current_of(member_id);
    current.state == MemberState::UnreleasedPartitions
        && group
            .target_of(member_id)
            .iter()
            .filter(|(t, p)| !current.assigned.contains(*t, *p))
            .any(|(t, p)| group.owner_of(t, p).is_some_and(|o| o != member_id))
}

/// Whether a classic member of the group must rejoin to move on (Kafka's
/// `classicGroupHeartbeatToConsumerGroup`): a newer target assignment exists, it has
/// partitions to revoke, or what it waited for is free.
///
/// The target assignment's epoch, not the group's (KAFKA-20272, Kafka 4.3): while the target
/// is computed off the request path the group epoch runs ahead of it, and a member told to
/// rejoin then would rejoin into the same target and be told again once it is installed.
pub(crate) fn classic_must_rejoin(group: &ConsumerGroup, member_id: &MemberId) -> bool {
    let current = group.current_of(member_id);
    current.member_epoch < group.assignment_epoch()
        || current.state == MemberState::UnrevokedPartitions
        || (current.state == MemberState::UnreleasedPartitions
            && !waiting_on_unreleased(group, member_id))
}
