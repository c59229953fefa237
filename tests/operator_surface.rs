//! What an operator of `cohort serve` sees: a bad flag stops start-up with exit 2 before
//! anything exists; `/readyz` and `cohort_ready` through a restart and through a leader change
//! in a three-node cluster; the INFO log of a whole life (start, topic, rebalance, shutdown)
//! has one readable line per event and none of openraft's internals; `--log-format json`
//! writes JSON lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;
use crate::group_wire;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use cluster_support::{eventually, ScriptCluster, NODES};
use common::raw::RawClient;
use common::{listening_field, spawn_listening, Cohort};

/// GET `path`: (status code, body); `None` if nothing answers.
fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.1\r\nhost: test\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, body.to_string()))
}

fn ready_gauge(metrics: &str) -> Option<u8> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("cohort_ready "))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn a_bad_flag_exits_2_naming_it_and_creates_no_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = common::run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg("serve")
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"])
            .args(["--flush-ms", "0", "--group-min-session-timeout-ms", "7000"])
            .args(["--group-max-session-timeout-ms", "6000"]),
        Duration::from_secs(20),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            "cohort serve: --flush-ms must be between 1 and 3600000 when set, got 0",
            "cohort serve: --group-max-session-timeout-ms must be at least \
             --group-min-session-timeout-ms, got 6000",
        ]
    );
    assert!(out.stdout.is_empty(), "nothing listened");
    assert!(
        !data.exists(),
        "no data directory for a command line that cannot run"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `cohort serve` without `RUST_LOG` (the default filter), stderr to `log`.
fn spawn_default_log(data: &Path, log: &Path, extra: &[&str]) -> (Child, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cohort"));
    cmd.arg("serve")
        .arg("--data-dir")
        .arg(data)
        .args(["--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        .args(["--group-initial-rebalance-delay-ms", "0"])
        .args(extra)
        .env_remove("RUST_LOG");
    spawn_listening(cmd, log).unwrap_or_else(|e| panic!("{e}"))
}

fn terminate(mut child: Child) {
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("cohort {pid} did not stop after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Start, a topic, one member's rebalance, shutdown.
fn one_life(data: &Path, log: &Path, extra: &[&str]) {
    let (child, line) = spawn_default_log(data, log, extra);
    let kafka = listening_field(&line, "kafka=");
    let mut c = RawClient::connect(kafka);
    group_wire::create_topic(&mut c, "orders", 2);
    let joined = group_wire::join_new_member(&mut c, "billing", &["orders"]);
    assert_eq!(joined.error_code, 0, "{joined:?}");
    let member = joined.member_id.to_string();
    let synced = group_wire::sync(
        &mut c,
        "billing",
        joined.generation_id,
        &member,
        &[(&member, b"")],
    );
    assert_eq!(synced.error_code, 0);
    drop(c);
    terminate(child);
}

#[test]
fn the_info_log_of_a_life_has_one_line_per_event_and_no_openraft_internals() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cohort.log");
    one_life(&dir.path().join("data"), &log, &[]);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for expected in [
        "cohort starting",
        "node: id 1, data dir ",
        "raft: one voter, ",
        "topics: fsync before every acknowledgement",
        "groups: session timeout 6000..1800000 ms",
        "limits: frame ",
        "Raft leader is node 1",
        "coordinator active",
        "cohort started",
        "created topic topic=orders partitions=2",
        "group rebalanced group=\"billing\" generation=1 members=1 protocol=\"range\"",
        "shutting down signal=\"SIGTERM\"",
        "cohort stopped",
    ] {
        let n = lines.iter().filter(|l| l.contains(expected)).count();
        assert_eq!(n, 1, "{expected:?} appears {n} times in:\n{text}");
    }
    for l in &lines {
        assert!(
            !l.contains("openraft"),
            "openraft's INFO is internal (DEBUG unless RUST_LOG asks): {l}\n{text}"
        );
        assert!(!l.contains(" DEBUG "), "{l}");
    }
    // One line per event, and few of them: a life of four events is not a wall of text.
    assert!(lines.len() <= 20, "{} lines:\n{text}", lines.len());
}

#[test]
fn log_format_json_writes_one_json_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cohort.log");
    one_life(&dir.path().join("data"), &log, &["--log-format", "json"]);
    let text = std::fs::read_to_string(&log).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    assert!(events.len() >= 5, "{text}");
    for e in &events {
        assert!(e["timestamp"].is_string() && e["level"].is_string(), "{e}");
        assert!(e["message"].is_string(), "{e}");
    }
    let rebalance = events
        .iter()
        .find(|e| e["message"] == "group rebalanced")
        .unwrap_or_else(|| panic!("no rebalance line in {text}"));
    assert_eq!(rebalance["group"], "billing");
    assert_eq!(rebalance["generation"], 1);
    assert_eq!(rebalance["level"], "INFO");
}

#[test]
fn readyz_is_200_once_serving_and_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut b = Cohort::start(&data, &[]);
    assert_eq!(http_get(b.http, "/healthz").unwrap(), (200, "ok\n".into()));
    let (code, body) = http_get(b.http, "/readyz").unwrap();
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body,
        "ready\nlisteners: ok\nreplayed: ok\nleader: ok (node 1)\napply: ok\n"
    );
    let (_, metrics) = http_get(b.http, "/metrics").unwrap();
    assert_eq!(ready_gauge(&metrics), Some(1), "{metrics}");
    assert!(metrics.contains("cohort_ready_check{check=\"leader\"} 1\n"));
    b.kill9();
    let b = Cohort::start(&data, &[]);
    let (code, body) = http_get(b.http, "/readyz").unwrap();
    assert_eq!((code, body.lines().next()), (200, Some("ready")), "{body}");
}

/// The survivors of a killed leader report ready with a new, live leader; the restarted node
/// is ready again once it has caught up.
#[test]
fn readyz_follows_a_leader_change_in_a_three_node_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ScriptCluster::up(dir.path(), &[]);
    let base = c.base;
    let http = move |n: u64| SocketAddr::from(([127, 0, 0, 1], base + 20 + n as u16));
    let leader_named = |n: u64| -> Option<u64> {
        let (code, body) = http_get(http(n), "/readyz")?;
        let named = body
            .lines()
            .find_map(|l| l.strip_prefix("leader: ok (node "))
            .and_then(|rest| rest.trim_end_matches(')').parse().ok());
        (code == 200).then_some(named).flatten()
    };
    let first = c.wait_controller(&NODES, Duration::from_secs(60));
    for n in NODES {
        let seen = eventually("every node ready", Duration::from_secs(30), || {
            leader_named(n)
        });
        assert_eq!(seen, first, "node {n}");
        let (_, metrics) = http_get(http(n), "/metrics").unwrap();
        assert_eq!(ready_gauge(&metrics), Some(1), "node {n}");
    }
    c.kill9(first);
    let survivors: Vec<u64> = NODES.into_iter().filter(|n| *n != first).collect();
    for &n in &survivors {
        let next = eventually(
            "a new leader on the survivors",
            Duration::from_secs(30),
            || leader_named(n).filter(|l| *l != first),
        );
        assert!(survivors.contains(&next), "node {n} names {next}");
    }
    c.start(first);
    eventually("the restarted node ready", Duration::from_secs(60), || {
        leader_named(first).filter(|l| *l != first)
    });
}
