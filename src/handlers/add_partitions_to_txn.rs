//! AddPartitionsToTxn (24), v0–v3: the client adds the partitions it is about to produce to
//! into its transaction. Every partition is checked against the replicated topic metadata
//! first, as KafkaApis does: one unknown partition fails the request, that partition with
//! UNKNOWN_TOPIC_OR_PARTITION and every other one with OPERATION_NOT_ATTEMPTED (the
//! coordinator answers both, `transactions::add_partitions`). v4+ (KIP-890's batch between
//! brokers) is not served.

use coordinator::{PartitionIndex, Reply, TopicName, TxnPartition, TxnTopic, WriteCommand};
use kafka_protocol::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
};
use kafka_protocol::messages::{AddPartitionsToTxnRequest, AddPartitionsToTxnResponse};

use super::group_common::{failure_code, groups, str_bytes, unexpected};
use super::txn_common::{fenced_since, producer, txn_code};
use super::RequestContext;

/// Adds the partitions, answering per partition.
pub async fn handle(
    ctx: &RequestContext,
    req: AddPartitionsToTxnRequest,
) -> AddPartitionsToTxnResponse {
    let groups = match groups(ctx) {
        Ok(g) => g,
        Err(e) => return every_partition(&req, failure_code(ctx, &e)),
    };
    let topics: Vec<TxnTopic> = req
        .v3_and_below_topics
        .iter()
        .map(|t| TxnTopic {
            name: TopicName::new(t.name.0.as_str()),
            partitions: t
                .partitions
                .iter()
                .map(|&p| TxnPartition {
                    partition: PartitionIndex(p),
                    partition_known: groups.partition_known(t.name.0.as_str(), p),
                })
                .collect(),
        })
        .collect();
    let command = coordinator::AddPartitionsToTxn {
        producer: producer(
            ctx,
            req.v3_and_below_transactional_id.0.as_str(),
            req.v3_and_below_producer_id.0,
            req.v3_and_below_producer_epoch,
        ),
        topics,
    };
    match groups
        .write(WriteCommand::AddPartitionsToTxn(command))
        .await
    {
        Ok(Reply::AddPartitionsToTxn(results)) => {
            let out = results
                .into_iter()
                .map(|(name, partitions)| {
                    AddPartitionsToTxnTopicResult::default()
                        .with_name(kafka_protocol::messages::TopicName(str_bytes(
                            name.into_string(),
                        )))
                        .with_results_by_partition(
                            partitions
                                .into_iter()
                                .map(|(p, error)| {
                                    AddPartitionsToTxnPartitionResult::default()
                                        .with_partition_index(p.0)
                                        .with_partition_error_code(txn_code(
                                            ctx,
                                            error,
                                            fenced_since::ADD_PARTITIONS,
                                        ))
                                })
                                .collect(),
                        )
                })
                .collect();
            AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(out)
        }
        Ok(other) => every_partition(&req, failure_code(ctx, &unexpected(&other))),
        Err(e) => every_partition(&req, failure_code(ctx, &e)),
    }
}

/// `code` for every partition of the request (the node could not serve it).
pub fn every_partition(req: &AddPartitionsToTxnRequest, code: i16) -> AddPartitionsToTxnResponse {
    let out = req
        .v3_and_below_topics
        .iter()
        .map(|t| {
            AddPartitionsToTxnTopicResult::default()
                .with_name(t.name.clone())
                .with_results_by_partition(
                    t.partitions
                        .iter()
                        .map(|&p| {
                            AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(p)
                                .with_partition_error_code(code)
                        })
                        .collect(),
                )
        })
        .collect();
    AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(out)
}
