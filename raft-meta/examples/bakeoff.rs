//! The log-store bake-off: sled against the segmented log on `compaction`, same Raft, same
//! transport, same key-value application. Prints figures; asserts nothing.
//!
//! ```text
//! cargo run -p raft-meta --release --example bakeoff -- [--quick] [--only write|space|replay|failover|failover-processes]
//!     [--store sled|segments] [--in-flight N] [--kills N] [--keys N]
//! ```
//!
//! - write: replicated small-command writes/s and p50/p99 latency, 1 node and 3 nodes over
//!   loopback TCP, fsync on, 64 concurrent writers; commands per entry and per fsync.
//! - space: disk bytes of each log store after 1M appends with a purge every 100k.
//! - replay: restart of a node holding a 1M-key snapshot plus a 100 MiB log tail: MB/s.
//! - failover: kill the leader of 3 nodes holding the keys (1M, or `--keys`), time to the first
//!   acknowledged write on the new leader; `--kills` times (5 by default), p50/p90/p99/max.
//! - failover-processes (only with `--only`): the same with three `raft-meta-kvnode`
//!   processes and SIGKILL (`cargo build -p raft-meta --release --bins` first).
//!
//! Every section ends with the fdatasync p50/p99 it saw (the disk is shared and noisy).

#![allow(clippy::unwrap_used, clippy::expect_used)]

// The broker's allocator (src/main.rs), so restart and failover figures are the broker's:
// glibc's malloc spends ~40 % of a 1M-key restart consolidating the free lists a dropped
// state left behind.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../testkit/kv.rs"]
mod kv;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kv::{KvApp, KvCommand};
use openraft::storage::{RaftLogStorage, RaftLogStorageExt};
use openraft::{CommittedLeaderId, EntryPayload, LogId};
use raft_meta::store::{LogStore, StoreProbe};
use raft_meta::types::Entry;
use raft_meta::{
    metrics as rm, Bootstrap, CommandBatch, Elections, MetaNode, NodeConfig, PeerSpec, RaftStore,
    Tuning,
};
use tokio::net::TcpListener;

/// The stores to compare (`--store sled|segments` picks one).
fn stores() -> Vec<RaftStore> {
    let args: Vec<String> = std::env::args().collect();
    match args
        .iter()
        .position(|a| a == "--store")
        .and_then(|i| args.get(i + 1))
    {
        Some(name) => vec![name.parse().expect("--store sled|segments")],
        None => vec![RaftStore::Sled, RaftStore::Segments],
    }
}

fn pct(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

fn fsync_line(label: &str) {
    let mut samples = rm::fsync_sampling_take();
    samples.sort_unstable();
    println!(
        "  [{label}] fdatasync: {} syncs, p50 {:.2} ms, p99 {:.2} ms",
        samples.len(),
        pct(&samples, 0.50),
        pct(&samples, 0.99)
    );
    rm::fsync_sampling_start();
}

fn put(key: String, value: Bytes) -> Bytes {
    KvCommand::Put {
        key: Bytes::from(key),
        value,
    }
    .encode()
}

fn in_flight() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--in-flight")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(Tuning::default().batches_in_flight_max)
}

/// The bake-off's nodes authenticate as a secured cluster does: the figures include the
/// sealing of every peer frame.
fn bakeoff_auth() -> raft_meta::network::PeerAuth {
    match raft_meta::network::ClusterSecret::from_bytes(b"the bake-off's cluster secret, 32+ bytes")
    {
        Ok(secret) => raft_meta::network::PeerAuth::Secret(secret),
        Err(_) => raft_meta::network::PeerAuth::Open,
    }
}

fn tuning() -> Tuning {
    Tuning {
        batches_in_flight_max: in_flight(),
        // The benchmark builds snapshots only when it asks for them.
        snapshot_every_entries: u64::MAX / 2,
        snapshot_every_bytes: u64::MAX / 2,
        ..Tuning::default()
    }
}

async fn start_cluster(
    store: RaftStore,
    dir: &Path,
    n: u64,
    t: Tuning,
) -> Vec<Option<MetaNode<KvApp>>> {
    let mut listeners = Vec::new();
    let mut peers = Vec::new();
    for id in 1..=n {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        peers.push(PeerSpec {
            node_id: id,
            raft_addr: l.local_addr().unwrap().to_string(),
            kafka_addr: format!("kafka-{id}"),
        });
        listeners.push(l);
    }
    let mut nodes = Vec::new();
    for (i, l) in listeners.into_iter().enumerate() {
        let id = i as u64 + 1;
        let bootstrap = if n == 1 {
            Bootstrap::Single
        } else {
            Bootstrap::Cluster(peers.clone())
        };
        let config = NodeConfig {
            node_id: id,
            listen_addr: peers[i].raft_addr.clone(),
            advertised_raft_addr: None,
            kafka_addr: format!("kafka-{id}"),
            raft_dir: dir.join(format!("n{id}")),
            store,
            bootstrap,
            tuning: t.clone(),
            peer_auth: bakeoff_auth(),
        };
        nodes.push(Some(
            MetaNode::start_on(config, l, KvApp::new()).await.unwrap(),
        ));
    }
    nodes
}

async fn leader_of(nodes: &[Option<MetaNode<KvApp>>]) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(i) = nodes
            .iter()
            .position(|n| n.as_ref().is_some_and(|n| n.is_leader()))
        {
            return i;
        }
        assert!(Instant::now() < deadline, "no leader");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// `writers` tasks put 16-byte values for `run_for`; returns (acked writes, latencies in µs).
async fn drive_writes(
    node: Arc<MetaNode<KvApp>>,
    writers: usize,
    run_for: Duration,
) -> (u64, Vec<u32>) {
    let stop_at = Instant::now() + run_for;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let node = node.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let value = Bytes::from_static(b"0123456789abcdef");
            let mut i = 0u64;
            while Instant::now() < stop_at {
                let started = Instant::now();
                if node
                    .write(put(format!("w{w}-{i}"), value.clone()))
                    .await
                    .is_ok()
                {
                    lat.push(started.elapsed().as_micros() as u32);
                }
                i += 1;
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort_unstable();
    (all.len() as u64, all)
}

async fn section_write(quick: bool) {
    println!("\n## write: replicated 16-byte puts, 64 concurrent writers, fsync on");
    println!(
        "| store | nodes | writes/s | p50 ms | p99 ms | commands/entry | commands/fsync (leader) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let run_for = Duration::from_secs(if quick { 3 } else { 8 });
    for nodes_n in [1u64, 3] {
        for store in stores() {
            let tmp = tempfile::tempdir().unwrap();
            let mut nodes = start_cluster(store, tmp.path(), nodes_n, tuning()).await;
            let li = leader_of(&nodes).await;
            let leader = Arc::new(nodes[li].take().unwrap());
            // Warm up (connections, first entries) before measuring.
            drive_writes(leader.clone(), 8, Duration::from_millis(300)).await;
            let log_before = leader.status().last_log_index.unwrap_or(0);
            let syncs_before = leader.log_sync_count();
            let started = Instant::now();
            let (writes, lat) = drive_writes(leader.clone(), 64, run_for).await;
            let secs = started.elapsed().as_secs_f64();
            let entries = leader.status().last_log_index.unwrap_or(0) - log_before;
            let syncs = leader.log_sync_count() - syncs_before;
            println!(
                "| {} | {nodes_n} | {:.0} | {:.2} | {:.2} | {:.1} | {:.1} |",
                store.name(),
                writes as f64 / secs,
                pct(&lat, 0.5),
                pct(&lat, 0.99),
                writes as f64 / entries.max(1) as f64,
                writes as f64 / syncs.max(1) as f64,
            );
            nodes[li] = Arc::into_inner(leader);
            for n in nodes.into_iter().flatten() {
                n.shutdown().await;
            }
        }
    }
    fsync_line("write");
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let Ok(md) = e.metadata() else { continue };
            if md.is_dir() {
                total += dir_bytes(&e.path());
            } else {
                total += md.len();
            }
        }
    }
    total
}

async fn section_space(quick: bool) {
    let total: u64 = if quick { 200_000 } else { 1_000_000 };
    let purge_every = total / 10;
    let keep = purge_every / 2;
    println!("\n## space: {total} appends of one 40-byte command each, 100 per append call, purge every {purge_every} keeping the last {keep}");
    println!("| store | live entries | live payload MiB | disk MiB | amplification | appends/s |");
    println!("|---|---:|---:|---:|---:|---:|");
    for store in stores() {
        let tmp = tempfile::tempdir().unwrap();
        let mut log =
            LogStore::open(store, &tmp.path().join("log"), StoreProbe::default()).unwrap();
        let command = Bytes::from(vec![7u8; 40]);
        let started = Instant::now();
        let mut index = 1u64;
        let mut payload_per_entry = 0u64;
        while index <= total {
            let batch: Vec<Entry> = (index..(index + 100).min(total + 1))
                .map(|i| Entry {
                    log_id: LogId::new(CommittedLeaderId::new(1, 1), i),
                    payload: EntryPayload::Normal(CommandBatch(vec![command.clone()])),
                })
                .collect();
            if payload_per_entry == 0 {
                payload_per_entry = postcard::to_stdvec(&batch[0]).unwrap().len() as u64;
            }
            let n = batch.len() as u64;
            log.blocking_append(batch).await.unwrap();
            index += n;
            if (index - 1).is_multiple_of(purge_every) {
                let upto = index - 1 - keep;
                log.purge(LogId::new(CommittedLeaderId::new(1, 1), upto))
                    .await
                    .unwrap();
            }
        }
        let secs = started.elapsed().as_secs_f64();
        let state = log.get_log_state().await.unwrap();
        let live = state.last_log_id.map_or(0, |l| l.index)
            - state.last_purged_log_id.map_or(0, |l| l.index);
        let live_bytes = live * payload_per_entry;
        drop(log);
        let disk = dir_bytes(&tmp.path().join("log"));
        println!(
            "| {} | {live} | {:.2} | {:.2} | {:.1}x | {:.0} |",
            store.name(),
            live_bytes as f64 / 1048576.0,
            disk as f64 / 1048576.0,
            disk as f64 / live_bytes.max(1) as f64,
            total as f64 / secs
        );
    }
    fsync_line("space");
}

async fn section_replay(quick: bool) {
    let keys: u64 = if quick { 100_000 } else { 1_000_000 };
    let tail_mib: u64 = if quick { 10 } else { 100 };
    println!("\n## replay: restart with a {keys}-key snapshot and a {tail_mib} MiB log tail");
    println!("| store | snapshot MiB | tail MiB | restart to applied s | MB/s | snapshot load s | node started s |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for store in stores() {
        let tmp = tempfile::tempdir().unwrap();
        let mut nodes = start_cluster(store, tmp.path(), 1, tuning()).await;
        leader_of(&nodes).await;
        let node = Arc::new(nodes[0].take().unwrap());
        // Keys: 24-byte keys, 16-byte values, written through Raft in big concurrent waves.
        let per_writer = keys / 256;
        let mut tasks = Vec::new();
        for w in 0..256u64 {
            let node = node.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..per_writer {
                    node.write(put(
                        format!("key-{w:04}-{i:012}"),
                        Bytes::from_static(b"offset:000000042"),
                    ))
                    .await
                    .unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        node.trigger_snapshot().await.unwrap();
        let target = node.status().applied_index;
        let deadline = Instant::now() + Duration::from_secs(120);
        while node.status().snapshot_index != target {
            assert!(Instant::now() < deadline, "snapshot not built");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Tail: 100 KiB values, overwriting a small set of keys.
        let big = Bytes::from(vec![b'x'; 100 * 1024]);
        for i in 0..(tail_mib * 10) {
            node.write(put(format!("big-{}", i % 64), big.clone()))
                .await
                .unwrap();
        }
        let last = node.status().last_log_index.unwrap();
        let snap_dir = tmp.path().join("n1").join("snapshots");
        let snap_bytes = dir_bytes(&snap_dir);
        Arc::into_inner(node).unwrap().shutdown().await;

        let started = Instant::now();
        let sm_started = Instant::now();
        let sm = raft_meta::StateMachine::open(&snap_dir, KvApp::new(), u64::MAX).unwrap();
        let sm_secs = sm_started.elapsed().as_secs_f64();
        drop(sm);
        let started_restart = Instant::now();
        let mut nodes = start_cluster_at(store, tmp.path()).await;
        let node = nodes.remove(0);
        let start_secs = started_restart.elapsed().as_secs_f64();
        while node.status().applied_index.is_none_or(|a| a < last) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let secs = started_restart.elapsed().as_secs_f64();
        let _ = started;
        let total = snap_bytes + tail_mib * 1024 * 1024;
        println!(
            "| {} | {:.1} | {tail_mib} | {:.2} | {:.0} | {:.2} | {:.2} |",
            store.name(),
            snap_bytes as f64 / 1048576.0,
            secs,
            total as f64 / 1e6 / secs,
            sm_secs,
            start_secs
        );
        node.shutdown().await;
    }
    fsync_line("replay");
}

/// Restarts node 1 of a single-node layout on a fresh port.
async fn start_cluster_at(store: RaftStore, dir: &Path) -> Vec<MetaNode<KvApp>> {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = NodeConfig {
        node_id: 1,
        listen_addr: l.local_addr().unwrap().to_string(),
        advertised_raft_addr: None,
        kafka_addr: "kafka-1".into(),
        raft_dir: dir.join("n1"),
        store,
        bootstrap: Bootstrap::Single,
        tuning: tuning(),
        peer_auth: bakeoff_auth(),
    };
    vec![MetaNode::start_on(config, l, KvApp::new()).await.unwrap()]
}

fn string_flag(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn numeric_flag(name: &str) -> Option<u64> {
    string_flag(name).map(|v| v.parse().expect("a number"))
}

/// Nearest-rank percentile of sorted seconds.
fn rank(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    sorted[i - 1]
}

/// Prints the sorted failover times (stderr, with `note`) and the table row of their ranks.
fn failover_row(store: &str, elections: &str, mut times: Vec<f64>, note: &str) {
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    eprintln!(
        "failover times (s), sorted: {}{note}",
        times
            .iter()
            .map(|t| format!("{t:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "| {store} | {elections} | {} | {:.2} | {:.2} | {:.2} | {:.2} |",
        times.len(),
        rank(&times, 0.50),
        rank(&times, 0.90),
        rank(&times, 0.99),
        times[times.len() - 1]
    );
}

async fn section_failover(quick: bool) {
    let keys: u64 = numeric_flag("--keys").unwrap_or(if quick { 20_000 } else { 1_000_000 });
    let kills = numeric_flag("--kills").unwrap_or(if quick { 3 } else { 5 }) as usize;
    let t = Tuning::default();
    println!("\n## failover: 3 nodes holding {keys} keys, leader killed {kills} times, time to the first acknowledged write on the new leader (heartbeat {} ms, lease {} ms, spread {} ms)", t.heartbeat_ms, t.election_timeout_max_ms, t.election_timeout_min_ms);
    println!("| store | elections | kills | p50 s | p90 s | p99 s | max s |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (store, elections) in stores().into_iter().flat_map(|s| {
        [Elections::OpenraftTimer, Elections::PreVote]
            .into_iter()
            .map(move |e| (s, e))
    }) {
        let tmp = tempfile::tempdir().unwrap();
        let mut listeners = Vec::new();
        let mut peers = Vec::new();
        for id in 1..=3u64 {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            peers.push(PeerSpec {
                node_id: id,
                raft_addr: l.local_addr().unwrap().to_string(),
                kafka_addr: format!("kafka-{id}"),
            });
            listeners.push(l);
        }
        let config = |id: u64| NodeConfig {
            node_id: id,
            listen_addr: peers[id as usize - 1].raft_addr.clone(),
            advertised_raft_addr: None,
            kafka_addr: format!("kafka-{id}"),
            raft_dir: tmp.path().join(format!("n{id}")),
            store,
            bootstrap: Bootstrap::Cluster(peers.clone()),
            tuning: Tuning {
                snapshot_every_entries: 5_000,
                elections,
                ..Tuning::default()
            },
            peer_auth: bakeoff_auth(),
        };
        let mut nodes: Vec<Option<Arc<MetaNode<KvApp>>>> = Vec::new();
        for (i, l) in listeners.into_iter().enumerate() {
            nodes.push(Some(Arc::new(
                MetaNode::start_on(config(i as u64 + 1), l, KvApp::new())
                    .await
                    .unwrap(),
            )));
        }
        let find_leader = |nodes: &Vec<Option<Arc<MetaNode<KvApp>>>>| {
            nodes
                .iter()
                .position(|n| n.as_ref().is_some_and(|n| n.is_leader()))
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut li = loop {
            if let Some(i) = find_leader(&nodes) {
                break i;
            }
            assert!(Instant::now() < deadline);
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        // Load the keys.
        let leader = nodes[li].clone().unwrap();
        let per_writer = keys / 128;
        let mut tasks = Vec::new();
        for w in 0..128u64 {
            let leader = leader.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..per_writer {
                    let _ = leader
                        .write(put(
                            format!("key-{w:04}-{i:012}"),
                            Bytes::from_static(b"offset:000000042"),
                        ))
                        .await;
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        drop(leader);
        let mut times = Vec::new();
        for _ in 0..kills {
            // Kill a cluster at rest: every node has applied the leader's log (the first kill
            // would otherwise land in the followers' catch-up and snapshot builds after the
            // load, and time those instead of the failover), then a pause.
            let target = nodes[li].as_ref().unwrap().status().last_log_index;
            let deadline = Instant::now() + Duration::from_secs(300);
            while nodes
                .iter()
                .flatten()
                .any(|n| n.status().applied_index < target)
            {
                assert!(Instant::now() < deadline, "followers did not catch up");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let victim = nodes[li].take().unwrap();
            let killed_at = Instant::now();
            Arc::into_inner(victim).unwrap().shutdown().await;
            let mut k = 0u64;
            let elapsed = loop {
                if let Some(i) = find_leader(&nodes) {
                    let n = nodes[i].clone().unwrap();
                    if n.write(put(format!("after-{k}"), Bytes::from_static(b"v")))
                        .await
                        .is_ok()
                    {
                        li = i;
                        break killed_at.elapsed();
                    }
                }
                k += 1;
                assert!(
                    killed_at.elapsed() < Duration::from_secs(60),
                    "no new leader"
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            };
            times.push(elapsed.as_secs_f64());
            // Bring the victim back on its address; it rejoins (by snapshot if needed).
            let dead = nodes.iter().position(Option::is_none).unwrap();
            let l = TcpListener::bind(&peers[dead].raft_addr).await.unwrap();
            nodes[dead] = Some(Arc::new(
                MetaNode::start_on(config(dead as u64 + 1), l, KvApp::new())
                    .await
                    .unwrap(),
            ));
            let target = nodes[li].as_ref().unwrap().status().last_log_index;
            let deadline = Instant::now() + Duration::from_secs(120);
            while nodes[dead].as_ref().unwrap().status().applied_index < target {
                assert!(Instant::now() < deadline, "victim did not catch up");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let label = match elections {
            Elections::OpenraftTimer => "openraft timer",
            Elections::PreVote => "pre-vote",
        };
        failover_row(store.name(), label, times, "");
        for n in nodes.into_iter().flatten() {
            Arc::into_inner(n).unwrap().shutdown().await;
        }
    }
    fsync_line("failover");
}

/// One line-protocol request to a `raft-meta-kvnode` on a fresh connection (2 s deadlines).
async fn kv_ask(addr: &str, line: &str) -> Option<String> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(addr).await.ok()?;
        stream.set_nodelay(true).ok()?;
        let mut stream = tokio::io::BufReader::new(stream);
        stream
            .get_mut()
            .write_all(format!("{line}\n").as_bytes())
            .await
            .ok()?;
        let mut answer = String::new();
        match stream.read_line(&mut answer).await {
            Ok(n) if n > 0 => Some(answer.trim_end().to_owned()),
            _ => None,
        }
    };
    tokio::time::timeout(Duration::from_secs(2), exchange)
        .await
        .ok()
        .flatten()
}

fn kv_field(status: &str, field: &str) -> Option<u64> {
    status
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{field}=")))
        .and_then(|v| v.parse().ok())
}

fn free_addr() -> String {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string()
}

/// Failover of three `raft-meta-kvnode` processes (the binary next to this example's
/// directory: `cargo build -p raft-meta --release --bins --example bakeoff`), the leader
/// killed with SIGKILL: no shared runtime, no in-process shutdown, what a deployment sees.
async fn section_failover_processes(quick: bool) {
    let keys: u64 = numeric_flag("--keys").unwrap_or(if quick { 20_000 } else { 1_000_000 });
    let kills = numeric_flag("--kills").unwrap_or(if quick { 3 } else { 20 }) as usize;
    let bin = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("raft-meta-kvnode");
    assert!(
        bin.exists(),
        "{} missing: cargo build -p raft-meta --release --bins",
        bin.display()
    );
    // Timing other than the defaults (`--heartbeat-ms N`, `--election-ms SPREAD-LEASE`) and one
    // election mode (`--elections pre-vote|openraft`) are passed to the nodes as given.
    let mut t = Tuning::default();
    if let Some(n) = numeric_flag("--heartbeat-ms") {
        t.heartbeat_ms = n;
    }
    if let Some((lo, hi)) = string_flag("--election-ms")
        .as_deref()
        .and_then(|v| v.split_once('-'))
    {
        t.election_timeout_min_ms = lo.parse().expect("--election-ms SPREAD-LEASE");
        t.election_timeout_max_ms = hi.parse().expect("--election-ms SPREAD-LEASE");
    }
    let modes: Vec<&str> = match string_flag("--elections").as_deref() {
        Some("pre-vote") => vec!["pre-vote"],
        Some("openraft") => vec!["openraft"],
        _ => vec!["openraft", "pre-vote"],
    };
    println!("\n## failover, processes: 3 raft-meta-kvnode processes holding {keys} keys, leader SIGKILLed {kills} times, time to the first acknowledged write on the new leader (heartbeat {} ms, lease {} ms, spread {} ms)", t.heartbeat_ms, t.election_timeout_max_ms, t.election_timeout_min_ms);
    println!("| store | elections | kills | p50 s | p90 s | p99 s | max s |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let timing = [
        "--heartbeat-ms".to_string(),
        t.heartbeat_ms.to_string(),
        "--election-ms".to_string(),
        format!(
            "{}-{}",
            t.election_timeout_min_ms, t.election_timeout_max_ms
        ),
    ];
    for (store, elections) in stores()
        .into_iter()
        .flat_map(|s| modes.clone().into_iter().map(move |e| (s, e)))
    {
        let tmp = tempfile::tempdir().unwrap();
        let raft: Vec<String> = (0..3).map(|_| free_addr()).collect();
        let client: Vec<String> = (0..3).map(|_| free_addr()).collect();
        let peers = raft
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{}={a}", i + 1))
            .collect::<Vec<_>>()
            .join(",");
        let spawn = |i: usize| {
            std::process::Command::new(&bin)
                .args(["--id", &(i + 1).to_string()])
                .arg("--dir")
                .arg(tmp.path().join(format!("n{}", i + 1)))
                .args(["--store", store.name(), "--listen", &raft[i]])
                .args(["--client", &client[i], "--bootstrap", "cluster"])
                .args(["--peers", &peers, "--snapshot-every", "5000"])
                .args(["--elections", elections])
                .args(&timing)
                .env("RUST_LOG", "off")
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        };
        let mut procs: Vec<Option<std::process::Child>> = (0..3).map(|i| Some(spawn(i))).collect();
        let leader_of = |client: Vec<String>| async move {
            for addr in &client {
                if let Some(l) = kv_ask(addr, "STATUS")
                    .await
                    .and_then(|s| kv_field(&s, "leader"))
                {
                    return Some(l as usize - 1);
                }
            }
            None
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut li = loop {
            if let Some(i) = leader_of(client.clone()).await {
                break i;
            }
            assert!(Instant::now() < deadline, "no leader");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let term_of = |addr: String| async move {
            kv_ask(&addr, "STATUS")
                .await
                .and_then(|s| kv_field(&s, "term"))
        };
        let term_before_load = term_of(client[li].clone()).await;
        let load_started = Instant::now();
        // Load the keys: 128 connections, one PUT in flight each.
        let per_writer = keys / 128;
        let mut tasks = Vec::new();
        for w in 0..128u64 {
            let addr = client[li].clone();
            tasks.push(tokio::spawn(async move {
                use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
                let stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
                let mut stream = tokio::io::BufReader::new(stream);
                let mut answer = String::new();
                for i in 0..per_writer {
                    let line = format!("PUT key-{w:04}-{i:012} offset:000000042\n");
                    stream.get_mut().write_all(line.as_bytes()).await.unwrap();
                    answer.clear();
                    stream.read_line(&mut answer).await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        // Elections the load itself caused (a leader starved or stalled past the lease).
        let load_secs = load_started.elapsed().as_secs_f64();
        let leader_after_load = leader_of(client.clone()).await.expect("a leader");
        let term_after_load = term_of(client[leader_after_load].clone()).await;
        println!(
            "  load: {keys} PUTs from 128 connections in {load_secs:.1} s; terms {term_before_load:?} -> {term_after_load:?}"
        );
        li = leader_after_load;
        let mut times = Vec::new();
        let mut unasked_changes = 0;
        for k in 0..kills {
            // A cluster at rest: every node applied as much as the others, then a pause.
            let deadline = Instant::now() + Duration::from_secs(300);
            loop {
                let mut applied = Vec::new();
                for addr in &client {
                    applied.push(
                        kv_ask(addr, "STATUS")
                            .await
                            .and_then(|s| kv_field(&s, "applied")),
                    );
                }
                if applied.iter().all(|a| a.is_some() && *a == applied[0]) {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "nodes did not converge: {applied:?}"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            tokio::time::sleep(Duration::from_millis(1500)).await;
            // Whoever leads now: a leader change nobody caused is counted, not timed.
            let now_leading = leader_of(client.clone()).await.expect("a leader");
            if now_leading != li {
                unasked_changes += 1;
                li = now_leading;
            }
            let mut victim = procs[li].take().unwrap();
            let killed_at = Instant::now();
            victim.kill().unwrap();
            victim.wait().unwrap();
            let elapsed = loop {
                let survivors: Vec<String> = (0..3)
                    .filter(|i| *i != li)
                    .map(|i| client[i].clone())
                    .collect();
                if let Some(new) = leader_of(survivors).await.filter(|n| *n != li) {
                    if kv_ask(&client[new], &format!("PUT after-{k} v"))
                        .await
                        .as_deref()
                        == Some("OK")
                    {
                        let elapsed = killed_at.elapsed();
                        procs[li] = Some(spawn(li));
                        li = new;
                        break elapsed;
                    }
                }
                assert!(
                    killed_at.elapsed() < Duration::from_secs(60),
                    "no new leader"
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            };
            times.push(elapsed.as_secs_f64());
        }
        failover_row(
            store.name(),
            elections,
            times,
            &format!("; leader changes between kills: {unasked_changes}"),
        );
        for p in procs.iter_mut().flatten() {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if std::env::var("RUST_LOG").is_ok() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let run = |name: &str| only.as_deref().is_none_or(|o| o == name);
    rm::fsync_sampling_start();
    println!(
        "# raft-meta bake-off (quick: {quick}, batches in flight: {})",
        in_flight()
    );
    if run("write") {
        section_write(quick).await;
    }
    if run("space") {
        section_space(quick).await;
    }
    if run("replay") {
        section_replay(quick).await;
    }
    if run("failover") {
        section_failover(quick).await;
    }
    // Only when asked: it needs the kvnode binary built beside this example.
    if only.as_deref() == Some("failover-processes") {
        section_failover_processes(quick).await;
    }
}
