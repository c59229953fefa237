//! The cluster and log-dir admin APIs in a three-process cluster: every node answers
//! DescribeLogDirs for the partitions placed on it (sizes equal its files on disk) and
//! OffsetForLeaderEpoch for those only (NOT_LEADER_OR_FOLLOWER for the others); every node
//! describes the same cluster; Fetch v16 by topic id sends a client from a node that does not
//! hold a partition to its leader (KIP-951's current leader and endpoint); `cohort log-dirs` and
//! kafka-python's `describe_log_dirs` ask each broker; a librdkafka consumer resumes from
//! committed epochs on every partition.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::group_wire;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::raw::{batches, RawClient};
use group_wire::cluster::{self, Node};
use group_wire::s;
use kafka_protocol::messages::*;

fn bytes_on_disk(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                bytes_on_disk(&e.path())
            } else {
                m.len()
            }
        })
        .sum()
}

/// (controller, partition → owner) once `node` knows the topic.
fn owners(node: &Node, topic: &str) -> (i32, BTreeMap<i32, i32>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let req = MetadataRequest::default()
            .with_topics(Some(vec![metadata_request::MetadataRequestTopic::default(
            )
            .with_name(Some(TopicName(s(topic))))]))
            .with_allow_auto_topic_creation(false);
        if let ResponseKind::Metadata(m) =
            RawClient::connect(node.kafka).call(ApiKey::Metadata, 12, RequestKind::Metadata(req))
        {
            let t = &m.topics[0];
            if t.error_code == 0 && m.controller_id.0 > 0 {
                return (
                    m.controller_id.0,
                    t.partitions
                        .iter()
                        .map(|p| (p.partition_index, p.leader_id.0))
                        .collect(),
                );
            }
        }
        assert!(
            Instant::now() < deadline,
            "node {} never knew {topic}",
            node.id
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn describe_log_dirs(node: &Node) -> DescribeLogDirsResponse {
    match RawClient::connect(node.kafka).call(
        ApiKey::DescribeLogDirs,
        4,
        RequestKind::DescribeLogDirs(DescribeLogDirsRequest::default().with_topics(None)),
    ) {
        ResponseKind::DescribeLogDirs(r) => r,
        other => panic!("{other:?}"),
    }
}

/// The topic's id, as Metadata at `node` names it.
fn topic_id(node: &Node, topic: &str) -> uuid::Uuid {
    let req = MetadataRequest::default()
        .with_topics(Some(vec![metadata_request::MetadataRequestTopic::default(
        )
        .with_name(Some(TopicName(s(topic))))]))
        .with_allow_auto_topic_creation(false);
    match RawClient::connect(node.kafka).call(ApiKey::Metadata, 13, RequestKind::Metadata(req)) {
        ResponseKind::Metadata(m) => {
            assert_eq!((m.error_code, m.topics[0].error_code), (0, 0));
            m.topics[0].topic_id
        }
        other => panic!("{other:?}"),
    }
}

/// Fetch at `version` of every partition of `topic` (by id from v13), from offset 0.
fn fetch_all(node: &Node, version: i16, topic: &str, id: uuid::Uuid, n: i32) -> FetchResponse {
    let mut t = fetch_request::FetchTopic::default().with_partitions(
        (0..n)
            .map(|p| {
                fetch_request::FetchPartition::default()
                    .with_partition(p)
                    .with_fetch_offset(0)
                    .with_partition_max_bytes(1 << 20)
            })
            .collect(),
    );
    t = if version >= 13 {
        t.with_topic_id(id)
    } else {
        t.with_topic(TopicName(s(topic)))
    };
    let req = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_session_epoch(-1)
        .with_topics(vec![t]);
    match RawClient::connect(node.kafka).call(ApiKey::Fetch, version, RequestKind::Fetch(req)) {
        ResponseKind::Fetch(r) => r,
        other => panic!("{other:?}"),
    }
}

fn end_offsets(node: &Node, topic: &str, partitions: i32) -> Vec<(i16, i32, i64)> {
    let req = OffsetForLeaderEpochRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![
            offset_for_leader_epoch_request::OffsetForLeaderTopic::default()
                .with_topic(TopicName(s(topic)))
                .with_partitions(
                    (0..partitions)
                        .map(|p| {
                            offset_for_leader_epoch_request::OffsetForLeaderPartition::default()
                                .with_partition(p)
                                .with_current_leader_epoch(0)
                                .with_leader_epoch(0)
                        })
                        .collect(),
                ),
        ]);
    match RawClient::connect(node.kafka).call(
        ApiKey::OffsetForLeaderEpoch,
        4,
        RequestKind::OffsetForLeaderEpoch(req),
    ) {
        ResponseKind::OffsetForLeaderEpoch(r) => r.topics[0]
            .partitions
            .iter()
            .map(|p| (p.error_code, p.leader_epoch, p.end_offset))
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_node_describes_the_partitions_it_holds_and_the_same_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = cluster::start(dir.path(), 3, &[]);
    // Any node forwards CreateTopics to the leader (retried while the cluster elects one).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let code = RawClient::connect(nodes[0].kafka).create_topic("spread", 3, &[]);
        if code == 0 || code == 36 {
            break;
        }
        assert!(Instant::now() < deadline, "CreateTopics: {code}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (_, owner) = owners(&nodes[0], "spread");
    // Every node has applied the topic before its partitions are written to.
    for n in &nodes {
        assert_eq!(owners(n, "spread").1, owner, "node {}", n.id);
    }
    let by_id = |id: i32| nodes.iter().find(|n| n.id as i32 == id).unwrap();
    let mut ends = BTreeMap::new();
    for (p, o) in &owner {
        let mut c = RawClient::connect(by_id(*o).kafka);
        for b in 0..=*p {
            let r = c.produce(
                "spread",
                *p,
                batches::batch(&[b"x", b"y"], 1_000 + i64::from(b), None),
            );
            assert_eq!(r.error_code, 0, "partition {p} at node {o}");
        }
        ends.insert(*p, i64::from(2 * (*p + 1)));
    }
    let held: BTreeMap<i32, Vec<i32>> = owner.iter().fold(BTreeMap::new(), |mut m, (p, o)| {
        m.entry(*o).or_default().push(*p);
        m
    });
    assert_eq!(held.len(), 3, "one partition per node: {owner:?}");

    let mut cluster_ids = Vec::new();
    for node in &nodes {
        let id = node.id as i32;
        let data = std::path::absolute(dir.path().join(format!("node-{id}"))).unwrap();
        // DescribeLogDirs: this node's partitions only, sized as on its disk.
        let resp = describe_log_dirs(node);
        assert_eq!(resp.results.len(), 1);
        let r = &resp.results[0];
        assert_eq!(r.log_dir.as_str(), data.to_str().unwrap());
        let got: BTreeMap<i32, i64> = r
            .topics
            .iter()
            .filter(|t| t.name.0.as_str() == "spread")
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (p.partition_index, p.partition_size))
            })
            .collect();
        let expected: BTreeMap<i32, i64> = held[&id]
            .iter()
            .map(|p| {
                (
                    *p,
                    bytes_on_disk(&data.join(format!("topics/spread-{p}"))) as i64,
                )
            })
            .collect();
        assert_eq!(got, expected, "node {id}");
        assert!(expected.values().all(|s| *s > 0));
        assert!(r.total_bytes > 0 && r.usable_bytes > 0);
        // OffsetForLeaderEpoch: the owner answers, the others send the client on.
        let answers = end_offsets(node, "spread", 3);
        for (p, a) in answers.iter().enumerate() {
            let p = p as i32;
            if owner[&p] == id {
                assert_eq!(*a, (0, 0, ends[&p]), "node {id} partition {p}");
            } else {
                assert_eq!(*a, (6, -1, -1), "node {id} partition {p}");
            }
        }
        // Fetch v16 by topic id: the owner serves; the others answer NOT_LEADER_OR_FOLLOWER
        // naming the owner and its endpoint (KIP-951), which v12 does not.
        let id_of_spread = topic_id(node, "spread");
        let v16 = fetch_all(node, 16, "spread", id_of_spread, 3);
        assert_eq!(v16.responses[0].topic_id, id_of_spread);
        let mut hinted = BTreeMap::new();
        for p in &v16.responses[0].partitions {
            let owner_id = owner[&p.partition_index];
            if owner_id == id {
                assert_eq!(p.error_code, 0, "node {id} partition {}", p.partition_index);
                assert_eq!(p.high_watermark, ends[&p.partition_index]);
                assert_eq!(p.current_leader.leader_id.0, -1, "no hint when served");
            } else {
                assert_eq!(p.error_code, 6, "node {id} partition {}", p.partition_index);
                assert_eq!(
                    (p.current_leader.leader_id.0, p.current_leader.leader_epoch),
                    (owner_id, 0)
                );
                hinted.insert(owner_id, ());
            }
        }
        let endpoints: BTreeMap<i32, i32> = v16
            .node_endpoints
            .iter()
            .map(|e| (e.node_id.0, e.port))
            .collect();
        let expected: BTreeMap<i32, i32> = hinted
            .keys()
            .map(|o| (*o, i32::from(by_id(*o).kafka.port())))
            .collect();
        assert_eq!(
            endpoints, expected,
            "node {id}: the leaders' endpoints, once each"
        );
        let v12 = fetch_all(node, 12, "spread", id_of_spread, 3);
        assert!(v12.node_endpoints.is_empty());
        assert!(v12.responses[0]
            .partitions
            .iter()
            .all(|p| p.current_leader.leader_id.0 == -1));
        // An id no topic has: UNKNOWN_TOPIC_ID on every node.
        let unknown = fetch_all(node, 16, "spread", uuid::Uuid::from_u128(7), 3);
        assert!(unknown.responses[0]
            .partitions
            .iter()
            .all(|p| p.error_code == 100));

        // DescribeCluster: the same cluster from every node, its controller the one Metadata
        // names (asked right before: a young cluster may still move its leader).
        let controller = owners(node, "spread").0;
        let described = match RawClient::connect(node.kafka).call(
            ApiKey::DescribeCluster,
            1,
            RequestKind::DescribeCluster(DescribeClusterRequest::default()),
        ) {
            ResponseKind::DescribeCluster(r) => r,
            other => panic!("{other:?}"),
        };
        assert_eq!(described.error_code, 0);
        assert_eq!(described.controller_id.0, controller, "node {id}");
        let brokers: Vec<(i32, i32)> = described
            .brokers
            .iter()
            .map(|b| (b.broker_id.0, b.port))
            .collect();
        let expected: Vec<(i32, i32)> = nodes
            .iter()
            .map(|n| (n.id as i32, i32::from(n.kafka.port())))
            .collect();
        assert_eq!(brokers, expected, "node {id}");
        cluster_ids.push(described.cluster_id.to_string());
    }
    assert!(cluster_ids
        .iter()
        .all(|c| c == &cluster_ids[0] && !c.is_empty()));

    // `cohort log-dirs` asks every broker.
    let bootstrap = nodes
        .iter()
        .map(|n| n.kafka.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let out = common::run(
        Command::new(env!("CARGO_BIN_EXE_cohort")).args([
            "log-dirs",
            "--bootstrap-server",
            &bootstrap,
            "--describe",
            "--topic-list",
            "spread",
        ]),
        Duration::from_secs(60),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[1],
        "Received log directory information from brokers 1,2,3"
    );
    let doc: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
    let printed: BTreeMap<String, (i64, u64)> = doc["brokers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| {
            let broker = b["broker"].as_i64().unwrap();
            b["logDirs"][0]["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |p| {
                    (
                        p["partition"].as_str().unwrap().to_string(),
                        (broker, p["size"].as_u64().unwrap()),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let expected: BTreeMap<String, (i64, u64)> = owner
        .iter()
        .map(|(p, o)| {
            (
                format!("spread-{p}"),
                (
                    i64::from(*o),
                    bytes_on_disk(&dir.path().join(format!("node-{o}/topics/spread-{p}"))),
                ),
            )
        })
        .collect();
    assert_eq!(printed, expected);

    // The standard clients over the whole cluster: kafka-python asks every broker for its log
    // dirs; librdkafka validates committed positions at each partition's owner.
    let out = common::python_script(
        "admin_cluster_nodes.py",
        &[&bootstrap, "spread", "3"],
        Duration::from_secs(120),
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let dirs: serde_json::Value = expected
        .iter()
        .map(|(k, (broker, size))| (k.clone(), serde_json::json!([broker, size])))
        .collect::<serde_json::Map<_, _>>()
        .into();
    assert_eq!(got["log_dirs"], dirs);
    let each = |v: i64| serde_json::json!([[0, v, 0], [1, v, 0], [2, v, 0]]);
    assert_eq!(got["committed"], each(1));
    assert_eq!(got["resumed"], each(1));
}
