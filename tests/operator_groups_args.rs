//! `cohort groups` argument handling, run as the real binary: the usage errors, their stream
//! and exit code are those of Kafka 4.0's `kafka-consumer-groups.sh`. No broker is needed: every
//! case is refused before any connection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn groups(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cohort"))
        .arg("groups")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

const BS: [&str; 2] = ["--bootstrap-server", "127.0.0.1:1"];

fn with_bs<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = BS.to_vec();
    v.extend_from_slice(rest);
    v
}

#[test]
fn usage_errors_print_message_then_help_on_stderr_and_exit_1() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![], "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets."),
        (vec!["--list"], "Missing required argument \"[bootstrap-server]\""),
        (with_bs(&["--describe"]), "Option [describe] takes one of these options: [all-groups], [group]"),
        (with_bs(&["--describe", "--group", "g", "--members", "--state"]), "Option [describe] takes at most one of these options: [members], [offsets], [state]"),
        (with_bs(&["--describe", "--group", "g", "--state", "x"]), "Option [describe] does not take a value for [state]"),
        (with_bs(&["--delete"]), "Option [delete] takes one of these options: [all-groups], [group]"),
        (with_bs(&["--delete", "--group", "g", "--topic", "t"]), "The consumer does not support topic-specific offset deletion from a consumer group."),
        (with_bs(&["--delete-offsets", "--group", "g"]), "Option [delete-offsets] takes the following options: [topic], [group]"),
        (with_bs(&["--reset-offsets", "--group", "g", "--dry-run", "--execute"]), "Option [reset-offsets] only accepts one of [execute] and [dry-run]"),
        (with_bs(&["--reset-offsets", "--dry-run", "--to-latest"]), "Option [reset-offsets] takes one of these options: [all-groups], [group]"),
        (with_bs(&["--reset-offsets", "--group", "g", "--dry-run", "--to-latest", "--shift-by", "1"]), "Option \"[to-latest]\" can't be used with option \"[shift-by]\""),
        (with_bs(&["--list", "--group", "g"]), "Option \"[group]\" can't be used with option \"[list]\""),
        (with_bs(&["--describe", "--group", "g", "--all-groups"]), "Option \"[group]\" can't be used with option \"[all-groups]\""),
        (with_bs(&[]), "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets"),
    ];
    for (args, message) in cases {
        let (code, out, err) = groups(&args);
        assert_eq!(code, Some(1), "{args:?}");
        assert_eq!(out, "", "{args:?}");
        let mut lines = err.lines();
        assert_eq!(lines.next(), Some(message), "{args:?}");
        assert!(
            err.contains("\n--bootstrap-server <server to connect to>"),
            "help follows: {err}"
        );
    }
}

#[test]
fn reset_without_execute_warns_first() {
    let (code, _, err) = groups(&with_bs(&["--reset-offsets", "--to-latest"]));
    assert_eq!(code, Some(1));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], "WARN: No action will be performed as the --execute option is missing.In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.");
    assert_eq!(
        lines[1],
        "Option [reset-offsets] takes one of these options: [all-groups], [group]"
    );
}

#[test]
fn parse_failures_read_like_the_jvm_and_exit_1() {
    let (code, out, err) = groups(&with_bs(&["--list", "--zookeeper", "z"]));
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert_eq!(err, "Exception in thread \"main\" joptsimple.UnrecognizedOptionException: zookeeper is not a recognized option\n");
    let (code, _, err) = groups(&with_bs(&["--list", "--members"]));
    assert_eq!(code, Some(1));
    assert_eq!(err, "Exception in thread \"main\" joptsimple.UnavailableOptionException: Option(s) [members] are unavailable given other options on the command line\n");
    let (code, _, err) = groups(&with_bs(&["--describe", "--group"]));
    assert_eq!(code, Some(1));
    assert_eq!(err, "Exception in thread \"main\" joptsimple.OptionMissingRequiredArgumentException: Option group requires an argument\n");
}

#[test]
fn an_unreachable_broker_fails_like_kafkas_tool_within_the_timeout() {
    // Nobody listens on port 1; Kafka's tool reports the Admin timeout and still exits 0.
    let started = std::time::Instant::now();
    let (code, out, err) = groups(&with_bs(&["--list", "--timeout", "500"]));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "\nError: Executing consumer group command failed due to java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. Call: listConsumerGroups\n"
    );
    assert!(err.starts_with("java.lang.RuntimeException: "), "{err}");
}
