//! The peer port as an outsider sees it: admin requests answer, garbage closes only the
//! connection that sent it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::*;
use raft_meta::network::admin;
use raft_meta::{Bootstrap, RaftStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn admin_status_and_garbage() {
    let tmp = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let node = start(
        7,
        tmp.path(),
        listener,
        RaftStore::Segments,
        Bootstrap::Single,
        tuning(),
    )
    .await;
    wait_for("leader", Duration::from_secs(10), || node.is_leader()).await;
    let addr = node.raft_addr().to_string();

    let status = admin::status(&addr, &peer_auth(), Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(status.node_id, 7);
    assert_eq!(status.role, "leader");
    assert_eq!(
        status.leader.as_ref().unwrap().info.kafka_addr,
        "127.0.0.1:9007"
    );
    assert_eq!(status.voters.len(), 1);
    assert!(status.to_string().contains("leader    7"), "{status}");

    // Removing a node that is not a voter is refused with a reason, over the wire.
    let refused = admin::remove_voter(&addr, &peer_auth(), 99, Duration::from_secs(2)).await;
    assert!(
        matches!(refused, Err(admin::AdminError::Refused(_))),
        "{refused:?}"
    );

    // Garbage: an absurd length, then bytes that are not a frame. Each connection is closed;
    // the node keeps serving.
    for junk in [
        &u32::MAX.to_be_bytes()[..],
        &[0, 0, 0, 3, 1, 0xff, 0xff][..],
        b"GET / HTTP/1.1\r\n\r\n",
    ] {
        let mut c = TcpStream::connect(&addr).await.unwrap();
        c.write_all(junk).await.unwrap();
        let mut buf = [0u8; 16];
        let n = tokio::time::timeout(Duration::from_secs(5), c.read(&mut buf))
            .await
            .unwrap()
            .unwrap_or(0);
        assert_eq!(n, 0, "the node answered garbage instead of closing");
    }
    write_put(&node, "still", "alive").await.unwrap();
    assert_eq!(get(&node, "still").await.unwrap(), "alive");
    let status = admin::status(&addr, &peer_auth(), Duration::from_secs(2))
        .await
        .unwrap();
    assert!(status.applied_index.is_some());
    node.shutdown().await;
}

#[test]
fn admin_requests_answer_and_garbage_closes_only_its_connection() {
    run_alone(admin_status_and_garbage());
}
