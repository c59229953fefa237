//! A broker without the client's listener (decision 0184, Kafka's
//! `getAliveBrokerNodes(listenerName)`): three nodes whose inter-broker listener is PLAINTEXT,
//! nodes 1 and 2 also listening on SSL, node 3 not. Node 3 leads Raft, so it owns a partition
//! and coordinates every group. A client on node 1's SSL listener is told brokers 1 and 2 only
//! (Metadata, DescribeCluster, whose controller is then -1); the partition node 3 leads is
//! LISTENER_NOT_FOUND from Metadata v6 (LEADER_NOT_AVAILABLE before) with node 3 among its
//! offline replicas; FindCoordinator is COORDINATOR_NOT_AVAILABLE. The same requests on node
//! 1's PLAINTEXT listener name all three nodes and the coordinator.
//!
//! Node 3 leads deterministically: it forms a one-voter cluster alone and nodes 1 and 2 join
//! it (`--join`, `cohort cluster add-voter`), which adds voters without an election.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::metadata_response::MetadataResponsePartition;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;

use cluster_support::{create_topic, s};
use common::certs::Certs;
use common::{free_port, Cohort};

const TOPIC: &str = "placed";
const GROUP: &str = "listeners";
/// The node without an SSL listener, which leads.
const BARE: i32 = 3;
const LISTENER_NOT_FOUND: i16 = 72;
const LEADER_NOT_AVAILABLE: i16 = 5;
const COORDINATOR_NOT_AVAILABLE: i16 = 15;

/// One request on a fresh connection, over TLS when `tls` is given; panics on anything but an
/// answer.
fn ask(
    addr: SocketAddr,
    tls: Option<&Arc<rustls::ClientConfig>>,
    key: ApiKey,
    version: i16,
    body: RequestKind,
) -> ResponseKind {
    let tcp = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    match tls {
        Some(config) => {
            let name = rustls::pki_types::ServerName::try_from(addr.ip().to_string()).unwrap();
            let session = rustls::ClientConnection::new(config.clone(), name).unwrap();
            exchange(rustls::StreamOwned::new(session, tcp), key, version, body)
        }
        None => exchange(tcp, key, version, body),
    }
}

fn exchange(
    mut stream: impl Read + Write,
    key: ApiKey,
    version: i16,
    body: RequestKind,
) -> ResponseKind {
    let frame = common::raw::encode_frame(7, "listener-test", key, version, &body).unwrap();
    stream.write_all(&frame).expect("request written");
    stream.flush().expect("request flushed");
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).expect("response size");
    let mut body = vec![0u8; usize::try_from(i32::from_be_bytes(size)).unwrap()];
    stream.read_exact(&mut body).expect("response body");
    let mut body = Bytes::from(body);
    let header = ResponseHeader::decode(&mut body, key.response_header_version(version)).unwrap();
    assert_eq!(header.correlation_id, 7, "{key:?} v{version}");
    ResponseKind::decode(key, &mut body, version).unwrap()
}

fn metadata(
    addr: SocketAddr,
    tls: Option<&Arc<rustls::ClientConfig>>,
    version: i16,
) -> MetadataResponse {
    let mut req = MetadataRequest::default().with_topics(Some(vec![
        MetadataRequestTopic::default().with_name(Some(TopicName(s(TOPIC)))),
    ]));
    if version >= 4 {
        req = req.with_allow_auto_topic_creation(false);
    }
    match ask(
        addr,
        tls,
        ApiKey::Metadata,
        version,
        RequestKind::Metadata(req),
    ) {
        ResponseKind::Metadata(r) => r,
        other => panic!("{other:?}"),
    }
}

fn describe_cluster(
    addr: SocketAddr,
    tls: Option<&Arc<rustls::ClientConfig>>,
    version: i16,
) -> DescribeClusterResponse {
    let req = DescribeClusterRequest::default();
    match ask(
        addr,
        tls,
        ApiKey::DescribeCluster,
        version,
        RequestKind::DescribeCluster(req),
    ) {
        ResponseKind::DescribeCluster(r) => r,
        other => panic!("{other:?}"),
    }
}

/// FindCoordinator of the group at `version`: (error code, node id, "HOST:PORT").
fn find_coordinator(
    addr: SocketAddr,
    tls: Option<&Arc<rustls::ClientConfig>>,
    version: i16,
) -> (i16, i32, String) {
    let req = if version >= 4 {
        FindCoordinatorRequest::default().with_coordinator_keys(vec![s(GROUP)])
    } else {
        FindCoordinatorRequest::default().with_key(s(GROUP))
    };
    match ask(
        addr,
        tls,
        ApiKey::FindCoordinator,
        version,
        RequestKind::FindCoordinator(req),
    ) {
        ResponseKind::FindCoordinator(r) if version >= 4 => {
            assert_eq!(r.coordinators.len(), 1, "{r:?}");
            let c = &r.coordinators[0];
            (c.error_code, c.node_id.0, format!("{}:{}", c.host, c.port))
        }
        ResponseKind::FindCoordinator(r) => {
            (r.error_code, r.node_id.0, format!("{}:{}", r.host, r.port))
        }
        other => panic!("{other:?}"),
    }
}

fn tls_client(ca: &Path) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// `cohort cluster ARGS --cluster-secret-file SECRET`: (exit code, stdout, stderr).
fn cohort_cluster(secret: &Path, args: &[&str]) -> (i32, String, String) {
    let out = common::run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg("cluster")
            .args(args)
            .arg("--cluster-secret-file")
            .arg(secret),
        Duration::from_secs(90),
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The cluster: node 3 first, alone, then nodes 1 and 2 added as voters.
struct Cluster {
    /// Nodes 1, 2, 3 in that order.
    nodes: Vec<Cohort>,
    raft: Vec<String>,
    secret: PathBuf,
    tls: Arc<rustls::ClientConfig>,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let certs = Certs::make(dir);
        let secret =
            common::cluster_secret(dir, "listener test: the nodes' shared cluster secret\n");
        let raft: Vec<String> = (0..3)
            .map(|_| format!("127.0.0.1:{}", free_port()))
            .collect();
        let bare_kafka = format!("127.0.0.1:{}", free_port());
        let peers = format!("{BARE}@{}@{bare_kafka}", raft[2]);
        let start = |id: &str, raft: &str, extra: &[&str]| {
            let secret = secret.to_str().unwrap();
            let mut args = vec![
                "--node-id",
                id,
                "--raft",
                raft,
                "--cluster-secret-file",
                secret,
            ];
            args.extend(["--inter-broker-listener-name", "PLAINTEXT"]);
            args.extend(extra);
            Cohort::start(&dir.join(format!("node-{id}")), &args)
        };
        // A one-entry `--peers` rather than none: without it the node is the embedded single
        // node, whose start-up differs from a cluster member's.
        let listeners = format!("PLAINTEXT://{bare_kafka}");
        let bare = start(
            "3",
            &raft[2],
            &["--listeners", &listeners, "--peers", &peers],
        );
        let secured = "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0";
        let ssl = [
            "--listeners",
            secured,
            "--ssl-cert",
            certs.server_cert.to_str().unwrap(),
            "--ssl-key",
            certs.server_key.to_str().unwrap(),
            "--join",
        ];
        let mut nodes = Vec::new();
        for (i, node_raft) in raft.iter().take(2).enumerate() {
            let id = (i + 1).to_string();
            let node = start(&id, node_raft, &ssl);
            let kafka = node.listener("PLAINTEXT").to_string();
            let (code, out, err) = cohort_cluster(
                &secret,
                &[
                    "add-voter",
                    "--bootstrap",
                    &raft[2],
                    "--node-id",
                    &id,
                    "--node-raft",
                    node_raft,
                    "--node-kafka",
                    &kafka,
                ],
            );
            assert_eq!(code, 0, "add-voter {id}: {out}{err}\n{}", node.log());
            nodes.push(node);
        }
        nodes.push(bare);
        Cluster {
            nodes,
            raft,
            secret,
            tls: tls_client(&certs.ca),
        }
    }

    fn node(&self, id: i32) -> &Cohort {
        &self.nodes[usize::try_from(id - 1).unwrap()]
    }

    fn plain(&self, id: i32) -> SocketAddr {
        self.node(id).listener("PLAINTEXT")
    }

    fn ssl(&self, id: i32) -> SocketAddr {
        self.node(id).listener("SSL")
    }

    /// Waits until the leader's membership records every node's listeners: nodes 1 and 2
    /// both, node 3 its PLAINTEXT one only. (Until node 3 publishes, its record names one
    /// address, which every listener would be told.)
    fn wait_listeners_recorded(&self) {
        let expected: Vec<(u64, serde_json::Value)> = (1..=3)
            .map(|id| {
                let mut l = vec![serde_json::json!({
                    "name": "PLAINTEXT", "addr": self.plain(id).to_string()
                })];
                if id != BARE {
                    l.push(serde_json::json!({"name": "SSL", "addr": self.ssl(id).to_string()}));
                }
                (id as u64, serde_json::Value::Array(l))
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (_, out, err) = cohort_cluster(
                &self.secret,
                &["status", "--json", "--bootstrap", &self.raft[2]],
            );
            let mut recorded: Vec<(u64, serde_json::Value)> = serde_json::from_str(out.trim())
                .ok()
                .and_then(|r: serde_json::Value| r["view"]["voters"].as_array().cloned())
                .into_iter()
                .flatten()
                .filter_map(|v| Some((v[0].as_u64()?, v[1]["listeners"].clone())))
                .collect();
            recorded.sort_by_key(|(id, _)| *id);
            if recorded == expected {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "membership records {recorded:?}, want {expected:?}\n{out}{err}"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// Waits until node 1 answers on both listeners from that membership and knows the topic,
    /// with node 3 leading.
    fn wait_node1_sees_it(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let on_ssl = metadata(self.ssl(1), Some(&self.tls), 12);
            let on_plain = metadata(self.plain(1), None, 12);
            let ids = |m: &MetadataResponse| -> Vec<i32> {
                m.brokers.iter().map(|b| b.node_id.0).collect()
            };
            let has_topic =
                |m: &MetadataResponse| m.topics.first().is_some_and(|t| t.partitions.len() == 3);
            if ids(&on_ssl) == [1, 2]
                && ids(&on_plain) == [1, 2, 3]
                && on_plain.controller_id.0 == BARE
                && has_topic(&on_ssl)
                && has_topic(&on_plain)
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "node 1: SSL {on_ssl:?}\nPLAINTEXT {on_plain:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn broker_addrs(m: &MetadataResponse) -> Vec<(i32, String)> {
    m.brokers
        .iter()
        .map(|b| (b.node_id.0, format!("{}:{}", b.host, b.port)))
        .collect()
}

fn described_addrs(brokers: &[DescribeClusterBroker]) -> Vec<(i32, String)> {
    let mut out: Vec<(i32, String)> = brokers
        .iter()
        .map(|b| (b.broker_id.0, format!("{}:{}", b.host, b.port)))
        .collect();
    out.sort();
    out
}

/// (error code, leader, replicas, ISR, offline replicas) of a partition.
type Placed = (i16, i32, Vec<i32>, Vec<i32>, Vec<i32>);

fn placed(p: &MetadataResponsePartition) -> Placed {
    let ids = |v: &[BrokerId]| v.iter().map(|b| b.0).collect::<Vec<i32>>();
    (
        p.error_code,
        p.leader_id.0,
        ids(&p.replica_nodes),
        ids(&p.isr_nodes),
        ids(&p.offline_replicas),
    )
}

#[test]
fn a_broker_without_the_clients_listener_is_left_out_and_its_partition_and_groups_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let c = Cluster::start(dir.path());
    c.wait_listeners_recorded();
    // Round-robin over the voters 1, 2, 3: partition 2 is node 3's.
    assert_eq!(create_topic(c.plain(BARE), TOPIC, 3), Ok(0));
    c.wait_node1_sees_it();

    // PLAINTEXT: every broker at its PLAINTEXT address, every partition led.
    let everyone: Vec<(i32, String)> = (1..=3).map(|id| (id, c.plain(id).to_string())).collect();
    for v in [0, 1, 5, 6, 12, 13] {
        let m = metadata(c.plain(1), None, v);
        assert_eq!(broker_addrs(&m), everyone, "PLAINTEXT Metadata v{v}");
        if v >= 1 {
            assert_eq!(m.controller_id.0, BARE, "PLAINTEXT Metadata v{v}");
        }
        let parts: Vec<Placed> = m.topics[0].partitions.iter().map(placed).collect();
        let led: Vec<Placed> = (1..=3).map(|n| (0, n, vec![n], vec![n], vec![])).collect();
        assert_eq!(parts, led, "PLAINTEXT Metadata v{v}");
    }
    for v in 0..=2 {
        let d = describe_cluster(c.plain(1), None, v);
        assert_eq!(d.error_code, 0, "PLAINTEXT DescribeCluster v{v}");
        assert_eq!(described_addrs(&d.brokers), everyone, "v{v}");
        assert_eq!(d.controller_id.0, BARE, "PLAINTEXT DescribeCluster v{v}");
    }
    for v in 0..=6 {
        assert_eq!(
            find_coordinator(c.plain(1), None, v),
            (0, BARE, c.plain(BARE).to_string()),
            "PLAINTEXT FindCoordinator v{v}"
        );
    }

    // SSL: node 3 is left out; its partition has no leader this client can reach.
    let reachable: Vec<(i32, String)> = (1..=2).map(|id| (id, c.ssl(id).to_string())).collect();
    for v in 0..=13 {
        let m = metadata(c.ssl(1), Some(&c.tls), v);
        assert_eq!(broker_addrs(&m), reachable, "SSL Metadata v{v}");
        if v >= 1 {
            // As Kafka's Metadata, the controller id is not filtered by listener.
            assert_eq!(m.controller_id.0, BARE, "SSL Metadata v{v}");
        }
        assert_eq!(m.topics[0].error_code, 0, "SSL Metadata v{v}");
        let parts: Vec<Placed> = m.topics[0].partitions.iter().map(placed).collect();
        // Kafka (`KRaftMetadataCache.getPartitionMetadata`): LISTENER_NOT_FOUND from v6,
        // LEADER_NOT_AVAILABLE before; no leader; replicas and ISR as they are (v0 lists only
        // brokers on the listener); the replica lacking the listener is offline (a v5 field).
        let code = if v >= 6 {
            LISTENER_NOT_FOUND
        } else {
            LEADER_NOT_AVAILABLE
        };
        let (replicas, isr) = if v == 0 {
            (vec![], vec![])
        } else {
            (vec![BARE], vec![BARE])
        };
        let offline = if v >= 5 { vec![BARE] } else { vec![] };
        let expected: Vec<Placed> = vec![
            (0, 1, vec![1], vec![1], vec![]),
            (0, 2, vec![2], vec![2], vec![]),
            (code, -1, replicas, isr, offline),
        ];
        assert_eq!(parts, expected, "SSL Metadata v{v}");
    }
    for v in 0..=2 {
        let d = describe_cluster(c.ssl(1), Some(&c.tls), v);
        assert_eq!(d.error_code, 0, "SSL DescribeCluster v{v}");
        assert_eq!(
            described_addrs(&d.brokers),
            reachable,
            "SSL DescribeCluster v{v}"
        );
        // Kafka answers -1 for a controller that is not among the listed brokers.
        assert_eq!(d.controller_id.0, -1, "SSL DescribeCluster v{v}");
    }
    for v in 0..=6 {
        assert_eq!(
            find_coordinator(c.ssl(1), Some(&c.tls), v),
            (COORDINATOR_NOT_AVAILABLE, -1, ":-1".to_owned()),
            "SSL FindCoordinator v{v}"
        );
    }

    // Node 3 still led throughout: the answers above were about it, not about an election.
    assert_eq!(metadata(c.plain(1), None, 12).controller_id.0, BARE);
}
