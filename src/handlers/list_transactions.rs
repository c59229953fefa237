//! ListTransactions (66), v0–v1 (KIP-664; v1 adds KIP-994's duration filter): the
//! transactional ids the coordinator holds, filtered by state name, producer id and (v1) how
//! long the transaction has been running — `kafka-transactions.sh list` and `find-hanging`.
//! As Kafka's `listTransactionStates`: a state filter naming no state comes back in
//! `unknown_state_filters`. A node that is not the coordinator coordinates no transactional
//! id and answers an empty list without error (the Admin client asks every broker and merges);
//! COORDINATOR_LOAD_IN_PROGRESS while the coordinator loads. v2 (the id pattern) is not served.

use kafka_protocol::messages::list_transactions_response::TransactionState;
use kafka_protocol::messages::{
    ListTransactionsRequest, ListTransactionsResponse, ProducerId, TransactionalId,
};

use super::group_common::{failure_code, groups, str_bytes, to_str};
use super::RequestContext;
use crate::group_coordinator::GroupError;

/// Lists the transactions that pass the filters.
pub async fn handle(
    ctx: &RequestContext,
    req: ListTransactionsRequest,
) -> ListTransactionsResponse {
    let filter = coordinator::ListTransactionsFilter {
        states: req.state_filters.iter().map(to_str).collect(),
        producer_ids: req.producer_id_filters.iter().map(|p| p.0).collect(),
        min_duration_ms: if ctx.version >= 1 {
            req.duration_filter
        } else {
            -1
        },
        now_ms: crate::clock::now(),
    };
    match groups(ctx).and_then(|g| g.read_state(|s| s.list_transactions(&filter))) {
        Ok(listed) => ListTransactionsResponse::default()
            .with_unknown_state_filters(
                listed
                    .unknown_state_filters
                    .into_iter()
                    .map(str_bytes)
                    .collect(),
            )
            .with_transaction_states(
                listed
                    .transactions
                    .into_iter()
                    .map(|t| {
                        TransactionState::default()
                            .with_transactional_id(TransactionalId(str_bytes(
                                t.transactional_id.as_str(),
                            )))
                            .with_producer_id(ProducerId(t.producer_id.0))
                            .with_transaction_state(str_bytes(t.state.as_str()))
                    })
                    .collect(),
            ),
        Err(GroupError::NotCoordinator) => ListTransactionsResponse::default(),
        Err(e) => ListTransactionsResponse::default().with_error_code(failure_code(ctx, &e)),
    }
}
