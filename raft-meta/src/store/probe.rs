//! What a log store knows that openraft's metrics do not expose: the committed index.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Shared between a log store and the node handle; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct StoreProbe {
    /// committed index + 1, with 0 meaning "nothing committed yet"; one atomic, no lock.
    committed_plus_one: Arc<AtomicU64>,
    /// Durability syncs the store ran (sled flushes; the segment store counts its log's own).
    syncs: Arc<AtomicU64>,
}

impl StoreProbe {
    pub fn set_committed(&self, index: Option<u64>) {
        let raw = index.map_or(0, |i| i.saturating_add(1));
        self.committed_plus_one.store(raw, Ordering::Release);
        metrics::gauge!(crate::metrics::COMMIT_INDEX).set(index.unwrap_or(0) as f64);
    }

    pub fn count_sync(&self) {
        self.syncs.fetch_add(1, Ordering::Relaxed);
    }

    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    pub fn committed(&self) -> Option<u64> {
        match self.committed_plus_one.load(Ordering::Acquire) {
            0 => None,
            n => Some(n - 1),
        }
    }
}
