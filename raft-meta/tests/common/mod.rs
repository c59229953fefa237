//! Helpers shared by the in-process cluster tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

#[path = "../../testkit/kv.rs"]
pub mod kv;

use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kv::{KvApp, KvCommand, KvReply};
use raft_meta::network::{ClusterSecret, PeerAuth};
use raft_meta::{Bootstrap, MetaNode, NodeConfig, PeerSpec, RaftStore, Tuning, WriteError};
use tokio::net::TcpListener;

static CLUSTER_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Cluster tests take turns: on a 2-core machine, two dozen nodes with 50 ms heartbeats starve
/// each other into elections that have nothing to do with what a test checks.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    CLUSTER_TESTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs one cluster test on its own 2-thread runtime, after the previous one finished.
pub fn run_alone<F: std::future::Future>(test: F) -> F::Output {
    let _turn = one_at_a_time();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(test)
}

/// Logs to the test output when RUST_LOG is set.
pub fn init_tracing() {
    if std::env::var("RUST_LOG").is_ok() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
    }
}

pub fn tuning() -> Tuning {
    init_tracing();
    Tuning {
        // Generous against a loaded 2-core machine (other builds, the whole test suite): an
        // election these tests did not cause would fail the ones that count terms.
        heartbeat_ms: 100,
        election_timeout_min_ms: 600,
        election_timeout_max_ms: 1200,
        request_timeout: Duration::from_secs(3),
        ..Tuning::default()
    }
}

/// The cluster secret the test nodes share: every harness node proves it on its peer port, so
/// the authenticated path is the one every cluster test runs.
pub const TEST_CLUSTER_SECRET: &str = "raft-meta tests: the cluster secret every node shares";

/// How harness nodes (and the admin calls of tests) authenticate.
pub fn peer_auth() -> PeerAuth {
    PeerAuth::Secret(ClusterSecret::from_bytes(TEST_CLUSTER_SECRET.as_bytes()).unwrap())
}

pub async fn start(
    id: u64,
    dir: &Path,
    listener: TcpListener,
    store: RaftStore,
    bootstrap: Bootstrap,
    tuning: Tuning,
) -> MetaNode<KvApp> {
    let config = NodeConfig {
        node_id: id,
        listen_addr: listener.local_addr().unwrap().to_string(),
        advertised_raft_addr: None,
        kafka_addr: format!("127.0.0.1:{}", 9000 + id),
        raft_dir: dir.join(format!("node-{id}")),
        store,
        bootstrap,
        tuning,
        peer_auth: peer_auth(),
    };
    MetaNode::start_on(config, listener, KvApp::new())
        .await
        .unwrap()
}

/// Binds `n` listeners on 127.0.0.1:0 and returns them with the peer list naming them.
pub async fn listeners(n: u64) -> (Vec<TcpListener>, Vec<PeerSpec>) {
    let mut ls = Vec::new();
    let mut peers = Vec::new();
    for id in 1..=n {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        peers.push(PeerSpec {
            node_id: id,
            raft_addr: l.local_addr().unwrap().to_string(),
            kafka_addr: format!("127.0.0.1:{}", 9000 + id),
        });
        ls.push(l);
    }
    (ls, peers)
}

pub async fn wait_for<F: FnMut() -> bool>(what: &str, timeout: Duration, mut f: F) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn put(key: &str, value: &str) -> Bytes {
    KvCommand::Put {
        key: Bytes::from(key.to_owned()),
        value: Bytes::from(value.to_owned()),
    }
    .encode()
}

pub async fn write_put(
    node: &MetaNode<KvApp>,
    key: &str,
    value: &str,
) -> Result<KvReply, WriteError> {
    let reply = node.write(put(key, value)).await?;
    Ok(KvReply::decode(&reply).unwrap())
}

pub async fn get(node: &MetaNode<KvApp>, key: &str) -> Option<Bytes> {
    node.read(|app| app.get(key.as_bytes())).await.unwrap()
}
