//! The values of a consumer-protocol group's records (KIP-848), and the group they make up.
//!
//! Unlike a classic group (one record holds the whole group), a consumer group is spread over
//! records as Kafka spreads it, so that a heartbeat that reconciles one member of a group of
//! thousands writes that member's record only:
//!
//! ```text
//!   ConsumerGroup{group}                 group epoch, target assignment epoch
//!   ConsumerMember{group, member}        what the member told us: subscription, instance id, ...
//!   ConsumerTarget{group, member}        the partitions the assignor gave it at the assignment epoch
//!   ConsumerCurrent{group, member}       member epoch, reconciliation state, assigned and revoking
//! ```
//!
//! Replay keeps the latest value per key and nothing else, so any order of replaying the
//! latest records (a compacted log) rebuilds the same group. A member exists while its
//! `ConsumerMember` record does; a missing `ConsumerCurrent` reads as a fresh member's (epoch
//! 0, nothing assigned). The rules over this shape are the group model's (`crate::group`).

use crate::ids::{GroupInstanceId, MemberId, PartitionIndex, TopicId, TopicName};
use crate::record::assignment::Assignment;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The group-wide record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerGroupValue {
    /// Bumped by every change of membership, subscriptions or subscribed topics' metadata.
    pub group_epoch: i32,
    /// The group epoch the target assignment was computed at (≤ `group_epoch`).
    pub assignment_epoch: i32,
}

/// What a member sent about itself (Kafka's `ConsumerGroupMemberMetadataValue`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerMemberValue {
    pub instance_id: Option<GroupInstanceId>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    /// Sorted, unique.
    pub subscribed_topic_names: Vec<TopicName>,
    pub subscribed_topic_regex: Option<String>,
    pub server_assignor: Option<String>,
    pub rebalance_timeout_ms: i32,
    /// Set for a member that speaks the classic protocol (JoinGroup/SyncGroup/Heartbeat)
    /// inside a consumer group during an online migration (Kafka's `ClassicMemberMetadata`).
    pub classic: Option<ClassicMemberMetadata>,
}

/// What a classic member of a consumer group sent in its JoinGroup: what its session is and
/// what it would need if the group became classic again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicMemberMetadata {
    pub session_timeout_ms: i32,
    /// (name, ConsumerProtocol subscription) in the member's order of preference.
    pub protocols: Vec<(String, Bytes)>,
}

/// Where a member is in its reconciliation (Kafka's `MemberState`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum MemberState {
    /// Owns what its target says at the member epoch.
    #[default]
    Stable,
    /// Must revoke `pending_revocation` before it moves to the next epoch.
    UnrevokedPartitions,
    /// Waits for partitions of its target that their previous owners still hold.
    UnreleasedPartitions,
    /// A state this version does not know (a record from a newer one): the member is fenced
    /// at its next heartbeat unless it owns nothing.
    Unknown,
}

impl MemberState {
    pub fn as_str(self) -> &'static str {
        match self {
            MemberState::Stable => "stable",
            MemberState::UnrevokedPartitions => "unrevoked_partitions",
            MemberState::UnreleasedPartitions => "unreleased_partitions",
            MemberState::Unknown => "unknown",
        }
    }

    pub(crate) fn tag(self) -> u8 {
        match self {
            MemberState::Stable => 0,
            MemberState::UnrevokedPartitions => 1,
            MemberState::UnreleasedPartitions => 2,
            MemberState::Unknown => 127,
        }
    }

    pub(crate) fn from_tag(tag: u8) -> MemberState {
        match tag {
            0 => MemberState::Stable,
            1 => MemberState::UnrevokedPartitions,
            2 => MemberState::UnreleasedPartitions,
            _ => MemberState::Unknown,
        }
    }
}

/// A member's reconciliation (Kafka's `ConsumerGroupCurrentMemberAssignmentValue`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrentAssignment {
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    pub state: MemberState,
    /// What the member may use now.
    pub assigned: Assignment,
    /// What it must give up before its epoch moves on; still its own until it does.
    pub pending_revocation: Assignment,
}

/// One topic as the coordinator knows it (the `Topic{name}` record).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicValue {
    pub id: TopicId,
    pub partitions: i32,
}

/// A consumer-protocol group, as its records make it. `owners` is derived (rebuilt by replay)
/// and left out of equality.
#[derive(Clone, Debug, Default)]
pub struct ConsumerGroup {
    pub epochs: ConsumerGroupValue,
    /// Whether the `ConsumerGroup` record exists (a group can be seen member records first
    /// while a log replays).
    pub has_epochs: bool,
    pub members: BTreeMap<MemberId, ConsumerMemberValue>,
    pub targets: BTreeMap<MemberId, Assignment>,
    pub current: BTreeMap<MemberId, CurrentAssignment>,
    /// Who holds each partition: assigned to it or still being revoked by it.
    owners: BTreeMap<(TopicId, PartitionIndex), MemberId>,
}

impl PartialEq for ConsumerGroup {
    fn eq(&self, other: &Self) -> bool {
        self.epochs == other.epochs
            && self.has_epochs == other.has_epochs
            && self.members == other.members
            && self.targets == other.targets
            && self.current == other.current
    }
}

impl Eq for ConsumerGroup {}

static NO_CURRENT: CurrentAssignment = CurrentAssignment {
    member_epoch: 0,
    previous_member_epoch: 0,
    state: MemberState::Stable,
    assigned: Assignment::EMPTY,
    pending_revocation: Assignment::EMPTY,
};
static NO_TARGET: Assignment = Assignment::EMPTY;

impl ConsumerGroup {
    /// No record left: the group is gone.
    pub fn is_unrecorded(&self) -> bool {
        !self.has_epochs
            && self.members.is_empty()
            && self.targets.is_empty()
            && self.current.is_empty()
    }

    pub fn group_epoch(&self) -> i32 {
        self.epochs.group_epoch
    }

    pub fn assignment_epoch(&self) -> i32 {
        self.epochs.assignment_epoch
    }

    /// A member's reconciliation; a fresh member's when it has no record.
    pub fn current_of(&self, member_id: &MemberId) -> &CurrentAssignment {
        self.current.get(member_id).unwrap_or(&NO_CURRENT)
    }

    /// A member's target; empty when it has none.
    pub fn target_of(&self, member_id: &MemberId) -> &Assignment {
        self.targets.get(member_id).unwrap_or(&NO_TARGET)
    }

    /// The member holding `partition` (assigned, or still revoking it), if any.
    pub fn owner_of(&self, topic: TopicId, partition: PartitionIndex) -> Option<&MemberId> {
        self.owners.get(&(topic, partition))
    }

    /// Whether member `member_id` speaks the classic protocol.
    pub fn uses_classic(&self, member_id: &MemberId) -> bool {
        self.members
            .get(member_id)
            .is_some_and(|m| m.classic.is_some())
    }

    /// How many members speak the classic protocol.
    pub fn classic_member_count(&self) -> usize {
        self.members
            .values()
            .filter(|m| m.classic.is_some())
            .count()
    }

    /// The member with instance id `instance_id`.
    pub fn static_member(&self, instance_id: &GroupInstanceId) -> Option<&MemberId> {
        self.members
            .iter()
            .find(|(_, m)| m.instance_id.as_ref() == Some(instance_id))
            .map(|(id, _)| id)
    }

    // Replay: each replaces the value under its key.

    pub fn put_epochs(&mut self, value: Option<ConsumerGroupValue>) {
        self.has_epochs = value.is_some();
        self.epochs = value.unwrap_or_default();
    }

    pub fn put_member(&mut self, member_id: &MemberId, value: Option<&ConsumerMemberValue>) {
        match value {
            Some(v) => {
                self.members.insert(member_id.clone(), v.clone());
            }
            None => {
                self.members.remove(member_id);
            }
        }
    }

    pub fn put_target(&mut self, member_id: &MemberId, value: Option<&Assignment>) {
        match value {
            Some(v) => {
                self.targets.insert(member_id.clone(), v.clone());
            }
            None => {
                self.targets.remove(member_id);
            }
        }
    }

    pub fn put_current(&mut self, member_id: &MemberId, value: Option<&CurrentAssignment>) {
        if let Some(old) = self.current.remove(member_id) {
            for key in old.assigned.iter().chain(old.pending_revocation.iter()) {
                if self.owners.get(&key) == Some(member_id) {
                    self.owners.remove(&key);
                }
            }
        }
        if let Some(v) = value {
            for key in v.assigned.iter().chain(v.pending_revocation.iter()) {
                self.owners.insert(key, member_id.clone());
            }
            self.current.insert(member_id.clone(), v.clone());
        }
    }

    /// Recomputes the owner index from scratch, for tests of the incremental one.
    pub fn owners_from_scratch(&self) -> BTreeMap<(TopicId, PartitionIndex), MemberId> {
        let mut owners = BTreeMap::new();
        for (id, c) in &self.current {
            for key in c.assigned.iter().chain(c.pending_revocation.iter()) {
                owners.insert(key, id.clone());
            }
        }
        owners
    }

    pub fn owners(&self) -> &BTreeMap<(TopicId, PartitionIndex), MemberId> {
        &self.owners
    }
}
