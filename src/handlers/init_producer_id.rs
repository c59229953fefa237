//! InitProducerId (22), v0–v4, for idempotent producers: a fresh producer id at epoch 0.
//!
//! Transactions are not served (no transaction coordinator), so a transactional id is
//! refused; Kafka's answer to an idempotent producer ignores any producer id and epoch it sends
//! (KIP-360's epoch bump applies to transactional ids only).

use kafka_protocol::messages::{InitProducerIdRequest, InitProducerIdResponse, ProducerId};
use protocol::ErrorCode;

use super::RequestContext;
use crate::errors::{to_kafka_error, BrokerError};

/// Allocates a producer id.
pub async fn handle(ctx: &RequestContext, req: InitProducerIdRequest) -> InitProducerIdResponse {
    let refuse = |code: ErrorCode| {
        InitProducerIdResponse::default()
            .with_error_code(ctx.error(code))
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1)
    };
    match req.transactional_id.as_ref().map(|t| t.0.as_str()) {
        None => {}
        Some("") => return refuse(ErrorCode::InvalidRequest),
        Some(txn) => {
            tracing::info!(transactional_id = txn, "transactions are not served");
            return refuse(to_kafka_error(&BrokerError::Unsupported(
                "transactions are not served".into(),
            )));
        }
    }
    match ctx.broker.producer_ids.next_producer_id().await {
        Ok(id) => InitProducerIdResponse::default()
            .with_producer_id(ProducerId(id))
            .with_producer_epoch(0),
        Err(e) => {
            tracing::warn!(error = %e, "allocating a producer id failed");
            refuse(to_kafka_error(&e.into()))
        }
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
        for v in 0..=4 {
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
    async fn transactional_ids_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let c = ctx(&b, ApiKey::InitProducerId, 4);
        let req = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("txn"))));
        assert_eq!(handle(&c, req).await.error_code, 35);
        let req = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str(""))));
        assert_eq!(handle(&c, req).await.error_code, 42);
    }
}
