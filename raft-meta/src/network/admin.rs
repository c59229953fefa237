//! A client for the admin requests (`cohort cluster status|add-voter|remove-voter`): it dials a
//! node's Raft address and asks over the peer protocol.

use std::time::Duration;

use crate::network::client::{CallError, Peer};
use crate::network::rpc::{AdminRequest, AdminResponse, RpcRequest, RpcResponse};
use crate::status::ClusterStatus;
use crate::types::{NodeId, NodeInfo};

#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error(transparent)]
    Call(#[from] CallError),
    #[error("node refused: {0}")]
    Refused(String),
    #[error("node answered something else than an admin response")]
    Unexpected,
}

async fn ask(
    raft_addr: &str,
    request: AdminRequest,
    timeout: Duration,
) -> Result<ClusterStatus, AdminError> {
    let peer = Peer::new(raft_addr.to_owned());
    match peer.call(&RpcRequest::Admin(request), timeout).await? {
        RpcResponse::Admin(Ok(AdminResponse::Status(s) | AdminResponse::MembershipChanged(s))) => {
            Ok(s)
        }
        RpcResponse::Admin(Err(reason)) => Err(AdminError::Refused(reason)),
        _ => Err(AdminError::Unexpected),
    }
}

/// The status as `raft_addr`'s node sees it.
pub async fn status(raft_addr: &str, timeout: Duration) -> Result<ClusterStatus, AdminError> {
    ask(raft_addr, AdminRequest::Status, timeout).await
}

/// Asks the node at `raft_addr` (the leader) to add a voter; it waits for the learner to catch up.
pub async fn add_voter(
    raft_addr: &str,
    node_id: NodeId,
    info: NodeInfo,
    timeout: Duration,
) -> Result<ClusterStatus, AdminError> {
    ask(raft_addr, AdminRequest::AddVoter { node_id, info }, timeout).await
}

/// Asks the node at `raft_addr` (the leader) to remove a voter.
pub async fn remove_voter(
    raft_addr: &str,
    node_id: NodeId,
    timeout: Duration,
) -> Result<ClusterStatus, AdminError> {
    ask(raft_addr, AdminRequest::RemoveVoter { node_id }, timeout).await
}
