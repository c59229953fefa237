//! What a node does on behalf of the handle and of its peers: status, membership changes,
//! writes (its own and forwarded ones), pre-vote answers.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use openraft::error::{CheckIsLeaderError, ClientWriteError, RaftError};
use openraft::metrics::WaitError;
use openraft::storage::RaftLogStorage;
use openraft::{ChangeMembers, ServerState};

use crate::app::Undecodable;
use crate::batcher::Writes;
use crate::election::{grant_pre_vote, ElectionTiming, LeaderContact};
use crate::error::{MembershipError, ReadError, WriteError};
use crate::network::rpc::{Forwarded, PreVoteRequest, PreVoteResponse};
use crate::node::COMMAND_BYTES_MAX;
use crate::status::{ApplyHalted, ClusterStatus, LeaderInfo};
use crate::store::{LogStore, StoreProbe};
use crate::types::{NodeId, NodeInfo, Raft, RaftMetrics};

/// The state machine's applied index (the state machine is generic over the application; this
/// is all the control needs of it).
pub(crate) type AppliedIndex = Arc<dyn Fn() -> Option<u64> + Send + Sync>;

#[derive(Clone)]
pub(crate) struct Control {
    pub raft: Raft,
    pub probe: StoreProbe,
    pub log: LogStore,
    pub contact: Arc<LeaderContact>,
    pub timing: ElectionTiming,
    pub writes: Writes,
    pub applied: AppliedIndex,
    /// Bound on a linearizable read's leadership check.
    pub request_timeout: Duration,
    /// The application's check of a command before it is replicated.
    pub admit: fn(&[u8]) -> Result<(), Undecodable>,
    /// Set when the state machine halted.
    pub halted: tokio::sync::watch::Receiver<Option<ApplyHalted>>,
    /// What this process found in its log store at start (see [`confirm_leadership`]).
    pub read_floor: Option<ReadFloor>,
    /// The Raft log's disk-full guard: new commands are refused while it is full (entries
    /// already in flight wait in the store until there is room).
    pub space: Option<compaction::SpaceGuard>,
    /// One membership change at a time on this node: openraft refuses a change while another
    /// is uncommitted ("already undergoing a configuration change"), and a joining node's
    /// listener publication (decision 0184) races the operator's add-voter that follows it.
    pub membership_changes: Arc<tokio::sync::Mutex<()>>,
}

/// The last log index a process found at start, and the term of the vote it had persisted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadFloor {
    pub term: u64,
    pub index: u64,
}

pub(crate) fn role_name(state: ServerState) -> &'static str {
    match state {
        ServerState::Learner => "learner",
        ServerState::Follower => "follower",
        ServerState::Candidate => "candidate",
        ServerState::Leader => "leader",
        ServerState::Shutdown => "shutdown",
    }
}

/// The leader `m` names, or `None` once Raft stopped: openraft keeps the last known leader in
/// the metrics of a Raft that shut down (on a fatal error too), and a stopped node must neither
/// act as leader nor send clients to one it no longer follows.
pub(crate) fn leader_of(m: &RaftMetrics) -> Option<LeaderInfo> {
    if m.running_state.is_err() || m.state == ServerState::Shutdown {
        return None;
    }
    let id = m.current_leader?;
    let info = m.membership_config.membership().get_node(&id)?.clone();
    Some(LeaderInfo { node_id: id, info })
}

fn map_write_error(
    e: RaftError<NodeId, ClientWriteError<NodeId, NodeInfo>>,
    m: &RaftMetrics,
) -> MembershipError {
    match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => MembershipError::NotLeader {
            leader: f
                .leader_id
                .zip(f.leader_node)
                .map(|(node_id, info)| LeaderInfo { node_id, info })
                .or_else(|| leader_of(m)),
        },
        other => MembershipError::Raft(other.to_string()),
    }
}

impl Control {
    /// Replicates a command (alone, or in the batcher's next batch) and waits for its reply.
    pub async fn write(&self, command: Bytes) -> Result<Bytes, WriteError> {
        if command.len() > COMMAND_BYTES_MAX {
            return Err(WriteError::CommandTooLarge {
                bytes: command.len(),
                limit: COMMAND_BYTES_MAX,
            });
        }
        if self.halted.borrow().is_some() {
            return Err(WriteError::ShuttingDown);
        }
        (self.admit)(&command).map_err(|e| WriteError::Refused(e.0))?;
        if let Some(space) = &self.space {
            space
                .admit(command.len() as u64)
                .map_err(|e| WriteError::DiskFull(e.to_string()))?;
        }
        self.writes.write(command).await
    }

    /// A write a follower forwarded: written here (if this node leads), answered with the
    /// applied index the follower must reach to see it.
    pub async fn forwarded_write(&self, command: Bytes) -> Result<Forwarded, WriteError> {
        let reply = self.write(command).await?;
        Ok(Forwarded {
            reply,
            applied_index: (self.applied)().unwrap_or(0),
        })
    }

    /// The index a node must have applied to know everything committed so far: confirms this
    /// node's leadership with a quorum, waits until it has applied its read index (at least its
    /// own term's first entry, so at least every entry any earlier leader committed, and after a
    /// restart in the same term at least its log at start: decision 0114), returns it.
    /// `None` when nothing was ever committed.
    pub async fn read_index(&self) -> Result<Option<u64>, ReadError> {
        self.confirm_leadership().await
    }

    /// [`confirm_leadership`] with this node's read floor and request timeout.
    pub async fn confirm_leadership(&self) -> Result<Option<u64>, ReadError> {
        confirm_leadership(&self.raft, self.request_timeout, self.read_floor).await
    }

    /// Answers a pre-vote (see `election`); granting holds back this node's own campaign for a
    /// retry delay, so the candidate gets the round to itself.
    pub async fn pre_vote(&self, request: &PreVoteRequest) -> PreVoteResponse {
        let state = self.raft.metrics().borrow().state;
        let own_last_log = match self.log.clone().get_log_state().await {
            Ok(s) => s.last_log_id,
            Err(e) => {
                tracing::warn!(error = %e, "pre-vote: cannot read the log state; refusing");
                return PreVoteResponse { granted: false };
            }
        };
        let granted = grant_pre_vote(
            state,
            self.contact.silence(),
            self.timing.lease,
            own_last_log.as_ref(),
            request,
        );
        if granted {
            self.contact.defer(self.timing.retry);
        }
        tracing::debug!(candidate = request.candidate, granted, "pre-vote");
        PreVoteResponse { granted }
    }

    pub fn status(&self) -> ClusterStatus {
        let m = self.raft.metrics().borrow().clone();
        let membership = m.membership_config.membership();
        let voter_ids: BTreeSet<NodeId> = membership.voter_ids().collect();
        let mut voters = Vec::new();
        let mut learners = Vec::new();
        for (id, info) in membership.nodes() {
            if voter_ids.contains(id) {
                voters.push((*id, info.clone()));
            } else {
                learners.push((*id, info.clone()));
            }
        }
        ClusterStatus {
            node_id: m.id,
            role: role_name(m.state).to_owned(),
            term: m.current_term,
            leader: if self.halted.borrow().is_some() {
                None
            } else {
                leader_of(&m)
            },
            voters,
            learners,
            last_log_index: m.last_log_index,
            commit_index: self.probe.committed(),
            // The state machine's own mark: openraft's metrics lag it and stop moving when Raft
            // stops, while a halted node must still say how far it applied.
            applied_index: (self.applied)(),
            snapshot_index: m.snapshot.map(|l| l.index),
            purged_index: m.purged.map(|l| l.index),
            halted: self.halted.borrow().clone(),
        }
    }

    /// Adds `node_id` as a learner, waits until it has caught up, then makes it a voter. A
    /// learner the leader makes no progress replicating to for four request timeouts is
    /// removed again: promoting it would make a voter that can never vote, and a quorum of the
    /// others a requirement (openraft's own blocking wait gives up after half a second and
    /// returns success all the same).
    pub async fn add_voter(
        &self,
        node_id: NodeId,
        info: NodeInfo,
    ) -> Result<ClusterStatus, MembershipError> {
        let m = self.raft.metrics().borrow().clone();
        let added = {
            let _one = self.membership_changes.lock().await;
            self.raft
                .add_learner(node_id, info, false)
                .await
                .map_err(|e| map_write_error(e, &m))?
        };
        let stall_max = self.request_timeout.saturating_mul(4);
        if !self.caught_up(node_id, added.log_id, stall_max).await {
            let _one = self.membership_changes.lock().await;
            self.raft
                .change_membership(ChangeMembers::RemoveNodes(BTreeSet::from([node_id])), false)
                .await
                .map_err(|e| map_write_error(e, &m))?;
            return Err(MembershipError::NotCaughtUp {
                node: node_id,
                stalled_ms: stall_max.as_millis() as u64,
            });
        }
        let _one = self.membership_changes.lock().await;
        self.raft
            .change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([node_id])), false)
            .await
            .map_err(|e| map_write_error(e, &m))?;
        Ok(self.status())
    }

    /// Records `listeners` as `node_id`'s Kafka listeners in the membership (a version 2 node
    /// record, decision 0184); its Raft address stays as it is, its Kafka address becomes the
    /// first listener's. Only the leader changes the membership; a record that already says
    /// this is left alone.
    pub async fn publish_listeners(
        &self,
        node_id: NodeId,
        listeners: Vec<crate::types::KafkaListener>,
    ) -> Result<ClusterStatus, MembershipError> {
        crate::node_record::check_listeners(&listeners)
            .map_err(|e| MembershipError::Raft(e.to_string()))?;
        let _one = self.membership_changes.lock().await;
        let m = self.raft.metrics().borrow().clone();
        let Some(current) = m.membership_config.membership().get_node(&node_id).cloned() else {
            return Err(MembershipError::UnknownNode(node_id));
        };
        let info = NodeInfo {
            raft_addr: current.raft_addr.clone(),
            kafka_addr: listeners[0].addr.clone(),
            listeners,
        };
        if info == current {
            return Ok(self.status());
        }
        // SetNodes replaces the record; the Raft address is the one peers already dial, so
        // nothing about replication changes (openraft's warning about SetNodes concerns
        // changing where a node is reached).
        self.raft
            .change_membership(
                ChangeMembers::SetNodes(std::collections::BTreeMap::from([(node_id, info)])),
                false,
            )
            .await
            .map_err(|e| map_write_error(e, &m))?;
        Ok(self.status())
    }

    /// Whether the leader's replication to `node_id` reaches `upto`, waiting as long as it
    /// progresses and at most `stall_max` without progress.
    async fn caught_up(
        &self,
        node_id: NodeId,
        upto: crate::types::LogId,
        stall_max: Duration,
    ) -> bool {
        let mut metrics = self.raft.metrics();
        let mut best = None;
        loop {
            {
                let m = metrics.borrow_and_update();
                let Some(replication) = &m.replication else {
                    return false; // no longer the leader
                };
                let matched = replication.get(&node_id).cloned().flatten();
                if matched.is_some_and(|l| l >= upto) {
                    return true;
                }
                if matched > best {
                    best = matched;
                    // Progress: the stall timer below starts again.
                }
            }
            let before = best;
            let waited = tokio::time::timeout(stall_max, async {
                loop {
                    if metrics.changed().await.is_err() {
                        return false;
                    }
                    let m = metrics.borrow();
                    let matched = m
                        .replication
                        .as_ref()
                        .and_then(|r| r.get(&node_id).cloned().flatten());
                    if matched > before || m.replication.is_none() {
                        return true;
                    }
                }
            })
            .await;
            if !matches!(waited, Ok(true)) {
                return false;
            }
        }
    }

    /// Removes `node_id` from the voters and from the cluster.
    pub async fn remove_voter(&self, node_id: NodeId) -> Result<ClusterStatus, MembershipError> {
        let _one = self.membership_changes.lock().await;
        let m = self.raft.metrics().borrow().clone();
        if !m
            .membership_config
            .membership()
            .voter_ids()
            .any(|id| id == node_id)
        {
            return Err(MembershipError::UnknownNode(node_id));
        }
        self.raft
            .change_membership(
                ChangeMembers::RemoveVoters(BTreeSet::from([node_id])),
                false,
            )
            .await
            .map_err(|e| map_write_error(e, &m))?;
        Ok(self.status())
    }
}

/// Confirms this node's leadership with a quorum within `limit`, waits until it has applied
/// its read index and returns it (`None` when nothing was ever committed); the one place
/// Raft's answer becomes a `ReadError`.
///
/// openraft's read index is `max(commit index, first entry of the leader's term)`. A leader
/// that restarts resumes its term at once (its vote was persisted), with the commit index it
/// had persisted — written lazily, so possibly entries behind what the cluster committed and
/// acknowledged before the crash — and with the same first entry as before; until its first
/// replication round the answer would be stale (seen: index 27 of 59 committed, and a
/// partition directory judged ownerless). Every committed entry is in the leader's log, so
/// while the node leads in the term it started with, the read index is raised to the last log
/// index it started with: that costs nothing once anything was committed in this run, and
/// makes a restarted leader's reads wait for its first round. In a later term openraft's rule
/// holds (this run appended the term's first entry) and the floor, which may name entries a
/// leader since truncated, does not apply.
pub(crate) async fn confirm_leadership(
    raft: &Raft,
    limit: Duration,
    floor: Option<ReadFloor>,
) -> Result<Option<u64>, ReadError> {
    let deadline = tokio::time::Instant::now() + limit;
    match tokio::time::timeout(limit, raft.ensure_linearizable()).await {
        Ok(Ok(read_log_id)) => {
            let term = raft.metrics().borrow().current_term;
            let floor = floor.filter(|f| f.term == term).map(|f| f.index);
            let index = read_log_id.map(|l| l.index).max(floor);
            let Some(at_least) = index else {
                return Ok(None);
            };
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match raft
                .wait(Some(left))
                .applied_index_at_least(Some(at_least), "read at the start-up floor")
                .await
            {
                Ok(_) => Ok(index),
                Err(WaitError::ShuttingDown) => Err(ReadError::ShuttingDown),
                Err(WaitError::Timeout(..)) => Err(ReadError::Raft(format!(
                    "applied index {at_least} (this node's log at start) not reached within {} ms",
                    limit.as_millis()
                ))),
            }
        }
        Ok(Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(fwd)))) => {
            Err(ReadError::NotLeader {
                leader: fwd
                    .leader_id
                    .zip(fwd.leader_node)
                    .map(|(node_id, info)| LeaderInfo { node_id, info }),
            })
        }
        Ok(Err(RaftError::Fatal(_))) => Err(ReadError::ShuttingDown),
        Ok(Err(e)) => Err(ReadError::Raft(e.to_string())),
        Err(_) => Err(ReadError::Raft(format!(
            "leadership not confirmed within {} ms",
            limit.as_millis()
        ))),
    }
}
