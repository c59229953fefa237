//! Metric names and the few helpers that record them. Everything goes through the `metrics`
//! facade; the binary installs the Prometheus recorder.
//!
//! The fsync sampler also keeps raw fdatasync latencies in memory when switched on, so the
//! bake-off can print the run's own p50/p99 next to its throughput (shared disks are noisy).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use openraft::ServerState;

use crate::types::NodeId;

type RaftServerMetrics = openraft::metrics::RaftServerMetrics<NodeId, crate::types::NodeInfo>;
type RaftDataMetrics = openraft::metrics::RaftDataMetrics<NodeId>;

pub const ROLE: &str = "raft_role";
pub const TERM: &str = "raft_term";
pub const LEADER_ID: &str = "raft_leader_id";
pub const LAST_LOG_INDEX: &str = "raft_last_log_index";
pub const COMMIT_INDEX: &str = "raft_commit_index";
pub const APPLIED_INDEX: &str = "raft_applied_index";
pub const SNAPSHOT_INDEX: &str = "raft_snapshot_index";
pub const APPEND_SECONDS: &str = "raft_append_seconds";
pub const APPLY_SECONDS: &str = "raft_apply_seconds";
pub const FSYNC_SECONDS: &str = "raft_fsync_seconds";
pub const SNAPSHOT_BUILD_SECONDS: &str = "raft_snapshot_build_seconds";
pub const SNAPSHOT_BYTES: &str = "raft_snapshot_bytes";
pub const WRITE_BATCH_COMMANDS: &str = "raft_write_batch_commands";
/// Writes that found nothing queued and a batch slot free, and went to Raft from the writer's
/// own task (each also counts as a batch of one in `raft_write_batch_commands`).
pub const WRITES_ALONE_TOTAL: &str = "raft_writes_alone_total";
/// 1 once the apply loop halted on an entry or snapshot it cannot read (see `ApplyHalted`).
pub const APPLY_HALTED: &str = "raft_apply_halted";

/// Samples kept at most, so a long run cannot grow the sampler without bound.
const FSYNC_SAMPLES_MAX: usize = 4_000_000;

static FSYNC_SAMPLING: AtomicBool = AtomicBool::new(false);
static FSYNC_SAMPLES: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Role as a number for a gauge: 0 learner, 1 follower, 2 candidate, 3 leader, 4 shut down.
pub fn role_code(state: ServerState) -> f64 {
    match state {
        ServerState::Learner => 0.0,
        ServerState::Follower => 1.0,
        ServerState::Candidate => 2.0,
        ServerState::Leader => 3.0,
        ServerState::Shutdown => 4.0,
    }
}

/// Role, term and leader, from Raft's server metrics.
pub(crate) fn publish_server(m: &RaftServerMetrics) {
    metrics::gauge!(ROLE).set(role_code(m.state));
    metrics::gauge!(TERM).set(m.vote.leader_id().get_term() as f64);
    metrics::gauge!(LEADER_ID).set(m.current_leader.map_or(-1.0, |id| id as f64));
}

/// The role alone (a stopped Raft's last word).
pub(crate) fn publish_role(state: ServerState) {
    metrics::gauge!(ROLE).set(role_code(state));
}

/// Log, apply and snapshot indexes, from Raft's data metrics.
pub(crate) fn publish_data(m: &RaftDataMetrics) {
    metrics::gauge!(LAST_LOG_INDEX).set(m.last_log.map_or(0, |l| l.index) as f64);
    metrics::gauge!(APPLIED_INDEX).set(m.last_applied.map_or(0, |l| l.index) as f64);
    metrics::gauge!(SNAPSHOT_INDEX).set(m.snapshot.map_or(0, |l| l.index) as f64);
}

pub(crate) fn publish_halted(halted: bool) {
    metrics::gauge!(APPLY_HALTED).set(if halted { 1.0 } else { 0.0 });
}

pub(crate) fn record_fsync(elapsed: Duration) {
    metrics::histogram!(FSYNC_SECONDS).record(elapsed.as_secs_f64());
    sample_fsync(elapsed);
}

fn sample_fsync(elapsed: Duration) {
    if FSYNC_SAMPLING.load(Ordering::Relaxed) {
        let mut samples = FSYNC_SAMPLES.lock().unwrap_or_else(|e| e.into_inner());
        if samples.len() < FSYNC_SAMPLES_MAX {
            samples.push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
        }
    }
}

/// The histograms every Raft entry records, looked up once: a lookup hashes the name and
/// locks the registry, and a lone commit (one entry) made three. The rare fsyncs (the state
/// file, snapshots) go through [`record_fsync`].
#[derive(Clone)]
pub(crate) struct EntryTimings {
    fsync: metrics::Histogram,
    append: metrics::Histogram,
    apply: metrics::Histogram,
}

impl EntryTimings {
    /// Binds to the recorder installed now (the broker installs its own before any node).
    pub fn new() -> Self {
        Self {
            fsync: metrics::histogram!(FSYNC_SECONDS),
            append: metrics::histogram!(APPEND_SECONDS),
            apply: metrics::histogram!(APPLY_SECONDS),
        }
    }

    pub fn fsync(&self, elapsed: Duration) {
        self.fsync.record(elapsed.as_secs_f64());
        sample_fsync(elapsed);
    }

    pub fn append(&self, elapsed: Duration) {
        self.append.record(elapsed.as_secs_f64());
    }

    pub fn apply(&self, elapsed: Duration) {
        self.apply.record(elapsed.as_secs_f64());
    }
}

/// Starts (or restarts) keeping raw fsync latencies in memory.
pub fn fsync_sampling_start() {
    FSYNC_SAMPLES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
    FSYNC_SAMPLING.store(true, Ordering::Relaxed);
}

/// Stops sampling and returns the fsync latencies seen since the start, in microseconds.
pub fn fsync_sampling_take() -> Vec<u32> {
    FSYNC_SAMPLING.store(false, Ordering::Relaxed);
    std::mem::take(&mut *FSYNC_SAMPLES.lock().unwrap_or_else(|e| e.into_inner()))
}
