//! The lag families of `/metrics`, rendered straight from a `Snapshot` in Prometheus' text
//! format, so every figure on `/metrics` is the one the console and the evaluator saw, and a
//! deleted group disappears from the page instead of lingering as a stale series. The server
//! appends this to the rest of its metrics.

use std::fmt::Write;

use super::tracker::Snapshot;

/// Committed offset, by group, topic, partition.
pub const COMMITTED_OFFSET: &str = "cohort_group_committed_offset";
/// Log-end offset of a partition a group consumes, by group, topic, partition.
pub const LOG_END_OFFSET: &str = "cohort_group_log_end_offset";
/// Lag (log end − committed), by group, topic, partition.
pub const LAG: &str = "cohort_group_lag";
/// Lag in time: how old the record at the committed offset is, in seconds (0 when caught
/// up), by group, topic, partition.
pub const LAG_SECONDS: &str = "cohort_group_lag_seconds";
/// A group's largest partition lag in time, in seconds, by group.
pub const MAX_LAG_SECONDS: &str = "cohort_group_max_lag_seconds";
/// Lag status code (0 OK, 1 WARNING, 2 STALLED, 3 STOPPED, 4 ERROR), by group, topic, partition.
pub const LAG_STATUS: &str = "cohort_group_lag_status";
/// Sum of a group's known partition lags, by group.
pub const TOTAL_LAG: &str = "cohort_group_total_lag";
/// A group's worst partition status code, by group.
pub const GROUP_STATUS: &str = "cohort_group_status";
/// Members of a group, by group.
pub const MEMBERS: &str = "cohort_group_members";
/// 1 for a group's current state, by group and state.
pub const STATE: &str = "cohort_group_state";
/// Offsets a group committed (one per partition per commit, unchanged offsets included) since
/// this node became the coordinator: a counter, by group, for `rate()`.
pub const OFFSET_COMMITS_TOTAL: &str = "cohort_group_offset_commits_total";
/// 1 while a group's status waits for its window (no `cohort_group_status` then), by group.
pub const STATUS_WARMING_UP: &str = "cohort_group_status_warming_up";
/// 1 for a group's type (`classic` or `consumer`), by group and type.
pub const GROUP_TYPE: &str = "cohort_group_type";
/// A consumer-protocol group's epoch, by group.
pub const GROUP_EPOCH: &str = "cohort_group_epoch";
/// A consumer-protocol group's target assignment epoch, by group.
pub const ASSIGNMENT_EPOCH: &str = "cohort_group_assignment_epoch";
/// Members of a consumer-protocol group not yet at its target assignment, by group.
pub const MEMBERS_RECONCILING: &str = "cohort_group_members_reconciling";
/// How long a consumer-protocol group has been Assigning or Reconciling, by group (0 when
/// Stable or Empty).
pub const RECONCILING_SECONDS: &str = "cohort_group_reconciling_seconds";
/// Committed offsets the tracker left out because a limit was reached, by `what` (`group`,
/// `partition`).
pub const UNTRACKED_OFFSETS_TOTAL: &str = "cohort_lag_untracked_offsets_total";
/// Groups the tracker follows.
pub const TRACKED_GROUPS: &str = "cohort_lag_tracked_groups";
/// The tracker's limits, by `limit` (`groups`, `partitions`, `partitions_per_group`).
pub const LIMIT: &str = "cohort_lag_limit";

/// Milliseconds as seconds with three decimals.
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Prometheus label value escaping: backslash, double quote, newline.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn family(out: &mut String, name: &str, help: &str) {
    typed_family(out, name, "gauge", help);
}

fn typed_family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// The lag families for `snapshot`.
pub fn render(snapshot: &Snapshot) -> String {
    let mut out = String::new();
    type PartitionValue = fn(&super::tracker::PartitionSnapshot) -> Option<i64>;
    let per_partition: [(&str, &str, PartitionValue); 4] = [
        (COMMITTED_OFFSET, "Committed offset of a consumer group on a partition.", |p| p.committed),
        (LOG_END_OFFSET, "Log-end offset of a partition a consumer group consumes.", |p| p.log_end),
        (LAG, "Log-end offset minus committed offset.", |p| p.lag),
        (LAG_STATUS, "Lag status over the evaluation window: 0 OK, 1 WARNING, 2 STALLED, 3 STOPPED, 4 ERROR.", |p| {
            p.status.map(|s| i64::from(s.code()))
        }),
    ];
    for (name, help, value) in per_partition {
        family(&mut out, name, help);
        for g in &snapshot.groups {
            for p in &g.partitions {
                if let Some(v) = value(p) {
                    let _ = writeln!(
                        out,
                        "{name}{{group=\"{}\",topic=\"{}\",partition=\"{}\"}} {v}",
                        label(&g.group),
                        label(&p.topic),
                        p.partition
                    );
                }
            }
        }
    }
    family(
        &mut out,
        LAG_SECONDS,
        "How old the record at the committed offset is, by the timestamp the log keeps for it (CreateTime, or the append time), in seconds; 0 when caught up.",
    );
    for g in &snapshot.groups {
        for p in &g.partitions {
            if let Some(ms) = p.lag_ms {
                let _ = writeln!(
                    out,
                    "{LAG_SECONDS}{{group=\"{}\",topic=\"{}\",partition=\"{}\"}} {}",
                    label(&g.group),
                    label(&p.topic),
                    p.partition,
                    seconds(ms)
                );
            }
        }
    }
    family(
        &mut out,
        MAX_LAG_SECONDS,
        "A consumer group's largest partition lag in time (cohort_group_lag_seconds), in seconds.",
    );
    for g in &snapshot.groups {
        if let Some(ms) = g.max_lag_ms {
            let _ = writeln!(
                out,
                "{MAX_LAG_SECONDS}{{group=\"{}\"}} {}",
                label(&g.group),
                seconds(ms)
            );
        }
    }
    family(
        &mut out,
        TOTAL_LAG,
        "Sum of a consumer group's known partition lags.",
    );
    for g in &snapshot.groups {
        if let Some(v) = g.total_lag {
            let _ = writeln!(out, "{TOTAL_LAG}{{group=\"{}\"}} {v}", label(&g.group));
        }
    }
    family(
        &mut out,
        GROUP_STATUS,
        "Worst partition lag status of a consumer group (codes as cohort_group_lag_status).",
    );
    for g in &snapshot.groups {
        if let Some(s) = g.status {
            let _ = writeln!(
                out,
                "{GROUP_STATUS}{{group=\"{}\"}} {}",
                label(&g.group),
                s.code()
            );
        }
    }
    family(&mut out, MEMBERS, "Members of a consumer group.");
    for g in &snapshot.groups {
        if let Some(n) = g.members {
            let _ = writeln!(out, "{MEMBERS}{{group=\"{}\"}} {n}", label(&g.group));
        }
    }
    family(&mut out, STATE, "1 for the consumer group's current state.");
    for g in &snapshot.groups {
        if let Some(state) = &g.state {
            let _ = writeln!(
                out,
                "{STATE}{{group=\"{}\",state=\"{}\"}} 1",
                label(&g.group),
                label(state)
            );
        }
    }
    family(
        &mut out,
        STATUS_WARMING_UP,
        "1 while the consumer group's lag status waits for its evaluation window to fill (after the coordinator started or the group began committing), 0 once judged.",
    );
    for g in &snapshot.groups {
        let _ = writeln!(
            out,
            "{STATUS_WARMING_UP}{{group=\"{}\"}} {}",
            label(&g.group),
            u8::from(g.warming_up)
        );
    }
    typed_family(
        &mut out,
        OFFSET_COMMITS_TOTAL,
        "counter",
        "Offsets committed by the consumer group (one per partition per commit, unchanged offsets included) since this node became the group coordinator.",
    );
    for g in &snapshot.groups {
        let _ = writeln!(
            out,
            "{OFFSET_COMMITS_TOTAL}{{group=\"{}\"}} {}",
            label(&g.group),
            g.offset_commits
        );
    }
    render_consumer_protocol(&mut out, snapshot);
    render_usage(&mut out, &snapshot.usage);
    out
}

/// The group type of every group, and the consumer protocol's figures of consumer groups.
fn render_consumer_protocol(out: &mut String, snapshot: &Snapshot) {
    family(
        out,
        GROUP_TYPE,
        "1 for the group's type: classic (classic protocol or offsets only) or consumer (KIP-848).",
    );
    for g in &snapshot.groups {
        let _ = writeln!(
            out,
            "{GROUP_TYPE}{{group=\"{}\",type=\"{}\"}} 1",
            label(&g.group),
            g.group_type
        );
    }
    type Figure = fn(&super::tracker::GroupSnapshot, &super::tracker::ConsumerFacts) -> String;
    let figures: [(&str, &str, Figure); 4] = [
        (GROUP_EPOCH, "Group epoch of a consumer-protocol group.", |_, c| {
            c.group_epoch.to_string()
        }),
        (ASSIGNMENT_EPOCH, "Target assignment epoch of a consumer-protocol group.", |_, c| {
            c.assignment_epoch.to_string()
        }),
        (MEMBERS_RECONCILING, "Members of a consumer-protocol group not yet reconciled to its target assignment.", |_, c| {
            c.members_reconciling.to_string()
        }),
        (RECONCILING_SECONDS, "How long a consumer-protocol group has been Assigning or Reconciling, as this coordinator saw it (0 when Stable or Empty).", |g, _| {
            format!("{:.3}", g.reconciling_ms.unwrap_or(0) as f64 / 1000.0)
        }),
    ];
    for (name, help, value) in figures {
        family(out, name, help);
        for g in &snapshot.groups {
            if let Some(c) = &g.consumer {
                let _ = writeln!(
                    out,
                    "{name}{{group=\"{}\"}} {}",
                    label(&g.group),
                    value(g, c)
                );
            }
        }
    }
}

fn render_usage(out: &mut String, usage: &super::tracker::Usage) {
    typed_family(
        out,
        UNTRACKED_OFFSETS_TOTAL,
        "counter",
        "Committed offsets the lag tracker left out because a limit was reached (see cohort_lag_limit), by what was not tracked: a new group or a new group partition.",
    );
    for (what, n) in [
        ("group", usage.untracked_group_offsets),
        ("partition", usage.untracked_partition_offsets),
    ] {
        let _ = writeln!(out, "{UNTRACKED_OFFSETS_TOTAL}{{what=\"{what}\"}} {n}");
    }
    family(
        out,
        TRACKED_GROUPS,
        "Consumer groups the lag tracker follows.",
    );
    let _ = writeln!(out, "{TRACKED_GROUPS} {}", usage.groups);
    family(
        out,
        LIMIT,
        "Limits of the lag tracker (cohort serve --lag-groups-max, --lag-partitions-max, --lag-partitions-per-group-max).",
    );
    for (limit, n) in [
        ("groups", usage.groups_max),
        ("partitions", usage.partitions_max),
        ("partitions_per_group", usage.partitions_per_group_max),
    ] {
        let _ = writeln!(out, "{LIMIT}{{limit=\"{limit}\"}} {n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::TopicPartition;
    use crate::lag::{LagTracker, LagTrackerConfig};

    #[test]
    fn families_carry_the_snapshot_figures() {
        let mut t = LagTracker::new(LagTrackerConfig::default());
        let tp = TopicPartition::new("orders", 2);
        let _ = t.record_group("billing", "Stable", 3);
        // A consumer keeping a steady lag of 12 over a whole window.
        let window_ms = t.config().window_ms;
        for i in 0..=2 {
            let at = 1_000 + i * window_ms / 2;
            let offset = 40 + i as i64;
            let _ = t.record_commit("billing", &tp, offset, at);
            t.record_log_offsets(&tp, Some(0), offset + 12);
            t.sample(at);
        }
        let now = 1_000 + window_ms;
        // The record at the committed offset 42 was stamped 12.345 s before `now`.
        t.record_time(&tp, 42, now as i64 - 12_345);
        let text = render(&t.snapshot(now));
        for line in [
            "cohort_group_committed_offset{group=\"billing\",topic=\"orders\",partition=\"2\"} 42",
            "cohort_group_log_end_offset{group=\"billing\",topic=\"orders\",partition=\"2\"} 54",
            "cohort_group_lag{group=\"billing\",topic=\"orders\",partition=\"2\"} 12",
            "cohort_group_lag_status{group=\"billing\",topic=\"orders\",partition=\"2\"} 0",
            "cohort_group_total_lag{group=\"billing\"} 12",
            "cohort_group_status{group=\"billing\"} 0",
            "cohort_group_members{group=\"billing\"} 3",
            "cohort_group_state{group=\"billing\",state=\"Stable\"} 1",
            "cohort_group_status_warming_up{group=\"billing\"} 0",
            "cohort_group_offset_commits_total{group=\"billing\"} 3",
            "# TYPE cohort_group_offset_commits_total counter",
            "cohort_lag_untracked_offsets_total{what=\"group\"} 0",
            "cohort_lag_untracked_offsets_total{what=\"partition\"} 0",
            "# TYPE cohort_lag_untracked_offsets_total counter",
            "cohort_lag_tracked_groups 1",
            "cohort_lag_limit{limit=\"groups\"} 10000",
            "cohort_lag_limit{limit=\"partitions\"} 50000",
            "cohort_lag_limit{limit=\"partitions_per_group\"} 10000",
            "# TYPE cohort_group_lag gauge",
            "cohort_group_lag_seconds{group=\"billing\",topic=\"orders\",partition=\"2\"} 12.345",
            "cohort_group_max_lag_seconds{group=\"billing\"} 12.345",
            "# TYPE cohort_group_lag_seconds gauge",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }

    #[test]
    fn consumer_groups_carry_their_type_epochs_and_how_long_they_reconcile() {
        use crate::lag::tracker::ConsumerFacts;
        let mut t = LagTracker::new(LagTrackerConfig::default());
        let _ = t.record_group("old", "Stable", 1);
        let facts = |reconciling| ConsumerFacts {
            group_epoch: 7,
            assignment_epoch: 7,
            members_reconciling: reconciling,
        };
        let _ = t.record_consumer_group("new", "Reconciling", 3, facts(2), 10_000);
        // Still reconciling later: the clock keeps its start.
        let _ = t.record_consumer_group("new", "Reconciling", 3, facts(1), 12_000);
        let text = render(&t.snapshot(12_500));
        for line in [
            "cohort_group_type{group=\"old\",type=\"classic\"} 1",
            "cohort_group_type{group=\"new\",type=\"consumer\"} 1",
            "cohort_group_epoch{group=\"new\"} 7",
            "cohort_group_assignment_epoch{group=\"new\"} 7",
            "cohort_group_members_reconciling{group=\"new\"} 1",
            "cohort_group_reconciling_seconds{group=\"new\"} 2.500",
            "cohort_group_state{group=\"new\",state=\"Reconciling\"} 1",
            "cohort_group_members{group=\"new\"} 3",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert!(!text.contains("cohort_group_epoch{group=\"old\"}"));
        // Stable again: the clock stops and restarts from zero next time.
        let _ = t.record_consumer_group("new", "Stable", 3, facts(0), 13_000);
        let text = render(&t.snapshot(14_000));
        assert!(text.contains("cohort_group_reconciling_seconds{group=\"new\"} 0.000"));
    }

    #[test]
    fn labels_are_escaped_and_unknowns_omitted() {
        let mut t = LagTracker::new(LagTrackerConfig::default());
        let tp = TopicPartition::new("t", 0);
        let _ = t.record_commit("we\"ird\\g\n", &tp, 1, 0);
        t.sample(0);
        let text = render(&t.snapshot(0));
        assert!(text.contains("cohort_group_committed_offset{group=\"we\\\"ird\\\\g\\n\",topic=\"t\",partition=\"0\"} 1"));
        // No log end known: no log-end, lag, status or total lines for it.
        assert!(!text.contains("cohort_group_lag{"));
        assert!(!text.contains("cohort_group_total_lag{"));
        assert!(!text.contains("cohort_group_members{"));
    }

    #[test]
    fn a_warming_group_has_no_status_but_says_it_warms_up() {
        let mut t = LagTracker::new(LagTrackerConfig::default());
        let tp = TopicPartition::new("t", 0);
        let _ = t.seed_commit("g", &tp, 1, 1_000);
        t.record_log_offsets(&tp, None, 9);
        t.sample(2_000);
        let text = render(&t.snapshot(2_000));
        assert!(text.contains("cohort_group_lag{group=\"g\",topic=\"t\",partition=\"0\"} 8"));
        assert!(!text.contains("cohort_group_lag_status{"), "{text}");
        assert!(!text.contains("cohort_group_status{"), "{text}");
        assert!(text.contains("cohort_group_status_warming_up{group=\"g\"} 1"));
        assert!(text.contains("cohort_group_offset_commits_total{group=\"g\"} 0"));
    }

    #[test]
    fn refused_offsets_are_counted_by_what_was_refused() {
        let mut t = LagTracker::new(LagTrackerConfig {
            groups_max: 1,
            partitions_per_group_max: 1,
            ..LagTrackerConfig::default()
        });
        let _ = t.record_commit("a", &TopicPartition::new("t", 0), 1, 0);
        let _ = t.record_commit("a", &TopicPartition::new("t", 1), 1, 0);
        let _ = t.record_commit("b", &TopicPartition::new("t", 0), 1, 0);
        let _ = t.record_commit("b", &TopicPartition::new("t", 0), 2, 0);
        let text = render(&t.snapshot(0));
        for line in [
            "cohort_lag_untracked_offsets_total{what=\"group\"} 2",
            "cohort_lag_untracked_offsets_total{what=\"partition\"} 1",
            "cohort_lag_tracked_groups 1",
            "cohort_lag_limit{limit=\"groups\"} 1",
            "cohort_lag_limit{limit=\"partitions_per_group\"} 1",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
