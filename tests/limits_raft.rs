//! The Raft peer port under idle sockets and trickled ("slowloris") frames, on a real
//! three-node cluster of child processes: the sockets are evicted or time out, the leader and
//! the term never change, Kafka clients are served throughout, and the attacked node's memory
//! and file descriptors (from `/proc/<pid>`) stay bounded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use cluster_support::*;
use common::procfs::{self, mib};

/// `/metrics` of node `n` as `series → value`.
fn scrape(cluster: &ScriptCluster, n: u64) -> BTreeMap<String, f64> {
    let addr = SocketAddr::from(([127, 0, 0, 1], cluster.base + 20 + n as u16));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nhost: t\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((series.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// (leader id, term) as node `n` sees them.
fn raft_view(cluster: &ScriptCluster, n: u64) -> (f64, f64) {
    let m = scrape(cluster, n);
    (
        m.get("raft_leader_id").copied().unwrap_or(-1.0),
        m.get("raft_term").copied().unwrap_or(-1.0),
    )
}

fn status_field(pid: u32, field: &str) -> u64 {
    procfs::status_bytes(pid, field)
}

#[test]
fn idle_sockets_and_trickled_frames_on_the_raft_port_move_neither_leader_nor_term() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = ScriptCluster::up(
        dir.path(),
        &[
            "--raft-handshake-timeout-ms",
            "1000",
            "--raft-connections-max",
            "64",
            "--raft-connections-per-address-max",
            "48",
        ],
    );
    cluster.wait_healthy(Duration::from_secs(60));
    let leader = cluster.wait_controller(&NODES, Duration::from_secs(30));
    let before: Vec<(f64, f64)> = NODES.iter().map(|n| raft_view(&cluster, *n)).collect();
    assert!(before.iter().all(|v| *v == before[0]), "{before:?}");
    let pid = cluster.pid(leader).unwrap();
    let (rss0, size0, fds0) = (
        procfs::rss(pid),
        status_field(pid, "VmSize"),
        procfs::fds(pid),
    );
    assert_eq!(create_topic(cluster.kafka(leader), "t", 1).unwrap(), 0);
    // Partitions are spread over the nodes: produce where "t"/0 lives, which may not be the
    // Raft leader under attack (whose Kafka port answers metadata meanwhile).
    let owner = eventually("t/0 has a leader", Duration::from_secs(15), || {
        let m = metadata(cluster.kafka(leader), &["t"]).ok()?;
        let l = m.topics.first()?.partitions.first()?.leader_id.0;
        (l > 0).then_some(l as u64)
    });
    // The leader's metadata can name the owner before the owner has applied the topic (it
    // answers UNKNOWN_TOPIC_OR_PARTITION, retriable, meanwhile): the attack starts once the
    // owner serves the partition, so that every produce during it must succeed.
    eventually(
        "t/0 is served by its owner",
        Duration::from_secs(15),
        || (produce(cluster.kafka(owner), "t", 0, b"before the attack").ok()? == 0).then_some(()),
    );

    let target = cluster.raft(leader);
    let started = Instant::now();
    let attack = Duration::from_secs(6);
    let mut checks = 0;
    let mut peak_fds = 0;
    let mut peak_size = 0;
    std::thread::scope(|scope| {
        // Idle sockets, opened as fast as the port evicts them. They stop 2 s before the
        // trickled frames do, so that the last trickled frames, no longer evicted to make
        // room, run into the handshake timeout (1 s).
        scope.spawn(|| {
            let mut held = Vec::new();
            while started.elapsed() < attack - Duration::from_secs(2) {
                for _ in 0..20 {
                    if let Ok(s) = TcpStream::connect_timeout(&target, Duration::from_millis(200)) {
                        held.push(s);
                    }
                }
                if held.len() > 400 {
                    held.drain(..200);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        // Frames announcing 64 MiB, their bodies trickled a byte at a time (the port, which
        // wants an authentication hello first, refuses them on their length), and
        // authentication hellos trickled the same way (they run into the handshake timeout).
        scope.spawn(|| {
            let mut trickling: Vec<TcpStream> = Vec::new();
            let mut opened = 0u64;
            while started.elapsed() < attack {
                if trickling.len() < 40 {
                    if let Ok(mut s) =
                        TcpStream::connect_timeout(&target, Duration::from_millis(200))
                    {
                        opened += 1;
                        if opened.is_multiple_of(2) {
                            let _ = s.write_all(&(64u32 << 20).to_be_bytes());
                            let _ = s.write_all(&[1]);
                        } else {
                            // A hello's length (42 bytes) and kind (0x10), then a byte a tick.
                            let _ = s.write_all(&[0, 0, 0, 42, 0x10]);
                        }
                        trickling.push(s);
                    }
                }
                trickling.retain_mut(|s| s.write_all(&[0]).is_ok());
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        // Meanwhile: Kafka clients are served, no node sees another leader or term.
        while started.elapsed() < attack {
            assert_eq!(
                produce(cluster.kafka(owner), "t", 0, b"during the attack").unwrap(),
                0
            );
            assert!(metadata(cluster.kafka(leader), &["t"]).is_ok());
            for n in NODES {
                let view = raft_view(&cluster, n);
                assert_eq!(view, before[0], "node {n} moved during the attack");
            }
            peak_fds = peak_fds.max(procfs::fds(pid));
            peak_size = peak_size.max(status_field(pid, "VmSize"));
            checks += 1;
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    assert!(checks >= 10, "{checks} checks");
    // The attack is over: its sockets are gone, the port's limits counted what they did.
    let fds_after = procfs::fds_settle(pid, fds0 + 8, Duration::from_secs(10));
    let (rss1, hwm) = (procfs::rss(pid), procfs::hwm(pid));
    let metrics = scrape(&cluster, leader);
    let counted = |name: &str| -> f64 {
        metrics
            .iter()
            .filter(|(k, _)| k.starts_with(name))
            .map(|(_, v)| v)
            .sum::<f64>()
            + 0.0 // an empty sum is -0.0
    };
    eprintln!(
        "raft port: fds {fds0} before, peak {peak_fds}, {fds_after} after; rss {:.1} -> {:.1} \
         MiB (hwm {:.1}); VmSize {:.1} -> peak {:.1} MiB; evicted {}, refused {}, timed out {}",
        mib(rss0),
        mib(rss1),
        mib(hwm),
        mib(size0),
        mib(peak_size),
        counted("raft_peer_connections_evicted_total"),
        counted("raft_peer_connections_refused_total"),
        counted("raft_peer_connections_timed_out_total"),
    );
    eprintln!(
        "authentication failures {}",
        counted("raft_peer_authentication_failures_total")
    );
    assert!(counted("raft_peer_connections_evicted_total") > 0.0);
    assert!(counted("raft_peer_connections_timed_out_total{reason=\"handshake\"}") > 0.0);
    assert!(counted("raft_peer_authentication_failures_total") > 0.0);
    assert!(
        peak_fds <= fds0 + 64 + 16,
        "the port held {peak_fds} descriptors (cap 64)"
    );
    assert!(
        fds_after <= fds0 + 8,
        "{fds_after} descriptors after the attack"
    );
    // Forty frames announcing 64 MiB each: 2.5 GiB if allocated on announcement.
    assert!(
        peak_size.saturating_sub(size0) < 512 << 20,
        "virtual memory grew {:.1} MiB",
        mib(peak_size.saturating_sub(size0))
    );
    assert!(
        rss1.saturating_sub(rss0) < 64 << 20,
        "resident memory grew {:.1} MiB",
        mib(rss1.saturating_sub(rss0))
    );
    let after: Vec<(f64, f64)> = NODES.iter().map(|n| raft_view(&cluster, *n)).collect();
    assert_eq!(after, before, "leader or term changed");
    assert_eq!(produce(cluster.kafka(owner), "t", 0, b"after").unwrap(), 0);
}
