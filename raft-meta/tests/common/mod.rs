//! Helpers shared by the in-process cluster tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use raft_meta::kv::{KvApp, KvCommand, KvReply};
use raft_meta::{Bootstrap, MetaNode, NodeConfig, PeerSpec, RaftStore, Tuning, WriteError};
use tokio::net::TcpListener;

pub fn tuning() -> Tuning {
    Tuning {
        heartbeat_ms: 50,
        election_timeout_min_ms: 300,
        election_timeout_max_ms: 600,
        request_timeout: Duration::from_secs(2),
        ..Tuning::default()
    }
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
