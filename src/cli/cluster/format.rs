//! How `cohort cluster` prints, and what its exit code says: pure functions of the gathered
//! report, pinned by unit tests.

use std::fmt::Write as _;

use raft_meta::{ClusterStatus, NodeId};

use super::report::{ClusterReport, Member, NodeReport};

/// What the cluster looks like, as the exit code of `status` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// A leader every member agrees on, every member answered on both ports, and every
    /// Metadata lists all members with the leader as controller.
    Healthy,
    /// A leader is known but something is off (the reasons).
    Degraded(Vec<String>),
    /// No leader: the cluster cannot take writes.
    NoLeader(Vec<String>),
}

/// Exit codes of `cohort cluster`: documented in `--help` and
/// docs/decisions/0074-cohort-cluster-cli.md.
pub mod exit {
    pub const OK: i32 = 0;
    /// No node could be reached, or the operation was refused or failed.
    pub const FAILED: i32 = 1;
    /// Usage errors (clap's own code).
    pub const USAGE: i32 = 2;
    /// The cluster answered but has no leader.
    pub const NO_LEADER: i32 = 3;
    /// A leader is known but some member is unreachable or out of step.
    pub const DEGRADED: i32 = 4;
}

impl Health {
    pub fn exit_code(&self) -> i32 {
        match self {
            Health::Healthy => exit::OK,
            Health::Degraded(_) => exit::DEGRADED,
            Health::NoLeader(_) => exit::NO_LEADER,
        }
    }

    fn problems(&self) -> &[String] {
        match self {
            Health::Healthy => &[],
            Health::Degraded(p) | Health::NoLeader(p) => p,
        }
    }
}

/// The leader as the report knows it best: the asked node's view.
fn leader_id(report: &ClusterReport) -> Option<NodeId> {
    report.view.leader.as_ref().map(|l| l.node_id)
}

/// The status to quote for commit/applied: the leader's own, else the asked node's.
fn reference_status(report: &ClusterReport) -> &ClusterStatus {
    let leader = leader_id(report);
    report
        .nodes
        .iter()
        .find(|n| Some(n.node_id) == leader)
        .and_then(|n| n.raft.as_ref().ok())
        .unwrap_or(&report.view)
}

/// Judges the report.
pub fn health(report: &ClusterReport) -> Health {
    let mut problems = Vec::new();
    let members: Vec<i32> = report
        .nodes
        .iter()
        .filter_map(|n| i32::try_from(n.node_id).ok())
        .collect();
    let mut sorted_members = members.clone();
    sorted_members.sort_unstable();
    let leader = leader_id(report);
    for n in &report.nodes {
        match &n.raft {
            Ok(s) => {
                let theirs = s.leader.as_ref().map(|l| l.node_id);
                if theirs != leader {
                    problems.push(format!(
                        "node {} sees leader {} (node {} at {} sees {})",
                        n.node_id,
                        opt_id(theirs),
                        report.view.node_id,
                        report.asked,
                        opt_id(leader)
                    ));
                }
            }
            Err(e) => problems.push(format!("node {}: raft {}: {e}", n.node_id, n.raft_addr)),
        }
        match &n.kafka {
            Ok(k) => {
                if k.brokers != sorted_members {
                    problems.push(format!(
                        "node {}: Metadata lists brokers {:?}, members are {:?}",
                        n.node_id, k.brokers, sorted_members
                    ));
                }
                let controller = leader.and_then(|l| i32::try_from(l).ok()).unwrap_or(-1);
                if k.controller != controller {
                    problems.push(format!(
                        "node {}: Metadata names controller {}, leader is {}",
                        n.node_id,
                        k.controller,
                        opt_id(leader)
                    ));
                }
            }
            Err(e) => problems.push(format!("node {}: kafka {}: {e}", n.node_id, n.kafka_addr)),
        }
    }
    match leader {
        None => {
            problems.insert(0, "no leader is known".to_owned());
            Health::NoLeader(problems)
        }
        Some(_) if problems.is_empty() => Health::Healthy,
        Some(_) => Health::Degraded(problems),
    }
}

fn opt_id(id: Option<NodeId>) -> String {
    id.map_or_else(|| "none".to_owned(), |i| i.to_string())
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn ids(nodes: &[(NodeId, raft_meta::NodeInfo)]) -> String {
    if nodes.is_empty() {
        return "-".to_owned();
    }
    nodes
        .iter()
        .map(|(id, _)| id.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn role(n: &NodeReport) -> String {
    match &n.raft {
        Ok(s) => s.role.clone(),
        Err(_) => "down".to_owned(),
    }
}

fn metadata_cell(n: &NodeReport) -> String {
    match &n.kafka {
        Ok(k) => format!(
            "{} brokers, controller {}",
            k.brokers.len(),
            if k.controller < 0 {
                "none".to_owned()
            } else {
                k.controller.to_string()
            }
        ),
        Err(_) => "no answer".to_owned(),
    }
}

/// The text report: a summary, a table with one row per member, then the problems.
pub fn render_status(report: &ClusterReport, health: &Health) -> String {
    let mut out = String::new();
    let reference = reference_status(report);
    match &report.view.leader {
        Some(l) => {
            let _ = writeln!(
                out,
                "Leader:     {} (raft {}, kafka {})",
                l.node_id, l.info.raft_addr, l.info.kafka_addr
            );
        }
        None => {
            let _ = writeln!(out, "Leader:     none");
        }
    }
    let _ = writeln!(out, "Term:       {}", reference.term);
    let _ = writeln!(out, "Voters:     {}", ids(&report.view.voters));
    let _ = writeln!(out, "Learners:   {}", ids(&report.view.learners));
    let _ = writeln!(out, "Committed:  {}", opt(reference.commit_index));
    let _ = writeln!(out, "Applied:    {}", opt(reference.applied_index));
    let _ = writeln!(
        out,
        "Asked:      node {} at {}",
        report.view.node_id, report.asked
    );
    out.push('\n');

    let header = [
        "NODE",
        "MEMBER",
        "ROLE",
        "RAFT",
        "KAFKA",
        "TERM",
        "LAST-LOG",
        "COMMITTED",
        "APPLIED",
        "SNAPSHOT",
        "METADATA",
    ];
    let rows: Vec<Vec<String>> = report
        .nodes
        .iter()
        .map(|n| {
            let s = n.raft.as_ref().ok();
            vec![
                n.node_id.to_string(),
                match n.member {
                    Member::Voter => "voter".to_owned(),
                    Member::Learner => "learner".to_owned(),
                },
                role(n),
                n.raft_addr.clone(),
                n.kafka_addr.clone(),
                s.map_or_else(|| "-".to_owned(), |s| s.term.to_string()),
                opt(s.and_then(|s| s.last_log_index)),
                opt(s.and_then(|s| s.commit_index)),
                opt(s.and_then(|s| s.applied_index)),
                opt(s.and_then(|s| s.snapshot_index)),
                metadata_cell(n),
            ]
        })
        .collect();
    out.push_str(&table(&header, &rows));

    let problems = health.problems();
    if !problems.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "Problems:");
        for p in problems {
            let _ = writeln!(out, "  {p}");
        }
    }
    out
}

/// Left-aligned columns two spaces apart; the last column is not padded.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i == last {
                text.push_str(cell);
            } else {
                let _ = write!(text, "{cell:<w$}  ");
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    out
}

/// The membership after a change, as `add-voter` / `remove-voter` print it.
pub fn render_membership(status: &ClusterStatus) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Leader:     {}",
        status
            .leader
            .as_ref()
            .map_or_else(|| "none".to_owned(), |l| l.node_id.to_string())
    );
    let _ = writeln!(out, "Term:       {}", status.term);
    for (id, info) in &status.voters {
        let _ = writeln!(
            out,
            "Voter:      {id} (raft {}, kafka {})",
            info.raft_addr, info.kafka_addr
        );
    }
    for (id, info) in &status.learners {
        let _ = writeln!(
            out,
            "Learner:    {id} (raft {}, kafka {})",
            info.raft_addr, info.kafka_addr
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::cluster::report::KafkaView;
    use raft_meta::{LeaderInfo, NodeInfo};

    fn info(id: u64) -> NodeInfo {
        NodeInfo {
            raft_addr: format!("127.0.0.1:1919{id}"),
            kafka_addr: format!("127.0.0.1:1909{id}"),
            listeners: Vec::new(),
        }
    }

    fn status(id: u64, role: &str, leader: Option<u64>) -> ClusterStatus {
        ClusterStatus {
            node_id: id,
            role: role.to_owned(),
            term: 7,
            leader: leader.map(|l| LeaderInfo {
                node_id: l,
                info: info(l),
            }),
            voters: (1..=3).map(|i| (i, info(i))).collect(),
            learners: Vec::new(),
            last_log_index: Some(120),
            commit_index: Some(120),
            applied_index: Some(119),
            snapshot_index: None,
            purged_index: None,
            halted: None,
        }
    }

    fn node(
        id: u64,
        raft: Result<ClusterStatus, String>,
        kafka: Result<KafkaView, String>,
    ) -> NodeReport {
        NodeReport {
            node_id: id,
            member: Member::Voter,
            raft_addr: info(id).raft_addr,
            kafka_addr: info(id).kafka_addr,
            raft,
            kafka,
        }
    }

    fn healthy_kafka() -> Result<KafkaView, String> {
        Ok(KafkaView {
            brokers: vec![1, 2, 3],
            controller: 2,
        })
    }

    fn three_up() -> ClusterReport {
        ClusterReport {
            asked: "127.0.0.1:19191".into(),
            view: status(1, "follower", Some(2)),
            nodes: vec![
                node(1, Ok(status(1, "follower", Some(2))), healthy_kafka()),
                node(2, Ok(status(2, "leader", Some(2))), healthy_kafka()),
                node(3, Ok(status(3, "follower", Some(2))), healthy_kafka()),
            ],
        }
    }

    #[test]
    fn a_settled_cluster_is_healthy_and_prints_one_row_per_member() {
        let report = three_up();
        let h = health(&report);
        assert_eq!(h, Health::Healthy);
        assert_eq!(h.exit_code(), 0);
        let text = render_status(&report, &h);
        let expected = "\
Leader:     2 (raft 127.0.0.1:19192, kafka 127.0.0.1:19092)
Term:       7
Voters:     1, 2, 3
Learners:   -
Committed:  120
Applied:    119
Asked:      node 1 at 127.0.0.1:19191

NODE  MEMBER  ROLE      RAFT             KAFKA            TERM  LAST-LOG  COMMITTED  APPLIED  SNAPSHOT  METADATA
1     voter   follower  127.0.0.1:19191  127.0.0.1:19091  7     120       120        119      -         3 brokers, controller 2
2     voter   leader    127.0.0.1:19192  127.0.0.1:19092  7     120       120        119      -         3 brokers, controller 2
3     voter   follower  127.0.0.1:19193  127.0.0.1:19093  7     120       120        119      -         3 brokers, controller 2
";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_dead_member_degrades_and_is_named() {
        let mut report = three_up();
        report.nodes[2] = node(
            3,
            Err("peer 127.0.0.1:19193 unreachable: connection refused".into()),
            Err("i/o error".into()),
        );
        let h = health(&report);
        assert_eq!(h.exit_code(), 4);
        let text = render_status(&report, &h);
        assert!(
            text.contains("\n3     voter   down      127.0.0.1:19193"),
            "{text}"
        );
        assert!(text.contains("no answer"), "{text}");
        assert!(
            text.contains("Problems:\n  node 3: raft 127.0.0.1:19193: peer 127.0.0.1:19193 unreachable: connection refused\n  node 3: kafka 127.0.0.1:19093: i/o error\n"),
            "{text}"
        );
    }

    #[test]
    fn no_leader_and_disagreements_are_reported() {
        let mut report = three_up();
        report.view = status(1, "candidate", None);
        report.nodes[0] = node(1, Ok(status(1, "candidate", None)), healthy_kafka());
        let h = health(&report);
        assert_eq!(h.exit_code(), 3);
        assert!(render_status(&report, &h).starts_with("Leader:     none\n"));

        let mut report = three_up();
        report.nodes[2] = node(
            3,
            Ok(status(3, "follower", Some(1))),
            Ok(KafkaView {
                brokers: vec![1, 3],
                controller: 1,
            }),
        );
        match health(&report) {
            Health::Degraded(p) => assert_eq!(
                p,
                vec![
                    "node 3 sees leader 1 (node 1 at 127.0.0.1:19191 sees 2)".to_owned(),
                    "node 3: Metadata lists brokers [1, 3], members are [1, 2, 3]".to_owned(),
                    "node 3: Metadata names controller 1, leader is 2".to_owned(),
                ]
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn membership_lists_voters_and_learners() {
        let mut s = status(2, "leader", Some(2));
        s.learners = vec![(4, info(4))];
        assert_eq!(
            render_membership(&s),
            "\
Leader:     2
Term:       7
Voter:      1 (raft 127.0.0.1:19191, kafka 127.0.0.1:19091)
Voter:      2 (raft 127.0.0.1:19192, kafka 127.0.0.1:19092)
Voter:      3 (raft 127.0.0.1:19193, kafka 127.0.0.1:19093)
Learner:    4 (raft 127.0.0.1:19194, kafka 127.0.0.1:19094)
"
        );
    }
}
