//! The value of a `GroupMetadata` record: a classic group's full state, as data.
//!
//! Kafka keeps part of this in memory only (who has rejoined, who still owes a SyncGroup,
//! pending members, the initial-delay bookkeeping) and loses it on failover. Cohort replicates
//! commands and every replica must reach the same state, so all of it is in the record, and
//! a new leader resumes a rebalance where the old one was.
//!
//! Only the shape lives here, beside the codec that writes it; the rules of the classic
//! protocol over it (who may commit, who is the leader, which topics members subscribe to)
//! are the group model's, in `crate::group`.

use crate::ids::{Generation, GroupInstanceId, MemberId, TimestampMs};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

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
}
