//! Timers as data: `decide` asks the leader to arm or cancel them, the leader's timer wheel
//! turns a firing back into a `WriteCommand::TimerFired`.

use crate::ids::{Generation, GroupId, MemberId, TimestampMs, TransactionalId};
use serde::{Deserialize, Serialize};

/// Names one timer. A `Set` for a key that is already armed moves its deadline.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TimerKey {
    /// The join phase of a rebalance that started at `generation`: the initial-rebalance
    /// delay of a group leaving Empty, then the rebalance timeout. Its deadline is part of
    /// the group's state, so a firing that a later command has pushed back is a no-op.
    JoinPhase {
        group_id: GroupId,
        generation: Generation,
    },
    /// Members of `generation` that have not sent SyncGroup by the rebalance timeout are
    /// removed. Deadline kept in the group's state.
    SyncPhase {
        group_id: GroupId,
        generation: Generation,
    },
    /// A member's liveness: its session timeout (re-armed by heartbeats, commits, joins and
    /// syncs, on the leader only), the new-member join timeout of a member in its first join,
    /// or the session timeout of a pending member (KIP-394) that has not rejoined yet. The
    /// same key times out a consumer-protocol member's session (`group.consumer.session.timeout.ms`).
    MemberHeartbeat {
        group_id: GroupId,
        member_id: MemberId,
    },
    /// The periodic KIP-211 offset expiry.
    OffsetsRetention,
    // Appended: logged `TimerFired` commands name variants by index.
    /// A consumer-protocol member asked to revoke partitions at `member_epoch` must have
    /// done so within its rebalance timeout, or it is fenced. Soft state, like sessions: a
    /// new leader re-arms it from its own clock for members still revoking.
    ConsumerRebalance {
        group_id: GroupId,
        member_id: MemberId,
        member_epoch: i32,
    },
    /// An Ongoing transaction that has outlived its `transaction.timeout.ms` is aborted (its
    /// producer fenced). The start time is in the transaction's record, so a firing for a
    /// transaction that has since completed or restarted is re-checked and re-armed.
    TransactionTimeout { transactional_id: TransactionalId },
    /// Kafka's join timeout of a classic member of a consumer group: told at `member_epoch`
    /// to rejoin (REBALANCE_IN_PROGRESS), it must send JoinGroup within its rebalance timeout
    /// or it is fenced. Armed only if absent (`TimerOp::SetIfAbsent`: being told again does
    /// not move it), cancelled by its JoinGroup. Soft state: a new leader re-arms it for the
    /// classic members that must rejoin; a firing once the member has left that epoch is a
    /// no-op.
    ClassicMemberJoin {
        group_id: GroupId,
        member_id: MemberId,
        member_epoch: i32,
    },
    /// Kafka's sync timeout of a classic member of a consumer group: answered JoinGroup at
    /// `member_epoch`, it must send SyncGroup within the rebalance timeout of that join or it
    /// is fenced. Cancelled by its SyncGroup. Not re-armed by a new leader (SyncGroup writes
    /// nothing, so the state cannot tell who has synced; Kafka's `onLoaded` does not either).
    ClassicMemberSync {
        group_id: GroupId,
        member_id: MemberId,
        member_epoch: i32,
    },
}

impl TimerKey {
    /// The group the timer belongs to; `None` for the shard-wide retention timer and the
    /// transaction timers.
    pub fn group_id(&self) -> Option<&GroupId> {
        match self {
            TimerKey::JoinPhase { group_id, .. }
            | TimerKey::SyncPhase { group_id, .. }
            | TimerKey::MemberHeartbeat { group_id, .. }
            | TimerKey::ConsumerRebalance { group_id, .. }
            | TimerKey::ClassicMemberJoin { group_id, .. }
            | TimerKey::ClassicMemberSync { group_id, .. } => Some(group_id),
            TimerKey::OffsetsRetention | TimerKey::TransactionTimeout { .. } => None,
        }
    }

    /// The member the timer belongs to (its session, revocation or classic deadline);
    /// `None` for group- and shard-wide timers.
    pub fn member(&self) -> Option<(&GroupId, &MemberId)> {
        match self {
            TimerKey::MemberHeartbeat {
                group_id,
                member_id,
            }
            | TimerKey::ConsumerRebalance {
                group_id,
                member_id,
                ..
            }
            | TimerKey::ClassicMemberJoin {
                group_id,
                member_id,
                ..
            }
            | TimerKey::ClassicMemberSync {
                group_id,
                member_id,
                ..
            } => Some((group_id, member_id)),
            TimerKey::JoinPhase { .. }
            | TimerKey::SyncPhase { .. }
            | TimerKey::OffsetsRetention
            | TimerKey::TransactionTimeout { .. } => None,
        }
    }
}

/// Arm or cancel a timer on the leader. On firing, the leader submits
/// `WriteCommand::TimerFired { key, now_ms }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TimerOp {
    Set {
        key: TimerKey,
        at_ms: TimestampMs,
    },
    Cancel {
        key: TimerKey,
    },
    /// Arms `key` only if it is not armed already (Kafka's `scheduleIfAbsent`).
    SetIfAbsent {
        key: TimerKey,
        at_ms: TimestampMs,
    },
}

impl TimerOp {
    /// The timer the operation names.
    pub fn key(&self) -> &TimerKey {
        match self {
            TimerOp::Set { key, .. }
            | TimerOp::Cancel { key }
            | TimerOp::SetIfAbsent { key, .. } => key,
        }
    }
}
