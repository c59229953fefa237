//! CreateTopics (19), v2–v7: partitions, replication factor, explicit assignments, configs,
//! `validate_only`; Kafka's error codes per topic.

use std::collections::BTreeMap;

use kafka_protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::RequestContext;
use crate::errors::{to_kafka_error, BrokerError};
use crate::topics::{NewTopic, TopicSpec};

/// Kafka's `ConfigSource.TOPIC_CONFIG` (set on the topic) and `DEFAULT_CONFIG`.
const SOURCE_TOPIC_CONFIG: i8 = 1;
const SOURCE_DEFAULT_CONFIG: i8 = 5;

/// Creates each topic (or only validates it), answering per topic.
pub async fn handle(ctx: &RequestContext, req: CreateTopicsRequest) -> CreateTopicsResponse {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for t in &req.topics {
        *counts.entry(t.name.0.to_string()).or_default() += 1;
    }
    let mut results = Vec::with_capacity(req.topics.len());
    for t in req.topics {
        let name = t.name.0.to_string();
        if counts.get(&name).copied().unwrap_or(0) > 1 {
            // Kafka refuses every entry of a name that appears twice in one request.
            let err = BrokerError::InvalidRequest(format!(
                "Create topics request from client `{}` contains multiple entries for the \
                 following topics: {name}",
                ctx.client_id
            ));
            results.push(failed(ctx, &name, &err));
            continue;
        }
        let new = NewTopic {
            name: name.clone(),
            num_partitions: t.num_partitions,
            replication_factor: t.replication_factor,
            assignments: t
                .assignments
                .iter()
                .map(|a| {
                    (
                        a.partition_index,
                        a.broker_ids.iter().map(|b| b.0).collect(),
                    )
                })
                .collect(),
            configs: t
                .configs
                .iter()
                .map(|c| (c.name.to_string(), c.value.as_ref().map(|v| v.to_string())))
                .collect(),
        };
        match ctx.broker.create_topic(&new, req.validate_only).await {
            Ok(spec) => {
                if !req.validate_only {
                    tracing::info!(topic = %name, partitions = spec.partitions.len(), "created topic");
                }
                results.push(created(ctx, &spec));
            }
            Err(e) => results.push(failed(ctx, &name, &e)),
        }
    }
    CreateTopicsResponse::default().with_topics(results)
}

fn created(ctx: &RequestContext, spec: &TopicSpec) -> CreatableTopicResult {
    let v = ctx.version;
    let mut r = CreatableTopicResult::default()
        .with_name(TopicName(StrBytes::from_string(spec.name.clone())))
        .with_error_code(0);
    if v >= 5 {
        let configs = spec
            .configs
            .effective()
            .into_iter()
            .map(|(name, value, set)| {
                CreatableTopicConfigs::default()
                    .with_name(StrBytes::from_static_str(name))
                    .with_value(Some(StrBytes::from_string(value)))
                    .with_config_source(if set {
                        SOURCE_TOPIC_CONFIG
                    } else {
                        SOURCE_DEFAULT_CONFIG
                    })
            })
            .collect();
        r = r
            .with_num_partitions(spec.partition_count())
            .with_replication_factor(
                i16::try_from(spec.partitions.first().map_or(1, |p| p.replicas.len()))
                    .unwrap_or(i16::MAX),
            )
            .with_configs(Some(configs));
    }
    if v >= 7 {
        r = r.with_topic_id(spec.id);
    }
    r
}

fn failed(ctx: &RequestContext, name: &str, err: &BrokerError) -> CreatableTopicResult {
    let mut r = CreatableTopicResult::default()
        .with_name(TopicName(StrBytes::from_string(name.to_string())))
        .with_error_code(ctx.error(to_kafka_error(err)))
        .with_error_message(Some(StrBytes::from_string(err.to_string())));
    if ctx.version >= 5 {
        r = r.with_num_partitions(-1).with_replication_factor(-1);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx};
    use kafka_protocol::messages::create_topics_request::{
        CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
    };
    use kafka_protocol::messages::{ApiKey, BrokerId, ResponseKind};

    fn topic(name: &str, partitions: i32, rf: i16) -> CreatableTopic {
        CreatableTopic::default()
            .with_name(TopicName(StrBytes::from_string(name.into())))
            .with_num_partitions(partitions)
            .with_replication_factor(rf)
    }

    fn codes(resp: &CreateTopicsResponse) -> Vec<(String, i16)> {
        resp.topics
            .iter()
            .map(|t| (t.name.0.to_string(), t.error_code))
            .collect()
    }

    #[tokio::test]
    async fn kafkas_codes_per_topic_at_every_version() {
        for v in 2..=7 {
            let dir = tempfile::tempdir().unwrap();
            let b = broker(dir.path(), &[]);
            let c = ctx(&b, ApiKey::CreateTopics, v);
            let req = CreateTopicsRequest::default().with_topics(vec![
                topic("ok", 3, 1).with_configs(vec![CreatableTopicConfig::default()
                    .with_name(StrBytes::from_static_str("retention.ms"))
                    .with_value(Some(StrBytes::from_static_str("60000")))]),
                topic("rf", 1, 3),
                topic("parts", 0, 1),
                topic("bad/name", 1, 1),
                topic("dup", 1, 1),
                topic("dup", 1, 1),
                topic("cfg", 1, 1).with_configs(vec![CreatableTopicConfig::default()
                    .with_name(StrBytes::from_static_str("no.such.config"))
                    .with_value(Some(StrBytes::from_static_str("1")))]),
                topic("assigned", -1, -1).with_assignments(vec![
                    CreatableReplicaAssignment::default()
                        .with_partition_index(0)
                        .with_broker_ids(vec![BrokerId(1)]),
                ]),
            ]);
            let resp = handle(&c, req).await;
            assert_eq!(
                codes(&resp),
                vec![
                    ("ok".into(), 0),
                    ("rf".into(), 38),
                    ("parts".into(), 37),
                    ("bad/name".into(), 17),
                    ("dup".into(), 42),
                    ("dup".into(), 42),
                    ("cfg".into(), 40),
                    ("assigned".into(), 0),
                ],
                "v{v}"
            );
            assert_eq!(b.catalog.topic("ok").unwrap().partitions.len(), 3);
            if v >= 5 {
                let ok = &resp.topics[0];
                assert_eq!((ok.num_partitions, ok.replication_factor), (3, 1));
                let retention = ok
                    .configs
                    .as_ref()
                    .unwrap()
                    .iter()
                    .find(|c| c.name.as_str() == "retention.ms")
                    .unwrap();
                assert_eq!(retention.value.as_deref(), Some("60000"));
                assert_eq!(retention.config_source, SOURCE_TOPIC_CONFIG);
            }
            if v >= 7 {
                assert_eq!(resp.topics[0].topic_id, b.catalog.topic("ok").unwrap().id);
            }
            assert_encodes(&c, &ResponseKind::CreateTopics(resp.clone()));

            let again = handle(
                &c,
                CreateTopicsRequest::default().with_topics(vec![topic("ok", 1, 1)]),
            )
            .await;
            assert_eq!(codes(&again), vec![("ok".into(), 36)]);
            assert_eq!(
                again.topics[0].error_message.as_deref(),
                Some("Topic 'ok' already exists.")
            );
        }
    }

    #[tokio::test]
    async fn validate_only_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let c = ctx(&b, ApiKey::CreateTopics, 7);
        let resp = handle(
            &c,
            CreateTopicsRequest::default()
                .with_validate_only(true)
                .with_topics(vec![topic("t", 2, 1), topic("u", 2, 9)]),
        )
        .await;
        assert_eq!(codes(&resp), vec![("t".into(), 0), ("u".into(), 38)]);
        assert!(b.catalog.topic("t").is_none());
    }
}
