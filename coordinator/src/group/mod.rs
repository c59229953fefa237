//! A classic group's full state, exactly what a `GroupMetadata` record carries.
//!
//! Kafka keeps part of this in memory only (who has rejoined, who still owes a SyncGroup,
//! pending members, the initial-delay bookkeeping) and loses it on failover. Cohort replicates
//! commands and every replica must reach the same state, so all of it is in the record, and
//! a new leader resumes a rebalance where the old one was.

use crate::ids::{Generation, GroupInstanceId, MemberId, TimestampMs};
use crate::reply::ErrorKind;
use crate::subscription;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

mod vote;

/// Kafka's classic group states, spelled as Kafka spells them (the CLI matches the strings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum GroupState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
    /// Never stored: a deleted group is gone. Reported for unknown groups by DescribeGroups.
    Dead,
}

impl GroupState {
    pub fn as_str(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        }
    }

    pub(crate) fn tag(self) -> u8 {
        match self {
            GroupState::Empty => 0,
            GroupState::PreparingRebalance => 1,
            GroupState::CompletingRebalance => 2,
            GroupState::Stable => 3,
            GroupState::Dead => 4,
        }
    }

    pub(crate) fn from_tag(tag: u8) -> Option<GroupState> {
        Some(match tag {
            0 => GroupState::Empty,
            1 => GroupState::PreparingRebalance,
            2 => GroupState::CompletingRebalance,
            3 => GroupState::Stable,
            4 => GroupState::Dead,
            _ => return None,
        })
    }
}

/// The protocol type of consumer groups; only their subscriptions can be decoded.
pub const CONSUMER_PROTOCOL_TYPE: &str = "consumer";

/// The initial-rebalance delay in progress (Kafka's `tryCompleteInitialRebalanceElseSchedule`
/// arguments): the join phase of a group that left Empty waits `delay_ms`, and is extended
/// while members keep arriving until `remaining_ms` is used up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InitialDelay {
    pub delay_ms: i32,
    pub remaining_ms: i32,
}

/// A member that was given an id with MEMBER_ID_REQUIRED and has not rejoined yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingMember {
    /// Its session timeout bounds how long it may take to rejoin.
    pub session_timeout_ms: i32,
}

/// One member of a classic group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub group_instance_id: Option<GroupInstanceId>,
    pub client_id: String,
    pub client_host: String,
    pub rebalance_timeout_ms: i32,
    pub session_timeout_ms: i32,
    pub protocol_type: String,
    /// (name, metadata) in the member's order of preference.
    pub protocols: Vec<(String, Bytes)>,
    pub assignment: Bytes,
    /// It has a parked JoinGroup: it rejoined during the current PreparingRebalance.
    pub awaiting_join: bool,
    /// It has a parked SyncGroup waiting for the leader's assignment.
    pub awaiting_sync: bool,
    /// It has not completed its first join: the new-member join timeout applies, not the
    /// session timeout.
    pub is_new: bool,
}

impl Member {
    /// Kafka's `hasSatisfiedHeartbeat`: a member parked in a rebalance is alive, unless it is
    /// new (new members time out even while parked).
    pub fn has_satisfied_heartbeat(&self) -> bool {
        !self.is_new && (self.awaiting_join || self.awaiting_sync)
    }

    pub fn metadata_for(&self, protocol: &str) -> Option<&Bytes> {
        self.protocols
            .iter()
            .find(|(name, _)| name == protocol)
            .map(|(_, metadata)| metadata)
    }

    /// Same protocols, same metadata, same order: a rejoin that changes nothing.
    pub fn protocols_match(&self, protocols: &[(String, Bytes)]) -> bool {
        self.protocols == protocols
    }
}

/// A classic group's full replicated state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicGroup {
    pub state: GroupState,
    /// When the group entered `state` (KIP-211 counts retention from the time it became Empty).
    pub state_timestamp: TimestampMs,
    pub generation: Generation,
    /// `None` for a group no member ever joined (simple groups).
    pub protocol_type: Option<String>,
    /// The protocol selected by vote for the current generation.
    pub protocol_name: Option<String>,
    pub leader: Option<MemberId>,
    pub members: BTreeMap<MemberId, Member>,
    /// KIP-394 members that were given an id and have not rejoined with it yet.
    pub pending_members: BTreeMap<MemberId, PendingMember>,
    /// Members of this generation that have not sent SyncGroup yet.
    pub pending_sync: BTreeSet<MemberId>,
    /// The initial-rebalance delay, while the group is in its first join phase after Empty.
    pub initial_delay: Option<InitialDelay>,
    /// A member joined during the initial delay, which extends it.
    pub new_member_added: bool,
    /// When the join phase times out (PreparingRebalance only).
    pub join_deadline: Option<TimestampMs>,
    /// When members still in `pending_sync` are removed.
    pub sync_deadline: Option<TimestampMs>,
}

impl ClassicGroup {
    pub fn new(now_ms: TimestampMs) -> ClassicGroup {
        ClassicGroup {
            state: GroupState::Empty,
            state_timestamp: now_ms,
            generation: Generation(0),
            protocol_type: None,
            protocol_name: None,
            leader: None,
            members: BTreeMap::new(),
            pending_members: BTreeMap::new(),
            pending_sync: BTreeSet::new(),
            initial_delay: None,
            new_member_added: false,
            join_deadline: None,
            sync_deadline: None,
        }
    }

    pub fn is_leader(&self, member_id: &MemberId) -> bool {
        self.leader.as_ref() == Some(member_id)
    }

    pub fn uses_consumer_protocol(&self) -> bool {
        self.protocol_type.as_deref() == Some(CONSUMER_PROTOCOL_TYPE)
    }

    pub fn static_member_id(&self, instance_id: &GroupInstanceId) -> Option<&MemberId> {
        self.members
            .iter()
            .find(|(_, m)| m.group_instance_id.as_ref() == Some(instance_id))
            .map(|(id, _)| id)
    }

    /// Kafka's `validateMember`: the instance id must map to this member id, and the member
    /// must exist.
    pub fn validate_member(
        &self,
        member_id: &MemberId,
        instance_id: Option<&GroupInstanceId>,
    ) -> Result<(), ErrorKind> {
        if let Some(instance_id) = instance_id {
            match self.static_member_id(instance_id) {
                None => return Err(ErrorKind::UnknownMemberId),
                Some(existing) if existing != member_id => return Err(ErrorKind::FencedInstanceId),
                Some(_) => {}
            }
        }
        if !self.members.contains_key(member_id) {
            return Err(ErrorKind::UnknownMemberId);
        }
        Ok(())
    }

    pub fn awaiting_join_count(&self) -> usize {
        self.members.values().filter(|m| m.awaiting_join).count()
    }

    /// Every member has rejoined and no pending member still has to.
    pub fn all_members_joined(&self) -> bool {
        self.members.values().all(|m| m.awaiting_join) && self.pending_members.is_empty()
    }

    /// The largest rebalance timeout of the members: it bounds join and sync phases.
    pub fn rebalance_timeout_ms(&self) -> i32 {
        self.members
            .values()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
    }

    /// Topics the members subscribe to, decoded from their ConsumerProtocol subscriptions for
    /// the selected protocol. `None` when unknown: not a consumer group, no protocol selected,
    /// or a subscription that does not decode.
    pub fn subscribed_topics(&self) -> Option<BTreeSet<String>> {
        if !self.uses_consumer_protocol() {
            return None;
        }
        if self.members.is_empty() {
            return Some(BTreeSet::new());
        }
        let protocol = self.protocol_name.as_deref()?;
        let mut topics = BTreeSet::new();
        for member in self.members.values() {
            let metadata = member.metadata_for(protocol)?;
            let decoded = subscription::decode_topics(metadata).ok()?;
            topics.extend(decoded);
        }
        Some(topics)
    }

    /// Kafka's `isSubscribedToTopic`: when subscriptions are unknown, a consumer group is
    /// assumed subscribed (the safe answer for OffsetDelete and expiry).
    pub fn is_subscribed_to(&self, topic: &str, subscribed: Option<&BTreeSet<String>>) -> bool {
        match subscribed {
            Some(topics) => topics.contains(topic),
            None => self.uses_consumer_protocol(),
        }
    }
}
