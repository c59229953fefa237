//! Lag in seconds on a live `cohort serve`: records produced with explicit old CreateTime
//! timestamps (confluent-kafka's `timestamp=`), groups committed behind them, and the seconds
//! `/metrics` and `cohort groups --describe --lag-seconds` report checked against those
//! timestamps and the wall clock around each reading.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::metrics::scrape_until;
use common::{python_script, run_ok, Cohort};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn python(broker: &Cohort, args: &[&str]) {
    let mut all = vec![broker.bootstrap()];
    all.extend(args.iter().map(|a| a.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    python_script("operator_admin.py", &all, Duration::from_secs(90));
}

fn series(name: &str, group: &str, partition: i32) -> String {
    format!("{name}{{group=\"{group}\",topic=\"aged\",partition=\"{partition}\"}}")
}

/// `seconds` is the age of a record stamped `ts` read between `before` and `after` (ms).
fn assert_age(what: &str, seconds: f64, ts: i64, before: i64, after: i64) {
    let low = (before - ts) as f64 / 1000.0 - 0.001;
    let high = (after - ts) as f64 / 1000.0 + 0.001;
    assert!(
        (low..=high).contains(&seconds),
        "{what}: {seconds} s, expected between {low} and {high}"
    );
}

#[test]
fn lag_seconds_is_the_age_of_the_record_at_the_committed_offset() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(
        &dir.path().join("data"),
        &[
            "--auto-create-topics=false",
            "--lag-sample-interval-ms",
            "100",
            "--lag-window-ms",
            "1500",
        ],
    );
    run_ok(
        Command::new(env!("CARGO_BIN_EXE_cohort")).args([
            "topics",
            "--bootstrap-server",
            &broker.bootstrap(),
            "--create",
            "--topic",
            "aged",
            "--partitions",
            "2",
        ]),
        Duration::from_secs(30),
    );
    let now = now_ms();
    // aged-0: records an hour, half an hour and a minute old; aged-1: one record.
    let p0 = [now - 3_600_000, now - 1_800_000, now - 60_000];
    let p1 = [now - 120_000];
    let list = |ts: &[i64]| ts.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    python(&broker, &["produce", "aged", "0", &list(&p0)]);
    python(&broker, &["produce", "aged", "1", &list(&p1)]);
    // `behind` waits at aged-0's second record and has read all of aged-1; `oldest` waits
    // at the first record of aged-0.
    python(&broker, &["commit", "behind", "aged", "0", "1"]);
    python(&broker, &["commit", "behind", "aged", "1", "1"]);
    python(&broker, &["commit", "oldest", "aged", "0", "0"]);

    let lag_seconds = "cohort_group_lag_seconds";
    let before = now_ms();
    let m = scrape_until(&broker, Duration::from_secs(20), "lag in seconds", |m| {
        m.contains_key(&series(lag_seconds, "behind", 0))
            && m.contains_key(&series(lag_seconds, "behind", 1))
            && m.contains_key(&series(lag_seconds, "oldest", 0))
    });
    let after = now_ms();
    // The scrape that satisfied the wait was taken between `before` and `after`.
    assert_age(
        "behind aged-0",
        m[&series(lag_seconds, "behind", 0)],
        p0[1],
        before,
        after,
    );
    assert_age(
        "oldest aged-0",
        m[&series(lag_seconds, "oldest", 0)],
        p0[0],
        before,
        after,
    );
    assert_eq!(m[&series(lag_seconds, "behind", 1)], 0.0, "caught up is 0");
    assert_eq!(
        m[&series("cohort_group_lag", "behind", 0)],
        2.0,
        "two records behind on aged-0"
    );
    assert_age(
        "behind max",
        m["cohort_group_max_lag_seconds{group=\"behind\"}"],
        p0[1],
        before,
        after,
    );
    assert_age(
        "oldest max",
        m["cohort_group_max_lag_seconds{group=\"oldest\"}"],
        p0[0],
        before,
        after,
    );

    // The tool's column, read from the log by a Fetch at the committed offset.
    let describe = |extra: &[&str]| {
        let out = run_ok(
            Command::new(env!("CARGO_BIN_EXE_cohort"))
                .args([
                    "groups",
                    "--bootstrap-server",
                    &broker.bootstrap(),
                    "--describe",
                    "--group",
                    "behind",
                ])
                .args(extra),
            Duration::from_secs(30),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let before = now_ms();
    let text = describe(&["--lag-seconds"]);
    let after = now_ms();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "", "{text}");
    assert_eq!(
        lines[1],
        "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             LAG-SECONDS  CONSUMER-ID     HOST            CLIENT-ID",
        "{text}"
    );
    let rows: Vec<Vec<&str>> = lines[2..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let row = |p: &str| {
        rows.iter()
            .find(|r| r[1] == "aged" && r[2] == p)
            .unwrap_or_else(|| panic!("no aged-{p} row in\n{text}"))
            .clone()
    };
    assert_eq!(&row("0")[..5], ["behind", "aged", "0", "1", "3"], "{text}");
    assert_eq!(row("0")[5], "2");
    assert_age(
        "describe aged-0",
        row("0")[6].parse().unwrap(),
        p0[1],
        before,
        after,
    );
    assert_eq!(&row("1")[3..7], ["1", "1", "0", "0"], "{text}");
    // Without the flag, Kafka's columns only.
    let plain = describe(&[]);
    assert!(!plain.contains("LAG-SECONDS"), "{plain}");
    assert!(plain.contains("\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n"), "{plain}");
}
