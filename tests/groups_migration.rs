//! Online migration between the classic and the consumer protocol (issue 11 item 5) with real
//! clients none of us wrote, on one `cohort serve`: librdkafka classic + kafka-python classic
//! form a classic group, a librdkafka `group.protocol=consumer` member joins and upgrades it
//! (Kafka 4.0's default `bidirectional` policy), `cohort groups` shows the mixed group as
//! Kafka's tool does, the consumer-protocol member leaves and the group is classic again and
//! keeps consuming. Every record is consumed once and committed. Then the policy as
//! DescribeConfigs BROKER shows it and as `cohort configs --entity-default` changes it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{python_script, Cohort};
use serde_json::{json, Value};

#[test]
fn a_mixed_group_upgrades_and_downgrades_online_consuming_every_record_once() {
    let dir = tempfile::tempdir().unwrap();
    let b = Cohort::start_logged(
        &dir.path().join("data"),
        &[
            "--group-initial-rebalance-delay-ms",
            "500",
            "--group-consumer-migration-policy",
            "BIDIRECTIONAL",
        ],
        "info,cohort::group=debug",
    );
    let out = python_script(
        "groups_migration.py",
        &[&b.bootstrap(), env!("CARGO_BIN_EXE_cohort")],
        Duration::from_secs(400),
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}\nlog:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            b.log()
        )
    });
    let log = || b.log();
    assert_eq!(got["classic_formed"], json!(true), "{got}\nlog:\n{}", log());
    assert_eq!(got["type_before"], json!(["CLASSIC", "STABLE", 2]), "{got}");
    assert_eq!(got["mixed_formed"], json!(true), "{got}\nlog:\n{}", log());
    assert_eq!(got["type_mixed"][0], json!("CONSUMER"), "{got}");
    assert_eq!(got["type_mixed"][2], json!(3), "{got}");

    // `--describe --state --verbose`: a consumer group's row with its epochs and 3 members.
    let state = got["cli_state"].as_str().unwrap();
    let mut lines = state.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "GROUP",
            "COORDINATOR",
            "(ID)",
            "ASSIGNMENT-STRATEGY",
            "STATE",
            "GROUP-EPOCH",
            "TARGET-ASSIGNMENT-EPOCH",
            "#MEMBERS"
        ],
        "{state}"
    );
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(row.first(), Some(&"mig-group"), "{state}");
    assert_eq!(row.last(), Some(&"3"), "{state}");
    assert_ne!(
        row[row.len() - 2],
        "-",
        "a consumer group has epochs: {state}"
    );

    // `--describe --members --verbose`: the UPGRADED column of a mixed group, true for the
    // consumer-protocol member only.
    let members = got["cli_members"].as_str().unwrap();
    let mut lines = members.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header.last(), Some(&"UPGRADED"), "{members}");
    let mut upgraded: Vec<(String, String)> = lines
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols[3].to_owned(), cols.last().unwrap().to_string())
        })
        .collect();
    upgraded.sort();
    assert_eq!(
        upgraded,
        [
            ("kp-classic".to_owned(), "false".to_owned()),
            ("rd-classic".to_owned(), "false".to_owned()),
            ("rd-consumer".to_owned(), "true".to_owned()),
        ],
        "{members}"
    );

    assert_eq!(got["consumed_mixed"], json!(true), "{got}\nlog:\n{}", log());
    assert_eq!(got["classic_again"], json!(true), "{got}\nlog:\n{}", log());
    assert_eq!(got["type_after"][0], json!("CLASSIC"), "{got}");
    assert_eq!(got["type_after"][2], json!(2), "{got}");
    assert_eq!(got["consumed_after"], json!(true), "{got}\nlog:\n{}", log());
    assert_eq!(
        got["every_consumer_consumed"],
        json!(["kp-classic", "rd-classic", "rd-consumer"]),
        "{got}"
    );
    assert_eq!(got["consumed"], json!(900), "{got}\nlog:\n{}", log());
    assert_eq!(got["distinct"], json!(900), "{got}");
    let committed: Vec<Value> = (0..6).map(|p| json!([p, 150])).collect();
    assert_eq!(got["committed"], json!(committed), "{got}");
    assert_eq!(got["errors"], json!([]), "{got}\nlog:\n{}", log());

    // The policy on DescribeConfigs BROKER: the flag's value (Kafka's default, so its source
    // is the default), alterable cluster-wide by name, a name Kafka does not know refused.
    assert_eq!(
        got["policy_flag"],
        json!(["bidirectional", "DEFAULT_CONFIG"]),
        "{got}"
    );
    assert_eq!(
        got["policy_bad"],
        json!([
            1,
            ["java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.InvalidConfigurationException: Invalid value sideways for configuration group.consumer.migration.policy: String must be one of: disabled, downgrade, upgrade, bidirectional"]
        ]),
        "{got}"
    );
    assert_eq!(got["policy_set"], json!([0, []]), "{got}");
    assert_eq!(
        got["policy_after"],
        json!(["upgrade", "DYNAMIC_DEFAULT_BROKER_CONFIG"]),
        "{got}"
    );
}
