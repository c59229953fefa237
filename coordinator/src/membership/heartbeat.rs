//! Heartbeat v0–v4: read-only. It answers from applied state and re-arms the member's session
//! timer on the leader; it never writes a record, so heartbeats never touch Raft.

use crate::command::Heartbeat;
use crate::config::Config;
use crate::group::invalid_member_api_group_id;
use crate::group::GroupState;
use crate::index::GroupIndex;
use crate::outcome::ReadOutcome;
use crate::reply::{ErrorKind, Reply};
use crate::timer::{TimerKey, TimerOp};

pub(crate) fn read(config: &Config, groups: &GroupIndex, c: &Heartbeat) -> ReadOutcome {
    let answer = |result| ReadOutcome {
        reply: Reply::Heartbeat(result),
        timers: Vec::new(),
    };
    if invalid_member_api_group_id(config, &c.group_id) {
        return answer(Err(ErrorKind::InvalidGroupId));
    }
    let Some(group) = groups.classic_group(&c.group_id) else {
        return answer(Err(ErrorKind::UnknownMemberId));
    };
    if let Err(error) = group.validate_member(&c.member_id, c.group_instance_id.as_ref()) {
        return answer(Err(error));
    }
    if c.generation != group.generation {
        return answer(Err(ErrorKind::IllegalGeneration));
    }
    let result = match group.state {
        GroupState::Empty | GroupState::Dead => return answer(Err(ErrorKind::UnknownMemberId)),
        GroupState::PreparingRebalance => Err(ErrorKind::RebalanceInProgress),
        GroupState::CompletingRebalance | GroupState::Stable => Ok(()),
    };
    let session_ms = group
        .members
        .get(&c.member_id)
        .map_or(0, |m| m.session_timeout_ms);
    ReadOutcome {
        reply: Reply::Heartbeat(result),
        timers: vec![TimerOp::Set {
            key: TimerKey::MemberHeartbeat {
                group_id: c.group_id.clone(),
                member_id: c.member_id.clone(),
            },
            at_ms: c.now_ms.plus_ms(i64::from(session_ms)),
        }],
    }
}
