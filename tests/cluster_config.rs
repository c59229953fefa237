//! The settings `decide` reads are the cluster's, not each node's (issue 9 item 3,
//! docs/decisions/0115-replicated-cluster-config.md): over real processes, a commit past
//! `--offsets-per-group-max` is refused by whichever node leads, whatever its own flags say,
//! and a one-voter node adopts its new flags when restarted with them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;

use std::time::Duration;

use cluster_support::{commit, create_topic, eventually, find_coordinator, Conn, ScriptCluster};
use common::Cohort;

const POLICY_VIOLATION: i16 = 44;
const T: Duration = Duration::from_secs(5);

/// The error code of an admin commit of `partition`, sent to the group's coordinator (retried
/// while none is known or a new one loads).
fn commit_via_coordinator(c: &ScriptCluster, nodes: &[u64], group: &str, partition: i32) -> i16 {
    eventually(
        "a commit answered by the coordinator",
        Duration::from_secs(60),
        || {
            let (err, id) = nodes
                .iter()
                .find_map(|n| find_coordinator(c.kafka(*n), group).ok())?;
            if err != 0 || id <= 0 {
                return None;
            }
            let mut conn = Conn::open(c.kafka(id as u64), T).ok()?;
            match commit(&mut conn, group, "t", partition, 10 + i64::from(partition)).ok()? {
                // Not the coordinator (yet) or still loading: ask again, as a client does.
                14..=16 => None,
                code => Some(code),
            }
        },
    )
}

#[test]
fn a_cluster_keeps_the_first_leaders_settings_when_nodes_restart_with_other_flags() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ScriptCluster::up(dir.path(), &["--offsets-per-group-max", "1"]);
    c.wait_healthy(Duration::from_secs(60));
    let leader = c.wait_controller(&[1, 2, 3], Duration::from_secs(30));
    eventually("topic t", Duration::from_secs(30), || {
        create_topic(c.kafka(leader), "t", 3)
            .ok()
            .filter(|e| *e == 0 || *e == 36)
    });
    assert_eq!(commit_via_coordinator(&c, &[1, 2, 3], "g", 0), 0);
    assert_eq!(
        commit_via_coordinator(&c, &[1, 2, 3], "g", 1),
        POLICY_VIOLATION
    );

    // Every node restarted with a roomier flag: a cluster of several voters keeps the value it
    // was bootstrapped with, and every node says its flag differs.
    for n in [1, 2, 3] {
        c.kill9(n);
    }
    c.set_serve_args(&["--offsets-per-group-max", "5"]);
    for n in [1, 2, 3] {
        c.start(n);
    }
    c.wait_healthy(Duration::from_secs(60));
    c.wait_controller(&[1, 2, 3], Duration::from_secs(30));
    assert_eq!(
        commit_via_coordinator(&c, &[1, 2, 3], "g", 1),
        POLICY_VIOLATION,
        "{}",
        c.logs()
    );
    // Again after a failover: the next leader decides with the same value.
    let leader = c.wait_controller(&[1, 2, 3], Duration::from_secs(30));
    c.kill9(leader);
    let rest: Vec<u64> = [1, 2, 3].into_iter().filter(|n| *n != leader).collect();
    let next = c.wait_controller(&rest, Duration::from_secs(30));
    assert_ne!(next, leader);
    assert_eq!(commit_via_coordinator(&c, &rest, "g", 2), POLICY_VIOLATION);
    assert_eq!(commit_via_coordinator(&c, &rest, "g", 0), 0);
    for n in rest {
        let log = std::fs::read_to_string(dir.path().join(format!("node-{n}.log"))).unwrap();
        assert!(
            log.contains("cohort.offsets.per.group.max=1 (flag 5)"),
            "node {n} did not say its flag differs:\n{log}"
        );
    }
}

/// Admin OffsetCommit of `t`/`partition` on a one-voter node (its own coordinator).
fn commit_single(broker: &Cohort, partition: i32) -> i16 {
    eventually("a commit answered", Duration::from_secs(30), || {
        let mut conn = Conn::open(broker.bootstrap().parse().unwrap(), T).ok()?;
        match commit(&mut conn, "g", "t", partition, 7).ok()? {
            14 => None,
            code => Some(code),
        }
    })
}

#[test]
fn a_one_voter_node_adopts_its_flags_when_restarted_with_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &["--offsets-per-group-max", "1"]);
    assert_eq!(
        create_topic(broker.bootstrap().parse().unwrap(), "t", 3).unwrap(),
        0
    );
    assert_eq!(commit_single(&broker, 0), 0);
    assert_eq!(commit_single(&broker, 1), POLICY_VIOLATION);
    broker.terminate();

    let broker = Cohort::start(&data, &["--offsets-per-group-max", "2"]);
    // The restarted node replays the old value, then, leading, records its new flags.
    assert_eq!(
        eventually("the new flag in force", Duration::from_secs(30), || {
            let code = commit_single(&broker, 1);
            (code == 0).then_some(code)
        }),
        0
    );
    assert_eq!(commit_single(&broker, 2), POLICY_VIOLATION);
    assert!(
        broker
            .log()
            .contains("cohort.offsets.per.group.max=1 (flag 2)"),
        "{}",
        broker.log()
    );
}
