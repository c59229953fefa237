//! The handle the binary drives: start a node, write commands, read applied state linearizably,
//! follow leadership, change membership.
//!
//! ```text
//!  MetaNode::start(config, app)
//!    ├─ open <raft_dir>/log-<store>, <raft_dir>/snapshots (restore app from the newest valid snapshot)
//!    ├─ bind the Raft listener, start openraft
//!    ├─ bootstrap: Single → one voter (itself); Cluster(peers) → all nodes initialize with the same
//!    │            peer list (idempotent, safe in any order); Join → wait to be added
//!    └─ tasks: peer server · write batcher · elector (pre-vote, then elect) · metrics + leader
//!              watch · log purge · byte-based snapshots
//! ```
//!
//! A write on a follower can be forwarded to the leader (`write_via_leader`) over the peer port.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use openraft::error::{InitializeError, RaftError};
use openraft::storage::RaftLogStorage;
use openraft::{Config, SnapshotPolicy};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::app::Application;
use crate::batcher::{self, BatchLimits};
use crate::control::{Control, ReadFloor};
use crate::election::{ElectionTiming, Elector, LeaderContact};
use crate::error::{MembershipError, ReadError, StartError, WriteError};
use crate::lease::LeaderLease;
use crate::network::client::CallError;
use crate::network::rpc::{RpcRequest, RpcResponse};
use crate::network::{server, NetworkFactory};
use crate::state_machine::{Applied, StateMachine};
use crate::status::{ApplyHalted, ClusterStatus, LeaderInfo};
use crate::store::format::{StoreFormat, STORE_FORMAT_FILE, STORE_LAYOUT_VERSION};
use crate::store::{LogStore, RaftStore, StoreProbe};
use crate::types::{NodeId, NodeInfo, Raft};

/// Largest single command accepted by `write`.
pub const COMMAND_BYTES_MAX: usize = 1024 * 1024;
/// Writes waiting for a batch slot; writers past this wait (backpressure).
const PENDING_WRITES_MAX: usize = 16 * 1024;

/// A member of the initial cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerSpec {
    pub node_id: NodeId,
    pub raft_addr: String,
    pub kafka_addr: String,
}

/// How a node comes up the first time (ignored once its log holds a membership).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bootstrap {
    /// A one-voter cluster of this node: the embedded default.
    Single,
    /// The static peer list, this node included; every node initializes with the same list.
    Cluster(Vec<PeerSpec>),
    /// Wait until a leader adds this node (`add_voter`).
    Join,
}

/// Timing and size knobs; the defaults suit a LAN or loopback cluster.
#[derive(Debug, Clone)]
pub struct Tuning {
    /// How often the leader sends AppendEntries when idle; openraft also uses it as the
    /// deadline of every AppendEntries.
    pub heartbeat_ms: u64,
    /// Deadline of vote and pre-vote calls; also the random spread added to each campaign
    /// attempt and the retry delay after one that failed (`election`).
    pub election_timeout_min_ms: u64,
    /// The election lease: a follower campaigns only after this much silence from any leader,
    /// and grants votes and pre-votes only then. The leader's own read lease is shorter
    /// ([`Tuning::leader_lease`]).
    pub election_timeout_max_ms: u64,
    /// Build a snapshot after this many entries since the last one...
    pub snapshot_every_entries: u64,
    /// ...or after this many applied command bytes, whichever comes first.
    pub snapshot_every_bytes: u64,
    pub batch_commands_max: usize,
    pub batch_bytes_max: usize,
    pub batches_in_flight_max: usize,
    /// A write not committed within this is answered `Indeterminate` (e.g. the leader lost its
    /// quorum); a read not confirmed within it fails.
    pub request_timeout: Duration,
    /// Who starts elections (the bake-off compares both).
    pub elections: Elections,
    /// Caps and timeouts of the peer port.
    pub peer_port: crate::network::PeerPortLimits,
    /// New commands are refused (`WriteError::DiskFull`) while the Raft log's filesystem has
    /// less than this free, so openraft's own entries, the vote and snapshots still have room
    /// (decision 0112). 0: refused only once a log write met a full disk.
    pub command_disk_reserve_bytes: u64,
}

impl Tuning {
    /// How long after a quorum accepted its AppendEntries the leader still answers from its
    /// applied state (`lease`): four fifths of the election lease, so the fifth left covers
    /// clocks that run at slightly different rates and the moment between the check and the
    /// answer. 128 ms with the defaults, two and a half heartbeats.
    pub fn leader_lease(&self) -> Duration {
        Duration::from_millis(self.election_timeout_max_ms.saturating_mul(4) / 5)
    }
}

/// Who decides when a follower campaigns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Elections {
    /// `election`: after a lease of silence plus a random spread, and only once a pre-vote
    /// round finds a quorum that would vote.
    #[default]
    PreVote,
    /// openraft 0.9's own timer: a lease plus a fixed random election timeout, no pre-vote.
    OpenraftTimer,
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            // A follower campaigns after the lease (max) plus a random [0, min) of silence, once
            // a pre-vote round agrees; a split vote retries after [min, 2 min). A SIGKILLed
            // leader's successor acknowledges a write 0.13-0.23 s after the kill with 1M keys
            // (decision 0186; 0.5-0.7 s with the earlier 200-500 ms). The heartbeat is also
            // openraft's AppendEntries deadline: 30 ms cost elections under load, 50 ms none.
            heartbeat_ms: 50,
            election_timeout_min_ms: 60,
            election_timeout_max_ms: 160,
            snapshot_every_entries: 20_000,
            snapshot_every_bytes: 64 * 1024 * 1024,
            batch_commands_max: 4096,
            batch_bytes_max: 1024 * 1024,
            batches_in_flight_max: 2,
            request_timeout: Duration::from_secs(5),
            elections: Elections::PreVote,
            peer_port: crate::network::PeerPortLimits::default(),
            command_disk_reserve_bytes: 0,
        }
    }
}

/// Everything a node needs to start.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    pub node_id: NodeId,
    /// Where the Raft listener binds (port 0 picks a free port).
    pub listen_addr: String,
    /// What peers dial; defaults to the bound address.
    pub advertised_raft_addr: Option<String>,
    /// The Kafka address clients are sent to when this node leads.
    pub kafka_addr: String,
    /// This node's Raft directory (`<data-dir>/raft`): log store, snapshots.
    pub raft_dir: PathBuf,
    pub store: RaftStore,
    pub bootstrap: Bootstrap,
    pub tuning: Tuning,
    /// How the peer port authenticates: `Open` (whoever connects), or the cluster secret every
    /// node and `cohort cluster` must prove (decision 0155).
    pub peer_auth: crate::network::PeerAuth,
}

/// A running Raft node replicating an application `A`.
pub struct MetaNode<A: Application> {
    node_id: NodeId,
    raft: Raft,
    sm: StateMachine<A>,
    log: LogStore,
    control: Control,
    local_addr: SocketAddr,
    network: NetworkFactory,
    leader: watch::Receiver<Option<LeaderInfo>>,
    transport_paused: Arc<AtomicBool>,
    lease: Arc<LeaderLease>,
    tasks: Vec<JoinHandle<()>>,
    request_timeout: Duration,
    peer_auth: crate::network::PeerAuth,
}

/// Refuses a Raft directory of another store, or of a store layout newer than this binary
/// reads; records the store in a new directory (and rewrites an untagged record as tagged).
fn check_store_format(raft_dir: &Path, store: RaftStore) -> Result<(), StartError> {
    let format_err = |e: crate::store::format::StoreFormatError| StartError::Config(e.to_string());
    let current = StoreFormat {
        store,
        version: STORE_LAYOUT_VERSION,
    };
    match StoreFormat::read(raft_dir).map_err(format_err)? {
        Some(found) if found.store != store => Err(StartError::Config(format!(
            "{} holds a {} raft store; refusing to start it as {} (its log would look empty)",
            raft_dir.display(),
            found.store.name(),
            store.name()
        ))),
        // `read` refused a layout newer than this binary's, so an older one is read as is;
        // an untagged file is rewritten tagged, once.
        Some(_) => {
            let raw = std::fs::read(raft_dir.join(STORE_FORMAT_FILE)).unwrap_or_default();
            if raw.as_slice() == store.name().as_bytes() {
                current.write(raft_dir).map_err(format_err)?;
            }
            Ok(())
        }
        None => current.write(raft_dir).map_err(format_err),
    }
}

/// The openraft configuration a node runs with `tuning`. Public so the deterministic simulation
/// (tests/simulation.rs) drives openraft with exactly the settings a real node uses, without
/// the TCP listener and the wall-clock election task `MetaNode::start_on` brings along.
pub fn raft_config(tuning: &Tuning) -> Result<Config, StartError> {
    Config {
        cluster_name: "cohort".to_owned(),
        heartbeat_interval: tuning.heartbeat_ms,
        election_timeout_min: tuning.election_timeout_min_ms,
        election_timeout_max: tuning.election_timeout_max_ms,
        snapshot_policy: SnapshotPolicy::LogsSinceLast(tuning.snapshot_every_entries),
        // Purging is driven by the kept snapshots (see the purge task), not by a count.
        max_in_snapshot_log_to_keep: u64::MAX,
        purge_batch_size: 1,
        max_payload_entries: 64,
        snapshot_max_chunk_size: 4 * 1024 * 1024,
        install_snapshot_timeout: 2_000,
        // Elections are driven by `election` after a pre-vote round, not by openraft's timer.
        enable_elect: tuning.elections == Elections::OpenraftTimer,
        ..Default::default()
    }
    .validate()
    .map_err(|e| StartError::Config(e.to_string()))
}

impl<A: Application> MetaNode<A> {
    /// Starts a node, binding `config.listen_addr`.
    pub async fn start(config: NodeConfig, app: A) -> Result<Self, StartError> {
        let listener = TcpListener::bind(&config.listen_addr)
            .await
            .map_err(|source| StartError::Listen {
                addr: config.listen_addr.clone(),
                source,
            })?;
        Self::start_on(config, listener, app).await
    }

    /// Starts a node on an already bound listener (tests bind port 0 first, so peers' addresses
    /// are known before any node starts).
    pub async fn start_on(
        config: NodeConfig,
        listener: TcpListener,
        app: A,
    ) -> Result<Self, StartError> {
        let tuning = config.tuning.clone();
        let port = &tuning.peer_port;
        if port.connections_max == 0
            || port.connections_per_address_max == 0
            || port.idle_timeout < crate::network::admission::IDLE_TIMEOUT_MIN
        {
            return Err(StartError::Config(format!(
                "peer port limits out of range: {port:?} (caps at least 1, idle timeout at least {:?})",
                crate::network::admission::IDLE_TIMEOUT_MIN
            )));
        }
        std::fs::create_dir_all(&config.raft_dir).map_err(|source| StartError::DataDir {
            path: config.raft_dir.clone(),
            source,
        })?;
        check_store_format(&config.raft_dir, config.store)?;

        let probe = StoreProbe::default();
        let log_dir = config.raft_dir.join(format!("log-{}", config.store.name()));
        // The log's open (segment scan) and the snapshot's load (read, verify, restore) touch
        // different files: on two threads, a restart waits for the longer of the two only.
        let (log, sm) = std::thread::scope(|scope| {
            let log_probe = probe.clone();
            let log_open = scope.spawn(|| LogStore::open(config.store, &log_dir, log_probe));
            let sm = StateMachine::open(
                &config.raft_dir.join("snapshots"),
                app,
                tuning.snapshot_every_bytes,
            );
            let log = log_open
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (log, sm)
        });
        let mut log = log?;
        let sm = sm?;

        let log_state = log
            .get_log_state()
            .await
            .map_err(|e| StartError::Raft(e.to_string()))?;
        let start_vote = log
            .read_vote()
            .await
            .map_err(|e| StartError::Raft(e.to_string()))?;
        if let Some(purged) = log_state.last_purged_log_id {
            let applied = sm.last_applied().map(|l| l.index);
            if applied.is_none_or(|a| a < purged.index) {
                return Err(StartError::SnapshotGap {
                    snapshot: applied,
                    purged: purged.index,
                });
            }
        }

        let local_addr = listener.local_addr().map_err(|source| StartError::Listen {
            addr: config.listen_addr.clone(),
            source,
        })?;
        let own_info = NodeInfo {
            raft_addr: config
                .advertised_raft_addr
                .clone()
                .unwrap_or_else(|| local_addr.to_string()),
            kafka_addr: config.kafka_addr.clone(),
            // The node records its listeners itself once it runs (`publish_listeners`).
            listeners: Vec::new(),
        };

        let raft_config = raft_config(&tuning)?;

        let transport_paused = Arc::new(AtomicBool::new(false));
        let lease = Arc::new(LeaderLease::new(config.node_id, tuning.leader_lease()));
        let network = NetworkFactory::new(
            transport_paused.clone(),
            lease.clone(),
            config.peer_auth.clone(),
        );
        let raft = Raft::new(
            config.node_id,
            Arc::new(raft_config),
            network.clone(),
            log.clone(),
            sm.clone(),
        )
        .await
        .map_err(|e| StartError::Raft(e.to_string()))?;
        let timing = ElectionTiming {
            lease: Duration::from_millis(tuning.election_timeout_max_ms),
            jitter: Duration::from_millis(tuning.election_timeout_min_ms),
            retry: Duration::from_millis(tuning.election_timeout_min_ms),
            // A look costs one metrics read: often enough that the lease, not the poll, decides
            // when a follower campaigns.
            poll: Duration::from_millis((tuning.heartbeat_ms / 5).clamp(5, 50)),
            rpc_timeout: Duration::from_millis(tuning.election_timeout_min_ms),
        };
        let contact = Arc::new(LeaderContact::default());
        let limits = BatchLimits {
            commands_max: tuning.batch_commands_max,
            bytes_max: tuning.batch_bytes_max,
            in_flight_max: tuning.batches_in_flight_max,
            write_timeout: tuning.request_timeout,
        };
        let (writes, batcher) = batcher::channel(raft.clone(), PENDING_WRITES_MAX, limits);
        let applied_sm = sm.clone();
        let control = Control {
            raft: raft.clone(),
            probe,
            log: log.clone(),
            contact: contact.clone(),
            timing,
            writes,
            applied: Arc::new(move || applied_sm.last_applied().map(|l| l.index)),
            request_timeout: tuning.request_timeout,
            admit: A::admit,
            halted: sm.watch_halted(),
            read_floor: log_state.last_log_id.map(|l| ReadFloor {
                term: start_vote.map_or(0, |v| v.leader_id.term),
                index: l.index,
            }),
            space: log.space().inspect(|space| {
                space.set_reserve_bytes(tuning.command_disk_reserve_bytes);
            }),
            membership_changes: Arc::new(tokio::sync::Mutex::new(())),
        };

        let mut tasks = Vec::new();
        tasks.push(tokio::spawn(server::serve(
            listener,
            control.clone(),
            transport_paused.clone(),
            tuning.peer_port,
            config.peer_auth.clone(),
            config.node_id,
        )));

        let (leader_tx, leader_rx) = watch::channel(None);
        tasks.push(tokio::spawn(watch_metrics(
            raft.clone(),
            sm.watch_halted(),
            leader_tx,
            lease.clone(),
        )));
        tasks.push(tokio::spawn(purge_behind_snapshots(
            raft.clone(),
            sm.purge_floor(),
        )));
        tasks.push(tokio::spawn(snapshot_on_bytes(raft.clone(), sm.clone())));
        tasks.push(tokio::spawn(snapshot_after_space(raft.clone(), sm.clone())));

        if tuning.elections == Elections::PreVote {
            tasks.push(tokio::spawn(
                Elector {
                    raft: raft.clone(),
                    node_id: config.node_id,
                    contact,
                    network: network.clone(),
                    log: log.clone(),
                    timing,
                }
                .run(),
            ));
        }
        tasks.push(tokio::spawn(batcher::run(batcher)));

        let node = Self {
            node_id: config.node_id,
            raft,
            sm,
            log,
            control,
            local_addr,
            network,
            leader: leader_rx,
            transport_paused,
            lease,
            tasks,
            request_timeout: tuning.request_timeout,
            peer_auth: config.peer_auth.clone(),
        };
        node.bootstrap(&config.bootstrap, own_info).await?;
        Ok(node)
    }

    async fn bootstrap(&self, bootstrap: &Bootstrap, own_info: NodeInfo) -> Result<(), StartError> {
        let initialized = match self.raft.is_initialized().await {
            Ok(initialized) => initialized,
            // Replaying the log met an entry this binary cannot apply and Raft stopped: the
            // node starts halted (it reports why and serves nothing) rather than not at all.
            Err(_) if self.sm.halted().is_some() => return Ok(()),
            Err(e) => return Err(StartError::Raft(e.to_string())),
        };
        if initialized {
            return Ok(());
        }
        let members: BTreeMap<NodeId, NodeInfo> = match bootstrap {
            Bootstrap::Join => return Ok(()),
            Bootstrap::Single => BTreeMap::from([(self.node_id, own_info)]),
            Bootstrap::Cluster(peers) => {
                if !peers.iter().any(|p| p.node_id == self.node_id) {
                    return Err(StartError::Peers(format!(
                        "node {} is not in its own peer list",
                        self.node_id
                    )));
                }
                peers
                    .iter()
                    .map(|p| {
                        (
                            p.node_id,
                            NodeInfo {
                                raft_addr: p.raft_addr.clone(),
                                kafka_addr: p.kafka_addr.clone(),
                                listeners: Vec::new(),
                            },
                        )
                    })
                    .collect()
            }
        };
        match self.raft.initialize(members).await {
            Ok(()) => Ok(()),
            // Another node (or an earlier run of this one) got there first: the goal is reached.
            Err(RaftError::APIError(InitializeError::NotAllowed(_))) => Ok(()),
            Err(e) => Err(StartError::Raft(e.to_string())),
        }
    }

    pub fn node_id(&self) -> NodeId {
        self.node_id
    }

    /// The address the Raft listener is bound to.
    pub fn raft_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Replicates one command and returns the application's reply once it is committed and
    /// applied here. Concurrent calls share log entries.
    ///
    /// `NotLeader` and `Indeterminate` do not say the command was not applied: a leader that
    /// lost its office mid-write may see the entry committed by its successor. Callers retry
    /// idempotent commands or report the failure, never success.
    pub async fn write(&self, command: Bytes) -> Result<Bytes, WriteError> {
        self.control.write(command).await
    }

    /// Like [`MetaNode::write`], from any node: a follower forwards the command to the leader
    /// over the peer port (waiting up to the request timeout for one to be elected), then
    /// waits until it has applied the entry itself, so a caller reads its own write here.
    ///
    /// `Unavailable` means nothing was sent (no leader, or it could not be reached); the other
    /// errors mean what they mean for `write`.
    pub async fn write_via_leader(&self, command: Bytes) -> Result<Bytes, WriteError> {
        let deadline = Instant::now() + self.request_timeout;
        let mut leader_watch = self.leader.clone();
        let mut hops = 0;
        loop {
            let leader = self.leader();
            let Some(leader) = leader else {
                let left = deadline.saturating_duration_since(Instant::now());
                let elected = tokio::time::timeout(left, leader_watch.wait_for(Option::is_some));
                if !matches!(elected.await, Ok(Ok(_))) {
                    return Err(WriteError::Unavailable(format!(
                        "no leader elected within {} ms",
                        self.request_timeout.as_millis()
                    )));
                }
                continue;
            };
            if leader.node_id == self.node_id {
                return self.write(command).await;
            }
            // The leader needs up to its own request timeout to answer; allow for the hop.
            let call_deadline =
                deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
            let request = RpcRequest::Forward(command.clone());
            let answer = self
                .network
                .call(leader.node_id, &leader.info, &request, call_deadline)
                .await;
            match answer {
                Ok(RpcResponse::Forward(Ok(forwarded))) => {
                    self.wait_applied(forwarded.applied_index, deadline).await;
                    return Ok(forwarded.reply);
                }
                // Leadership moved while the command travelled and nothing was written: follow.
                Ok(RpcResponse::Forward(Err(WriteError::NotLeader { .. }))) if hops < 3 => {
                    hops += 1;
                    let _ = tokio::time::timeout(Duration::from_millis(50), leader_watch.changed())
                        .await;
                }
                Ok(RpcResponse::Forward(Err(e))) => return Err(e),
                Ok(_) => {
                    return Err(WriteError::Indeterminate(format!(
                        "node {} answered a forwarded write with something else",
                        leader.node_id
                    )))
                }
                Err(CallError::Unreachable { reason, .. }) => {
                    return Err(WriteError::Unavailable(format!(
                        "leader {} unreachable: {reason}",
                        leader.node_id
                    )))
                }
                Err(e) => return Err(WriteError::Indeterminate(e.to_string())),
            }
        }
    }

    /// Waits (until `deadline` at most) for this node to apply up to `index`.
    async fn wait_applied(&self, index: u64, deadline: Instant) {
        let mut metrics = self.raft.metrics();
        loop {
            if self.sm.last_applied().is_some_and(|l| l.index >= index) {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::debug!(index, "forwarded write not yet applied here");
                return;
            }
            if !matches!(
                tokio::time::timeout(left, metrics.changed()).await,
                Ok(Ok(()))
            ) {
                return;
            }
        }
    }

    /// Waits until this node has applied everything committed cluster-wide before the call: it
    /// asks the current leader for its read index (the leader confirms its office with a
    /// quorum first; this node, if it leads) and waits to apply up to it. Afterwards the applied
    /// state is at least as new as anything this node (any earlier run of it included) ever
    /// applied, which is what deciding that some local data is stale needs. Fails after
    /// `limit` without a leader, a quorum, or the entries. Returns the index caught up to.
    pub async fn wait_caught_up_with_leader(
        &self,
        limit: Duration,
    ) -> Result<Option<u64>, ReadError> {
        let deadline = Instant::now() + limit;
        let mut leader_watch = self.leader.clone();
        let left = || deadline.saturating_duration_since(Instant::now());
        let leader =
            match tokio::time::timeout(left(), leader_watch.wait_for(Option::is_some)).await {
                Ok(Ok(leader)) => leader.clone(),
                _ => {
                    return Err(ReadError::Raft(format!(
                        "no leader known within {} ms",
                        limit.as_millis()
                    )))
                }
            };
        let Some(leader) = leader else {
            return Err(ReadError::Raft("no leader known".to_owned()));
        };
        let index = if leader.node_id == self.node_id {
            self.control.read_index().await?
        } else {
            let answer = self
                .network
                .call(leader.node_id, &leader.info, &RpcRequest::ReadIndex, left())
                .await
                .map_err(|e| ReadError::Raft(e.to_string()))?;
            match answer {
                RpcResponse::ReadIndex(Ok(index)) => index,
                RpcResponse::ReadIndex(Err(reason)) => {
                    return Err(ReadError::Raft(format!(
                        "leader {} gave no read index: {reason}",
                        leader.node_id
                    )))
                }
                _ => {
                    return Err(ReadError::Raft(format!(
                        "node {} answered a read index request with something else",
                        leader.node_id
                    )))
                }
            }
        };
        let Some(index) = index else {
            return Ok(None);
        };
        self.wait_applied(index, deadline).await;
        match self.sm.last_applied() {
            Some(applied) if applied.index >= index => Ok(Some(index)),
            applied => Err(ReadError::Raft(format!(
                "applied {:?} of the leader's read index {index} within {} ms",
                applied.map(|l| l.index),
                limit.as_millis()
            ))),
        }
    }

    /// Confirms leadership with a quorum, waits until the state machine has applied everything
    /// committed before the call, then runs `f` on the applied state.
    pub async fn read<R>(&self, f: impl FnOnce(&A) -> R) -> Result<R, ReadError> {
        self.control.confirm_leadership().await?;
        Ok(self.sm.read(|applied| f(&applied.app)))
    }

    /// Runs `f` on this node's applied state without a quorum round trip (may be stale).
    pub fn read_local<R>(&self, f: impl FnOnce(&Applied<A>) -> R) -> R {
        self.sm.read(f)
    }

    /// The leader as this node last heard.
    pub fn leader(&self) -> Option<LeaderInfo> {
        self.leader.borrow().clone()
    }

    pub fn is_leader(&self) -> bool {
        self.sm.halted().is_none() && self.leader().is_some_and(|l| l.node_id == self.node_id)
    }

    /// Whether this node leads and a quorum accepted its AppendEntries within the leader
    /// lease, so no other node can have been elected since: what it reads from its applied
    /// state is current. One atomic load, no round trip (see `lease`).
    pub fn holds_lease(&self) -> bool {
        self.lease.holds()
    }

    /// The disk-full guards of this node's Raft data: the log (segment store) and the
    /// snapshots (decision 0112). The binary shows them in `/metrics` and re-checks them.
    pub fn space_guards(&self) -> Vec<compaction::SpaceGuard> {
        self.log
            .space()
            .into_iter()
            .chain(std::iter::once(self.sm.space().clone()))
            .collect()
    }

    /// The lease itself (its length, what is left of it).
    pub fn lease(&self) -> &LeaderLease {
        &self.lease
    }

    /// Changes whenever the leader (or its address) changes; the binary compares the id with its
    /// own to start or stop acting as coordinator.
    pub fn leader_watch(&self) -> watch::Receiver<Option<LeaderInfo>> {
        self.leader.clone()
    }

    pub fn status(&self) -> ClusterStatus {
        self.control.status()
    }

    /// Why this node stopped applying the log, once it has: the first committed entry (or
    /// received snapshot) it could not decode, by index, and the reason. A halted node leads
    /// nothing, knows no leader and refuses writes; it must not serve from its applied state
    /// (readiness false) until an operator upgrades or repairs it and restarts it.
    pub fn apply_halted(&self) -> Option<ApplyHalted> {
        self.sm.halted()
    }

    /// Changes once, when the node halts (see [`MetaNode::apply_halted`]).
    pub fn watch_apply_halted(&self) -> watch::Receiver<Option<ApplyHalted>> {
        self.sm.watch_halted()
    }

    /// Why this node cannot serve at all, if it cannot: its apply loop halted, or its Raft
    /// stopped on a fatal error (a storage failure, for one). `None` while it runs.
    pub fn fatal(&self) -> Option<String> {
        if let Some(h) = self.sm.halted() {
            return Some(h.to_string());
        }
        match &self.raft.metrics().borrow().running_state {
            Ok(()) => None,
            Err(openraft::error::Fatal::Stopped) => Some("raft stopped".to_owned()),
            Err(e) => Some(format!("raft stopped on a fatal error: {e}")),
        }
    }

    pub async fn add_voter(
        &self,
        node_id: NodeId,
        raft_addr: String,
        kafka_addr: String,
    ) -> Result<ClusterStatus, MembershipError> {
        self.control
            .add_voter(
                node_id,
                NodeInfo {
                    raft_addr,
                    kafka_addr,
                    listeners: Vec::new(),
                },
            )
            .await
    }

    /// Records this node's Kafka listeners in the membership (decision 0184): a task that asks
    /// the leader until this node's record lists them, then ends (it ends too when Raft
    /// stops). A node that is no member yet (`--join`) publishes once it is added.
    pub fn publish_listeners(&self, listeners: Vec<crate::types::KafkaListener>) -> JoinHandle<()> {
        tokio::spawn(crate::publish::publish_listeners(
            self.node_id,
            self.raft.clone(),
            self.control.clone(),
            self.peer_auth.clone(),
            listeners,
            self.request_timeout,
        ))
    }

    pub async fn remove_voter(&self, node_id: NodeId) -> Result<ClusterStatus, MembershipError> {
        self.control.remove_voter(node_id).await
    }

    /// Builds a snapshot now (tests and operators; the policy does it on its own).
    pub async fn trigger_snapshot(&self) -> Result<(), StartError> {
        self.raft
            .trigger()
            .snapshot()
            .await
            .map_err(|e| StartError::Raft(e.to_string()))
    }

    /// Cuts this node off from its peers (both directions) or reconnects it; for partition tests.
    pub fn set_transport_paused(&self, paused: bool) {
        self.transport_paused.store(paused, Ordering::Relaxed);
    }

    /// Durability syncs the log store ran since start.
    pub fn log_sync_count(&self) -> u64 {
        self.log.sync_count()
    }

    /// Bytes the log store occupies on disk.
    pub fn log_size_on_disk(&self) -> u64 {
        self.log.size_on_disk()
    }

    /// The underlying openraft handle, for what this API does not cover yet.
    pub fn raft(&self) -> &Raft {
        &self.raft
    }

    /// Stops Raft and every task of this node.
    pub async fn shutdown(self) {
        if let Err(e) = self.raft.shutdown().await {
            tracing::warn!(error = %e, "raft shutdown");
        }
        for task in &self.tasks {
            task.abort();
        }
        // Wait until they are gone: the listener and peer connections close with them, so the
        // address can be bound again right away.
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// How long the log and apply gauges may lag Raft: they change with every commit, and waking
/// for each change cost a task wake-up per commit and more.
const DATA_GAUGES_LAG_MAX: Duration = Duration::from_millis(50);

/// Publishes Raft's metrics and the leader; a halted node knows no leader from then on.
///
/// Follows Raft's server metrics (role, leader, vote, membership: what the leader watch and
/// the lease need, at once) and its data metrics (log, apply and snapshot indexes: gauges
/// only, at most [`DATA_GAUGES_LAG_MAX`] late), not the whole metrics, which openraft sends
/// on every turn of its loop, several times per commit (decision 0131).
async fn watch_metrics(
    raft: Raft,
    mut halted: watch::Receiver<Option<ApplyHalted>>,
    leader_tx: watch::Sender<Option<LeaderInfo>>,
    lease: Arc<LeaderLease>,
) {
    let mut server = raft.server_metrics();
    let mut data = raft.data_metrics();
    let mut gauges_due: Option<tokio::time::Instant> = None;
    publish_data_gauges(&data.borrow_and_update());
    loop {
        {
            let m = server.borrow_and_update();
            crate::metrics::publish_server(&m);
            let stopped = halted.borrow_and_update().is_some();
            crate::metrics::publish_halted(stopped);
            let leading = !stopped
                && m.state == openraft::ServerState::Leader
                && m.current_leader == Some(m.id);
            let term = m.vote.leader_id().get_term();
            lease.observe(
                term,
                leading,
                m.membership_config.membership().get_joint_config().clone(),
            );
            let leader = if stopped {
                None
            } else {
                m.current_leader.and_then(|id| {
                    let info = m.membership_config.membership().get_node(&id)?.clone();
                    Some(LeaderInfo { node_id: id, info })
                })
            };
            leader_tx.send_if_modified(|current| {
                if *current != leader {
                    // One line per change of leader on every node: who leads is what an
                    // operator reads first when a cluster misbehaves. The leader's record
                    // changing (its listeners published, decision 0184) is no new leader.
                    let id = |l: &Option<LeaderInfo>| l.as_ref().map(|l| l.node_id);
                    let same_leader = id(current) == id(&leader);
                    match &leader {
                        _ if same_leader => {}
                        Some(l) => tracing::info!(
                            leader = l.node_id,
                            term,
                            kafka = %l.info.kafka_addr,
                            "Raft leader is node {}", l.node_id
                        ),
                        None => tracing::info!(term, "no Raft leader known"),
                    }
                    *current = leader;
                    true
                } else {
                    false
                }
            });
        }
        // Until a server change (handled at once, above): the data gauges, published once
        // they are due.
        loop {
            let due = gauges_due;
            tokio::select! {
                changed = server.changed() => {
                    if changed.is_err() {
                        // Raft stopped (openraft marks only its whole metrics Shutdown, then
                        // drops the senders): it leads nothing from now on.
                        stopped(&raft, &lease, &leader_tx);
                        return;
                    }
                    break;
                }
                changed = halted.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    break;
                }
                changed = data.changed(), if due.is_none() => {
                    if changed.is_err() {
                        stopped(&raft, &lease, &leader_tx);
                        return;
                    }
                    gauges_due = Some(tokio::time::Instant::now() + DATA_GAUGES_LAG_MAX);
                }
                () = async move {
                    if let Some(at) = due {
                        tokio::time::sleep_until(at).await;
                    }
                }, if due.is_some() => {
                    gauges_due = None;
                    publish_data_gauges(&data.borrow_and_update());
                }
            }
        }
    }
}

fn publish_data_gauges(m: &openraft::metrics::RaftDataMetrics<NodeId>) {
    crate::metrics::publish_data(m);
}

/// What a stopped Raft leaves behind: no leader, no lease, its last figures published.
fn stopped(raft: &Raft, lease: &LeaderLease, leader_tx: &watch::Sender<Option<LeaderInfo>>) {
    let m = raft.metrics().borrow().clone();
    crate::metrics::publish_role(m.state);
    lease.observe(m.current_term, false, Vec::new());
    leader_tx.send_replace(None);
}

/// Purges the log up to the oldest kept snapshot, so a corrupt newest snapshot can still fall
/// back to the previous one plus the log.
async fn purge_behind_snapshots(raft: Raft, mut floor: watch::Receiver<Option<u64>>) {
    loop {
        let upto = *floor.borrow_and_update();
        if let Some(upto) = upto {
            if raft.trigger().purge_log(upto).await.is_err() {
                return;
            }
        }
        if floor.changed().await.is_err() {
            return;
        }
    }
}

/// Builds a snapshot that was postponed for lack of space once the snapshot directory's disk
/// has room again (re-measured every 100 ms while it is full; decision 0112).
async fn snapshot_after_space<A: Application>(raft: Raft, sm: StateMachine<A>) {
    let mut tick = tokio::time::interval(compaction::space::RECHECK_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        let space = sm.space().clone();
        let still_full = space.is_full()
            && tokio::task::spawn_blocking(move || space.recheck())
                .await
                .unwrap_or(true);
        if !still_full && sm.take_postponed() {
            tracing::info!("building the snapshot postponed for lack of space");
            if raft.trigger().snapshot().await.is_err() {
                return;
            }
        }
    }
}

/// The byte half of the snapshot policy (openraft's policy counts entries only).
async fn snapshot_on_bytes<A: Application>(raft: Raft, sm: StateMachine<A>) {
    loop {
        sm.bytes_threshold_crossed().await;
        if raft.trigger().snapshot().await.is_err() {
            return;
        }
    }
}
