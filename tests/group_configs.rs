//! GROUP config resources (decision 0146): confluent-kafka's AdminClient sets, describes and
//! is refused overrides as Kafka answers them; a consumer-protocol heartbeat over the wire
//! gets the overridden interval; the overrides survive a restart and go with the group.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::raw::RawClient;
use common::{python_script, Cohort};
use kafka_protocol::messages::consumer_group_heartbeat_request::ConsumerGroupHeartbeatRequest;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{
    ApiKey, DeleteGroupsRequest, DescribeConfigsRequest, GroupId, IncrementalAlterConfigsRequest,
    RequestKind, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use serde_json::json;

const GROUP: &str = "cg";
const RESOURCE_GROUP: i8 = 32;

fn admin(broker: &Cohort, phase: &str) -> serde_json::Value {
    let out = python_script(
        "group_configs.py",
        &[&broker.bootstrap(), GROUP, phase],
        Duration::from_secs(120),
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

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

/// A consumer-protocol heartbeat (v0): joining (epoch 0) or leaving (epoch −1).
fn heartbeat(raw: &mut RawClient, member: &str, epoch: i32) -> (i16, String, i32, i32) {
    let joining = epoch == 0;
    let req = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(GroupId(s(GROUP)))
        .with_member_id(s(member))
        .with_member_epoch(epoch)
        .with_rebalance_timeout_ms(if joining { 30_000 } else { -1 })
        .with_subscribed_topic_names(joining.then(|| vec![TopicName(s("orders"))]))
        .with_topic_partitions(joining.then(Vec::new));
    match raw.call(
        ApiKey::ConsumerGroupHeartbeat,
        0,
        RequestKind::ConsumerGroupHeartbeat(req),
    ) {
        ResponseKind::ConsumerGroupHeartbeat(r) => (
            r.error_code,
            r.member_id.map(|m| m.to_string()).unwrap_or_default(),
            r.member_epoch,
            r.heartbeat_interval_ms,
        ),
        other => panic!("{other:?}"),
    }
}

/// IncrementalAlterConfigs v1 of one GROUP resource: (error code, message).
fn alter(raw: &mut RawClient, group: &str, configs: &[(&str, i8, Option<&str>)]) -> (i16, String) {
    let resource = AlterConfigsResource::default()
        .with_resource_type(RESOURCE_GROUP)
        .with_resource_name(s(group))
        .with_configs(
            configs
                .iter()
                .map(|(k, op, v)| {
                    AlterableConfig::default()
                        .with_name(s(k))
                        .with_config_operation(*op)
                        .with_value(v.map(s))
                })
                .collect(),
        );
    let req = IncrementalAlterConfigsRequest::default().with_resources(vec![resource]);
    match raw.call(
        ApiKey::IncrementalAlterConfigs,
        1,
        RequestKind::IncrementalAlterConfigs(req),
    ) {
        ResponseKind::IncrementalAlterConfigs(r) => (
            r.responses[0].error_code,
            r.responses[0]
                .error_message
                .as_ref()
                .map(|m| m.to_string())
                .unwrap_or_default(),
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn group_configs_through_the_admin_client_reach_heartbeats_survive_restart_and_go_with_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut broker = Cohort::start(&data, &[]);
    let mut raw = RawClient::connect(broker.listener("PLAINTEXT"));
    assert_eq!(raw.create_topic("orders", 2, &[]), 0);

    let set = json!({
        "consumer.heartbeat.interval.ms": ["7000", "GROUP_CONFIG", false, false],
        "consumer.session.timeout.ms": ["50000", "GROUP_CONFIG", false, false],
    });
    let got = admin(&broker, "first");
    let expected = json!({
        "defaults": {
            "consumer.heartbeat.interval.ms": ["5000", "DEFAULT_CONFIG", false, false],
            "consumer.session.timeout.ms": ["45000", "DEFAULT_CONFIG", false, false],
        },
        "set": "ok",
        "described": set.clone(),
        "too_small": ["INVALID_CONFIG",
            "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"],
        "too_large": ["INVALID_CONFIG",
            "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"],
        "not_int": ["INVALID_CONFIG",
            "Invalid value soon for configuration consumer.session.timeout.ms: Not a number of type INT"],
        "unknown": ["INVALID_CONFIG", "Unknown group config name: consumer.rebalance.timeout.ms"],
        "validate_only_bad": ["INVALID_CONFIG",
            "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"],
        "validate_only_good": "ok",
        "after_refusals": set.clone(),
        "legacy": "ok",
        "after_legacy": {
            "consumer.heartbeat.interval.ms": ["5000", "DEFAULT_CONFIG", false, false],
            "consumer.session.timeout.ms": ["55000", "GROUP_CONFIG", false, false],
        },
        "reset": "ok",
    });
    assert_eq!(got, expected, "log:\n{}", broker.log());

    // A consumer-protocol member of the group is told the group's interval.
    let (code, member, epoch, interval) = heartbeat(&mut raw, "", 0);
    assert_eq!((code, interval), (0, 7_000), "log:\n{}", broker.log());
    assert!(epoch > 0);
    assert_eq!(heartbeat(&mut raw, &member, -1).0, 0);

    // Raw refusals Kafka answers before its validator.
    let key = "consumer.session.timeout.ms";
    assert_eq!(
        alter(&mut raw, GROUP, &[(key, 2, Some("1"))]),
        (
            40,
            format!("Can't APPEND to key {key} because its type is not LIST.")
        )
    );
    assert_eq!(
        alter(&mut raw, GROUP, &[(key, 0, None)]),
        (42, format!("Null value not supported for : {key}"))
    );
    assert_eq!(
        alter(&mut raw, "", &[(key, 0, Some("50000"))]),
        (42, "Default group resources are not allowed.".to_owned())
    );
    assert_eq!(
        alter(&mut raw, GROUP, &[(key, 0, Some("0"))]),
        (
            40,
            format!("Invalid value 0 for configuration {key}: Value must be at least 1")
        )
    );
    let describe =
        DescribeConfigsRequest::default().with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(RESOURCE_GROUP)
            .with_resource_name(s(""))]);
    match raw.call(
        ApiKey::DescribeConfigs,
        4,
        RequestKind::DescribeConfigs(describe),
    ) {
        ResponseKind::DescribeConfigs(r) => {
            assert_eq!(r.results[0].error_code, 42);
            assert_eq!(
                r.results[0].error_message.as_deref(),
                Some("Group name must not be empty")
            );
        }
        other => panic!("{other:?}"),
    }

    // The overrides are replicated state: a restart reads them back.
    drop(raw);
    broker.terminate();
    let broker = Cohort::start(&data, &[]);
    assert_eq!(
        admin(&broker, "again"),
        json!({"described": set}),
        "log:\n{}",
        broker.log()
    );
    let mut raw = RawClient::connect(broker.listener("PLAINTEXT"));
    let (code, member, _, interval) = heartbeat(&mut raw, "", 0);
    assert_eq!((code, interval), (0, 7_000), "log:\n{}", broker.log());
    assert_eq!(heartbeat(&mut raw, &member, -1).0, 0);

    // Deleting the group deletes its overrides.
    let delete = DeleteGroupsRequest::default().with_groups_names(vec![GroupId(s(GROUP))]);
    match raw.call(ApiKey::DeleteGroups, 2, RequestKind::DeleteGroups(delete)) {
        ResponseKind::DeleteGroups(r) => assert_eq!(r.results[0].error_code, 0),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        admin(&broker, "deleted"),
        json!({"described": {
            "consumer.heartbeat.interval.ms": ["5000", "DEFAULT_CONFIG", false, false],
            "consumer.session.timeout.ms": ["45000", "DEFAULT_CONFIG", false, false],
        }}),
        "log:\n{}",
        broker.log()
    );
}
