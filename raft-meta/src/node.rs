//! The handle the binary drives: start a node, write commands, read applied state linearizably,
//! follow leadership, change membership.
//!
//! ```text
//!  MetaNode::start(config, app)
//!    ├─ open <raft_dir>/log-<store>, <raft_dir>/snapshots (restore app from the newest valid snapshot)
//!    ├─ bind the Raft listener, start openraft
//!    ├─ bootstrap: Single → one voter (itself); Cluster(peers) → all nodes initialize with the same
//!    │            peer list (idempotent, safe in any order); Join → wait to be added
//!    └─ tasks: peer server · write batcher · metrics + leader watch · log purge · byte-based snapshots
//! ```

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use openraft::error::{CheckIsLeaderError, InitializeError, RaftError};
use openraft::storage::RaftLogStorage;
use openraft::{Config, SnapshotPolicy};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::app::Application;
use crate::batcher::{self, BatchLimits, PendingWrite};
use crate::control::{leader_of, Control};
use crate::error::{MembershipError, ReadError, StartError, WriteError};
use crate::network::{server, NetworkFactory};
use crate::state_machine::{Applied, StateMachine};
use crate::status::{ClusterStatus, LeaderInfo};
use crate::store::{LogStore, RaftStore, StoreProbe};
use crate::types::{NodeId, NodeInfo, Raft};

/// Largest single command accepted by `write`.
pub const COMMAND_BYTES_MAX: usize = 1024 * 1024;
/// Writes waiting for a batch slot; writers past this wait (backpressure).
const PENDING_WRITES_MAX: usize = 16 * 1024;
const STORE_KIND_FILE: &str = "store-kind";

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
    pub heartbeat_ms: u64,
    pub election_timeout_min_ms: u64,
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
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            // A follower campaigns after a leader lease (election max) plus an election timeout
            // without heartbeats: 0.7-1.0 s; the wide range makes split votes rare, and one more
            // round still fits the 1.5 s failover target.
            heartbeat_ms: 50,
            election_timeout_min_ms: 200,
            election_timeout_max_ms: 500,
            snapshot_every_entries: 20_000,
            snapshot_every_bytes: 64 * 1024 * 1024,
            batch_commands_max: 4096,
            batch_bytes_max: 1024 * 1024,
            batches_in_flight_max: 2,
            request_timeout: Duration::from_secs(5),
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
}

/// A running Raft node replicating an application `A`.
pub struct MetaNode<A: Application> {
    node_id: NodeId,
    raft: Raft,
    sm: StateMachine<A>,
    log: LogStore,
    control: Control,
    local_addr: SocketAddr,
    writes: mpsc::Sender<PendingWrite>,
    leader: watch::Receiver<Option<LeaderInfo>>,
    transport_paused: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
    request_timeout: Duration,
}

fn check_store_kind(raft_dir: &Path, store: RaftStore) -> Result<(), StartError> {
    let marker = raft_dir.join(STORE_KIND_FILE);
    let dir_err = |source| StartError::DataDir {
        path: marker.clone(),
        source,
    };
    match std::fs::read_to_string(&marker) {
        Ok(existing) if existing.trim() == store.name() => Ok(()),
        Ok(existing) => Err(StartError::Config(format!(
            "{} holds a {} raft store; refusing to start it as {} (its log would look empty)",
            raft_dir.display(),
            existing.trim(),
            store.name()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::write(&marker, store.name()).map_err(dir_err)?;
            crate::snapshot_file::sync_dir(raft_dir).map_err(|e| StartError::Config(e.to_string()))
        }
        Err(e) => Err(dir_err(e)),
    }
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
        std::fs::create_dir_all(&config.raft_dir).map_err(|source| StartError::DataDir {
            path: config.raft_dir.clone(),
            source,
        })?;
        check_store_kind(&config.raft_dir, config.store)?;

        let probe = StoreProbe::default();
        let log_dir = config.raft_dir.join(format!("log-{}", config.store.name()));
        let mut log = LogStore::open(config.store, &log_dir, probe.clone())?;
        let sm = StateMachine::open(
            &config.raft_dir.join("snapshots"),
            app,
            tuning.snapshot_every_bytes,
        )?;

        let log_state = log
            .get_log_state()
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
        };

        let raft_config = Config {
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
            ..Default::default()
        }
        .validate()
        .map_err(|e| StartError::Config(e.to_string()))?;

        let transport_paused = Arc::new(AtomicBool::new(false));
        let network = NetworkFactory::new(transport_paused.clone());
        let raft = Raft::new(
            config.node_id,
            Arc::new(raft_config),
            network,
            log.clone(),
            sm.clone(),
        )
        .await
        .map_err(|e| StartError::Raft(e.to_string()))?;
        let control = Control {
            raft: raft.clone(),
            probe,
        };

        let mut tasks = Vec::new();
        tasks.push(tokio::spawn(server::serve(
            listener,
            control.clone(),
            transport_paused.clone(),
        )));

        let (leader_tx, leader_rx) = watch::channel(None);
        tasks.push(tokio::spawn(watch_metrics(raft.clone(), leader_tx)));
        tasks.push(tokio::spawn(purge_behind_snapshots(
            raft.clone(),
            sm.purge_floor(),
        )));
        tasks.push(tokio::spawn(snapshot_on_bytes(raft.clone(), sm.clone())));

        let (writes, queue) = mpsc::channel(PENDING_WRITES_MAX);
        let limits = BatchLimits {
            commands_max: tuning.batch_commands_max,
            bytes_max: tuning.batch_bytes_max,
            in_flight_max: tuning.batches_in_flight_max,
            write_timeout: tuning.request_timeout,
        };
        tasks.push(tokio::spawn(batcher::run(raft.clone(), queue, limits)));

        let node = Self {
            node_id: config.node_id,
            raft,
            sm,
            log,
            control,
            local_addr,
            writes,
            leader: leader_rx,
            transport_paused,
            tasks,
            request_timeout: tuning.request_timeout,
        };
        node.bootstrap(&config.bootstrap, own_info).await?;
        Ok(node)
    }

    async fn bootstrap(&self, bootstrap: &Bootstrap, own_info: NodeInfo) -> Result<(), StartError> {
        if self
            .raft
            .is_initialized()
            .await
            .map_err(|e| StartError::Raft(e.to_string()))?
        {
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
        if command.len() > COMMAND_BYTES_MAX {
            return Err(WriteError::CommandTooLarge {
                bytes: command.len(),
                limit: COMMAND_BYTES_MAX,
            });
        }
        let (reply, rx) = oneshot::channel();
        self.writes
            .send(PendingWrite { command, reply })
            .await
            .map_err(|_| WriteError::ShuttingDown)?;
        rx.await.map_err(|_| WriteError::ShuttingDown)?
    }

    /// Confirms leadership with a quorum, waits until the state machine has applied everything
    /// committed before the call, then runs `f` on the applied state.
    pub async fn read<R>(&self, f: impl FnOnce(&A) -> R) -> Result<R, ReadError> {
        match tokio::time::timeout(self.request_timeout, self.raft.ensure_linearizable()).await {
            Ok(Ok(_)) => Ok(self.sm.read(|applied| f(&applied.app))),
            Ok(Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(fwd)))) => {
                Err(ReadError::NotLeader {
                    leader: fwd
                        .leader_id
                        .zip(fwd.leader_node)
                        .map(|(node_id, info)| LeaderInfo { node_id, info }),
                })
            }
            Ok(Err(RaftError::Fatal(_))) => Err(ReadError::ShuttingDown),
            Ok(Err(e)) => Err(ReadError::Raft(e.to_string())),
            Err(_) => Err(ReadError::Raft(format!(
                "leadership not confirmed within {} ms",
                self.request_timeout.as_millis()
            ))),
        }
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
        self.leader().is_some_and(|l| l.node_id == self.node_id)
    }

    /// Changes whenever the leader (or its address) changes; the binary compares the id with its
    /// own to start or stop acting as coordinator.
    pub fn leader_watch(&self) -> watch::Receiver<Option<LeaderInfo>> {
        self.leader.clone()
    }

    pub fn status(&self) -> ClusterStatus {
        self.control.status()
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
                },
            )
            .await
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

async fn watch_metrics(raft: Raft, leader_tx: watch::Sender<Option<LeaderInfo>>) {
    let mut metrics = raft.metrics();
    loop {
        {
            let m = metrics.borrow_and_update();
            crate::metrics::publish(&m);
            let leader = leader_of(&m);
            leader_tx.send_if_modified(|current| {
                if *current != leader {
                    *current = leader;
                    true
                } else {
                    false
                }
            });
        }
        if metrics.changed().await.is_err() {
            return;
        }
    }
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

/// The byte half of the snapshot policy (openraft's policy counts entries only).
async fn snapshot_on_bytes<A: Application>(raft: Raft, sm: StateMachine<A>) {
    loop {
        sm.bytes_threshold_crossed().await;
        if raft.trigger().snapshot().await.is_err() {
            return;
        }
    }
}
