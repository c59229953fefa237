//! Classic members of a consumer group (Kafka's `classicGroupJoinToConsumerGroup`,
//! `classicGroupSyncToConsumerGroup`, `classicGroupHeartbeatToConsumerGroup`,
//! `classicGroupLeaveToConsumerGroup`): a member that speaks JoinGroup/SyncGroup/Heartbeat
//! is a member of the consumer group like any other, reconciled towards the server-side
//! target; the classic calls are only its way of asking.
//!
//! ```text
//!   JoinGroup ─▶ member resolved ─▶ subscription decoded ─▶ member record (+ classic protocols,
//!              session) ─▶ group epoch + 1 if the subscription changed ─▶ target ─▶ reconcile
//!              with the owned partitions the subscription reports ─▶ answered at once:
//!              generation = member epoch, no leader, no member list (nothing to assign);
//!              join deadline cancelled, sync deadline armed (rebalance timeout)
//!              (a static member replacing the last consumer-protocol member: downgrade.rs)
//!   SyncGroup ─▶ the member's assigned partitions, ConsumerProtocol-encoded (no record);
//!                sync deadline cancelled
//!   Heartbeat ─▶ REBALANCE_IN_PROGRESS while the member must rejoin (read only); the join
//!                deadline armed if absent (so does SyncGroup's REBALANCE_IN_PROGRESS)
//!   LeaveGroup ─▶ members removed, group epoch + 1, target recomputed
//!   join/sync deadline fires ─▶ the member fenced as a session expiry would (consumer_group::timers)
//! ```
//!
//! Errors in Kafka's order (Kafka 4.x `GroupMetadataManager`, with KAFKA-20640 and
//! KAFKA-20662). JoinGroup errors Kafka throws are answered without a member id; only
//! MEMBER_ID_REQUIRED carries the minted one.
//!
//! | error                          | when                                                    |
//! |--------------------------------|---------------------------------------------------------|
//! | INCONSISTENT_GROUP_PROTOCOL    | JoinGroup under policy `disabled`, before anything else (KAFKA-20640: new, rejoining and replacing members alike); protocol type not `consumer` or no protocol every classic member supports; a subscription that does not decode, checked once the member is resolved (KAFKA-20662); SyncGroup's type/name differ |
//! | GROUP_MAX_SIZE_REACHED         | a new member and `group.consumer.max.size` members       |
//! | MEMBER_ID_REQUIRED             | a dynamic member without id on JoinGroup v4+            |
//! | UNKNOWN_MEMBER_ID              | no such member; a consumer-protocol member's id; an unknown instance id |
//! | FENCED_INSTANCE_ID             | the instance id belongs to another member id            |
//! | ILLEGAL_GENERATION             | SyncGroup/Heartbeat generation ≠ the member's epoch      |
//! | REBALANCE_IN_PROGRESS          | SyncGroup/Heartbeat while the member must rejoin: behind the target assignment's epoch (KAFKA-20272; not the group epoch), revoking, or what it waits for is free |

use crate::command::{Heartbeat, JoinGroup, LeaveGroup, SyncGroup};
use crate::config::{Config, MigrationPolicy};
use crate::consumer_group::heartbeat::{cancel_member_timers, mint_member_id, store_reconciled};
use crate::consumer_group::reconcile::Step;
use crate::consumer_group::target::{maybe_assign, subscribed_ids};
use crate::consumer_group::timers::classic_must_rejoin;
use crate::consumer_group::upgrade::by_id;
use crate::consumer_group::{finish, Plan};
use crate::group::CONSUMER_PROTOCOL_TYPE;
use crate::ids::{GroupId, GroupInstanceId, MemberId, TopicName};
use crate::index::topics::TopicImage;
use crate::index::GroupIndex;
use crate::migration::downgrade;
use crate::outcome::{Outcome, ReadOutcome};
use crate::record::assignment::Assignment;
use crate::record::consumer_group::{
    ClassicMemberMetadata, ConsumerGroup, ConsumerMemberValue, CurrentAssignment, MemberState,
};
use crate::reply::{
    ErrorKind, JoinResponse, LeaveMemberResult, LeaveResponse, Reply, SyncResponse,
};
use crate::subscription;
use crate::timer::{TimerKey, TimerOp};
use bytes::Bytes;
use std::collections::BTreeMap;

/// JoinGroup v4+ makes a new dynamic member come back with a minted id (KIP-394).
const MEMBER_ID_REQUIRED_MIN_VERSION: i16 = 4;

/// Kafka's `supportsClassicProtocols` for a non-empty group: the type is `consumer` and one of
/// the protocols is supported by every classic member (any, when there is none).
fn supports(group: &ConsumerGroup, protocol_type: &str, protocols: &[(String, Bytes)]) -> bool {
    if protocol_type != CONSUMER_PROTOCOL_TYPE || protocols.is_empty() {
        return false;
    }
    let classic: Vec<&ClassicMemberMetadata> = group
        .members
        .values()
        .filter_map(|m| m.classic.as_ref())
        .collect();
    protocols.iter().any(|(name, _)| {
        classic
            .iter()
            .all(|c| c.protocols.iter().any(|(n, _)| n == name))
    })
}

/// Kafka's `validateConsumerGroupMember`: by instance id when there is one.
fn validate_member(
    group: &ConsumerGroup,
    member_id: &MemberId,
    instance_id: Option<&GroupInstanceId>,
) -> Result<MemberId, ErrorKind> {
    let id = match instance_id {
        None => member_id.clone(),
        Some(instance) => {
            let existing = group
                .static_member(instance)
                .ok_or(ErrorKind::UnknownMemberId)?;
            if existing != member_id {
                return Err(ErrorKind::FencedInstanceId);
            }
            existing.clone()
        }
    };
    if !group.members.contains_key(&id) {
        return Err(ErrorKind::UnknownMemberId);
    }
    // Kafka's `throwIfMemberDoesNotUseClassicProtocol`.
    if !group.uses_classic(&id) {
        return Err(ErrorKind::UnknownMemberId);
    }
    Ok(id)
}

/// The assignment as the member's ConsumerProtocol version encodes it (topic names from the
/// topic image; a topic deleted meanwhile is left out).
fn encode_assignment(
    member: &ConsumerMemberValue,
    assigned: &Assignment,
    image: &TopicImage,
) -> Bytes {
    let version = member
        .classic
        .as_ref()
        .and_then(|c| c.protocols.first())
        .and_then(|(_, md)| subscription::version_of(md))
        .unwrap_or(0);
    let named: Vec<(String, Vec<i32>)> = assigned
        .topics()
        .filter_map(|(id, partitions)| {
            let name = image.name_of(id)?;
            Some((
                name.as_str().to_owned(),
                partitions.iter().map(|p| p.0).collect(),
            ))
        })
        .collect();
    let refs: Vec<(&str, &[i32])> = named
        .iter()
        .map(|(n, p)| (n.as_str(), p.as_slice()))
        .collect();
    Bytes::from(subscription::encode_assignment(version, &refs))
}

/// An error Kafka's `classicGroupJoinToConsumerGroup` throws: the service answers it with
/// no member id (`new JoinGroupResponseData().setErrorCode(..)`).
fn join_error(error: ErrorKind) -> Outcome {
    Outcome::reply(Reply::Join(JoinResponse::error(error, MemberId::default())))
}

/// The answer to a classic member's JoinGroup: at once, with nothing to assign (the
/// coordinator is the assignor).
fn joined(c: &JoinGroup, member_id: MemberId, generation: i32) -> JoinResponse {
    JoinResponse {
        error: None,
        generation: crate::ids::Generation(generation),
        protocol_type: Some(CONSUMER_PROTOCOL_TYPE.to_owned()),
        protocol_name: c.protocols.first().map(|p| p.name.clone()),
        leader: MemberId::default(),
        member_id,
        members: Vec::new(),
        skip_assignment: false,
    }
}

/// A JoinGroup answered: the join deadline the member was given at its previous epoch ends,
/// and so does a sync deadline of that epoch it never met by syncing.
fn push_join_done(
    group_id: &GroupId,
    member_id: &MemberId,
    before: &CurrentAssignment,
    next: &CurrentAssignment,
    timers: &mut Vec<TimerOp>,
) {
    timers.push(TimerOp::Cancel {
        key: TimerKey::ClassicMemberJoin {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            member_epoch: before.member_epoch,
        },
    });
    if before.member_epoch != next.member_epoch {
        timers.push(TimerOp::Cancel {
            key: TimerKey::ClassicMemberSync {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
                member_epoch: before.member_epoch,
            },
        });
    }
}

/// JoinGroup from a classic member to a consumer group with members.
pub(crate) fn join(
    config: &Config,
    groups: &GroupIndex,
    group: &ConsumerGroup,
    c: &JoinGroup,
) -> Outcome {
    // KAFKA-20640: with neither upgrade nor downgrade allowed, a group never becomes mixed.
    if config.consumer_migration_policy == MigrationPolicy::Disabled {
        return join_error(ErrorKind::InconsistentGroupProtocol);
    }
    let unknown = c.member_id.is_empty();
    let member_id = if unknown {
        mint_member_id(c.nonce)
    } else {
        c.member_id.clone()
    };
    let protocols: Vec<(String, Bytes)> = c
        .protocols
        .iter()
        .map(|p| (p.name.clone(), p.metadata.clone()))
        .collect();
    let max = config.max_consumer_members();
    if !group.members.contains_key(&member_id) && group.members.len() >= max {
        return join_error(ErrorKind::GroupMaxSizeReached);
    }
    if !supports(group, &c.protocol_type, &protocols) {
        return join_error(ErrorKind::InconsistentGroupProtocol);
    }
    if unknown && c.group_instance_id.is_none() && c.api_version.0 >= MEMBER_ID_REQUIRED_MIN_VERSION
    {
        // Answered, not thrown: the minted id goes back.
        return Outcome::reply(Reply::Join(JoinResponse::error(
            ErrorKind::MemberIdRequired,
            member_id,
        )));
    }

    let mut plan = Plan::new(&c.group_id, Some(group));
    let mut timers = Vec::new();
    let mut replaced: Option<MemberId> = None;
    let (base_member, base_current) = match &c.group_instance_id {
        None => match plan.member(&member_id) {
            // A consumer-protocol member's id is not a classic member's.
            Some(m) if m.classic.is_none() => return join_error(ErrorKind::UnknownMemberId),
            Some(m) => (Some(m.clone()), plan.current(&member_id)),
            // Kafka creates a dynamic member under any id it is given.
            None => (None, CurrentAssignment::default()),
        },
        Some(instance) => match group.static_member(instance).cloned() {
            None if unknown => (None, CurrentAssignment::default()),
            None => return join_error(ErrorKind::UnknownMemberId),
            Some(old) if unknown => {
                // A restarted static member takes its previous incarnation's place and
                // partitions; it owns what its subscription says.
                let old_member = plan.member(&old).cloned();
                let old_current = plan.current(&old);
                let target = plan.target(&old).clone();
                cancel_member_timers(&c.group_id, &old, &old_current, &mut timers);
                plan.remove_member(&old);
                plan.set_target(&member_id, Some(target));
                replaced = Some(old);
                (
                    old_member,
                    CurrentAssignment {
                        member_epoch: 0,
                        previous_member_epoch: 0,
                        state: MemberState::Stable,
                        assigned: old_current.assigned,
                        pending_revocation: Assignment::new(),
                    },
                )
            }
            Some(old) if old != member_id => return join_error(ErrorKind::FencedInstanceId),
            Some(old) => (plan.member(&old).cloned(), plan.current(&old)),
        },
    };
    let new_member = base_member.is_none();
    let base_member = base_member.unwrap_or_default();
    // Kafka: a static member taking the place of the last consumer-protocol member turns the
    // group classic, if the policy allows (checked on the group before this join).
    let downgrade = c
        .group_instance_id
        .as_ref()
        .and_then(|i| group.static_member(i))
        .filter(|existing| downgrade::allowed_replacing(config, group, existing))
        .cloned();
    // Every protocol carries the same subscription: Kafka reads the first, once the member
    // is known (KAFKA-20662: INCONSISTENT_GROUP_PROTOCOL when it does not decode).
    let Some(sub) = protocols
        .first()
        .and_then(|(_, md)| subscription::decode(md).ok())
    else {
        return join_error(ErrorKind::InconsistentGroupProtocol);
    };

    let mut updated = base_member.clone();
    if let Some(i) = &c.group_instance_id {
        updated.instance_id = Some(i.clone());
    }
    if let Some(rack) = &sub.rack {
        updated.rack_id = Some(rack.clone());
    }
    if c.rebalance_timeout_ms != -1 {
        updated.rebalance_timeout_ms = c.rebalance_timeout_ms;
    }
    let mut topics: Vec<TopicName> = sub.topics.iter().cloned().map(TopicName::new).collect();
    topics.sort();
    topics.dedup();
    updated.subscribed_topic_names = topics;
    updated.client_id = c.client_id.clone();
    updated.client_host = c.client_host.clone();
    updated.classic = Some(ClassicMemberMetadata {
        session_timeout_ms: c.session_timeout_ms,
        protocols,
    });
    let subscription_changed = new_member
        || updated.subscribed_topic_names != base_member.subscribed_topic_names
        || updated.subscribed_topic_regex != base_member.subscribed_topic_regex;
    if new_member || replaced.is_some() || Some(&updated) != plan.member(&member_id) {
        plan.set_member(&member_id, Some(updated.clone()));
    }
    if subscription_changed {
        plan.bump_group_epoch();
    }
    // KAFKA-20273: a downgrade rebalances only when the assignment has become stale.
    let stale_assignment = plan.epochs.group_epoch > group.assignment_epoch();
    if downgrade.is_none() || stale_assignment {
        maybe_assign(&mut plan, &groups.topic_image, config);
    }

    let image = &groups.topic_image;
    let subscribed = subscribed_ids(&updated, image, &mut BTreeMap::new());
    let owned = by_id(image, &sub.owned);
    let target = plan.target(&member_id).clone();
    let step = Step {
        current: &base_current,
        target_epoch: plan.epochs.assignment_epoch,
        target: &target,
        subscribed: &subscribed,
        owned: Some(&owned),
    };
    let base = plan.base;
    let is_free = |t, p| match base.owner_of(t, p) {
        None => true,
        Some(owner) => {
            *owner == member_id || replaced.as_ref() == Some(owner) || plan.removed(owner)
        }
    };
    // A member in a state of a newer version (`Fenced`) starts over, as a fenced one would.
    let next = step.run(is_free).unwrap_or_default();
    if let Some(replaced) = downgrade {
        // A stale assignment is not reconciled: the classic group rebalances anyway.
        let generation = if stale_assignment {
            base_current.member_epoch
        } else {
            next.member_epoch
        };
        let reply = Reply::Join(joined(c, member_id.clone(), generation));
        let conversion = downgrade::Conversion {
            config,
            group_id: &c.group_id,
            group,
            image,
            now: c.now_ms,
        };
        return downgrade::after_replace(
            conversion,
            &replaced,
            (&member_id, &updated),
            stale_assignment,
            reply,
        );
    }
    let before = plan.current(&member_id);
    store_reconciled(
        &mut plan,
        &c.group_id,
        &member_id,
        (&before, &next),
        c.now_ms
            .plus_ms(i64::from(updated.rebalance_timeout_ms.max(0))),
        c.now_ms.plus_ms(i64::from(c.session_timeout_ms.max(0))),
        &mut timers,
    );
    // Told to rejoin at its previous epoch, it has; it must sync within this join's
    // rebalance timeout (Kafka arms the sync deadline afresh at every join).
    push_join_done(&c.group_id, &member_id, &before, &next, &mut timers);
    timers.push(TimerOp::Set {
        key: TimerKey::ClassicMemberSync {
            group_id: c.group_id.clone(),
            member_id: member_id.clone(),
            member_epoch: next.member_epoch,
        },
        at_ms: c
            .now_ms
            .plus_ms(i64::from(updated.rebalance_timeout_ms.max(0))),
    });
    let response = joined(c, member_id, next.member_epoch);
    finish(plan, Reply::Join(response), timers)
}

/// SyncGroup from a classic member of a consumer group: its assigned partitions.
pub(crate) fn sync(groups: &GroupIndex, group: &ConsumerGroup, c: &SyncGroup) -> Outcome {
    let fail = |e| Outcome::reply(Reply::Sync(SyncResponse::error(e)));
    let member_id = match validate_member(group, &c.member_id, c.group_instance_id.as_ref()) {
        Ok(id) => id,
        Err(e) => return fail(e),
    };
    let current = group.current_of(&member_id);
    if c.generation.0 != current.member_epoch {
        return fail(ErrorKind::IllegalGeneration);
    }
    let Some(member) = group.members.get(&member_id) else {
        return fail(ErrorKind::UnknownMemberId);
    };
    let protocol_name = member
        .classic
        .as_ref()
        .and_then(|m| m.protocols.first())
        .map(|(n, _)| n.as_str());
    let type_differs = c
        .protocol_type
        .as_deref()
        .is_some_and(|t| t != CONSUMER_PROTOCOL_TYPE);
    let name_differs = c
        .protocol_name
        .as_deref()
        .is_some_and(|n| Some(n) != protocol_name);
    if type_differs || name_differs {
        return fail(ErrorKind::InconsistentGroupProtocol);
    }
    // Kafka's `throwIfRebalanceInProgress`: a member still revoking finishes that first; the
    // member told to rejoin has its rebalance timeout to do so. Told only once a newer target
    // assignment exists (KAFKA-20272): not while the group epoch runs ahead of its target.
    if group.assignment_epoch() > current.member_epoch
        && current.state != MemberState::UnrevokedPartitions
    {
        let mut outcome = fail(ErrorKind::RebalanceInProgress);
        outcome
            .timers
            .push(join_deadline(&c.group_id, &member_id, group, c.now_ms));
        return outcome;
    }
    let session_ms = member.classic.as_ref().map_or(0, |m| m.session_timeout_ms);
    let mut outcome = Outcome::reply(Reply::Sync(SyncResponse {
        error: None,
        protocol_type: c.protocol_type.clone(),
        protocol_name: c.protocol_name.clone(),
        assignment: encode_assignment(member, &current.assigned, &groups.topic_image),
    }));
    // Synced: the sync deadline of its join ends, its session goes on.
    outcome.timers.push(TimerOp::Cancel {
        key: TimerKey::ClassicMemberSync {
            group_id: c.group_id.clone(),
            member_id: member_id.clone(),
            member_epoch: current.member_epoch,
        },
    });
    outcome.timers.push(TimerOp::Set {
        key: TimerKey::MemberHeartbeat {
            group_id: c.group_id.clone(),
            member_id,
        },
        at_ms: c.now_ms.plus_ms(i64::from(session_ms.max(0))),
    });
    outcome
}

/// Kafka's `scheduleConsumerGroupJoinTimeoutIfAbsent`: told to rejoin, the member must do so
/// within its rebalance timeout, counted from the first time it was told.
fn join_deadline(
    group_id: &GroupId,
    member_id: &MemberId,
    group: &ConsumerGroup,
    now: crate::ids::TimestampMs,
) -> TimerOp {
    let rebalance_ms = group
        .members
        .get(member_id)
        .map_or(0, |m| m.rebalance_timeout_ms.max(0));
    TimerOp::SetIfAbsent {
        key: TimerKey::ClassicMemberJoin {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            member_epoch: group.current_of(member_id).member_epoch,
        },
        at_ms: now.plus_ms(i64::from(rebalance_ms)),
    }
}

/// Heartbeat from a classic member of a consumer group (read only): its session is re-armed;
/// REBALANCE_IN_PROGRESS when it must rejoin (the group moved on, it has partitions to
/// revoke, or what it waited for is free).
pub(crate) fn heartbeat(group: &ConsumerGroup, c: &Heartbeat) -> ReadOutcome {
    let answer = |result| ReadOutcome {
        reply: Reply::Heartbeat(result),
        timers: Vec::new(),
    };
    let member_id = match validate_member(group, &c.member_id, c.group_instance_id.as_ref()) {
        Ok(id) => id,
        Err(e) => return answer(Err(e)),
    };
    let current = group.current_of(&member_id);
    if c.generation.0 != current.member_epoch {
        return answer(Err(ErrorKind::IllegalGeneration));
    }
    let session_ms = group
        .members
        .get(&member_id)
        .and_then(|m| m.classic.as_ref())
        .map_or(0, |m| m.session_timeout_ms);
    let rejoin = classic_must_rejoin(group, &member_id);
    let mut timers = vec![TimerOp::Set {
        key: TimerKey::MemberHeartbeat {
            group_id: c.group_id.clone(),
            member_id: member_id.clone(),
        },
        at_ms: c.now_ms.plus_ms(i64::from(session_ms.max(0))),
    }];
    if rejoin {
        timers.push(join_deadline(&c.group_id, &member_id, group, c.now_ms));
    }
    ReadOutcome {
        reply: Reply::Heartbeat(if rejoin {
            Err(ErrorKind::RebalanceInProgress)
        } else {
            Ok(())
        }),
        timers,
    }
}

/// LeaveGroup to a consumer group: classic members leave; the group epoch moves on once.
pub(crate) fn leave(
    config: &Config,
    groups: &GroupIndex,
    group: &ConsumerGroup,
    c: &LeaveGroup,
) -> Outcome {
    let mut plan = Plan::new(&c.group_id, Some(group));
    let mut timers = Vec::new();
    let mut results = Vec::with_capacity(c.members.len());
    let mut any_left = false;
    for leaving in &c.members {
        let found = match &leaving.group_instance_id {
            None => {
                if group.uses_classic(&leaving.member_id) {
                    Ok(leaving.member_id.clone())
                } else {
                    Err(ErrorKind::UnknownMemberId)
                }
            }
            Some(instance) => match group.static_member(instance) {
                None => Err(ErrorKind::UnknownMemberId),
                // An admin removes a static member by instance id alone.
                Some(id) if !leaving.member_id.is_empty() && *id != leaving.member_id => {
                    Err(ErrorKind::FencedInstanceId)
                }
                Some(id) if !group.uses_classic(id) => Err(ErrorKind::UnknownMemberId),
                Some(id) => Ok(id.clone()),
            },
        };
        let error = match found {
            Ok(id) if plan.removed(&id) => None,
            Ok(id) => {
                cancel_member_timers(&c.group_id, &id, group.current_of(&id), &mut timers);
                plan.remove_member(&id);
                any_left = true;
                None
            }
            Err(e) => Some(e),
        };
        results.push(LeaveMemberResult {
            member_id: leaving.member_id.clone(),
            group_instance_id: leaving.group_instance_id.clone(),
            error,
        });
    }
    if any_left {
        plan.bump_group_epoch();
        maybe_assign(&mut plan, &groups.topic_image, config);
    }
    finish(
        plan,
        Reply::Leave(LeaveResponse {
            error: None,
            members: results,
        }),
        timers,
    )
}
