//! DescribeTransactions (65), v0 (KIP-664): each transactional id's state as the transaction
//! coordinator holds it — `kafka-transactions.sh describe`. As Kafka's
//! `handleDescribeTransactions`: a node that is not the coordinator answers NOT_COORDINATOR
//! (COORDINATOR_LOAD_IN_PROGRESS while it loads) for every id, an unknown id
//! TRANSACTIONAL_ID_NOT_FOUND; the start time is −1 when no transaction is open.

use kafka_protocol::messages::describe_transactions_response::{TopicData, TransactionState};
use kafka_protocol::messages::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, ProducerId, TopicName,
};
use protocol::ErrorCode;

use super::group_common::{failure_code, groups, str_bytes};
use super::RequestContext;

/// Describes every transactional id asked, in request order.
pub async fn handle(
    ctx: &RequestContext,
    req: DescribeTransactionsRequest,
) -> DescribeTransactionsResponse {
    let ids: Vec<&str> = req.transactional_ids.iter().map(|t| t.0.as_str()).collect();
    let found = groups(ctx).and_then(|g| {
        g.read_state(|state| {
            ids.iter()
                .map(|id| {
                    state
                        .transaction(&coordinator::TransactionalId::new(*id))
                        .cloned()
                })
                .collect::<Vec<_>>()
        })
    });
    let states = match found {
        Ok(found) => req
            .transactional_ids
            .iter()
            .zip(found)
            .map(|(id, t)| {
                let base = TransactionState::default().with_transactional_id(id.clone());
                match t {
                    None => base.with_error_code(ctx.error(ErrorCode::TransactionalIdNotFound)),
                    Some(t) => base
                        .with_error_code(ctx.error(ErrorCode::None))
                        .with_transaction_state(str_bytes(t.state.as_str()))
                        .with_transaction_timeout_ms(t.timeout_ms)
                        .with_transaction_start_time_ms(t.start_timestamp.map_or(-1, |s| s.0))
                        .with_producer_id(ProducerId(t.producer_id.0))
                        .with_producer_epoch(t.producer_epoch.0)
                        .with_topics(
                            t.partitions
                                .iter()
                                .map(|(topic, ps)| {
                                    TopicData::default()
                                        .with_topic(TopicName(str_bytes(topic.as_str())))
                                        .with_partitions(ps.iter().map(|p| p.0).collect())
                                })
                                .collect(),
                        ),
                }
            })
            .collect(),
        Err(e) => {
            let code = failure_code(ctx, &e);
            req.transactional_ids
                .iter()
                .map(|id| {
                    TransactionState::default()
                        .with_transactional_id(id.clone())
                        .with_error_code(code)
                })
                .collect()
        }
    };
    DescribeTransactionsResponse::default().with_transaction_states(states)
}
