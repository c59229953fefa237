//! DescribeConfigs (32), v1–v4 (Kafka 4.0 dropped v0): TOPIC, BROKER and GROUP resources, as
//! `config_entries` lists them; `include_synonyms` (v1+) and `include_documentation` (v3+)
//! answered; `configuration_keys` filters by name (unknown names are left out; null or empty
//! means every key, as Kafka answers).

use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use kafka_protocol::protocol::StrBytes;

use super::config_entries::{
    broker_entries, broker_target, cluster_entries, topic_entries, unserved_resource, BrokerTarget,
    Entry, RESOURCE_BROKER, RESOURCE_GROUP, RESOURCE_TOPIC,
};
use super::RequestContext;
use crate::errors::{to_kafka_error, BrokerError};
use crate::topics::CatalogError;

/// Describes each resource.
pub async fn handle(ctx: &RequestContext, req: DescribeConfigsRequest) -> DescribeConfigsResponse {
    let results = req
        .resources
        .iter()
        .map(|r| {
            let name = r.resource_name.to_string();
            let entries = match r.resource_type {
                RESOURCE_TOPIC => ctx
                    .broker
                    .catalog
                    .topic(&name)
                    .map(|spec| topic_entries(&spec))
                    .ok_or_else(|| {
                        let e = BrokerError::from(CatalogError::UnknownTopic(name.clone()));
                        (to_kafka_error(&e), e.to_string())
                    }),
                RESOURCE_BROKER => {
                    broker_target(&name, ctx.broker.config.node_id).map(|t| match t {
                        BrokerTarget::Node => {
                            let mut all = broker_entries(&ctx.broker.config);
                            all.extend(cluster_entries(&ctx.broker, false));
                            all.sort_by(|a, b| a.name.cmp(&b.name));
                            all
                        }
                        // Kafka lists the cluster-wide dynamic defaults here.
                        BrokerTarget::ClusterDefault => cluster_entries(&ctx.broker, true),
                    })
                }
                RESOURCE_GROUP => super::group_configs::describe(ctx, &name),
                other => Err(unserved_resource(other)),
            };
            let result = DescribeConfigsResult::default()
                .with_resource_type(r.resource_type)
                .with_resource_name(r.resource_name.clone());
            match entries {
                Ok(entries) => {
                    // Null or empty: every key (Kafka's `ConfigHelper`).
                    let wanted = r.configuration_keys.as_ref().filter(|k| !k.is_empty());
                    let configs = entries
                        .iter()
                        .filter(|e| {
                            wanted.is_none_or(|keys| keys.iter().any(|k| k.as_str() == e.name))
                        })
                        .map(|e| encode(e, req.include_synonyms, req.include_documentation))
                        .collect();
                    result.with_error_code(0).with_configs(configs)
                }
                Err((code, message)) => result
                    .with_error_code(ctx.error(code))
                    .with_error_message(Some(StrBytes::from_string(message))),
            }
        })
        .collect();
    DescribeConfigsResponse::default().with_results(results)
}

fn encode(e: &Entry, synonyms: bool, documentation: bool) -> DescribeConfigsResourceResult {
    let mut out = DescribeConfigsResourceResult::default()
        .with_name(StrBytes::from_string(e.name.clone()))
        .with_value(e.value.clone().map(StrBytes::from_string))
        .with_read_only(e.read_only)
        .with_config_source(e.source)
        .with_is_sensitive(false)
        .with_config_type(e.kind);
    if synonyms {
        out = out.with_synonyms(
            e.synonyms
                .iter()
                .map(|(name, value, source)| {
                    DescribeConfigsSynonym::default()
                        .with_name(StrBytes::from_string(name.clone()))
                        .with_value(value.clone().map(StrBytes::from_string))
                        .with_source(*source)
                })
                .collect(),
        );
    }
    out.with_documentation(documentation.then(|| StrBytes::from_static_str(e.doc)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::config_entries::{SOURCE_DEFAULT_CONFIG, SOURCE_DYNAMIC_TOPIC_CONFIG};
    use crate::handlers::test_support::{assert_encodes, broker, create_topic, ctx};
    use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
    use kafka_protocol::messages::{ApiKey, ResponseKind};
    use protocol::ErrorCode;

    fn resource(kind: i8, name: &str) -> DescribeConfigsResource {
        DescribeConfigsResource::default()
            .with_resource_type(kind)
            .with_resource_name(StrBytes::from_string(name.into()))
    }

    #[tokio::test]
    async fn topics_and_brokers_at_every_version() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &["--num-partitions", "3"]);
        create_topic(&b, "t", 1, &[("retention.ms", "60000")]).await;
        for v in 1..=4 {
            let c = ctx(&b, ApiKey::DescribeConfigs, v);
            let req = DescribeConfigsRequest::default()
                .with_include_synonyms(true)
                .with_include_documentation(v >= 3)
                .with_resources(vec![
                    resource(RESOURCE_TOPIC, "t"),
                    resource(RESOURCE_TOPIC, "nope"),
                    resource(RESOURCE_BROKER, "1"),
                    resource(RESOURCE_BROKER, ""),
                    resource(RESOURCE_BROKER, "2"),
                    resource(32, "g"),
                    resource(RESOURCE_TOPIC, "t").with_configuration_keys(Some(vec![
                        StrBytes::from_static_str("segment.bytes"),
                        StrBytes::from_static_str("no.such.key"),
                    ])),
                ]);
            let resp = handle(&c, req).await;
            let codes: Vec<ErrorCode> = resp
                .results
                .iter()
                .map(|r| ErrorCode::from_code(r.error_code).unwrap())
                .collect();
            assert_eq!(
                codes,
                vec![
                    ErrorCode::None,
                    ErrorCode::UnknownTopicOrPartition,
                    ErrorCode::None,
                    ErrorCode::None,
                    ErrorCode::InvalidRequest,
                    // GROUP: this test broker runs no group coordinator (tests/group_configs.rs
                    // serves them).
                    ErrorCode::CoordinatorNotAvailable,
                    ErrorCode::None,
                ],
                "v{v}"
            );
            let topic = &resp.results[0].configs;
            assert_eq!(topic.len(), crate::topics::config_keys::TOPIC_KEYS.len());
            let retention = topic
                .iter()
                .find(|e| e.name.as_str() == "retention.ms")
                .unwrap();
            assert_eq!(retention.value.as_deref(), Some("60000"));
            assert_eq!(retention.config_source, SOURCE_DYNAMIC_TOPIC_CONFIG);
            assert!(!retention.read_only);
            let synonyms: Vec<(&str, i8)> = retention
                .synonyms
                .iter()
                .map(|s| (s.name.as_str(), s.source))
                .collect();
            assert_eq!(
                synonyms,
                vec![
                    ("retention.ms", SOURCE_DYNAMIC_TOPIC_CONFIG),
                    ("log.retention.hours", SOURCE_DEFAULT_CONFIG)
                ]
            );
            let segment = topic
                .iter()
                .find(|e| e.name.as_str() == "segment.bytes")
                .unwrap();
            assert_eq!(segment.value.as_deref(), Some("1073741824"));
            assert_eq!(segment.config_source, SOURCE_DEFAULT_CONFIG);
            assert_eq!(segment.documentation.is_some(), v >= 3);
            let filtered: Vec<&str> = resp.results[6]
                .configs
                .iter()
                .map(|e| e.name.as_str())
                .collect();
            assert_eq!(filtered, vec!["segment.bytes"]);
            let node = &resp.results[2].configs;
            let partitions = node
                .iter()
                .find(|e| e.name.as_str() == "num.partitions")
                .unwrap();
            assert_eq!(partitions.value.as_deref(), Some("3"));
            assert_eq!(partitions.config_source, 4);
            assert!(partitions.read_only);
            let id = node.iter().find(|e| e.name.as_str() == "node.id").unwrap();
            assert_eq!(
                (id.value.as_deref(), id.config_source),
                (Some("1"), SOURCE_DEFAULT_CONFIG)
            );
            assert!(resp.results[3].configs.is_empty());
            assert_encodes(&c, &ResponseKind::DescribeConfigs(resp));
        }
    }
}
