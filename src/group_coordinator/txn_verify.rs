//! KIP-890 part 1 on this node: before the first transactional batch of a transaction is
//! appended to a partition, the partition's owner checks that the transaction coordinator
//! registered the partition in the producer's ongoing transaction at that producer id and
//! epoch (Kafka: `AddPartitionsToTxnManager` sends AddPartitionsToTxn `verify_only` to the
//! coordinator; `TransactionCoordinator.handleVerifyPartitionsInTransaction` answers).
//!
//! Cohort's coordinator state is replicated through Raft and applied on every node, so the
//! check is a read of that state here, made fresh first (decision 0165): the active
//! coordinator reads its own applied state (every reply and every marker it caused came from
//! it); any other node first catches up with the leader's read index, bounded, so an
//! AddPartitionsToTxn the client saw answered is applied here before the batch is judged.

use std::time::Duration;

use coordinator::{PartitionIndex, ProducerEpoch, ProducerId, TransactionalId, TxnState};

use super::{GroupCoordinator, GroupError};

/// How long a node other than the coordinator waits to catch up before the batch is refused
/// as retriable (COORDINATOR_NOT_AVAILABLE).
pub const CATCH_UP_LIMIT: Duration = Duration::from_secs(5);

/// Why a transactional batch was not verified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TxnVerifyError {
    /// No transaction state for the transactional id, or another producer id holds it
    /// (INVALID_PRODUCER_ID_MAPPING).
    #[error("transactional id {0:?} is not held by this producer id")]
    ProducerIdMapping(String),
    /// The coordinator registered another epoch (Kafka's coordinator answers PRODUCER_FENCED,
    /// which the partition leader turns into INVALID_PRODUCER_EPOCH for the producer).
    #[error("producer epoch {batch} is not the registered epoch {registered}")]
    EpochMismatch {
        /// The batch's epoch.
        batch: i16,
        /// The coordinator's.
        registered: i16,
    },
    /// The transaction is being committed or aborted (CONCURRENT_TRANSACTIONS).
    #[error("the producer's transaction is completing")]
    Completing,
    /// The partition is not in the producer's ongoing transaction: TRANSACTION_ABORTABLE for
    /// Produce v11+ (clients that know it), INVALID_TXN_STATE below.
    #[error("partition not added to the producer's transaction")]
    NotInTransaction {
        /// Whether the client's Produce version knows TRANSACTION_ABORTABLE.
        abortable: bool,
    },
    /// The coordinator state could not be read fresh on this node (retriable).
    #[error("the transaction coordinator is not available: {0}")]
    Unavailable(String),
}

/// One batch to verify.
#[derive(Debug, Clone)]
pub struct TxnBatch<'a> {
    pub transactional_id: &'a str,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub topic: &'a str,
    pub partition: i32,
    /// Produce v11+ (KIP-890's TRANSACTION_ABORTABLE).
    pub abortable: bool,
}

/// The coordinator's answer for `batch` on the applied state (Kafka's rule, in its order).
pub fn judge(
    state: &coordinator::CoordinatorState,
    batch: &TxnBatch<'_>,
) -> Result<(), TxnVerifyError> {
    let Some(txn) = state.transaction(&TransactionalId::new(batch.transactional_id)) else {
        return Err(TxnVerifyError::ProducerIdMapping(
            batch.transactional_id.to_owned(),
        ));
    };
    if txn.producer_id != ProducerId(batch.producer_id) {
        return Err(TxnVerifyError::ProducerIdMapping(
            batch.transactional_id.to_owned(),
        ));
    }
    if txn.producer_epoch != ProducerEpoch(batch.producer_epoch) {
        return Err(TxnVerifyError::EpochMismatch {
            batch: batch.producer_epoch,
            registered: txn.producer_epoch.0,
        });
    }
    if matches!(txn.state, TxnState::PrepareCommit | TxnState::PrepareAbort) {
        return Err(TxnVerifyError::Completing);
    }
    if txn.has_partition(batch.topic, PartitionIndex(batch.partition)) {
        Ok(())
    } else {
        Err(TxnVerifyError::NotInTransaction {
            abortable: batch.abortable,
        })
    }
}

impl GroupCoordinator {
    /// Makes this node's applied coordinator state fresh enough to verify batches against
    /// (module docs): nothing on the active coordinator, a bounded catch-up with the leader's
    /// read index elsewhere. Once per Produce request, before [`GroupCoordinator::judge_txn_batch`].
    pub async fn catch_up_for_txn_verification(&self) -> Result<(), TxnVerifyError> {
        if self.check_active().is_ok() {
            return Ok(());
        }
        self.node
            .wait_caught_up_with_leader(CATCH_UP_LIMIT)
            .await
            .map(|_| ())
            .map_err(|e| TxnVerifyError::Unavailable(GroupError::from(e).to_string()))
    }

    /// Judges `batch` on this node's applied coordinator state.
    pub fn judge_txn_batch(&self, batch: &TxnBatch<'_>) -> Result<(), TxnVerifyError> {
        self.node.read_local(|a| judge(a.app.coordinator(), batch))
    }
}
