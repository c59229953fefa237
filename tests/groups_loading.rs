//! COORDINATOR_LOAD_IN_PROGRESS over the wire: a single node with a long Raft log of
//! multi-partition commits (no snapshot to start from) is SIGKILLed and restarted; a client
//! polling as soon as the Kafka port accepts sees error 14 while the node replays its log, then
//! every acknowledged commit. `/readyz` says 503 (replaying) meanwhile, and 200 once loaded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::group_wire;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::raw::RawClient;
use common::Cohort;
use group_wire::{
    create_topic, describe, fetch_all, find_coordinator_v4, heartbeat, join, join_request, s,
};
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestGroup;
use kafka_protocol::messages::*;

const WRITERS: usize = 4;
const PARTITIONS: i32 = 50;
/// Commits in the backlog (each of `PARTITIONS` partitions).
const COMMITS: u64 = 12_000;

/// Commits `offset` on every partition of "t" for `group` (OffsetCommit v8, admin commit).
fn commit_all(c: &mut RawClient, group: &str, offset: i64) -> Vec<i16> {
    let partitions = (0..PARTITIONS)
        .map(|p| {
            OffsetCommitRequestPartition::default()
                .with_partition_index(p)
                .with_committed_offset(offset)
                .with_committed_leader_epoch(-1)
                .with_committed_metadata(Some(s("")))
        })
        .collect();
    let req = OffsetCommitRequest::default()
        .with_group_id(GroupId(s(group)))
        .with_generation_id_or_member_epoch(-1)
        .with_member_id(s(""))
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name(TopicName(s("t")))
            .with_partitions(partitions)]);
    match c.call(ApiKey::OffsetCommit, 8, RequestKind::OffsetCommit(req)) {
        ResponseKind::OffsetCommit(r) => r.topics[0]
            .partitions
            .iter()
            .map(|p| p.error_code)
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_restarted_node_answers_load_in_progress_while_it_replays_then_every_acknowledged_commit() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let flags = ["--raft-snapshot-every-entries", "10000000"];
    let mut b = Cohort::start(&data, &flags);
    let port = b.kafka.port();
    let http = b.http;
    create_topic(&mut RawClient::connect(b.kafka), "t", PARTITIONS);

    let started = Instant::now();
    let done = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (done, addr) = (done.clone(), b.kafka);
            std::thread::spawn(move || {
                let group = format!("g{w}");
                let mut c = RawClient::connect(addr);
                let mut offset = 0i64;
                while done.fetch_add(1, Ordering::SeqCst) < COMMITS {
                    offset += 1;
                    assert!(commit_all(&mut c, &group, offset).iter().all(|e| *e == 0));
                }
                (group, offset)
            })
        })
        .collect();
    let acked: BTreeMap<String, i64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    eprintln!(
        "backlog: {COMMITS} commits of {PARTITIONS} partitions in {:?}",
        started.elapsed()
    );
    b.kill9();

    let restarted = Instant::now();
    let node = Restarted::spawn(&data, port, http.port(), &flags);
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut c = loop {
        if std::net::TcpStream::connect(addr).is_ok() {
            break RawClient::connect(addr);
        }
        assert!(
            restarted.elapsed() < Duration::from_secs(20),
            "the port never accepted"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    let accepted = restarted.elapsed();

    // Poll as a client retrying against its coordinator would, each round in this order. The
    // node stops loading once, for good: a round whose last answer is still 14 was answered
    // wholly while loading.
    let mut rounds_loading = 0;
    let mut first_loading = None;
    let loaded = loop {
        assert!(
            restarted.elapsed() < Duration::from_secs(30),
            "never loaded:\n{}",
            node.log()
        );
        let versions = api_versions_code(&mut c);
        let fetch = fetch_code(&mut c, "g0");
        if fetch == 0 {
            break restarted.elapsed();
        }
        assert_eq!(fetch, 14, "OffsetFetch while loading");
        first_loading.get_or_insert(restarted.elapsed());
        let readyz = readyz(http);
        let found = find_coordinator_v4(&mut c, "g0");
        let described = describe(&mut c, "probe");
        let listed = list_code(&mut c);
        let beat = heartbeat(&mut c, "probe", 1, "m");
        let joined = join(&mut c, 5, join_request("probe", "", None, &["t"], 10_000));
        if joined.error_code == 14 {
            rounds_loading += 1;
            assert_eq!(versions, 0, "ApiVersions is answered while loading");
            assert_eq!(
                (found.error_code, found.node_id.0, found.port),
                (0, 1, i32::from(port)),
                "FindCoordinator names this node while it loads"
            );
            assert_eq!(described.error_code, 14, "DescribeGroups: {described:?}");
            assert_eq!(listed, 14, "ListGroups");
            assert_eq!(beat, 14, "Heartbeat");
            // Asked before the round's last answer, which was still given while loading.
            let (code, body) = readyz.expect("HTTP answers while the node loads");
            assert_eq!(code, 503, "{body}");
            assert!(
                body.contains("replayed: failing: replaying the Raft log"),
                "{body}"
            );
        }
    };
    eprintln!(
        "restart: port accepted after {accepted:?}; COORDINATOR_LOAD_IN_PROGRESS from {:?} \
         to {loaded:?} ({rounds_loading} whole rounds while loading)",
        first_loading
    );
    assert!(
        first_loading.is_some(),
        "OffsetFetch never saw COORDINATOR_LOAD_IN_PROGRESS:\n{}",
        node.log()
    );
    assert!(
        rounds_loading > 0,
        "no whole round was answered while loading"
    );

    let ready = Instant::now();
    loop {
        match readyz(http) {
            Some((200, _)) => break,
            other => assert!(
                ready.elapsed() < Duration::from_secs(20),
                "/readyz after loading: {other:?}"
            ),
        }
        std::thread::sleep(Duration::from_millis(20));
    }

    // Loaded: every acknowledged commit is there.
    for (group, offset) in &acked {
        let stored = fetch_all(&mut c, group);
        assert_eq!(stored.len(), PARTITIONS as usize, "{group}");
        for (topic, p, o) in stored {
            assert_eq!((topic.as_str(), o), ("t", *offset), "{group}/{p}");
        }
    }
}

/// `GET /readyz`: (status code, body), or `None` if the port does not answer yet.
fn readyz(http: std::net::SocketAddr) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(http).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /readyz HTTP/1.1\r\nhost: test\r\n\r\n")
        .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, body.to_string()))
}

fn api_versions_code(c: &mut RawClient) -> i16 {
    match c.call(
        ApiKey::ApiVersions,
        3,
        RequestKind::ApiVersions(
            ApiVersionsRequest::default()
                .with_client_software_name(s("raw-test"))
                .with_client_software_version(s("1")),
        ),
    ) {
        ResponseKind::ApiVersions(r) => r.error_code,
        other => panic!("{other:?}"),
    }
}

fn list_code(c: &mut RawClient) -> i16 {
    match c.call(
        ApiKey::ListGroups,
        4,
        RequestKind::ListGroups(ListGroupsRequest::default()),
    ) {
        ResponseKind::ListGroups(r) => r.error_code,
        other => panic!("{other:?}"),
    }
}

fn fetch_code(c: &mut RawClient, group: &str) -> i16 {
    let req = OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
        .with_group_id(GroupId(s(group)))
        .with_topics(None)]);
    match c.call(ApiKey::OffsetFetch, 8, RequestKind::OffsetFetch(req)) {
        ResponseKind::OffsetFetch(r) => r.groups[0].error_code,
        other => panic!("{other:?}"),
    }
}

/// The restarted broker on the port of the first run (clients poll it before it prints where
/// it listens); killed by PID on drop.
struct Restarted {
    child: std::process::Child,
    log: std::path::PathBuf,
}

impl Restarted {
    fn spawn(data: &std::path::Path, port: u16, http: u16, flags: &[&str]) -> Restarted {
        let log_file = std::fs::File::create(data.parent().unwrap().join("restarted.log")).unwrap();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg("serve")
            .arg("--data-dir")
            .arg(data)
            .args([
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--http",
                &format!("127.0.0.1:{http}"),
            ])
            .args(flags)
            .env("RUST_LOG", "info")
            .stdout(std::process::Stdio::null())
            .stderr(log_file)
            .spawn()
            .unwrap();
        Restarted {
            child,
            log: data.parent().unwrap().join("restarted.log"),
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Restarted {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
