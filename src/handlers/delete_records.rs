//! DeleteRecords (21), v0–v2: moves each partition's log start offset (-1: to the high
//! watermark; past it: OFFSET_OUT_OF_RANGE) on the node that owns it, deleting the segments
//! wholly below; Fetch below the new start answers OFFSET_OUT_OF_RANGE and ListOffsets
//! earliest answers the new start. `timeout_ms` has nothing to wait for: with one replica a
//! partition's start is durable once its owner has written it.

use kafka_protocol::messages::delete_records_response::{
    DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
};
use kafka_protocol::messages::{DeleteRecordsRequest, DeleteRecordsResponse};

use super::RequestContext;
use crate::errors::{to_kafka_error, BrokerError};

/// Deletes records of each partition, answering per partition.
pub async fn handle(ctx: &RequestContext, req: DeleteRecordsRequest) -> DeleteRecordsResponse {
    let mut topics = Vec::with_capacity(req.topics.len());
    for t in &req.topics {
        let name = t.name.0.to_string();
        let mut partitions = Vec::with_capacity(t.partitions.len());
        for p in &t.partitions {
            let result = delete(ctx, &name, p.partition_index, p.offset).await;
            let r = DeleteRecordsPartitionResult::default().with_partition_index(p.partition_index);
            partitions.push(match result {
                Ok(low_watermark) => r.with_low_watermark(low_watermark).with_error_code(0),
                Err(e) => {
                    tracing::debug!(topic = %name, partition = p.partition_index, error = %e,
                        "delete records refused");
                    r.with_low_watermark(-1)
                        .with_error_code(ctx.error(to_kafka_error(&e)))
                }
            });
        }
        topics.push(
            DeleteRecordsTopicResult::default()
                .with_name(t.name.clone())
                .with_partitions(partitions),
        );
    }
    DeleteRecordsResponse::default().with_topics(topics)
}

async fn delete(
    ctx: &RequestContext,
    topic: &str,
    index: i32,
    offset: i64,
) -> Result<i64, BrokerError> {
    let partition = ctx.broker.data.partition(topic, index).await?;
    let low = tokio::task::spawn_blocking(move || partition.delete_records_before(offset))
        .await
        .map_err(|e| {
            BrokerError::Log(compaction::LogError::Io {
                op: "delete records",
                path: std::path::PathBuf::new(),
                source: std::io::Error::other(e.to_string()),
            })
        })??;
    tracing::info!(topic, partition = index, log_start = low, "deleted records");
    Ok(low)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, create_topic, ctx, plain_batch};
    use kafka_protocol::messages::delete_records_request::{
        DeleteRecordsPartition, DeleteRecordsTopic,
    };
    use kafka_protocol::messages::{ApiKey, ResponseKind, TopicName};
    use kafka_protocol::protocol::StrBytes;

    fn request(topic: &str, parts: &[(i32, i64)]) -> DeleteRecordsRequest {
        DeleteRecordsRequest::default()
            .with_timeout_ms(1000)
            .with_topics(vec![DeleteRecordsTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_partitions(
                    parts
                        .iter()
                        .map(|(p, o)| {
                            DeleteRecordsPartition::default()
                                .with_partition_index(*p)
                                .with_offset(*o)
                        })
                        .collect(),
                )])
    }

    #[tokio::test]
    async fn moves_the_log_start_and_reads_follow_at_every_version() {
        for v in 0..=2 {
            let dir = tempfile::tempdir().unwrap();
            let b = broker(dir.path(), &[]);
            create_topic(&b, "t", 2, &[("segment.bytes", "1048576")]).await;
            let p = b.data.partition("t", 0).await.unwrap();
            for _ in 0..10 {
                let batch = bytes::BytesMut::from(&plain_batch(10)[..]);
                let header = protocol::batch::BatchHeader::parse(&batch).unwrap();
                p.append(batch, header, 0).unwrap();
            }
            assert_eq!(p.high_watermark(), 100);
            let c = ctx(&b, ApiKey::DeleteRecords, v);
            let resp = handle(&c, request("t", &[(0, 35), (1, 1), (7, 0)])).await;
            let got: Vec<(i16, i64)> = resp.topics[0]
                .partitions
                .iter()
                .map(|p| (p.error_code, p.low_watermark))
                .collect();
            assert_eq!(got, vec![(0, 35), (1, -1), (3, -1)], "v{v}");
            assert_encodes(&c, &ResponseKind::DeleteRecords(resp));
            assert_eq!(p.log_start_offset(), 35);
            assert!(matches!(
                p.read(34, 1 << 20, true),
                Err(crate::data::ReadError::OffsetOutOfRange { .. })
            ));
            assert!(p.read(35, 1 << 20, true).unwrap().bytes > 0);
            // Backwards is no change; -1 is the high watermark.
            let back = handle(&c, request("t", &[(0, 10)])).await;
            assert_eq!(back.topics[0].partitions[0].low_watermark, 35);
            let all = handle(&c, request("t", &[(0, -1)])).await;
            assert_eq!(all.topics[0].partitions[0].low_watermark, 100);
            assert_eq!(p.log_start_offset(), 100);
            assert_eq!(p.read(100, 1 << 20, true).unwrap().bytes, 0);
            let past = handle(&c, request("t", &[(0, 101), (0, -5)])).await;
            assert_eq!(past.topics[0].partitions[0].error_code, 1);
            assert_eq!(past.topics[0].partitions[1].error_code, 1);
        }
    }

    #[tokio::test]
    async fn the_log_start_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let b = broker(dir.path(), &[]);
            create_topic(&b, "t", 1, &[]).await;
            let p = b.data.partition("t", 0).await.unwrap();
            let batch = bytes::BytesMut::from(&plain_batch(20)[..]);
            let header = protocol::batch::BatchHeader::parse(&batch).unwrap();
            p.append(batch, header, 0).unwrap();
            assert_eq!(p.delete_records_before(12).unwrap(), 12);
        }
        let b = broker(dir.path(), &[]);
        let p = b.data.partition("t", 0).await.unwrap();
        assert_eq!((p.log_start_offset(), p.high_watermark()), (12, 20));
    }
}
