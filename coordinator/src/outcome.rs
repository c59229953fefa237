//! Effects as data: what `decide` returns instead of doing anything.

use crate::ids::{
    GroupId, MemberId, PartitionIndex, ProducerEpoch, ProducerId, TopicName, TransactionalId,
};
use crate::record::Record;
use crate::reply::{ParkedKind, Reply};
use crate::timer::TimerOp;
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
    /// Consumer groups whose target assignment is too large to compute inside `decide`: the
    /// leader computes it off the request path (`CoordinatorState::assignment_job`) and
    /// submits the result as `WriteCommand::InstallTargetAssignment`.
    pub assignments: Vec<AssignmentNeeded>,
    /// Transactions that entered PrepareCommit or PrepareAbort: the leader writes their
    /// markers to every data partition, then submits `WriteCommand::TxnMarkersWritten`.
    pub txn_markers: Vec<TxnMarkers>,
}

/// The markers one completing transaction owes (Kafka's `WriteTxnMarkers` entry).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnMarkers {
    pub transactional_id: TransactionalId,
    pub producer_id: ProducerId,
    /// The epoch the markers carry (after a fence, the bumped one).
    pub producer_epoch: ProducerEpoch,
    /// COMMIT or ABORT.
    pub commit: bool,
    /// The data partitions to write a control batch to; may be empty (offsets only).
    pub partitions: Vec<(TopicName, Vec<PartitionIndex>)>,
}

/// A consumer group that needs a target assignment for `epoch`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssignmentNeeded {
    pub group_id: GroupId,
    pub epoch: i32,
}

impl Outcome {
    pub(crate) fn reply(reply: Reply) -> Outcome {
        Outcome {
            records: Vec::new(),
            reply,
            member_replies: Vec::new(),
            timers: Vec::new(),
            assignments: Vec::new(),
            txn_markers: Vec::new(),
        }
    }
}

/// What a read command produces: an answer and, for a heartbeat, a re-armed session timer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadOutcome {
    pub reply: Reply,
    pub timers: Vec<TimerOp>,
}

/// An answer to a parked request of `member` in `group`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemberReply {
    pub group_id: GroupId,
    pub member_id: MemberId,
    pub kind: ParkedKind,
    pub reply: Reply,
}
