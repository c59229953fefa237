//! The rebalance machinery shared by every membership handler: starting a rebalance, completing
//! the join phase, propagating assignments, removing members. Each function mirrors the Kafka
//! method of the same name in `GroupMetadataManager` / `ClassicGroup`.

use crate::group::Effects;
use crate::group::{ClassicGroup, GroupState, InitialDelay, Member};
use crate::ids::{Generation, MemberId};
use crate::reply::{ErrorKind, JoinResponse, JoinResponseMember, SyncResponse};
use crate::timer::{TimerKey, TimerOp};
use bytes::Bytes;

/// The shortest wait before retrying a join phase in which no member rejoined.
const JOIN_RETRY_MIN_MS: i32 = 1_000;

pub(crate) fn transition(group: &mut ClassicGroup, fx: &Effects<'_>, to: GroupState) {
    group.state = to;
    group.state_timestamp = fx.now;
}

fn join_key(fx: &Effects<'_>, generation: Generation) -> TimerKey {
    TimerKey::JoinPhase {
        group_id: fx.group_id.clone(),
        generation,
    }
}

fn sync_key(fx: &Effects<'_>, generation: Generation) -> TimerKey {
    TimerKey::SyncPhase {
        group_id: fx.group_id.clone(),
        generation,
    }
}

fn schedule_join(group: &mut ClassicGroup, fx: &mut Effects<'_>, delay_ms: i32) {
    let at_ms = fx.now.plus_ms(i64::from(delay_ms));
    group.join_deadline = Some(at_ms);
    let key = join_key(fx, group.generation);
    fx.timer(TimerOp::Set { key, at_ms });
}

/// Removes a member from every structure of the group; the leadership passes to the first
/// remaining member, as Kafka's `ClassicGroup.remove` does.
pub(crate) fn remove_member_raw(group: &mut ClassicGroup, member_id: &MemberId) -> Option<Member> {
    let removed = group.members.remove(member_id);
    if group.is_leader(member_id) {
        group.leader = group.members.keys().next().cloned();
    }
    group.pending_members.remove(member_id);
    group.pending_sync.remove(member_id);
    removed
}

/// Adds a member that joined (a new dynamic member, a pending member rejoining with its id,
/// a new static member) and starts or advances the rebalance.
pub(crate) fn add_member_then_rebalance(
    group: &mut ClassicGroup,
    fx: &mut Effects<'_>,
    member_id: MemberId,
    member: Member,
) {
    if group.state == GroupState::PreparingRebalance && group.initial_delay.is_some() {
        group.new_member_added = true;
    }
    if group.members.is_empty() {
        group.protocol_type = Some(member.protocol_type.clone());
    }
    if group.leader.is_none() {
        group.leader = Some(member_id.clone());
    }
    group.pending_members.remove(&member_id);
    group.members.insert(member_id.clone(), member);
    // A new member cannot heartbeat while its JoinGroup is parked, and a client that gave up
    // may retry with a fresh request: the new-member timeout drops such leftovers.
    fx.set_heartbeat(&member_id, fx.config.new_member_join_timeout_ms);
    maybe_prepare_rebalance_or_complete_join(group, fx);
}

/// A rejoining member's new protocols and timeouts; it now waits in the join phase.
pub(crate) fn update_member(
    group: &mut ClassicGroup,
    member_id: &MemberId,
    protocols: Vec<(String, Bytes)>,
    rebalance_timeout_ms: i32,
    session_timeout_ms: i32,
) {
    if let Some(member) = group.members.get_mut(member_id) {
        member.protocols = protocols;
        member.rebalance_timeout_ms = rebalance_timeout_ms;
        member.session_timeout_ms = session_timeout_ms;
        member.awaiting_join = true;
    }
}

/// Empty, Stable and CompletingRebalance groups start a rebalance; a group already preparing
/// one may be able to complete its join phase.
pub(crate) fn maybe_prepare_rebalance_or_complete_join(
    group: &mut ClassicGroup,
    fx: &mut Effects<'_>,
) {
    match group.state {
        GroupState::Empty | GroupState::Stable | GroupState::CompletingRebalance => {
            prepare_rebalance(group, fx)
        }
        GroupState::PreparingRebalance | GroupState::Dead => maybe_complete_join_phase(group, fx),
    }
}

pub(crate) fn prepare_rebalance(group: &mut ClassicGroup, fx: &mut Effects<'_>) {
    if group.state == GroupState::CompletingRebalance {
        reset_and_propagate_assignment_with_error(group, fx, ErrorKind::RebalanceInProgress);
    }
    remove_sync_expiration(group, fx);

    let initial = group.state == GroupState::Empty;
    if initial {
        let delay_ms = fx.config.initial_rebalance_delay_ms;
        let remaining_ms = group.rebalance_timeout_ms().saturating_sub(delay_ms).max(0);
        group.initial_delay = Some(InitialDelay {
            delay_ms,
            remaining_ms,
        });
        group.new_member_added = false;
        schedule_join(group, fx, delay_ms);
    }
    transition(group, fx, GroupState::PreparingRebalance);
    if !initial {
        if group.all_members_joined() {
            complete_join(group, fx);
        } else {
            let timeout = group.rebalance_timeout_ms();
            schedule_join(group, fx, timeout);
        }
    }
}

/// Completes the join phase when every member is back, except during the initial delay,
/// which always runs to its end.
pub(crate) fn maybe_complete_join_phase(group: &mut ClassicGroup, fx: &mut Effects<'_>) {
    if group.state != GroupState::PreparingRebalance
        || group.initial_delay.is_some()
        || !group.all_members_joined()
    {
        return;
    }
    complete_join(group, fx);
}

/// The join phase ends: dynamic members that did not rejoin are dropped, the generation is
/// bumped, a protocol is selected, and every parked JoinGroup is answered (the leader's with
/// the members' metadata).
pub(crate) fn complete_join(group: &mut ClassicGroup, fx: &mut Effects<'_>) {
    let key = join_key(fx, group.generation);
    fx.timer(TimerOp::Cancel { key });
    group.join_deadline = None;
    group.initial_delay = None;
    group.new_member_added = false;

    let not_rejoined: Vec<MemberId> = group
        .members
        .iter()
        .filter(|(_, m)| !m.awaiting_join && m.group_instance_id.is_none())
        .map(|(id, _)| id.clone())
        .collect();
    for member_id in &not_rejoined {
        remove_member_raw(group, member_id);
        fx.cancel_heartbeat(member_id);
    }

    if !maybe_elect_new_joined_leader(group) && !group.members.is_empty() {
        // Only static members that did not rejoin are left: wait another rebalance timeout
        // for them, until their sessions expire. Never less than a second, or a hostile
        // rebalance timeout of 0 would turn this into a busy loop of timer commands.
        let timeout = group.rebalance_timeout_ms().max(JOIN_RETRY_MIN_MS);
        schedule_join(group, fx, timeout);
        return;
    }

    init_next_generation(group, fx);
    if group.state == GroupState::Empty {
        return;
    }

    let leader_members: Vec<JoinResponseMember> = current_members(group);
    let ids: Vec<MemberId> = group.members.keys().cloned().collect();
    for member_id in &ids {
        let is_leader = group.is_leader(member_id);
        let Some(member) = group.members.get_mut(member_id) else {
            continue;
        };
        if member.awaiting_join {
            member.awaiting_join = false;
            let response = JoinResponse {
                error: None,
                generation: group.generation,
                protocol_type: group.protocol_type.clone(),
                protocol_name: group.protocol_name.clone(),
                leader: group.leader.clone().unwrap_or_default(),
                member_id: member_id.clone(),
                members: if is_leader {
                    leader_members.clone()
                } else {
                    Vec::new()
                },
                skip_assignment: false,
            };
            fx.reply_join(member_id, response);
        }
        member.is_new = false;
        let session = member.session_timeout_ms;
        fx.set_heartbeat(member_id, session);
        group.pending_sync.insert(member_id.clone());
    }
    let timeout = group.rebalance_timeout_ms();
    let at_ms = fx.now.plus_ms(i64::from(timeout));
    group.sync_deadline = Some(at_ms);
    let key = sync_key(fx, group.generation);
    fx.timer(TimerOp::Set { key, at_ms });
}

/// Kafka's `maybeElectNewJoinedLeader`: a leader that did not rejoin hands over to a member
/// that did; false when no member rejoined.
fn maybe_elect_new_joined_leader(group: &mut ClassicGroup) -> bool {
    let Some(leader) = group.leader.clone() else {
        return false;
    };
    if group.members.get(&leader).is_some_and(|m| m.awaiting_join) {
        return true;
    }
    match group
        .members
        .iter()
        .find(|(_, m)| m.awaiting_join)
        .map(|(id, _)| id.clone())
    {
        Some(new_leader) => {
            group.leader = Some(new_leader);
            true
        }
        None => false,
    }
}

fn init_next_generation(group: &mut ClassicGroup, fx: &Effects<'_>) {
    group.generation = Generation(group.generation.0.saturating_add(1));
    if group.members.is_empty() {
        group.protocol_name = None;
        transition(group, fx, GroupState::Empty);
    } else {
        group.protocol_name = group.select_protocol();
        transition(group, fx, GroupState::CompletingRebalance);
    }
    group.pending_sync.clear();
}

/// The members as the leader receives them: id, instance id and metadata for the selected
/// protocol.
pub(crate) fn current_members(group: &ClassicGroup) -> Vec<JoinResponseMember> {
    let protocol = group.protocol_name.as_deref().unwrap_or("");
    group
        .members
        .iter()
        .map(|(id, m)| JoinResponseMember {
            member_id: id.clone(),
            group_instance_id: m.group_instance_id.clone(),
            metadata: m.metadata_for(protocol).cloned().unwrap_or_default(),
        })
        .collect()
}

fn remove_sync_expiration(group: &mut ClassicGroup, fx: &mut Effects<'_>) {
    group.pending_sync.clear();
    if group.sync_deadline.take().is_some() {
        let key = sync_key(fx, group.generation);
        fx.timer(TimerOp::Cancel { key });
    }
}

/// A member sent its SyncGroup; once all have, the sync timer is no longer needed.
pub(crate) fn remove_pending_sync_member(
    group: &mut ClassicGroup,
    fx: &mut Effects<'_>,
    member_id: &MemberId,
) {
    group.pending_sync.remove(member_id);
    if group.pending_sync.is_empty() && group.sync_deadline.take().is_some() {
        let key = sync_key(fx, group.generation);
        fx.timer(TimerOp::Cancel { key });
    }
}

pub(crate) fn reset_and_propagate_assignment_with_error(
    group: &mut ClassicGroup,
    fx: &mut Effects<'_>,
    error: ErrorKind,
) {
    for member in group.members.values_mut() {
        member.assignment = Bytes::new();
    }
    propagate_assignment(group, fx, Some(error));
}

pub(crate) fn set_and_propagate_assignment(
    group: &mut ClassicGroup,
    fx: &mut Effects<'_>,
    assignments: &std::collections::BTreeMap<MemberId, Bytes>,
) {
    for (id, member) in group.members.iter_mut() {
        member.assignment = assignments.get(id).cloned().unwrap_or_default();
    }
    propagate_assignment(group, fx, None);
}

/// Answers every parked SyncGroup with the member's assignment (or the error), and restarts
/// those members' sessions.
fn propagate_assignment(group: &mut ClassicGroup, fx: &mut Effects<'_>, error: Option<ErrorKind>) {
    let (protocol_type, protocol_name) = if error.is_none() {
        (group.protocol_type.clone(), group.protocol_name.clone())
    } else {
        (None, None)
    };
    for (id, member) in group.members.iter_mut() {
        if !member.awaiting_sync {
            continue;
        }
        member.awaiting_sync = false;
        fx.reply_sync(
            id,
            SyncResponse {
                error,
                protocol_type: protocol_type.clone(),
                protocol_name: protocol_name.clone(),
                assignment: member.assignment.clone(),
            },
        );
        fx.set_heartbeat(id, member.session_timeout_ms);
    }
}

/// A member leaves for good (LeaveGroup, session expiry): its parked JoinGroup, if any, is
/// answered with UNKNOWN_MEMBER_ID so that a live client rejoins.
pub(crate) fn remove_current_member(
    group: &mut ClassicGroup,
    fx: &mut Effects<'_>,
    member_id: &MemberId,
) {
    fx.cancel_heartbeat(member_id);
    if group
        .members
        .get(member_id)
        .is_some_and(|m| m.awaiting_join)
    {
        fx.fail_join(member_id, ErrorKind::UnknownMemberId, MemberId::default());
    }
    remove_member_raw(group, member_id);
}
