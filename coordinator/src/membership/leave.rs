//! LeaveGroup v0–v5 (batched members from v3, per-member errors).

use super::rebalance::{
    maybe_complete_join_phase, maybe_prepare_rebalance_or_complete_join, remove_current_member,
};
use crate::command::LeaveGroup;
use crate::config::Config;
use crate::group::GroupState;
use crate::group::{invalid_member_api_group_id, Effects};
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::reply::{ErrorKind, LeaveMemberResult, LeaveResponse, Reply};

pub(crate) fn decide(config: &Config, groups: &GroupIndex, c: &LeaveGroup) -> Outcome {
    if invalid_member_api_group_id(config, &c.group_id) {
        return Outcome::reply(Reply::Leave(LeaveResponse {
            error: Some(ErrorKind::InvalidGroupId),
            members: Vec::new(),
        }));
    }
    let result = |m: &crate::command::LeavingMember, error| LeaveMemberResult {
        member_id: m.member_id.clone(),
        group_instance_id: m.group_instance_id.clone(),
        error,
    };
    let Some(start) = groups.classic_group(&c.group_id) else {
        // Kafka: an unknown group fails every member with UNKNOWN_MEMBER_ID.
        return Outcome::reply(Reply::Leave(LeaveResponse {
            error: None,
            members: c
                .members
                .iter()
                .map(|m| result(m, Some(ErrorKind::UnknownMemberId)))
                .collect(),
        }));
    };
    let mut group = start.clone().into_owned();
    let mut fx = Effects::new(&c.group_id, c.now_ms, config);
    let mut results = Vec::with_capacity(c.members.len());
    let mut any_left = false;
    for leaving in &c.members {
        let error = if leaving.member_id.is_empty() {
            // An admin removing a static member by instance id.
            match leaving
                .group_instance_id
                .as_ref()
                .and_then(|i| group.static_member_id(i))
                .cloned()
            {
                Some(member_id) => {
                    remove_current_member(&mut group, &mut fx, &member_id);
                    None
                }
                None => Some(ErrorKind::UnknownMemberId),
            }
        } else if group.pending_members.remove(&leaving.member_id).is_some() {
            fx.cancel_heartbeat(&leaving.member_id);
            None
        } else {
            match group.validate_member(&leaving.member_id, leaving.group_instance_id.as_ref()) {
                Ok(()) => {
                    remove_current_member(&mut group, &mut fx, &leaving.member_id);
                    None
                }
                Err(error) => Some(error),
            }
        };
        any_left |= error.is_none();
        results.push(result(leaving, error));
    }
    if any_left {
        match group.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                maybe_prepare_rebalance_or_complete_join(&mut group, &mut fx)
            }
            GroupState::PreparingRebalance => maybe_complete_join_phase(&mut group, &mut fx),
            GroupState::Empty | GroupState::Dead => {}
        }
    }
    let reply = Reply::Leave(LeaveResponse {
        error: None,
        members: results,
    });
    fx.finish(&start, group, reply)
}
