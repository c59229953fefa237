//! AlterConfigs (33), v0–v2, still sent by older tools: a TOPIC resource's overrides are
//! replaced by exactly the configs given (the others return to their defaults), validated as a
//! whole; `validate_only` checks without writing. On the empty BROKER name the given cluster
//! config values replace the dynamic ones (`config_entries::alter_broker`); a GROUP resource's
//! overrides are replaced by the given ones (`group_configs`), as Kafka's controller does.

use std::collections::BTreeSet;

use kafka_protocol::messages::alter_configs_request::AlterConfigsResource;
use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{AlterConfigsRequest, AlterConfigsResponse};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::config_entries::{
    alter_broker, broker_target, unserved_resource, RESOURCE_BROKER, RESOURCE_GROUP, RESOURCE_TOPIC,
};
use super::incremental_alter_configs::{duplicate_resource, duplicate_resources};
use super::RequestContext;
use crate::errors::to_kafka_error;
use crate::topics::TopicConfigs;

/// Alters each resource.
pub async fn handle(ctx: &RequestContext, req: AlterConfigsRequest) -> AlterConfigsResponse {
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
        let resp = AlterConfigsResourceResponse::default()
            .with_resource_type(r.resource_type)
            .with_resource_name(r.resource_name.clone());
        responses.push(match outcome {
            Ok(()) => resp.with_error_code(0),
            Err((code, message)) => resp
                .with_error_code(ctx.error(code))
                .with_error_message(Some(StrBytes::from_string(message))),
        });
    }
    AlterConfigsResponse::default().with_responses(responses)
}

async fn alter(
    ctx: &RequestContext,
    r: &AlterConfigsResource,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    let name = r.resource_name.to_string();
    let mut keys = BTreeSet::new();
    let mut pairs = Vec::with_capacity(r.configs.len());
    for c in &r.configs {
        let key = c.name.to_string();
        if !keys.insert(key.clone()) {
            return Err((
                ErrorCode::InvalidRequest,
                "Error due to duplicate config keys".to_owned(),
            ));
        }
        let Some(value) = c.value.as_ref() else {
            return Err((
                ErrorCode::InvalidRequest,
                format!("Null value not supported for : {key}"),
            ));
        };
        pairs.push((key, value.to_string()));
    }
    match r.resource_type {
        RESOURCE_TOPIC => {
            let altered = ctx
                .broker
                .alter_topic_configs(
                    &name,
                    |_| {
                        TopicConfigs::from_pairs(
                            pairs.iter().map(|(k, v)| (k.as_str(), Some(v.as_str()))),
                        )
                    },
                    validate_only,
                )
                .await
                .map_err(|e| (to_kafka_error(&e), e.to_string()))?;
            if !validate_only {
                tracing::info!(topic = %name, configs = ?altered.configs.set_values(),
                    "replaced topic configs");
            }
            Ok(())
        }
        RESOURCE_BROKER => {
            let target = broker_target(&name, ctx.broker.config.node_id)?;
            let changes = pairs.into_iter().map(|(k, v)| (k, Some(v))).collect();
            alter_broker(&ctx.broker, target, changes, true, validate_only).await
        }
        RESOURCE_GROUP => {
            let changes = pairs
                .into_iter()
                .map(|(k, v)| (k, super::group_configs::Change::Set(v)))
                .collect();
            super::group_configs::alter(ctx, &name, changes, true, validate_only).await
        }
        other => Err(unserved_resource(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, create_topic, ctx};
    use kafka_protocol::messages::alter_configs_request::AlterableConfig;
    use kafka_protocol::messages::{ApiKey, ResponseKind};

    fn resource(kind: i8, name: &str, configs: &[(&str, Option<&str>)]) -> AlterConfigsResource {
        AlterConfigsResource::default()
            .with_resource_type(kind)
            .with_resource_name(StrBytes::from_string(name.into()))
            .with_configs(
                configs
                    .iter()
                    .map(|(k, v)| {
                        AlterableConfig::default()
                            .with_name(StrBytes::from_string(k.to_string()))
                            .with_value(v.map(|v| StrBytes::from_string(v.into())))
                    })
                    .collect(),
            )
    }

    #[tokio::test]
    async fn the_given_configs_replace_the_overrides_at_every_version() {
        for v in 0..=2 {
            let dir = tempfile::tempdir().unwrap();
            let b = broker(dir.path(), &[]);
            create_topic(&b, "t", 1, &[("retention.ms", "60000")]).await;
            let c = ctx(&b, ApiKey::AlterConfigs, v);
            let resp = handle(
                &c,
                AlterConfigsRequest::default().with_resources(vec![
                    resource(RESOURCE_TOPIC, "t", &[("segment.ms", Some("1000"))]),
                    resource(RESOURCE_TOPIC, "x", &[("segment.ms", Some("1000"))]),
                    resource(RESOURCE_BROKER, "1", &[("num.partitions", Some("2"))]),
                ]),
            )
            .await;
            let codes: Vec<i16> = resp.responses.iter().map(|r| r.error_code).collect();
            assert_eq!(codes, vec![0, 3, 40], "v{v}");
            let spec = b.catalog.topic("t").unwrap();
            assert_eq!(spec.configs.segment_ms(), 1000);
            assert!(!spec.configs.set_values().contains_key("retention.ms"));
            assert_encodes(&c, &ResponseKind::AlterConfigs(resp));

            for (configs, code) in [
                (vec![("segment.ms", Some("0"))], 40),
                (vec![("segment.ms", None)], 42),
                (
                    vec![("segment.ms", Some("1")), ("segment.ms", Some("2"))],
                    42,
                ),
            ] {
                let resp = handle(
                    &c,
                    AlterConfigsRequest::default().with_resources(vec![resource(
                        RESOURCE_TOPIC,
                        "t",
                        &configs,
                    )]),
                )
                .await;
                assert_eq!(resp.responses[0].error_code, code, "{configs:?}");
            }
            let resp = handle(
                &c,
                AlterConfigsRequest::default()
                    .with_validate_only(true)
                    .with_resources(vec![resource(RESOURCE_TOPIC, "t", &[])]),
            )
            .await;
            assert_eq!(resp.responses[0].error_code, 0);
            assert_eq!(b.catalog.topic("t").unwrap(), spec);
        }
    }
}
