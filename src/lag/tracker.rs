//! `LagTracker`: what the server keeps to judge and show lag. It is fed, never reads anything
//! itself: commits as the coordinator applies them, log-start/log-end offsets as the data plane
//! (or, in a cluster, the partitions' nodes) report them, group state and membership; `sample`
//! turns the latest values into one observation per group partition and one point of each
//! group's lag history. Everything is bounded: the window and history by time and count, the
//! number of groups and of partitions per group by configuration. What a limit refuses is
//! counted and reported (`Refusal`, `Usage`), never silently dropped.
//!
//! A partition's status is judged with what the window cannot show: when the tracker began
//! watching it and when its last commit was (`status::judge`), so a tracker that just started
//! (a new coordinator) says "warming up" instead of OK until its window is covered.
//!
//! ```text
//!   record_commit / record_log_offsets / record_group ──► latest values
//!   sample(now) ──► window of observations per (group, partition) ──► evaluate ──► status
//!               └─► history point per group (total lag)        ──► snapshot ──► console, metrics
//! ```

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

use super::status::{judge_with_rule, Coverage, LagStatus, Observation, Rule, Verdict};
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
            // The console's longest chart window (6 h) at one point every 30 s.
            history_ms: 6 * 3_600_000,
            history_points_max: 720,
            groups_max: 10_000,
            partitions_per_group_max: 10_000,
            partitions_max: 50_000,
        }
    }
}

/// A limit of the tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Limit {
    /// `groups_max`: a new group was not tracked.
    Groups,
    /// `partitions_per_group_max`: a new partition of a tracked group was not tracked.
    PartitionsPerGroup,
    /// `partitions_max`: a new group partition was not tracked.
    Partitions,
}

impl Limit {
    /// What the limit refuses: `group` or `partition` (the `what` label of the metric).
    pub fn refuses(self) -> &'static str {
        match self {
            Limit::Groups => "group",
            Limit::PartitionsPerGroup | Limit::Partitions => "partition",
        }
    }

    /// The `cohort serve` flag that sets it.
    pub fn flag(self) -> &'static str {
        match self {
            Limit::Groups => "--lag-groups-max",
            Limit::PartitionsPerGroup => "--lag-partitions-per-group-max",
            Limit::Partitions => "--lag-partitions-max",
        }
    }

    /// Its value in `config`.
    pub fn value(self, config: &LagTrackerConfig) -> usize {
        match self {
            Limit::Groups => config.groups_max,
            Limit::PartitionsPerGroup => config.partitions_per_group_max,
            Limit::Partitions => config.partitions_max,
        }
    }
}

/// Whether an update was tracked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a refusal must reach the operator"]
pub enum Tracking {
    /// Tracked.
    Tracked,
    /// Not tracked because this limit is reached.
    Refused(Limit),
}

/// How full the tracker is, and what its limits refused (committed offsets of untracked groups
/// and partitions since the tracker was made).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Groups tracked.
    pub groups: usize,
    /// Group partitions tracked, over every group.
    pub partitions: usize,
    /// The groups limit.
    pub groups_max: usize,
    /// The limit of group partitions in all.
    pub partitions_max: usize,
    /// The limit of partitions per group.
    pub partitions_per_group_max: usize,
    /// Committed offsets (applied commits, and the offsets held when the tracker started) of
    /// groups the groups limit left out.
    pub untracked_group_offsets: u64,
    /// Committed offsets of group partitions a partitions limit left out.
    pub untracked_partition_offsets: u64,
}

#[derive(Debug, Clone, Default)]
struct PartitionTrack {
    committed: Option<i64>,
    /// Commits seen since tracked (the evaluator only compares them).
    commits: u64,
    /// The latest commit's own timestamp (a seeded one included).
    last_commit_ms: Option<u64>,
    /// This tracker's first observation of the partition.
    watched_since_ms: Option<u64>,
    window: VecDeque<Observation>,
}

#[derive(Debug, Clone, Default)]
struct GroupTrack {
    state: Option<String>,
    members: Option<usize>,
    /// What the consumer protocol (KIP-848) adds; `None` for a classic or simple group.
    consumer: Option<ConsumerFacts>,
    /// When this tracker first saw the group Assigning or Reconciling, in ms since the epoch.
    reconciling_since_ms: Option<u64>,
    /// Offsets committed since tracked (one per partition per commit), for a counter.
    offset_commits: u64,
    partitions: BTreeMap<TopicPartition, PartitionTrack>,
    /// Which member consumes each partition now (from the group's assignments).
    owners: BTreeMap<TopicPartition, Owner>,
    history: VecDeque<LagPoint>,
}

/// The member consuming a partition of a group, as its assignment says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Owner {
    /// Its member id.
    pub member_id: String,
    /// The client id it joined with.
    pub client_id: String,
    /// The host it joined from.
    pub host: String,
}

#[derive(Debug, Clone, Copy, Default)]
struct LogOffsets {
    log_start: Option<i64>,
    log_end: Option<i64>,
}

/// A consumer-protocol group's figures beyond state and members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ConsumerFacts {
    /// The group epoch.
    pub group_epoch: i32,
    /// The epoch of the target assignment.
    pub assignment_epoch: i32,
    /// Members not yet reconciled to the target assignment.
    pub members_reconciling: usize,
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
    /// Lag in time, in ms: how old the record at the committed offset is (by the timestamp
    /// the log keeps for it) at the snapshot's instant; 0 when caught up; unknown until that
    /// record's timestamp was read.
    pub lag_ms: Option<u64>,
    /// The member consuming it now, if any.
    pub owner: Option<Owner>,
    /// Lag status over the window.
    pub status: Option<LagStatus>,
    /// The rule that decided the status, in words.
    pub rule: Option<&'static str>,
    /// No status yet: the window does not span the window length and decides nothing.
    pub warming_up: bool,
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
    /// `classic` (classic protocol or offsets only) or `consumer` (KIP-848).
    pub group_type: &'static str,
    /// The consumer protocol's epochs and reconciliation, for a consumer group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumer: Option<ConsumerFacts>,
    /// How long the group has been Assigning or Reconciling (as this tracker saw it), in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconciling_ms: Option<u64>,
    /// Sum of the known partition lags.
    pub total_lag: Option<i64>,
    /// The largest known partition lag in time, in ms.
    pub max_lag_ms: Option<u64>,
    /// The worst partition status; none while a partition warms up and the others are not
    /// already STOPPED or worse (a warming partition may yet turn out worse than them).
    pub status: Option<LagStatus>,
    /// Some partition's status is still warming up.
    pub warming_up: bool,
    /// Offsets committed since this tracker began (one per partition per commit, unchanged
    /// offsets included): a counter.
    pub offset_commits: u64,
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
    /// How full the tracker is and what its limits left out.
    pub usage: Usage,
}

impl Snapshot {
    /// A snapshot with no groups, saying why.
    pub fn empty(taken_at_ms: u64, notice: String) -> Snapshot {
        Snapshot {
            taken_at_ms,
            groups: Vec::new(),
            notice: Some(notice),
            usage: Usage::default(),
        }
    }
}

impl Serialize for LagStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The log offsets and record timestamps lag in time is read from, borrowed apart from the
/// groups so a sample can update the groups while it reads them.
struct RecordView<'a> {
    logs: &'a BTreeMap<TopicPartition, LogOffsets>,
    record_times: &'a BTreeMap<(TopicPartition, i64), i64>,
}

impl RecordView<'_> {
    /// Where lag in time is measured for a group partition: the record at the committed
    /// offset, or at the log start if retention or DeleteRecords removed that one (the oldest
    /// record the group still has to read); `None` when caught up or not known.
    fn lag_record(&self, tp: &TopicPartition, committed: Option<i64>) -> Option<i64> {
        let committed = committed.filter(|c| *c >= 0)?;
        let log = self.logs.get(tp)?;
        let end = log.log_end?;
        (committed < end).then(|| committed.max(log.log_start.unwrap_or(committed)))
    }

    /// Lag in time of one group partition at `now_ms`.
    fn lag_ms(&self, tp: &TopicPartition, committed: Option<i64>, now_ms: u64) -> Option<u64> {
        let log_end = self.logs.get(tp).and_then(|l| l.log_end);
        match super::offset_lag(committed, log_end) {
            None => None,
            Some(lag) if lag <= 0 => Some(0),
            Some(_) => {
                let at = self.lag_record(tp, committed)?;
                let ts = *self.record_times.get(&(tp.clone(), at))?;
                let ts = u64::try_from(ts).unwrap_or(0);
                Some(now_ms.saturating_sub(ts))
            }
        }
    }
}

/// Tracks committed offsets, log offsets and group facts, and judges lag over a window.
#[derive(Debug, Clone)]
pub struct LagTracker {
    config: LagTrackerConfig,
    groups: BTreeMap<String, GroupTrack>,
    logs: BTreeMap<TopicPartition, LogOffsets>,
    /// The timestamp the log keeps for the record at an offset, for the offsets lagging groups
    /// committed (bounded by `partitions_max`; offsets no group waits at are forgotten at each
    /// sample).
    record_times: BTreeMap<(TopicPartition, i64), i64>,
    /// Group partitions tracked, over every group (bounded by `partitions_max`).
    partitions: usize,
    /// Committed offsets refused by the groups limit.
    untracked_group_offsets: u64,
    /// Committed offsets refused by a partitions limit.
    untracked_partition_offsets: u64,
}

impl LagTracker {
    /// An empty tracker.
    pub fn new(config: LagTrackerConfig) -> Self {
        LagTracker {
            config,
            groups: BTreeMap::new(),
            logs: BTreeMap::new(),
            record_times: BTreeMap::new(),
            partitions: 0,
            untracked_group_offsets: 0,
            untracked_partition_offsets: 0,
        }
    }

    fn record_view(&self) -> RecordView<'_> {
        RecordView {
            logs: &self.logs,
            record_times: &self.record_times,
        }
    }

    /// The limits and windows this tracker was made with.
    pub fn config(&self) -> &LagTrackerConfig {
        &self.config
    }

    /// Whether `group` is tracked, adding it if the limit allows.
    fn admit_group(&mut self, group: &str) -> Tracking {
        if !self.groups.contains_key(group) {
            if self.groups.len() >= self.config.groups_max {
                return Tracking::Refused(Limit::Groups);
            }
            self.groups.insert(group.to_string(), GroupTrack::default());
        }
        Tracking::Tracked
    }

    /// A commit the coordinator applied, stamped `committed_at_ms` (every commit counts, even
    /// of an unchanged offset: that is how STALLED is told from STOPPED).
    pub fn record_commit(
        &mut self,
        group: &str,
        tp: &TopicPartition,
        offset: i64,
        committed_at_ms: u64,
    ) -> Tracking {
        self.commit(group, tp, offset, committed_at_ms, true)
    }

    /// A committed offset as the applied state holds it when the tracker starts: known, with
    /// its commit's timestamp, but not a commit seen by this tracker.
    pub fn seed_commit(
        &mut self,
        group: &str,
        tp: &TopicPartition,
        offset: i64,
        committed_at_ms: u64,
    ) -> Tracking {
        self.commit(group, tp, offset, committed_at_ms, false)
    }

    fn commit(
        &mut self,
        group: &str,
        tp: &TopicPartition,
        offset: i64,
        committed_at_ms: u64,
        seen: bool,
    ) -> Tracking {
        if let Tracking::Refused(limit) = self.admit_group(group) {
            self.untracked_group_offsets = self.untracked_group_offsets.saturating_add(1);
            return Tracking::Refused(limit);
        }
        let LagTracker {
            config,
            groups,
            partitions,
            untracked_partition_offsets,
            ..
        } = self;
        let Some(g) = groups.get_mut(group) else {
            return Tracking::Tracked;
        };
        if seen {
            g.offset_commits = g.offset_commits.saturating_add(1);
        }
        // Commits arrive at the coordinator's rate: a known partition costs no allocation.
        if !g.partitions.contains_key(tp) {
            let refused = if g.partitions.len() >= config.partitions_per_group_max {
                Some(Limit::PartitionsPerGroup)
            } else if *partitions >= config.partitions_max {
                Some(Limit::Partitions)
            } else {
                None
            };
            if let Some(limit) = refused {
                *untracked_partition_offsets = untracked_partition_offsets.saturating_add(1);
                return Tracking::Refused(limit);
            }
            *partitions += 1;
            g.partitions.insert(tp.clone(), PartitionTrack::default());
        }
        if let Some(p) = g.partitions.get_mut(tp) {
            p.committed = Some(offset);
            if seen {
                p.commits = p.commits.saturating_add(1);
            }
            p.last_commit_ms = Some(
                p.last_commit_ms
                    .map_or(committed_at_ms, |at| at.max(committed_at_ms)),
            );
        }
        Tracking::Tracked
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
    pub fn record_group(&mut self, group: &str, state: &str, members: usize) -> Tracking {
        self.record_group_facts(group, state, members, None, 0)
    }

    /// `record_group` for a consumer-protocol group, with its epochs and reconciliation;
    /// `now_ms` starts the reconciling clock when the group starts Assigning or Reconciling.
    pub fn record_consumer_group(
        &mut self,
        group: &str,
        state: &str,
        members: usize,
        facts: ConsumerFacts,
        now_ms: u64,
    ) -> Tracking {
        self.record_group_facts(group, state, members, Some(facts), now_ms)
    }

    fn record_group_facts(
        &mut self,
        group: &str,
        state: &str,
        members: usize,
        consumer: Option<ConsumerFacts>,
        now_ms: u64,
    ) -> Tracking {
        let tracking = self.admit_group(group);
        if let Some(g) = self.groups.get_mut(group) {
            g.state = Some(state.to_string());
            g.members = Some(members);
            g.consumer = consumer;
            let reconciling = consumer.is_some() && matches!(state, "Assigning" | "Reconciling");
            g.reconciling_since_ms = match (reconciling, g.reconciling_since_ms) {
                (true, Some(since)) => Some(since),
                (true, None) => Some(now_ms),
                (false, _) => None,
            };
        }
        tracking
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

    /// How full the tracker is and what its limits refused.
    pub fn usage(&self) -> Usage {
        Usage {
            groups: self.groups.len(),
            partitions: self.partitions,
            groups_max: self.config.groups_max,
            partitions_max: self.config.partitions_max,
            partitions_per_group_max: self.config.partitions_per_group_max,
            untracked_group_offsets: self.untracked_group_offsets,
            untracked_partition_offsets: self.untracked_partition_offsets,
        }
    }

    /// Every partition some tracked group has an offset on: the ones whose log offsets matter.
    pub fn consumed_partitions(&self) -> std::collections::HashSet<TopicPartition> {
        self.groups
            .values()
            .flat_map(|g| g.partitions.keys().cloned())
            .collect()
    }

    /// The (partition, offset) pairs whose record timestamp lag in time needs and the tracker
    /// does not hold yet, sorted.
    pub fn record_times_wanted(&self) -> Vec<(TopicPartition, i64)> {
        let mut wanted: Vec<(TopicPartition, i64)> = self
            .groups
            .values()
            .flat_map(|g| g.partitions.iter())
            .filter_map(|(tp, p)| {
                self.record_view()
                    .lag_record(tp, p.committed)
                    .map(|o| (tp.clone(), o))
            })
            .filter(|key| !self.record_times.contains_key(key))
            .collect();
        wanted.sort();
        wanted.dedup();
        wanted
    }

    /// The timestamp the log keeps for the record at `offset` of `tp`.
    pub fn record_time(&mut self, tp: &TopicPartition, offset: i64, timestamp_ms: i64) {
        let key = (tp.clone(), offset);
        if self.record_times.len() < self.config.partitions_max
            || self.record_times.contains_key(&key)
        {
            self.record_times.insert(key, timestamp_ms);
        }
    }

    /// Takes one observation of every tracked group partition and one history point per group.
    pub fn sample(&mut self, now_ms: u64) {
        let needed: std::collections::HashSet<(TopicPartition, i64)> = self
            .groups
            .values()
            .flat_map(|g| g.partitions.iter())
            .filter_map(|(tp, p)| {
                self.record_view()
                    .lag_record(tp, p.committed)
                    .map(|o| (tp.clone(), o))
            })
            .collect();
        self.record_times.retain(|key, _| needed.contains(key));
        let window_start = now_ms.saturating_sub(self.config.window_ms);
        let history_start = now_ms.saturating_sub(self.config.history_ms);
        let spacing = self.config.history_ms / self.config.history_points_max.max(1) as u64;
        let view = RecordView {
            logs: &self.logs,
            record_times: &self.record_times,
        };
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
                    lag_ms: view.lag_ms(tp, p.committed, now_ms),
                };
                if let Some(lag) = super::offset_lag(obs.committed, obs.log_end) {
                    total = Some(total.unwrap_or(0).saturating_add(lag));
                }
                p.watched_since_ms.get_or_insert(now_ms);
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

    /// Who consumes `group`'s partitions now, replacing what was known; nothing for a group
    /// this tracker does not hold. At most `partitions_per_group_max` are kept.
    pub fn record_owners(&mut self, group: &str, owners: Vec<(TopicPartition, Owner)>) {
        let max = self.config.partitions_per_group_max;
        if let Some(g) = self.groups.get_mut(group) {
            g.owners = owners.into_iter().take(max).collect();
        }
    }

    /// The status of one group partition over the current window.
    pub fn partition_status(&self, group: &str, tp: &TopicPartition) -> Option<LagStatus> {
        let p = self.groups.get(group)?.partitions.get(tp)?;
        self.verdict(p).0.status()
    }

    fn verdict(&self, p: &PartitionTrack) -> (Verdict, Option<Rule>) {
        let Some(watched_since_ms) = p.watched_since_ms else {
            return (Verdict::Unknown, None);
        };
        let window: Vec<Observation> = p.window.iter().copied().collect();
        judge_with_rule(
            &window,
            Coverage {
                watched_since_ms,
                last_commit_ms: p.last_commit_ms,
                window_ms: self.config.window_ms,
            },
        )
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
                        let (verdict, rule) = self.verdict(p);
                        PartitionSnapshot {
                            topic: tp.topic.clone(),
                            partition: tp.partition,
                            committed: p.committed,
                            log_end,
                            lag: super::offset_lag(p.committed, log_end),
                            lag_ms: self.record_view().lag_ms(tp, p.committed, now_ms),
                            owner: g.owners.get(tp).cloned(),
                            status: verdict.status(),
                            rule: rule.map(Rule::text),
                            warming_up: verdict == Verdict::WarmingUp,
                        }
                    })
                    .collect();
                let lags: Vec<i64> = partitions.iter().filter_map(|p| p.lag).collect();
                let warming_up = partitions.iter().any(|p| p.warming_up);
                let worst = partitions.iter().filter_map(|p| p.status).max();
                GroupSnapshot {
                    group: id.clone(),
                    state: g.state.clone(),
                    members: g.members,
                    group_type: if g.consumer.is_some() {
                        "consumer"
                    } else {
                        "classic"
                    },
                    consumer: g.consumer,
                    reconciling_ms: g.reconciling_since_ms.map(|t| now_ms.saturating_sub(t)),
                    total_lag: (!lags.is_empty())
                        .then(|| lags.iter().fold(0i64, |a, b| a.saturating_add(*b))),
                    max_lag_ms: partitions.iter().filter_map(|p| p.lag_ms).max(),
                    status: worst.filter(|w| !warming_up || *w >= LagStatus::Stopped),
                    warming_up,
                    offset_commits: g.offset_commits,
                    history: g.history.iter().copied().collect(),
                    partitions,
                }
            })
            .collect();
        Snapshot {
            taken_at_ms: now_ms,
            groups,
            notice: None,
            usage: self.usage(),
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
    fn lag_in_time_is_the_age_of_the_record_at_the_committed_offset() {
        let mut t = tracker();
        let _ = t.record_commit("g", &tp(0), 3, 1_000);
        let _ = t.record_commit("g", &tp(1), 9, 1_000);
        let _ = t.record_commit("late", &tp(0), 1, 1_000);
        t.record_log_offsets(&tp(0), Some(2), 9);
        t.record_log_offsets(&tp(1), Some(0), 9);
        // Caught up needs no record; offset 1 is below the log start, so the record at 2.
        assert_eq!(t.record_times_wanted(), vec![(tp(0), 2), (tp(0), 3)]);
        let at = |s: &Snapshot, g: &str, p: i32| {
            let group = s.groups.iter().find(|x| x.group == g).unwrap();
            (
                group
                    .partitions
                    .iter()
                    .find(|x| x.partition == p)
                    .unwrap()
                    .lag_ms,
                group.max_lag_ms,
            )
        };
        let s = t.snapshot(60_000);
        assert_eq!(at(&s, "g", 0), (None, Some(0)), "unknown until read");
        assert_eq!(at(&s, "g", 1), (Some(0), Some(0)), "caught up is 0");
        t.record_time(&tp(0), 3, 50_000);
        t.record_time(&tp(0), 2, 40_000);
        assert!(t.record_times_wanted().is_empty());
        let s = t.snapshot(60_000);
        assert_eq!(at(&s, "g", 0), (Some(10_000), Some(10_000)));
        assert_eq!(at(&s, "late", 0), (Some(20_000), Some(20_000)));
        // A record stamped in the future is no lag; a time nobody waits at is forgotten.
        t.record_time(&tp(0), 3, 70_000);
        assert_eq!(at(&t.snapshot(60_000), "g", 0).0, Some(0));
        let _ = t.record_commit("g", &tp(0), 9, 61_000);
        let _ = t.record_commit("late", &tp(0), 9, 61_000);
        t.sample(61_000);
        assert!(t.record_times.is_empty());
    }

    fn commit(t: &mut LagTracker, group: &str, p: i32, offset: i64, at_ms: u64) {
        assert_eq!(
            t.record_commit(group, &tp(p), offset, at_ms),
            Tracking::Tracked
        );
    }

    #[test]
    fn lag_is_log_end_minus_committed_per_partition_and_summed_per_group() {
        let mut t = tracker();
        assert_eq!(t.record_group("g", "Stable", 2), Tracking::Tracked);
        commit(&mut t, "g", 0, 5, 900);
        commit(&mut t, "g", 1, 7, 900);
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
            commit(&mut t, "g", 0, end, now);
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
        commit(&mut t, "g", 0, end, now);
        now += 1_000;
        t.sample(now);
        assert_eq!(t.partition_status("g", &tp(0)), Some(LagStatus::Ok));
    }

    #[test]
    fn a_consumer_keeping_its_delay_while_producers_speed_up_is_ok_and_one_losing_time_warns() {
        // In second s producers write 10·s records, stamped across s·1000..(s+1)·1000. At the end of each second
        // `steady` commits the first record of the second before (its backlog grows in records
        // every second, its delay stays 1 s) and `slow` commits offset s (one record a second:
        // behind in records and in time, more every second).
        let mut t = tracker();
        let mut starts = vec![0i64, 0];
        for second in 1..=13i64 {
            let end = starts[second as usize] + 10 * second;
            starts.push(end);
            let now = (second * 1_000) as u64;
            t.record_log_offsets(&tp(0), None, end);
            let steady = starts[second as usize - 1];
            commit(&mut t, "steady", 0, steady, now);
            commit(&mut t, "slow", 0, second, now);
            // The timestamp the broker reads for each record a group waits at: the records of
            // a second are stamped evenly across it.
            for offset in [steady, second] {
                let sec = starts
                    .iter()
                    .rposition(|s| *s <= offset)
                    .unwrap_or(1)
                    .max(1);
                let into = (offset - starts[sec]) * 1_000 / (10 * sec as i64);
                t.record_time(&tp(0), offset, sec as i64 * 1_000 + into);
            }
            t.sample(now);
        }
        let s = t.snapshot(13_000);
        let steady = s.groups.iter().find(|g| g.group == "steady").unwrap();
        assert_eq!(steady.partitions[0].lag_ms, Some(1_000));
        assert_eq!(steady.total_lag, Some(250));
        assert_eq!(t.partition_status("steady", &tp(0)), Some(LagStatus::Ok));
        assert_eq!(t.partition_status("slow", &tp(0)), Some(LagStatus::Warning));
    }

    #[test]
    fn recommitting_the_same_offset_while_behind_is_stalled_once_the_window_is_covered() {
        let mut t = tracker();
        t.record_log_offsets(&tp(0), None, 100);
        for i in 0..=10 {
            commit(&mut t, "g", 0, 40, i * 1_000);
            t.sample(i * 1_000);
            if i < 10 {
                assert_eq!(t.partition_status("g", &tp(0)), None, "at {i} s");
                assert!(t.snapshot(i * 1_000).groups[0].partitions[0].warming_up);
            }
        }
        assert_eq!(t.partition_status("g", &tp(0)), Some(LagStatus::Stalled));
        assert!(!t.snapshot(10_000).groups[0].warming_up);
    }

    #[test]
    fn a_new_tracker_seeded_with_a_commit_older_than_the_window_says_stopped_at_once() {
        // The consumer stopped before this node became the coordinator.
        let mut t = tracker();
        assert_eq!(t.seed_commit("g", &tp(0), 40, 1_000), Tracking::Tracked);
        t.record_log_offsets(&tp(0), None, 100);
        t.sample(11_000);
        assert_eq!(t.partition_status("g", &tp(0)), Some(LagStatus::Stopped));
        let g = &t.snapshot(11_000).groups[0];
        assert_eq!(g.status, Some(LagStatus::Stopped));
        assert!(!g.warming_up);
        assert_eq!(g.offset_commits, 0, "a seed is not a commit");
    }

    #[test]
    fn a_new_tracker_seeded_with_a_recent_commit_warms_up_instead_of_claiming_ok() {
        let mut t = tracker();
        assert_eq!(t.seed_commit("g", &tp(0), 40, 9_000), Tracking::Tracked);
        t.record_log_offsets(&tp(0), None, 100);
        t.sample(10_000);
        let g = &t.snapshot(10_000).groups[0];
        assert_eq!(g.partitions[0].status, None);
        assert!(g.partitions[0].warming_up);
        assert_eq!((g.status, g.warming_up), (None, true));
        assert_eq!(g.total_lag, Some(60), "the lag itself is known");
        // Nothing moves: a window after the last commit it is STOPPED.
        for now in [12_000, 15_000, 18_000] {
            t.sample(now);
            assert_eq!(t.partition_status("g", &tp(0)), None, "at {now}");
        }
        t.sample(19_000);
        assert_eq!(t.partition_status("g", &tp(0)), Some(LagStatus::Stopped));
    }

    #[test]
    fn a_group_status_waits_for_its_warming_partitions_unless_already_stopped() {
        let mut t = tracker();
        // Partition 0 caught up (OK for certain), partition 1 behind with a fresh commit.
        commit(&mut t, "g", 0, 10, 1_000);
        commit(&mut t, "g", 1, 10, 1_000);
        t.record_log_offsets(&tp(0), None, 10);
        t.record_log_offsets(&tp(1), None, 50);
        t.sample(1_000);
        let g = &t.snapshot(1_000).groups[0];
        assert_eq!(g.partitions[0].status, Some(LagStatus::Ok));
        assert!(g.partitions[1].warming_up);
        assert_eq!((g.status, g.warming_up), (None, true));
        // Another group: one partition STOPPED for certain, one warming: STOPPED already.
        assert_eq!(t.seed_commit("h", &tp(0), 1, 0), Tracking::Tracked);
        commit(&mut t, "h", 1, 10, 11_000);
        t.sample(11_000);
        let h = &t.snapshot(11_000).groups[1];
        assert_eq!(h.partitions[0].status, Some(LagStatus::Stopped));
        assert!(h.partitions[1].warming_up);
        assert_eq!((h.status, h.warming_up), (Some(LagStatus::Stopped), true));
    }

    #[test]
    fn offset_commits_count_every_applied_commit_of_the_group() {
        let mut t = tracker();
        assert_eq!(t.seed_commit("g", &tp(0), 1, 0), Tracking::Tracked);
        commit(&mut t, "g", 0, 1, 1);
        commit(&mut t, "g", 0, 1, 2);
        commit(&mut t, "g", 1, 5, 2);
        t.remove_partition("g", &tp(1));
        assert_eq!(t.snapshot(3).groups[0].offset_commits, 3);
    }

    #[test]
    fn limits_refuse_new_groups_and_partitions_and_count_what_they_refuse() {
        let mut t = LagTracker::new(LagTrackerConfig {
            groups_max: 2,
            partitions_per_group_max: 2,
            partitions_max: 3,
            ..LagTrackerConfig::default()
        });
        commit(&mut t, "a", 0, 1, 0);
        commit(&mut t, "a", 1, 1, 0);
        assert_eq!(
            t.record_commit("a", &tp(2), 1, 0),
            Tracking::Refused(Limit::PartitionsPerGroup)
        );
        commit(&mut t, "b", 0, 1, 0);
        assert_eq!(
            t.record_commit("b", &tp(1), 1, 0),
            Tracking::Refused(Limit::Partitions)
        );
        assert_eq!(
            t.record_commit("c", &tp(0), 1, 0),
            Tracking::Refused(Limit::Groups)
        );
        assert_eq!(
            t.record_group("c", "Stable", 1),
            Tracking::Refused(Limit::Groups)
        );
        assert_eq!(t.record_group("a", "Stable", 1), Tracking::Tracked);
        assert_eq!(
            t.usage(),
            Usage {
                groups: 2,
                partitions: 3,
                groups_max: 2,
                partitions_max: 3,
                partitions_per_group_max: 2,
                untracked_group_offsets: 1,
                untracked_partition_offsets: 2,
            }
        );
        // Room again once a group goes: the next commit of `c` is tracked.
        t.remove_group("b");
        commit(&mut t, "c", 0, 1, 0);
        assert_eq!(t.snapshot(0).usage.groups, 2);
        assert_eq!(Limit::Groups.refuses(), "group");
        assert_eq!(Limit::Partitions.refuses(), "partition");
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
        commit(&mut t, "g", 0, 1, 0);
        let _over_partitions = t.record_commit("g", &tp(1), 1, 0);
        let _over_groups = t.record_commit("h", &tp(0), 1, 0);
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
        commit(&mut t, "g", 0, 1, 0);
        t.remove_partition("g", &tp(0));
        assert!(t.snapshot(0).groups[0].partitions.is_empty());
        t.remove_group("g");
        assert!(t.snapshot(0).groups.is_empty());
    }
}
