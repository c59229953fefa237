//! DescribeProducers (61), v0 (KIP-664): each partition's active producers as its owner's
//! producer state holds them — `kafka-transactions.sh describe-producers` and `find-hanging`.
//! As Kafka's `ReplicaManager.activeProducerState`: a partition this node does not own is
//! NOT_LEADER_OR_FOLLOWER, an unknown one UNKNOWN_TOPIC_OR_PARTITION; per producer its epoch,
//! last sequence, last timestamp, coordinator epoch and the first offset of its open
//! transaction (−1 when none). Last timestamp and coordinator epoch are kept in memory only:
//! after a restart they are −1 until the producer's next batch or marker (decision 0144).

use kafka_protocol::messages::describe_producers_response::{
    PartitionResponse, ProducerState, TopicResponse,
};
use kafka_protocol::messages::{DescribeProducersRequest, DescribeProducersResponse, ProducerId};
use protocol::ErrorCode;

use super::RequestContext;
use crate::data::LookupError;
use crate::errors::{to_kafka_error, BrokerError};

/// Describes the producers of every partition asked, in request order.
pub async fn handle(
    ctx: &RequestContext,
    req: DescribeProducersRequest,
) -> DescribeProducersResponse {
    let mut topics = Vec::with_capacity(req.topics.len());
    for t in &req.topics {
        let mut partitions = Vec::with_capacity(t.partition_indexes.len());
        for &p in &t.partition_indexes {
            let answer = PartitionResponse::default().with_partition_index(p);
            let answer = match ctx.broker.data.partition(t.name.0.as_str(), p).await {
                Ok(partition) => answer
                    .with_error_code(ctx.error(ErrorCode::None))
                    .with_active_producers(
                        partition
                            .active_producers()
                            .into_iter()
                            .map(|(p, txn_first)| {
                                ProducerState::default()
                                    .with_producer_id(ProducerId(p.producer_id))
                                    .with_producer_epoch(i32::from(p.epoch))
                                    .with_last_sequence(p.last_sequence)
                                    .with_last_timestamp(p.last_timestamp)
                                    .with_coordinator_epoch(p.coordinator_epoch)
                                    .with_current_txn_start_offset(txn_first.unwrap_or(-1))
                            })
                            .collect(),
                    ),
                Err(LookupError::NotLeader { .. }) => {
                    answer.with_error_code(ctx.error(ErrorCode::NotLeaderOrFollower))
                }
                Err(e) => answer.with_error_code(ctx.error(to_kafka_error(&BrokerError::from(e)))),
            };
            partitions.push(answer);
        }
        topics.push(
            TopicResponse::default()
                .with_name(t.name.clone())
                .with_partitions(partitions),
        );
    }
    DescribeProducersResponse::default().with_topics(topics)
}
