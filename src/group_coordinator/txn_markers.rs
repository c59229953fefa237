//! The transaction marker writer: what the active coordinator does with a transaction that
//! entered PrepareCommit or PrepareAbort (decisions 0119 and 0125).
//!
//! ```text
//!  runtime ─ Outcome.txn_markers (EndTxn, fence, timeout) ─┐
//!  runtime ─ activate: state.txn_markers_to_redrive() ─────┴─► MarkerWriter::write(term, markers)
//!      one task per transaction (deduplicated):
//!        ├─ every partition at once (at most MARKERS_IN_FLIGHT_MAX appends): a COMMIT/ABORT
//!        │     control batch (protocol::batch::control) through the MarkerLog: the owner's
//!        │     partition append (local data plane, or the owning node); the ones not written
//!        │     are retried together with backoff until written or the partition is gone
//!        ├─ then WriteCommand::TxnMarkersWritten through Raft, retried until committed
//!        └─ then whoever waits on the transaction's completion (the EndTxn reply, decision
//!              0152) is told
//!      stops as soon as this node no longer leads in `term`: the next leader re-drives
//! ```
//!
//! Re-driving is idempotent: a marker written twice to a partition is a no-op for its producer
//! state (no open transaction of that producer is left), and `TxnMarkersWritten` for a
//! transaction already complete changes nothing.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use coordinator::{
    ApiVersion, PartitionIndex, ProducerEpoch, ProducerId, TopicName, TransactionalId, TxnMarkers,
    TxnMarkersWritten, TxnProducer, WriteCommand,
};
use protocol::batch::control::{encode_control_batch, ControlMarker, ControlType};
use raft_meta::cohort_app::{Body, Envelope};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;

use super::runtime::BackgroundWrites;

/// First wait before a failed marker append or completion is tried again.
const RETRY_MIN: Duration = Duration::from_millis(50);
/// Longest wait between tries.
const RETRY_MAX: Duration = Duration::from_secs(5);
/// Marker appends of one transaction in flight at once: a transaction's partitions are written
/// together (each append waits for its partition's fsync or its owner's answer, so one after
/// the other a 10-partition commit took ten of those waits, decision 0152), within a bound.
const MARKERS_IN_FLIGHT_MAX: usize = 32;

/// What appending one marker to one partition came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkerAppend {
    /// Written (and durable as the partition's produce acknowledgements are).
    Written,
    /// The topic or partition no longer exists: nothing to mark (Kafka's marker writer drops
    /// such a partition too).
    Gone,
    /// Not written this time (owner unreachable, disk, not reconciled yet): try again.
    Retry(String),
    /// The partition has seen a marker of this producer from a newer coordinator epoch (a
    /// later Raft term): this node no longer coordinates, and the transaction is the newer
    /// coordinator's to complete (Kafka's writer stops on TRANSACTION_COORDINATOR_FENCED too).
    Fenced,
}

/// A boxed marker append.
pub type AppendFuture = Pin<Box<dyn Future<Output = MarkerAppend> + Send>>;

/// Where markers go: the owner of each data partition.
pub trait MarkerLog: Send + Sync + 'static {
    /// Appends the control batch `batch` (see [`encode_control_batch`]) to `topic`-`partition`.
    fn append(
        &self,
        topic: &str,
        partition: i32,
        marker: ControlMarker,
        batch: Bytes,
    ) -> AppendFuture;
}

/// The handle the runtime holds.
#[derive(Clone)]
pub(crate) struct MarkerWriter {
    inner: Arc<Inner>,
}

struct Inner {
    /// The term this node is the active coordinator in (`None` while it is not).
    active: watch::Sender<Option<u64>>,
    /// Set once the broker (its data plane) exists; tasks wait for it.
    log: watch::Sender<Option<Arc<dyn MarkerLog>>>,
    writes: BackgroundWrites,
    /// Transactions with a task running: (transactional id, producer id, epoch, commit), with
    /// who waits for its completion.
    running: Mutex<HashMap<Key, Vec<oneshot::Sender<()>>>>,
}

/// A transaction whose markers are written: (transactional id, producer id, epoch, commit).
pub(crate) type Key = (TransactionalId, ProducerId, ProducerEpoch, bool);

/// The key of `m`'s transaction.
pub(crate) fn key_of(m: &TxnMarkers) -> Key {
    (
        m.transactional_id.clone(),
        m.producer_id,
        m.producer_epoch,
        m.commit,
    )
}

impl std::fmt::Debug for MarkerWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarkerWriter")
            .field("active", &*self.inner.active.borrow())
            .finish_non_exhaustive()
    }
}

impl MarkerWriter {
    pub(crate) fn new(writes: BackgroundWrites) -> Self {
        Self {
            inner: Arc::new(Inner {
                active: watch::channel(None).0,
                log: watch::channel(None).0,
                writes,
                running: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Where markers are appended from now on (the broker calls it once its data plane is up).
    pub(crate) fn attach(&self, log: Arc<dyn MarkerLog>) {
        self.inner.log.send_replace(Some(log));
    }

    /// This node became the active coordinator in `term`.
    pub(crate) fn activate(&self, term: u64) {
        self.inner.active.send_replace(Some(term));
    }

    /// This node no longer coordinates: every task stops at its next step.
    pub(crate) fn step_down(&self) {
        self.inner.active.send_replace(None);
    }

    /// Writes the markers of each transaction and completes it, in the background, while this
    /// node stays active in `term`.
    pub(crate) fn write(&self, term: u64, markers: Vec<TxnMarkers>) {
        for m in markers {
            let key = key_of(&m);
            {
                let mut running = self.inner.lock_running();
                if running.contains_key(&key) {
                    continue;
                }
                running.insert(key.clone(), Vec::new());
            }
            let inner = self.inner.clone();
            tokio::spawn(async move {
                let completed = drive(&inner, term, m).await;
                let waiters = inner.lock_running().remove(&key).unwrap_or_default();
                if completed {
                    for w in waiters {
                        let _ = w.send(());
                    }
                }
                // Otherwise the waiters' senders drop: leadership ended, the next leader
                // completes the transaction.
            });
        }
    }

    /// A receiver told once the markers of `key`'s transaction are written and its completion
    /// is applied on this node; `None` if no task writes them (anymore). Dropped unanswered if
    /// this node stops leading first.
    pub(crate) fn completion(&self, key: &Key) -> Option<oneshot::Receiver<()>> {
        let mut running = self.inner.lock_running();
        let waiters = running.get_mut(key)?;
        let (tx, rx) = oneshot::channel();
        waiters.push(tx);
        Some(rx)
    }
}

impl Inner {
    fn lock_running(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Vec<oneshot::Sender<()>>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn leads_in(&self, term: u64) -> bool {
        *self.active.borrow() == Some(term)
    }

    /// The marker log, once attached; `None` if leadership in `term` ends first.
    async fn log(&self, term: u64) -> Option<Arc<dyn MarkerLog>> {
        let mut log = self.log.subscribe();
        let mut active = self.active.subscribe();
        loop {
            if !self.leads_in(term) {
                return None;
            }
            if let Some(l) = log.borrow_and_update().clone() {
                return Some(l);
            }
            tokio::select! {
                r = log.changed() => if r.is_err() { return None; },
                r = active.changed() => if r.is_err() { return None; },
            }
        }
    }
}

/// Sleeps `backoff` (then doubles it, up to [`RETRY_MAX`]); false if leadership in `term`
/// ended meanwhile.
async fn wait_retry(inner: &Inner, term: u64, backoff: &mut Duration) -> bool {
    let mut active = inner.active.subscribe();
    let ended = async {
        let _ = active.wait_for(|a| *a != Some(term)).await;
    };
    tokio::select! {
        () = tokio::time::sleep(*backoff) => {}
        () = ended => return false,
    }
    *backoff = (*backoff * 2).min(RETRY_MAX);
    inner.leads_in(term)
}

/// One transaction: every marker, then the completion; true once the completion is applied,
/// false if leadership in `term` ended first.
async fn drive(inner: &Inner, term: u64, m: TxnMarkers) -> bool {
    let Some(log) = inner.log(term).await else {
        return false;
    };
    let marker = ControlMarker {
        kind: if m.commit {
            ControlType::Commit
        } else {
            ControlType::Abort
        },
        producer_id: m.producer_id.0,
        producer_epoch: m.producer_epoch.0,
        // Kafka's coordinator epoch is its partition leader epoch; here the Raft term.
        coordinator_epoch: i32::try_from(term).unwrap_or(i32::MAX),
        timestamp_ms: crate::clock::now().0,
    };
    let batch = encode_control_batch(&marker);
    let mut pending = all_partitions(&m);
    let mut backoff = RETRY_MIN;
    while !pending.is_empty() {
        let mut left = Vec::new();
        let mut redo_all = false;
        let mut rest = pending.into_iter();
        loop {
            if !inner.leads_in(term) {
                return false;
            }
            let wave: Vec<_> = rest.by_ref().take(MARKERS_IN_FLIGHT_MAX).collect();
            if wave.is_empty() {
                break;
            }
            let mut appends = JoinSet::new();
            for (topic, partition) in wave {
                let write = log.append(topic.as_str(), partition.0, marker, batch.clone());
                appends.spawn(async move { (topic, partition, write.await) });
            }
            while let Some(joined) = appends.join_next().await {
                let (topic, partition, appended) = match joined {
                    Ok(done) => done,
                    Err(e) => {
                        // The append task panicked or was cancelled: which partition it was is
                        // lost with it, so the whole transaction's markers are written again
                        // (each append is idempotent).
                        tracing::error!(transactional_id = m.transactional_id.as_str(),
                            error = %e, "transaction marker append task failed");
                        redo_all = true;
                        continue;
                    }
                };
                match appended {
                    MarkerAppend::Written => {}
                    MarkerAppend::Gone => {
                        tracing::info!(
                            transactional_id = m.transactional_id.as_str(),
                            topic = topic.as_str(),
                            partition = partition.0,
                            "transaction marker skipped: the partition no longer exists"
                        );
                    }
                    MarkerAppend::Fenced => {
                        tracing::info!(
                            transactional_id = m.transactional_id.as_str(),
                            topic = topic.as_str(),
                            partition = partition.0,
                            term,
                            "transaction markers stopped: a newer coordinator wrote to the partition"
                        );
                        return false;
                    }
                    MarkerAppend::Retry(why) => {
                        tracing::warn!(transactional_id = m.transactional_id.as_str(),
                            topic = topic.as_str(), partition = partition.0, error = %why,
                            "transaction marker not written; retrying");
                        left.push((topic, partition));
                    }
                }
            }
        }
        pending = if redo_all { all_partitions(&m) } else { left };
        if !pending.is_empty() && !wait_retry(inner, term, &mut backoff).await {
            return false;
        }
    }
    let done = WriteCommand::TxnMarkersWritten(TxnMarkersWritten {
        producer: TxnProducer {
            api_version: ApiVersion(0),
            now_ms: crate::clock::now(),
            transactional_id: m.transactional_id.clone(),
            producer_id: m.producer_id,
            producer_epoch: m.producer_epoch,
        },
        commit: m.commit,
    });
    let command = Envelope {
        origin: None,
        body: Body::Group(done),
    }
    .encode();
    let mut backoff = RETRY_MIN;
    loop {
        if !inner.leads_in(term) {
            return false;
        }
        match (inner.writes)(command.clone()).await {
            Ok(_) => {
                tracing::debug!(
                    transactional_id = m.transactional_id.as_str(),
                    commit = m.commit,
                    partitions = m.partitions.iter().map(|(_, p)| p.len()).sum::<usize>(),
                    "transaction markers written"
                );
                metrics::counter!(super::metrics::TXN_MARKERS_COMPLETED_TOTAL,
                    "result" => if m.commit { "commit" } else { "abort" })
                .increment(1);
                return true;
            }
            Err(e) => {
                tracing::warn!(transactional_id = m.transactional_id.as_str(), error = %e,
                    "transaction completion not committed; retrying");
                if !wait_retry(inner, term, &mut backoff).await {
                    return false;
                }
            }
        }
    }
}

/// Every data partition of `m`'s transaction.
fn all_partitions(m: &TxnMarkers) -> Vec<(TopicName, PartitionIndex)> {
    m.partitions
        .iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| (t.clone(), *p)))
        .collect()
}
