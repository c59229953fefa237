//! A deterministic simulation of the replicated core: three openraft nodes running the crate's
//! `StateMachine` with the real `CohortApp`, on a simulated disk (`disk`) and network
//! (`network`), in one current-thread tokio runtime whose clock is paused (it jumps to the next
//! timer whenever every task waits). A seed draws the fault schedule, the workload, message
//! delays and losses, sync times and election jitter; `checker` holds the invariants.
//!
//! ```text
//!  seed ─► schedule (crash, restart, power loss, cuts, loss) ─┐
//!       ─► client (commits, admin resets, topic create/delete)├─► driver: every 5 ms simulated
//!       ─► elector jitter                                     │     faults due · elections ·
//!  nodes 1..3: openraft ◄─► SimNet ◄─► openraft               │     client · invariants
//!              └─ SimDisk (unsynced tail lost on crash)       ┘
//!              └─ StateMachine<Recorder<CohortApp>> ─► checker (positions, offsets)
//!  then: heal, restart all, wait until all apply the last acknowledged commit, compare states
//! ```
//!
//! openraft's own election timer is off, as on a real node (`election.rs`); the driver plays
//! the elector: a node campaigns once it has heard no leader for the lease plus a seeded jitter.

pub mod checker;
pub mod disk;
pub mod network;
pub mod recorder;
pub mod rng;
pub mod schedule;
pub mod workload;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use openraft::error::{InitializeError, RaftError};
use openraft::{Config, ServerState};
use raft_meta::app::Application;
use raft_meta::cohort_app::{CohortApp, TopicLimits};
use raft_meta::types::Raft;
use raft_meta::{raft_config, NodeId, NodeInfo, StateMachine, Tuning};
use tokio::time::Instant;

use checker::Checker;
use disk::{FlushMode, SimDisk};
use network::{SimNet, SimNetworkFactory};
use recorder::Recorder;
use rng::SimRng;
use schedule::{Fault, NODES};
use workload::Client;

/// Simulated time between two driver steps (fault injection, elections, client, checks).
const STEP: Duration = Duration::from_millis(5);
/// Clients writing at once, one consumer group each.
const CLIENTS: u64 = 3;
/// How long after the faults stop the cluster has to converge before that is a failure.
const CONVERGE_LIMIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy)]
pub struct SimOptions {
    pub seed: u64,
    /// Simulated milliseconds of faults and workload.
    pub fault_ms: u64,
    pub flush: FlushMode,
    /// Print every fault, election and leader as it happens (`SIM_VERBOSE=1`, for a replay).
    pub verbose: bool,
}

/// What a passing seed did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimReport {
    pub seed: u64,
    pub trace: u64,
    pub sent: u64,
    pub acknowledged: u64,
    pub last_index: u64,
    pub crashes: u64,
    /// Leader ids that led at some step.
    pub leaderships: usize,
}

/// Why a seed failed: the broken invariants, in the order they were seen.
#[derive(Debug, Clone)]
pub struct SimFailure {
    pub seed: u64,
    pub flush: FlushMode,
    pub violations: Vec<String>,
}

impl std::fmt::Display for SimFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "simulation seed {} failed:", self.seed)?;
        for v in self.violations.iter().take(10) {
            writeln!(f, "  - {v}")?;
        }
        let test = match self.flush {
            FlushMode::Honest => "seeds_keep_the_invariants",
            FlushMode::AckBeforeSync => "the_checker_catches_a_flush_acknowledged_before_sync",
        };
        write!(
            f,
            "replay it alone: SIM_SEED={} SIM_VERBOSE=1 cargo test -p raft-meta --test suite \
             simulation::{test} -- --nocapture",
            self.seed
        )
    }
}

fn tuning() -> Tuning {
    Tuning {
        heartbeat_ms: 50,
        election_timeout_min_ms: 150,
        election_timeout_max_ms: 300,
        // No snapshots: a restarted node rebuilds its state from the log alone (the snapshot
        // paths do blocking file IO off the runtime, which a paused clock cannot wait for).
        snapshot_every_entries: u64::MAX / 2,
        snapshot_every_bytes: u64::MAX,
        ..Tuning::default()
    }
}

struct SimNode {
    id: NodeId,
    disk: SimDisk,
    dir: std::path::PathBuf,
    incarnation: u64,
    running: Option<Running>,
    /// When this node next may campaign, drawn after each contact or attempt.
    jitter: Duration,
}

struct Running {
    raft: Raft,
    sm: StateMachine<Recorder>,
    alive: Arc<AtomicBool>,
}

struct Cluster {
    nodes: Vec<SimNode>,
    net: SimNet,
    checker: Checker,
    config: Arc<Config>,
    elector_rng: SimRng,
    crashes: u64,
    started: Instant,
    verbose: bool,
    /// The (term, node) last printed as leader, so a verbose run prints each change once.
    shown_leader: std::cell::Cell<Option<checker::LeaderId>>,
}

fn members() -> BTreeMap<NodeId, NodeInfo> {
    NODES
        .iter()
        .map(|&id| {
            (
                id,
                NodeInfo {
                    raft_addr: format!("sim-{id}"),
                    kafka_addr: format!("sim-{id}"),
                    listeners: Vec::new(),
                },
            )
        })
        .collect()
}

impl Cluster {
    async fn start(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        if node.running.is_some() {
            return;
        }
        node.incarnation += 1;
        let alive = Arc::new(AtomicBool::new(true));
        let app = Recorder::new(
            node.id,
            CohortApp::new(coordinator::Config::default(), TopicLimits::default(), None),
            self.checker.clone(),
            alive.clone(),
        );
        let sm = StateMachine::open(&node.dir, app, u64::MAX).expect("open the state machine");
        let factory = SimNetworkFactory {
            from: node.id,
            incarnation: node.incarnation,
            net: self.net.clone(),
        };
        let raft = Raft::new(
            node.id,
            self.config.clone(),
            factory,
            node.disk.store(),
            sm.clone(),
        )
        .await
        .expect("start openraft");
        self.net.register(node.id, node.incarnation, raft.clone());
        // openraft restores a node whose saved vote is its own committed one as leader at
        // once: that leadership was elected before the crash.
        if let Some(vote) = node.disk.vote() {
            if vote.is_committed() && vote.leader_id().voted_for() == Some(node.id) {
                self.checker
                    .leader_restored((vote.leader_id().get_term(), node.id));
            }
        }
        if node.incarnation == 1 {
            // Every node initializes with the same members, as `Bootstrap::Cluster` does.
            match raft.initialize(members()).await {
                Ok(()) | Err(RaftError::APIError(InitializeError::NotAllowed(_))) => {}
                Err(e) => panic!("node {} cannot initialize: {e}", node.id),
            }
        }
        node.running = Some(Running { raft, sm, alive });
        self.checker.trace(("start", node.id, node.incarnation));
    }

    fn crash(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        let Some(running) = node.running.take() else {
            return;
        };
        self.net.unregister(node.id);
        running.alive.store(false, Ordering::Relaxed);
        let dropped = node.disk.crash();
        if self.verbose {
            eprintln!(
                "[{:>6} ms] node {} crashes: {dropped} unsynced entries lost, log now ends at {:?}",
                self.started.elapsed().as_millis(),
                node.id,
                node.disk.last_index()
            );
        }
        self.crashes += 1;
        self.checker.trace(("crash", node.id, dropped));
        // The store and the network already refuse this incarnation; stopping its tasks only
        // frees them.
        tokio::spawn(async move {
            let _ = running.raft.shutdown().await;
        });
    }

    fn say(&self, what: impl FnOnce() -> String) {
        if self.verbose {
            eprintln!("[{:>6} ms] {}", self.now_ms(), what());
        }
    }

    fn now_ms(&self) -> u128 {
        self.started.elapsed().as_millis()
    }

    async fn apply(&mut self, fault: &Fault) {
        self.say(|| format!("fault {fault:?}"));
        self.checker.trace(fault);
        match fault {
            Fault::Cut(cut) => self.net.set_cut(cut.clone()),
            Fault::Heal => self.net.set_cut(BTreeSet::new()),
            Fault::Loss(per_mille) => self.net.set_loss(*per_mille),
            Fault::Crash(id) => self.crash(index_of(*id)),
            Fault::Restart(id) => self.start(index_of(*id)).await,
            Fault::CrashAll => (0..NODES.len()).for_each(|i| self.crash(i)),
            Fault::RestartAll => {
                for i in 0..NODES.len() {
                    self.start(i).await;
                }
            }
        }
    }

    /// The simulated `election.rs`: a running follower or candidate that has heard no leader
    /// (and granted no vote) for the lease plus its jitter asks openraft to campaign, once a
    /// pre-vote finds a majority that would vote for it. The pre-vote is an oracle, not
    /// messages: a peer agrees if the links both ways are open, it does not lead, it has heard
    /// no leader for the lease, and the candidate's last log id is at least its own (the
    /// answer `election.rs` gets from a peer over the network).
    async fn elect(&mut self, lease: Duration) {
        let now = Instant::now();
        for i in 0..self.nodes.len() {
            let node = &self.nodes[i];
            let Some(running) = &node.running else {
                continue;
            };
            if running.raft.metrics().borrow().state == ServerState::Leader {
                continue;
            }
            let silent =
                |id: NodeId| now.duration_since(self.net.contact(id).unwrap_or(now)) >= lease;
            if now.duration_since(self.net.contact(node.id).unwrap_or(now)) < lease + node.jitter {
                continue;
            }
            let my_log = node.disk.last_log_id();
            let agree = self
                .nodes
                .iter()
                .filter(|peer| peer.id != node.id)
                .filter(|peer| {
                    peer.running
                        .as_ref()
                        .is_some_and(|r| r.raft.metrics().borrow().state != ServerState::Leader)
                        && self.net.both_ways(node.id, peer.id)
                        && silent(peer.id)
                        && my_log >= peer.disk.last_log_id()
                })
                .count();
            let raft = running.raft.clone();
            let id = node.id;
            self.nodes[i].jitter = Duration::from_millis(self.elector_rng.range(0, 150));
            // Next look after the retry delay, whatever the outcome.
            self.net.touch(id);
            if 1 + agree < NODES.len() / 2 + 1 {
                self.checker.trace(("pre-vote refused", id));
                continue;
            }
            let _ = raft.trigger().elect().await;
            if self.verbose {
                eprintln!(
                    "[{:>6} ms] node {id} campaigns",
                    self.started.elapsed().as_millis()
                );
            }
            self.checker.trace(("elect", id));
        }
    }

    /// The running leader with the greatest leader id, after checking the leaders of now.
    fn observe(&self) -> Option<Raft> {
        let mut leaders: Vec<(
            checker::LeaderId,
            Option<u64>,
            Option<checker::LeaderId>,
            Raft,
        )> = Vec::new();
        for node in &self.nodes {
            let Some(running) = &node.running else {
                continue;
            };
            let m = running.raft.metrics().borrow().clone();
            self.checker.trace((
                node.id,
                m.current_term,
                format!("{:?}", m.state),
                m.last_applied.map(|l| l.index),
                m.last_log_index,
            ));
            if self.verbose && self.now_ms().is_multiple_of(50) {
                eprintln!(
                    "[{:>6} ms] state of node {} {:?} vote {} log {:?} applied {:?} leader {:?}",
                    self.now_ms(),
                    node.id,
                    m.state,
                    m.vote,
                    m.last_log_index,
                    m.last_applied.map(|l| l.index),
                    m.current_leader
                );
            }
            if m.state == ServerState::Leader {
                let id = (m.vote.leader_id().get_term(), node.id);
                let applied_by = m.last_applied.map(|l| {
                    (
                        l.leader_id.get_term(),
                        l.leader_id.voted_for().unwrap_or_default(),
                    )
                });
                leaders.push((id, m.last_log_index, applied_by, running.raft.clone()));
            }
        }
        leaders.sort_by_key(|(id, _, _, _)| *id);
        for (id, last_log_index, applied_by, _) in &leaders {
            self.checker.leader(*id, *last_log_index, *applied_by);
            if self.shown_leader.get() != Some(*id) {
                self.shown_leader.set(Some(*id));
                self.say(|| format!("node {} leads term {}", id.1, id.0));
            }
        }
        leaders.pop().map(|(_, _, _, raft)| raft)
    }

    fn applied(&self) -> Vec<Option<u64>> {
        self.nodes
            .iter()
            .map(|n| {
                n.running
                    .as_ref()
                    .and_then(|r| r.sm.last_applied().map(|l| l.index))
            })
            .collect()
    }
}

fn index_of(id: NodeId) -> usize {
    NODES.iter().position(|&n| n == id).unwrap_or(0)
}

/// Runs one seed to the end; `Err` names the seed and every invariant it broke.
pub fn run_seed(options: SimOptions) -> Result<SimReport, SimFailure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("build the runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let outcome = runtime.block_on(simulate(options, dir.path()));
    // Leftover tasks (shut-down Rafts, the client's last write) go with the runtime.
    drop(runtime);
    outcome
}

async fn simulate(options: SimOptions, dir: &std::path::Path) -> Result<SimReport, SimFailure> {
    let seed = options.seed;
    let tuning = tuning();
    let lease = Duration::from_millis(tuning.election_timeout_max_ms);
    let config = Arc::new(raft_config(&tuning).expect("raft config"));
    let mut schedule_rng = SimRng::stream(seed, 1);
    let faults = schedule::generate(&mut schedule_rng, options.fault_ms);
    let mut elector_rng = SimRng::stream(seed, 3);
    let nodes = NODES
        .iter()
        .map(|&id| SimNode {
            id,
            disk: SimDisk::new(SimRng::stream(seed, 10 + id), options.flush),
            dir: dir.join(format!("node-{id}")),
            incarnation: 0,
            running: None,
            jitter: Duration::from_millis(elector_rng.range(0, 150)),
        })
        .collect();
    let checker = Checker::default();
    let mut cluster = Cluster {
        nodes,
        net: SimNet::new(
            SimRng::stream(seed, 4),
            1 + SimRng::stream(seed, 5).below(20),
        ),
        checker: checker.clone(),
        config,
        elector_rng,
        crashes: 0,
        verbose: options.verbose,
        shown_leader: std::cell::Cell::new(None),
        started: Instant::now(),
    };
    let mut clients: Vec<Client> = (0..CLIENTS)
        .map(|i| Client::new(&format!("g{i}"), SimRng::stream(seed, 100 + i)))
        .collect();
    for i in 0..NODES.len() {
        cluster.start(i).await;
    }

    let start = Instant::now();
    let elapsed_ms = || start.elapsed().as_millis() as u64;
    let mut due = faults.into_iter().peekable();
    let mut steps: u64 = 0;
    // Faults and workload.
    while elapsed_ms() < options.fault_ms && checker.violations().is_empty() {
        tokio::time::sleep(STEP).await;
        checker.begin_step();
        steps += 1;
        while let Some((_, fault)) = due.next_if(|(at, _)| *at <= elapsed_ms()) {
            cluster.apply(&fault).await;
        }
        if options.flush == FlushMode::AckBeforeSync && steps.is_multiple_of(50) {
            cluster.nodes.iter().for_each(|n| n.disk.sync_all());
        }
        cluster.elect(lease).await;
        clients
            .iter_mut()
            .for_each(|c| c.poll(&checker, options.verbose));
        if let Some(leader) = cluster.observe() {
            clients
                .iter_mut()
                .for_each(|c| c.send(&leader, elapsed_ms()));
        }
    }

    // Heal everything, then wait until every node applied the last acknowledged commit and
    // all agree on the last applied index.
    cluster.apply(&Fault::Heal).await;
    cluster.apply(&Fault::Loss(0)).await;
    cluster.apply(&Fault::RestartAll).await;
    let converge_start = Instant::now();
    let converged = loop {
        if !checker.violations().is_empty() {
            break true;
        }
        tokio::time::sleep(STEP).await;
        checker.begin_step();
        cluster.elect(lease).await;
        clients
            .iter_mut()
            .for_each(|c| c.poll(&checker, options.verbose));
        cluster.observe();
        let (max_acked, _) = checker.acknowledged_summary();
        let applied = cluster.applied();
        let all_equal = applied.windows(2).all(|w| w[0] == w[1]);
        if clients.iter().all(Client::idle)
            && all_equal
            && applied[0].is_some_and(|a| a >= max_acked)
        {
            break true;
        }
        if converge_start.elapsed() > CONVERGE_LIMIT {
            break false;
        }
    };
    if !converged {
        checker.violation(format!(
            "liveness: not converged {} s after the faults stopped: applied {:?}, last \
             acknowledged index {}",
            CONVERGE_LIMIT.as_secs(),
            cluster.applied(),
            checker.acknowledged_summary().0
        ));
    }
    if checker.violations().is_empty() {
        // Same commands in the same order must give the same state everywhere.
        let states: Vec<_> = cluster
            .nodes
            .iter()
            .filter_map(|n| n.running.as_ref())
            .map(|r| r.sm.read(|a| a.app.snapshot_records()))
            .collect();
        if states.windows(2).any(|w| w[0] != w[1]) {
            checker.violation("replicas applied the same log but hold different states".into());
        }
    }

    let (last_index, _) = checker.acknowledged_summary();
    let report = SimReport {
        seed,
        trace: checker.trace_hash(),
        sent: clients.iter().map(|c| c.sent).sum(),
        acknowledged: clients.iter().map(|c| c.acknowledged).sum(),
        last_index,
        crashes: cluster.crashes,
        leaderships: checker.leaderships(),
    };
    for i in 0..NODES.len() {
        cluster.crash(i);
    }
    let violations = checker.violations();
    if violations.is_empty() {
        Ok(report)
    } else {
        Err(SimFailure {
            seed,
            flush: options.flush,
            violations,
        })
    }
}
