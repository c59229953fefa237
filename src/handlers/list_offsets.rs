//! ListOffsets (2), v1–v10: earliest (-2), latest (-1), max timestamp (-3, v7+), earliest
//! local (-4, v8+) and latest tiered (-5, v9+), and by timestamp through the time index,
//! answering the *record's* offset inside a batch (the batch is looked into, decompressed if
//! needed). The leader epoch answered (v4+) is the one the offset was written in, from the
//! partition's epoch cache (latest: the current epoch), as Kafka's
//! `UnifiedLog.fetchOffsetByTimestamp` answers it. With `isolation_level = 1`
//! (READ_COMMITTED) the latest offset is the last stable offset and a timestamp lookup finds
//! only offsets below it (Kafka's `lastFetchableOffset`).
//!
//! Cohort has no tiered storage, and Kafka without it answers -4 like -2 (the whole log is
//! local) and -5 with offset -1, leader epoch -1 (nothing was tiered). A special timestamp
//! below the version that introduced it, or a negative one Kafka does not define, is
//! UNSUPPORTED_VERSION, as Kafka's `ReplicaManager` refuses it. v10's `timeout_ms` bounds
//! Kafka's wait for remote storage and has nothing to bound here (decision 0161).

use std::collections::HashMap;

use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::{ListOffsetsRequest, ListOffsetsResponse};

use super::RequestContext;
use crate::data::Wanted;
use crate::errors::{to_kafka_error, BrokerError};

/// Kafka's special timestamps.
const EARLIEST: i64 = -2;
const LATEST: i64 = -1;
const MAX_TIMESTAMP: i64 = -3;
const EARLIEST_LOCAL: i64 = -4;
const LATEST_TIERED: i64 = -5;

/// The first version that accepts a special (negative) timestamp; `None` for a negative
/// timestamp Kafka does not define.
fn special_timestamp_min_version(timestamp: i64) -> Option<i16> {
    match timestamp {
        LATEST | EARLIEST => Some(1),
        MAX_TIMESTAMP => Some(7),
        EARLIEST_LOCAL => Some(8),
        LATEST_TIERED => Some(9),
        _ => None,
    }
}

/// Answers each partition with the offset (and timestamp) asked for.
pub async fn handle(ctx: &RequestContext, req: ListOffsetsRequest) -> ListOffsetsResponse {
    let mut seen: HashMap<(String, i32), usize> = HashMap::new();
    for t in &req.topics {
        for p in &t.partitions {
            *seen
                .entry((t.name.0.to_string(), p.partition_index))
                .or_default() += 1;
        }
    }
    let read_committed = req.isolation_level == 1;
    let mut topics = Vec::with_capacity(req.topics.len());
    for t in req.topics {
        let mut partitions = Vec::with_capacity(t.partitions.len());
        for p in t.partitions {
            let key = (t.name.0.to_string(), p.partition_index);
            let result = if seen.get(&key).copied().unwrap_or(0) > 1 {
                Err(BrokerError::InvalidRequest(format!(
                    "partition {}-{} appears more than once",
                    key.0, key.1
                )))
            } else {
                lookup(
                    ctx,
                    &key.0,
                    key.1,
                    p.current_leader_epoch,
                    p.timestamp,
                    read_committed,
                )
                .await
            };
            let mut r = ListOffsetsPartitionResponse::default().with_partition_index(key.1);
            match result {
                Ok((offset, timestamp, epoch)) => {
                    r = r.with_offset(offset).with_timestamp(timestamp);
                    if ctx.version >= 4 {
                        r = r.with_leader_epoch(epoch.unwrap_or(-1));
                    }
                }
                Err(e) => {
                    tracing::debug!(topic = %key.0, partition = key.1, error = %e,
                        "list offsets refused");
                    r = r
                        .with_error_code(ctx.error(to_kafka_error(&e)))
                        .with_offset(-1)
                        .with_timestamp(-1);
                    if ctx.version >= 4 {
                        r = r.with_leader_epoch(-1);
                    }
                }
            }
            partitions.push(r);
        }
        topics.push(
            ListOffsetsTopicResponse::default()
                .with_name(t.name)
                .with_partitions(partitions),
        );
    }
    ListOffsetsResponse::default().with_topics(topics)
}

/// `(offset, timestamp, leader epoch)`; `(-1, -1, None)` when no record qualifies.
async fn lookup(
    ctx: &RequestContext,
    topic: &str,
    index: i32,
    leader_epoch: i32,
    timestamp: i64,
    read_committed: bool,
) -> Result<(i64, i64, Option<i32>), BrokerError> {
    if timestamp < 0 {
        match special_timestamp_min_version(timestamp) {
            Some(min) if ctx.version >= min => {}
            Some(min) => {
                return Err(BrokerError::Unsupported(format!(
                    "timestamp {timestamp} needs ListOffsets v{min}"
                )))
            }
            None => {
                return Err(BrokerError::Unsupported(format!(
                    "timestamp {timestamp} is not a timestamp Kafka defines"
                )))
            }
        }
    }
    let partition = ctx.broker.data.partition(topic, index).await?;
    ctx.broker
        .check_leader_epoch(leader_epoch, partition.leader_epoch())?;
    match timestamp {
        // Without tiered storage the local log is the whole log.
        EARLIEST | EARLIEST_LOCAL => {
            let start = partition.log_start_offset();
            Ok((start, -1, partition.epoch_for_offset(start)))
        }
        // Nothing is ever tiered: Kafka's answer for a log without remote storage.
        LATEST_TIERED => Ok((-1, -1, Some(-1))),
        LATEST => Ok((
            if read_committed {
                partition.last_stable_offset()
            } else {
                partition.high_watermark()
            },
            -1,
            Some(partition.leader_epoch()),
        )),
        _ => {
            let wanted = if timestamp == MAX_TIMESTAMP {
                Wanted::MaxTimestamp
            } else {
                Wanted::AtOrAfter(timestamp)
            };
            let found = ctx
                .broker
                .data
                .timestamp_lookups()
                .lookup(std::sync::Arc::clone(&partition), wanted)
                .await?;
            let fetchable = if read_committed {
                partition.last_stable_offset()
            } else {
                i64::MAX
            };
            Ok(found
                .filter(|r| r.offset < fetchable)
                .map_or((-1, -1, None), |r| {
                    (r.offset, r.timestamp, partition.epoch_for_offset(r.offset))
                }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, create_topic, ctx, plain_batch};
    use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    use kafka_protocol::messages::{ApiKey, ResponseKind, TopicName};
    use kafka_protocol::protocol::StrBytes;

    fn request(parts: &[(i32, i64)]) -> ListOffsetsRequest {
        ListOffsetsRequest::default().with_topics(vec![ListOffsetsTopic::default()
            .with_name(TopicName(StrBytes::from_static_str("t")))
            .with_partitions(
                parts
                    .iter()
                    .map(|(p, ts)| {
                        ListOffsetsPartition::default()
                            .with_partition_index(*p)
                            .with_timestamp(*ts)
                    })
                    .collect(),
            )])
    }

    #[tokio::test]
    async fn every_version_answers_and_encodes() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        create_topic(&b, "t", 2, &[]).await;
        let p = b.data.partition("t", 0).await.unwrap();
        for _ in 0..2 {
            // Timestamps 1000..1003 in each batch.
            let records = plain_batch(4);
            let header = protocol::batch::validate_produced(&records).unwrap();
            p.append(bytes::BytesMut::from(&records[..]), header, 0)
                .unwrap();
        }
        for v in 1..=10 {
            let c = ctx(&b, ApiKey::ListOffsets, v);
            let mut got = Vec::new();
            for (p, ts) in [(0, -2), (0, -1), (0, 1002), (0, 5000), (1, -1), (9, -1)] {
                let resp = handle(&c, request(&[(p, ts)])).await;
                let r = &resp.topics[0].partitions[0];
                got.push((r.error_code, r.offset, r.timestamp));
                assert_encodes(&c, &ResponseKind::ListOffsets(resp));
            }
            assert_eq!(
                got,
                vec![
                    (0, 0, -1),
                    (0, 8, -1),
                    (0, 2, 1002),
                    (0, -1, -1),
                    (0, 0, -1),
                    (3, -1, -1)
                ],
                "v{v}"
            );
        }
        let c = ctx(&b, ApiKey::ListOffsets, 7);
        let resp = handle(&c, request(&[(0, -3), (1, -3)])).await;
        let got: Vec<(i16, i64, i64)> = resp.topics[0]
            .partitions
            .iter()
            .map(|p| (p.error_code, p.offset, p.timestamp))
            .collect();
        assert_eq!(
            got,
            vec![(0, 3, 1003), (0, -1, -1)],
            "the first record with the max"
        );
        let dup = handle(&c, request(&[(0, -1), (0, -2)])).await;
        assert!(dup.topics[0].partitions.iter().all(|p| p.error_code == 42));
    }

    /// (error code, offset, timestamp, leader epoch) of one lookup at `version`.
    async fn one(
        b: &std::sync::Arc<crate::broker::Broker>,
        version: i16,
        timestamp: i64,
    ) -> (i16, i64, i64, i32) {
        let c = ctx(b, ApiKey::ListOffsets, version);
        let resp = handle(&c, request(&[(0, timestamp)])).await;
        let r = &resp.topics[0].partitions[0];
        (r.error_code, r.offset, r.timestamp, r.leader_epoch)
    }

    #[tokio::test]
    async fn special_timestamps_follow_their_versions_and_kafka_without_tiered_storage() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        create_topic(&b, "t", 1, &[]).await;
        let p = b.data.partition("t", 0).await.unwrap();
        let records = plain_batch(4);
        let header = protocol::batch::validate_produced(&records).unwrap();
        p.append(bytes::BytesMut::from(&records[..]), header, 0)
            .unwrap();
        p.delete_records_before(2).unwrap();
        let epoch = p.epoch_for_offset(2).unwrap_or(-1);

        // Earliest local is the log start (the whole log is local), from v8.
        assert_eq!(one(&b, 8, -4).await, (0, 2, -1, epoch));
        assert_eq!(one(&b, 10, -4).await, one(&b, 10, -2).await);
        assert_eq!(one(&b, 7, -4).await, (35, -1, -1, -1));
        // Latest tiered: nothing tiered, offset and epoch -1, from v9.
        assert_eq!(one(&b, 9, -5).await, (0, -1, -1, -1));
        assert_eq!(one(&b, 10, -5).await, (0, -1, -1, -1));
        assert_eq!(one(&b, 8, -5).await, (35, -1, -1, -1));
        // Max timestamp from v7; a negative timestamp Kafka does not define, never.
        assert_eq!(one(&b, 6, -3).await, (35, -1, -1, -1));
        assert_eq!(one(&b, 9, -3).await.0, 0);
        assert_eq!(one(&b, 10, -6).await, (35, -1, -1, -1));
        assert_eq!(one(&b, 10, -1000).await, (35, -1, -1, -1));
    }
}
