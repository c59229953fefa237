//! `LagFeed`: the server's one tracker, and the rule for who feeds it and when.
//!
//! ```text
//!  coordinator runtime (leader, Active) ──start_exporting(state)──► fresh tracker seeded from
//!        │                                                          the applied state
//!        ├─ every applied group outcome ──apply(records, state)──► commits, deletes, group facts
//!        └─ leadership lost ──stop_exporting──► emptied; snapshots say "not the coordinator"
//!  log-offsets poller ──record_log_offsets──►  ┐
//!  exporter (wall clock) ──sample(now)───────► ├─ only while exporting
//!  /metrics, /console ──snapshot(now)────────► ┘
//! ```
//!
//! Only the active coordinator (the Raft leader) exports group figures, so a scrape of every
//! node of a cluster counts each group once. Its tracker starts from the applied state when it
//! takes office (every committed offset with its commit's timestamp: a partition whose last
//! commit is older than the window is STOPPED from the first sample, the others warm up until
//! the window is covered instead of claiming OK) and follows every applied commit from then
//! on, unchanged offsets included: that is how STALLED differs from STOPPED.
//!
//! A limit of the tracker that refuses a group or a partition is logged once per limit while
//! this node exports (one WARN line, not one per commit) and counted in the snapshot's `Usage`
//! (rendered on `/metrics` and on the console).

use std::sync::Mutex;

use coordinator::group::consumer;
use coordinator::{CoordinatorState, GroupId, Record};

use super::tracker::{
    ConsumerFacts, LagTracker, LagTrackerConfig, Limit, Owner, Snapshot, Tracking,
};
use crate::client::TopicPartition;

/// One partition's log offsets as its owner reported them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogOffsets {
    /// The partition.
    pub tp: TopicPartition,
    /// Its first offset, when the owner told us.
    pub log_start: Option<i64>,
    /// Its log-end offset as consumers see it (the high watermark, what ListOffsets `latest`
    /// answers and `cohort groups` prints).
    pub log_end: i64,
}

/// The timestamp the log keeps for the record at one offset (its CreateTime, or the append
/// time on a LogAppendTime batch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordTime {
    /// The partition.
    pub tp: TopicPartition,
    /// The offset.
    pub offset: i64,
    /// The record's timestamp, in ms since the epoch.
    pub timestamp_ms: i64,
}

#[derive(Debug)]
struct Inner {
    tracker: LagTracker,
    exporting: bool,
    /// Limits already logged while exporting (each is logged once, when first hit).
    warned: Vec<Limit>,
}

impl Inner {
    fn note(&mut self, tracking: Tracking, group: &str) {
        let Tracking::Refused(limit) = tracking else {
            return;
        };
        if self.warned.contains(&limit) {
            return;
        }
        self.warned.push(limit);
        let config = self.tracker.config();
        tracing::warn!(
            group,
            limit = limit.value(config),
            flag = limit.flag(),
            "lag tracker limit reached: a new {} is not tracked, so it has no lag figures or \
             status; counted in cohort_lag_untracked_offsets_total (logged once)",
            limit.refuses()
        );
    }
}

/// The tracker, shared by the coordinator runtime (commits), the exporter (log offsets and
/// samples) and the HTTP routes.
#[derive(Debug)]
pub struct LagFeed {
    config: LagTrackerConfig,
    inner: Mutex<Inner>,
}

impl LagFeed {
    /// A feed that exports nothing until the coordinator starts it.
    pub fn new(config: LagTrackerConfig) -> LagFeed {
        LagFeed {
            config,
            inner: Mutex::new(Inner {
                tracker: LagTracker::new(config),
                exporting: false,
                warned: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves figures, not invariants, behind.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The limits and windows of the tracker.
    pub fn config(&self) -> &LagTrackerConfig {
        &self.config
    }

    /// Whether this node exports group figures (it is the active coordinator).
    pub fn is_exporting(&self) -> bool {
        self.lock().exporting
    }

    /// This node became the active coordinator: a fresh tracker holding every group and
    /// committed offset of `state`.
    pub fn start_exporting(&self, state: &CoordinatorState) {
        let mut inner = Inner {
            tracker: LagTracker::new(self.config),
            exporting: true,
            warned: Vec::new(),
        };
        let now_ms = crate::clock::unix_ms_unsigned();
        for (group, _) in state.group_states() {
            let tracking = refresh_group(&mut inner.tracker, state, &GroupId::new(group), now_ms);
            inner.note(tracking, group);
        }
        for (group, topic, partition, value) in state.committed_offsets() {
            let tracking = inner.tracker.seed_commit(
                group,
                &TopicPartition::new(topic, partition.0),
                value.offset.0,
                timestamp_ms(value.commit_timestamp.0),
            );
            inner.note(tracking, group);
        }
        let groups = state
            .group_states()
            .map(|(g, _)| g)
            .chain(state.consumer_groups().map(|(g, _)| g));
        for group in groups {
            let group = GroupId::new(group);
            inner
                .tracker
                .record_owners(group.as_str(), owners(state, &group));
        }
        *self.lock() = inner;
    }

    /// This node is no longer the coordinator: forget everything (another node exports now).
    pub fn stop_exporting(&self) {
        let mut inner = self.lock();
        inner.tracker = LagTracker::new(self.config);
        inner.exporting = false;
        inner.warned.clear();
    }

    /// The records of one applied group command; `state` is the applied state after it.
    pub fn apply(&self, records: &[Record], state: &CoordinatorState) {
        if records.is_empty() {
            return;
        }
        let mut inner = self.lock();
        if !inner.exporting {
            return;
        }
        // A command touches few groups (usually one); a short list beats a set.
        let mut touched: Vec<&GroupId> = Vec::new();
        // Groups whose assignments may have changed: owners are recomputed only for them, so
        // an offset commit costs nothing more here.
        let mut reassigned: Vec<&GroupId> = Vec::new();
        for record in records {
            let group = match record {
                Record::OffsetCommit {
                    group_id,
                    topic,
                    partition,
                    value,
                } => {
                    let tp = TopicPartition::new(topic.as_str(), partition.0);
                    match value {
                        Some(v) => {
                            let tracking = inner.tracker.record_commit(
                                group_id.as_str(),
                                &tp,
                                v.offset.0,
                                timestamp_ms(v.commit_timestamp.0),
                            );
                            inner.note(tracking, group_id.as_str());
                        }
                        None => inner.tracker.remove_partition(group_id.as_str(), &tp),
                    }
                    group_id
                }
                Record::GroupMetadata { group_id, .. }
                | Record::ConsumerMember { group_id, .. }
                | Record::ConsumerCurrent { group_id, .. } => {
                    if !reassigned.contains(&group_id) {
                        reassigned.push(group_id);
                    }
                    group_id
                }
                Record::ConsumerGroup { group_id, .. }
                | Record::ConsumerTarget { group_id, .. } => group_id,
                // The coordinator's topic image and transaction state: no group's lag
                // changes (pending offsets count only once their marker commits them).
                Record::Topic { .. } | Record::Transaction { .. } | Record::TxnOffsets { .. } => {
                    continue
                }
                // A group's config overrides: no lag changes.
                Record::GroupConfig { .. } => continue,
            };
            if !touched.contains(&group) {
                touched.push(group);
            }
        }
        let now_ms = crate::clock::unix_ms_unsigned();
        for group in touched {
            let tracking = refresh_group(&mut inner.tracker, state, group, now_ms);
            inner.note(tracking, group.as_str());
        }
        for group in reassigned {
            inner
                .tracker
                .record_owners(group.as_str(), owners(state, group));
        }
    }

    /// Log offsets heard from the partitions' owners.
    pub fn record_log_offsets(&self, offsets: &[LogOffsets]) {
        let mut inner = self.lock();
        if !inner.exporting {
            return;
        }
        for o in offsets {
            inner
                .tracker
                .record_log_offsets(&o.tp, o.log_start, o.log_end);
        }
    }

    /// The (partition, offset) pairs whose record timestamps lag in time still needs.
    pub fn record_times_wanted(&self) -> Vec<(TopicPartition, i64)> {
        let inner = self.lock();
        if !inner.exporting {
            return Vec::new();
        }
        inner.tracker.record_times_wanted()
    }

    /// Timestamps the log keeps for records at (partition, offset), as read from the logs.
    pub fn record_record_times(&self, times: &[RecordTime]) {
        let mut inner = self.lock();
        if !inner.exporting {
            return;
        }
        for t in times {
            inner.tracker.record_time(&t.tp, t.offset, t.timestamp_ms);
        }
    }

    /// Keeps log offsets only for the partitions `keep` accepts (existing, recently heard).
    pub fn retain_logs(&self, keep: impl FnMut(&TopicPartition) -> bool) {
        self.lock().tracker.retain_logs(keep);
    }

    /// One observation per group partition and one history point per group, at `now_ms`.
    pub fn sample(&self, now_ms: u64) {
        let mut inner = self.lock();
        if inner.exporting {
            inner.tracker.sample(now_ms);
        }
    }

    /// Every partition a tracked group has an offset on (empty while not exporting).
    pub fn consumed_partitions(&self) -> std::collections::HashSet<TopicPartition> {
        self.lock().tracker.consumed_partitions()
    }

    /// Group partitions tracked now.
    pub fn tracked_partitions(&self) -> usize {
        self.lock().tracker.tracked_partitions()
    }

    /// What the console and `/metrics` show; `None` while this node does not export.
    pub fn snapshot(&self, now_ms: u64) -> Option<Snapshot> {
        let inner = self.lock();
        inner.exporting.then(|| inner.tracker.snapshot(now_ms))
    }
}

/// A group's state and member count as the applied state has them; a group that no longer
/// exists (deleted, or a simple group whose last offset went) is forgotten.
fn refresh_group(
    tracker: &mut LagTracker,
    state: &CoordinatorState,
    group: &GroupId,
    now_ms: u64,
) -> Tracking {
    if let Some(g) = state.consumer_group(group) {
        let facts = ConsumerFacts {
            group_epoch: g.group_epoch(),
            assignment_epoch: g.assignment_epoch(),
            members_reconciling: g
                .members
                .keys()
                .filter(|m| !consumer::is_reconciled_to(g, m, g.assignment_epoch()))
                .count(),
        };
        let group_state = consumer::state(g).as_str();
        return tracker.record_consumer_group(
            group.as_str(),
            group_state,
            g.members.len(),
            facts,
            now_ms,
        );
    }
    match state.group(group) {
        Some(g) => tracker.record_group(group.as_str(), g.state.as_str(), g.members.len()),
        // A simple group (offsets only) is Empty with no members, as DescribeGroups says.
        None if state.group_committed_offsets(group).next().is_some() => {
            tracker.record_group(group.as_str(), "Empty", 0)
        }
        None => {
            tracker.remove_group(group.as_str());
            Tracking::Tracked
        }
    }
}

/// Who consumes each partition of `group` now: a consumer-protocol member's current
/// assignment, or a classic consumer member's assignment as its leader encoded it (an
/// assignment that does not decode, or a group of another protocol type, owns nothing here).
fn owners(state: &CoordinatorState, group: &GroupId) -> Vec<(TopicPartition, Owner)> {
    let mut out = Vec::new();
    if let Some(g) = state.consumer_group(group) {
        for (id, m) in &g.members {
            let owner = Owner {
                member_id: id.as_str().to_string(),
                client_id: m.client_id.clone(),
                host: m.client_host.clone(),
            };
            for (topic, partition) in g.current_of(id).assigned.iter() {
                if let Some(name) = state.topic_name(topic) {
                    out.push((
                        TopicPartition::new(name.as_str(), partition.0),
                        owner.clone(),
                    ));
                }
            }
        }
        return out;
    }
    let Some(g) = state.group(group) else {
        return out;
    };
    if g.protocol_type.as_deref() != Some(CONSUMER_PROTOCOL_TYPE) {
        return out;
    }
    for (id, m) in &g.members {
        let Ok(partitions) = crate::client::consumer_protocol::decode_assignment(&m.assignment)
        else {
            continue;
        };
        let owner = Owner {
            member_id: id.as_str().to_string(),
            client_id: m.client_id.clone(),
            host: m.client_host.clone(),
        };
        out.extend(partitions.into_iter().map(|tp| (tp, owner.clone())));
    }
    out
}

/// The protocol type of classic groups of Kafka consumers (others, such as Connect's, encode
/// their assignments differently).
const CONSUMER_PROTOCOL_TYPE: &str = "consumer";

/// A commit timestamp (the leader's clock when it applied the commit) as the tracker's ms.
fn timestamp_ms(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordinator::{
        ApiVersion, CommitOffsets, CommitPartition, CommitTopic, Config, DeleteGroups, Generation,
        LeaderEpoch, MemberId, Offset, PartitionIndex, TimestampMs, TopicName, WriteCommand,
    };

    fn commit(group: &str, partition: i32, offset: i64, now: i64) -> WriteCommand {
        WriteCommand::CommitOffsets(CommitOffsets {
            group_id: GroupId::new(group),
            generation: Generation::NONE,
            member_id: MemberId::new(""),
            group_instance_id: None,
            retention_time_ms: -1,
            topics: vec![CommitTopic {
                name: TopicName::new("t"),
                partitions: vec![CommitPartition {
                    partition: PartitionIndex(partition),
                    offset: Offset(offset),
                    leader_epoch: LeaderEpoch(-1),
                    metadata: None,
                    partition_known: true,
                }],
            }],
            api_version: ApiVersion(8),
            now_ms: TimestampMs(now),
        })
    }

    fn apply(feed: &LagFeed, state: &mut CoordinatorState, cmd: &WriteCommand) {
        let outcome = state.apply(cmd);
        feed.apply(&outcome.records, state);
    }

    fn offsets(end: i64) -> Vec<LogOffsets> {
        (0..2)
            .map(|p| LogOffsets {
                tp: TopicPartition::new("t", p),
                log_start: Some(0),
                log_end: end,
            })
            .collect()
    }

    #[test]
    fn nothing_is_exported_before_the_coordinator_starts_it() {
        let feed = LagFeed::new(LagTrackerConfig::default());
        let mut state = CoordinatorState::new(Config::default());
        apply(&feed, &mut state, &commit("g", 0, 5, 1));
        feed.record_log_offsets(&offsets(9));
        feed.sample(1_000);
        assert!(feed.snapshot(1_000).is_none());
        assert!(!feed.is_exporting());
    }

    #[test]
    fn a_new_coordinator_starts_from_the_applied_state_then_follows_commits() {
        let feed = LagFeed::new(LagTrackerConfig::default());
        let mut state = CoordinatorState::new(Config::default());
        state.apply(&commit("g", 0, 5, 1));
        feed.start_exporting(&state);
        apply(&feed, &mut state, &commit("g", 1, 7, 2));
        feed.record_log_offsets(&offsets(9));
        feed.sample(1_000);
        let snap = feed.snapshot(1_000).unwrap();
        let g = &snap.groups[0];
        assert_eq!(g.group, "g");
        assert_eq!(g.state.as_deref(), Some("Empty"));
        assert_eq!(g.members, Some(0));
        let lags: Vec<_> = g.partitions.iter().map(|p| (p.partition, p.lag)).collect();
        assert_eq!(lags, vec![(0, Some(4)), (1, Some(2))]);
        assert_eq!(g.total_lag, Some(6));
    }

    #[test]
    fn deleting_a_group_forgets_it_and_stepping_down_forgets_everything() {
        let feed = LagFeed::new(LagTrackerConfig::default());
        let mut state = CoordinatorState::new(Config::default());
        feed.start_exporting(&state);
        apply(&feed, &mut state, &commit("g", 0, 5, 1));
        apply(&feed, &mut state, &commit("h", 0, 5, 1));
        let delete = WriteCommand::DeleteGroups(DeleteGroups {
            api_version: ApiVersion(2),
            group_ids: vec![GroupId::new("g")],
            now_ms: TimestampMs(3),
        });
        apply(&feed, &mut state, &delete);
        let groups: Vec<_> = feed
            .snapshot(0)
            .unwrap()
            .groups
            .into_iter()
            .map(|g| g.group)
            .collect();
        assert_eq!(groups, vec!["h"]);
        feed.stop_exporting();
        assert!(feed.snapshot(0).is_none());
        assert_eq!(feed.tracked_partitions(), 0);
    }

    #[test]
    fn recommitting_an_unchanged_offset_counts_as_a_commit() {
        // STALLED (committing without moving) is only visible if every commit reaches the
        // tracker, unchanged offsets included.
        let feed = LagFeed::new(LagTrackerConfig {
            window_ms: 3_000,
            ..LagTrackerConfig::default()
        });
        let mut state = CoordinatorState::new(Config::default());
        feed.start_exporting(&state);
        feed.record_log_offsets(&offsets(100));
        for i in 0..4 {
            apply(&feed, &mut state, &commit("g", 0, 40, i * 1_000));
            feed.sample(i as u64 * 1_000);
        }
        let snap = feed.snapshot(3_000).unwrap();
        assert_eq!(
            snap.groups[0].partitions[0].status,
            Some(crate::lag::LagStatus::Stalled)
        );
        assert_eq!(snap.groups[0].offset_commits, 4);
    }

    #[test]
    fn a_new_coordinator_knows_when_each_offset_was_committed() {
        // Committed at 1 s (a consumer that stopped) and at 59 s (one that just committed),
        // under an earlier coordinator; this one takes office at 60 s with a 10 s window.
        let feed = LagFeed::new(LagTrackerConfig {
            window_ms: 10_000,
            ..LagTrackerConfig::default()
        });
        let mut state = CoordinatorState::new(Config::default());
        state.apply(&commit("stopped", 0, 5, 1_000));
        state.apply(&commit("busy", 0, 5, 59_000));
        feed.start_exporting(&state);
        feed.record_log_offsets(&offsets(9));
        feed.sample(60_000);
        let snap = feed.snapshot(60_000).unwrap();
        let by_group = |g: &str| snap.groups.iter().find(|s| s.group == g).unwrap().clone();
        let stopped = by_group("stopped");
        assert_eq!(stopped.status, Some(crate::lag::LagStatus::Stopped));
        assert!(!stopped.warming_up);
        let busy = by_group("busy");
        assert_eq!((busy.status, busy.warming_up), (None, true));
        assert_eq!(busy.total_lag, Some(4));
        assert_eq!(busy.offset_commits, 0, "seeded offsets are not commits");
        // The busy one commits again: counted, and judged once its window is covered.
        apply(&feed, &mut state, &commit("busy", 0, 9, 61_000));
        feed.sample(70_000);
        let busy = feed.snapshot(70_000).unwrap().groups[0].clone();
        assert_eq!(busy.group, "busy");
        assert_eq!(busy.offset_commits, 1);
        assert_eq!(
            (busy.status, busy.warming_up),
            (Some(crate::lag::LagStatus::Ok), false)
        );
    }

    #[test]
    fn limits_are_counted_and_each_is_logged_once_per_term() {
        let feed = LagFeed::new(LagTrackerConfig {
            groups_max: 1,
            ..LagTrackerConfig::default()
        });
        let mut state = CoordinatorState::new(Config::default());
        state.apply(&commit("a", 0, 1, 1));
        state.apply(&commit("b", 0, 1, 1));
        feed.start_exporting(&state);
        for i in 0..3 {
            apply(&feed, &mut state, &commit("c", 0, i, 2));
        }
        let usage = feed.snapshot(0).unwrap().usage;
        assert_eq!(usage.groups, 1);
        // One refused seed (b) and three refused commits (c).
        assert_eq!(usage.untracked_group_offsets, 4);
        assert_eq!(feed.lock().warned, vec![Limit::Groups]);
        feed.stop_exporting();
        assert!(feed.lock().warned.is_empty());
    }
}
