//! `cohort topics` against a live `cohort serve`: every action's exact output and exit code, the
//! way an operator who knows `kafka-topics.sh` would run it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::{Command, Output};

use common::Cohort;

fn topics(cohort: &Cohort, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cohort"))
        .arg("topics")
        .args(["--bootstrap-server", &cohort.bootstrap()])
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

#[test]
fn create_list_describe_delete_like_kafka_topics() {
    let dir = tempfile::tempdir().unwrap();
    let cohort = Cohort::start(&dir.path().join("data"), &["--auto-create-topics=false"]);

    let out = topics(
        &cohort,
        &["--create", "--topic", "orders", "--partitions", "3"],
    );
    assert_eq!(text(&out.stdout), "Created topic orders.\n");
    assert_eq!(out.status.code(), Some(0));

    let out = topics(&cohort, &["--create", "--topic", "pay_ments.v1"]);
    assert_eq!(
        text(&out.stdout),
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.\nCreated topic pay_ments.v1.\n"
    );

    let out = topics(&cohort, &["--list"]);
    assert_eq!(text(&out.stdout), "orders\npay_ments.v1\n");

    let out = topics(&cohort, &["--describe", "--topic", "orders"]);
    let described = text(&out.stdout);
    let lines: Vec<&str> = described.lines().collect();
    assert_eq!(lines.len(), 4, "{described}");
    let head: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(head[0], "Topic: orders");
    assert!(
        head[1].starts_with("TopicId: ") && head[1].len() == "TopicId: ".len() + 22,
        "{described}"
    );
    assert_eq!(
        &head[2..],
        ["PartitionCount: 3", "ReplicationFactor: 1", "Configs: "]
    );
    // Described by DescribeTopicPartitions, as Kafka 4.x's tool does: the (empty) ELR lists
    // are reported, so they print empty rather than N/A.
    for (p, line) in lines[1..].iter().enumerate() {
        assert_eq!(
            *line,
            format!("\tTopic: orders\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: ")
        );
    }

    let out = topics(&cohort, &["--create", "--topic", "orders"]);
    assert_eq!(
        text(&out.stdout),
        "Error while executing topic command : Topic 'orders' already exists.\n"
    );
    assert_eq!(out.status.code(), Some(1));
    let out = topics(
        &cohort,
        &["--create", "--topic", "orders", "--if-not-exists"],
    );
    assert_eq!(
        (text(&out.stdout).as_str(), out.status.code()),
        ("", Some(0))
    );

    let out = topics(&cohort, &["--describe", "--topic", "missing"]);
    assert_eq!(
        text(&out.stdout),
        "Error while executing topic command : Topic 'Optional[missing]' does not exist as expected\n"
    );
    assert_eq!(out.status.code(), Some(1));
    let out = topics(
        &cohort,
        &["--describe", "--topic", "missing", "--if-exists"],
    );
    assert_eq!(
        (text(&out.stdout).as_str(), out.status.code()),
        ("", Some(0))
    );

    let out = topics(
        &cohort,
        &["--create", "--topic", "bad", "--partitions", "0"],
    );
    assert_eq!(
        text(&out.stdout),
        "Error while executing topic command : The partitions must be greater than 0\n"
    );
    assert_eq!(out.status.code(), Some(1));

    let out = topics(&cohort, &["--delete", "--topic", "pay_ments.v1"]);
    assert_eq!(
        (text(&out.stdout).as_str(), out.status.code()),
        ("", Some(0))
    );
    let out = topics(&cohort, &["--list"]);
    assert_eq!(text(&out.stdout), "orders\n");
}

#[test]
fn argument_errors_exit_1_with_kafkas_words() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "Create, delete, describe, or change a topic.\n"),
        (&["--bootstrap-server", "127.0.0.1:1"], "Command must include exactly one action: --list, --describe, --create, --alter or --delete\n"),
        (&["--create", "--topic", "t"], "--bootstrap-server must be specified\n"),
        (&["--bootstrap-server", "127.0.0.1:1", "--create"], "Missing required argument \"[topic]\"\n"),
        (&["--bootstrap-server", "127.0.0.1:1", "--list", "--nope"], "nope is not a recognized option\n"),
    ];
    for (args, first_line) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg("topics")
            .args(*args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            text(&out.stderr).starts_with(first_line),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "", "{args:?}");
    }
}
