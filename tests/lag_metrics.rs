//! Lag on `/metrics` of a live `cohort serve`, with the workload made by real clients
//! (confluent-kafka): the exported figures are log end minus committed offset for every
//! partition and agree with `cohort groups --describe`; the lag status follows a consumer that
//! pauses and resumes (OK → STOPPED → OK), and one that keeps committing the same offset
//! while behind (STALLED).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::metrics::{scrape, scrape_until};
use common::Cohort;

/// Sampling flags that keep status changes to seconds.
const FAST_LAG: [&str; 4] = ["--lag-sample-interval-ms", "100", "--lag-window-ms", "1500"];

fn partition_series(name: &str, group: &str, topic: &str, partition: i32) -> String {
    format!("{name}{{group=\"{group}\",topic=\"{topic}\",partition=\"{partition}\"}}")
}

fn group_series(name: &str, group: &str) -> String {
    format!("{name}{{group=\"{group}\"}}")
}

/// `cohort groups --describe --group GROUP`: (topic, partition) → (current, log end, lag).
fn describe(broker: &Cohort, group: &str) -> BTreeMap<(String, i32), (i64, i64, i64)> {
    let out = common::run_ok(
        Command::new(env!("CARGO_BIN_EXE_cohort")).args([
            "groups",
            "--bootstrap-server",
            &broker.bootstrap(),
            "--describe",
            "--group",
            group,
        ]),
        Duration::from_secs(30),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let number = |s: &str| -> i64 {
        s.parse()
            .unwrap_or_else(|_| panic!("not a number: {s:?} in\n{text}"))
    };
    let rows: BTreeMap<_, _> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 6 && f[0] == group)
        .map(|f| {
            (
                (f[1].to_string(), number(f[2]) as i32),
                (number(f[3]), number(f[4]), number(f[5])),
            )
        })
        .collect();
    assert!(!rows.is_empty(), "no rows for {group}:\n{text}");
    rows
}

#[test]
fn metrics_lag_is_log_end_minus_committed_and_agrees_with_cohort_groups() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &FAST_LAG);
    common::python_script(
        "lag_setup.py",
        &[&broker.bootstrap(), "setup"],
        Duration::from_secs(90),
    );

    // What the workload made: 30, 20, 10 records; `lag-reader` committed 12, 20, 3 and
    // `lag-done` everything.
    let log_end = [30, 20, 10];
    let expected: [(&str, [i64; 3]); 2] = [("lag-reader", [12, 20, 3]), ("lag-done", log_end)];
    let m = scrape_until(&broker, Duration::from_secs(20), "every lag figure", |m| {
        expected.iter().all(|(g, committed)| {
            (0..3).all(|p| {
                m.get(&partition_series("cohort_group_lag", g, "lagged", p))
                    == Some(&((log_end[p as usize] - committed[p as usize]) as f64))
            })
        })
    });
    for (group, committed) in &expected {
        let described = describe(&broker, group);
        let mut total = 0;
        for p in 0..3 {
            let get = |name: &str| {
                *m.get(&partition_series(name, group, "lagged", p))
                    .unwrap_or_else(|| panic!("{name} {group} {p} missing")) as i64
            };
            let (committed_now, end, lag) = (
                get("cohort_group_committed_offset"),
                get("cohort_group_log_end_offset"),
                get("cohort_group_lag"),
            );
            assert_eq!(committed_now, committed[p as usize], "{group} {p}");
            assert_eq!(end, log_end[p as usize], "{group} {p}");
            assert_eq!(lag, end - committed_now, "{group} {p}");
            assert_eq!(
                described.get(&("lagged".to_string(), p)),
                Some(&(committed_now, end, lag)),
                "{group} {p}: cohort groups --describe disagrees with /metrics"
            );
            total += lag;
        }
        assert_eq!(
            m.get(&group_series("cohort_group_total_lag", group)),
            Some(&(total as f64))
        );
        // Both groups' consumers left: Empty, no members.
        assert_eq!(
            m.get(&group_series("cohort_group_members", group)),
            Some(&0.0)
        );
        assert_eq!(
            m.get(&format!(
                "cohort_group_state{{group=\"{group}\",state=\"Empty\"}}"
            )),
            Some(&1.0)
        );
    }
    // The caught-up group is OK (lag zero); the other never commits again while behind.
    let m = scrape_until(&broker, Duration::from_secs(20), "statuses", |m| {
        m.get(&group_series("cohort_group_status", "lag-done")) == Some(&0.0)
            && m.get(&group_series("cohort_group_status", "lag-reader")) == Some(&3.0)
    });
    assert_eq!(
        m.get(&partition_series(
            "cohort_group_lag_status",
            "lag-reader",
            "lagged",
            1
        )),
        Some(&0.0),
        "lagged-1 is caught up"
    );
    // The coordinator's own families are there too: commits, their latency, rebalances.
    assert!(m.get("cohort_group_commits_total{result=\"ok\"}").copied() >= Some(2.0));
    assert!(m.get("cohort_group_commit_seconds_count").copied() >= Some(2.0));
    assert!(m.get("cohort_group_rebalances_total").copied() >= Some(2.0));

    // Deleting a group removes its series.
    common::run_ok(
        Command::new(env!("CARGO_BIN_EXE_cohort")).args([
            "groups",
            "--bootstrap-server",
            &broker.bootstrap(),
            "--delete",
            "--group",
            "lag-done",
        ]),
        Duration::from_secs(30),
    );
    let m = scrape(&broker);
    assert!(
        !m.keys().any(|k| k.contains("group=\"lag-done\"")),
        "a deleted group is still exported"
    );
    assert!(m.contains_key(&group_series("cohort_group_total_lag", "lag-reader")));

    // Deleting one partition's offset removes that partition's series only (the coordinator
    // feeds the tracker before it answers, so the next scrape shows it).
    common::run_ok(
        Command::new(env!("CARGO_BIN_EXE_cohort")).args([
            "groups",
            "--bootstrap-server",
            &broker.bootstrap(),
            "--delete-offsets",
            "--group",
            "lag-reader",
            "--topic",
            "lagged:2",
        ]),
        Duration::from_secs(30),
    );
    let m = scrape(&broker);
    for name in [
        "cohort_group_committed_offset",
        "cohort_group_log_end_offset",
        "cohort_group_lag",
    ] {
        assert!(!m.contains_key(&partition_series(name, "lag-reader", "lagged", 2)));
    }
    assert_eq!(
        m.get(&partition_series(
            "cohort_group_lag",
            "lag-reader",
            "lagged",
            0
        )),
        Some(&18.0)
    );
    assert_eq!(
        m.get(&group_series("cohort_group_total_lag", "lag-reader")),
        Some(&18.0)
    );
}

/// The `lag_live.py` child: a producer and a consumer driven over stdin.
struct Live {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl Live {
    fn start(broker: &Cohort, topic: &str, group: &str) -> Live {
        let mut child = Command::new(common::python())
            .arg(common::repo_root().join("tests/clients/python/lag_live.py"))
            .args([&broker.bootstrap(), topic, group])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        let mut live = Live { child, lines };
        live.expect("READY");
        live
    }

    fn expect(&mut self, line: &str) {
        let got = self.lines.recv_timeout(Duration::from_secs(30));
        assert_eq!(got.as_deref(), Ok(line), "lag_live.py");
    }

    fn command(&mut self, command: &str, answer: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
        self.expect(answer);
    }
}

impl Live {
    /// Asks the script to close its consumer and waits (bounded) for it to exit.
    fn quit(&mut self) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "quit").unwrap();
        stdin.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "lag_live.py did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn lag_status_follows_a_consumer_that_pauses_stalls_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &FAST_LAG);
    let mut live = Live::start(&broker, "live", "live-readers");
    let status = group_series("cohort_group_status", "live-readers");
    let lag = partition_series("cohort_group_lag", "live-readers", "live", 0);
    let committed = partition_series("cohort_group_committed_offset", "live-readers", "live", 0);

    scrape_until(
        &broker,
        Duration::from_secs(20),
        "OK while consuming",
        |m| {
            m.get(&status) == Some(&0.0)
                && m.get("cohort_group_state{group=\"live-readers\",state=\"Stable\"}")
                    == Some(&1.0)
                && m.get(&group_series("cohort_group_members", "live-readers")) == Some(&1.0)
        },
    );

    // Paused: the producer goes on, nothing is committed; once a whole window has passed with
    // lag and no commit, the partition is STOPPED.
    live.command("pause", "PAUSED");
    let paused_at = Instant::now();
    let m = scrape_until(
        &broker,
        Duration::from_secs(20),
        "STOPPED while paused",
        |m| m.get(&status) == Some(&3.0),
    );
    eprintln!("STOPPED {:?} after the pause", paused_at.elapsed());
    assert!(m[&lag] > 0.0, "lag while paused: {}", m[&lag]);
    let stopped_at = m[&committed];
    std::thread::sleep(Duration::from_millis(500));
    let m = scrape(&broker);
    assert_eq!(m[&committed], stopped_at, "a paused consumer committed");
    assert!(m[&lag] > 0.0);
    assert_eq!(m.get(&status), Some(&3.0), "STOPPED holds while paused");

    // Resumed: it catches up and commits; OK again.
    live.command("resume", "RESUMED");
    let m = scrape_until(&broker, Duration::from_secs(20), "OK after resuming", |m| {
        m.get(&status) == Some(&0.0)
    });
    assert!(m[&committed] > stopped_at, "no commit after resuming");

    // Stalled: fetching stops but the same offset is committed again and again. Only a
    // tracker that sees every commit can tell this from STOPPED.
    live.command("stall", "STALLED");
    let commits_before = m["cohort_group_commits_total{result=\"ok\"}"];
    let m = scrape_until(
        &broker,
        Duration::from_secs(20),
        "STALLED while re-committing",
        |m| m.get(&status) == Some(&2.0),
    );
    let stalled_at = m[&committed];
    assert!(m[&lag] > 0.0);
    std::thread::sleep(Duration::from_millis(500));
    let m = scrape(&broker);
    assert_eq!(m[&committed], stalled_at, "a stalled consumer moved");
    assert!(
        m["cohort_group_commits_total{result=\"ok\"}"] > commits_before + 5.0,
        "the stalled consumer is not committing"
    );
    assert_eq!(
        m.get(&status),
        Some(&2.0),
        "STALLED holds while re-committing"
    );

    live.command("resume", "RESUMED");
    scrape_until(
        &broker,
        Duration::from_secs(20),
        "OK after the stall",
        |m| m.get(&status) == Some(&0.0),
    );
    live.quit();
}
