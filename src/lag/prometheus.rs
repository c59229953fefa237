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

/// Prometheus label value escaping: backslash, double quote, newline.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn family(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
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
    out
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
        t.record_group("billing", "Stable", 3);
        t.record_commit("billing", &tp, 40);
        t.record_log_offsets(&tp, Some(0), 52);
        t.sample(1_000);
        let text = render(&t.snapshot(1_000));
        for line in [
            "cohort_group_committed_offset{group=\"billing\",topic=\"orders\",partition=\"2\"} 40",
            "cohort_group_log_end_offset{group=\"billing\",topic=\"orders\",partition=\"2\"} 52",
            "cohort_group_lag{group=\"billing\",topic=\"orders\",partition=\"2\"} 12",
            "cohort_group_lag_status{group=\"billing\",topic=\"orders\",partition=\"2\"} 0",
            "cohort_group_total_lag{group=\"billing\"} 12",
            "cohort_group_status{group=\"billing\"} 0",
            "cohort_group_members{group=\"billing\"} 3",
            "cohort_group_state{group=\"billing\",state=\"Stable\"} 1",
            "# TYPE cohort_group_lag gauge",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }

    #[test]
    fn labels_are_escaped_and_unknowns_omitted() {
        let mut t = LagTracker::new(LagTrackerConfig::default());
        let tp = TopicPartition::new("t", 0);
        t.record_commit("we\"ird\\g\n", &tp, 1);
        t.sample(0);
        let text = render(&t.snapshot(0));
        assert!(text.contains("cohort_group_committed_offset{group=\"we\\\"ird\\\\g\\n\",topic=\"t\",partition=\"0\"} 1"));
        // No log end known: no log-end, lag, status or total lines for it.
        assert!(!text.contains("cohort_group_lag{"));
        assert!(!text.contains("cohort_group_total_lag{"));
        assert!(!text.contains("cohort_group_members{"));
    }
}
