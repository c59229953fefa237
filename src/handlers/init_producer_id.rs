//! InitProducerId (22), v0–v5: a fresh producer id at epoch 0 for an idempotent producer, and
//! for a transactional id the transaction coordinator's answer (decision 0119): a bumped epoch
//! (KIP-360 when the producer names its id and epoch, v3+), the previous epoch's open
//! transaction aborted (CONCURRENT_TRANSACTIONS until it completes), PRODUCER_FENCED to a
//! zombie (INVALID_PRODUCER_EPOCH below v4, as KafkaApis converts). v5 only says the client
//! understands TRANSACTION_ABORTABLE (KIP-890), an error Cohort's transaction coordinator
//! never answers, so nothing converts it for older versions (decision 0161).
//!
//! An idempotent producer's answer ignores any producer id and epoch it sends (KIP-360's
//! epoch bump applies to transactional ids only). Transactional ids are served only while
//! `protocol::TRANSACTIONS_SERVED` holds (the one switch that also advertises the other
//! transaction APIs).

use kafka_protocol::messages::{InitProducerIdRequest, InitProducerIdResponse, ProducerId};
use protocol::ErrorCode;

use super::group_common::{failure_code, groups, unexpected};
use super::txn_common::{fenced_since, txn_code};
use super::RequestContext;
use crate::errors::{to_kafka_error, BrokerError};

/// Allocates a producer id, or asks the transaction coordinator for a transactional id's.
pub async fn handle(ctx: &RequestContext, req: InitProducerIdRequest) -> InitProducerIdResponse {
    let refuse = |code: i16| {
        InitProducerIdResponse::default()
            .with_error_code(code)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1)
    };
    match req.transactional_id.as_ref().map(|t| t.0.as_str()) {
        None => {}
        Some("") => return refuse(ctx.error(ErrorCode::InvalidRequest)),
        Some(txn) if !protocol::TRANSACTIONS_SERVED => {
            tracing::info!(transactional_id = txn, "transactions are not served");
            return refuse(ctx.error(to_kafka_error(&BrokerError::Unsupported(
                "transactions are not served".into(),
            ))));
        }
        Some(txn) => return transactional(ctx, &req, txn).await,
    }
    match ctx.broker.producer_ids.next_producer_id().await {
        Ok(id) => InitProducerIdResponse::default()
            .with_producer_id(ProducerId(id))
            .with_producer_epoch(0),
        Err(e) => {
            tracing::warn!(error = %e, "allocating a producer id failed");
            refuse(ctx.error(to_kafka_error(&e.into())))
        }
    }
}

async fn transactional(
    ctx: &RequestContext,
    req: &InitProducerIdRequest,
    transactional_id: &str,
) -> InitProducerIdResponse {
    let refuse = |code: i16| {
        InitProducerIdResponse::default()
            .with_error_code(code)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1)
    };
    // KafkaApis: −1/−1 is "no current producer"; only one of the two set is a bad request.
    let expected = match (req.producer_id.0, req.producer_epoch) {
        (-1, -1) => None,
        (-1, _) | (_, -1) => return refuse(ctx.error(ErrorCode::InvalidRequest)),
        (id, epoch) => Some((
            coordinator::ProducerId(id),
            coordinator::ProducerEpoch(epoch),
        )),
    };
    let groups = match groups(ctx) {
        Ok(g) => g,
        Err(e) => return refuse(failure_code(ctx, &e)),
    };
    // Allocated before the command, so that every replica decides with the same fresh id;
    // used only if the id is new or its epochs are exhausted (an unused id is a gap, as
    // Kafka's blocks leave).
    let fresh = match ctx.broker.producer_ids.next_producer_id().await {
        Ok(id) => coordinator::ProducerId(id),
        Err(e) => {
            tracing::warn!(error = %e, "allocating a producer id failed");
            return refuse(ctx.error(to_kafka_error(&e.into())));
        }
    };
    let command = coordinator::InitTransactionalProducer {
        now_ms: crate::clock::now(),
        transactional_id: coordinator::TransactionalId::new(transactional_id),
        timeout_ms: req.transaction_timeout_ms,
        expected,
        fresh_producer_id: fresh,
    };
    let reply = groups
        .write(coordinator::WriteCommand::InitTransactionalProducer(
            command,
        ))
        .await;
    match reply {
        Ok(coordinator::Reply::InitProducer(Ok((id, epoch)))) => {
            tracing::debug!(
                transactional_id,
                producer_id = id.0,
                epoch = epoch.0,
                "transactional producer initialized"
            );
            InitProducerIdResponse::default()
                .with_producer_id(ProducerId(id.0))
                .with_producer_epoch(epoch.0)
        }
        Ok(coordinator::Reply::InitProducer(Err(kind))) => {
            refuse(txn_code(ctx, Some(kind), fenced_since::INIT_PRODUCER_ID))
        }
        Ok(other) => refuse(failure_code(ctx, &unexpected(&other))),
        Err(e) => refuse(failure_code(ctx, &e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx};
    use kafka_protocol::messages::{ApiKey, ResponseKind, TransactionalId};
    use kafka_protocol::protocol::StrBytes;

    #[tokio::test]
    async fn idempotent_producers_get_distinct_ids_at_every_version() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let mut seen = Vec::new();
        for v in 0..=5 {
            let c = ctx(&b, ApiKey::InitProducerId, v);
            let req = InitProducerIdRequest::default().with_transactional_id(None);
            let resp = handle(&c, req).await;
            assert_eq!((resp.error_code, resp.producer_epoch), (0, 0));
            assert!(!seen.contains(&resp.producer_id));
            seen.push(resp.producer_id);
            assert_encodes(&c, &ResponseKind::InitProducerId(resp));
        }
    }

    #[tokio::test]
    async fn transactional_ids_need_the_coordinator() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let c = ctx(&b, ApiKey::InitProducerId, 4);
        let req = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("txn"))));
        // Served: this test broker runs no coordinator (COORDINATOR_NOT_AVAILABLE); not
        // served: UNSUPPORTED_VERSION.
        let expected = if protocol::TRANSACTIONS_SERVED {
            15
        } else {
            35
        };
        assert_eq!(handle(&c, req.clone()).await.error_code, expected);
        // Only one of producer id and epoch set: INVALID_REQUEST, as KafkaApis answers.
        if protocol::TRANSACTIONS_SERVED {
            let half = req.with_producer_id(ProducerId(7)).with_producer_epoch(-1);
            assert_eq!(handle(&c, half).await.error_code, 42);
        }
        let req = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str(""))));
        assert_eq!(handle(&c, req).await.error_code, 42);
    }
}
