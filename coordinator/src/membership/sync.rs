//! SyncGroup v0–v5 (Kafka's `classicGroupSync`).

use super::rebalance::{remove_pending_sync_member, set_and_propagate_assignment, transition};
use crate::command::SyncGroup;
use crate::config::Config;
use crate::group::{invalid_member_api_group_id, Effects};
use crate::group::{ClassicGroup, GroupState};
use crate::ids::MemberId;
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::reply::ParkedKind;
use crate::reply::{ErrorKind, Reply, SyncResponse};
use bytes::Bytes;
use std::collections::BTreeMap;

pub(crate) fn decide(config: &Config, groups: &GroupIndex, c: &SyncGroup) -> Outcome {
    let fail = |error| Outcome::reply(Reply::Sync(SyncResponse::error(error)));
    if invalid_member_api_group_id(config, &c.group_id) {
        return fail(ErrorKind::InvalidGroupId);
    }
    let Some(start) = groups.classic_group(&c.group_id) else {
        return fail(ErrorKind::UnknownMemberId);
    };
    if start.state == GroupState::Empty {
        return fail(ErrorKind::UnknownMemberId);
    }
    if let Err(error) = validate(&start, c) {
        return fail(error);
    }
    match start.state {
        GroupState::PreparingRebalance => fail(ErrorKind::RebalanceInProgress),
        GroupState::CompletingRebalance => {
            let is_leader = start.is_leader(&c.member_id);
            if is_leader
                && (c.assignments.len() > config.members_max
                    || c.assignments
                        .iter()
                        .any(|a| a.assignment.len() > config.member_assignment_max_bytes))
            {
                return fail(ErrorKind::InvalidRequest);
            }
            let mut group = start.clone().into_owned();
            let mut fx = Effects::new(&c.group_id, c.now_ms, config);
            if let Some(member) = group.members.get_mut(&c.member_id) {
                member.awaiting_sync = true;
            }
            remove_pending_sync_member(&mut group, &mut fx, &c.member_id);
            if is_leader {
                let assignments: BTreeMap<MemberId, Bytes> = c
                    .assignments
                    .iter()
                    .filter(|a| group.members.contains_key(&a.member_id))
                    .map(|a| (a.member_id.clone(), a.assignment.clone()))
                    .collect();
                set_and_propagate_assignment(&mut group, &mut fx, &assignments);
                transition(&mut group, &fx, GroupState::Stable);
                if crate::record::codec::group_value_len(&group) > config.group_record_max_bytes {
                    return fail(ErrorKind::InvalidRequest);
                }
            }
            let reply = Reply::Parked {
                group_id: c.group_id.clone(),
                member_id: c.member_id.clone(),
                kind: ParkedKind::Sync,
            };
            fx.finish(&start, group, reply)
        }
        GroupState::Stable => {
            let mut group = start.clone().into_owned();
            let mut fx = Effects::new(&c.group_id, c.now_ms, config);
            remove_pending_sync_member(&mut group, &mut fx, &c.member_id);
            let assignment = group
                .members
                .get(&c.member_id)
                .map(|m| m.assignment.clone())
                .unwrap_or_default();
            let reply = Reply::Sync(SyncResponse {
                error: None,
                protocol_type: group.protocol_type.clone(),
                protocol_name: group.protocol_name.clone(),
                assignment,
            });
            fx.finish(&start, group, reply)
        }
        GroupState::Empty | GroupState::Dead => fail(ErrorKind::UnknownMemberId),
    }
}

/// Kafka's `validateSyncGroup`: member, generation, then (v5) protocol type and name.
fn validate(group: &ClassicGroup, c: &SyncGroup) -> Result<(), ErrorKind> {
    group.validate_member(&c.member_id, c.group_instance_id.as_ref())?;
    if c.generation != group.generation {
        return Err(ErrorKind::IllegalGeneration);
    }
    if inconsistent(c.protocol_type.as_deref(), group.protocol_type.as_deref())
        || inconsistent(c.protocol_name.as_deref(), group.protocol_name.as_deref())
    {
        return Err(ErrorKind::InconsistentGroupProtocol);
    }
    Ok(())
}

fn inconsistent(requested: Option<&str>, group: Option<&str>) -> bool {
    matches!((requested, group), (Some(r), Some(g)) if r != g)
}
