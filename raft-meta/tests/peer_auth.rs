//! The authenticated peer port seen by strangers: three in-process nodes sharing the cluster
//! secret, and raw TCP connections that try to vote with a higher term, append entries, add a
//! voter or forward a write, without the secret, with a wrong one, or authenticated but
//! unsealed. Each is closed before it gets an answer; the cluster keeps its leader, its term and
//! its membership. A node started with another secret cannot join.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::kv::KvApp;
use common::*;
use openraft::raft::{AppendEntriesRequest, VoteRequest};
use openraft::{CommittedLeaderId, LogId, Vote};
use raft_meta::network::frame::write_frame;
use raft_meta::network::rpc::{AdminRequest, RpcRequest};
use raft_meta::network::{admin, ClusterSecret, PeerAuth};
use raft_meta::{Bootstrap, MetaNode, NodeConfig, NodeInfo, RaftStore};
use ring::hmac;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One node's view: (leader, term, voters, learners).
type View = (Option<u64>, u64, Vec<u64>, Vec<u64>);

/// What the leader and the membership look like, from every node.
fn views(nodes: &[MetaNode<KvApp>]) -> Vec<View> {
    nodes
        .iter()
        .map(|n| {
            let s = n.status();
            (
                s.leader.map(|l| l.node_id),
                s.term,
                s.voters.iter().map(|(id, _)| *id).collect(),
                s.learners.iter().map(|(id, _)| *id).collect(),
            )
        })
        .collect()
}

/// What a stranger would send: a vote for node 2 in a much higher term with a log far ahead of
/// the cluster's (granted if it were ever processed), entries from a made-up leader of that
/// term, a new voter, a forwarded command.
fn hostile_requests(term: u64) -> Vec<(&'static str, RpcRequest)> {
    let ahead = Some(LogId::new(CommittedLeaderId::new(term + 5, 2), 1_000_000));
    vec![
        (
            "vote",
            RpcRequest::Vote(VoteRequest::new(Vote::new(term + 5, 2), ahead)),
        ),
        (
            "append",
            RpcRequest::AppendEntries(AppendEntriesRequest {
                vote: Vote::new_committed(term + 5, 2),
                prev_log_id: None,
                entries: Vec::new(),
                leader_commit: ahead,
            }),
        ),
        (
            "add voter",
            RpcRequest::Admin(AdminRequest::AddVoter {
                node_id: 99,
                info: NodeInfo {
                    raft_addr: "127.0.0.1:9".into(),
                    kafka_addr: "127.0.0.1:9".into(),
                    listeners: Vec::new(),
                },
            }),
        ),
        (
            "remove voter",
            RpcRequest::Admin(AdminRequest::RemoveVoter { node_id: 3 }),
        ),
        ("forward", RpcRequest::Forward(put("stolen", "write"))),
    ]
}

/// The connection is closed without a byte of answer.
async fn assert_closed(mut c: TcpStream, what: &str) {
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(10), c.read(&mut buf))
        .await
        .unwrap_or_else(|_| panic!("{what}: the node neither answered nor closed"));
    match read {
        Ok(0) | Err(_) => {}
        Ok(n) => panic!("{what}: the node answered {n} bytes instead of closing"),
    }
}

// The handshake as the wire carries it (raft-meta/src/network/handshake.rs): written out here
// so that the test speaks it as a stranger would, not through the library's client.
const HELLO_LEN: u32 = 42;
const CHALLENGE_LEN: usize = 73;
const ANY_NODE: u64 = u64::MAX;

/// Sends a hello, reads the challenge; returns (client nonce, server nonce, server id).
async fn hello(c: &mut TcpStream) -> ([u8; 32], [u8; 32], u64) {
    let client_nonce = [7u8; 32];
    let mut msg = HELLO_LEN.to_be_bytes().to_vec();
    msg.extend_from_slice(&[0x10, 1]);
    msg.extend_from_slice(&client_nonce);
    msg.extend_from_slice(&ANY_NODE.to_be_bytes());
    c.write_all(&msg).await.unwrap();
    let mut challenge = [0u8; 4 + CHALLENGE_LEN];
    tokio::time::timeout(Duration::from_secs(5), c.read_exact(&mut challenge))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&challenge[..5], &[0, 0, 0, CHALLENGE_LEN as u8, 0x11]);
    let mut server_nonce = [0u8; 32];
    server_nonce.copy_from_slice(&challenge[5..37]);
    let server = u64::from_be_bytes(challenge[37..45].try_into().unwrap());
    (client_nonce, server_nonce, server)
}

/// The client's proof of `secret` for this handshake.
fn proof(secret: &[u8], client_nonce: &[u8], server_nonce: &[u8], server: u64) -> Vec<u8> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    let mut ctx = hmac::Context::with_key(&key);
    ctx.update(b"cohort peer v1 client proof");
    ctx.update(client_nonce);
    ctx.update(server_nonce);
    ctx.update(&ANY_NODE.to_be_bytes());
    ctx.update(&server.to_be_bytes());
    let mut msg = 33u32.to_be_bytes().to_vec();
    msg.push(0x12);
    msg.extend_from_slice(ctx.sign().as_ref());
    msg
}

const WRONG_SECRET: &[u8] = b"a secret of the same length, but not the one";

async fn strangers_knock() {
    let tmp = tempfile::tempdir().unwrap();
    let (ls, peers) = listeners(3).await;
    let mut nodes = Vec::new();
    for (i, l) in ls.into_iter().enumerate() {
        let bootstrap = Bootstrap::Cluster(peers.clone());
        nodes.push(
            start(
                i as u64 + 1,
                tmp.path(),
                l,
                RaftStore::Segments,
                bootstrap,
                tuning(),
            )
            .await,
        );
    }
    wait_for("a leader all agree on", Duration::from_secs(20), || {
        let v = views(&nodes);
        v[0].0.is_some() && v.iter().all(|x| x.0 == v[0].0 && x.1 == v[0].1)
    })
    .await;
    let leader = nodes.iter().position(|n| n.is_leader()).unwrap();
    write_put(&nodes[leader], "before", "strangers")
        .await
        .unwrap();
    let before = views(&nodes);
    let term = before[0].1;

    for node in &nodes {
        let addr = node.raft_addr();
        for (what, request) in hostile_requests(term) {
            // No secret: the request itself, as a node without --cluster-secret-file sends it.
            let mut c = TcpStream::connect(addr).await.unwrap();
            write_frame(&mut c, &request).await.unwrap();
            assert_closed(c, &format!("{what} without the secret")).await;

            // A wrong secret: the node answers the hello (its challenge proves nothing a
            // stranger can use), refuses the proof.
            let mut c = TcpStream::connect(addr).await.unwrap();
            let (cn, sn, server) = hello(&mut c).await;
            assert_eq!(server, node.status().node_id);
            c.write_all(&proof(WRONG_SECRET, &cn, &sn, server))
                .await
                .unwrap();
            let _ = write_frame(&mut c, &request).await;
            assert_closed(c, &format!("{what} with a wrong secret")).await;

            // The right secret, then the request in the clear (unsealed) instead of sealed:
            // a stranger who replays a recorded handshake cannot have the session keys either.
            let mut c = TcpStream::connect(addr).await.unwrap();
            let (cn, sn, server) = hello(&mut c).await;
            let secret = TEST_CLUSTER_SECRET.as_bytes();
            c.write_all(&proof(secret, &cn, &sn, server)).await.unwrap();
            write_frame(&mut c, &request).await.unwrap();
            assert_closed(c, &format!("{what} authenticated but unsealed")).await;

            // A hello, then the request instead of a proof.
            let mut c = TcpStream::connect(addr).await.unwrap();
            let _ = hello(&mut c).await;
            write_frame(&mut c, &request).await.unwrap();
            assert_closed(c, &format!("{what} instead of a proof")).await;
        }
    }

    // The library's own client with a wrong secret fails on the node's proof and says so.
    let wrong = PeerAuth::Secret(ClusterSecret::from_bytes(WRONG_SECRET).unwrap());
    let leader_addr = nodes[leader].raft_addr().to_string();
    let refused = admin::remove_voter(&leader_addr, &wrong, 3, Duration::from_secs(3)).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("different --cluster-secret-file")),
        "{refused:?}"
    );
    let refused = admin::status(&leader_addr, &PeerAuth::Open, Duration::from_secs(3)).await;
    assert!(
        matches!(refused, Err(admin::AdminError::SecretNeeded { .. })),
        "{refused:?}"
    );

    // Nothing moved: same leader, same term, same voters, no learner; the log still takes
    // writes and holds no stolen one.
    assert_eq!(views(&nodes), before, "a stranger moved the cluster");
    write_put(&nodes[leader], "after", "strangers")
        .await
        .unwrap();
    assert_eq!(get(&nodes[leader], "stolen").await, None);
    assert_eq!(views(&nodes), before);

    // A fourth node started with another secret: the leader adds it as a learner, but cannot
    // replicate to it (the handshake fails), so it never catches up: it is removed again,
    // never promoted, and learns nothing.
    let l4 = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr4 = l4.local_addr().unwrap().to_string();
    let config = NodeConfig {
        node_id: 4,
        listen_addr: addr4.clone(),
        advertised_raft_addr: None,
        kafka_addr: "127.0.0.1:9004".into(),
        raft_dir: tmp.path().join("node-4"),
        store: RaftStore::Segments,
        bootstrap: Bootstrap::Join,
        tuning: tuning(),
        peer_auth: wrong.clone(),
    };
    let fourth = MetaNode::start_on(config, l4, KvApp::new()).await.unwrap();
    let info = NodeInfo {
        raft_addr: addr4,
        kafka_addr: "127.0.0.1:9004".into(),
        listeners: Vec::new(),
    };
    let joined =
        admin::add_voter(&leader_addr, &peer_auth(), 4, info, Duration::from_secs(30)).await;
    assert!(
        matches!(&joined, Err(admin::AdminError::Refused(why)) if why.contains("did not catch up")),
        "a node with another secret joined: {joined:?}"
    );
    let s4 = fourth.status();
    assert_eq!(
        (s4.leader, s4.applied_index, s4.voters.len()),
        (None, None, 0),
        "the node with another secret learned something"
    );
    wait_for(
        "every node back to the membership before",
        Duration::from_secs(10),
        || views(&nodes) == before,
    )
    .await;
    fourth.shutdown().await;
    for node in nodes {
        node.shutdown().await;
    }
}

#[test]
fn strangers_and_other_secrets_can_neither_vote_append_nor_change_membership() {
    run_alone(strangers_knock());
}
