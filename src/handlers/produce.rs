//! Produce (0): v3–v12 stored, v0–v2 answered with UNSUPPORTED_VERSION (advertised only so
//! that older librdkafka enables compression, as Kafka 4.0 does).
//!
//! Each partition's batch is checked (one v2 batch, CRC, counts), then appended on the blocking
//! pool; the partitions of one request are appended concurrently, so their fsyncs overlap and
//! join the group commits of other producers. `acks=0` gets no response; if something failed,
//! the connection is closed instead, which is how Kafka tells such a producer.

use bytes::BytesMut;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;
use protocol::apis::PRODUCE_MIN_DECODABLE_VERSION;
use protocol::ErrorCode;

use super::{Reply, RequestContext};
use crate::data::{now_ms, Appended};
use crate::errors::{to_kafka_error, BrokerError};

/// Handles one Produce request.
pub async fn handle(ctx: &RequestContext, req: ProduceRequest) -> Reply {
    if ctx.version < PRODUCE_MIN_DECODABLE_VERSION {
        return legacy(ctx, &req);
    }
    let acks = req.acks;
    let mut topics = Vec::with_capacity(req.topic_data.len());
    let mut failed = false;
    if !matches!(acks, -1..=1) {
        // Kafka refuses the whole request, every partition with INVALID_REQUIRED_ACKS.
        for t in &req.topic_data {
            let partitions = t
                .partition_data
                .iter()
                .map(|p| error_response(ctx, p.index, ErrorCode::InvalidRequiredAcks, None))
                .collect();
            topics.push(
                TopicProduceResponse::default()
                    .with_name(t.name.clone())
                    .with_partition_responses(partitions),
            );
        }
        failed = true;
    } else if req.transactional_id.is_some() {
        let err = BrokerError::Unsupported("transactions are not served".into());
        for t in &req.topic_data {
            let partitions = t
                .partition_data
                .iter()
                .map(|p| error_response(ctx, p.index, to_kafka_error(&err), Some(&err)))
                .collect();
            topics.push(
                TopicProduceResponse::default()
                    .with_name(t.name.clone())
                    .with_partition_responses(partitions),
            );
        }
        failed = true;
    } else {
        // Start every partition's append, then collect in request order.
        let mut pending = Vec::new();
        for t in req.topic_data {
            let name = t.name.0.to_string();
            let mut handles = Vec::with_capacity(t.partition_data.len());
            for p in t.partition_data {
                let broker = ctx.broker.clone();
                let topic = name.clone();
                handles.push((
                    p.index,
                    tokio::spawn(async move { append(&broker, &topic, p.index, p.records).await }),
                ));
            }
            pending.push((t.name, handles));
        }
        for (name, handles) in pending {
            let mut partitions = Vec::with_capacity(handles.len());
            for (index, handle) in handles {
                let outcome = handle.await.unwrap_or_else(|e| {
                    Err(BrokerError::Log(compaction::LogError::Io {
                        op: "append task",
                        path: Default::default(),
                        source: std::io::Error::other(e.to_string()),
                    }))
                });
                partitions.push(match outcome {
                    Ok(a) => {
                        let mut r = PartitionProduceResponse::default()
                            .with_index(index)
                            .with_base_offset(a.base_offset);
                        if ctx.version >= 2 {
                            r = r.with_log_append_time_ms(-1);
                        }
                        if ctx.version >= 5 {
                            r = r.with_log_start_offset(a.log_start_offset);
                        }
                        r
                    }
                    Err(e) => {
                        failed = true;
                        tracing::debug!(topic = %name.0, partition = index, error = %e,
                            "produce refused");
                        error_response(ctx, index, to_kafka_error(&e), Some(&e))
                    }
                });
            }
            topics.push(
                TopicProduceResponse::default()
                    .with_name(name)
                    .with_partition_responses(partitions),
            );
        }
    }
    if acks == 0 {
        return if failed {
            Reply::Close("a produce with acks=0 failed")
        } else {
            Reply::Nothing
        };
    }
    Reply::Body(Box::new(ResponseKind::Produce(
        ProduceResponse::default().with_responses(topics),
    )))
}

async fn append(
    broker: &std::sync::Arc<crate::broker::Broker>,
    topic: &str,
    index: i32,
    records: Option<bytes::Bytes>,
) -> Result<Appended, BrokerError> {
    let records = records.unwrap_or_default();
    let header =
        protocol::batch::validate_produced(&records).map_err(crate::data::AppendError::from)?;
    let partition = broker.data.partition(topic, index).await?;
    let records = BytesMut::from(&records[..]);
    let appended = tokio::task::spawn_blocking(move || partition.append(records, header, now_ms()))
        .await
        .map_err(|e| {
            BrokerError::Log(compaction::LogError::Io {
                op: "append task",
                path: Default::default(),
                source: std::io::Error::other(e.to_string()),
            })
        })??;
    Ok(appended)
}

fn error_response(
    ctx: &RequestContext,
    index: i32,
    code: ErrorCode,
    err: Option<&BrokerError>,
) -> PartitionProduceResponse {
    let mut r = PartitionProduceResponse::default()
        .with_index(index)
        .with_error_code(ctx.error(code))
        .with_base_offset(-1);
    if ctx.version >= 2 {
        r = r.with_log_append_time_ms(-1);
    }
    if ctx.version >= 5 {
        r = r.with_log_start_offset(-1);
    }
    if ctx.version >= 8 {
        r = r.with_error_message(err.map(|e| StrBytes::from_string(e.to_string())));
    }
    r
}

/// v0–v2: every partition gets UNSUPPORTED_VERSION, in the layout of the client's version.
fn legacy(ctx: &RequestContext, req: &ProduceRequest) -> Reply {
    ctx.error(ErrorCode::UnsupportedVersion);
    if req.acks == 0 {
        return Reply::Close("a produce below v3 with acks=0 cannot be answered");
    }
    match protocol::response::legacy_produce_response(
        ctx.correlation_id,
        ctx.version,
        req,
        ErrorCode::UnsupportedVersion,
    ) {
        Ok(frame) => Reply::Frame(frame),
        Err(e) => {
            tracing::error!(error = %e, "encoding a legacy produce answer failed");
            Reply::Close("a legacy produce answer could not be encoded")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx, plain_batch};
    use crate::topics::NewTopic;
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::{ApiKey, TopicName};

    fn request(topic: &str, partition: i32, records: bytes::Bytes, acks: i16) -> ProduceRequest {
        ProduceRequest::default()
            .with_transactional_id(None)
            .with_acks(acks)
            .with_timeout_ms(1000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(partition)
                    .with_records(Some(records))])])
    }

    fn partition(reply: Reply) -> PartitionProduceResponse {
        match reply {
            Reply::Body(body) => match *body {
                ResponseKind::Produce(mut r) => r.responses.remove(0).partition_responses.remove(0),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn every_version_appends_and_encodes_its_answer() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let new = NewTopic {
            name: "p".into(),
            num_partitions: 1,
            replication_factor: 1,
            ..NewTopic::default()
        };
        b.create_topic(&new, false).await.unwrap();
        let mut expected_offset = 0;
        for v in 3..=12 {
            let c = ctx(&b, ApiKey::Produce, v);
            let reply = handle(&c, request("p", 0, plain_batch(2), -1)).await;
            let Reply::Body(body) = reply else {
                panic!("v{v}: no body")
            };
            assert_encodes(&c, &body);
            let p = partition(Reply::Body(body));
            assert_eq!((p.error_code, p.base_offset), (0, expected_offset), "v{v}");
            expected_offset += 2;
            // Errors encode at every version too.
            let reply = handle(&c, request("absent", 0, plain_batch(1), 1)).await;
            let Reply::Body(body) = reply else {
                panic!("v{v}: no body")
            };
            assert_encodes(&c, &body);
            assert_eq!(partition(Reply::Body(body)).error_code, 3, "v{v}");
        }
    }

    #[tokio::test]
    async fn acks_zero_answers_nothing_or_closes_on_failure_and_bad_acks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let new = NewTopic {
            name: "p".into(),
            num_partitions: 1,
            replication_factor: 1,
            ..NewTopic::default()
        };
        b.create_topic(&new, false).await.unwrap();
        let c = ctx(&b, ApiKey::Produce, 9);
        assert!(matches!(
            handle(&c, request("p", 0, plain_batch(1), 0)).await,
            Reply::Nothing
        ));
        assert!(matches!(
            handle(&c, request("p", 5, plain_batch(1), 0)).await,
            Reply::Close(_)
        ));
        let p = partition(handle(&c, request("p", 0, plain_batch(1), 2)).await);
        assert_eq!(p.error_code, 21, "INVALID_REQUIRED_ACKS");
        assert_eq!(b.data.partition("p", 0).await.unwrap().log_end_offset(), 1);
    }
}
