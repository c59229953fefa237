//! `scripts/cluster.sh` as an operator runs it: three `cohort serve` processes whose replicated
//! metadata survives SIGKILL of any one node. For each node in turn: kill it, check that the
//! other two still answer Metadata (all three brokers, a live controller) and take CreateTopics
//! through either of them, restart it, and check that it catches up with what it missed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;

use std::collections::BTreeSet;
use std::time::Duration;

use cluster_support::*;

/// The topics node `n`'s Metadata lists, if it answers.
fn topics_on(c: &ScriptCluster, n: u64, names: &[&str]) -> Option<BTreeSet<String>> {
    let m = metadata(c.kafka(n), names).ok()?;
    Some(
        m.topics
            .iter()
            .filter(|t| t.error_code == 0)
            .filter_map(|t| t.name.as_ref().map(|n| n.to_string()))
            .collect(),
    )
}

fn wait_topics(c: &ScriptCluster, n: u64, names: &[&str]) {
    let want: BTreeSet<String> = names.iter().map(|s| s.to_string()).collect();
    eventually(
        &format!("node {n} lists {want:?}"),
        Duration::from_secs(30),
        || topics_on(c, n, names).filter(|got| *got == want),
    );
}

#[test]
fn metadata_survives_killing_any_one_node_and_the_node_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ScriptCluster::up(dir.path(), &[]);
    let leader = c.wait_controller(&NODES, Duration::from_secs(30));
    let (code, text) = c.status();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&format!("Leader:     {leader} ")), "{text}");
    assert!(text.contains("Voters:     1, 2, 3"), "{text}");

    // A topic created through a follower is forwarded and appears everywhere, its partitions
    // spread over the three nodes.
    let follower = NODES.into_iter().find(|n| *n != leader).unwrap();
    assert_eq!(create_topic(c.kafka(follower), "first", 6), Ok(0));
    let mut created = vec!["first".to_owned()];
    for n in NODES {
        wait_topics(&c, n, &["first"]);
        let m = metadata(c.kafka(n), &["first"]).unwrap();
        let brokers: BTreeSet<i32> = m.brokers.iter().map(|b| b.node_id.0).collect();
        assert_eq!(brokers, BTreeSet::from([1, 2, 3]), "node {n}");
        assert_eq!(m.controller_id.0 as u64, leader, "node {n}");
        let owners: BTreeSet<i32> = m.topics[0]
            .partitions
            .iter()
            .map(|p| p.leader_id.0)
            .collect();
        assert_eq!(owners, BTreeSet::from([1, 2, 3]), "node {n}");
    }

    // A partition is served by its owner only; the others send the client there.
    let m = metadata(c.kafka(1), &["first"]).unwrap();
    for p in &m.topics[0].partitions {
        for n in NODES {
            let code = produce(c.kafka(n), "first", p.partition_index, b"x").unwrap();
            let want = if i64::from(p.leader_id.0) == n as i64 {
                0
            } else {
                6
            };
            assert_eq!(code, want, "partition {} on node {n}", p.partition_index);
        }
    }

    for victim in NODES {
        let killed = std::time::Instant::now();
        c.kill9(victim);
        let survivors: Vec<u64> = NODES.into_iter().filter(|n| *n != victim).collect();
        let controller = c.wait_controller(&survivors, Duration::from_secs(30));
        eprintln!(
            "node {victim} killed: nodes {survivors:?} name controller {controller} after {:?}",
            killed.elapsed()
        );
        for n in &survivors {
            let m = metadata(c.kafka(*n), &[]).unwrap();
            assert_eq!(
                m.brokers.len(),
                3,
                "node {n} still lists the dead node's broker"
            );
            assert_eq!(m.controller_id.0 as u64, controller);
            // Every node answers ListGroups (a follower with an empty list). A new leader
            // still applying what was committed before it led answers
            // COORDINATOR_LOAD_IN_PROGRESS, as Kafka's loading coordinator does; clients retry.
            let code = eventually(
                &format!("ListGroups on node {n}"),
                Duration::from_secs(20),
                || match list_groups(c.kafka(*n)).unwrap() {
                    (14, _) => None,
                    (code, _) => Some(code),
                },
            );
            assert_eq!(code, 0, "ListGroups on node {n}");
            assert_eq!(
                find_coordinator(c.kafka(*n), "any-group").unwrap(),
                (0, controller as i32)
            );
        }
        // Writable through either survivor, the follower forwarding to the new leader.
        for (i, n) in survivors.iter().enumerate() {
            let name = format!("without-{victim}-via-{n}");
            let code = eventually(
                &format!("CreateTopics {name} on node {n}"),
                Duration::from_secs(20),
                || match create_topic(c.kafka(*n), &name, 2) {
                    Ok(0) => Some(0),
                    // Raced with the election: clients retry these.
                    Ok(13 | 41 | 7) | Err(_) => None,
                    Ok(other) => Some(other),
                },
            );
            assert_eq!(code, 0, "{name} (attempt {i})");
            created.push(name);
        }
        let names: Vec<&str> = created.iter().map(String::as_str).collect();
        for n in &survivors {
            wait_topics(&c, *n, &names);
        }

        // Back on its data: it rejoins and catches up with the topics it missed.
        c.start(victim);
        wait_topics(&c, victim, &names);
        c.wait_healthy(Duration::from_secs(30));
        eprintln!(
            "node {victim} restarted and caught up: {:?} after its kill",
            killed.elapsed()
        );
    }

    // Nothing was lost across three kills, and every node agrees.
    let names: Vec<&str> = created.iter().map(String::as_str).collect();
    for n in NODES {
        wait_topics(&c, n, &names);
    }

    // `down` stops exactly the processes it started.
    let pids: Vec<u32> = NODES.iter().map(|n| c.pid(*n).unwrap()).collect();
    let out = c.script(&["down"], Duration::from_secs(60));
    assert!(out.status.success(), "{out:?}");
    for (n, pid) in NODES.iter().zip(pids) {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/status"))
                    .is_ok_and(|s| s.contains("State:\tZ")),
            "node {n} (pid {pid}) still running"
        );
        assert!(c.pid(*n).is_none(), "node {n}'s pid file left behind");
    }
}
