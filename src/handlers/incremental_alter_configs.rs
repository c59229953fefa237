//! IncrementalAlterConfigs (44), v0–v1: SET, DELETE, APPEND, SUBTRACT on TOPIC resources,
//! each resource all or nothing, as one replicated change of the topic (see
//! `Broker::alter_topic_configs`); `validate_only` checks without writing. On BROKER resources
//! only the replicated cluster configuration's keys change, through the empty name
//! (`config_entries::alter_broker`); GROUP resources through `group_configs`; other types
//! are not served.

use std::collections::BTreeSet;

use kafka_protocol::messages::incremental_alter_configs_request::AlterConfigsResource;
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::config_entries::{
    alter_broker, broker_target, unserved_resource, RESOURCE_BROKER, RESOURCE_GROUP, RESOURCE_TOPIC,
};
use super::group_configs::Change;
use super::RequestContext;
use crate::errors::to_kafka_error;
use crate::topics::AlterOp;

/// Alters each resource.
pub async fn handle(
    ctx: &RequestContext,
    req: IncrementalAlterConfigsRequest,
) -> IncrementalAlterConfigsResponse {
    let duplicates = duplicate_resources(
        req.resources
            .iter()
            .map(|r| (r.resource_type, &r.resource_name)),
    );
    let mut responses = Vec::with_capacity(req.resources.len());
    for r in &req.resources {
        let outcome = if duplicates.contains(&(r.resource_type, r.resource_name.to_string())) {
            Err(duplicate_resource())
        } else {
            alter(ctx, r, req.validate_only).await
        };
        let mut resp = AlterConfigsResourceResponse::default()
            .with_resource_type(r.resource_type)
            .with_resource_name(r.resource_name.clone());
        resp = match outcome {
            Ok(()) => resp.with_error_code(0),
            Err((code, message)) => resp
                .with_error_code(ctx.error(code))
                .with_error_message(Some(StrBytes::from_string(message))),
        };
        responses.push(resp);
    }
    IncrementalAlterConfigsResponse::default().with_responses(responses)
}

/// The refusal of a resource named twice in one request.
pub fn duplicate_resource() -> (ErrorCode, String) {
    (
        ErrorCode::InvalidRequest,
        "Each resource must appear at most once in a request.".to_owned(),
    )
}

/// Resources named more than once in one request (Kafka refuses each of their entries).
pub fn duplicate_resources<'a>(
    resources: impl Iterator<Item = (i8, &'a StrBytes)>,
) -> BTreeSet<(i8, String)> {
    let mut seen = BTreeSet::new();
    let mut twice = BTreeSet::new();
    for (kind, name) in resources {
        let key = (kind, name.to_string());
        if !seen.insert(key.clone()) {
            twice.insert(key);
        }
    }
    twice
}

async fn alter(
    ctx: &RequestContext,
    r: &AlterConfigsResource,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    let name = r.resource_name.to_string();
    let mut keys = BTreeSet::new();
    let mut ops = Vec::with_capacity(r.configs.len());
    for c in &r.configs {
        let key = c.name.to_string();
        if !keys.insert(key.clone()) {
            return Err((
                ErrorCode::InvalidRequest,
                "Error due to duplicate config keys".to_owned(),
            ));
        }
        let value = c.value.as_ref().map(|v| v.to_string());
        let op = match (c.config_operation, value) {
            (1, _) => AlterOp::Delete,
            (0, Some(v)) => AlterOp::Set(v),
            (2, Some(v)) => AlterOp::Append(v),
            (3, Some(v)) => AlterOp::Subtract(v),
            (0..=3, None) => {
                return Err((
                    ErrorCode::InvalidRequest,
                    format!("Null value not supported for : {key}"),
                ))
            }
            (other, _) => {
                return Err((
                    ErrorCode::InvalidRequest,
                    format!("Unknown config operation {other} for config {key}"),
                ))
            }
        };
        ops.push((key, op));
    }
    match r.resource_type {
        RESOURCE_TOPIC => {
            let altered = ctx
                .broker
                .alter_topic_configs(&name, |current| current.altered(&ops), validate_only)
                .await
                .map_err(|e| (to_kafka_error(&e), e.to_string()))?;
            if !validate_only {
                tracing::info!(topic = %name, configs = ?altered.configs.set_values(),
                    "altered topic configs");
            }
            Ok(())
        }
        RESOURCE_BROKER => {
            let target = broker_target(&name, ctx.broker.config.node_id)?;
            let mut changes = Vec::with_capacity(ops.len());
            for (key, op) in ops {
                changes.push(match op {
                    AlterOp::Set(v) => (key, Some(v)),
                    AlterOp::Delete => (key, None),
                    AlterOp::Append(_) | AlterOp::Subtract(_) => {
                        return Err((
                            ErrorCode::InvalidConfig,
                            format!(
                                "Can't {} to key {key} because its type is not LIST.",
                                op.name()
                            ),
                        ))
                    }
                });
            }
            alter_broker(&ctx.broker, target, changes, false, validate_only).await
        }
        RESOURCE_GROUP => {
            let changes = ops
                .into_iter()
                .map(|(k, op)| {
                    let c = match op {
                        AlterOp::Set(v) => Change::Set(v),
                        AlterOp::Delete => Change::Delete,
                        AlterOp::Append(v) => Change::Append(v),
                        AlterOp::Subtract(v) => Change::Subtract(v),
                    };
                    (k, c)
                })
                .collect();
            super::group_configs::alter(ctx, &name, changes, false, validate_only).await
        }
        other => Err(unserved_resource(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, create_topic, ctx};
    use kafka_protocol::messages::incremental_alter_configs_request::AlterableConfig;
    use kafka_protocol::messages::{ApiKey, ResponseKind};

    fn config(name: &str, op: i8, value: Option<&str>) -> AlterableConfig {
        AlterableConfig::default()
            .with_name(StrBytes::from_string(name.into()))
            .with_config_operation(op)
            .with_value(value.map(|v| StrBytes::from_string(v.into())))
    }

    fn resource(kind: i8, name: &str, configs: Vec<AlterableConfig>) -> AlterConfigsResource {
        AlterConfigsResource::default()
            .with_resource_type(kind)
            .with_resource_name(StrBytes::from_string(name.into()))
            .with_configs(configs)
    }

    #[tokio::test]
    async fn operations_errors_and_validate_only_at_every_version() {
        for v in 0..=1 {
            let dir = tempfile::tempdir().unwrap();
            let b = broker(dir.path(), &[]);
            create_topic(&b, "t", 1, &[("retention.ms", "60000")]).await;
            let c = ctx(&b, ApiKey::IncrementalAlterConfigs, v);
            let req = IncrementalAlterConfigsRequest::default().with_resources(vec![
                resource(
                    RESOURCE_TOPIC,
                    "t",
                    vec![
                        config("retention.ms", 1, None),
                        config("segment.bytes", 0, Some("2097152")),
                        config("cleanup.policy", 2, Some("compact")),
                    ],
                ),
                resource(
                    RESOURCE_TOPIC,
                    "nope",
                    vec![config("retention.ms", 0, Some("1"))],
                ),
                resource(
                    RESOURCE_BROKER,
                    "1",
                    vec![config("num.partitions", 0, Some("3"))],
                ),
                resource(32, "g", vec![]),
            ]);
            let resp = handle(&c, req).await;
            let codes: Vec<i16> = resp.responses.iter().map(|r| r.error_code).collect();
            // GROUP: this test broker runs no group coordinator (tests/group_configs.rs serves it).
            assert_eq!(codes, vec![0, 3, 40, 15], "v{v}");
            let spec = b.catalog.topic("t").unwrap();
            assert_eq!(spec.configs.segment_bytes(), 2_097_152);
            assert_eq!(
                spec.configs
                    .set_values()
                    .get("cleanup.policy")
                    .map(String::as_str),
                Some("delete,compact")
            );
            assert!(!spec.configs.set_values().contains_key("retention.ms"));
            assert_encodes(&c, &ResponseKind::IncrementalAlterConfigs(resp));

            // Refusals name the key; nothing of a refused resource changes.
            let bad = handle(
                &c,
                IncrementalAlterConfigsRequest::default().with_resources(vec![
                    resource(
                        RESOURCE_TOPIC,
                        "t",
                        vec![
                            config("retention.ms", 0, Some("5")),
                            config("segment.bytes", 0, Some("12")),
                        ],
                    ),
                    resource(RESOURCE_TOPIC, "t", vec![]),
                ]),
            )
            .await;
            assert_eq!(bad.responses[0].error_code, 42, "duplicate resource");
            let one = |configs| {
                IncrementalAlterConfigsRequest::default().with_resources(vec![resource(
                    RESOURCE_TOPIC,
                    "t",
                    configs,
                )])
            };
            for (configs, code, needle) in [
                (
                    vec![config("segment.bytes", 0, Some("12"))],
                    40,
                    "segment.bytes",
                ),
                (vec![config("no.such", 0, Some("1"))], 40, "no.such"),
                (
                    vec![config("retention.ms", 2, Some("1"))],
                    40,
                    "retention.ms",
                ),
                (vec![config("retention.ms", 0, None)], 42, "retention.ms"),
                (
                    vec![config("retention.ms", 9, Some("1"))],
                    42,
                    "retention.ms",
                ),
                (
                    vec![
                        config("retention.ms", 0, Some("1")),
                        config("retention.ms", 1, None),
                    ],
                    42,
                    "duplicate",
                ),
            ] {
                let resp = handle(&c, one(configs)).await;
                let r = &resp.responses[0];
                assert_eq!(r.error_code, code, "{needle}");
                assert!(
                    r.error_message.as_deref().unwrap().contains(needle),
                    "{:?}",
                    r.error_message
                );
            }
            let validate = handle(
                &c,
                one(vec![config("retention.ms", 0, Some("5"))]).with_validate_only(true),
            )
            .await;
            assert_eq!(validate.responses[0].error_code, 0);
            assert_eq!(
                b.catalog.topic("t").unwrap(),
                spec,
                "validate_only changed nothing"
            );
        }
    }
}
