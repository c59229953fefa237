//! ListOffsets by timestamp inside a batch, within a broker-wide memory budget.
//!
//! The log's time index finds the batch; the record inside it is found by decoding the batch,
//! which for a compressed one means decompressing it (and building every record). That memory
//! is paid for from one pool of `--list-offsets-decompress-bytes-max` bytes:
//!
//! ```text
//!  batch found ─> take its estimate (decoded records + 4 × compressed), waiting in line
//!              ─> decode within the estimate ─ fits ─────────> the answer; bytes back
//!                                            └ passes it ───> give the estimate back, take the
//!                                                             whole pool, decode within it
//!                                                             └ passes that ─> refused
//! ```
//!
//! Nobody waits while holding bytes, so lookups cannot deadlock; most batches fit their
//! estimate and run side by side, large ones take the pool alone.

use std::sync::Arc;

use bytes::Bytes;
use protocol::batch::{self, BatchError, RecordPosition};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::partition::{Partition, ReadError};
use crate::metrics as m;

/// The pool every timestamp lookup pays from.
#[derive(Debug, Clone)]
pub struct LookupBudget {
    pool: Arc<Semaphore>,
    bytes: usize,
}

/// What a lookup looks for.
#[derive(Debug, Clone, Copy)]
pub enum Wanted {
    /// The first record with a timestamp at or after this.
    AtOrAfter(i64),
    /// The first record holding the log's largest timestamp (ListOffsets -3, KIP-734).
    MaxTimestamp,
}

impl LookupBudget {
    /// A pool of `bytes` (at most [`batch::MAX_DECOMPRESSED_BYTES`] is ever used by one batch).
    pub fn new(bytes: usize) -> LookupBudget {
        let bytes = bytes.min(Semaphore::MAX_PERMITS);
        LookupBudget {
            pool: Arc::new(Semaphore::new(bytes)),
            bytes,
        }
    }

    /// Bytes held by lookups now (for tests).
    pub fn held_bytes(&self) -> usize {
        self.bytes.saturating_sub(self.pool.available_permits())
    }

    async fn take(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        let n = u32::try_from(bytes.min(self.bytes)).unwrap_or(u32::MAX);
        match self.pool.clone().try_acquire_many_owned(n) {
            Ok(p) => Some(p),
            Err(_) => {
                metrics::counter!(m::LIST_OFFSETS_BUDGET_WAITS_TOTAL).increment(1);
                self.pool.clone().acquire_many_owned(n).await.ok()
            }
        }
    }

    /// Finds the record `wanted` describes in `partition` (below its high watermark).
    pub async fn lookup(
        &self,
        partition: Arc<Partition>,
        wanted: Wanted,
    ) -> Result<Option<RecordPosition>, ReadError> {
        let found = blocking(move || match wanted {
            Wanted::AtOrAfter(t) => partition.batch_for_timestamp(t),
            Wanted::MaxTimestamp => partition.batch_with_max_timestamp(),
        })
        .await?;
        let Some((batch, max_timestamp)) = found else {
            return Ok(None);
        };
        // The record looked for: the first at or after the target, or holding the maximum.
        let target = match wanted {
            Wanted::AtOrAfter(t) => Target::AtOrAfter(t),
            Wanted::MaxTimestamp => Target::Exactly(max_timestamp),
        };
        let estimate = batch::lookup_bytes_estimate(&batch)?.clamp(1, self.bytes);
        let held = self.take(estimate).await;
        let first = decode(batch.clone(), estimate, target).await?;
        drop(held);
        match first {
            Err(BatchError::OverBudget { .. }) if estimate < self.bytes => {
                let held = self.take(self.bytes).await;
                let second = decode(batch, self.bytes, target).await?;
                drop(held);
                second.map_err(|e| self.refused(e))
            }
            other => other.map_err(|e| self.refused(e)),
        }
    }

    fn refused(&self, e: BatchError) -> ReadError {
        if let BatchError::OverBudget { limit } = e {
            metrics::counter!(m::LIST_OFFSETS_OVER_BUDGET_TOTAL).increment(1);
            tracing::warn!(
                limit_bytes = limit,
                "ListOffsets: a batch needs more than --list-offsets-decompress-bytes-max to look into; refused"
            );
        }
        ReadError::Batch(e)
    }
}

#[derive(Debug, Clone, Copy)]
enum Target {
    AtOrAfter(i64),
    Exactly(i64),
}

async fn decode(
    batch: Bytes,
    limit: usize,
    target: Target,
) -> Result<Result<Option<RecordPosition>, BatchError>, ReadError> {
    blocking(move || {
        Ok(batch::find_record_within(&batch, limit, |r| match target {
            Target::AtOrAfter(t) => r.timestamp >= t,
            Target::Exactly(t) => r.timestamp == t,
        }))
    })
    .await
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ReadError> + Send + 'static,
) -> Result<T, ReadError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        ReadError::Log(compaction::LogError::Io {
            op: "timestamp lookup task",
            path: Default::default(),
            source: std::io::Error::other(e.to_string()),
        })
    })?
}
