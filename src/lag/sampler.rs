//! The server side of the tracker: one shared instance, and the task that samples it on a
//! timer. The wall clock enters here; the tracker and the evaluator stay clock-free.

use super::tracker::LagTracker;

/// A tracker shared by the tasks that feed it and the ones that render it.
pub type SharedLagTracker = std::sync::Arc<std::sync::Mutex<LagTracker>>;

/// Milliseconds since the Unix epoch: the clock the server samples with.
pub fn wall_clock_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Samples `tracker` every `interval` until `shutdown` turns true (the server's clock enters
/// here, not in the tracker).
pub async fn run_sampler(
    tracker: SharedLagTracker,
    interval: std::time::Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = ticks.tick() => {
                let now = wall_clock_ms();
                tracker.lock().unwrap_or_else(|e| e.into_inner()).sample(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::TopicPartition;
    use crate::lag::LagTrackerConfig;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    fn tracker() -> LagTracker {
        LagTracker::new(LagTrackerConfig::default())
    }

    #[tokio::test]
    async fn the_sampler_samples_until_shutdown() {
        let shared: SharedLagTracker = std::sync::Arc::new(std::sync::Mutex::new(tracker()));
        let _ = shared.lock().unwrap().record_commit("g", &tp(0), 1, 0);
        shared.lock().unwrap().record_log_offsets(&tp(0), None, 3);
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(run_sampler(
            shared.clone(),
            std::time::Duration::from_millis(10),
            stopped,
        ));
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
        stop.send(true).unwrap();
        task.await.unwrap();
        let s = shared.lock().unwrap().snapshot(wall_clock_ms());
        assert!(s.groups[0].history.len() >= 2, "{:?}", s.groups[0].history);
        assert_eq!(s.groups[0].total_lag, Some(2));
    }
}
