//! DescribeTopicPartitions (75), v0: what Kafka 4.x's Admin `describeTopics` (and so
//! `kafka-topics.sh --describe`) asks instead of Metadata, page by page.
//!
//! As Kafka's `DescribeTopicPartitionsRequestHandler` and `KRaftMetadataCache
//! .describeTopicResponse` answer it:
//!
//! ```text
//!  topics []  → every topic;  else the named ones (duplicates once)       sorted by name,
//!  cursor (topic, partition) → start there: topics before it are skipped,  from the cursor's
//!                              the cursor's topic from its partition       topic on
//!  limit = clamp(response_partition_limit, 1, 2000) partitions per response
//!  a topic that does not fit wholly → its first partitions, next_cursor = (topic, next index)
//!  no room left before a topic     → next_cursor = (topic, 0)
//! ```
//!
//! A named topic that does not exist answers UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION
//! for a name no topic may have) with a zero id and takes no room; with the list empty there are
//! no such answers. A cursor naming a topic not in a given list, or a negative partition, makes
//! the whole request INVALID_REQUEST (every named topic answers it). Partitions report what
//! Metadata reports (leader, or -1 when its node is not live, without a partition error as
//! Kafka's handler does; replicas; live replicas as ISR; offline replicas; the leader epoch),
//! with empty eligible-leader-replica lists (no ELR without replication).

use std::collections::{BTreeSet, HashSet};

use kafka_protocol::messages::describe_topic_partitions_response::{
    Cursor, DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic,
};
use kafka_protocol::messages::{
    BrokerId, DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::metadata::ALL_TOPIC_OPERATIONS;
use super::RequestContext;
use crate::data::partition::LEADER_EPOCH;
use crate::topics::names::validate_topic_name;
use crate::topics::TopicSpec;

/// Kafka's `max.request.partition.size.limit` default: most partitions one response carries.
pub const MAX_PARTITIONS_PER_RESPONSE: i32 = 2000;

/// Describes the topics' partitions, one page.
pub async fn handle(
    ctx: &RequestContext,
    req: DescribeTopicPartitionsRequest,
) -> DescribeTopicPartitionsResponse {
    let all = req.topics.is_empty();
    let cursor = req
        .cursor
        .as_ref()
        .map(|c| (c.topic_name.0.to_string(), c.partition_index));
    let from = cursor.as_ref().map_or("", |(t, _)| t.as_str());
    let names: BTreeSet<String> = if all {
        ctx.broker
            .catalog
            .topics()
            .iter()
            .map(|t| t.name.clone())
            .filter(|n| n.as_str() >= from)
            .collect()
    } else {
        req.topics
            .iter()
            .map(|t| t.name.0.to_string())
            .filter(|n| n.as_str() >= from)
            .collect()
    };
    if let Some((topic, partition)) = &cursor {
        let refused = if !all && !names.contains(topic) {
            Some(format!(
                "DescribeTopicPartitionsRequest topic list should contain the cursor topic: {topic}"
            ))
        } else if *partition < 0 {
            Some(format!(
                "DescribeTopicPartitionsRequest cursor partition must be valid: {topic}-{partition}"
            ))
        } else {
            None
        };
        if let Some(message) = refused {
            tracing::debug!(%message, "describe topic partitions refused");
            return invalid_request(ctx, &req);
        }
    }
    let live: HashSet<i32> = ctx.broker.node_ids().into_iter().collect();
    let limit = req
        .response_partition_limit
        .clamp(1, MAX_PARTITIONS_PER_RESPONSE);
    let mut remaining = i64::from(limit);
    let mut topics = Vec::new();
    let mut next_cursor = None;
    for name in names {
        if remaining == 0 {
            next_cursor = Some(cursor_at(&name, 0));
            break;
        }
        let Some(spec) = ctx.broker.catalog.topic(&name) else {
            if !all {
                let code = if validate_topic_name(&name).is_ok() {
                    ErrorCode::UnknownTopicOrPartition
                } else {
                    ErrorCode::InvalidTopicException
                };
                topics.push(
                    topic_answer(&name)
                        .with_error_code(ctx.error(code))
                        .with_topic_id(uuid::Uuid::nil()),
                );
            }
            continue;
        };
        let start = match &cursor {
            Some((t, p)) if *t == name => i64::from(*p),
            _ => 0,
        };
        let count = i64::from(spec.partition_count());
        let upper = count.min(start + remaining);
        let partitions: Vec<DescribeTopicPartitionsResponsePartition> = (start..upper)
            .filter_map(|i| i32::try_from(i).ok())
            .filter_map(|i| partition_answer(&spec, i, &live))
            .collect();
        remaining -= i64::try_from(partitions.len()).unwrap_or(remaining);
        topics.push(
            topic_answer(&name)
                .with_error_code(0)
                .with_topic_id(spec.id)
                .with_partitions(partitions),
        );
        if upper < count {
            next_cursor = Some(cursor_at(&name, i32::try_from(upper).unwrap_or(i32::MAX)));
            break;
        }
    }
    DescribeTopicPartitionsResponse::default()
        .with_topics(topics)
        .with_next_cursor(next_cursor)
}

fn cursor_at(topic: &str, partition: i32) -> Cursor {
    Cursor::default()
        .with_topic_name(TopicName(StrBytes::from_string(topic.to_owned())))
        .with_partition_index(partition)
}

fn topic_answer(name: &str) -> DescribeTopicPartitionsResponseTopic {
    DescribeTopicPartitionsResponseTopic::default()
        .with_name(Some(TopicName(StrBytes::from_string(name.to_owned()))))
        .with_is_internal(false)
        .with_topic_authorized_operations(ALL_TOPIC_OPERATIONS)
}

fn partition_answer(
    spec: &TopicSpec,
    index: i32,
    live: &HashSet<i32>,
) -> Option<DescribeTopicPartitionsResponsePartition> {
    let assignment = spec.partition(index)?;
    let leader = assignment.leader();
    let replicas: Vec<BrokerId> = assignment.replicas.iter().map(|r| BrokerId(*r)).collect();
    let (online, offline): (Vec<BrokerId>, Vec<BrokerId>) =
        replicas.iter().copied().partition(|r| live.contains(&r.0));
    Some(
        DescribeTopicPartitionsResponsePartition::default()
            .with_error_code(0)
            .with_partition_index(index)
            .with_leader_id(BrokerId(if live.contains(&leader) { leader } else { -1 }))
            .with_leader_epoch(LEADER_EPOCH)
            .with_replica_nodes(replicas)
            .with_isr_nodes(online)
            .with_eligible_leader_replicas(Some(Vec::new()))
            .with_last_known_elr(Some(Vec::new()))
            .with_offline_replicas(offline),
    )
}

/// Kafka's error answer of the whole request: every named topic with INVALID_REQUEST.
fn invalid_request(
    ctx: &RequestContext,
    req: &DescribeTopicPartitionsRequest,
) -> DescribeTopicPartitionsResponse {
    let topics = req
        .topics
        .iter()
        .map(|t| {
            DescribeTopicPartitionsResponseTopic::default()
                .with_name(Some(t.name.clone()))
                .with_topic_id(uuid::Uuid::nil())
                .with_is_internal(false)
                .with_error_code(ctx.error(ErrorCode::InvalidRequest))
        })
        .collect();
    DescribeTopicPartitionsResponse::default().with_topics(topics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx};
    use crate::topics::NewTopic;
    use kafka_protocol::messages::describe_topic_partitions_request::{
        Cursor as RequestCursor, TopicRequest,
    };
    use kafka_protocol::messages::{ApiKey, ResponseKind};

    fn request(
        topics: &[&str],
        limit: i32,
        cursor: Option<(&str, i32)>,
    ) -> DescribeTopicPartitionsRequest {
        DescribeTopicPartitionsRequest::default()
            .with_topics(
                topics
                    .iter()
                    .map(|t| {
                        TopicRequest::default()
                            .with_name(TopicName(StrBytes::from_string((*t).into())))
                    })
                    .collect(),
            )
            .with_response_partition_limit(limit)
            .with_cursor(cursor.map(|(t, p)| {
                RequestCursor::default()
                    .with_topic_name(TopicName(StrBytes::from_string(t.into())))
                    .with_partition_index(p)
            }))
    }

    /// Each topic as (name, error, partition indexes).
    type Topics = Vec<(String, i16, Vec<i32>)>;

    /// The topics and the next cursor.
    fn page(resp: &DescribeTopicPartitionsResponse) -> (Topics, Option<(String, i32)>) {
        (
            resp.topics
                .iter()
                .map(|t| {
                    (
                        t.name.as_ref().map(|n| n.0.to_string()).unwrap_or_default(),
                        t.error_code,
                        t.partitions.iter().map(|p| p.partition_index).collect(),
                    )
                })
                .collect(),
            resp.next_cursor
                .as_ref()
                .map(|c| (c.topic_name.0.to_string(), c.partition_index)),
        )
    }

    async fn three_topics() -> (tempfile::TempDir, std::sync::Arc<crate::broker::Broker>) {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        for (name, count) in [("c", 2), ("a", 3), ("b", 1)] {
            let new = NewTopic {
                name: name.into(),
                num_partitions: count,
                replication_factor: 1,
                ..NewTopic::default()
            };
            b.create_topic(&new, false).await.unwrap();
        }
        (dir, b)
    }

    #[tokio::test]
    async fn pages_follow_the_cursor_through_every_topic() {
        let (_dir, b) = three_topics().await;
        let c = ctx(&b, ApiKey::DescribeTopicPartitions, 0);
        let p = |v: &[i32]| v.to_vec();
        let first = handle(&c, request(&[], 2, None)).await;
        assert_eq!(
            page(&first),
            (vec![("a".into(), 0, p(&[0, 1]))], Some(("a".into(), 2)))
        );
        let second = handle(&c, request(&[], 2, Some(("a", 2)))).await;
        assert_eq!(
            page(&second),
            (
                vec![("a".into(), 0, p(&[2])), ("b".into(), 0, p(&[0]))],
                Some(("c".into(), 0))
            )
        );
        let third = handle(&c, request(&[], 2, Some(("c", 0)))).await;
        assert_eq!(page(&third), (vec![("c".into(), 0, p(&[0, 1]))], None));
        // Room for everything: one page.
        let all = handle(&c, request(&[], 2000, None)).await;
        assert_eq!(page(&all).0.len(), 3);
        assert_eq!(page(&all).1, None);
        let a = &all.topics[0];
        assert_eq!(a.topic_id, b.catalog.topic("a").unwrap().id);
        assert_eq!(a.topic_authorized_operations, ALL_TOPIC_OPERATIONS);
        let p0 = &a.partitions[0];
        assert_eq!(
            (
                p0.leader_id,
                p0.leader_epoch,
                p0.replica_nodes.clone(),
                p0.isr_nodes.clone()
            ),
            (BrokerId(1), 0, vec![BrokerId(1)], vec![BrokerId(1)])
        );
        assert_eq!(p0.eligible_leader_replicas, Some(vec![]));
        assert!(p0.offline_replicas.is_empty());
        assert_encodes(&c, &ResponseKind::DescribeTopicPartitions(all));
        // A limit below 1 is 1.
        let tiny = handle(&c, request(&[], 0, None)).await;
        assert_eq!(
            page(&tiny),
            (vec![("a".into(), 0, p(&[0]))], Some(("a".into(), 1)))
        );
    }

    #[tokio::test]
    async fn named_topics_sorted_once_with_unknown_ones_answered() {
        let (_dir, b) = three_topics().await;
        let c = ctx(&b, ApiKey::DescribeTopicPartitions, 0);
        let resp = handle(
            &c,
            request(&["c", "nope", "a", "c", "bad/name"], 2000, None),
        )
        .await;
        assert_eq!(
            page(&resp),
            (
                vec![
                    ("a".into(), 0, vec![0, 1, 2]),
                    ("bad/name".into(), 17, vec![]),
                    ("c".into(), 0, vec![0, 1]),
                    ("nope".into(), 3, vec![]),
                ],
                None
            )
        );
        assert!(resp.topics[3].topic_id.is_nil());
        assert_encodes(&c, &ResponseKind::DescribeTopicPartitions(resp));
        // Unknown topics take no room; the cursor's topic starts at its partition.
        let resp = handle(&c, request(&["nope", "a", "c"], 2, Some(("a", 1)))).await;
        assert_eq!(
            page(&resp),
            (vec![("a".into(), 0, vec![1, 2])], Some(("c".into(), 0)))
        );
        // A cursor past the topic's partitions: the topic with none.
        let resp = handle(&c, request(&["a", "c"], 5, Some(("a", 7)))).await;
        assert_eq!(
            page(&resp),
            (
                vec![("a".into(), 0, vec![]), ("c".into(), 0, vec![0, 1])],
                None
            )
        );
    }

    #[tokio::test]
    async fn a_cursor_outside_the_list_or_negative_is_an_invalid_request() {
        let (_dir, b) = three_topics().await;
        let c = ctx(&b, ApiKey::DescribeTopicPartitions, 0);
        for req in [
            request(&["a", "b"], 10, Some(("c", 0))),
            request(&["a", "b"], 10, Some(("a", -1))),
        ] {
            let resp = handle(&c, req).await;
            assert_eq!(
                page(&resp),
                (
                    vec![("a".into(), 42, vec![]), ("b".into(), 42, vec![])],
                    None
                )
            );
            assert_encodes(&c, &ResponseKind::DescribeTopicPartitions(resp));
        }
        let resp = handle(&c, request(&[], 10, Some(("b", -1)))).await;
        assert!(resp.topics.is_empty());
    }
}
