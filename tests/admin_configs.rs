//! Topic configs, partitions and records administered through real clients (confluent-kafka
//! and kafka-python): read back after a restart of the broker on the same data.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{python_script, Cohort};

fn run(broker: &Cohort, phase: &str) -> serde_json::Value {
    let out = python_script(
        "admin_configs.py",
        &[&broker.bootstrap(), phase],
        Duration::from_secs(180),
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\nstderr: {}\nlog:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            broker.log()
        )
    })
}

#[test]
fn configs_partitions_and_records_through_python_admin_clients_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &[]);
    let got = run(&broker, "first");
    eprintln!("first: {got:#}");
    let expected = serde_json::json!({
        "PLACEHOLDER": true,
    });
    assert_eq!(got, expected, "log:\n{}", broker.log());
    broker.terminate();
    let broker = Cohort::start(&data, &[]);
    let again = run(&broker, "again");
    eprintln!("again: {again:#}");
}
