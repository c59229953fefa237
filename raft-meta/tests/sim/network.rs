//! The simulated network: openraft's network traits delivering each RPC straight to the target
//! node's `Raft` handle, in-process, after a seeded delay, unless the link is cut, the target is
//! down, or the request or its response is lost (the caller then sees its deadline pass).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use openraft::error::{
    InstallSnapshotError, RPCError, RaftError, RemoteError, Timeout, Unreachable,
};
use openraft::network::{Backoff, RPCOption, RPCTypes, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use raft_meta::types::Raft;
use raft_meta::{NodeId, NodeInfo, TypeConfig};
use tokio::time::Instant;

use super::rng::SimRng;

struct NetState {
    /// The running incarnation of each node that is up.
    up: BTreeMap<NodeId, (u64, Raft)>,
    /// Directed links that deliver nothing.
    cut: BTreeSet<(NodeId, NodeId)>,
    loss_per_mille: u64,
    delay_ms_max: u64,
    rng: SimRng,
    /// When each node last accepted a leader's AppendEntries or granted a vote: what the
    /// simulated elector waits on, as `election.rs` waits on `LeaderContact`.
    contact: BTreeMap<NodeId, Instant>,
}

#[derive(Clone)]
pub struct SimNet(Arc<Mutex<NetState>>);

fn lock(state: &Mutex<NetState>) -> MutexGuard<'_, NetState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the network decided for one RPC when it was sent.
struct Plan {
    request_delay: Duration,
    response_delay: Duration,
    request_lost: bool,
    response_lost: bool,
}

impl SimNet {
    pub fn new(rng: SimRng, delay_ms_max: u64) -> Self {
        Self(Arc::new(Mutex::new(NetState {
            up: BTreeMap::new(),
            cut: BTreeSet::new(),
            loss_per_mille: 0,
            delay_ms_max,
            rng,
            contact: BTreeMap::new(),
        })))
    }

    pub fn register(&self, id: NodeId, incarnation: u64, raft: Raft) {
        let mut n = lock(&self.0);
        n.up.insert(id, (incarnation, raft));
        n.contact.insert(id, Instant::now());
    }

    pub fn unregister(&self, id: NodeId) {
        lock(&self.0).up.remove(&id);
    }

    pub fn set_cut(&self, cut: BTreeSet<(NodeId, NodeId)>) {
        lock(&self.0).cut = cut;
    }

    pub fn set_loss(&self, per_mille: u64) {
        lock(&self.0).loss_per_mille = per_mille;
    }

    pub fn contact(&self, id: NodeId) -> Option<Instant> {
        lock(&self.0).contact.get(&id).copied()
    }

    pub fn touch(&self, id: NodeId) {
        lock(&self.0).contact.insert(id, Instant::now());
    }

    fn plan(&self) -> Plan {
        let mut n = lock(&self.0);
        let max = n.delay_ms_max;
        let loss = n.loss_per_mille;
        Plan {
            request_delay: Duration::from_micros(n.rng.range(50, max * 1000)),
            response_delay: Duration::from_micros(n.rng.range(50, max * 1000)),
            request_lost: n.rng.chance(loss),
            response_lost: n.rng.chance(loss),
        }
    }

    /// The target's running `Raft`, if `from` (in its incarnation `incarnation`) can reach it now.
    fn route(&self, from: NodeId, incarnation: u64, to: NodeId) -> Option<Raft> {
        let n = lock(&self.0);
        let sender_up = n.up.get(&from).is_some_and(|(i, _)| *i == incarnation);
        if !sender_up || n.cut.contains(&(from, to)) {
            return None;
        }
        n.up.get(&to).map(|(_, raft)| raft.clone())
    }

    fn link_open(&self, from: NodeId, to: NodeId) -> bool {
        !lock(&self.0).cut.contains(&(to, from))
    }

    /// Whether `a` and `b` can exchange messages both ways now.
    pub fn both_ways(&self, a: NodeId, b: NodeId) -> bool {
        let n = lock(&self.0);
        !n.cut.contains(&(a, b)) && !n.cut.contains(&(b, a))
    }
}

pub struct SimNetworkFactory {
    pub from: NodeId,
    pub incarnation: u64,
    pub net: SimNet,
}

impl RaftNetworkFactory<TypeConfig> for SimNetworkFactory {
    type Network = SimConnection;

    async fn new_client(&mut self, target: NodeId, _node: &NodeInfo) -> SimConnection {
        SimConnection {
            from: self.from,
            incarnation: self.incarnation,
            to: target,
            net: self.net.clone(),
        }
    }
}

pub struct SimConnection {
    from: NodeId,
    incarnation: u64,
    to: NodeId,
    net: SimNet,
}

fn unreachable<E: std::error::Error>(why: &str) -> RPCError<NodeId, NodeInfo, E> {
    RPCError::Unreachable(Unreachable::new(&std::io::Error::other(why.to_owned())))
}

impl SimConnection {
    /// Sends one RPC through the simulated network; `call` runs it on the target.
    async fn deliver<T, E, F, Fut>(
        &self,
        action: RPCTypes,
        ttl: Duration,
        call: F,
    ) -> Result<T, RPCError<NodeId, NodeInfo, E>>
    where
        E: std::error::Error,
        F: FnOnce(Raft) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let timeout = || {
            RPCError::Timeout(Timeout {
                action,
                id: self.from,
                target: self.to,
                timeout: ttl,
            })
        };
        let plan = self.net.plan();
        let exchange = async {
            tokio::time::sleep(plan.request_delay).await;
            if plan.request_lost {
                std::future::pending::<()>().await;
            }
            // Routed on arrival: a node that crashed or was cut off meanwhile gets nothing.
            let Some(target) = self.net.route(self.from, self.incarnation, self.to) else {
                return Err(unreachable("link cut or node down"));
            };
            let answer = call(target).await;
            tokio::time::sleep(plan.response_delay).await;
            if plan.response_lost || !self.net.link_open(self.from, self.to) {
                std::future::pending::<()>().await;
            }
            match answer {
                Ok(answer) => Ok(answer),
                Err(e) => Err(RPCError::RemoteError(RemoteError::new(self.to, e))),
            }
        };
        match tokio::time::timeout(ttl, exchange).await {
            Ok(result) => result,
            Err(_) => Err(timeout()),
        }
    }
}

impl RaftNetwork<TypeConfig> for SimConnection {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, NodeInfo, RaftError<NodeId>>> {
        let net = self.net.clone();
        let to = self.to;
        self.deliver(RPCTypes::AppendEntries, option.hard_ttl(), |raft| async move {
            let answer = raft.append_entries(rpc).await;
            if matches!(&answer, Ok(resp) if !matches!(resp, AppendEntriesResponse::HigherVote(_)))
            {
                net.touch(to);
            }
            answer
        })
        .await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<NodeId>,
        RPCError<NodeId, NodeInfo, RaftError<NodeId, InstallSnapshotError>>,
    > {
        self.deliver(
            RPCTypes::InstallSnapshot,
            option.hard_ttl(),
            |raft| async move { raft.install_snapshot(rpc).await },
        )
        .await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, NodeInfo, RaftError<NodeId>>> {
        let net = self.net.clone();
        let to = self.to;
        self.deliver(RPCTypes::Vote, option.hard_ttl(), |raft| async move {
            let answer = raft.vote(rpc).await;
            if matches!(&answer, Ok(resp) if resp.vote_granted) {
                net.touch(to);
            }
            answer
        })
        .await
    }

    /// The TCP client's backoff (`network/client.rs`): 50 ms doubling to 1 s, not openraft's
    /// constant 500 ms, so a peer back from a cut hears the leader as soon as a real one would.
    fn backoff(&self) -> Backoff {
        let delays = (0..).map(|i: u32| {
            Duration::from_millis(50u64.saturating_mul(1u64 << i.min(5)))
                .min(Duration::from_secs(1))
        });
        Backoff::new(delays)
    }
}
