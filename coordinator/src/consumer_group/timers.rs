//! Consumer-protocol timers: a member's session (`MemberHeartbeat`, re-armed by each of its
//! heartbeats on the leader) and its revocation deadline (`ConsumerRebalance`, armed when it
//! is asked to revoke). Both are soft state, as Kafka's are: the leader's firing is trusted
//! and re-checked against the member (still there; still at that epoch), and a new leader
//! re-arms them from its own clock.

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
        // The member left that epoch (revoked in time): nothing to do.
        if group.current_of(member_id).member_epoch != epoch {
            return Outcome::reply(Reply::Done);
        }
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
