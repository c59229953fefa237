//! The messages peers exchange: openraft's three RPCs; the pre-vote round that gates elections
//! (openraft 0.9 has none); writes a follower forwards to the leader; admin requests so the CLI
//! can ask any node for status or a membership change over the same port.

use bytes::Bytes;
use openraft::error::{InstallSnapshotError, RaftError};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use serde::{Deserialize, Serialize};

use crate::error::WriteError;
use crate::status::ClusterStatus;
use crate::types::{LogId, NodeId, NodeInfo, TypeConfig};

#[derive(Debug, Serialize, Deserialize)]
pub enum RpcRequest {
    AppendEntries(AppendEntriesRequest<TypeConfig>),
    Vote(VoteRequest<NodeId>),
    InstallSnapshot(InstallSnapshotRequest<TypeConfig>),
    Admin(AdminRequest),
    PreVote(PreVoteRequest),
    /// A command a follower was asked to write; the leader writes it and answers with the reply.
    Forward(Bytes),
    /// "Up to which index must I apply to know everything committed?" The leader confirms its
    /// office with a quorum (a linearizable read) and answers with its read index.
    ReadIndex,
}

#[derive(Debug, Serialize, Deserialize)]
pub enum RpcResponse {
    AppendEntries(Result<AppendEntriesResponse<NodeId>, RaftError<NodeId>>),
    Vote(Result<VoteResponse<NodeId>, RaftError<NodeId>>),
    InstallSnapshot(
        Result<InstallSnapshotResponse<NodeId>, RaftError<NodeId, InstallSnapshotError>>,
    ),
    Admin(Result<AdminResponse, String>),
    PreVote(PreVoteResponse),
    Forward(Result<Forwarded, WriteError>),
    /// The leader's read index, or why it could not give one (not the leader, no quorum).
    ReadIndex(Result<Option<u64>, String>),
}

/// "Would you vote for me if I campaigned now?" Asked before a real election, so that a node
/// that merely lost touch (paused, cut off, restarted) never bumps the term and deposes a
/// healthy leader.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreVoteRequest {
    pub candidate: NodeId,
    pub last_log_id: Option<LogId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreVoteResponse {
    pub granted: bool,
}

/// A forwarded write's reply, with the leader's applied index once it was applied: the follower
/// waits until it has applied as much, so whoever asked it reads their own write there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forwarded {
    pub reply: Bytes,
    pub applied_index: u64,
}

/// Operator requests; membership changes must reach the leader, others answer with its id.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum AdminRequest {
    Status,
    AddVoter {
        node_id: NodeId,
        info: NodeInfo,
    },
    RemoveVoter {
        node_id: NodeId,
    },
    /// A node records its Kafka listeners in the membership (decision 0184). Last, so the
    /// variants before it keep their postcard index; an older leader cannot decode it and the
    /// node keeps asking until the leader is upgraded.
    PublishListeners {
        node_id: NodeId,
        listeners: Vec<crate::types::KafkaListener>,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum AdminResponse {
    Status(ClusterStatus),
    MembershipChanged(ClusterStatus),
}
