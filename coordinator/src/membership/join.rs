//! JoinGroup v0–v9 (Kafka's `classicGroupJoin` and its helpers).

use super::rebalance::{
    add_member_then_rebalance, current_members, maybe_complete_join_phase,
    maybe_prepare_rebalance_or_complete_join, prepare_rebalance, remove_member_raw,
    remove_pending_sync_member, update_member,
};
use crate::command::JoinGroup;
use crate::config::Config;
use crate::group::{field_too_long, invalid_member_api_group_id, Effects};
use crate::group::{ClassicGroup, GroupState, Member, PendingMember};
use crate::ids::MemberId;
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::reply::ParkedKind;
use crate::reply::{ErrorKind, JoinResponse, Reply};
use bytes::Bytes;

/// JoinGroup v4+ makes a new dynamic member come back with a minted id (KIP-394).
const MEMBER_ID_REQUIRED_MIN_VERSION: i16 = 4;
/// JoinGroup v9 lets the leader of a Stable group skip the assignment (KIP-814).
const SKIP_ASSIGNMENT_MIN_VERSION: i16 = 9;
/// Minted member ids keep at most this much of the client id.
const MEMBER_ID_PREFIX_MAX_BYTES: usize = 255;

/// The checks Kafka's `classicGroupJoin` makes before it looks at the group's type (so a
/// classic member joining a consumer group passes them too): group id, session timeout
/// bounds, and Cohort's limits.
pub(crate) fn validate_request(config: &Config, c: &JoinGroup) -> Result<(), ErrorKind> {
    if invalid_member_api_group_id(config, &c.group_id) {
        return Err(ErrorKind::InvalidGroupId);
    }
    if c.session_timeout_ms < config.session_timeout_min_ms
        || c.session_timeout_ms > config.session_timeout_max_ms
    {
        return Err(ErrorKind::InvalidSessionTimeout);
    }
    if over_limits(config, c) {
        return Err(ErrorKind::InvalidRequest);
    }
    Ok(())
}

pub(crate) fn decide(config: &Config, groups: &GroupIndex, c: &JoinGroup) -> Outcome {
    let fail = |error| Outcome::reply(Reply::Join(JoinResponse::error(error, c.member_id.clone())));

    if let Err(error) = validate_request(config, c) {
        return fail(error);
    }

    let is_unknown_member = c.member_id.is_empty();
    let start = match groups.classic_group(&c.group_id) {
        Some(group) => group.into_owned(),
        // A known member id for a group that does not exist: Kafka answers UNKNOWN_MEMBER_ID.
        None if !is_unknown_member => return fail(ErrorKind::UnknownMemberId),
        None if groups.would_pass_groups_max(c.group_id.as_str(), config.groups_max) => {
            return fail(ErrorKind::GroupsMaxReached)
        }
        None => ClassicGroup::new(c.now_ms),
    };
    let mut group = start.clone();
    let mut fx = Effects::new(&c.group_id, c.now_ms, config);
    let protocols: Vec<(String, Bytes)> = c
        .protocols
        .iter()
        .map(|p| (p.name.clone(), p.metadata.clone()))
        .collect();

    let reply = if !accept_joining_member(&group, &c.member_id, config.max_members()) {
        remove_member_raw(&mut group, &c.member_id);
        Reply::Join(JoinResponse::error(
            ErrorKind::GroupMaxSizeReached,
            MemberId::default(),
        ))
    } else if is_unknown_member {
        join_new_member(&mut group, &mut fx, c, protocols)
    } else {
        join_existing_member(&mut group, &mut fx, c, protocols)
    };
    let record_len = crate::record::codec::group_value_len(&group);
    if record_len > config.group_record_max_bytes
        && record_len > crate::record::codec::group_value_len(&start)
    {
        // The group would outgrow one record: refuse the join and change nothing.
        return Outcome::reply(Reply::Join(JoinResponse::error(
            ErrorKind::GroupMaxSizeReached,
            MemberId::default(),
        )));
    }
    fx.finish(&start, group, reply)
}

fn over_limits(config: &Config, c: &JoinGroup) -> bool {
    let metadata_bytes: usize = c
        .protocols
        .iter()
        .map(|p| p.metadata.len().saturating_add(p.name.len()))
        .fold(0usize, usize::saturating_add);
    field_too_long(config, c.member_id.as_str())
        || c.group_instance_id
            .as_ref()
            .is_some_and(|i| field_too_long(config, i.as_str()))
        || field_too_long(config, &c.client_id)
        || field_too_long(config, &c.client_host)
        || field_too_long(config, &c.protocol_type)
        || c.protocols.iter().any(|p| field_too_long(config, &p.name))
        || c.protocols.len() > config.protocols_max
        || metadata_bytes > config.member_metadata_max_bytes
        || c.rebalance_timeout_ms < 0
}

/// Kafka's `acceptJoiningMember`: while preparing, count members already back (a shrunk
/// `group.max.size` then drops the last to rejoin); otherwise count members.
fn accept_joining_member(group: &ClassicGroup, member_id: &MemberId, max: usize) -> bool {
    match group.state {
        GroupState::Empty | GroupState::Dead => true,
        GroupState::PreparingRebalance => {
            group
                .members
                .get(member_id)
                .is_some_and(|m| m.awaiting_join)
                || group.awaiting_join_count() < max
        }
        GroupState::CompletingRebalance | GroupState::Stable => {
            group.members.contains_key(member_id) || group.members.len() < max
        }
    }
}

fn parked(c: &JoinGroup, member_id: MemberId) -> Reply {
    Reply::Parked {
        group_id: c.group_id.clone(),
        member_id,
        kind: ParkedKind::Join,
    }
}

/// `<prefix>-<uuid>` from the leader's nonce: every replica mints the same id.
fn mint_member_id(prefix: &str, nonce: u128) -> MemberId {
    let mut end = prefix.len().min(MEMBER_ID_PREFIX_MAX_BYTES);
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    let hex = format!("{nonce:032x}");
    MemberId::new(format!(
        "{}-{}-{}-{}-{}-{}",
        &prefix[..end],
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

fn new_member(c: &JoinGroup, protocols: Vec<(String, Bytes)>) -> Member {
    Member {
        group_instance_id: c.group_instance_id.clone(),
        client_id: c.client_id.clone(),
        client_host: c.client_host.clone(),
        rebalance_timeout_ms: c.rebalance_timeout_ms,
        session_timeout_ms: c.session_timeout_ms,
        protocol_type: c.protocol_type.clone(),
        protocols,
        assignment: Bytes::new(),
        awaiting_join: true,
        awaiting_sync: false,
        is_new: true,
    }
}

fn join_new_member(
    group: &mut ClassicGroup,
    fx: &mut Effects<'_>,
    c: &JoinGroup,
    protocols: Vec<(String, Bytes)>,
) -> Reply {
    if !group.supports_protocols(&c.protocol_type, &protocols) {
        return Reply::Join(JoinResponse::error(
            ErrorKind::InconsistentGroupProtocol,
            MemberId::default(),
        ));
    }
    let prefix = match &c.group_instance_id {
        Some(instance_id) => instance_id.as_str(),
        None => c.client_id.as_str(),
    };
    let member_id = mint_member_id(prefix, c.nonce);
    if group.members.contains_key(&member_id) || group.pending_members.contains_key(&member_id) {
        // A nonce collision: let the client retry with a fresh nonce.
        return Reply::Join(JoinResponse::error(
            ErrorKind::CoordinatorNotAvailable,
            MemberId::default(),
        ));
    }

    if let Some(instance_id) = &c.group_instance_id {
        return match group.static_member_id(instance_id).cloned() {
            Some(old_member_id) => {
                replace_static_member(group, fx, c, protocols, old_member_id, member_id)
            }
            None => {
                add_member_then_rebalance(group, fx, member_id.clone(), new_member(c, protocols));
                parked(c, member_id)
            }
        };
    }

    if c.api_version.0 >= MEMBER_ID_REQUIRED_MIN_VERSION {
        if group.pending_members.len() >= fx.config.pending_members_max {
            return Reply::Join(JoinResponse::error(
                ErrorKind::CoordinatorNotAvailable,
                MemberId::default(),
            ));
        }
        group.pending_members.insert(
            member_id.clone(),
            PendingMember {
                session_timeout_ms: c.session_timeout_ms,
            },
        );
        fx.set_heartbeat(&member_id, c.session_timeout_ms);
        return Reply::Join(JoinResponse::error(ErrorKind::MemberIdRequired, member_id));
    }
    add_member_then_rebalance(group, fx, member_id.clone(), new_member(c, protocols));
    parked(c, member_id)
}

fn join_existing_member(
    group: &mut ClassicGroup,
    fx: &mut Effects<'_>,
    c: &JoinGroup,
    protocols: Vec<(String, Bytes)>,
) -> Reply {
    let member_id = &c.member_id;
    let fail = |error| Reply::Join(JoinResponse::error(error, member_id.clone()));
    if !group.supports_protocols(&c.protocol_type, &protocols) {
        return fail(ErrorKind::InconsistentGroupProtocol);
    }
    if group.pending_members.contains_key(member_id) {
        // Pending members are dynamic by construction; Kafka throws on an instance id here,
        // we answer as `validateMember` would for an unmapped instance id.
        if c.group_instance_id.is_some() {
            return fail(ErrorKind::UnknownMemberId);
        }
        add_member_then_rebalance(group, fx, member_id.clone(), new_member(c, protocols));
        return parked(c, member_id.clone());
    }
    if let Err(error) = group.validate_member(member_id, c.group_instance_id.as_ref()) {
        return fail(error);
    }
    let matches = group
        .members
        .get(member_id)
        .is_some_and(|m| m.protocols_match(&protocols));
    match group.state {
        GroupState::PreparingRebalance => {
            update_member(
                group,
                member_id,
                protocols,
                c.rebalance_timeout_ms,
                c.session_timeout_ms,
            );
            maybe_prepare_rebalance_or_complete_join(group, fx);
            parked(c, member_id.clone())
        }
        GroupState::CompletingRebalance if matches => {
            // Same metadata: probably a retry after a lost response; answer with the current
            // generation.
            Reply::Join(current_generation_response(
                group,
                member_id,
                group.is_leader(member_id),
            ))
        }
        GroupState::Stable if matches && !group.is_leader(member_id) => {
            Reply::Join(current_generation_response(group, member_id, false))
        }
        GroupState::CompletingRebalance | GroupState::Stable => {
            // Changed metadata, or the leader asking for a new assignment.
            update_member(
                group,
                member_id,
                protocols,
                c.rebalance_timeout_ms,
                c.session_timeout_ms,
            );
            maybe_prepare_rebalance_or_complete_join(group, fx);
            parked(c, member_id.clone())
        }
        GroupState::Empty | GroupState::Dead => fail(ErrorKind::UnknownMemberId),
    }
}

fn current_generation_response(
    group: &ClassicGroup,
    member_id: &MemberId,
    with_members: bool,
) -> JoinResponse {
    JoinResponse {
        error: None,
        generation: group.generation,
        protocol_type: group.protocol_type.clone(),
        protocol_name: group.protocol_name.clone(),
        leader: group.leader.clone().unwrap_or_default(),
        member_id: member_id.clone(),
        members: if with_members {
            current_members(group)
        } else {
            Vec::new()
        },
        skip_assignment: false,
    }
}

/// A static member rejoined without its member id: the instance gets a new id and the old one
/// is fenced. In a Stable group whose selected protocol would not change, no rebalance.
fn replace_static_member(
    group: &mut ClassicGroup,
    fx: &mut Effects<'_>,
    c: &JoinGroup,
    protocols: Vec<(String, Bytes)>,
    old_member_id: MemberId,
    new_member_id: MemberId,
) -> Reply {
    let current_leader = group.leader.clone();
    let Some(old) = group.members.remove(&old_member_id) else {
        return Reply::Join(JoinResponse::error(
            ErrorKind::UnknownMemberId,
            MemberId::default(),
        ));
    };
    if old.awaiting_join {
        fx.fail_join(
            &old_member_id,
            ErrorKind::FencedInstanceId,
            old_member_id.clone(),
        );
    }
    if old.awaiting_sync {
        fx.reply_sync(
            &old_member_id,
            crate::reply::SyncResponse::error(ErrorKind::FencedInstanceId),
        );
    }
    fx.cancel_heartbeat(&old_member_id);
    // The old id can no longer sync; the new one is not asked to in a Stable group.
    remove_pending_sync_member(group, fx, &old_member_id);
    let session_timeout_ms = old.session_timeout_ms;
    let replacement = Member {
        awaiting_join: false,
        awaiting_sync: false,
        is_new: false,
        ..old
    };
    group.members.insert(new_member_id.clone(), replacement);
    if current_leader.as_ref() == Some(&old_member_id) {
        group.leader = Some(new_member_id.clone());
    }
    fx.set_heartbeat(&new_member_id, session_timeout_ms);
    update_member(
        group,
        &new_member_id,
        protocols,
        c.rebalance_timeout_ms,
        c.session_timeout_ms,
    );

    match group.state {
        GroupState::Stable => {
            if group.select_protocol() == group.protocol_name {
                if let Some(member) = group.members.get_mut(&new_member_id) {
                    member.awaiting_join = false;
                }
                let response = if c.api_version.0 >= SKIP_ASSIGNMENT_MIN_VERSION {
                    let is_leader = group.is_leader(&new_member_id);
                    JoinResponse {
                        skip_assignment: is_leader,
                        ..current_generation_response(group, &new_member_id, is_leader)
                    }
                } else {
                    // The old leader id is named on purpose: the replaced leader must not
                    // believe it has to assign again (KIP-345).
                    JoinResponse {
                        leader: current_leader.unwrap_or_default(),
                        ..current_generation_response(group, &new_member_id, false)
                    }
                };
                return Reply::Join(response);
            }
            maybe_prepare_rebalance_or_complete_join(group, fx);
        }
        GroupState::CompletingRebalance => {
            // The leader may already be assigning with the old id: start over.
            prepare_rebalance(group, fx);
        }
        GroupState::PreparingRebalance => maybe_complete_join_phase(group, fx),
        GroupState::Empty | GroupState::Dead => maybe_prepare_rebalance_or_complete_join(group, fx),
    }
    parked(c, new_member_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_ids_look_like_kafka_ones_and_respect_char_boundaries() {
        let id = mint_member_id("rdkafka", 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        assert_eq!(id.as_str(), "rdkafka-01234567-89ab-cdef-0123-456789abcdef");
        let long = "é".repeat(200);
        let id = mint_member_id(&long, 1);
        assert!(id.as_str().len() <= MEMBER_ID_PREFIX_MAX_BYTES + 37);
    }
}
