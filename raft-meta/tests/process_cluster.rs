//! Three nodes as three processes on loopback: SIGKILL the leader during writes; a new leader
//! accepts writes within the election timeout, every acknowledged write survives, and the old
//! leader restarts, rejoins and catches up by snapshot (it is behind the purge point).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::process;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use process::*;

type Clients = Arc<Mutex<HashMap<u64, String>>>;

async fn find_leader(clients: &Clients) -> Option<(u64, String)> {
    let snapshot: Vec<(u64, String)> = clients
        .lock()
        .unwrap()
        .iter()
        .map(|(k, v)| (*k, v.clone()))
        .collect();
    for (_, addr) in snapshot {
        if let Ok(status) = ask(&addr, "STATUS").await {
            if let Some(Ok(leader)) = status_field(&status, "leader").map(|l| l.parse::<u64>()) {
                if let Some(addr) = clients.lock().unwrap().get(&leader) {
                    return Some((leader, addr.clone()));
                }
            }
        }
    }
    None
}

struct Acks {
    keys: BTreeSet<String>,
    /// (node that acknowledged, when)
    times: Vec<(u64, Instant)>,
}

/// Node 1 bootstrapped alone, nodes 2 and 3 joined as voters, each under `tmp/n{id}`, with
/// `args` on every command line.
async fn three_voters(tmp: &std::path::Path, store: &str, args: &[&str]) -> HashMap<u64, KvProc> {
    let with = |bootstrap: &'static str| {
        let mut v = vec!["--bootstrap", bootstrap];
        v.extend_from_slice(args);
        v
    };
    let mut procs: HashMap<u64, KvProc> = HashMap::new();
    procs.insert(
        1,
        KvProc::spawn(1, &tmp.join("n1"), store, "127.0.0.1:0", &with("single")),
    );
    for id in [2, 3] {
        procs.insert(
            id,
            KvProc::spawn(
                id,
                &tmp.join(format!("n{id}")),
                store,
                "127.0.0.1:0",
                &with("join"),
            ),
        );
    }
    wait_until("node 1 to lead", Duration::from_secs(10), || async {
        ask(&procs[&1].client_addr, "STATUS")
            .await
            .is_ok_and(|s| status_field(&s, "leader").as_deref() == Some("1"))
    })
    .await;
    for id in [2u64, 3] {
        let answer = ask(
            &procs[&1].client_addr,
            &format!("ADDVOTER {id} {} kafka-{id}", procs[&id].raft_addr),
        )
        .await
        .unwrap();
        assert_eq!(answer, "OK", "add voter {id}");
    }
    procs
}

async fn sigkill_leader(store: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--snapshot-every",
        "50",
        "--heartbeat-ms",
        "100",
        "--election-ms",
        "400-800",
    ];
    let mut procs = three_voters(tmp.path(), store, &args).await;
    let clients: Clients = Arc::new(Mutex::new(
        procs
            .iter()
            .map(|(id, p)| (*id, p.client_addr.clone()))
            .collect(),
    ));
    let status = ask(&procs[&1].client_addr, "STATUS").await.unwrap();
    assert_eq!(
        status_field(&status, "voters").as_deref(),
        Some("1,2,3"),
        "{status}"
    );

    let stop = Arc::new(AtomicBool::new(false));
    let acks = Arc::new(Mutex::new(Acks {
        keys: BTreeSet::new(),
        times: Vec::new(),
    }));
    let mut writers = Vec::new();
    for w in 0..4 {
        let (stop, acks, clients) = (stop.clone(), acks.clone(), clients.clone());
        writers.push(tokio::spawn(async move {
            let mut i = 0u64;
            let mut conn: Option<(u64, Client)> = None;
            while !stop.load(Ordering::Relaxed) {
                if conn.is_none() {
                    if let Some((id, addr)) = find_leader(&clients).await {
                        conn = Client::connect(&addr).await.ok().map(|c| (id, c));
                    }
                    if conn.is_none() {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                }
                let Some((id, c)) = conn.as_mut() else {
                    continue;
                };
                let key = format!("w{w}-{i}");
                match c.ask(&format!("PUT {key} v")).await {
                    Ok(a) if a == "OK" => {
                        let mut acks = acks.lock().unwrap();
                        acks.keys.insert(key);
                        acks.times.push((*id, Instant::now()));
                        i += 1;
                    }
                    _ => {
                        // Unknown outcome: the key may or may not exist; move on to a fresh one.
                        i += 1;
                        conn = None;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
        }));
    }

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before_kill = ask(&procs[&1].client_addr, "STATUS").await.unwrap();
    let applied_at_kill: u64 = status_field(&before_kill, "applied")
        .unwrap()
        .parse()
        .unwrap();
    clients.lock().unwrap().remove(&1);
    let killed_at = Instant::now();
    procs.get_mut(&1).unwrap().kill9();

    // Keep writing until a survivor acknowledges (a loaded machine can stretch the election),
    // then a little longer so writes land on the new leader too.
    wait_until(
        "a write acknowledged by a new leader",
        Duration::from_secs(20),
        || {
            let acks = acks.clone();
            async move {
                let acks = acks.lock().unwrap();
                acks.times
                    .iter()
                    .any(|(id, at)| *id != 1 && *at > killed_at)
            }
        },
    )
    .await;
    // The old leader must come back behind the purge point (so it can only catch up by
    // snapshot): keep writing until the new leader has purged past where it stood.
    wait_until(
        "the new leader to purge past the old leader's position",
        Duration::from_secs(30),
        || {
            let clients = clients.clone();
            async move {
                let Some((_, addr)) = find_leader(&clients).await else {
                    return false;
                };
                let Ok(status) = ask(&addr, "STATUS").await else {
                    return false;
                };
                status_field(&status, "purged")
                    .and_then(|p| p.parse::<u64>().ok())
                    .is_some_and(|p| p > applied_at_kill)
            }
        },
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    let acks = Arc::try_unwrap(acks).ok().unwrap().into_inner().unwrap();
    let first_new = acks
        .times
        .iter()
        .find(|(id, at)| *id != 1 && *at > killed_at)
        .map(|(_, at)| at.duration_since(killed_at))
        .expect("no write acknowledged after the leader was killed");
    println!(
        "{} writes acknowledged; first ack on the new leader {first_new:?} after SIGKILL",
        acks.keys.len()
    );
    assert!(
        // Followers wait a leader lease (election max, 0.8 s) plus an election timeout
        // (0.4-0.8 s) before campaigning: 1.6 s at most. This is a liveness bound with slack
        // for a loaded 2-core machine; the failover figure itself is the bake-off's to measure.
        first_new < Duration::from_secs(10),
        "failover took {first_new:?}"
    );

    let (leader, leader_addr) = find_leader(&clients)
        .await
        .expect("a leader among the survivors");
    assert_ne!(leader, 1);
    let mut c = Client::connect(&leader_addr).await.unwrap();
    for key in &acks.keys {
        let got = c.ask(&format!("GET {key}")).await.unwrap();
        assert!(got.starts_with("VAL"), "acknowledged {key} lost: {got}");
    }
    let status = c.ask("STATUS").await.unwrap();
    let purged: u64 = status_field(&status, "purged").unwrap().parse().unwrap();
    assert!(
        purged > applied_at_kill,
        "leader has not purged past the old leader's position ({purged} <= {applied_at_kill})"
    );

    // The old leader restarts on its address and can only catch up by snapshot.
    let n1_addr = procs[&1].raft_addr.clone();
    let mut restart = vec!["--bootstrap", "single"];
    restart.extend_from_slice(&args);
    procs.insert(
        1,
        KvProc::spawn(1, &tmp.path().join("n1"), store, &n1_addr, &restart),
    );
    let count = c.ask("COUNT").await.unwrap();
    let n1_client = procs[&1].client_addr.clone();
    wait_until(
        "old leader to catch up",
        Duration::from_secs(20),
        || async {
            ask(&n1_client, "LOCALCOUNT")
                .await
                .is_ok_and(|a| a == count)
        },
    )
    .await;
    let n1_status = ask(&n1_client, "STATUS").await.unwrap();
    println!("old leader caught up: {n1_status}");
    assert_eq!(status_field(&n1_status, "leader"), Some(leader.to_string()));
    for (_, mut p) in procs {
        p.kill9();
    }
}

#[test]
fn sled_three_processes_survive_sigkill_of_the_leader() {
    run_alone(sigkill_leader("sled"));
}

#[test]
fn segments_three_processes_survive_sigkill_of_the_leader() {
    run_alone(sigkill_leader("segments"));
}

/// The whole cluster SIGKILLed right after a burst of acknowledged writes, then restarted: the
/// leader resumes its term at once (its vote was persisted) with the commit index it had
/// persisted, which is written lazily and may be behind what it acknowledged. Its first
/// linearizable read must still see every acknowledged write (a stale read index once made a
/// restarted node judge a just-created topic's data ownerless).
async fn whole_cluster_restart_reads_every_acknowledged_write(store: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let args = ["--heartbeat-ms", "100", "--election-ms", "400-800"];
    let with = |bootstrap: &'static str| {
        let mut v = vec!["--bootstrap", bootstrap];
        v.extend_from_slice(&args);
        v
    };
    let dir = |id: u64| tmp.path().join(format!("n{id}"));
    let mut procs = three_voters(tmp.path(), store, &args).await;

    let mut c = Client::connect(&procs[&1].client_addr).await.unwrap();
    let mut acked = 0u64;
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(600) {
        assert_eq!(c.ask(&format!("PUT k{acked} v")).await.unwrap(), "OK");
        acked += 1;
    }
    drop(c);
    let raft_addrs: HashMap<u64, String> = procs
        .iter()
        .map(|(id, p)| (*id, p.raft_addr.clone()))
        .collect();
    for p in procs.values_mut() {
        p.kill9();
    }

    // Followers first, so the leader's first read can be confirmed by a quorum at once.
    for id in [2u64, 3, 1] {
        let bootstrap = if id == 1 { "single" } else { "join" };
        procs.insert(
            id,
            KvProc::spawn(id, &dir(id), store, &raft_addrs[&id], &with(bootstrap)),
        );
    }
    let leader = procs[&1].client_addr.clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    let first = loop {
        let answer = ask(&leader, "COUNT").await.unwrap_or_default();
        if let Some(n) = answer.strip_prefix("COUNT ") {
            break n.parse::<u64>().unwrap();
        }
        assert!(Instant::now() < deadline, "no read answered: {answer}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    println!(
        "{acked} writes acknowledged before the kill; the first read after restart saw {first}"
    );
    assert!(
        first >= acked,
        "the restarted leader's first linearizable read saw {first} of {acked} acknowledged writes"
    );
    for (_, mut p) in procs {
        p.kill9();
    }
}

#[test]
fn segments_whole_cluster_restart_reads_every_acknowledged_write() {
    run_alone(whole_cluster_restart_reads_every_acknowledged_write(
        "segments",
    ));
}
