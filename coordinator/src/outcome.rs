//! Effects as data: what `decide` returns instead of doing anything.

use crate::ids::{Generation, GroupId, MemberId, TimestampMs};
use crate::record::Record;
use crate::reply::Reply;
use serde::{Deserialize, Serialize};

/// What a write command produces on every replica. The runtime applies it as
/// `for r in &outcome.records { state.replay(r) }`; only the leader acts on `reply`,
/// `member_replies` and `timers`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Records to replay, in order. They carry every state change the command makes.
    pub records: Vec<Record>,
    /// The answer to the request that carried this command. [`Reply::Parked`] means the
    /// answer comes later as a member reply addressed to the same `(group, member, kind)`.
    pub reply: Reply,
    /// Answers to *earlier* parked requests that this command completes, addressed by member
    /// (never the request that carried this command: its answer is in `reply`).
    pub member_replies: Vec<MemberReply>,
    /// Timers for the leader to arm or cancel.
    pub timers: Vec<TimerOp>,
}

impl Outcome {
    pub(crate) fn reply(reply: Reply) -> Outcome {
        Outcome {
            records: Vec::new(),
            reply,
            member_replies: Vec::new(),
            timers: Vec::new(),
        }
    }
}

/// What a read command produces: an answer and, for a heartbeat, a re-armed session timer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadOutcome {
    pub reply: Reply,
    pub timers: Vec<TimerOp>,
}

/// Which kind of parked request a member reply completes. A member has at most one parked
/// request of each kind; a newer one supersedes an older one (the runtime may answer the
/// superseded request or drop it: its client has given up on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ParkedKind {
    Join,
    Sync,
}

/// An answer to a parked request of `member` in `group`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemberReply {
    pub group_id: GroupId,
    pub member_id: MemberId,
    pub kind: ParkedKind,
    pub reply: Reply,
}

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
    /// or the session timeout of a pending member (KIP-394) that has not rejoined yet.
    MemberHeartbeat {
        group_id: GroupId,
        member_id: MemberId,
    },
    /// The periodic KIP-211 offset expiry.
    OffsetsRetention,
}

impl TimerKey {
    /// The group the timer belongs to; `None` for the shard-wide retention timer.
    pub fn group_id(&self) -> Option<&GroupId> {
        match self {
            TimerKey::JoinPhase { group_id, .. }
            | TimerKey::SyncPhase { group_id, .. }
            | TimerKey::MemberHeartbeat { group_id, .. } => Some(group_id),
            TimerKey::OffsetsRetention => None,
        }
    }
}

/// Arm or cancel a timer on the leader. On firing, the leader submits
/// `WriteCommand::TimerFired { key, now_ms }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TimerOp {
    Set { key: TimerKey, at_ms: TimestampMs },
    Cancel { key: TimerKey },
}
