//! `cohort configs`, `cohort topics --alter` and `cohort records --delete` against a live
//! `cohort serve`: each command's output and exit code byte for byte in the formats of Kafka
//! 4.0's `ConfigCommand`, `TopicCommand` and `DeleteRecordsCommand`, and confluent-kafka's
//! AdminClient seeing what the tool changed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::{Command, Output};
use std::time::Duration;

use common::{python_script, run, Cohort};

fn tool(cohort: &Cohort, name: &str, args: &[&str]) -> Output {
    run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg(name)
            .args(["--bootstrap-server", &cohort.bootstrap()])
            .args(args),
        Duration::from_secs(90),
    )
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// (stdout, stderr, exit code).
fn outcome(o: &Output) -> (String, String, Option<i32>) {
    (text(&o.stdout), text(&o.stderr), o.status.code())
}

fn python(cohort: &Cohort, args: &[&str]) -> serde_json::Value {
    let mut all = vec![cohort.bootstrap()];
    all.extend(args.iter().map(|a| a.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let out = python_script("operator_admin.py", &all, Duration::from_secs(90));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\nstderr: {}", text(&out.stdout), text(&out.stderr)))
}

/// The line Kafka's `ConfigCommand.main` prints before an unexpected exception.
fn error_header(cohort: &Cohort, args: &[&str]) -> String {
    let mut all = vec!["--bootstrap-server".to_string(), cohort.bootstrap()];
    all.extend(args.iter().map(|a| a.to_string()));
    format!(
        "Error while executing config command with args '{}'\n",
        all.join(" ")
    )
}

#[test]
fn configs_describe_and_alter_like_kafka_configs() {
    let dir = tempfile::tempdir().unwrap();
    let cohort = Cohort::start(&dir.path().join("data"), &["--auto-create-topics=false"]);
    let out = tool(
        &cohort,
        "topics",
        &["--create", "--topic", "orders", "--partitions", "2"],
    );
    assert_eq!(outcome(&out).0, "Created topic orders.\n");

    let describe = [
        "--entity-type",
        "topics",
        "--entity-name",
        "orders",
        "--describe",
    ];
    assert_eq!(
        outcome(&tool(&cohort, "configs", &describe)),
        (
            "Dynamic configs for topic orders are:\n".into(),
            String::new(),
            Some(0)
        )
    );

    // kafka-configs.sh's own example: square brackets group a list value.
    let out = tool(
        &cohort,
        "configs",
        &[
            "--entity-type",
            "topics",
            "--entity-name",
            "orders",
            "--alter",
            "--add-config",
            "retention.ms=60000,cleanup.policy=[compact,delete]",
        ],
    );
    assert_eq!(
        outcome(&out),
        (
            "Completed updating config for topic orders.\n".into(),
            String::new(),
            Some(0)
        )
    );
    assert_eq!(
        outcome(&tool(&cohort, "configs", &describe)),
        (
            "Dynamic configs for topic orders are:\n\
             \x20 cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}\n\
             \x20 retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000, DEFAULT_CONFIG:log.retention.hours=168}\n"
                .into(),
            String::new(),
            Some(0)
        )
    );
    assert_eq!(
        python(&cohort, &["configs", "topic", "orders"]),
        serde_json::json!({
            "cleanup.policy": ["compact,delete", "DYNAMIC_TOPIC_CONFIG"],
            "retention.ms": ["60000", "DYNAMIC_TOPIC_CONFIG"],
        })
    );

    // --all lists every key, sorted, defaults with their broker synonym.
    let out = tool(
        &cohort,
        "configs",
        &[
            "--entity-type",
            "topics",
            "--entity-name",
            "orders",
            "--describe",
            "--all",
        ],
    );
    let all = text(&out.stdout);
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines[0], "All configs for topic orders are:", "{all}");
    let names: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.trim_start().split('=').next().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(lines.contains(&"  segment.bytes=1073741824 sensitive=false synonyms={DEFAULT_CONFIG:log.segment.bytes=1073741824}"), "{all}");
    assert!(lines.contains(&"  retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000, DEFAULT_CONFIG:log.retention.hours=168}"), "{all}");

    // --delete-config, then deleting what is not set.
    let out = tool(
        &cohort,
        "configs",
        &[
            "--topic",
            "orders",
            "--alter",
            "--delete-config",
            "retention.ms",
        ],
    );
    assert_eq!(
        outcome(&out),
        (
            "Completed updating config for topic orders.\n".into(),
            String::new(),
            Some(0)
        )
    );
    assert_eq!(
        python(&cohort, &["configs", "topic", "orders"]),
        serde_json::json!({"cleanup.policy": ["compact,delete", "DYNAMIC_TOPIC_CONFIG"]})
    );
    let out = tool(
        &cohort,
        "configs",
        &[
            "--topic",
            "orders",
            "--alter",
            "--delete-config",
            "segment.ms,retention.ms",
        ],
    );
    assert_eq!(
        outcome(&out),
        (
            String::new(),
            "Invalid config(s): segment.ms,retention.ms\n".into(),
            Some(1)
        )
    );

    // A value the broker refuses: the exception as Kafka's tool prints it.
    let args = [
        "--entity-type",
        "topics",
        "--entity-name",
        "orders",
        "--alter",
        "--add-config",
        "segment.bytes=12",
    ];
    let (stdout, stderr, code) = outcome(&tool(&cohort, "configs", &args));
    assert_eq!((stdout.as_str(), code), ("", Some(1)));
    assert_eq!(
        stderr,
        format!(
            "{}java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.InvalidConfigurationException: Invalid value 12 for configuration segment.bytes: a number between 1048576 and 2147483647\n",
            error_header(&cohort, &args)
        )
    );
    let args = [
        "--entity-type",
        "topics",
        "--entity-name",
        "nope",
        "--describe",
    ];
    let (stdout, stderr, code) = outcome(&tool(&cohort, "configs", &args));
    assert_eq!(
        (stdout.as_str(), code),
        ("Dynamic configs for topic nope are:\n", Some(1))
    );
    assert!(
        stderr.starts_with(&format!(
            "{}java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: ",
            error_header(&cohort, &args)
        )),
        "{stderr}"
    );
    let (_, stderr, code) = outcome(&tool(&cohort, "configs", &["--topic", "a b", "--describe"]));
    assert_eq!(code, Some(1));
    assert!(stderr.ends_with("\norg.apache.kafka.common.errors.InvalidTopicException: Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'\n"), "{stderr}");

    // Brokers: the cluster-wide default through AlterConfigs of the whole dynamic set.
    let out = tool(
        &cohort,
        "configs",
        &[
            "--entity-type",
            "brokers",
            "--entity-default",
            "--alter",
            "--add-config",
            "group.max.size=50",
        ],
    );
    assert_eq!(
        outcome(&out),
        (
            "Completed updating default config for brokers in the cluster.\n".into(),
            String::new(),
            Some(0)
        )
    );
    let out = tool(
        &cohort,
        "configs",
        &[
            "--broker-defaults",
            "--alter",
            "--add-config",
            "group.initial.rebalance.delay.ms=100",
        ],
    );
    assert_eq!(outcome(&out).2, Some(0), "{:?}", outcome(&out));
    let default_lines = "Default configs for brokers in the cluster are:\n\
        \x20 group.initial.rebalance.delay.ms=100 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:group.initial.rebalance.delay.ms=100}\n\
        \x20 group.max.size=50 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:group.max.size=50}\n";
    assert_eq!(
        outcome(&tool(
            &cohort,
            "configs",
            &["--entity-type", "brokers", "--entity-default", "--describe"]
        )),
        (default_lines.to_string(), String::new(), Some(0))
    );
    // Every broker, then the default, as Kafka's tool lists them without a name.
    assert_eq!(
        outcome(&tool(
            &cohort,
            "configs",
            &["--entity-type", "brokers", "--describe"]
        )),
        (
            format!("Dynamic configs for broker 1 are:\n{default_lines}"),
            String::new(),
            Some(0)
        )
    );
    // confluent-kafka refuses the empty broker name; broker 1 lists the cluster-wide
    // dynamic defaults with their source.
    assert_eq!(
        python(
            &cohort,
            &["configs", "broker", "1", "DYNAMIC_DEFAULT_BROKER_CONFIG"]
        ),
        serde_json::json!({
            "group.initial.rebalance.delay.ms": ["100", "DYNAMIC_DEFAULT_BROKER_CONFIG"],
            "group.max.size": ["50", "DYNAMIC_DEFAULT_BROKER_CONFIG"],
        })
    );
    let out = tool(
        &cohort,
        "configs",
        &[
            "--broker-defaults",
            "--alter",
            "--delete-config",
            "group.max.size",
        ],
    );
    assert_eq!(
        outcome(&out).0,
        "Completed updating default config for brokers in the cluster.\n"
    );
    assert_eq!(
        python(
            &cohort,
            &["configs", "broker", "1", "DYNAMIC_DEFAULT_BROKER_CONFIG"]
        ),
        serde_json::json!({"group.initial.rebalance.delay.ms": ["100", "DYNAMIC_DEFAULT_BROKER_CONFIG"]})
    );
    let out = tool(
        &cohort,
        "configs",
        &[
            "--entity-type",
            "brokers",
            "--entity-name",
            "1",
            "--describe",
            "--all",
        ],
    );
    let all = text(&out.stdout);
    assert!(all.starts_with("All configs for broker 1 are:\n"), "{all}");
    assert!(
        all.contains("\n  node.id=1 sensitive=false synonyms={DEFAULT_CONFIG:node.id=1}\n"),
        "{all}"
    );

    // Argument errors: Kafka's words on stderr, exit 1.
    let out = tool(
        &cohort,
        "configs",
        &["--entity-type", "topics", "--describe", "--entity-default"],
    );
    assert_eq!(
        outcome(&out),
        (
            String::new(),
            "--entity-default must not be specified with --describe of topics\n".into(),
            Some(1)
        )
    );
    let out = tool(
        &cohort,
        "configs",
        &["--topic", "orders", "--alter", "--add-config", "novalue"],
    );
    assert_eq!(
        outcome(&out),
        (
            String::new(),
            "requirement failed: Invalid entity config: all configs to be added must be in the format \"key=val\".\n".into(),
            Some(1)
        )
    );
}

#[test]
fn topics_alter_grows_partitions_like_kafka_topics() {
    let dir = tempfile::tempdir().unwrap();
    let cohort = Cohort::start(&dir.path().join("data"), &["--auto-create-topics=false"]);
    assert_eq!(
        outcome(&tool(
            &cohort,
            "topics",
            &["--create", "--topic", "grow", "--partitions", "2"]
        ))
        .0,
        "Created topic grow.\n"
    );
    // kafka-topics.sh --alter prints nothing when it succeeds.
    assert_eq!(
        outcome(&tool(
            &cohort,
            "topics",
            &["--alter", "--topic", "grow", "--partitions", "4"]
        )),
        (String::new(), String::new(), Some(0))
    );
    assert_eq!(
        python(&cohort, &["partitions", "grow"]),
        serde_json::json!({"partitions": 4})
    );
    let described = text(&tool(&cohort, "topics", &["--describe", "--topic", "grow"]).stdout);
    assert!(described.contains("\tPartitionCount: 4\t"), "{described}");
    assert_eq!(described.lines().count(), 5, "{described}");

    // Placement from --replica-assignment: the lists from the current count on are used.
    assert_eq!(
        outcome(&tool(
            &cohort,
            "topics",
            &[
                "--alter",
                "--topic",
                "grow",
                "--partitions",
                "6",
                "--replica-assignment",
                "1,1,1,1,1,1"
            ],
        )),
        (String::new(), String::new(), Some(0))
    );
    assert_eq!(
        python(&cohort, &["partitions", "grow"]),
        serde_json::json!({"partitions": 6})
    );

    for shrink_or_same in ["6", "3"] {
        let (stdout, _, code) = outcome(&tool(
            &cohort,
            "topics",
            &["--alter", "--topic", "grow", "--partitions", shrink_or_same],
        ));
        assert_eq!(code, Some(1));
        assert!(
            stdout.starts_with("Error while executing topic command : ") && stdout.ends_with('\n'),
            "{stdout}"
        );
    }
    assert_eq!(
        python(&cohort, &["partitions", "grow"]),
        serde_json::json!({"partitions": 6})
    );

    assert_eq!(
        outcome(&tool(&cohort, "topics", &["--alter", "--topic", "nope", "--partitions", "3"])),
        (
            "Error while executing topic command : Topic 'Optional[nope]' does not exist as expected\n".into(),
            String::new(),
            Some(1)
        )
    );
    assert_eq!(
        outcome(&tool(
            &cohort,
            "topics",
            &[
                "--alter",
                "--topic",
                "nope",
                "--partitions",
                "3",
                "--if-exists"
            ]
        )),
        (String::new(), String::new(), Some(0))
    );
    let (_, stderr, code) = outcome(&tool(&cohort, "topics", &["--alter", "--topic", "grow"]));
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("Missing required argument \"[partitions]\"\n"),
        "{stderr}"
    );
}

#[test]
fn records_delete_like_kafka_delete_records() {
    let dir = tempfile::tempdir().unwrap();
    let cohort = Cohort::start(&dir.path().join("data"), &["--auto-create-topics=false"]);
    assert_eq!(
        outcome(&tool(
            &cohort,
            "topics",
            &["--create", "--topic", "rec", "--partitions", "2"]
        ))
        .0,
        "Created topic rec.\n"
    );
    let base = 1_700_000_000_000i64;
    let stamps = |n: i64| {
        (0..n)
            .map(|i| (base + i).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    python(&cohort, &["produce", "rec", "0", &stamps(10)]);
    python(&cohort, &["produce", "rec", "1", &stamps(4)]);

    let file = dir.path().join("offsets.json");
    std::fs::write(
        &file,
        r#"{"partitions":[{"topic":"rec","partition":0,"offset":5},{"topic":"rec","partition":1,"offset":-1}],"version":1}"#,
    )
    .unwrap();
    let path = file.to_str().unwrap();
    // rec-0 then rec-1: their TopicPartition hashes fall in buckets 0 and 1 of the tool's
    // 16-bucket HashMap.
    assert_eq!(
        outcome(&tool(&cohort, "records", &["--delete", "--offset-json-file", path])),
        (
            "Executing records delete operation\nRecords delete operation completed:\npartition: rec-0\tlow_watermark: 5\npartition: rec-1\tlow_watermark: 4\n".into(),
            String::new(),
            Some(0)
        )
    );
    assert_eq!(
        python(&cohort, &["earliest", "rec", "2"]),
        serde_json::json!({"earliest": [5, 4]})
    );

    // Past the high watermark: the partition's error, exit 0, nothing moved. The flag-less
    // command line of kafka-delete-records.sh works as well.
    std::fs::write(
        &file,
        r#"{"partitions":[{"topic":"rec","partition":0,"offset":100}]}"#,
    )
    .unwrap();
    assert_eq!(
        outcome(&tool(&cohort, "records", &["--offset-json-file", path])),
        (
            "Executing records delete operation\nRecords delete operation completed:\npartition: rec-0\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset is not within the range of offsets maintained by the server.\n".into(),
            String::new(),
            Some(0)
        )
    );
    assert_eq!(
        python(&cohort, &["earliest", "rec", "2"]),
        serde_json::json!({"earliest": [5, 4]})
    );

    std::fs::write(&file, "{not json").unwrap();
    assert_eq!(
        outcome(&tool(&cohort, "records", &["--delete", "--offset-json-file", path])),
        (
            String::new(),
            "Exception in thread \"main\" org.apache.kafka.server.common.AdminOperationException: The input string is not a valid JSON\n".into(),
            Some(1)
        )
    );
    std::fs::write(
        &file,
        r#"{"partitions":[{"topic":"rec","partition":1,"offset":1},{"topic":"rec","partition":1,"offset":2}],"version":1}"#,
    )
    .unwrap();
    assert_eq!(
        outcome(&tool(&cohort, "records", &["--offset-json-file", path])),
        (
            String::new(),
            "Exception in thread \"main\" org.apache.kafka.server.common.AdminCommandFailedException: Offset json file contains duplicate topic partitions: rec-1\n".into(),
            Some(1)
        )
    );
    let (_, stderr, code) = outcome(&tool(&cohort, "records", &["--delete"]));
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("Missing required argument \"[offset-json-file]\"\n"),
        "{stderr}"
    );
}
