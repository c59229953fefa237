//! A client for the admin requests (`cohort cluster status|add-voter|remove-voter`): it dials a
//! node's Raft address and asks over the peer protocol, proving the cluster secret first when
//! `auth` holds one (a node with a secret answers nothing else).

use std::time::Duration;

use crate::network::client::{CallError, Peer};
use crate::network::frame::FrameError;
use crate::network::rpc::{AdminRequest, AdminResponse, RpcRequest, RpcResponse};
use crate::network::secret::PeerAuth;
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
    #[error("{addr} closed the connection: a node with --cluster-secret-file closes those that do not prove it (pass the same file)")]
    SecretNeeded { addr: String },
}

async fn ask(
    raft_addr: &str,
    auth: &PeerAuth,
    request: AdminRequest,
    timeout: Duration,
) -> Result<ClusterStatus, AdminError> {
    let peer = Peer::new(raft_addr.to_owned(), auth.clone(), None);
    let answer = match peer.call(&RpcRequest::Admin(request), timeout).await {
        // A node with a secret closes (or resets, the request still unread) a connection
        // that sends a request instead of proving it.
        Err(CallError::Frame { addr, source }) if *auth == PeerAuth::Open && cut(&source) => {
            return Err(AdminError::SecretNeeded { addr })
        }
        answer => answer?,
    };
    match answer {
        RpcResponse::Admin(Ok(AdminResponse::Status(s) | AdminResponse::MembershipChanged(s))) => {
            Ok(s)
        }
        RpcResponse::Admin(Err(reason)) => Err(AdminError::Refused(reason)),
        _ => Err(AdminError::Unexpected),
    }
}

fn cut(e: &FrameError) -> bool {
    use std::io::ErrorKind::{BrokenPipe, ConnectionReset, UnexpectedEof};
    match e {
        FrameError::Closed => true,
        FrameError::Io(e) => matches!(e.kind(), ConnectionReset | BrokenPipe | UnexpectedEof),
        _ => false,
    }
}

/// The status as `raft_addr`'s node sees it.
pub async fn status(
    raft_addr: &str,
    auth: &PeerAuth,
    timeout: Duration,
) -> Result<ClusterStatus, AdminError> {
    ask(raft_addr, auth, AdminRequest::Status, timeout).await
}

/// Asks the node at `raft_addr` (the leader) to add a voter; it waits for the learner to catch up.
pub async fn add_voter(
    raft_addr: &str,
    auth: &PeerAuth,
    node_id: NodeId,
    info: NodeInfo,
    timeout: Duration,
) -> Result<ClusterStatus, AdminError> {
    ask(
        raft_addr,
        auth,
        AdminRequest::AddVoter { node_id, info },
        timeout,
    )
    .await
}

/// Asks the node at `raft_addr` (the leader) to record `node_id`'s Kafka listeners.
pub async fn publish_listeners(
    raft_addr: &str,
    auth: &PeerAuth,
    node_id: NodeId,
    listeners: Vec<crate::types::KafkaListener>,
    timeout: Duration,
) -> Result<ClusterStatus, AdminError> {
    ask(
        raft_addr,
        auth,
        AdminRequest::PublishListeners { node_id, listeners },
        timeout,
    )
    .await
}

/// Asks the node at `raft_addr` (the leader) to remove a voter.
pub async fn remove_voter(
    raft_addr: &str,
    auth: &PeerAuth,
    node_id: NodeId,
    timeout: Duration,
) -> Result<ClusterStatus, AdminError> {
    ask(
        raft_addr,
        auth,
        AdminRequest::RemoveVoter { node_id },
        timeout,
    )
    .await
}
