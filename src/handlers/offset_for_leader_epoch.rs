//! OffsetForLeaderEpoch (23), v2–v4 (Kafka 4.0 dropped v0–v1 and the codec has none): per
//! partition, the largest leader epoch ≤ the one asked for and the offset it ends at, from the
//! partition's epoch cache (`data::epochs`) — what librdkafka and the Java consumer ask after
//! a leader change or when a committed offset carries an epoch, to detect a truncated log.
//!
//! In Kafka's order (`ReplicaManager.lastOffsetForLeaderEpoch`, `Partition.getLocalLog`):
//! unknown topic or partition → UNKNOWN_TOPIC_OR_PARTITION; placed on another node →
//! NOT_LEADER_OR_FOLLOWER; then `current_leader_epoch` (-1: not checked) older than the
//! partition's → FENCED_LEADER_EPOCH, newer → UNKNOWN_LEADER_EPOCH; otherwise NONE with
//! (-1, -1) when no epoch qualifies. Errors answer (-1, -1). `replica_id` (v3+: -1 a consumer,
//! -2 a debugging tool, ≥ 0 a follower) changes nothing: Kafka answers every caller from the
//! leader only, and partitions have no followers here.

use kafka_protocol::messages::offset_for_leader_epoch_response::{
    EpochEndOffset, OffsetForLeaderTopicResult,
};
use kafka_protocol::messages::{OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse};

use super::RequestContext;
use crate::errors::{to_kafka_error, BrokerError};

/// Answers each partition.
pub async fn handle(
    ctx: &RequestContext,
    req: OffsetForLeaderEpochRequest,
) -> OffsetForLeaderEpochResponse {
    let mut topics = Vec::with_capacity(req.topics.len());
    for t in req.topics {
        let name = t.topic.0.to_string();
        let mut partitions = Vec::with_capacity(t.partitions.len());
        for p in &t.partitions {
            let answer = end_offset(
                ctx,
                &name,
                p.partition,
                p.current_leader_epoch,
                p.leader_epoch,
            )
            .await;
            let r = EpochEndOffset::default().with_partition(p.partition);
            partitions.push(match answer {
                Ok(Some((epoch, offset))) => r
                    .with_error_code(0)
                    .with_leader_epoch(epoch)
                    .with_end_offset(offset),
                Ok(None) => r
                    .with_error_code(0)
                    .with_leader_epoch(-1)
                    .with_end_offset(-1),
                Err(e) => {
                    tracing::debug!(topic = %name, partition = p.partition, error = %e,
                        "offset for leader epoch refused");
                    r.with_error_code(ctx.error(to_kafka_error(&e)))
                        .with_leader_epoch(-1)
                        .with_end_offset(-1)
                }
            });
        }
        topics.push(
            OffsetForLeaderTopicResult::default()
                .with_topic(t.topic)
                .with_partitions(partitions),
        );
    }
    OffsetForLeaderEpochResponse::default().with_topics(topics)
}

async fn end_offset(
    ctx: &RequestContext,
    topic: &str,
    index: i32,
    current_leader_epoch: i32,
    leader_epoch: i32,
) -> Result<Option<(i32, i64)>, BrokerError> {
    let partition = ctx.broker.data.partition(topic, index).await?;
    ctx.broker
        .check_leader_epoch(current_leader_epoch, partition.leader_epoch())?;
    Ok(partition.end_offset_for_epoch(leader_epoch))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, create_topic, ctx, plain_batch};
    use kafka_protocol::messages::offset_for_leader_epoch_request::{
        OffsetForLeaderPartition, OffsetForLeaderTopic,
    };
    use kafka_protocol::messages::{ApiKey, BrokerId, ResponseKind, TopicName};
    use kafka_protocol::protocol::StrBytes;

    fn request(topic: &str, parts: &[(i32, i32, i32)]) -> OffsetForLeaderEpochRequest {
        OffsetForLeaderEpochRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_topics(vec![OffsetForLeaderTopic::default()
                .with_topic(TopicName(StrBytes::from_string(topic.into())))
                .with_partitions(
                    parts
                        .iter()
                        .map(|(p, current, epoch)| {
                            OffsetForLeaderPartition::default()
                                .with_partition(*p)
                                .with_current_leader_epoch(*current)
                                .with_leader_epoch(*epoch)
                        })
                        .collect(),
                )])
    }

    fn answers(resp: &OffsetForLeaderEpochResponse) -> Vec<(i16, i32, i64)> {
        resp.topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (p.error_code, p.leader_epoch, p.end_offset))
            })
            .collect()
    }

    #[tokio::test]
    async fn the_current_epoch_ends_at_the_log_end_at_every_version() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        create_topic(&b, "t", 2, &[]).await;
        let p = b.data.partition("t", 0).await.unwrap();
        for _ in 0..3 {
            let batch = bytes::BytesMut::from(&plain_batch(5)[..]);
            let header = protocol::batch::BatchHeader::parse(&batch).unwrap();
            p.append(batch, header, 0).unwrap();
        }
        for v in 2..=4 {
            let c = ctx(&b, ApiKey::OffsetForLeaderEpoch, v);
            let resp = handle(
                &c,
                request(
                    "t",
                    &[
                        (0, -1, 0),  // a consumer without a current epoch
                        (0, 0, 0),   // with it
                        (1, 0, 0),   // an empty partition: its epoch starts and ends at 0
                        (0, -1, 4),  // newer than any epoch: none qualifies
                        (0, -1, -1), // undefined
                        (0, 3, 0),   // the client knows a newer leader
                        (0, -2, 0),  // an older one (only -1 means "none")
                        (9, -1, 0),  // no such partition
                    ],
                ),
            )
            .await;
            assert_eq!(
                answers(&resp),
                vec![
                    (0, 0, 15),
                    (0, 0, 15),
                    (0, 0, 0),
                    (0, -1, -1),
                    (0, -1, -1),
                    (75, -1, -1),
                    (74, -1, -1),
                    (3, -1, -1),
                ],
                "v{v}"
            );
            assert_encodes(&c, &ResponseKind::OffsetForLeaderEpoch(resp));
            let unknown = handle(&c, request("nope", &[(0, -1, 0)])).await;
            assert_eq!(answers(&unknown), vec![(3, -1, -1)]);
        }
    }

    #[tokio::test]
    async fn deleted_records_move_where_the_epoch_starts() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        create_topic(&b, "t", 1, &[]).await;
        let p = b.data.partition("t", 0).await.unwrap();
        let batch = bytes::BytesMut::from(&plain_batch(20)[..]);
        let header = protocol::batch::BatchHeader::parse(&batch).unwrap();
        p.append(batch, header, 0).unwrap();
        p.delete_records_before(12).unwrap();
        assert_eq!(p.epoch_for_offset(12), Some(0));
        assert_eq!(p.epoch_for_offset(5), None);
        let c = ctx(&b, ApiKey::OffsetForLeaderEpoch, 4);
        assert_eq!(
            answers(&handle(&c, request("t", &[(0, 0, 0)])).await),
            vec![(0, 0, 20)]
        );
    }
}
