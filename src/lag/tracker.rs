//! `LagTracker`: what the server keeps to judge and show lag. It is fed, never reads anything
//! itself: commits as the coordinator applies them, log-start/log-end offsets as the data plane
//! (or, in a cluster, the partitions' nodes) report them, group state and membership; `sample`
//! turns the latest values into one observation per group partition and one point of each
//! group's lag history. Everything is bounded: the window and history by time and count, the
//! number of groups and of partitions per group by configuration.
//!
//! ```text
//!   record_commit / record_log_offsets / record_group ──► latest values
//!   sample(now) ──► window of observations per (group, partition) ──► evaluate ──► status
//!               └─► history point per group (total lag)        ──► snapshot ──► console, metrics
//! ```

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

use super::status::{evaluate, LagStatus, Observation};
use crate::client::TopicPartition;

/// Limits and windows of a tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LagTrackerConfig {
    /// How far back the status evaluator looks.
    pub window_ms: u64,
    /// Most observations kept per partition, whatever the window.
    pub observations_max: usize,
    /// How far back each group's lag history goes (the console charts it).
    pub history_ms: u64,
    /// Most history points per group; points closer than `history_ms / history_points_max` are
    /// merged into the latest one.
    pub history_points_max: usize,
    /// Most groups tracked; commits for further groups are ignored.
    pub groups_max: usize,
    /// Most partitions tracked per group.
    pub partitions_per_group_max: usize,
    /// Most group partitions tracked in all (each keeps a window of observations).
    pub partitions_max: usize,
}

impl Default for LagTrackerConfig {
    fn default() -> Self {
        LagTrackerConfig {
            window_ms: 60_000,
            observations_max: 120,
            history_ms: 3_600_000,
            history_points_max: 720,
            groups_max: 10_000,
            partitions_per_group_max: 10_000,
            partitions_max: 50_000,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct PartitionTrack {
    committed: Option<i64>,
    commits: u64,
    window: VecDeque<Observation>,
}

#[derive(Debug, Clone, Default)]
struct GroupTrack {
    state: Option<String>,
    members: Option<usize>,
    partitions: BTreeMap<TopicPartition, PartitionTrack>,
    history: VecDeque<LagPoint>,
}

#[derive(Debug, Clone, Copy, Default)]
struct LogOffsets {
    log_start: Option<i64>,
    log_end: Option<i64>,
}

/// One point of a group's lag history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LagPoint {
    /// When, in ms since the epoch.
    pub at_ms: u64,
    /// Sum of the known partition lags then.
    pub total_lag: i64,
}

/// One partition in a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionSnapshot {
    /// Topic.
    pub topic: String,
    /// Partition index.
    pub partition: i32,
    /// Committed offset.
    pub committed: Option<i64>,
    /// Log-end offset.
    pub log_end: Option<i64>,
    /// Lag (`log_end - committed`), when both are known.
    pub lag: Option<i64>,
    /// Lag status over the window.
    pub status: Option<LagStatus>,
}

/// One group in a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupSnapshot {
    /// Group id.
    pub group: String,
    /// Group state as last reported (`Stable`, `Empty`, ...).
    pub state: Option<String>,
    /// Member count as last reported.
    pub members: Option<usize>,
    /// Sum of the known partition lags.
    pub total_lag: Option<i64>,
    /// The worst partition status.
    pub status: Option<LagStatus>,
    /// Partitions, ordered by topic and index.
    pub partitions: Vec<PartitionSnapshot>,
    /// Lag history, oldest first.
    pub history: Vec<LagPoint>,
}

/// Everything the console and the metrics export show, at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// When the snapshot was taken, in ms since the epoch.
    pub taken_at_ms: u64,
    /// Groups ordered by id.
    pub groups: Vec<GroupSnapshot>,
    /// Why the figures are missing or partial (e.g. this node is not the coordinator), for
    /// the console to show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl Serialize for LagStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Tracks committed offsets, log offsets and group facts, and judges lag over a window.
#[derive(Debug, Clone)]
pub struct LagTracker {
    config: LagTrackerConfig,
    groups: BTreeMap<String, GroupTrack>,
    logs: BTreeMap<TopicPartition, LogOffsets>,
    /// Group partitions tracked, over every group (bounded by `partitions_max`).
    partitions: usize,
}

impl LagTracker {
    /// An empty tracker.
    pub fn new(config: LagTrackerConfig) -> Self {
        LagTracker {
            config,
            groups: BTreeMap::new(),
            logs: BTreeMap::new(),
            partitions: 0,
        }
    }

    /// The limits and windows this tracker was made with.
    pub fn config(&self) -> &LagTrackerConfig {
        &self.config
    }

    fn group_mut(&mut self, group: &str) -> Option<&mut GroupTrack> {
        if !self.groups.contains_key(group) {
            if self.groups.len() >= self.config.groups_max {
                return None;
            }
            self.groups.insert(group.to_string(), GroupTrack::default());
        }
        self.groups.get_mut(group)
    }

    /// A commit the coordinator applied (every commit counts, even of an unchanged offset:
    /// that is how STALLED is told from STOPPED).
    pub fn record_commit(&mut self, group: &str, tp: &TopicPartition, offset: i64) {
        let LagTracker {
            config,
            groups,
            partitions,
            ..
        } = self;
        if !groups.contains_key(group) {
            if groups.len() >= config.groups_max {
                return;
            }
            groups.insert(group.to_string(), GroupTrack::default());
        }
        let Some(g) = groups.get_mut(group) else {
            return;
        };
        // Commits arrive at the coordinator's rate: a known partition costs no allocation.
        if !g.partitions.contains_key(tp) {
            if g.partitions.len() >= config.partitions_per_group_max
                || *partitions >= config.partitions_max
            {
                return;
            }
            *partitions += 1;
            g.partitions.insert(tp.clone(), PartitionTrack::default());
        }
        if let Some(p) = g.partitions.get_mut(tp) {
            p.committed = Some(offset);
            p.commits = p.commits.saturating_add(1);
        }
    }

    /// The latest log-start (if known) and log-end offsets of a partition.
    pub fn record_log_offsets(
        &mut self,
        tp: &TopicPartition,
        log_start: Option<i64>,
        log_end: i64,
    ) {
        self.logs.insert(
            tp.clone(),
            LogOffsets {
                log_start,
                log_end: Some(log_end),
            },
        );
    }

    /// A group's state and member count.
    pub fn record_group(&mut self, group: &str, state: &str, members: usize) {
        if let Some(g) = self.group_mut(group) {
            g.state = Some(state.to_string());
            g.members = Some(members);
        }
    }

    /// Forgets a deleted group.
    pub fn remove_group(&mut self, group: &str) {
        if let Some(g) = self.groups.remove(group) {
            self.partitions = self.partitions.saturating_sub(g.partitions.len());
        }
    }

    /// Forgets a group's partition whose offset was deleted.
    pub fn remove_partition(&mut self, group: &str, tp: &TopicPartition) {
        if let Some(g) = self.groups.get_mut(group) {
            if g.partitions.remove(tp).is_some() {
                self.partitions = self.partitions.saturating_sub(1);
            }
        }
    }

    /// Whether `group` is tracked.
    pub fn has_group(&self, group: &str) -> bool {
        self.groups.contains_key(group)
    }

    /// Forgets a deleted topic's log offsets.
    pub fn remove_log(&mut self, tp: &TopicPartition) {
        self.logs.remove(tp);
    }

    /// Keeps the log offsets only of the partitions `keep` accepts (the ones that still exist
    /// and were heard from).
    pub fn retain_logs(&mut self, mut keep: impl FnMut(&TopicPartition) -> bool) {
        self.logs.retain(|tp, _| keep(tp));
    }

    /// Group partitions tracked, over every group.
    pub fn tracked_partitions(&self) -> usize {
        self.partitions
    }

    /// Every partition some tracked group has an offset on: the ones whose log offsets matter.
    pub fn consumed_partitions(&self) -> std::collections::HashSet<TopicPartition> {
        self.groups
            .values()
            .flat_map(|g| g.partitions.keys().cloned())
            .collect()
    }

    /// Takes one observation of every tracked group partition and one history point per group.
    pub fn sample(&mut self, now_ms: u64) {
        let window_start = now_ms.saturating_sub(self.config.window_ms);
        let history_start = now_ms.saturating_sub(self.config.history_ms);
        let spacing = self.config.history_ms / self.config.history_points_max.max(1) as u64;
        for g in self.groups.values_mut() {
            let mut total: Option<i64> = None;
            for (tp, p) in g.partitions.iter_mut() {
                let log = self.logs.get(tp).copied().unwrap_or_default();
                let obs = Observation {
                    at_ms: now_ms,
                    committed: p.committed,
                    log_end: log.log_end,
                    log_start: log.log_start,
                    commits: Some(p.commits),
                };
                if let Some(lag) = super::offset_lag(obs.committed, obs.log_end) {
                    total = Some(total.unwrap_or(0).saturating_add(lag));
                }
                p.window.push_back(obs);
                while p.window.len() > self.config.observations_max
                    || p.window.front().is_some_and(|o| o.at_ms < window_start)
                {
                    p.window.pop_front();
                }
            }
            if let Some(total_lag) = total {
                let point = LagPoint {
                    at_ms: now_ms,
                    total_lag,
                };
                // The newest point follows `now`; it is kept as a separate point once it is
                // `spacing` away from the one before it.
                let n = g.history.len();
                let merge = n >= 2 && now_ms.saturating_sub(g.history[n - 2].at_ms) < spacing;
                match g.history.back_mut() {
                    Some(last) if merge => *last = point,
                    _ => g.history.push_back(point),
                }
            }
            while g.history.front().is_some_and(|p| p.at_ms < history_start)
                || g.history.len() > self.config.history_points_max
            {
                g.history.pop_front();
            }
        }
    }

    /// The status of one group partition over the current window.
    pub fn partition_status(&self, group: &str, tp: &TopicPartition) -> Option<LagStatus> {
        let p = self.groups.get(group)?.partitions.get(tp)?;
        let window: Vec<Observation> = p.window.iter().copied().collect();
        evaluate(&window)
    }

    /// Everything known, at `now_ms`.
    pub fn snapshot(&self, now_ms: u64) -> Snapshot {
        let groups = self
            .groups
            .iter()
            .map(|(id, g)| {
                let partitions: Vec<PartitionSnapshot> = g
                    .partitions
                    .iter()
                    .map(|(tp, p)| {
                        let log_end = self.logs.get(tp).and_then(|l| l.log_end);
                        let window: Vec<Observation> = p.window.iter().copied().collect();
                        PartitionSnapshot {
                            topic: tp.topic.clone(),
                            partition: tp.partition,
                            committed: p.committed,
                            log_end,
                            lag: super::offset_lag(p.committed, log_end),
                            status: evaluate(&window),
                        }
                    })
                    .collect();
                let lags: Vec<i64> = partitions.iter().filter_map(|p| p.lag).collect();
                GroupSnapshot {
                    group: id.clone(),
                    state: g.state.clone(),
                    members: g.members,
                    total_lag: (!lags.is_empty())
                        .then(|| lags.iter().fold(0i64, |a, b| a.saturating_add(*b))),
                    status: partitions.iter().filter_map(|p| p.status).max(),
                    history: g.history.iter().copied().collect(),
                    partitions,
                }
            })
            .collect();
        Snapshot {
            taken_at_ms: now_ms,
            groups,
            notice: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    fn tracker() -> LagTracker {
        LagTracker::new(LagTrackerConfig {
            window_ms: 10_000,
            ..LagTrackerConfig::default()
        })
    }

    #[test]
    fn lag_is_log_end_minus_committed_per_partition_and_summed_per_group() {
        let mut t = tracker();
        t.record_group("g", "Stable", 2);
        t.record_commit("g", &tp(0), 5);
        t.record_commit("g", &tp(1), 7);
        t.record_log_offsets(&tp(0), Some(0), 9);
        t.record_log_offsets(&tp(1), None, 7);
        t.sample(1_000);
        let s = t.snapshot(1_000);
        let g = &s.groups[0];
        assert_eq!(g.group, "g");
        assert_eq!(g.state.as_deref(), Some("Stable"));
        assert_eq!(g.members, Some(2));
        assert_eq!(g.total_lag, Some(4));
        assert_eq!(g.partitions[0].lag, Some(4));
        assert_eq!(g.partitions[1].lag, Some(0));
        assert_eq!(
            g.history,
            vec![LagPoint {
                at_ms: 1_000,
                total_lag: 4
            }]
        );
    }

    #[test]
    fn a_paused_consumer_goes_ok_then_stopped_then_ok() {
        let mut t = tracker();
        let mut now = 0;
        let mut end = 0;
        // Consuming and committing, lag reaches zero.
        for _ in 0..5 {
            end += 10;
            t.record_log_offsets(&tp(0), None, end);
            t.record_commit("g", &tp(0), end);
            now += 1_000;
            t.sample(now);
        }
        assert_eq!(t.partition_status("g", &tp(0)), Some(LagStatus::Ok));
        // Paused: the producer goes on, no commits for longer than the window.
        for _ in 0..12 {
            end += 10;
            t.record_log_offsets(&tp(0), None, end);
            now += 1_000;
            t.sample(now);
        }
        assert_eq!(t.partition_status("g", &tp(0)), Some(LagStatus::Stopped));
        assert_eq!(t.snapshot(now).groups[0].status, Some(LagStatus::Stopped));
        // Resumed: catches up.
        t.record_commit("g", &tp(0), end);
        now += 1_000;
        t.sample(now);
        assert_eq!(t.partition_status("g", &tp(0)), Some(LagStatus::Ok));
    }

    #[test]
    fn recommitting_the_same_offset_while_behind_is_stalled() {
        let mut t = tracker();
        t.record_log_offsets(&tp(0), None, 100);
        for i in 0..4 {
            t.record_commit("g", &tp(0), 40);
            t.sample(i * 1_000);
        }
        assert_eq!(t.partition_status("g", &tp(0)), Some(LagStatus::Stalled));
    }

    #[test]
    fn windows_and_history_are_bounded() {
        let mut t = LagTracker::new(LagTrackerConfig {
            window_ms: 5_000,
            observations_max: 3,
            history_ms: 10_000,
            history_points_max: 4,
            groups_max: 1,
            partitions_per_group_max: 1,
            partitions_max: 1_000,
        });
        t.record_log_offsets(&tp(0), None, 10);
        t.record_commit("g", &tp(0), 1);
        t.record_commit("g", &tp(1), 1); // over the partition limit: ignored
        t.record_commit("h", &tp(0), 1); // over the group limit: ignored
        for i in 0..50 {
            t.sample(i * 1_000);
        }
        let s = t.snapshot(50_000);
        assert_eq!(s.groups.len(), 1);
        assert_eq!(s.groups[0].partitions.len(), 1);
        assert!(s.groups[0].history.len() <= 4);
        assert!(s.groups[0].history.iter().all(|p| p.at_ms >= 39_000));
        assert!(t.groups["g"].partitions[&tp(0)].window.len() <= 3);
    }

    #[test]
    fn removing_forgets() {
        let mut t = tracker();
        t.record_commit("g", &tp(0), 1);
        t.remove_partition("g", &tp(0));
        assert!(t.snapshot(0).groups[0].partitions.is_empty());
        t.remove_group("g");
        assert!(t.snapshot(0).groups.is_empty());
    }
}
