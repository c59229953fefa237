//! Three processes, one Raft group: every node lists all brokers with the Raft leader as
//! controller and names the leader as coordinator; followers answer group APIs with
//! NOT_COORDINATOR; a topic created through a follower is forwarded to the leader; topics and
//! commits are visible through every node's metadata; every node answers InitProducerId with
//! ids that never repeat, across nodes and restarts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::group_wire;

use std::time::{Duration, Instant};

use common::raw::RawClient;
use group_wire::cluster;
use group_wire::*;
use kafka_protocol::messages::*;

fn metadata(c: &mut RawClient, topics: Option<&[&str]>) -> MetadataResponse {
    let req = MetadataRequest::default()
        .with_topics(topics.map(|ts| {
            ts.iter()
                .map(|t| {
                    metadata_request::MetadataRequestTopic::default()
                        .with_name(Some(TopicName(s(t))))
                })
                .collect()
        }))
        .with_allow_auto_topic_creation(false);
    match c.call(ApiKey::Metadata, 9, RequestKind::Metadata(req)) {
        ResponseKind::Metadata(r) => r,
        other => panic!("{other:?}"),
    }
}

/// The Raft leader, once every node's Metadata names the same controller.
fn agreed_leader(nodes: &[cluster::Node]) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let controllers: Vec<i32> = nodes
            .iter()
            .map(|n| {
                metadata(&mut RawClient::connect(n.kafka), None)
                    .controller_id
                    .0
            })
            .collect();
        if controllers[0] > 0 && controllers.iter().all(|c| *c == controllers[0]) {
            return controllers[0] as u64;
        }
        assert!(
            Instant::now() < deadline,
            "no agreed leader: {controllers:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn followers_point_to_the_leader_which_coordinates_every_group() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster::start(dir.path(), 3, &["--group-initial-rebalance-delay-ms", "0"]);

    let leader = agreed_leader(&nodes);
    let leader_node = nodes.iter().find(|n| n.id == leader).unwrap();
    let follower = nodes.iter().find(|n| n.id != leader).unwrap();

    // Every node lists the three brokers.
    for n in &nodes {
        let m = metadata(&mut RawClient::connect(n.kafka), None);
        let mut brokers: Vec<(i32, i32)> =
            m.brokers.iter().map(|b| (b.node_id.0, b.port)).collect();
        brokers.sort();
        let mut expected: Vec<(i32, i32)> = nodes
            .iter()
            .map(|n| (n.id as i32, i32::from(n.kafka.port())))
            .collect();
        expected.sort();
        assert_eq!(brokers, expected, "node {}", n.id);
    }

    // A follower forwards topic changes to the leader (as a KRaft broker forwards to its
    // controller) and answers once it applied them; the leader places partitions on every node.
    let mut f = RawClient::connect(follower.kafka);
    create_topic(&mut f, "t", 6);
    let mut l = RawClient::connect(leader_node.kafka);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let m = metadata(&mut f, Some(&["t"]));
        if m.topics[0].error_code == 0 {
            let mut leaders: Vec<i32> = m.topics[0]
                .partitions
                .iter()
                .map(|p| p.leader_id.0)
                .collect();
            leaders.sort();
            leaders.dedup();
            assert_eq!(leaders, vec![1, 2, 3], "partitions placed on every node");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the follower never saw the topic"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // FindCoordinator on a follower names the leader; group APIs there say NOT_COORDINATOR.
    let found = find_coordinator_v4(&mut f, "g");
    assert_eq!(
        (found.error_code, found.node_id.0 as u64, found.port),
        (0, leader, i32::from(leader_node.kafka.port()))
    );
    let r = join(&mut f, 5, join_request("g", "", None, &["t"], 10_000));
    assert_eq!(r.error_code, 16, "NOT_COORDINATOR");
    assert_eq!(commit(&mut f, &Commit::admin("g", "t", 0, 1)), 16);
    assert_eq!(heartbeat(&mut f, "g", 1, "m"), 16);
    assert_eq!(delete_groups(&mut f, &["g"]), vec![16]);
    let listed = match f.call(
        ApiKey::ListGroups,
        4,
        RequestKind::ListGroups(ListGroupsRequest::default()),
    ) {
        ResponseKind::ListGroups(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        (listed.error_code, listed.groups.len()),
        (0, 0),
        "a follower coordinates none"
    );

    // The leader coordinates: a group forms and commits there.
    let first = join(&mut l, 5, join_request("g", "", None, &["t"], 10_000));
    assert_eq!(
        first.error_code,
        79,
        "{first:?}\nleader log:\n{}",
        leader_node.log()
    );
    let joined = join_new_member(&mut l, "g", &["t"]);
    assert_eq!(joined.error_code, 0);
    let me = joined.member_id.to_string();
    assert_eq!(sync(&mut l, "g", 1, &me, &[(&me, b"x")]).error_code, 0);
    let ok = Commit {
        group: "g",
        generation: 1,
        member: &me,
        instance: None,
        topic: "t",
        partition: 5,
        offset: 77,
        metadata: "",
    };
    assert_eq!(commit(&mut l, &ok), 0);
    assert_eq!(fetch_all(&mut l, "g"), vec![("t".into(), 5, 77)]);
}

/// InitProducerId v4 for an idempotent producer (no transactional id).
fn try_init_producer_id(c: &mut RawClient) -> InitProducerIdResponse {
    let req = InitProducerIdRequest::default()
        .with_transactional_id(None)
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    match c.call(ApiKey::InitProducerId, 4, RequestKind::InitProducerId(req)) {
        ResponseKind::InitProducerId(r) => r,
        other => panic!("{other:?}"),
    }
}

fn init_producer_id(c: &mut RawClient) -> i64 {
    let r = try_init_producer_id(c);
    assert_eq!((r.error_code, r.producer_epoch), (0, 0), "{r:?}");
    r.producer_id.0
}

/// Which node `metadata` names as leader of each partition of `topic`, once it knows it.
fn partition_leaders(c: &mut RawClient, topic: &str) -> Vec<(i32, u64)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let m = metadata(c, Some(&[topic]));
        if m.topics[0].error_code == 0 {
            let mut out: Vec<(i32, u64)> = m.topics[0]
                .partitions
                .iter()
                .map(|p| (p.partition_index, p.leader_id.0 as u64))
                .collect();
            out.sort();
            return out;
        }
        assert!(Instant::now() < deadline, "{topic} never appeared: {m:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn every_node_hands_out_producer_ids_that_never_repeat_even_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = cluster::start(dir.path(), 3, &[]);
    let leader = agreed_leader(&nodes);
    let follower = nodes.iter().position(|n| n.id != leader).unwrap();

    // Every node answers InitProducerId (a follower reserves its block through the leader);
    // no id is handed out twice, whichever node hands it out.
    let mut seen = std::collections::BTreeSet::new();
    for n in &nodes {
        let mut c = RawClient::connect(n.kafka);
        for _ in 0..3 {
            let id = init_producer_id(&mut c);
            assert!(seen.insert(id), "producer id {id} handed out twice");
        }
    }

    // An idempotent librdkafka producer bootstrapped at a follower writes to a partition
    // that a follower owns.
    let mut f = RawClient::connect(nodes[follower].kafka);
    create_topic(&mut f, "idem", 3);
    let (partition, _) = partition_leaders(&mut f, "idem")
        .into_iter()
        .find(|(_, owner)| *owner != leader)
        .expect("round-robin placement puts a partition on a follower");
    let bootstrap = nodes[follower].kafka.to_string();
    let out = common::python_script(
        "groups_idempotent_producer.py",
        &[&bootstrap, "idem", &partition.to_string(), "50"],
        Duration::from_secs(120),
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        got,
        serde_json::json!({
            "undelivered": 0,
            "errors": [],
            "offsets": (0..50).collect::<Vec<i64>>(),
        })
    );

    // A node killed and restarted reserves a fresh block: ids it handed out before (and the
    // rest of its old block) are never handed out again.
    for node in nodes.iter_mut() {
        node.kill_and_restart();
        let deadline = Instant::now() + Duration::from_secs(30);
        let id = loop {
            let answered = try_init_producer_id(&mut RawClient::connect(node.kafka));
            if answered.error_code == 0 {
                break answered.producer_id.0;
            }
            // Retriable while the restarted node finds the leader again.
            assert!(
                Instant::now() < deadline,
                "node {} never answered InitProducerId: {answered:?}\n{}",
                node.id,
                node.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(seen.insert(id), "producer id {id} repeated after a restart");
    }
}
