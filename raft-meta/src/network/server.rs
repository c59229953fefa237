//! The receiving side: one task per peer connection, each reading a request frame, handing it to
//! openraft (or the node's control: pre-votes, forwarded writes, admin) and writing the answer
//! back. An AppendEntries or snapshot openraft accepted is contact with a leader, which is what
//! a pre-vote asks about.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use openraft::raft::AppendEntriesResponse;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::control::Control;
use crate::network::frame::{read_frame, write_frame, FrameError};
use crate::network::rpc::{AdminRequest, AdminResponse, RpcRequest, RpcResponse};

/// Peer connections served at once; more are closed on accept.
const CONNECTIONS_MAX: usize = 256;

/// Accepts peer connections until the listener task is aborted; the connection tasks live in a
/// `JoinSet` owned by this task, so aborting it closes every connection too (a stopped node must
/// not keep answering on old connections). While `paused` is set, accepted connections and
/// requests are dropped: this is how a test cuts a node off.
pub(crate) async fn serve(listener: TcpListener, control: Control, paused: Arc<AtomicBool>) {
    let slots = Arc::new(Semaphore::new(CONNECTIONS_MAX));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // Reap finished connection tasks so the set does not grow.
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "raft listener accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        if paused.load(Ordering::Relaxed) {
            drop(stream);
            continue;
        }
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tracing::warn!(%peer, "too many raft peer connections; closing this one");
            continue;
        };
        let control = control.clone();
        let paused = paused.clone();
        connections.spawn(async move {
            serve_connection(stream, peer, control, paused).await;
            drop(slot);
        });
    }
}

async fn serve_connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    control: Control,
    paused: Arc<AtomicBool>,
) {
    let _ = stream.set_nodelay(true);
    loop {
        let request: RpcRequest = match read_frame(&mut stream).await {
            Ok(request) => request,
            Err(FrameError::Closed) => return,
            Err(e) => {
                tracing::warn!(%peer, error = %e, "closing raft peer connection");
                return;
            }
        };
        if paused.load(Ordering::Relaxed) {
            return;
        }
        let response = handle(request, &control).await;
        if let Err(e) = write_frame(&mut stream, &response).await {
            tracing::debug!(%peer, error = %e, "raft peer went away before the response");
            return;
        }
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
        }),
    }
}
