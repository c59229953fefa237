//! The receiving side: one task per peer connection, each reading a request frame, handing it to
//! openraft (or the node's control: pre-votes, forwarded writes, admin) and writing the answer
//! back. An AppendEntries or snapshot openraft accepted is contact with a leader, which is what
//! a pre-vote asks about.
//!
//! With a cluster secret, a connection must prove it (`handshake`) before its first request is
//! read, and every frame after is sealed: a stranger, or a peer with another secret, is closed
//! with one log line before anything it sent reaches openraft, the elector or the admin calls.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use openraft::raft::AppendEntriesResponse;
use tokio::net::{TcpListener, TcpStream};

use crate::control::Control;
use crate::network::admission::{
    Admission, PeerPortLimits, Ticket, REFUSED_TOTAL, TIMED_OUT_TOTAL,
};
use crate::network::channel::Channel;
use crate::network::frame::FrameError;
use crate::network::handshake::{self, AuthError};
use crate::network::rpc::{AdminRequest, AdminResponse, RpcRequest, RpcResponse};
use crate::network::secret::PeerAuth;
use crate::types::NodeId;

/// Metric: peer connections closed because they did not prove the cluster secret.
pub const AUTH_FAILED_TOTAL: &str = "raft_peer_authentication_failures_total";

/// Pause after an accept failed for lack of file descriptors (they free up only when something
/// closes; retrying at once would spin on the connection left in the backlog).
const ACCEPT_BACKOFF_NO_FDS: Duration = Duration::from_millis(250);
/// Pause after any other failed accept.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Accepts peer connections until the listener task is aborted; the connection tasks live in a
/// `JoinSet` owned by this task, so aborting it closes every connection too (a stopped node must
/// not keep answering on old connections). While `paused` is set, accepted connections and
/// requests are dropped: this is how a test cuts a node off. Admission (caps, eviction of
/// connections stuck in their handshake) is `admission`'s; with a secret in `auth`, each
/// connection must prove it to node `node` within the handshake timeout.
pub(crate) async fn serve(
    listener: TcpListener,
    control: Control,
    paused: Arc<AtomicBool>,
    limits: PeerPortLimits,
    auth: PeerAuth,
    node: NodeId,
) {
    let admission = Admission::new(limits);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // Reap finished connection tasks so the set does not grow.
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "raft listener accept failed; backing off");
                let out_of_fds = matches!(e.raw_os_error(), Some(24 | 23)); // EMFILE, ENFILE
                tokio::time::sleep(if out_of_fds {
                    ACCEPT_BACKOFF_NO_FDS
                } else {
                    ACCEPT_BACKOFF
                })
                .await;
                continue;
            }
        };
        if paused.load(Ordering::Relaxed) {
            drop(stream);
            continue;
        }
        let ticket = match admission.admit(peer.ip()) {
            Ok(ticket) => ticket,
            Err(refused) => {
                metrics::counter!(REFUSED_TOTAL, "reason" => refused.label()).increment(1);
                admission.warn(match refused {
                    crate::network::admission::Refused::Total => {
                        "too many raft peer connections; refusing new ones"
                    }
                    crate::network::admission::Refused::PerAddress => {
                        "too many raft peer connections from one address; refusing new ones"
                    }
                });
                tracing::debug!(%peer, reason = refused.label(), "refused raft peer connection");
                continue;
            }
        };
        let port = Port {
            control: control.clone(),
            paused: paused.clone(),
            limits,
            auth: auth.clone(),
            node,
        };
        connections.spawn(serve_connection(stream, peer, port, ticket));
    }
}

/// Why a peer connection ended early.
#[derive(Debug, thiserror::Error)]
enum ConnectionEnd {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("no authentication and whole first request within {0:?}")]
    HandshakeTimeout(Duration),
    #[error("idle for {0:?}")]
    Idle(Duration),
    #[error("a request did not arrive whole within {0:?} of its first bytes")]
    SlowFrame(Duration),
    #[error("evicted while in its handshake to make room for a new connection")]
    Evicted,
    #[error("authentication failed: {0}")]
    Auth(#[from] AuthError),
    #[error("a peer tried to authenticate, but this node has no --cluster-secret-file")]
    NoSecretHere,
}

/// What every connection task of one port shares.
struct Port {
    control: Control,
    paused: Arc<AtomicBool>,
    limits: PeerPortLimits,
    auth: PeerAuth,
    node: NodeId,
}

impl ConnectionEnd {
    fn timeout_label(&self) -> Option<&'static str> {
        match self {
            ConnectionEnd::HandshakeTimeout(_) => Some("handshake"),
            ConnectionEnd::Idle(_) => Some("idle"),
            ConnectionEnd::SlowFrame(_) => Some("slow_frame"),
            _ => None,
        }
    }
}

async fn serve_connection(stream: TcpStream, peer: SocketAddr, port: Port, mut ticket: Ticket) {
    let _ = stream.set_nodelay(true);
    let end = match handshake(stream, &mut ticket, &port).await {
        Ok((mut channel, first)) => serve_requests(&mut channel, first, &port).await,
        Err(end) => Err(end),
    };
    match end {
        Ok(()) | Err(ConnectionEnd::Frame(FrameError::Closed)) => {}
        Err(end) => {
            if let Some(reason) = end.timeout_label() {
                metrics::counter!(TIMED_OUT_TOTAL, "reason" => reason).increment(1);
            }
            if matches!(end, ConnectionEnd::Auth(_) | ConnectionEnd::NoSecretHere) {
                metrics::counter!(AUTH_FAILED_TOTAL).increment(1);
            }
            let level_warn = !matches!(end, ConnectionEnd::Idle(_) | ConnectionEnd::Evicted);
            if level_warn {
                tracing::warn!(%peer, error = %end, "closing raft peer connection");
            } else {
                tracing::debug!(%peer, error = %end, "closing raft peer connection");
            }
        }
    }
    drop(ticket);
}

/// Authentication (with a secret) and the first whole request, within the handshake timeout;
/// the connection may be evicted meanwhile.
async fn handshake(
    mut stream: TcpStream,
    ticket: &mut Ticket,
    port: &Port,
) -> Result<(Channel, RpcRequest), ConnectionEnd> {
    let open = matches!(port.auth, PeerAuth::Open);
    let authenticated_first_request = async {
        let seal = match &port.auth {
            PeerAuth::Open => None,
            PeerAuth::Secret(secret) => {
                Some(handshake::server(&mut stream, secret, port.node).await?)
            }
        };
        let mut channel = Channel::new(stream, seal);
        let first = channel.receive().await.map_err(|e| match e {
            FrameError::BadVersion(handshake::HELLO) if open => ConnectionEnd::NoSecretHere,
            e => ConnectionEnd::Frame(e),
        })?;
        Ok::<_, ConnectionEnd>((channel, first))
    };
    let timeout = port.limits.handshake_timeout;
    let (channel, first) = tokio::select! {
        read = tokio::time::timeout(timeout, authenticated_first_request) => read
            .map_err(|_| ConnectionEnd::HandshakeTimeout(timeout))??,
        _ = &mut ticket.evicted => return Err(ConnectionEnd::Evicted),
    };
    if !ticket.established() {
        return Err(ConnectionEnd::Evicted);
    }
    Ok((channel, first))
}

/// Answers `first`, then every next request; each must start within the idle timeout and
/// arrive whole within the handshake timeout of its first bytes.
async fn serve_requests(
    channel: &mut Channel,
    first: RpcRequest,
    port: &Port,
) -> Result<(), ConnectionEnd> {
    let limits = &port.limits;
    let mut request = first;
    loop {
        if port.paused.load(Ordering::Relaxed) {
            return Ok(());
        }
        let response = handle(request, &port.control).await;
        if let Err(e) = channel.send(&response).await {
            tracing::debug!(error = %e, "raft peer went away before the response");
            return Ok(());
        }
        tokio::time::timeout(limits.idle_timeout, channel.readable())
            .await
            .map_err(|_| ConnectionEnd::Idle(limits.idle_timeout))?
            .map_err(FrameError::Io)?;
        request = tokio::time::timeout(limits.handshake_timeout, channel.receive())
            .await
            .map_err(|_| ConnectionEnd::SlowFrame(limits.handshake_timeout))??;
    }
}

async fn handle(request: RpcRequest, control: &Control) -> RpcResponse {
    match request {
        RpcRequest::AppendEntries(rpc) => {
            let result = control.raft.append_entries(rpc).await;
            if matches!(&result, Ok(r) if !matches!(r, AppendEntriesResponse::HigherVote(_))) {
                control.contact.touch();
            }
            RpcResponse::AppendEntries(result)
        }
        RpcRequest::Vote(rpc) => RpcResponse::Vote(control.raft.vote(rpc).await),
        RpcRequest::InstallSnapshot(rpc) => {
            let sent_vote = rpc.vote;
            let result = control.raft.install_snapshot(rpc).await;
            if matches!(&result, Ok(r) if r.vote == sent_vote) {
                control.contact.touch();
            }
            RpcResponse::InstallSnapshot(result)
        }
        RpcRequest::PreVote(request) => RpcResponse::PreVote(control.pre_vote(&request).await),
        RpcRequest::Forward(command) => {
            RpcResponse::Forward(control.forwarded_write(command).await)
        }
        RpcRequest::ReadIndex => {
            RpcResponse::ReadIndex(control.read_index().await.map_err(|e| e.to_string()))
        }
        RpcRequest::Admin(admin) => RpcResponse::Admin(match admin {
            AdminRequest::Status => Ok(AdminResponse::Status(control.status())),
            AdminRequest::AddVoter { node_id, info } => control
                .add_voter(node_id, info)
                .await
                .map(AdminResponse::MembershipChanged)
                .map_err(|e| e.to_string()),
            AdminRequest::RemoveVoter { node_id } => control
                .remove_voter(node_id)
                .await
                .map(AdminResponse::MembershipChanged)
                .map_err(|e| e.to_string()),
            AdminRequest::PublishListeners { node_id, listeners } => control
                .publish_listeners(node_id, listeners)
                .await
                .map(AdminResponse::MembershipChanged)
                .map_err(|e| e.to_string()),
        }),
    }
}
