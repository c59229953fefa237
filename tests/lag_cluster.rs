//! Lag in a three-process cluster: only the coordinator (the Raft leader) exports group
//! figures, and it learns the log-end offsets of partitions placed on the other nodes from
//! those nodes, over their Kafka port; a node that goes away leaves its partitions' lag
//! unknown instead of stale. After the leader is killed, the new coordinator judges lag
//! status from the commits' timestamps in its applied state: STOPPED at once for a group that
//! stopped before the failover, "warming up" (no status) for one that committed just before.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::group_wire;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::raw::{batches, RawClient};
use group_wire::cluster::{self, Node};
use group_wire::s;
use kafka_protocol::messages::*;

fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(c, "GET {path} HTTP/1.1\r\nhost: test\r\n\r\n").unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    out.split_once("\r\n\r\n").unwrap().1.to_string()
}

/// The `cohort_group_*` series of a node's `/metrics`.
fn group_series(node: &Node) -> BTreeMap<String, i64> {
    http_get(node.http, "/metrics")
        .lines()
        .filter(|l| l.starts_with("cohort_group_") && l.contains("group=\""))
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

fn series(name: &str, partition: i32) -> String {
    format!("{name}{{group=\"lag-reader\",topic=\"lagged\",partition=\"{partition}\"}}")
}

/// (controller, partition → owner) as `node`'s Metadata says.
fn metadata(node: &Node) -> (i32, BTreeMap<i32, i32>) {
    let req = MetadataRequest::default()
        .with_topics(Some(vec![metadata_request::MetadataRequestTopic::default(
        )
        .with_name(Some(TopicName(s("lagged"))))]))
        .with_allow_auto_topic_creation(false);
    match RawClient::connect(node.kafka).call(ApiKey::Metadata, 9, RequestKind::Metadata(req)) {
        ResponseKind::Metadata(m) => (
            m.controller_id.0,
            m.topics[0]
                .partitions
                .iter()
                .map(|p| (p.partition_index, p.leader_id.0))
                .collect(),
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_coordinator_alone_exports_lag_learning_log_ends_from_the_partition_owners() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster::start(
        dir.path(),
        3,
        &[
            "--group-initial-rebalance-delay-ms",
            "0",
            "--lag-sample-interval-ms",
            "100",
            "--lag-window-ms",
            "1000",
        ],
    );
    let bootstrap = nodes
        .iter()
        .map(|n| n.kafka.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let leader = agreed_leader(&nodes.iter().collect::<Vec<_>>());
    let leader_node = nodes.iter().find(|n| n.id as i32 == leader).unwrap();

    // Real clients over the whole cluster: records go to each partition's owner, commits to
    // the coordinator.
    common::python_script(
        "lag_setup.py",
        &[&bootstrap, "setup"],
        Duration::from_secs(120),
    );
    let (_, owners) = metadata(leader_node);
    let remote: Vec<i32> = owners
        .iter()
        .filter(|(_, owner)| **owner != leader)
        .map(|(p, _)| *p)
        .collect();
    assert_eq!(
        remote.len(),
        2,
        "partitions spread over the nodes: {owners:?}"
    );

    // The leader knows every log end, the remote ones included: 30, 20, 10.
    let expected = [(0, 12, 30), (1, 20, 20), (2, 3, 10)];
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let m = group_series(leader_node);
        let all = expected.iter().all(|(p, committed, end)| {
            m.get(&series("cohort_group_committed_offset", *p)) == Some(committed)
                && m.get(&series("cohort_group_log_end_offset", *p)) == Some(end)
                && m.get(&series("cohort_group_lag", *p)) == Some(&(end - committed))
        });
        if all {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "leader's lag figures: {m:#?}\nleader log:\n{}",
            leader_node.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Followers export no group figures, so scraping every node counts each group once; their
    // console says where the figures are.
    for follower in nodes.iter().filter(|n| n.id as i32 != leader) {
        let m = group_series(follower);
        assert!(m.is_empty(), "node {} exports {m:#?}", follower.id);
        let feed: serde_json::Value =
            serde_json::from_str(&http_get(follower.http, "/console.json")).unwrap();
        assert_eq!(feed["groups"].as_array().map(Vec::len), Some(0));
        let notice = feed["notice"].as_str().unwrap_or_default();
        assert!(
            notice.contains(&format!("node {leader} (Kafka {})", leader_node.kafka)),
            "node {}: {notice}",
            follower.id
        );
    }

    // An owner killed: its partition's log end (and lag) is no longer exported after a few
    // sample rounds; the other partitions keep theirs.
    let victim_partition = remote[0];
    let victim = owners[&victim_partition];
    let mut nodes = nodes;
    let victim_node = nodes.iter_mut().find(|n| n.id as i32 == victim).unwrap();
    let mut child = victim_node.child.take().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let leader_node = nodes.iter().find(|n| n.id as i32 == leader).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let m = group_series(leader_node);
        let gone = !m.contains_key(&series("cohort_group_log_end_offset", victim_partition))
            && !m.contains_key(&series("cohort_group_lag", victim_partition));
        if gone {
            for (p, committed, end) in expected.iter().filter(|e| e.0 != victim_partition) {
                assert_eq!(
                    m.get(&series("cohort_group_lag", *p)),
                    Some(&(end - committed))
                );
            }
            // The committed offset is the coordinator's own figure: still known.
            assert_eq!(
                m.get(&series("cohort_group_committed_offset", victim_partition)),
                Some(&expected[victim_partition as usize].1)
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "node {victim}'s partition {victim_partition} still exported: {m:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        leader_node
            .log()
            .contains("cannot learn log offsets from a partition owner"),
        "no warning about the unreachable owner"
    );
}

/// The controller (Raft leader) every node in `nodes` names, once they agree.
fn agreed_leader(nodes: &[&Node]) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let controllers: Vec<i32> = nodes
            .iter()
            .map(|n| {
                let req = MetadataRequest::default().with_topics(Some(vec![]));
                match RawClient::connect(n.kafka).call(
                    ApiKey::Metadata,
                    9,
                    RequestKind::Metadata(req),
                ) {
                    ResponseKind::Metadata(m) => m.controller_id.0,
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        if controllers[0] > 0
            && controllers.iter().all(|c| *c == controllers[0])
            && nodes.iter().any(|n| n.id as i32 == controllers[0])
        {
            return controllers[0];
        }
        assert!(
            Instant::now() < deadline,
            "no agreed leader: {controllers:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_new_coordinator_judges_status_from_the_commit_times_it_inherits() {
    const WINDOW_MS: u64 = 5_000;
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = cluster::start(
        dir.path(),
        3,
        &["--lag-sample-interval-ms", "200", "--lag-window-ms", "5000"],
    );
    let leader = agreed_leader(&nodes.iter().collect::<Vec<_>>());
    let leader_node = nodes.iter().find(|n| n.id as i32 == leader).unwrap();
    let mut coordinator = RawClient::connect(leader_node.kafka);
    assert_eq!(coordinator.create_topic("lagged", 3, &[]), 0);
    // A partition another node owns, so its log end outlives the leader.
    let (_, owners) = metadata(leader_node);
    let (&partition, &owner) = owners
        .iter()
        .find(|(_, owner)| **owner != leader)
        .expect("a partition on another node");
    let owner_node = nodes.iter().find(|n| n.id as i32 == owner).unwrap();
    let values: Vec<&[u8]> = vec![b"r"; 10];
    // The owner learns of the topic when it applies the Raft entry: until then it answers
    // UNKNOWN_TOPIC_OR_PARTITION, which clients retry.
    let mut producer = RawClient::connect(owner_node.kafka);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let produced = producer.produce("lagged", partition, batches::batch(&values, 0, None));
        if produced.error_code == 0 {
            break;
        }
        assert!(
            produced.error_code == 3 && Instant::now() < deadline,
            "{produced:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let commit = |c: &mut RawClient, group: &str, offset: i64| {
        let code = group_wire::commit(
            c,
            &group_wire::Commit::admin(group, "lagged", partition, offset),
        );
        assert_eq!(code, 0, "commit {group}");
    };
    // `idle` stops a window before the failover; `recent` commits just before it.
    commit(&mut coordinator, "idle", 5);
    std::thread::sleep(Duration::from_millis(WINDOW_MS + 300));
    commit(&mut coordinator, "recent", 4);
    let recent_committed = Instant::now();
    drop(coordinator);
    let old = nodes.iter_mut().find(|n| n.id as i32 == leader).unwrap();
    let mut child = old.child.take().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();

    let survivors: Vec<&Node> = nodes.iter().filter(|n| n.id as i32 != leader).collect();
    let new_leader = agreed_leader(&survivors);
    let new_node = survivors
        .iter()
        .find(|n| n.id as i32 == new_leader)
        .unwrap();
    let key = |name: &str, group: &str| format!("{name}{{group=\"{group}\"}}");
    let lag = |group: &str| {
        format!("cohort_group_lag{{group=\"{group}\",topic=\"lagged\",partition=\"{partition}\"}}")
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let m = loop {
        let m = group_series(new_node);
        if m.contains_key(&lag("idle")) && m.contains_key(&lag("recent")) {
            break m;
        }
        assert!(
            Instant::now() < deadline,
            "new coordinator {new_leader}: {m:#?}\nlog:\n{}",
            new_node.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        recent_committed.elapsed() < Duration::from_millis(WINDOW_MS),
        "the failover took longer than the window: nothing left to check"
    );
    assert_eq!(m.get(&lag("idle")), Some(&5));
    assert_eq!(m.get(&lag("recent")), Some(&6));
    assert_eq!(
        m.get(&key("cohort_group_status", "idle")),
        Some(&3),
        "{m:#?}"
    );
    assert_eq!(
        m.get(&key("cohort_group_status_warming_up", "idle")),
        Some(&0)
    );
    assert_eq!(m.get(&key("cohort_group_status", "recent")), None, "{m:#?}");
    assert_eq!(
        m.get(&key("cohort_group_status_warming_up", "recent")),
        Some(&1)
    );
}
