//! Timers that fire: join phase (initial delay, rebalance timeout), sync phase, member
//! heartbeats. A firing is re-checked against state: the deadline recorded in the group (join
//! and sync), the generation in the key, the member still being there. Anything stale is a
//! no-op, which is what makes it safe for a leader to fire a timer that a command still in
//! the Raft log has moved.

use super::rebalance::{
    complete_join, maybe_prepare_rebalance_or_complete_join, prepare_rebalance,
    remove_current_member, remove_member_raw,
};
use crate::config::Config;
use crate::group::Effects;
use crate::group::{ClassicGroup, GroupState, InitialDelay};
use crate::ids::{GroupId, TimestampMs};
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::reply::Reply;
use crate::timer::{TimerKey, TimerOp};

pub(crate) fn decide(
    config: &Config,
    groups: &GroupIndex,
    key: &TimerKey,
    now: TimestampMs,
) -> Outcome {
    let Some(group_id) = key.group_id() else {
        return Outcome::reply(Reply::Done);
    };
    let Some(start) = groups.group(group_id.as_str()) else {
        return Outcome::reply(Reply::Done);
    };
    let mut group = ClassicGroup::clone(&start);
    let mut fx = Effects::new(group_id, now, config);
    match key {
        TimerKey::JoinPhase { generation, .. } => {
            let current =
                group.state == GroupState::PreparingRebalance && group.generation == *generation;
            match group.join_deadline {
                Some(deadline) if current && deadline <= now => {
                    join_phase_expired(&mut group, &mut fx)
                }
                // Fired before the recorded deadline (moved by a command still in flight, or a
                // leader clock behind its timer): arm it again so the phase cannot stall.
                Some(deadline) if current => fx.timer(TimerOp::Set {
                    key: key.clone(),
                    at_ms: deadline,
                }),
                _ => {}
            }
        }
        TimerKey::SyncPhase { generation, .. } => {
            let syncing = matches!(
                group.state,
                GroupState::CompletingRebalance | GroupState::Stable
            );
            let current = syncing && group.generation == *generation;
            match group.sync_deadline {
                Some(deadline) if current && deadline <= now && !group.pending_sync.is_empty() => {
                    let late: Vec<_> = group.pending_sync.iter().cloned().collect();
                    for member_id in &late {
                        remove_member_raw(&mut group, member_id);
                        fx.cancel_heartbeat(member_id);
                    }
                    prepare_rebalance(&mut group, &mut fx);
                }
                Some(deadline) if current && deadline > now => fx.timer(TimerOp::Set {
                    key: key.clone(),
                    at_ms: deadline,
                }),
                _ => {}
            }
        }
        TimerKey::MemberHeartbeat { member_id, .. } => {
            if group.pending_members.remove(member_id).is_some() {
                if group.state == GroupState::PreparingRebalance && group.all_members_joined() {
                    complete_join(&mut group, &mut fx);
                }
            } else if group
                .members
                .get(member_id)
                .is_some_and(|m| !m.has_satisfied_heartbeat())
            {
                remove_current_member(&mut group, &mut fx, member_id);
                match group.state {
                    GroupState::Stable | GroupState::CompletingRebalance => {
                        maybe_prepare_rebalance_or_complete_join(&mut group, &mut fx)
                    }
                    GroupState::PreparingRebalance if group.all_members_joined() => {
                        complete_join(&mut group, &mut fx)
                    }
                    _ => {}
                }
            }
        }
        TimerKey::OffsetsRetention
        | TimerKey::ConsumerRebalance { .. }
        | TimerKey::ClassicMemberJoin { .. }
        | TimerKey::ClassicMemberSync { .. }
        | TimerKey::TransactionTimeout { .. } => {}
    }
    fx.finish(&start, group, Reply::Done)
}

/// Kafka's `tryCompleteInitialRebalanceElseSchedule` for the initial delay, else the
/// rebalance timeout: complete the join phase with whoever is back.
fn join_phase_expired(group: &mut ClassicGroup, fx: &mut Effects<'_>) {
    match group.initial_delay {
        Some(delay) if group.new_member_added && delay.remaining_ms != 0 => {
            group.new_member_added = false;
            let next_delay = fx.config.initial_rebalance_delay_ms.min(delay.remaining_ms);
            let next_remaining = delay.remaining_ms.saturating_sub(delay.delay_ms).max(0);
            group.initial_delay = Some(InitialDelay {
                delay_ms: next_delay,
                remaining_ms: next_remaining,
            });
            let at_ms = fx.now.plus_ms(i64::from(next_delay));
            group.join_deadline = Some(at_ms);
            fx.timer(TimerOp::Set {
                key: TimerKey::JoinPhase {
                    group_id: fx.group_id.clone(),
                    generation: group.generation,
                },
                at_ms,
            });
        }
        _ => complete_join(group, fx),
    }
}

/// The timers a group's state implies, for a new leader.
pub(crate) fn arm_all(
    group_id: &GroupId,
    group: &ClassicGroup,
    now: TimestampMs,
    config: &Config,
    timers: &mut Vec<TimerOp>,
) {
    if let Some(at_ms) = group.join_deadline {
        timers.push(TimerOp::Set {
            key: TimerKey::JoinPhase {
                group_id: group_id.clone(),
                generation: group.generation,
            },
            at_ms,
        });
    }
    if let Some(at_ms) = group.sync_deadline {
        timers.push(TimerOp::Set {
            key: TimerKey::SyncPhase {
                group_id: group_id.clone(),
                generation: group.generation,
            },
            at_ms,
        });
    }
    for (member_id, member) in &group.members {
        let timeout_ms = if member.is_new {
            config.new_member_join_timeout_ms
        } else {
            member.session_timeout_ms
        };
        timers.push(TimerOp::Set {
            key: TimerKey::MemberHeartbeat {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
            },
            at_ms: now.plus_ms(i64::from(timeout_ms)),
        });
    }
    for (member_id, pending) in &group.pending_members {
        timers.push(TimerOp::Set {
            key: TimerKey::MemberHeartbeat {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
            },
            at_ms: now.plus_ms(i64::from(pending.session_timeout_ms)),
        });
    }
}
