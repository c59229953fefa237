//! DeleteTopics (20), v1–v6: by name, and from v6 by topic id.

use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{DeleteTopicsRequest, DeleteTopicsResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::RequestContext;
use crate::errors::{to_kafka_error, BrokerError};
use crate::topics::CatalogError;

/// Deletes each named topic, answering per topic.
pub async fn handle(ctx: &RequestContext, req: DeleteTopicsRequest) -> DeleteTopicsResponse {
    let v = ctx.version;
    let targets: Vec<(Option<String>, Uuid)> = if v >= 6 {
        req.topics
            .into_iter()
            .map(|t| (t.name.map(|n| n.0.to_string()), t.topic_id))
            .collect()
    } else {
        req.topic_names
            .into_iter()
            .map(|n| (Some(n.0.to_string()), Uuid::nil()))
            .collect()
    };
    let mut responses = Vec::with_capacity(targets.len());
    for (name, id) in targets {
        let resolved: Result<String, BrokerError> = match (&name, id.is_nil()) {
            (Some(n), true) => Ok(n.clone()),
            (None, false) => ctx
                .broker
                .catalog
                .topic_by_id(id)
                .map(|t| t.name.clone())
                .ok_or(CatalogError::UnknownTopicId(id).into()),
            (Some(_), false) => Err(BrokerError::InvalidRequest(
                "A topic may be named by name or by id, not both.".into(),
            )),
            (None, true) => Err(BrokerError::InvalidRequest(
                "A topic must be named by name or by id.".into(),
            )),
        };
        let outcome = match resolved {
            Ok(n) => ctx.broker.delete_topic(&n).await.map(|spec| (n, spec.id)),
            Err(e) => Err(e),
        };
        let mut r = DeletableTopicResult::default();
        match outcome {
            Ok((n, topic_id)) => {
                tracing::info!(topic = %n, "deleted topic");
                r = r.with_name(Some(TopicName(StrBytes::from_string(n))));
                if v >= 6 {
                    r = r.with_topic_id(topic_id);
                }
            }
            Err(e) => {
                r = r
                    .with_name(name.map(|n| TopicName(StrBytes::from_string(n))))
                    .with_error_code(ctx.error(to_kafka_error(&e)));
                if v >= 5 {
                    r = r.with_error_message(Some(StrBytes::from_string(e.to_string())));
                }
                if v >= 6 {
                    r = r.with_topic_id(id);
                }
            }
        }
        responses.push(r);
    }
    DeleteTopicsResponse::default().with_responses(responses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx};
    use crate::topics::NewTopic;
    use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
    use kafka_protocol::messages::{ApiKey, ResponseKind};

    async fn make(b: &crate::broker::Broker, name: &str) -> Uuid {
        let new = NewTopic {
            name: name.into(),
            num_partitions: 1,
            replication_factor: 1,
            ..NewTopic::default()
        };
        b.create_topic(&new, false).await.unwrap().id
    }

    fn name(n: &str) -> TopicName {
        TopicName(StrBytes::from_string(n.into()))
    }

    #[tokio::test]
    async fn by_name_at_every_version_before_6() {
        for v in 1..=5 {
            let dir = tempfile::tempdir().unwrap();
            let b = broker(dir.path(), &[]);
            make(&b, "a").await;
            let c = ctx(&b, ApiKey::DeleteTopics, v);
            let resp = handle(
                &c,
                DeleteTopicsRequest::default().with_topic_names(vec![name("a"), name("zz")]),
            )
            .await;
            let codes: Vec<i16> = resp.responses.iter().map(|r| r.error_code).collect();
            assert_eq!(codes, vec![0, 3], "v{v}");
            assert!(b.catalog.topic("a").is_none());
            assert_encodes(&c, &ResponseKind::DeleteTopics(resp));
        }
    }

    #[tokio::test]
    async fn by_id_at_v6() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let id = make(&b, "a").await;
        make(&b, "b").await;
        let c = ctx(&b, ApiKey::DeleteTopics, 6);
        let resp = handle(
            &c,
            DeleteTopicsRequest::default().with_topics(vec![
                DeleteTopicState::default().with_topic_id(id),
                DeleteTopicState::default().with_name(Some(name("b"))),
                DeleteTopicState::default().with_topic_id(Uuid::from_u128(5)),
                DeleteTopicState::default()
                    .with_name(Some(name("b")))
                    .with_topic_id(Uuid::from_u128(5)),
            ]),
        )
        .await;
        let codes: Vec<i16> = resp.responses.iter().map(|r| r.error_code).collect();
        assert_eq!(codes, vec![0, 0, 100, 42]);
        assert_eq!(resp.responses[0].name.as_ref().unwrap().0.as_str(), "a");
        assert!(b.catalog.topics().is_empty());
        assert_encodes(&c, &ResponseKind::DeleteTopics(resp));
    }
}
