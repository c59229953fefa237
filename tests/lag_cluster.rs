//! Lag in a three-process cluster: only the coordinator (the Raft leader) exports group
//! figures, and it learns the log-end offsets of partitions placed on the other nodes from
//! those nodes, over their Kafka port; a node that goes away leaves its partitions' lag
//! unknown instead of stale.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod group_wire;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::raw::RawClient;
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
    let deadline = Instant::now() + Duration::from_secs(30);
    let leader = loop {
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
        if controllers[0] > 0 && controllers.iter().all(|c| *c == controllers[0]) {
            break controllers[0];
        }
        assert!(
            Instant::now() < deadline,
            "no agreed leader: {controllers:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
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
