//! EndTxn (26), v0–v3: commit or abort. The coordinator moves an Ongoing transaction to its
//! Prepare state; the markers follow (`group_coordinator::txn_markers`, every partition at once)
//! and the answer goes back once they are written and the completion applied, at most 5 s after
//! the decision (decision 0152: Kafka answers at the Prepare state, and clients then meet
//! CONCURRENT_TRANSACTIONS on their next AddPartitionsToTxn and back off 20–300 ms). Until the
//! completion applies, a new AddPartitionsToTxn or InitProducerId of the same id is answered
//! CONCURRENT_TRANSACTIONS, which clients retry.
//! v4+ (KIP-890: TRANSACTION_ABORTABLE, transactions v2's epoch bump) is not served.

use coordinator::{Reply, WriteCommand};
use kafka_protocol::messages::{EndTxnRequest, EndTxnResponse};

use super::group_common::{failure_code, groups, unexpected};
use super::txn_common::{fenced_since, producer, txn_code};
use super::RequestContext;

/// Ends the transaction.
pub async fn handle(ctx: &RequestContext, req: EndTxnRequest) -> EndTxnResponse {
    let answer = |code: i16| EndTxnResponse::default().with_error_code(code);
    let groups = match groups(ctx) {
        Ok(g) => g,
        Err(e) => return answer(failure_code(ctx, &e)),
    };
    let command = coordinator::EndTxn {
        producer: producer(
            ctx,
            req.transactional_id.0.as_str(),
            req.producer_id.0,
            req.producer_epoch,
        ),
        commit: req.committed,
    };
    match groups.write(WriteCommand::EndTxn(command)).await {
        Ok(Reply::Txn(result)) => {
            if result.is_ok() {
                tracing::debug!(
                    transactional_id = req.transactional_id.0.as_str(),
                    commit = req.committed,
                    "transaction ending"
                );
            }
            answer(txn_code(ctx, result.err(), fenced_since::END_TXN))
        }
        Ok(other) => answer(failure_code(ctx, &unexpected(&other))),
        Err(e) => answer(failure_code(ctx, &e)),
    }
}
