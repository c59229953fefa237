//! What the transaction handlers share (InitProducerId with a transactional id,
//! AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit): the producer identity every
//! request carries, and Kafka's answer to clients too old to know PRODUCER_FENCED.
//!
//! The transaction coordinator is the group coordinator's state machine (decision 0119): the
//! Raft leader coordinates every transactional id, as it does every group.

use coordinator::{ApiVersion, ErrorKind, TransactionalId, TxnProducer};
use protocol::ErrorCode;

use super::group_common::domain_code;
use super::RequestContext;

/// The producer a transactional request names.
pub fn producer(
    ctx: &RequestContext,
    transactional_id: &str,
    producer_id: i64,
    producer_epoch: i16,
) -> TxnProducer {
    TxnProducer {
        api_version: ApiVersion(ctx.version),
        now_ms: crate::clock::now(),
        transactional_id: TransactionalId::new(transactional_id),
        producer_id: coordinator::ProducerId(producer_id),
        producer_epoch: coordinator::ProducerEpoch(producer_epoch),
    }
}

/// The wire code of a transaction answer. Below `fenced_since` (the version that introduced
/// PRODUCER_FENCED for the API, KIP-588) a fenced producer is told INVALID_PRODUCER_EPOCH, as
/// KafkaApis converts it "for older clients".
pub fn txn_code(ctx: &RequestContext, error: Option<ErrorKind>, fenced_since: i16) -> i16 {
    match error {
        Some(ErrorKind::ProducerFenced) if ctx.version < fenced_since => {
            ctx.error(ErrorCode::InvalidProducerEpoch)
        }
        other => domain_code(ctx, other),
    }
}

/// The version from which each API answers PRODUCER_FENCED (KafkaApis: InitProducerId v4,
/// EndTxn, AddPartitionsToTxn and AddOffsetsToTxn v2; TxnOffsetCommit's fence comes from the
/// group coordinator's verification, which clients of every version read as fatal: v0).
pub mod fenced_since {
    /// InitProducerId.
    pub const INIT_PRODUCER_ID: i16 = 4;
    /// EndTxn.
    pub const END_TXN: i16 = 2;
    /// AddPartitionsToTxn.
    pub const ADD_PARTITIONS: i16 = 2;
    /// AddOffsetsToTxn.
    pub const ADD_OFFSETS: i16 = 2;
    /// TxnOffsetCommit.
    pub const TXN_OFFSET_COMMIT: i16 = 0;
}
