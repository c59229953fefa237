//! Transaction figures in `/metrics` (issue 13, decision 0145).
//!
//! Counters, counted by the active coordinator as it applies each decision
//! (`group_coordinator::runtime`): `cohort_transactions_started_total` (a transactional id
//! became Ongoing), `cohort_transactions_committed_total` and
//! `cohort_transactions_aborted_total` (a transaction was decided: PrepareCommit /
//! PrepareAbort; aborts include those a timeout or a newer producer decided), and
//! `cohort_transactions_timed_out_total` (aborted because it outlived its
//! `transaction.timeout.ms`).
//!
//! Gauges, rendered per server at scrape time (the global recorder is shared by every
//! in-process server of a test): on the active coordinator, how many transactional ids are in
//! each state and the age of the oldest transaction still open or completing; on every node,
//! each owned partition's LSO lag (high watermark − last stable offset), the records a
//! read_committed consumer cannot read yet because a transaction is undecided.

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock, Weak};

use crate::data::DataPlane;
use crate::readiness::Readiness;

/// Transactions that became Ongoing.
pub const STARTED_TOTAL: &str = "cohort_transactions_started_total";
/// Transactions decided to commit.
pub const COMMITTED_TOTAL: &str = "cohort_transactions_committed_total";
/// Transactions decided to abort (by EndTxn, a fence or a timeout).
pub const ABORTED_TOTAL: &str = "cohort_transactions_aborted_total";
/// Transactions aborted because they outlived their timeout.
pub const TIMED_OUT_TOTAL: &str = "cohort_transactions_timed_out_total";
/// Transactional ids by state (active coordinator only).
pub const BY_STATE: &str = "cohort_transactions";
/// Age of the oldest open or completing transaction, 0 when none (active coordinator only).
pub const OLDEST_OPEN_AGE_SECONDS: &str = "cohort_transactions_oldest_open_age_seconds";
/// High watermark − last stable offset, by `topic` and `partition` (owned partitions).
pub const LSO_LAG: &str = "cohort_partition_lso_lag";

/// Counts what one applied coordinator outcome decided (active coordinator only).
pub fn count(fired: Option<&coordinator::TimerKey>, outcome: &coordinator::Outcome) {
    let started = outcome
        .timers
        .iter()
        .filter(|t| {
            matches!(
                t,
                coordinator::TimerOp::Set {
                    key: coordinator::TimerKey::TransactionTimeout { .. },
                    ..
                }
            )
        })
        .count();
    if started > 0 {
        metrics::counter!(STARTED_TOTAL).increment(started as u64);
    }
    let committed = outcome.txn_markers.iter().filter(|m| m.commit).count();
    let aborted = outcome.txn_markers.len() - committed;
    if committed > 0 {
        metrics::counter!(COMMITTED_TOTAL).increment(committed as u64);
    }
    if aborted > 0 {
        metrics::counter!(ABORTED_TOTAL).increment(aborted as u64);
        if let Some(coordinator::TimerKey::TransactionTimeout { transactional_id }) = fired {
            metrics::counter!(TIMED_OUT_TOTAL).increment(aborted as u64);
            tracing::info!(
                transactional_id = transactional_id.as_str(),
                "transaction aborted: it outlived its transaction.timeout.ms"
            );
        }
    }
}

/// What the scrape-time gauges read; the data plane is attached once it is open.
#[derive(Default)]
pub struct TxnGauges {
    data: OnceLock<Weak<DataPlane>>,
}

impl TxnGauges {
    /// Attaches the data plane (once).
    pub fn attach(&self, data: &Arc<DataPlane>) {
        let _ = self.data.set(Arc::downgrade(data));
    }

    /// The gauges in Prometheus's text format.
    pub fn render(&self, readiness: &Readiness) -> String {
        let mut out = String::new();
        let coordinator = readiness.groups().and_then(|g| {
            g.read_state(|s| (s.transactions_by_state(), s.oldest_open_transaction_start()))
                .ok()
        });
        if let Some((by_state, oldest)) = coordinator {
            let _ = writeln!(
                out,
                "# HELP {BY_STATE} Transactional ids by state\n# TYPE {BY_STATE} gauge"
            );
            for (state, n) in by_state {
                let _ = writeln!(out, "{BY_STATE}{{state=\"{}\"}} {n}", state.as_str());
            }
            let now = crate::clock::now().0;
            let age_ms = oldest.map_or(0, |s| now.saturating_sub(s.0).max(0));
            let _ = writeln!(
                out,
                "# HELP {OLDEST_OPEN_AGE_SECONDS} Age of the oldest open or completing transaction\n\
                 # TYPE {OLDEST_OPEN_AGE_SECONDS} gauge\n{OLDEST_OPEN_AGE_SECONDS} {}",
                age_ms as f64 / 1000.0
            );
        }
        if let Some(data) = self.data.get().and_then(Weak::upgrade) {
            let mut partitions: Vec<(String, i32, i64)> = data
                .open_partitions()
                .iter()
                .map(|p| {
                    let lag = p.high_watermark() - p.last_stable_offset();
                    (p.topic.clone(), p.index, lag.max(0))
                })
                .collect();
            partitions.sort();
            let _ = writeln!(
                out,
                "# HELP {LSO_LAG} High watermark minus last stable offset\n# TYPE {LSO_LAG} gauge"
            );
            for (topic, partition, lag) in partitions {
                let _ = writeln!(
                    out,
                    "{LSO_LAG}{{topic=\"{}\",partition=\"{partition}\"}} {lag}",
                    escape(&topic)
                );
            }
        }
        out
    }
}

/// A Prometheus label value: backslash, quote and newline escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
