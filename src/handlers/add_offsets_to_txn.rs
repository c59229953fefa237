//! AddOffsetsToTxn (25), v0–v3: the consumer group whose offsets the transaction will commit
//! joins it (Kafka adds the group's `__consumer_offsets` partition; here the group itself,
//! decision 0119). v4 (KIP-890's TRANSACTION_ABORTABLE) is not served.

use coordinator::{GroupId, Reply, WriteCommand};
use kafka_protocol::messages::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};

use super::group_common::{failure_code, groups, unexpected};
use super::txn_common::{fenced_since, producer, txn_code};
use super::RequestContext;

/// Adds the group to the transaction.
pub async fn handle(ctx: &RequestContext, req: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse {
    let answer = |code: i16| AddOffsetsToTxnResponse::default().with_error_code(code);
    let groups = match groups(ctx) {
        Ok(g) => g,
        Err(e) => return answer(failure_code(ctx, &e)),
    };
    let command = coordinator::AddOffsetsToTxn {
        producer: producer(
            ctx,
            req.transactional_id.0.as_str(),
            req.producer_id.0,
            req.producer_epoch,
        ),
        group_id: GroupId::new(req.group_id.0.as_str()),
    };
    match groups.write(WriteCommand::AddOffsetsToTxn(command)).await {
        Ok(Reply::Txn(result)) => answer(txn_code(ctx, result.err(), fenced_since::ADD_OFFSETS)),
        Ok(other) => answer(failure_code(ctx, &unexpected(&other))),
        Err(e) => answer(failure_code(ctx, &e)),
    }
}
