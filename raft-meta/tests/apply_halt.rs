//! A committed entry a node cannot decode stops that node's apply loop: nothing of the entry
//! or after it is applied, the node names the index and the reason, leads nothing and refuses
//! writes, and does the same again after a restart. Replicas that can read the entry go on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::{listeners, peer_auth, run_alone, tuning, wait_for};
use raft_meta::app::{Application, Record, RestoreError, Undecodable};
use raft_meta::cohort_app::{AppReply, Body, CohortApp, Envelope, TopicLimits};
use raft_meta::format::tags;
use raft_meta::{
    ApplyHalted, Bootstrap, CommandBatch, LogIndex, MetaNode, NodeConfig, RaftStore, Tuning,
    WriteError,
};
use tokio::net::TcpListener;

fn app() -> CohortApp {
    CohortApp::new(coordinator::Config::default(), TopicLimits::default(), None)
}

fn allocate(count: u32) -> Bytes {
    Envelope {
        origin: None,
        body: Body::AllocateProducerIds { count },
    }
    .encode()
}

/// `command` as a newer binary would write it: same kind, next version.
fn newer_version(command: &Bytes) -> Bytes {
    let mut b = command.to_vec();
    b[3..5].copy_from_slice(&2u16.to_be_bytes());
    Bytes::from(b)
}

fn config(
    id: u64,
    dir: &Path,
    listener: &TcpListener,
    bootstrap: Bootstrap,
    t: Tuning,
) -> NodeConfig {
    NodeConfig {
        node_id: id,
        listen_addr: listener.local_addr().unwrap().to_string(),
        advertised_raft_addr: None,
        kafka_addr: format!("127.0.0.1:{}", 9000 + id),
        raft_dir: dir.join(format!("node-{id}")),
        store: RaftStore::Segments,
        bootstrap,
        tuning: t,
        peer_auth: peer_auth(),
    }
}

async fn next_producer_id<A: Application>(node: &MetaNode<A>, get: impl Fn(&A) -> i64) -> i64 {
    node.read_local(|applied| get(&applied.app))
}

/// `write_via_leader`, following an election that is still going on: NOT_LEADER means nothing
/// was written (openraft refuses before appending), so the write is tried again, as a client
/// does, for up to 10 s.
async fn write_following_elections<A: Application>(node: &MetaNode<A>, command: Bytes) -> Bytes {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match node.write_via_leader(command.clone()).await {
            Ok(reply) => return reply,
            Err(WriteError::NotLeader { .. }) if std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("write failed: {e}"),
        }
    }
}

async fn wait_halted<A: Application>(node: &MetaNode<A>) -> ApplyHalted {
    wait_for("the apply loop to halt", Duration::from_secs(10), || {
        node.apply_halted().is_some()
    })
    .await;
    node.apply_halted().unwrap()
}

async fn one_voter_halts_on_a_newer_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let node = MetaNode::start_on(
        config(1, tmp.path(), &listener, Bootstrap::Single, tuning()),
        listener,
        app(),
    )
    .await
    .unwrap();
    wait_for("the node to lead", Duration::from_secs(5), || {
        node.is_leader()
    })
    .await;
    let reply = AppReply::decode(&node.write(allocate(10)).await.unwrap()).unwrap();
    assert_eq!(reply, AppReply::ProducerIds { first: 0 });
    let producer_ids = |a: &CohortApp| a.cluster().next_producer_id;
    assert_eq!(next_producer_id(&node, producer_ids).await, 10);

    // The leader refuses to replicate what it could not apply itself.
    let newer = newer_version(&allocate(5));
    match node.write(newer.clone()).await {
        Err(WriteError::Refused(reason)) => assert!(reason.contains("newer"), "{reason}"),
        other => panic!("a newer command was not refused: {other:?}"),
    }
    // A newer leader would have replicated it, between two commands this binary reads.
    let before = node.status().applied_index.unwrap();
    let written = tokio::time::timeout(
        Duration::from_secs(5),
        node.raft()
            .client_write(CommandBatch(vec![allocate(100), newer, allocate(1000)])),
    )
    .await
    .expect("client_write neither answered nor failed");
    assert!(written.is_err(), "the halted node answered the write");

    let halted = wait_halted(&node).await;
    assert_eq!(halted.index, before + 1, "{halted}");
    assert!(
        halted.reason.contains("command 2 of 3")
            && halted
                .reason
                .contains("AllocateProducerIds command version 2 is newer"),
        "{halted}"
    );
    // Nothing of that entry was applied, not even the command before the bad one.
    assert_eq!(node.status().applied_index, Some(before));
    assert_eq!(next_producer_id(&node, producer_ids).await, 10);
    // It leads nothing, knows no leader, refuses writes and says why.
    wait_for("the leader to be forgotten", Duration::from_secs(5), || {
        node.leader().is_none()
    })
    .await;
    assert!(!node.is_leader());
    assert_eq!(node.status().halted, Some(halted.clone()));
    assert!(node.status().to_string().contains("HALTED"));
    assert!(node
        .fatal()
        .unwrap()
        .contains(&format!("log index {}", halted.index)));
    assert!(node.write(allocate(1)).await.is_err());
    node.shutdown().await;

    // A restart replays the log to the same entry and halts there again: never skipped.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let node = MetaNode::start_on(
        config(1, tmp.path(), &listener, Bootstrap::Single, tuning()),
        listener,
        app(),
    )
    .await
    .unwrap();
    let again = wait_halted(&node).await;
    assert_eq!(again.index, halted.index);
    assert_eq!(node.status().applied_index, Some(before));
    assert_eq!(next_producer_id(&node, producer_ids).await, 10);
    assert!(!node.is_leader());
    node.shutdown().await;
}

#[test]
fn a_one_voter_node_halts_at_an_entry_it_cannot_decode_and_again_after_restart() {
    run_alone(one_voter_halts_on_a_newer_entry());
}

/// The Cohort application as a binary that predates AllocateProducerIds would run it: it
/// does not know that command's tag.
struct OlderBinary(CohortApp);

impl Application for OlderBinary {
    type Command = Envelope;

    fn admit(command: &[u8]) -> Result<(), Undecodable> {
        Self::decode(command).map(drop)
    }

    fn decode(command: &[u8]) -> Result<Envelope, Undecodable> {
        if command.get(1..3) == Some(&tags::ALLOCATE_PRODUCER_IDS.0.to_be_bytes()[..]) {
            return Err(Undecodable(format!(
                "unknown type tag {:#06x} where a command was expected",
                tags::ALLOCATE_PRODUCER_IDS.0
            )));
        }
        CohortApp::decode(command)
    }

    fn apply(&mut self, index: LogIndex, command: Envelope) -> Bytes {
        self.0.apply(index, command)
    }

    fn snapshot_records(&self) -> Vec<Record> {
        self.0.snapshot_records()
    }

    fn restore(&mut self, records: Vec<Record>) -> Result<(), RestoreError> {
        self.0.restore(records)
    }
}

fn init_cluster(id: &str) -> Bytes {
    Envelope {
        origin: None,
        body: Body::InitCluster {
            cluster_id: id.to_owned(),
        },
    }
    .encode()
}

async fn older_replica_halts_and_the_others_go_on() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut ls, peers) = listeners(3).await;
    let t = tuning();
    let l3 = ls.pop().unwrap();
    let l2 = ls.pop().unwrap();
    let l1 = ls.pop().unwrap();
    let cluster = || Bootstrap::Cluster(peers.clone());
    // Nodes 1 and 2 run the current binary and elect a leader among them first, so the
    // leader is never the older node.
    let n1 = Arc::new(
        MetaNode::start_on(config(1, tmp.path(), &l1, cluster(), t.clone()), l1, app())
            .await
            .unwrap(),
    );
    let n2 = Arc::new(
        MetaNode::start_on(config(2, tmp.path(), &l2, cluster(), t.clone()), l2, app())
            .await
            .unwrap(),
    );
    wait_for(
        "a leader among nodes 1 and 2",
        Duration::from_secs(15),
        || n1.is_leader() || n2.is_leader(),
    )
    .await;
    let n3 = MetaNode::start_on(
        config(3, tmp.path(), &l3, cluster(), t.clone()),
        l3,
        OlderBinary(app()),
    )
    .await
    .unwrap();
    // Writes go through node 1 to whichever current node leads: on a loaded machine the two
    // may trade leadership (node 3's start can cost a term), which is Raft doing its job; what
    // counts here is that the older node never leads and never diverges.
    let applied = || {
        [&n1, &n2]
            .iter()
            .filter_map(|n| n.status().applied_index)
            .max()
            .unwrap()
    };
    write_following_elections(&n1, init_cluster("c-1")).await;
    let agreed = applied();
    wait_for("node 3 to catch up", Duration::from_secs(10), || {
        n3.status().applied_index >= Some(agreed)
    })
    .await;

    // A command the older node does not know, then more commands.
    let reply = AppReply::decode(&write_following_elections(&n1, allocate(50)).await).unwrap();
    assert_eq!(reply, AppReply::ProducerIds { first: 0 });
    let halted = wait_halted(&n3).await;
    assert!(
        halted.reason.contains("unknown type tag 0x020d"),
        "{halted}"
    );
    for _ in 0..5 {
        write_following_elections(&n1, allocate(1)).await;
    }
    let last = applied();
    wait_for(
        "both current nodes to apply everything",
        Duration::from_secs(10),
        || n1.status().applied_index >= Some(last) && n2.status().applied_index >= Some(last),
    )
    .await;

    // The current replicas agree and moved on; the older one stopped before the entry it
    // cannot read, with the state of everything before it: behind, never divergent.
    let state = |n: &MetaNode<CohortApp>| n.read_local(|a| a.app.cluster().clone());
    assert_eq!(state(&n1), state(&n2));
    assert_eq!(state(&n1).next_producer_id, 55);
    let coordinator2 = n2.read_local(|b| b.app.coordinator().clone());
    assert!(n1.read_local(|a| *a.app.coordinator() == coordinator2));
    let older = n3.read_local(|a| a.app.0.cluster().clone());
    assert_eq!(older.cluster_id.as_deref(), Some("c-1"));
    assert_eq!(older.next_producer_id, 0);
    assert_eq!(n3.status().applied_index, Some(halted.index - 1));
    assert!(n3.status().applied_index < n1.status().applied_index);
    assert!(n3.leader().is_none() && !n3.is_leader());
    wait_for("a current node to lead", Duration::from_secs(10), || {
        n1.is_leader() || n2.is_leader()
    })
    .await;

    n3.shutdown().await;
    for n in [n1, n2] {
        if let Ok(n) = Arc::try_unwrap(n) {
            n.shutdown().await;
        }
    }
}

#[test]
fn an_older_replica_halts_at_an_entry_it_cannot_read_while_the_others_go_on() {
    run_alone(older_replica_halts_and_the_others_go_on());
}
