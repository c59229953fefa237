//! Three in-process nodes over real TCP on loopback: replication, failover, snapshot catch-up,
//! isolation, and a stale leader that must never acknowledge.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use common::kv::KvApp;
use common::*;
use raft_meta::{Bootstrap, MetaNode, RaftStore, WriteError};
use tokio::net::TcpListener;

async fn three_nodes(
    store: RaftStore,
    tmp: &std::path::Path,
    snapshot_every: u64,
) -> (Vec<Option<MetaNode<KvApp>>>, Vec<raft_meta::PeerSpec>) {
    let (ls, peers) = listeners(3).await;
    let mut nodes = Vec::new();
    let mut t = tuning();
    t.snapshot_every_entries = snapshot_every;
    for (i, l) in ls.into_iter().enumerate() {
        nodes.push(Some(
            start(
                i as u64 + 1,
                tmp,
                l,
                store,
                Bootstrap::Cluster(peers.clone()),
                t.clone(),
            )
            .await,
        ));
    }
    (nodes, peers)
}

/// Retries on the current leader until the put is acknowledged (puts are idempotent).
async fn put_on_leader(nodes: &[Option<MetaNode<KvApp>>], key: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let leader = wait_leader(nodes, Duration::from_secs(10)).await;
        if write_put(nodes[leader].as_ref().unwrap(), key, "v")
            .await
            .is_ok()
        {
            return;
        }
        assert!(Instant::now() < deadline, "no leader acknowledged {key}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A linearizable read on whoever leads, retried across an election.
async fn read_on_leader<R>(nodes: &[Option<MetaNode<KvApp>>], f: impl Fn(&KvApp) -> R) -> R {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let leader = wait_leader(nodes, Duration::from_secs(10)).await;
        if let Ok(r) = nodes[leader].as_ref().unwrap().read(&f).await {
            return r;
        }
        assert!(Instant::now() < deadline, "no linearizable read");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn leader_index(nodes: &[Option<MetaNode<KvApp>>]) -> Option<usize> {
    nodes
        .iter()
        .position(|n| n.as_ref().is_some_and(|n| n.is_leader()))
}

async fn wait_leader(nodes: &[Option<MetaNode<KvApp>>], timeout: Duration) -> usize {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(i) = leader_index(nodes) {
            return i;
        }
        assert!(Instant::now() < deadline, "no leader within {timeout:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn converge(nodes: &[Option<MetaNode<KvApp>>], timeout: Duration) {
    // A rejoining node may force one election (its term grew while cut off): retry the read.
    let deadline = Instant::now() + timeout;
    let expected = loop {
        let leader = wait_leader(nodes, timeout).await;
        if let Ok(state) = nodes[leader]
            .as_ref()
            .unwrap()
            .read(|app| app.clone())
            .await
        {
            break state;
        }
        assert!(
            Instant::now() < deadline,
            "no linearizable read within {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    wait_for("replicas to converge", timeout, || {
        nodes
            .iter()
            .flatten()
            .all(|n| n.read_local(|a| a.app == expected))
    })
    .await;
}

async fn failover_keeps_acknowledged_writes(store: RaftStore) {
    let tmp = tempfile::tempdir().unwrap();
    let (mut nodes, peers) = three_nodes(store, tmp.path(), 30).await;
    for i in 0..100 {
        put_on_leader(&nodes, &format!("a{i}")).await;
    }
    let first = wait_leader(&nodes, Duration::from_secs(10)).await;
    // Every node names the same leader and its Kafka address.
    wait_for(
        "followers to learn the leader",
        Duration::from_secs(10),
        || {
            nodes
                .iter()
                .flatten()
                .all(|n| n.leader().is_some_and(|l| l.node_id == first as u64 + 1))
        },
    )
    .await;

    let killed_at = Instant::now();
    nodes[first].take().unwrap().shutdown().await;
    let second = wait_leader(&nodes, Duration::from_secs(10)).await;
    write_put(nodes[second].as_ref().unwrap(), "after-failover", "1")
        .await
        .unwrap();
    let failover = killed_at.elapsed();
    // openraft waits a leader lease (election_timeout_max) plus an election timeout before it
    // campaigns: 2 x 1.2 s here, plus slack for a loaded machine.
    assert!(
        failover < Duration::from_secs(5),
        "failover took {failover:?}"
    );
    for i in 0..100 {
        write_put(nodes[second].as_ref().unwrap(), &format!("b{i}"), "1")
            .await
            .unwrap();
    }
    for i in 0..100 {
        assert!(
            get(nodes[second].as_ref().unwrap(), &format!("a{i}"))
                .await
                .is_some(),
            "lost a{i}"
        );
    }

    // The old leader comes back on its address, behind the purge point: it catches up by snapshot.
    let l = TcpListener::bind(&peers[first].raft_addr).await.unwrap();
    nodes[first] = Some(
        start(
            first as u64 + 1,
            tmp.path(),
            l,
            store,
            Bootstrap::Cluster(peers.clone()),
            tuning(),
        )
        .await,
    );
    converge(&nodes, Duration::from_secs(20)).await;
    let rejoined = nodes[first].as_ref().unwrap();
    assert!(rejoined.read_local(|a| a.app.get(b"b99").is_some()));
    for n in nodes.into_iter().flatten() {
        n.shutdown().await;
    }
}

#[test]
fn sled_failover_keeps_acknowledged_writes() {
    run_alone(failover_keeps_acknowledged_writes(RaftStore::Sled));
}

async fn lagging_follower_catches_up_by_snapshot(store: RaftStore) {
    let tmp = tempfile::tempdir().unwrap();
    let (nodes, _) = three_nodes(store, tmp.path(), 20).await;
    let leader = wait_leader(&nodes, Duration::from_secs(10)).await;
    let follower = (leader + 1) % 3;
    nodes[follower].as_ref().unwrap().set_transport_paused(true);
    for i in 0..300 {
        put_on_leader(&nodes, &format!("k{i}")).await;
    }
    let ldr = nodes[wait_leader(&nodes, Duration::from_secs(10)).await]
        .as_ref()
        .unwrap();
    wait_for(
        "leader to purge behind its snapshots",
        Duration::from_secs(10),
        || ldr.status().purged_index.is_some_and(|p| p > 50),
    )
    .await;
    nodes[follower]
        .as_ref()
        .unwrap()
        .set_transport_paused(false);
    converge(&nodes, Duration::from_secs(20)).await;
    let f = nodes[follower].as_ref().unwrap();
    assert!(
        f.status().snapshot_index.is_some(),
        "follower did not install a snapshot"
    );
    assert_eq!(f.read_local(|a| a.app.len()), 300);
    for n in nodes.into_iter().flatten() {
        n.shutdown().await;
    }
}

#[test]
fn sled_lagging_follower_catches_up_by_snapshot() {
    run_alone(lagging_follower_catches_up_by_snapshot(RaftStore::Sled));
}

async fn isolated_follower_does_not_disrupt_majority(store: RaftStore) {
    let tmp = tempfile::tempdir().unwrap();
    let (nodes, _) = three_nodes(store, tmp.path(), 1000).await;
    // Start from a settled cluster: a committed write under the current leader.
    put_on_leader(&nodes, "settled").await;
    let leader = wait_leader(&nodes, Duration::from_secs(10)).await;
    let follower = (leader + 2) % 3;
    let term_before = nodes[leader].as_ref().unwrap().status().term;
    nodes[follower].as_ref().unwrap().set_transport_paused(true);
    let ldr = nodes[leader].as_ref().unwrap();
    let started = Instant::now();
    let mut written = 0;
    while started.elapsed() < Duration::from_secs(2) {
        write_put(ldr, &format!("k{written}"), "v").await.unwrap();
        written += 1;
    }
    assert!(ldr.is_leader());
    assert_eq!(
        ldr.status().term,
        term_before,
        "the majority changed term while a follower was cut off"
    );
    nodes[follower]
        .as_ref()
        .unwrap()
        .set_transport_paused(false);
    converge(&nodes, Duration::from_secs(20)).await;
    put_on_leader(&nodes, "after-rejoin").await;
    assert_eq!(read_on_leader(&nodes, |a| a.len()).await, written + 2);
    // The pre-vote kept the cut-off node from campaigning: rejoining deposed nobody.
    assert!(ldr.is_leader());
    assert_eq!(
        ldr.status().term,
        term_before,
        "the rejoining follower forced an election"
    );
    for n in nodes.into_iter().flatten() {
        n.shutdown().await;
    }
}

#[test]
fn sled_isolated_follower_does_not_disrupt_majority() {
    run_alone(isolated_follower_does_not_disrupt_majority(RaftStore::Sled));
}

async fn stale_leader_never_acknowledges(store: RaftStore) {
    let tmp = tempfile::tempdir().unwrap();
    let (nodes, _) = three_nodes(store, tmp.path(), 1000).await;
    put_on_leader(&nodes, "before").await;
    let old = wait_leader(&nodes, Duration::from_secs(10)).await;
    nodes[old].as_ref().unwrap().set_transport_paused(true);

    // The cut-off leader still believes it leads for a while; nothing it is asked may succeed.
    let stale = nodes[old].as_ref().unwrap();
    let stale_write = write_put(stale, "stale", "v").await;
    assert!(
        matches!(
            stale_write,
            Err(WriteError::Indeterminate(_) | WriteError::NotLeader { .. })
        ),
        "stale leader answered {stale_write:?}"
    );
    assert!(
        stale.read(|a| a.len()).await.is_err(),
        "stale leader served a linearizable read"
    );

    let others: Vec<usize> = (0..3).filter(|i| *i != old).collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    let new = loop {
        if let Some(i) = others
            .iter()
            .copied()
            .find(|i| nodes[*i].as_ref().unwrap().is_leader())
        {
            break i;
        }
        assert!(Instant::now() < deadline, "majority elected no leader");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    write_put(nodes[new].as_ref().unwrap(), "majority", "v")
        .await
        .unwrap();
    assert!(
        get(nodes[new].as_ref().unwrap(), "stale").await.is_none(),
        "the stale write became visible"
    );

    nodes[old].as_ref().unwrap().set_transport_paused(false);
    converge(&nodes, Duration::from_secs(20)).await;
    assert!(read_on_leader(&nodes, |a| a.get(b"stale")).await.is_none());
    assert!(read_on_leader(&nodes, |a| a.get(b"majority"))
        .await
        .is_some());
    for n in nodes.into_iter().flatten() {
        n.shutdown().await;
    }
}

#[test]
fn sled_stale_leader_never_acknowledges() {
    run_alone(stale_leader_never_acknowledges(RaftStore::Sled));
}

#[test]
fn segments_failover_keeps_acknowledged_writes() {
    run_alone(failover_keeps_acknowledged_writes(RaftStore::Segments));
}

#[test]
fn segments_lagging_follower_catches_up_by_snapshot() {
    run_alone(lagging_follower_catches_up_by_snapshot(RaftStore::Segments));
}

#[test]
fn segments_isolated_follower_does_not_disrupt_majority() {
    run_alone(isolated_follower_does_not_disrupt_majority(
        RaftStore::Segments,
    ));
}

#[test]
fn segments_stale_leader_never_acknowledges() {
    run_alone(stale_leader_never_acknowledges(RaftStore::Segments));
}

/// The leader lease: a leader cut off from both peers stops holding it within the lease (plus
/// a poll), and at no moment does another node lead while the old one still holds it; the new
/// leader holds it once a peer acknowledged it; healed, the old leader follows and holds none.
async fn a_cut_off_leader_loses_its_lease_before_another_leads(store: RaftStore) {
    let tmp = tempfile::tempdir().unwrap();
    let (nodes, _) = three_nodes(store, tmp.path(), 1000).await;
    put_on_leader(&nodes, "before").await;
    let old = wait_leader(&nodes, Duration::from_secs(10)).await;
    let stale = nodes[old].as_ref().unwrap();
    let lease = stale.lease().duration();
    wait_for(
        "the leader to hold its lease",
        Duration::from_secs(10),
        || stale.holds_lease(),
    )
    .await;
    for (i, n) in nodes.iter().enumerate() {
        if i != old {
            assert!(
                !n.as_ref().unwrap().holds_lease(),
                "follower {i} holds a lease"
            );
        }
    }

    stale.set_transport_paused(true);
    let cut = Instant::now();
    let mut lost = None;
    let new = loop {
        // New leader first, then the old lease: seeing both at once is the stale window.
        let elected = (0..3)
            .filter(|i| *i != old)
            .find(|i| nodes[*i].as_ref().unwrap().is_leader());
        let holds = stale.holds_lease();
        if let Some(new) = elected {
            assert!(
                !holds,
                "node {new} leads while cut-off node {old} still holds its lease ({:?} after the cut)",
                cut.elapsed()
            );
            break new;
        }
        if !holds && lost.is_none() {
            lost = Some(cut.elapsed());
        }
        assert!(
            cut.elapsed() < Duration::from_secs(15),
            "majority elected no leader"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    let elected_after = cut.elapsed();
    let lost = lost.expect("the old leader lost its lease before the new one was seen");
    // The lease counts from the last acknowledged send, before the cut; a heartbeat of slack
    // for the poll and a loaded machine.
    assert!(
        lost <= lease + Duration::from_millis(300),
        "the lease of {lease:?} held {lost:?} after the cut"
    );
    eprintln!(
        "lease {lease:?}: lost {lost:?} after the cut, new leader seen after {elected_after:?}"
    );
    let fresh = nodes[new].as_ref().unwrap();
    wait_for(
        "the new leader to hold its lease",
        Duration::from_secs(10),
        || fresh.holds_lease(),
    )
    .await;
    assert!(!stale.holds_lease());

    stale.set_transport_paused(false);
    converge(&nodes, Duration::from_secs(20)).await;
    wait_for("the old leader to follow", Duration::from_secs(10), || {
        !nodes[old].as_ref().unwrap().is_leader()
    })
    .await;
    let leader = wait_leader(&nodes, Duration::from_secs(10)).await;
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(
            n.as_ref().unwrap().holds_lease(),
            i == leader || n.as_ref().unwrap().is_leader()
        );
    }
    for n in nodes.into_iter().flatten() {
        n.shutdown().await;
    }
}

#[test]
fn segments_a_cut_off_leader_loses_its_lease_before_another_leads() {
    run_alone(a_cut_off_leader_loses_its_lease_before_another_leads(
        RaftStore::Segments,
    ));
}
