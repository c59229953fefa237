//! CreatePartitions (37), v0–v3: grows topics (never shrinks: INVALID_PARTITIONS, also for the
//! same count, as Kafka), placed as topic creation places partitions or as the request's
//! assignments say; `validate_only`; `timeout_ms` bounds the wait for the replicated change
//! (REQUEST_TIMED_OUT, and the change may still happen, as with Kafka's controller).
//!
//! The change is one replicated command per topic (`Body::CreatePartitions`); applying it also
//! gives every consumer-protocol group using the topic a new group epoch. Classic consumers see
//! the new partitions in their next Metadata refresh and rejoin, as with Kafka.

use std::collections::BTreeMap;
use std::time::Duration;

use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::{CreatePartitionsRequest, CreatePartitionsResponse};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::RequestContext;
use crate::errors::{to_kafka_error, BrokerError};

/// Grows each topic (or validates it), answering per topic.
pub async fn handle(
    ctx: &RequestContext,
    req: CreatePartitionsRequest,
) -> CreatePartitionsResponse {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for t in &req.topics {
        *counts.entry(t.name.0.to_string()).or_default() += 1;
    }
    let timeout = Duration::from_millis(u64::try_from(req.timeout_ms.max(0)).unwrap_or(0));
    let mut results = Vec::with_capacity(req.topics.len());
    for t in &req.topics {
        let name = t.name.0.to_string();
        let outcome: Result<(), (ErrorCode, String)> = if counts.get(&name) > Some(&1) {
            Err((
                ErrorCode::InvalidRequest,
                "Duplicate topic in request.".to_owned(),
            ))
        } else {
            let assignments: Option<Vec<Vec<i32>>> = t.assignments.as_ref().map(|a| {
                a.iter()
                    .map(|a| a.broker_ids.iter().map(|b| b.0).collect())
                    .collect()
            });
            let change = ctx.broker.create_partitions(
                &name,
                t.count,
                assignments.as_deref(),
                req.validate_only,
            );
            let result = if req.validate_only || timeout.is_zero() {
                change.await
            } else {
                match tokio::time::timeout(timeout, change).await {
                    Ok(r) => r,
                    Err(_) => Err(BrokerError::Catalog(crate::topics::CatalogError::Timeout(
                        format!("the partitions were not created within {timeout:?}"),
                    ))),
                }
            };
            match result {
                Ok(spec) => {
                    if !req.validate_only {
                        tracing::info!(topic = %name, partitions = spec.partitions.len(),
                            "created partitions");
                    }
                    Ok(())
                }
                Err(e) => Err((to_kafka_error(&e), e.to_string())),
            }
        };
        let r = CreatePartitionsTopicResult::default().with_name(t.name.clone());
        results.push(match outcome {
            Ok(()) => r.with_error_code(0),
            Err((code, message)) => r
                .with_error_code(ctx.error(code))
                .with_error_message(Some(StrBytes::from_string(message))),
        });
    }
    CreatePartitionsResponse::default().with_results(results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx};
    use crate::topics::NewTopic;
    use kafka_protocol::messages::create_partitions_request::{
        CreatePartitionsAssignment, CreatePartitionsTopic,
    };
    use kafka_protocol::messages::{ApiKey, BrokerId, ResponseKind, TopicName};

    fn topic(name: &str, count: i32) -> CreatePartitionsTopic {
        CreatePartitionsTopic::default()
            .with_name(TopicName(StrBytes::from_string(name.into())))
            .with_count(count)
            .with_assignments(None)
    }

    #[tokio::test]
    async fn grows_never_shrinks_at_every_version() {
        for v in 0..=3 {
            let dir = tempfile::tempdir().unwrap();
            let b = broker(dir.path(), &[]);
            for name in ["a", "b"] {
                let new = NewTopic {
                    name: name.into(),
                    num_partitions: 2,
                    replication_factor: 1,
                    ..NewTopic::default()
                };
                b.create_topic(&new, false).await.unwrap();
            }
            let c = ctx(&b, ApiKey::CreatePartitions, v);
            let req = CreatePartitionsRequest::default()
                .with_timeout_ms(10_000)
                .with_topics(vec![
                    topic("a", 4),
                    topic("b", 2),
                    topic("b", 1).with_name(TopicName(StrBytes::from_static_str("c"))),
                    topic("nope", 3),
                    topic("d", 3),
                    topic("d", 3),
                ]);
            let resp = handle(&c, req).await;
            let codes: Vec<i16> = resp.results.iter().map(|r| r.error_code).collect();
            assert_eq!(codes, vec![0, 37, 3, 3, 42, 42], "v{v}");
            assert_eq!(b.catalog.topic("a").unwrap().partition_count(), 4);
            assert_encodes(&c, &ResponseKind::CreatePartitions(resp));
            let shrink = handle(
                &c,
                CreatePartitionsRequest::default().with_topics(vec![topic("a", 3)]),
            )
            .await;
            assert_eq!(shrink.results[0].error_code, 37);
            // The partitions exist for the data plane at once.
            assert!(b.data.partition("a", 3).await.is_ok());

            let assigned = handle(
                &c,
                CreatePartitionsRequest::default().with_topics(vec![
                    topic("b", 3)
                        .with_assignments(Some(vec![CreatePartitionsAssignment::default()
                            .with_broker_ids(vec![BrokerId(1)])])),
                    topic("a", 6).with_assignments(Some(vec![
                        CreatePartitionsAssignment::default().with_broker_ids(vec![BrokerId(9)]),
                        CreatePartitionsAssignment::default().with_broker_ids(vec![BrokerId(1)]),
                    ])),
                ]),
            )
            .await;
            let codes: Vec<i16> = assigned.results.iter().map(|r| r.error_code).collect();
            assert_eq!(codes, vec![0, 39]);
            let validate = handle(
                &c,
                CreatePartitionsRequest::default()
                    .with_validate_only(true)
                    .with_topics(vec![topic("b", 10)]),
            )
            .await;
            assert_eq!(validate.results[0].error_code, 0);
            assert_eq!(b.catalog.topic("b").unwrap().partition_count(), 3);
        }
    }
}
