//! ConsumerGroupHeartbeat v0–v1 (Kafka's `GroupMetadataManager.consumerGroupHeartbeat`):
//! validate the request, find or create the group and the member, apply the member's
//! deltas (a changed subscription bumps the group epoch), bring the target assignment up to
//! the group epoch, reconcile the member, answer.
//!
//! Errors, where Kafka raises them:
//!
//! | error                        | when                                                              |
//! |------------------------------|-------------------------------------------------------------------|
//! | INVALID_REQUEST (42)         | empty member id on v1+ (or with epoch > 0 / −1); empty group, instance or rack id; epoch 0 without rebalance timeout, with owned partitions, or without a subscription; −2 without instance id; epoch < −2; Cohort's limits |
//! | UNSUPPORTED_ASSIGNOR (112)   | a server assignor Cohort does not have                            |
//! | GROUP_ID_NOT_FOUND (69)      | epoch ≠ 0 and no such group; a classic group with members that may not be upgraded (policy, protocol type, size, malformed embedded protocol: `upgrade.rs`) |
//! | GROUP_MAX_SIZE_REACHED (81)  | a new member and `group.consumer.max.size` members already       |
//! | POLICY_VIOLATION (44)        | a new group and `Config::groups_max` groups already (Cohort's count limit) |
//! | UNKNOWN_MEMBER_ID (25)       | epoch ≠ 0 and no such member; an unknown instance id              |
//! | FENCED_INSTANCE_ID (82)      | the instance id belongs to another member id                      |
//! | UNRELEASED_INSTANCE_ID (111) | epoch 0 with an instance id still held by a member that did not leave with −2 |
//! | FENCED_MEMBER_EPOCH (110)    | an epoch ahead of the member's, or behind it other than its previous epoch with owned ⊆ assigned; a member in an unknown state |
//! | INVALID_REGULAR_EXPRESSION (128) | a new SubscribedTopicRegex that does not compile              |

use super::plan::Plan;
use super::reconcile::{Fenced, Step};
use super::target::{maybe_assign, subscribed_ids};
use super::{fence_member, finish, heartbeat_interval_ms, session_timeout_ms, upgrade};
use crate::command::{ConsumerGroupHeartbeat, OwnedTopicPartitions};
use crate::config::Config;
use crate::group::topic_regex::TopicRegex;
use crate::ids::{MemberId, TimestampMs, TopicName};
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::record::assignment::Assignment;
use crate::record::consumer_group::{ConsumerMemberValue, CurrentAssignment, MemberState};
use crate::record::Record;
use crate::reply::{ConsumerHeartbeatResponse, ErrorKind, Reply};
use crate::timer::{TimerKey, TimerOp};
use crate::{assignor, group};
use std::collections::BTreeMap;

/// KIP-1082: from v1 the client generates its member id.
const CLIENT_MEMBER_ID_MIN_VERSION: i16 = 1;
const LEAVE_EPOCH: i32 = -1;
const STATIC_LEAVE_EPOCH: i32 = -2;
/// Most partitions one heartbeat may report owning.
const OWNED_PARTITIONS_MAX: usize = 100_000;

type Failure = (ErrorKind, String);

fn invalid(message: &str) -> Failure {
    (ErrorKind::InvalidRequest, message.to_owned())
}

fn fail(error: Failure) -> Outcome {
    Outcome::reply(Reply::ConsumerGroupHeartbeat(
        ConsumerHeartbeatResponse::error(error.0, error.1),
    ))
}

/// What the client reads (Java puts it in the PolicyViolationException): which limit, so
/// that an operator is not sent looking at the group's members.
fn groups_max_message(max: usize) -> String {
    format!(
        "This broker already holds its maximum of {max} groups (--groups-max); no new group \
         can be created."
    )
}

/// Java's `String.trim().isEmpty()` on a value that is set.
fn blank(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.trim().is_empty())
}

/// Kafka's `throwIfConsumerGroupHeartbeatRequestIsInvalid`, then Cohort's limits.
fn validate(config: &Config, c: &ConsumerGroupHeartbeat) -> Result<(), Failure> {
    let member_id_required = c.api_version.0 >= CLIENT_MEMBER_ID_MIN_VERSION
        || c.member_epoch > 0
        || c.member_epoch == LEAVE_EPOCH;
    if member_id_required && c.member_id.as_str().trim().is_empty() {
        return Err(invalid("MemberId can't be empty."));
    }
    if c.group_id.as_str().trim().is_empty() {
        return Err(invalid("GroupId can't be empty."));
    }
    if blank(c.instance_id.as_ref().map(|i| i.as_str())) {
        return Err(invalid("InstanceId can't be empty."));
    }
    if blank(c.rack_id.as_deref()) {
        return Err(invalid("RackId can't be empty."));
    }
    if c.member_epoch == 0 {
        if c.rebalance_timeout_ms == -1 {
            return Err(invalid(
                "RebalanceTimeoutMs must be provided in first request.",
            ));
        }
        if c.owned_partitions.as_ref().is_none_or(|o| !o.is_empty()) {
            return Err(invalid("TopicPartitions must be empty when (re-)joining."));
        }
        let names = c
            .subscribed_topic_names
            .as_ref()
            .is_some_and(|n| !n.is_empty());
        let regex = c
            .subscribed_topic_regex
            .as_ref()
            .is_some_and(|r| !r.is_empty());
        if !names && !regex {
            return Err(invalid(
                "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.",
            ));
        }
    } else if c.member_epoch == STATIC_LEAVE_EPOCH {
        if c.instance_id.is_none() {
            return Err(invalid("InstanceId can't be null."));
        }
    } else if c.member_epoch < STATIC_LEAVE_EPOCH {
        return Err(invalid("MemberEpoch is invalid."));
    }
    if let Some(name) = &c.server_assignor {
        if assignor::by_name(name).is_none() {
            return Err((
                ErrorKind::UnsupportedAssignor,
                format!(
                    "ServerAssignor {name} is not supported. Supported assignors: {}.",
                    assignor::ASSIGNOR_NAMES.join(", ")
                ),
            ));
        }
    }
    // Cohort's limits: every field that ends up in a record is bounded.
    let too_long = |s: &str| s.len() > config.field_max_bytes;
    let topics = c.subscribed_topic_names.as_deref().unwrap_or_default();
    let owned: usize = c
        .owned_partitions
        .iter()
        .flatten()
        .map(|t| t.partitions.len())
        .sum();
    if c.group_id.as_str().len() > config.group_id_max_bytes
        || too_long(c.member_id.as_str())
        || c.instance_id.as_ref().is_some_and(|i| too_long(i.as_str()))
        || c.rack_id.as_deref().is_some_and(too_long)
        || too_long(&c.client_id)
        || too_long(&c.client_host)
        || c.server_assignor.as_deref().is_some_and(too_long)
        || topics.len() > config.consumer_subscribed_topics_max
        || topics.iter().any(|t| too_long(t.as_str()))
        || owned > OWNED_PARTITIONS_MAX
        || c.subscribed_topic_regex
            .as_deref()
            .is_some_and(|r| r.len() > group::topic_regex::MAX_PATTERN_BYTES)
    {
        return Err(invalid(
            "The request is over one of the coordinator's limits.",
        ));
    }
    Ok(())
}

fn owned_assignment(owned: &[OwnedTopicPartitions]) -> Assignment {
    Assignment::from_pairs(
        owned
            .iter()
            .flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, *p))),
    )
}

/// `<uuid>` from the leader's nonce, as Kafka's `Uuid.randomUuid().toString()` looks.
pub(crate) fn mint_member_id(nonce: u128) -> MemberId {
    let hex = format!("{nonce:032x}");
    MemberId::new(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

pub(crate) fn decide(config: &Config, groups: &GroupIndex, c: &ConsumerGroupHeartbeat) -> Outcome {
    if let Err(e) = validate(config, c) {
        return fail(e);
    }
    if c.member_epoch == LEAVE_EPOCH || c.member_epoch == STATIC_LEAVE_EPOCH {
        return leave(config, groups, c);
    }
    if let Some(outcome) = steady(config, groups, c) {
        // Every debug test that heartbeats checks the shortcut against the full path.
        debug_assert_eq!(
            Ok(&outcome),
            join_or_heartbeat(config, groups, c).as_ref(),
            "a steady heartbeat answered other than the full path would"
        );
        return outcome;
    }
    match join_or_heartbeat(config, groups, c) {
        Ok(outcome) => outcome,
        Err(e) => fail(e),
    }
}

/// The heartbeat of a stable member that reports nothing new, at the group's assignment
/// epoch, whose target is computed: what nearly every heartbeat of a settled group is. Its
/// outcome is what `join_or_heartbeat` reaches for it — no record, the member's epoch, no
/// assignment, the session re-armed — without the plan, the reconciliation and the clones
/// of the member they take. `None`: not such a heartbeat, the full path decides.
fn steady(config: &Config, groups: &GroupIndex, c: &ConsumerGroupHeartbeat) -> Option<Outcome> {
    if c.member_epoch <= 0
        || c.instance_id.is_some()
        || c.subscribed_topic_regex.is_some()
        || (c.rebalance_timeout_ms != -1
            && c.subscribed_topic_names.is_some()
            && c.owned_partitions.is_some())
    {
        return None;
    }
    let group = groups.consumer_group(c.group_id.as_str())?;
    let epochs = &group.epochs;
    if !group.has_epochs || epochs.group_epoch > epochs.assignment_epoch {
        return None;
    }
    let member = group.members.get(&c.member_id)?;
    let current = group.current.get(&c.member_id)?;
    let unchanged = c
        .rack_id
        .as_ref()
        .is_none_or(|r| member.rack_id.as_ref() == Some(r))
        && (c.rebalance_timeout_ms == -1 || c.rebalance_timeout_ms == member.rebalance_timeout_ms)
        && c.server_assignor
            .as_ref()
            .is_none_or(|a| member.server_assignor.as_ref() == Some(a))
        && c.subscribed_topic_names
            .as_ref()
            .is_none_or(|n| *n == member.subscribed_topic_names)
        && c.client_id == member.client_id
        && c.client_host == member.client_host;
    if !unchanged
        || current.state != MemberState::Stable
        || current.member_epoch != c.member_epoch
        || current.member_epoch != epochs.assignment_epoch
    {
        return None;
    }
    if !current.assigned.is_empty() {
        // Partitions of a topic it no longer subscribes to would move to revocation.
        let subscribed = subscribed_ids(member, &groups.topic_image, &mut BTreeMap::new());
        if current
            .assigned
            .topics()
            .any(|(t, _)| !subscribed.contains(&t))
        {
            return None;
        }
    }
    let overrides = groups.group_configs.get(&c.group_id);
    let session_deadline = c
        .now_ms
        .plus_ms(i64::from(session_timeout_ms(config, overrides)));
    Some(Outcome {
        timers: vec![TimerOp::Set {
            key: TimerKey::MemberHeartbeat {
                group_id: c.group_id.clone(),
                member_id: c.member_id.clone(),
            },
            at_ms: session_deadline,
        }],
        ..Outcome::reply(Reply::ConsumerGroupHeartbeat(ConsumerHeartbeatResponse {
            error: None,
            error_message: None,
            member_id: Some(c.member_id.clone()),
            member_epoch: current.member_epoch,
            heartbeat_interval_ms: heartbeat_interval_ms(config, overrides),
            assignment: None,
        }))
    })
}

fn leave(config: &Config, groups: &GroupIndex, c: &ConsumerGroupHeartbeat) -> Outcome {
    let Some(group) = groups.consumer_group(c.group_id.as_str()) else {
        return fail((
            ErrorKind::GroupIdNotFound,
            format!("Consumer group {} not found.", c.group_id),
        ));
    };
    let mut plan = Plan::new(&c.group_id, Some(group));
    let member_id = match &c.instance_id {
        None => {
            if plan.member(&c.member_id).is_none() {
                return fail(unknown_member(c));
            }
            c.member_id.clone()
        }
        Some(instance) => {
            let Some(existing) = group.static_member(instance) else {
                return fail((
                    ErrorKind::UnknownMemberId,
                    format!("Instance id {instance} is unknown."),
                ));
            };
            if *existing != c.member_id {
                return fail(fenced_instance(c, existing));
            }
            existing.clone()
        }
    };
    let response = ConsumerHeartbeatResponse {
        error: None,
        error_message: None,
        member_id: Some(member_id.clone()),
        member_epoch: c.member_epoch,
        heartbeat_interval_ms: 0,
        assignment: None,
    };
    if c.member_epoch == STATIC_LEAVE_EPOCH {
        // A temporary leave: the member keeps its partitions for its session, so that a
        // restart with the same instance id gets them back without a rebalance.
        let mut current = plan.current(&member_id);
        current.member_epoch = STATIC_LEAVE_EPOCH;
        current.pending_revocation = Assignment::new();
        plan.set_current(&member_id, Some(current));
        let mut timers = Vec::new();
        cancel_rebalance_timer(
            &c.group_id,
            &member_id,
            group.current_of(&member_id),
            &mut timers,
        );
        return finish(plan, Reply::ConsumerGroupHeartbeat(response), timers);
    }
    let mut timers = Vec::new();
    fence_member(&mut plan, &member_id, &mut timers);
    maybe_assign(&mut plan, &groups.topic_image, config);
    finish(plan, Reply::ConsumerGroupHeartbeat(response), timers)
}

fn unknown_member(c: &ConsumerGroupHeartbeat) -> Failure {
    (
        ErrorKind::UnknownMemberId,
        format!(
            "Member {} is not a member of group {}.",
            c.member_id, c.group_id
        ),
    )
}

fn fenced_instance(c: &ConsumerGroupHeartbeat, existing: &MemberId) -> Failure {
    (
        ErrorKind::FencedInstanceId,
        format!(
            "Static member {} with instance id {} was fenced by member {existing}.",
            c.member_id,
            c.instance_id
                .as_ref()
                .map(|i| i.as_str())
                .unwrap_or_default()
        ),
    )
}

/// Kafka's `throwIfConsumerGroupMemberEpochIsInvalid`, with KAFKA-19233 (epoch 0 rejoins).
fn check_epoch(
    current: &CurrentAssignment,
    received: i32,
    owned: Option<&Assignment>,
) -> Result<(), Failure> {
    if received == 0 {
        return Ok(());
    }
    let fenced = |side: &str| {
        Err((
            ErrorKind::FencedMemberEpoch,
            format!(
                "The consumer group member has a {side} member epoch ({received}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.",
                current.member_epoch
            ),
        ))
    };
    if received > current.member_epoch {
        return fenced("greater");
    }
    if received < current.member_epoch {
        let subset = owned.is_some_and(|o| o.difference(&current.assigned).is_empty());
        if received != current.previous_member_epoch || !subset {
            return fenced("smaller");
        }
    }
    Ok(())
}

fn join_or_heartbeat(
    config: &Config,
    groups: &GroupIndex,
    c: &ConsumerGroupHeartbeat,
) -> Result<Outcome, Failure> {
    let overrides = groups.group_configs.get(&c.group_id);
    let joining = c.member_epoch == 0;
    let not_found = || {
        (
            ErrorKind::GroupIdNotFound,
            format!("Consumer group {} not found.", c.group_id),
        )
    };
    let mut prefix = Vec::new();
    let mut upgrade_effects = (Vec::new(), Vec::new());
    let converted;
    let group = match groups.consumer_group(c.group_id.as_str()) {
        Some(g) => Some(g),
        None if !joining => return Err(not_found()),
        None => {
            // An empty classic group (or a simple one, offsets only) is replaced; one with
            // members is upgraded online when the policy allows (Kafka's
            // `getOrMaybeCreateConsumerGroup`).
            if let Some(classic) = groups.classic_group(&c.group_id) {
                if !classic.members.is_empty() {
                    upgrade::validate(config, &c.group_id, &classic)?;
                    let done = upgrade::convert(&c.group_id, &classic, &groups.topic_image)?;
                    prefix = done.records;
                    let mut timers = done.timers;
                    timers.extend(upgrade::session_timers(
                        &c.group_id,
                        &done.group,
                        c.now_ms,
                        &c.member_id,
                    ));
                    upgrade_effects = (done.member_replies, timers);
                    converted = done.group;
                    Some(&converted)
                } else if groups.group(c.group_id.as_str()).is_some() {
                    prefix.push(Record::GroupMetadata {
                        group_id: c.group_id.clone(),
                        value: None,
                    });
                    None
                } else {
                    None
                }
            } else if groups.would_pass_groups_max(c.group_id.as_str(), config.groups_max) {
                return Err((
                    ErrorKind::GroupsMaxReached,
                    groups_max_message(config.groups_max),
                ));
            } else {
                None
            }
        }
    };
    let mut plan = Plan::new(&c.group_id, group);
    plan.prefix = prefix;

    let member_id = if c.member_id.is_empty() {
        mint_member_id(c.nonce)
    } else {
        c.member_id.clone()
    };
    let owned = c.owned_partitions.as_deref().map(owned_assignment);

    // Who the member is: an existing one, a new one, or a static member replacing its
    // previous incarnation.
    let existing_static = c
        .instance_id
        .as_ref()
        .and_then(|i| plan.base.static_member(i).cloned());
    let is_member = plan.member(&member_id).is_some();
    let replacing = match (&existing_static, joining) {
        (Some(old), true) if *old != member_id => Some(old.clone()),
        _ => None,
    };
    let max = config.max_consumer_members();
    if plan.member_count() >= max && !is_member && replacing.is_none() {
        return Err((
            ErrorKind::GroupMaxSizeReached,
            format!("The consumer group has reached its maximum capacity of {max} members."),
        ));
    }
    let (upgrade_replies, mut timers) = upgrade_effects;
    let base_member: ConsumerMemberValue;
    let base_current: CurrentAssignment;
    let mut new_member = false;
    match (&c.instance_id, &existing_static) {
        (None, _) | (Some(_), None) if !joining => {
            // Dynamic member, or a static one (then unknown: checked below), heartbeating.
            if c.instance_id.is_some() {
                return Err((
                    ErrorKind::UnknownMemberId,
                    format!(
                        "Instance id {} is unknown.",
                        c.instance_id
                            .as_ref()
                            .map(|i| i.as_str())
                            .unwrap_or_default()
                    ),
                ));
            }
            let Some(m) = plan.member(&member_id) else {
                return Err(unknown_member(c));
            };
            base_member = m.clone();
            base_current = plan.current(&member_id);
            check_epoch(&base_current, c.member_epoch, owned.as_ref())?;
        }
        (Some(_), Some(old)) if !joining => {
            if *old != member_id {
                return Err(fenced_instance(c, old));
            }
            base_member = plan.member(&member_id).cloned().unwrap_or_default();
            base_current = plan.current(&member_id);
            check_epoch(&base_current, c.member_epoch, owned.as_ref())?;
        }
        (Some(_), Some(old)) => {
            // A static member (re)joins. Its previous incarnation must have left with −2,
            // unless it is the same member id rejoining.
            let old_current = plan.current(old);
            if *old != member_id && old_current.member_epoch != STATIC_LEAVE_EPOCH {
                return Err((
                    ErrorKind::UnreleasedInstanceId,
                    format!(
                        "Static member {member_id} with instance id {} cannot join the group because the instance id is owned by {old} member.",
                        c.instance_id.as_ref().map(|i| i.as_str()).unwrap_or_default()
                    ),
                ));
            }
            base_member = plan.member(old).cloned().unwrap_or_default();
            // The new incarnation keeps the partitions of the old one (no rebalance for a
            // restart); it owns none yet (it joins with an empty TopicPartitions), so what
            // the old one was revoking is released.
            base_current = CurrentAssignment {
                member_epoch: 0,
                previous_member_epoch: 0,
                state: MemberState::Stable,
                assigned: old_current.assigned.clone(),
                pending_revocation: Assignment::new(),
            };
            if *old != member_id {
                // The new member id takes over the old one's target too.
                let target = plan.target(old).clone();
                plan.remove_member(old);
                cancel_member_timers(&c.group_id, old, &old_current, &mut timers);
                plan.set_target(&member_id, Some(target));
                plan.set_member(&member_id, Some(base_member.clone()));
            }
        }
        (None, _) | (Some(_), None) => {
            // A new member, or one rejoining with epoch 0 after being fenced (KAFKA-19233):
            // it gave up its partitions, so its reconciliation starts over.
            new_member = plan.member(&member_id).is_none();
            base_member = plan.member(&member_id).cloned().unwrap_or_default();
            base_current = rejoined(plan.current(&member_id));
        }
    }

    // 1. The member's deltas.
    let mut updated = base_member.clone();
    if let Some(i) = &c.instance_id {
        updated.instance_id = Some(i.clone());
    }
    if let Some(r) = &c.rack_id {
        updated.rack_id = Some(r.clone());
    }
    if c.rebalance_timeout_ms != -1 {
        updated.rebalance_timeout_ms = c.rebalance_timeout_ms;
    }
    if let Some(a) = &c.server_assignor {
        updated.server_assignor = Some(a.clone());
    }
    if let Some(names) = &c.subscribed_topic_names {
        let mut names: Vec<TopicName> = names.clone();
        names.sort();
        names.dedup();
        updated.subscribed_topic_names = names;
    }
    if let Some(regex) = &c.subscribed_topic_regex {
        updated.subscribed_topic_regex = (!regex.is_empty()).then(|| regex.clone());
    }
    updated.client_id = c.client_id.clone();
    updated.client_host = c.client_host.clone();

    let regex_changed = updated.subscribed_topic_regex != base_member.subscribed_topic_regex;
    if regex_changed {
        if let Some(pattern) = &updated.subscribed_topic_regex {
            TopicRegex::new(pattern).map_err(|e| (ErrorKind::InvalidRegularExpression, e))?;
        }
    }
    let subscription_changed = new_member
        || updated.subscribed_topic_names != base_member.subscribed_topic_names
        || regex_changed;
    if new_member || Some(&updated) != plan.member(&member_id) {
        plan.set_member(&member_id, Some(updated.clone()));
    }
    if subscription_changed {
        plan.bump_group_epoch();
    }

    // 2. The target assignment at the group epoch.
    maybe_assign(&mut plan, &groups.topic_image, config);

    // 3. Reconcile the member.
    let image = &groups.topic_image;
    let subscribed = subscribed_ids(&updated, image, &mut BTreeMap::new());
    let target_epoch = plan.epochs.assignment_epoch;
    let target = plan.target(&member_id).clone();
    let step = Step {
        current: &base_current,
        target_epoch,
        target: &target,
        subscribed: &subscribed,
        owned: owned.as_ref(),
    };
    let base = plan.base;
    let is_free = |t, p| match base.owner_of(t, p) {
        None => true,
        Some(owner) => {
            *owner == member_id || replacing.as_ref() == Some(owner) || plan.removed(owner)
        }
    };
    let next = match step.run(is_free) {
        Ok(next) => next,
        Err(Fenced) => {
            return Err((
                ErrorKind::FencedMemberEpoch,
                "The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin.".to_owned(),
            ))
        }
    };
    let before = plan.current(&member_id);
    let assignment_changed = next.assigned != before.assigned || new_member;
    store_reconciled(
        &mut plan,
        &c.group_id,
        &member_id,
        (&before, &next),
        c.now_ms
            .plus_ms(i64::from(updated.rebalance_timeout_ms.max(0))),
        c.now_ms
            .plus_ms(i64::from(session_timeout_ms(config, overrides))),
        &mut timers,
    );

    let full_request = joining
        || (c.rebalance_timeout_ms != -1
            && (c.subscribed_topic_names.is_some() || c.subscribed_topic_regex.is_some())
            && c.owned_partitions.is_some());
    let response = ConsumerHeartbeatResponse {
        error: None,
        error_message: None,
        member_id: Some(member_id.clone()),
        member_epoch: next.member_epoch,
        heartbeat_interval_ms: heartbeat_interval_ms(config, overrides),
        assignment: (full_request || assignment_changed || next.assigned != base_current.assigned)
            .then(|| next.assigned.clone()),
    };
    let mut outcome = finish(plan, Reply::ConsumerGroupHeartbeat(response), timers);
    outcome.member_replies = upgrade_replies;
    Ok(outcome)
}

/// A member rejoining with epoch 0 has given up everything it owned.
fn rejoined(current: CurrentAssignment) -> CurrentAssignment {
    CurrentAssignment {
        member_epoch: 0,
        previous_member_epoch: current.member_epoch.max(0),
        state: MemberState::Stable,
        assigned: Assignment::new(),
        pending_revocation: Assignment::new(),
    }
}

/// Stores a member's reconciled assignment and moves its deadlines: the revocation deadline
/// follows its reconciliation (set when it enters UnrevokedPartitions or moves to another epoch
/// while in it, cancelled when it leaves; nothing when nothing changed), the session restarts.
pub(crate) fn store_reconciled(
    plan: &mut Plan,
    group_id: &crate::ids::GroupId,
    member_id: &MemberId,
    (before, next): (&CurrentAssignment, &CurrentAssignment),
    rebalance_deadline: TimestampMs,
    session_deadline: TimestampMs,
    timers: &mut Vec<TimerOp>,
) {
    if next.state == MemberState::UnrevokedPartitions
        && (before.state != MemberState::UnrevokedPartitions
            || before.member_epoch != next.member_epoch)
    {
        cancel_rebalance_timer(group_id, member_id, before, timers);
        timers.push(TimerOp::Set {
            key: TimerKey::ConsumerRebalance {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
                member_epoch: next.member_epoch,
            },
            at_ms: rebalance_deadline,
        });
    } else if next.state != MemberState::UnrevokedPartitions {
        cancel_rebalance_timer(group_id, member_id, before, timers);
    }
    if plan.base.current.get(member_id) != Some(next) {
        plan.set_current(member_id, Some(next.clone()));
    }
    timers.push(TimerOp::Set {
        key: TimerKey::MemberHeartbeat {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
        },
        at_ms: session_deadline,
    });
}

pub(crate) fn cancel_rebalance_timer(
    group_id: &crate::ids::GroupId,
    member_id: &MemberId,
    current: &CurrentAssignment,
    timers: &mut Vec<TimerOp>,
) {
    if current.state == MemberState::UnrevokedPartitions {
        timers.push(TimerOp::Cancel {
            key: TimerKey::ConsumerRebalance {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
                member_epoch: current.member_epoch,
            },
        });
    }
}

pub(crate) fn cancel_member_timers(
    group_id: &crate::ids::GroupId,
    member_id: &MemberId,
    current: &CurrentAssignment,
    timers: &mut Vec<TimerOp>,
) {
    timers.push(TimerOp::Cancel {
        key: TimerKey::MemberHeartbeat {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
        },
    });
    cancel_rebalance_timer(group_id, member_id, current, timers);
    cancel_classic_deadlines(group_id, member_id, current.member_epoch, timers);
}

/// Cancels a classic member's join and sync deadlines armed at `member_epoch` (Kafka's
/// `cancelTimers` cancels them for every member it removes; a consumer-protocol member has
/// none, and cancelling what is not armed does nothing).
pub(crate) fn cancel_classic_deadlines(
    group_id: &crate::ids::GroupId,
    member_id: &MemberId,
    member_epoch: i32,
    timers: &mut Vec<TimerOp>,
) {
    for key in [
        TimerKey::ClassicMemberJoin {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            member_epoch,
        },
        TimerKey::ClassicMemberSync {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            member_epoch,
        },
    ] {
        timers.push(TimerOp::Cancel { key });
    }
}
