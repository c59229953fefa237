//! The task that keeps the exported lag current on the coordinator: every sample interval it
//! polls the partitions' log offsets, then takes one sample on the wall clock. On a node that
//! does not export (not the coordinator) it only drops its connections and waits.
//!
//! ```text
//!  tick ─► exporting? ─no─► forget connections
//!            └─yes─► poller.poll(consumed partitions) ─► feed.record_log_offsets ─► drop stale
//!                      ─► poller.record_times(offsets lagging groups wait at) ─► feed
//!                      ─► feed.sample(now)
//! ```

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::feed::LagFeed;
use super::log_offsets::LogOffsetsPoller;

/// Time one round of log-offset polling took, in seconds.
pub const POLL_SECONDS: &str = "cohort_lag_poll_seconds";
/// Owners that did not answer a round, by `node`.
pub const POLL_ERRORS_TOTAL: &str = "cohort_lag_poll_errors_total";
/// Group partitions the coordinator tracks (0 on other nodes).
pub const TRACKED_PARTITIONS: &str = "cohort_lag_tracked_partitions";

/// Runs until `shutdown` turns true.
pub async fn run_exporter(
    feed: Arc<LagFeed>,
    mut poller: LogOffsetsPoller,
    interval: Duration,
    mut shutdown: watch::Receiver<bool>,
) {
    // Owners failing now: a warning when one starts failing, a note when it is back.
    let mut failing: BTreeSet<i32> = BTreeSet::new();
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = ticks.tick() => {}
        }
        if !feed.is_exporting() {
            poller.reset();
            metrics::gauge!(TRACKED_PARTITIONS).set(0.0);
            continue;
        }
        let started = Instant::now();
        let wanted = feed.consumed_partitions();
        let round = tokio::select! {
            _ = shutdown.changed() => return,
            round = poller.poll(&wanted) => round,
        };
        metrics::histogram!(POLL_SECONDS).record(started.elapsed().as_secs_f64());
        let mut failed_now = BTreeSet::new();
        for (node, error) in &round.failures {
            metrics::counter!(POLL_ERRORS_TOTAL, "node" => node.to_string()).increment(1);
            if let super::log_offsets::PollError::Client(e) = error {
                if let Some(reason) = crate::security::inter_broker::refusal(e) {
                    crate::security::inter_broker::count_refusal("lag", reason);
                }
            }
            if !failing.contains(node) {
                tracing::warn!(node, %error,
                    "cannot learn log offsets from a partition owner; its partitions' lag will show as unknown");
            }
            failed_now.insert(*node);
        }
        for node in failing.difference(&failed_now) {
            tracing::info!(node, "log offsets learned again from a partition owner");
        }
        failing = failed_now;
        feed.record_log_offsets(&round.offsets);
        feed.retain_logs(|tp| poller.is_fresh(tp));
        // Lag in time: the timestamps of the records lagging groups wait at.
        let wanted = feed.record_times_wanted();
        if !wanted.is_empty() {
            let times = tokio::select! {
                _ = shutdown.changed() => return,
                times = poller.record_times(&wanted) => times,
            };
            feed.record_record_times(&times);
        }
        feed.sample(crate::clock::unix_ms_unsigned());
        metrics::gauge!(TRACKED_PARTITIONS).set(feed.tracked_partitions() as f64);
    }
}
