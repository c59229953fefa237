//! The messages peers exchange: openraft's three RPCs, plus admin requests so the CLI can ask any
//! node for status or a membership change over the same port.

use openraft::error::{InstallSnapshotError, RaftError};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use serde::{Deserialize, Serialize};

use crate::status::ClusterStatus;
use crate::types::{NodeId, NodeInfo, TypeConfig};

#[derive(Debug, Serialize, Deserialize)]
pub enum RpcRequest {
    AppendEntries(AppendEntriesRequest<TypeConfig>),
    Vote(VoteRequest<NodeId>),
    InstallSnapshot(InstallSnapshotRequest<TypeConfig>),
    Admin(AdminRequest),
}

#[derive(Debug, Serialize, Deserialize)]
pub enum RpcResponse {
    AppendEntries(Result<AppendEntriesResponse<NodeId>, RaftError<NodeId>>),
    Vote(Result<VoteResponse<NodeId>, RaftError<NodeId>>),
    InstallSnapshot(
        Result<InstallSnapshotResponse<NodeId>, RaftError<NodeId, InstallSnapshotError>>,
    ),
    Admin(Result<AdminResponse, String>),
}

/// Operator requests; membership changes must reach the leader, others answer with its id.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum AdminRequest {
    Status,
    AddVoter { node_id: NodeId, info: NodeInfo },
    RemoveVoter { node_id: NodeId },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum AdminResponse {
    Status(ClusterStatus),
    MembershipChanged(ClusterStatus),
}
