//! Topic administration through real client libraries: kafka-python and confluent-kafka
//! (librdkafka) create, list, describe and delete topics and get Kafka's error codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{python_script, Cohort};

#[test]
fn python_admin_clients_create_describe_and_delete_topics() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let out = python_script(
        "admin_topics.py",
        &[&broker.bootstrap()],
        Duration::from_secs(120),
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let expected = serde_json::json!({
        "kp_create": [["kp-topic", 0, 3]],
        "kp_again": "TopicAlreadyExistsError",
        "kp_describe": [["kp-topic", 3, 1]],
        "kp_after_delete": [],
        "ck_create": {
            "ck-topic": "ok",
            "ck-rf3": "INVALID_REPLICATION_FACTOR",
            "ck bad": "TOPIC_EXCEPTION",
            "ck-cfg": "INVALID_CONFIG",
        },
        "ck_list": {"ck-topic": 2},
        "ck_delete": {"ck-topic": "ok", "never-was": "UNKNOWN_TOPIC_OR_PART"},
    });
    assert_eq!(got, expected, "log:\n{}", broker.log());
}
