//! The consumer-protocol group model (KIP-848): rules over a `ConsumerGroup`'s records that
//! the concerns share (its state, who may commit or fetch offsets, which topics it uses, the
//! records that delete it). The heartbeat itself is the `consumer_group` concern's.

use super::topic_regex::TopicRegex;
use crate::ids::{ApiVersion, GroupId, MemberId};
use crate::record::consumer_group::{ConsumerGroup, MemberState};
use crate::record::Record;
use crate::reply::{ConsumerGroupState, ErrorKind};
use std::collections::BTreeMap;

/// From this OffsetCommit version a consumer-protocol member's commit is fenced by its epoch;
/// below it such a member gets UNSUPPORTED_VERSION (Kafka's `ConsumerGroup.validateOffsetCommit`).
pub const OFFSET_COMMIT_MEMBER_EPOCH_MIN_VERSION: i16 = 9;

/// Kafka's `ConsumerGroup.maybeUpdateGroupState`.
pub fn state(group: &ConsumerGroup) -> ConsumerGroupState {
    if group.members.is_empty() {
        ConsumerGroupState::Empty
    } else if group.group_epoch() > group.assignment_epoch() {
        ConsumerGroupState::Assigning
    } else if group
        .members
        .keys()
        .any(|id| !is_reconciled_to(group, id, group.assignment_epoch()))
    {
        ConsumerGroupState::Reconciling
    } else {
        ConsumerGroupState::Stable
    }
}

/// Kafka's `isReconciledTo`: at the epoch, and stable.
pub fn is_reconciled_to(group: &ConsumerGroup, member_id: &MemberId, epoch: i32) -> bool {
    let current = group.current_of(member_id);
    current.member_epoch == epoch && current.state == MemberState::Stable
}

/// Kafka's `ConsumerGroup.validateOffsetCommit`: an epoch below zero on a
/// group without members is an admin or manual commit and is accepted; otherwise the member
/// must exist (UNKNOWN_MEMBER_ID), commit with OffsetCommit v9+ unless transactional
/// (UNSUPPORTED_VERSION) and
/// carry its current member epoch (STALE_MEMBER_EPOCH).
pub fn validate_offset_commit(
    group: &ConsumerGroup,
    member_id: &MemberId,
    member_epoch: i32,
    api_version: ApiVersion,
    transactional: bool,
) -> Result<(), ErrorKind> {
    if member_epoch < 0 && group.members.is_empty() {
        return Ok(());
    }
    if !group.members.contains_key(member_id) {
        return Err(ErrorKind::UnknownMemberId);
    }
    let classic = group.uses_classic(member_id);
    // TxnOffsetCommit carries the member epoch from v3 whatever the protocol; a classic
    // member of the group commits with its generation at any version.
    if !transactional && !classic && api_version.0 < OFFSET_COMMIT_MEMBER_EPOCH_MIN_VERSION {
        return Err(ErrorKind::UnsupportedVersion);
    }
    validate_member_epoch(group, member_id, member_epoch)
}

/// Kafka's `validateMemberEpoch`: a classic member's wrong generation is ILLEGAL_GENERATION,
/// a consumer-protocol member's wrong epoch STALE_MEMBER_EPOCH.
fn validate_member_epoch(
    group: &ConsumerGroup,
    member_id: &MemberId,
    member_epoch: i32,
) -> Result<(), ErrorKind> {
    if member_epoch == group.current_of(member_id).member_epoch {
        Ok(())
    } else if group.uses_classic(member_id) {
        Err(ErrorKind::IllegalGeneration)
    } else {
        Err(ErrorKind::StaleMemberEpoch)
    }
}

/// Kafka's `ConsumerGroup.validateOffsetFetch`: no member id and a negative epoch (admin
/// tools, classic clients) is accepted; otherwise the member must exist with that epoch.
pub fn validate_offset_fetch(
    group: &ConsumerGroup,
    member_id: Option<&MemberId>,
    member_epoch: i32,
) -> Result<(), ErrorKind> {
    let Some(member_id) = member_id else {
        return if member_epoch < 0 {
            Ok(())
        } else {
            Err(ErrorKind::UnknownMemberId)
        };
    };
    if !group.members.contains_key(member_id) {
        return Err(ErrorKind::UnknownMemberId);
    }
    validate_member_epoch(group, member_id, member_epoch)
}

/// Whether any member subscribes to `topic`, by name or by regular expression (Kafka's
/// `isSubscribedToTopic`, which OffsetDelete and offset expiry ask).
pub fn is_subscribed_to(group: &ConsumerGroup, topic: &str) -> bool {
    let mut regexes: BTreeMap<&str, bool> = BTreeMap::new();
    for m in group.members.values() {
        if m.subscribed_topic_names
            .binary_search_by(|n| n.as_str().cmp(topic))
            .is_ok()
        {
            return true;
        }
        if let Some(pattern) = &m.subscribed_topic_regex {
            let hit = *regexes
                .entry(pattern.as_str())
                .or_insert_with(|| TopicRegex::new(pattern).is_ok_and(|r| r.matches(topic)));
            if hit {
                return true;
            }
        }
    }
    false
}

/// The server assignor the group uses: the one most members name (ties to the smaller
/// name, so every replica picks the same), else `default`.
pub fn preferred_assignor<'a>(group: &'a ConsumerGroup, default: &'a str) -> &'a str {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for m in group.members.values() {
        if let Some(a) = &m.server_assignor {
            *counts.entry(a.as_str()).or_default() += 1;
        }
    }
    let mut best: Option<(&str, usize)> = None;
    for (name, count) in counts {
        if best.is_none_or(|(_, c)| count > c) {
            best = Some((name, count));
        }
    }
    best.map_or(default, |(name, _)| name)
}

/// The tombstones that delete the whole group, in Kafka's order (current assignments,
/// targets, members, then the group record).
pub fn tombstones(group_id: &GroupId, group: &ConsumerGroup) -> Vec<Record> {
    let mut out = Vec::new();
    for member_id in group.current.keys() {
        out.push(Record::ConsumerCurrent {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            value: None,
        });
    }
    for member_id in group.targets.keys() {
        out.push(Record::ConsumerTarget {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            value: None,
        });
    }
    for member_id in group.members.keys() {
        out.push(Record::ConsumerMember {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            value: None,
        });
    }
    if group.has_epochs {
        out.push(Record::ConsumerGroup {
            group_id: group_id.clone(),
            value: None,
        });
    }
    out
}
