//! The sending side: openraft asks for a client per target; clients to the same target share a
//! small pool of persistent TCP connections.
//!
//! ```text
//!  rpc ─► backoff says wait? ── yes ─► Unreachable (costs nothing)
//!           │ no
//!           ▼
//!        idle connection, or connect and (with a secret) authenticate, bounded by the
//!        RPC's deadline
//!           │ connect or authentication fails ─► backoff doubles (50 ms .. 2 s) ─► Unreachable
//!           ▼
//!        write frame, read frame, all under the RPC's hard deadline
//!           │ io error / timeout ─► drop that connection ─► Network / Timeout
//!           ▼
//!        connection back to the pool, backoff reset
//! ```
//!
//! A pool rather than one connection per peer: a snapshot chunk in flight must not hold up the
//! heartbeats or votes sent to the same peer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Timeout, Unreachable,
};
use openraft::network::{Backoff, RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::RPCTypes;
use tokio::net::TcpStream;

use crate::lease::LeaderLease;
use crate::network::channel::Channel;
use crate::network::frame::FrameError;
use crate::network::handshake::{self, AuthError};
use crate::network::rpc::{RpcRequest, RpcResponse};
use crate::network::secret::PeerAuth;
use crate::types::{NodeId, NodeInfo, TypeConfig};

/// Idle connections kept per peer; more concurrent RPCs open more, then the surplus closes.
const IDLE_CONNECTIONS_MAX: usize = 4;
/// A pooled connection unused for this long is closed instead of reused: the server closes
/// connections idle for its `PeerPortLimits::idle_timeout` (at least `IDLE_TIMEOUT_MIN`,
/// twice this), and a call on a connection the server just closed would fail.
pub(crate) const POOLED_IDLE_MAX: Duration = Duration::from_secs(5);
const BACKOFF_MIN: Duration = Duration::from_millis(50);
const BACKOFF_MAX: Duration = Duration::from_secs(2);
const CONNECT_TIMEOUT_MAX: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("peer {addr} unreachable: {reason}")]
    Unreachable { addr: String, reason: String },
    #[error("rpc to {addr} timed out after {after:?}")]
    Timeout { addr: String, after: Duration },
    #[error("rpc to {addr} failed: {source}")]
    Frame { addr: String, source: FrameError },
    #[error("peer {addr}: {source}")]
    Unauthenticated { addr: String, source: AuthError },
    #[error("peer {addr} answered a {got} to a {sent}")]
    Mismatch {
        addr: String,
        sent: &'static str,
        got: &'static str,
    },
}

#[derive(Debug)]
struct BackoffState {
    next_attempt: Option<Instant>,
    delay: Duration,
}

/// Connections and reconnect state for one peer address.
#[derive(Debug)]
pub(crate) struct Peer {
    addr: String,
    /// How to prove the cluster secret, if any.
    auth: PeerAuth,
    /// The node expected at `addr` (`None`: whichever answers, for the CLI); with a secret, a
    /// connection that reaches another node fails its handshake.
    target: Option<NodeId>,
    /// Idle connections and when each was put back, most recent last.
    idle: Mutex<Vec<(Channel, Instant)>>,
    backoff: Mutex<BackoffState>,
}

impl Peer {
    pub(crate) fn new(addr: String, auth: PeerAuth, target: Option<NodeId>) -> Self {
        Self {
            addr,
            auth,
            target,
            idle: Mutex::new(Vec::new()),
            backoff: Mutex::new(BackoffState {
                next_attempt: None,
                delay: BACKOFF_MIN,
            }),
        }
    }

    fn take_idle(&self) -> Option<Channel> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        // The oldest are at the front: drop those unused too long (the server may close them).
        idle.retain(|(_, since)| since.elapsed() < POOLED_IDLE_MAX);
        idle.pop().map(|(conn, _)| conn)
    }

    fn put_idle(&self, conn: Channel) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < IDLE_CONNECTIONS_MAX {
            idle.push((conn, Instant::now()));
        }
    }

    fn backing_off(&self) -> bool {
        let b = self.backoff.lock().unwrap_or_else(|e| e.into_inner());
        b.next_attempt.is_some_and(|at| Instant::now() < at)
    }

    fn connect_failed(&self) {
        let mut b = self.backoff.lock().unwrap_or_else(|e| e.into_inner());
        b.next_attempt = Some(Instant::now() + b.delay);
        b.delay = (b.delay * 2).min(BACKOFF_MAX);
    }

    fn connected(&self) {
        let mut b = self.backoff.lock().unwrap_or_else(|e| e.into_inner());
        b.next_attempt = None;
        b.delay = BACKOFF_MIN;
    }

    /// One request, one response, under `deadline`.
    pub(crate) async fn call(
        &self,
        request: &RpcRequest,
        deadline: Duration,
    ) -> Result<RpcResponse, CallError> {
        let started = Instant::now();
        let mut conn = match self.take_idle() {
            Some(conn) => conn,
            None => {
                if self.backing_off() {
                    return Err(CallError::Unreachable {
                        addr: self.addr.clone(),
                        reason: "backing off after a failed connect".to_owned(),
                    });
                }
                self.open(started, deadline).await?
            }
        };
        let remaining = deadline.saturating_sub(started.elapsed());
        let exchange = async {
            conn.send(request).await?;
            conn.receive::<RpcResponse>().await
        };
        match tokio::time::timeout(remaining, exchange).await {
            Ok(Ok(response)) => {
                self.put_idle(conn);
                Ok(response)
            }
            Ok(Err(source)) => Err(CallError::Frame {
                addr: self.addr.clone(),
                source,
            }),
            Err(_) => Err(CallError::Timeout {
                addr: self.addr.clone(),
                after: deadline,
            }),
        }
    }
}

impl Peer {
    /// A new connection, authenticated when there is a secret, within what is left of
    /// `deadline` since `started`; a failure starts or lengthens the backoff.
    async fn open(&self, started: Instant, deadline: Duration) -> Result<Channel, CallError> {
        let unreachable = |reason: String| CallError::Unreachable {
            addr: self.addr.clone(),
            reason,
        };
        let connect = TcpStream::connect(&self.addr);
        let mut stream =
            match tokio::time::timeout(deadline.min(CONNECT_TIMEOUT_MAX), connect).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    self.connect_failed();
                    return Err(unreachable(e.to_string()));
                }
                Err(_) => {
                    self.connect_failed();
                    return Err(unreachable("connect timed out".to_owned()));
                }
            };
        // Raft messages are small and latency-bound.
        let _ = stream.set_nodelay(true);
        let seal = match &self.auth {
            PeerAuth::Open => None,
            PeerAuth::Secret(secret) => {
                let remaining = deadline.saturating_sub(started.elapsed());
                let authenticated = handshake::client(&mut stream, secret, self.target);
                match tokio::time::timeout(remaining, authenticated).await {
                    Ok(Ok(seal)) => Some(seal),
                    Ok(Err(source)) => {
                        self.connect_failed();
                        return Err(CallError::Unauthenticated {
                            addr: self.addr.clone(),
                            source,
                        });
                    }
                    Err(_) => {
                        self.connect_failed();
                        return Err(unreachable("authentication timed out".to_owned()));
                    }
                }
            }
        };
        self.connected();
        Ok(Channel::new(stream, seal))
    }
}

/// Hands openraft a client per target; keeps one [`Peer`] per target across clients.
#[derive(Clone)]
pub struct NetworkFactory {
    peers: Arc<Mutex<HashMap<NodeId, Arc<Peer>>>>,
    /// How every connection this node opens proves the cluster secret.
    auth: PeerAuth,
    /// Set while the node is cut off (tests); every call fails as unreachable.
    paused: Arc<AtomicBool>,
    /// Fed with every AppendEntries a peer accepted.
    lease: Arc<LeaderLease>,
}

impl NetworkFactory {
    pub fn new(paused: Arc<AtomicBool>, lease: Arc<LeaderLease>, auth: PeerAuth) -> Self {
        Self {
            peers: Arc::default(),
            auth,
            paused,
            lease,
        }
    }

    fn peer(&self, target: NodeId, info: &NodeInfo) -> Arc<Peer> {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        match peers.get(&target) {
            Some(peer) if peer.addr == info.raft_addr => peer.clone(),
            _ => {
                let peer = Arc::new(Peer::new(
                    info.raft_addr.clone(),
                    self.auth.clone(),
                    Some(target),
                ));
                peers.insert(target, peer.clone());
                peer
            }
        }
    }
}

impl NetworkFactory {
    /// One request to `target` outside openraft (pre-votes, forwarded writes), over the same
    /// pooled connections and backoff, and cut off like everything else while paused.
    pub(crate) async fn call(
        &self,
        target: NodeId,
        info: &NodeInfo,
        request: &RpcRequest,
        timeout: Duration,
    ) -> Result<RpcResponse, CallError> {
        if self.paused.load(Ordering::Relaxed) {
            return Err(CallError::Unreachable {
                addr: info.raft_addr.clone(),
                reason: "transport paused".to_owned(),
            });
        }
        self.peer(target, info).call(request, timeout).await
    }
}

impl RaftNetworkFactory<TypeConfig> for NetworkFactory {
    type Network = PeerClient;

    async fn new_client(&mut self, target: NodeId, node: &NodeInfo) -> PeerClient {
        PeerClient {
            target,
            info: node.clone(),
            peer: self.peer(target, node),
            paused: self.paused.clone(),
            lease: self.lease.clone(),
        }
    }
}

/// openraft's handle on one target.
pub struct PeerClient {
    target: NodeId,
    info: NodeInfo,
    peer: Arc<Peer>,
    paused: Arc<AtomicBool>,
    lease: Arc<LeaderLease>,
}

impl PeerClient {
    async fn call(&self, request: RpcRequest, ttl: Duration) -> Result<RpcResponse, CallError> {
        if self.paused.load(Ordering::Relaxed) {
            return Err(CallError::Unreachable {
                addr: self.info.raft_addr.clone(),
                reason: "transport paused".to_owned(),
            });
        }
        self.peer.call(&request, ttl).await
    }

    fn to_rpc_error<E: std::error::Error>(
        &self,
        e: CallError,
        action: RPCTypes,
        ttl: Duration,
        from: NodeId,
    ) -> RPCError<NodeId, NodeInfo, E> {
        match e {
            // A peer that fails authentication is as good as unreachable: openraft backs off.
            CallError::Unreachable { .. } | CallError::Unauthenticated { .. } => {
                RPCError::Unreachable(Unreachable::new(&e))
            }
            CallError::Timeout { .. } => RPCError::Timeout(Timeout {
                action,
                id: from,
                target: self.target,
                timeout: ttl,
            }),
            CallError::Frame { .. } | CallError::Mismatch { .. } => {
                RPCError::Network(NetworkError::new(&e))
            }
        }
    }

    fn remote<E: std::error::Error>(&self, e: E) -> RPCError<NodeId, NodeInfo, E> {
        RPCError::RemoteError(RemoteError::new_with_node(
            self.target,
            self.info.clone(),
            e,
        ))
    }

    fn mismatch(&self, sent: &'static str, got: &RpcResponse) -> CallError {
        let got = match got {
            RpcResponse::AppendEntries(_) => "AppendEntries",
            RpcResponse::Vote(_) => "Vote",
            RpcResponse::InstallSnapshot(_) => "InstallSnapshot",
            RpcResponse::Admin(_) => "Admin",
            RpcResponse::PreVote(_) => "PreVote",
            RpcResponse::Forward(_) => "Forward",
            RpcResponse::ReadIndex(_) => "ReadIndex",
        };
        CallError::Mismatch {
            addr: self.info.raft_addr.clone(),
            sent,
            got,
        }
    }
}

impl RaftNetwork<TypeConfig> for PeerClient {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, NodeInfo, RaftError<NodeId>>> {
        let ttl = option.hard_ttl();
        let from = rpc.vote.leader_id().voted_for().unwrap_or_default();
        // Taken before the request leaves: the peer accepts it later than this, so its
        // election lease outlasts ours (`lease`).
        let sent = Instant::now();
        let term = rpc.vote.leader_id().get_term();
        let committed = rpc.vote.is_committed();
        match self.call(RpcRequest::AppendEntries(rpc), ttl).await {
            Ok(RpcResponse::AppendEntries(Ok(resp))) => {
                // Success, partial success and a log conflict all mean the peer took this
                // leader's vote; only a higher vote refuses it.
                if committed && !matches!(resp, AppendEntriesResponse::HigherVote(_)) {
                    self.lease.record_ack(self.target, term, sent);
                }
                Ok(resp)
            }
            Ok(RpcResponse::AppendEntries(Err(e))) => Err(self.remote(e)),
            Ok(other) => {
                let e = self.mismatch("AppendEntries", &other);
                Err(self.to_rpc_error(e, RPCTypes::AppendEntries, ttl, from))
            }
            Err(e) => Err(self.to_rpc_error(e, RPCTypes::AppendEntries, ttl, from)),
        }
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<NodeId>,
        RPCError<NodeId, NodeInfo, RaftError<NodeId, InstallSnapshotError>>,
    > {
        let ttl = option.hard_ttl();
        let from = rpc.vote.leader_id().voted_for().unwrap_or_default();
        match self.call(RpcRequest::InstallSnapshot(rpc), ttl).await {
            Ok(RpcResponse::InstallSnapshot(Ok(resp))) => Ok(resp),
            Ok(RpcResponse::InstallSnapshot(Err(e))) => Err(self.remote(e)),
            Ok(other) => {
                let e = self.mismatch("InstallSnapshot", &other);
                Err(self.to_rpc_error(e, RPCTypes::InstallSnapshot, ttl, from))
            }
            Err(e) => Err(self.to_rpc_error(e, RPCTypes::InstallSnapshot, ttl, from)),
        }
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, NodeInfo, RaftError<NodeId>>> {
        let ttl = option.hard_ttl();
        let from = rpc.vote.leader_id().voted_for().unwrap_or_default();
        match self.call(RpcRequest::Vote(rpc), ttl).await {
            Ok(RpcResponse::Vote(Ok(resp))) => Ok(resp),
            Ok(RpcResponse::Vote(Err(e))) => Err(self.remote(e)),
            Ok(other) => {
                let e = self.mismatch("Vote", &other);
                Err(self.to_rpc_error(e, RPCTypes::Vote, ttl, from))
            }
            Err(e) => Err(self.to_rpc_error(e, RPCTypes::Vote, ttl, from)),
        }
    }

    fn backoff(&self) -> Backoff {
        // openraft sleeps between retries of an unreachable peer; grow to 1 s so a node that is
        // down costs the others a few connects per second at most.
        let delays = (0..).map(|i: u32| {
            Duration::from_millis(50u64.saturating_mul(1u64 << i.min(5)))
                .min(Duration::from_secs(1))
        });
        Backoff::new(delays)
    }
}
