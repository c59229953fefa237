//! The consumer group protocol (KIP-848), as a concern of the deterministic state machine.
//!
//! ```text
//!   ConsumerGroupHeartbeat ─▶ heartbeat::decide ─┬─ member deltas  ─▶ ConsumerMember record, group epoch + 1
//!                                                ├─ target::maybe_assign (inline if small) ─▶ ConsumerTarget records
//!                                                │     └─ too large: Outcome::assignments ─▶ runtime runs the
//!                                                │        AssignmentJob off the path ─▶ InstallTargetAssignment
//!                                                └─ reconcile::Step ─▶ ConsumerCurrent record, rebalance timer
//!   TimerFired(MemberHeartbeat | ConsumerRebalance) ─▶ timers::decide ─▶ fence (tombstones, group epoch + 1)
//!   TopicsChanged ─▶ topics::decide ─▶ Topic records, group epoch + 1 of every group using a changed topic
//! ```
//!
//! Every handler collects its changes in a `Plan` (an overlay over the group's records) and
//! turns it into records at the end; only replay changes the state.

pub(crate) mod describe;
pub(crate) mod heartbeat;
pub(crate) mod plan;
pub(crate) mod reconcile;
pub(crate) mod target;
pub(crate) mod timers;
pub(crate) mod topics;
pub(crate) mod upgrade;

use crate::command::{ConsumerGroupHeartbeat, InstallTargetAssignment};
use crate::config::Config;
use crate::ids::MemberId;
use crate::index::GroupIndex;
use crate::outcome::{AssignmentNeeded, Outcome};
use crate::reply::{ConsumerHeartbeatResponse, Reply};
use crate::timer::TimerOp;
pub(crate) use plan::Plan;
pub use target::AssignmentJob;

/// The session timeout the broker gives consumer-protocol members: the group's
/// `consumer.session.timeout.ms` override, else `group.consumer.session.timeout.ms`.
pub(crate) fn session_timeout_ms(
    config: &Config,
    overrides: Option<&crate::group_config::GroupConfigs>,
) -> i32 {
    crate::group_config::effective(
        config,
        overrides,
        crate::group_config::CONSUMER_SESSION_TIMEOUT_MS,
    )
    .unwrap_or(config.consumer_session_timeout_ms)
}

/// The heartbeat interval the broker tells consumer-protocol members: the group's
/// `consumer.heartbeat.interval.ms` override, else `group.consumer.heartbeat.interval.ms`.
pub(crate) fn heartbeat_interval_ms(
    config: &Config,
    overrides: Option<&crate::group_config::GroupConfigs>,
) -> i32 {
    crate::group_config::effective(
        config,
        overrides,
        crate::group_config::CONSUMER_HEARTBEAT_INTERVAL_MS,
    )
    .unwrap_or(config.consumer_heartbeat_interval_ms)
}

/// Removes a member (Kafka's `consumerGroupFenceMember`): its records become tombstones, the
/// group epoch moves on, its timers are cancelled.
pub(crate) fn fence_member(plan: &mut Plan<'_>, member_id: &MemberId, timers: &mut Vec<TimerOp>) {
    let current = plan.current(member_id);
    heartbeat::cancel_member_timers(plan.group_id, member_id, &current, timers);
    plan.remove_member(member_id);
    plan.bump_group_epoch();
}

/// Builds the outcome of a plan.
pub(crate) fn finish(plan: Plan<'_>, reply: Reply, timers: Vec<TimerOp>) -> Outcome {
    let assignments = if plan.assignment_needed {
        vec![AssignmentNeeded {
            group_id: plan.group_id.clone(),
            epoch: plan.epochs.group_epoch,
        }]
    } else {
        Vec::new()
    };
    Outcome {
        records: plan.records(),
        reply,
        member_replies: Vec::new(),
        timers,
        assignments,
        txn_markers: Vec::new(),
    }
}

pub(crate) fn heartbeat(
    config: &Config,
    groups: &GroupIndex,
    c: &ConsumerGroupHeartbeat,
) -> Outcome {
    heartbeat::decide(config, groups, c)
}

/// `InstallTargetAssignment`: installed if still current and valid, else ignored.
pub(crate) fn install(groups: &GroupIndex, c: &InstallTargetAssignment) -> Outcome {
    let Some(group) = groups.consumer_group(c.group_id.as_str()) else {
        return Outcome::reply(Reply::Done);
    };
    let mut plan = Plan::new(&c.group_id, Some(group));
    if !target::install(&mut plan, &groups.topic_image, c) {
        return Outcome::reply(Reply::Done);
    }
    finish(plan, Reply::Done, Vec::new())
}

/// The assignor run a group needs, for the runtime to compute off the request path.
pub(crate) fn assignment_job(
    groups: &GroupIndex,
    group_id: &crate::ids::GroupId,
) -> Option<AssignmentJob> {
    let group = groups.consumer_group(group_id.as_str())?;
    target::job_for(group_id, group, &groups.topic_image)
}

/// Whether a heartbeat's outcome changes nothing but the member's session: such a heartbeat
/// is answered from state without replication.
pub(crate) fn unchanged(outcome: &Outcome) -> bool {
    outcome.records.is_empty()
        && outcome.member_replies.is_empty()
        && outcome.assignments.is_empty()
        && outcome.timers.iter().all(|t| {
            matches!(
                t,
                TimerOp::Set {
                    key: crate::timer::TimerKey::MemberHeartbeat { .. },
                    ..
                }
            )
        })
}

/// The heartbeat's answer when it is an error (nothing to write either).
pub(crate) fn is_error(outcome: &Outcome) -> bool {
    matches!(
        &outcome.reply,
        Reply::ConsumerGroupHeartbeat(ConsumerHeartbeatResponse { error: Some(_), .. })
    )
}
