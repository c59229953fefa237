//! `cohort bench` end to end at toy sizes: it starts its brokers (Cohort and the naive
//! baseline), forms groups over the wire, drives them, and prints figures with no errors.
//! Only the plumbing is checked here; the figures themselves live in docs/BENCHMARKS.md.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn bench(args: &[&str]) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cohort"))
        .arg("bench")
        .args(args)
        .arg("--dir")
        .arg(scratch.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "cohort bench {args:?} failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Started brokers and the fsync probe clean up after themselves.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    stdout
}

/// The number in column `col` of the table row starting with `| label |`.
fn cell(report: &str, label: &str, col: usize) -> f64 {
    let row = report
        .lines()
        .find(|l| l.starts_with(&format!("| {label} |")))
        .unwrap_or_else(|| panic!("no row {label} in\n{report}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    cells[col + 1]
        .parse()
        .unwrap_or_else(|_| panic!("column {col} of {row}"))
}

#[test]
fn commits_against_cohort_and_the_naive_baseline() {
    let report = bench(&[
        "commits",
        "--members",
        "6",
        "--groups",
        "2",
        "--partitions",
        "3",
        "--duration-secs",
        "1",
        "--warmup-secs",
        "0",
        "--fsync-probe-writes",
        "20",
        "--heartbeat-interval-ms",
        "100",
    ]);
    for label in ["cohort", "naive baseline"] {
        let row = report
            .lines()
            .find(|l| l.starts_with(&format!("| {label} |")))
            .unwrap_or_else(|| panic!("no row {label} in\n{report}"));
        assert!(row.contains("| none |"), "errors in {row}");
        let commits = cell(&report, label, 1);
        assert!(commits > 0.0, "{report}");
        // Every commit carries 3 partitions.
        assert!(
            (cell(&report, label, 2) - commits * 3.0).abs() <= 3.0,
            "{report}"
        );
        assert!(cell(&report, label, 7) > 0.0, "no heartbeats: {report}");
    }
    assert!(
        report.contains("fdatasync of the disk (20 appends"),
        "{report}"
    );
    assert!(
        report.contains("cohort / naive baseline: "),
        "no ratio: {report}"
    );
    // The baseline's knobs reached its broker: one command per Raft entry.
    assert!(
        report.contains("raft, naive baseline: 1.0 commands/entry"),
        "{report}"
    );
}

#[test]
fn offset_fetch_reads_back_every_seeded_offset() {
    let report = bench(&[
        "offset-fetch",
        "--partitions",
        "10",
        "--groups",
        "2",
        "--connections",
        "2",
        "--duration-secs",
        "1",
        "--warmup-secs",
        "0",
    ]);
    assert!(cell(&report, "OffsetFetch", 1) > 0.0, "{report}");
    assert!(
        (cell(&report, "OffsetFetch", 2) - cell(&report, "OffsetFetch", 1) * 10.0).abs() <= 10.0,
        "{report}"
    );
    assert!(!report.contains("WRONG"), "{report}");
    assert!(cell(&report, "ApiVersions", 1) > 0.0, "{report}");
}

#[test]
fn consumer_heartbeats_that_change_nothing_write_nothing() {
    // One member per group: it joins, is given every partition, acks, and is steady from then
    // on; the broker's 5 s interval puts at least one steady heartbeat per member in the
    // 6 s window.
    let report = bench(&[
        "consumer-heartbeats",
        "--members",
        "4",
        "--groups",
        "4",
        "--partitions-per-member",
        "2",
        "--heartbeat-interval-ms",
        "200",
        "--warmup-secs",
        "3",
        "--duration-secs",
        "6",
    ]);
    let consumer = "consumer (ConsumerGroupHeartbeat)";
    let classic = "classic (Heartbeat), baseline";
    for label in [consumer, classic] {
        let row = report
            .lines()
            .find(|l| l.starts_with(&format!("| {label} |")))
            .unwrap_or_else(|| panic!("no row {label} in\n{report}"));
        assert!(row.contains("| none |"), "errors in {row}");
        assert!(cell(&report, label, 1) > 0.0, "no heartbeats: {report}");
    }
    // Nothing but steady heartbeats in the window, and no Raft entry for them.
    assert_eq!(cell(&report, consumer, 7), 0.0, "{report}");
    let row = report
        .lines()
        .find(|l| l.starts_with(&format!("| {consumer} |")))
        .unwrap();
    assert!(row.contains("| 0 (0) |"), "Raft writes in {row}");
    assert!(
        report
            .contains("consumer: 4 members own 8 partitions at the end; broker's interval 5000 ms"),
        "{report}"
    );
    assert!(
        report.contains("broker CPU per heartbeat, consumer / classic: "),
        "no ratio: {report}"
    );
}
