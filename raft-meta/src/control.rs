//! Status and membership operations, shared by the node handle and the admin RPCs.

use std::collections::BTreeSet;

use openraft::error::{ClientWriteError, RaftError};
use openraft::{ChangeMembers, ServerState};

use crate::error::MembershipError;
use crate::status::{ClusterStatus, LeaderInfo};
use crate::store::StoreProbe;
use crate::types::{NodeId, NodeInfo, Raft, RaftMetrics};

#[derive(Clone)]
pub(crate) struct Control {
    pub raft: Raft,
    pub probe: StoreProbe,
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

pub(crate) fn leader_of(m: &RaftMetrics) -> Option<LeaderInfo> {
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
            leader: leader_of(&m),
            voters,
            learners,
            last_log_index: m.last_log_index,
            commit_index: self.probe.committed(),
            applied_index: m.last_applied.map(|l| l.index),
            snapshot_index: m.snapshot.map(|l| l.index),
            purged_index: m.purged.map(|l| l.index),
        }
    }

    /// Adds `node_id` as a learner, waits until it has caught up, then makes it a voter.
    pub async fn add_voter(
        &self,
        node_id: NodeId,
        info: NodeInfo,
    ) -> Result<ClusterStatus, MembershipError> {
        let m = self.raft.metrics().borrow().clone();
        self.raft
            .add_learner(node_id, info, true)
            .await
            .map_err(|e| map_write_error(e, &m))?;
        self.raft
            .change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([node_id])), false)
            .await
            .map_err(|e| map_write_error(e, &m))?;
        Ok(self.status())
    }

    /// Removes `node_id` from the voters and from the cluster.
    pub async fn remove_voter(&self, node_id: NodeId) -> Result<ClusterStatus, MembershipError> {
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
