//! One voter: the embedded default, same code path as a cluster.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::kv::KvReply;
use common::*;
use raft_meta::{Bootstrap, RaftStore};
use tokio::net::TcpListener;

async fn writes_reply_and_survive_restart(store: RaftStore) {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = tuning();
    t.snapshot_every_entries = 40;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let node = Arc::new(start(1, tmp.path(), listener, store, Bootstrap::Single, t.clone()).await);
    wait_for("single node to lead", Duration::from_secs(5), || {
        node.is_leader()
    })
    .await;
    assert_eq!(node.leader().unwrap().info.kafka_addr, "127.0.0.1:9001");

    // Concurrent writers: their commands share entries.
    let mut handles = Vec::new();
    for w in 0..8 {
        let node = node.clone();
        handles.push(tokio::spawn(async move {
            for i in 0..50 {
                let reply = write_put(&node, &format!("k-{w}-{i}"), &format!("v{i}"))
                    .await
                    .unwrap();
                assert_eq!(reply, KvReply::Done { previous: None });
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let status = node.status();
    let last_log = status.last_log_index.unwrap();
    assert!(
        last_log < 400,
        "400 writes from 8 writers took {last_log} entries: no batching"
    );
    assert_eq!(get(&node, "k-3-49").await.unwrap(), "v49");
    let overwrite = write_put(&node, "k-0-0", "again").await.unwrap();
    assert_eq!(
        overwrite,
        KvReply::Done {
            previous: Some("v0".into())
        }
    );

    node.trigger_snapshot().await.unwrap();
    wait_for("snapshot", Duration::from_secs(5), || {
        node.status().snapshot_index.is_some()
    })
    .await;
    for i in 0..20 {
        write_put(&node, &format!("tail-{i}"), "t").await.unwrap();
    }
    let before = node.read(|app| app.clone()).await.unwrap();
    Arc::try_unwrap(node).ok().unwrap().shutdown().await;

    let listener = TcpListener::bind(addr).await.unwrap();
    let node = start(1, tmp.path(), listener, store, Bootstrap::Single, t).await;
    wait_for("restarted node to lead", Duration::from_secs(5), || {
        node.is_leader()
    })
    .await;
    let after = node.read(|app| app.clone()).await.unwrap();
    assert_eq!(after.len(), 401 + 20 - 1);
    assert!(
        after.iter().eq(before.iter()),
        "state after restart differs"
    );
    node.shutdown().await;
}

#[test]
fn sled_single_node_writes_reply_and_survive_restart() {
    run_alone(writes_reply_and_survive_restart(RaftStore::Sled));
}

#[test]
fn segments_single_node_writes_reply_and_survive_restart() {
    run_alone(writes_reply_and_survive_restart(RaftStore::Segments));
}
