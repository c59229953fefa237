//! The classic group model: the rules of Kafka's classic protocol over a group's recorded
//! state (`crate::record::group_metadata`): member validation, the leader, who has rejoined,
//! the protocol vote, the topics members subscribe to; and the effects a handler gathers
//! while it mutates a scratch copy of a group.

use crate::ids::{GroupInstanceId, MemberId};
use crate::reply::ErrorKind;
use crate::subscription;
use bytes::Bytes;
use std::collections::BTreeSet;

pub mod consumer;
pub(crate) mod effects;
pub mod topic_regex;
mod vote;

pub(crate) use effects::{field_too_long, invalid_member_api_group_id, Effects};

pub use crate::record::group_metadata::{
    ClassicGroup, GroupState, InitialDelay, Member, PendingMember, CONSUMER_PROTOCOL_TYPE,
};

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

impl ClassicGroup {
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
