//! The Raft state machine: applies command batches to an [`Application`] and turns its live
//! records into snapshot files.
//!
//! ```text
//!  openraft core ──apply(entries)──► StateMachine: decode every command (no lock)
//!                                        ├─ write lock ──► Applied { app, last_applied, membership }
//!                                        └─ an entry that does not decode: apply what precedes it,
//!                                           set `halted`, return a StorageError (openraft stops)
//!  snapshot task ──build_snapshot──► read lock: records + meta ──► encode ──► SnapshotDir (atomic)
//!  node handle   ──read(|app| ..)──► read lock
//! ```
//!
//! The application, `last_applied` and the membership live under one lock so a snapshot always
//! pairs records with the exact log position they reflect.
//!
//! Failing closed: a committed entry this binary cannot decode, or a snapshot it cannot read
//! (received from the leader or found at start-up), is never skipped. The state machine stops
//! at it with an [`ApplyHalted`] naming the index and the reason, and returns an error that makes
//! openraft shut this node's Raft down; the node handle reports the halt, so the binary stops
//! serving from this node while the replicas that can read the entry carry on.

use std::io::Cursor;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use bytes::Bytes;
use compaction::SpaceGuard;
use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{EntryPayload, OptionalSend, RaftSnapshotBuilder, StorageIOError};
use tokio::sync::{watch, Notify};

use crate::app::Application;
use crate::metrics as m;
use crate::snapshot_file::{self, SnapshotDir, SnapshotFile, SnapshotFileError};
use crate::status::ApplyHalted;
use crate::store::errors;
use crate::types::{
    Entry, LogId, LogIndex, ReplyBatch, SnapshotMeta, StorageError, StoredMembership, TypeConfig,
};

/// Snapshots kept on disk: the newest, and one to fall back to if the newest is unreadable.
const SNAPSHOTS_KEPT: usize = 2;

/// The application plus the log position its state reflects.
pub struct Applied<A> {
    pub app: A,
    pub last_applied: Option<LogId>,
    pub membership: StoredMembership,
}

struct Shared<A> {
    applied: RwLock<Applied<A>>,
    dir: SnapshotDir,
    /// The snapshot openraft serves to lagging followers: its meta and file.
    current: Mutex<Option<(SnapshotMeta, SnapshotFile)>>,
    /// The bytes of `current` as `open` read them, handed to the first `get_current_snapshot`
    /// (openraft's start-up asks for the snapshot once, for its meta) instead of reading and
    /// verifying the whole file a second time; taken by that call, so held only during start-up.
    opened_image: Mutex<Option<(SnapshotFile, Bytes)>>,
    /// Payload bytes applied since the last snapshot; the byte half of the snapshot policy.
    bytes_since_snapshot: AtomicU64,
    snapshot_bytes_threshold: u64,
    /// Wakes the node's snapshot trigger when `bytes_since_snapshot` crosses the threshold.
    bytes_threshold_crossed: Notify,
    /// Log index up to which the log may be purged: the oldest kept snapshot's last index.
    purge_floor: watch::Sender<Option<u64>>,
    /// Serializes snapshot builds and installs; both rewrite the snapshot directory.
    snapshot_io: tokio::sync::Mutex<()>,
    /// Set, once and for good, when an entry or a snapshot could not be applied.
    halted: watch::Sender<Option<ApplyHalted>>,
    /// The snapshot directory's disk-full state (decision 0112): a build that meets a full
    /// disk is postponed (the kept snapshots and the log behind them stay), an install waits.
    space: SpaceGuard,
    /// A build was postponed for lack of space: retried once the disk has room.
    postponed: AtomicBool,
    timings: m::EntryTimings,
}

/// The openraft state machine; clones share state (one is handed to openraft, one kept by the
/// node handle for reads).
pub struct StateMachine<A> {
    shared: Arc<Shared<A>>,
}

impl<A> Clone for StateMachine<A> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpenStateMachineError {
    #[error(transparent)]
    Snapshot(#[from] SnapshotFileError),
    #[error("snapshot {path}: {source}")]
    Restore {
        path: std::path::PathBuf,
        source: crate::app::RestoreError,
    },
}

fn read_lock<A>(lock: &RwLock<A>) -> RwLockReadGuard<'_, A> {
    // A panic inside the application while holding the lock leaves state we can still read;
    // openraft stops the node on the storage error that follows anyway.
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write_lock<A>(lock: &RwLock<A>) -> RwLockWriteGuard<'_, A> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

impl<A: Application> StateMachine<A> {
    /// Opens the snapshot directory and restores `app` from the newest valid snapshot in it.
    pub fn open(
        dir: &Path,
        mut app: A,
        snapshot_bytes_threshold: u64,
    ) -> Result<Self, OpenStateMachineError> {
        let space = SpaceGuard::new("snapshot", dir, 0);
        let dir = SnapshotDir::open(dir)?;
        let mut last_applied = None;
        let mut membership = StoredMembership::default();
        let mut current = None;
        let mut opened_image = None;
        if let Some((file, image, meta, records)) = dir.load_newest_valid()? {
            let started = Instant::now();
            let count = records.len();
            app.restore(records)
                .map_err(|source| OpenStateMachineError::Restore {
                    path: file.path.clone(),
                    source,
                })?;
            tracing::info!(
                path = %file.path.display(),
                records = count,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "state restored from snapshot"
            );
            last_applied = meta.last_log_id;
            membership = meta.last_membership.clone();
            opened_image = Some((file.clone(), image));
            current = Some((meta, file));
        }
        let floor = dir.retain(SNAPSHOTS_KEPT)?;
        let (purge_floor, _) = watch::channel(floor.and_then(|p| p.checked_sub(1)));
        Ok(Self {
            shared: Arc::new(Shared {
                applied: RwLock::new(Applied {
                    app,
                    last_applied,
                    membership,
                }),
                dir,
                current: Mutex::new(current),
                opened_image: Mutex::new(opened_image),
                bytes_since_snapshot: AtomicU64::new(0),
                snapshot_bytes_threshold,
                bytes_threshold_crossed: Notify::new(),
                purge_floor,
                snapshot_io: tokio::sync::Mutex::new(()),
                halted: watch::channel(None).0,
                space,
                postponed: AtomicBool::new(false),
                timings: m::EntryTimings::new(),
            }),
        })
    }

    /// The snapshot directory's disk-full guard.
    pub fn space(&self) -> &SpaceGuard {
        &self.shared.space
    }

    /// Takes the "a build was postponed for lack of space" mark (the node's retry task asks).
    pub fn take_postponed(&self) -> bool {
        self.shared.postponed.swap(false, Ordering::AcqRel)
    }

    /// What `build_snapshot` answers when it postpones: the snapshot openraft already has (or
    /// the empty state's), which openraft takes as "nothing newer" and changes nothing for.
    fn postponed_snapshot(&self, why: &str) -> Snapshot<TypeConfig> {
        self.shared.postponed.store(true, Ordering::Release);
        tracing::debug!(reason = why, "snapshot postponed: disk full");
        let meta = self.current_snapshot_meta().unwrap_or(SnapshotMeta {
            last_log_id: None,
            last_membership: StoredMembership::default(),
            snapshot_id: String::new(),
        });
        Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(Vec::new())),
        }
    }

    /// Why this node stopped applying, once it has.
    pub fn halted(&self) -> Option<ApplyHalted> {
        self.shared.halted.borrow().clone()
    }

    /// Changes once, when the node halts.
    pub fn watch_halted(&self) -> watch::Receiver<Option<ApplyHalted>> {
        self.shared.halted.subscribe()
    }

    /// Records the halt (the first one wins) with one loud log line.
    fn halt(&self, index: u64, reason: String) -> ApplyHalted {
        let halted = ApplyHalted { index, reason };
        tracing::error!(
            index,
            reason = %halted.reason,
            "apply loop halted: this node stops applying the log and serving from it; \
             upgrade its binary if the entry is from a newer one, then restart it"
        );
        self.shared.halted.send_if_modified(|current| {
            if current.is_none() {
                *current = Some(halted.clone());
                true
            } else {
                false
            }
        });
        halted
    }

    /// Runs `f` on the applied state (no Raft round trip; the caller decides linearizability).
    pub fn read<R>(&self, f: impl FnOnce(&Applied<A>) -> R) -> R {
        f(&read_lock(&self.shared.applied))
    }

    pub fn last_applied(&self) -> Option<LogId> {
        read_lock(&self.shared.applied).last_applied
    }

    /// The log index the log may be purged up to (inclusive), following the kept snapshots.
    pub fn purge_floor(&self) -> watch::Receiver<Option<u64>> {
        self.shared.purge_floor.subscribe()
    }

    /// Resolves when the applied payload bytes since the last snapshot pass the threshold.
    pub async fn bytes_threshold_crossed(&self) {
        self.shared.bytes_threshold_crossed.notified().await
    }

    fn current_snapshot_meta(&self) -> Option<SnapshotMeta> {
        self.shared
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|(meta, _)| meta.clone())
    }

    /// Runs a snapshot-directory job off the async threads, then makes its file current,
    /// trims old snapshots and moves the purge floor.
    async fn persist<F>(
        &self,
        meta: &SnapshotMeta,
        job: F,
    ) -> Result<SnapshotFile, SnapshotFileError>
    where
        F: FnOnce(&SnapshotDir) -> Result<SnapshotFile, SnapshotFileError> + Send + 'static,
    {
        let dir = self.shared.dir.clone();
        let (file, floor) = tokio::task::spawn_blocking(move || {
            let file = job(&dir)?;
            let floor = dir.retain(SNAPSHOTS_KEPT)?;
            Ok::<_, SnapshotFileError>((file, floor))
        })
        .await
        .map_err(|e| SnapshotFileError::Io {
            path: self.shared.dir.path().to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })??;
        *self
            .shared
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some((meta.clone(), file.clone()));
        self.shared
            .purge_floor
            .send_replace(floor.and_then(|p| p.checked_sub(1)));
        Ok(file)
    }
}

/// One entry with its commands decoded.
enum Decoded<C> {
    Blank,
    Normal { commands: Vec<C>, bytes: u64 },
    Membership(openraft::Membership<crate::types::NodeId, crate::types::NodeInfo>),
}

/// The error that stops openraft once the state machine halted.
fn halted_error(log_id: Option<LogId>, h: &ApplyHalted) -> StorageError {
    let source = openraft::AnyError::error(h.to_string());
    match log_id {
        Some(log_id) => StorageIOError::apply(log_id, source).into(),
        None => StorageIOError::read_snapshot(None, source).into(),
    }
}

fn snapshot_write_err(e: &SnapshotFileError) -> StorageError {
    StorageIOError::write_snapshot(None, openraft::AnyError::new(e)).into()
}

fn snapshot_read_err(e: &SnapshotFileError) -> StorageError {
    StorageIOError::read_snapshot(None, openraft::AnyError::new(e)).into()
}

impl<A: Application> RaftSnapshotBuilder<TypeConfig> for StateMachine<A> {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError> {
        let _io = self.shared.snapshot_io.lock().await;
        if let Err(refused) = self.shared.space.admit(0) {
            return Ok(self.postponed_snapshot(&refused.to_string()));
        }
        let started = Instant::now();
        let (records, last_applied, membership) = {
            let applied = read_lock(&self.shared.applied);
            self.shared.bytes_since_snapshot.store(0, Ordering::Relaxed);
            (
                applied.app.snapshot_records(),
                applied.last_applied,
                applied.membership.clone(),
            )
        };
        let snapshot_id = match &last_applied {
            Some(l) => format!("{}-{}-{}", l.leader_id.term, l.leader_id.node_id, l.index),
            None => "empty".to_owned(),
        };
        let meta = SnapshotMeta {
            last_log_id: last_applied,
            last_membership: membership,
            snapshot_id,
        };
        let file = match self
            .persist(&meta, {
                let meta = meta.clone();
                move |dir| dir.write(&meta, &records)
            })
            .await
        {
            Ok(file) => file,
            // Postponed, not failed: a failed build stops openraft, and nothing is lost by
            // waiting (the previous snapshots and the log behind them are all kept, the purge
            // floor does not move); the node's retry task builds it once there is room.
            Err(e) if e.is_storage_full() => {
                self.shared.space.mark_full(&e.to_string());
                return Ok(self.postponed_snapshot(&e.to_string()));
            }
            Err(e) => return Err(snapshot_write_err(&e)),
        };
        let dir = self.shared.dir.clone();
        let image = tokio::task::spawn_blocking(move || dir.read_image(&file))
            .await
            .map_err(|e| errors::read_any(std::io::Error::other(e.to_string())))?
            .map_err(|e| snapshot_read_err(&e))?;
        metrics::histogram!(m::SNAPSHOT_BUILD_SECONDS).record(started.elapsed().as_secs_f64());
        metrics::gauge!(m::SNAPSHOT_BYTES).set(image.len() as f64);
        tracing::info!(
            last_log_id = ?meta.last_log_id,
            bytes = image.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "snapshot built"
        );
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(image)),
        })
    }
}

impl<A: Application> RaftStateMachine<TypeConfig> for StateMachine<A> {
    type SnapshotBuilder = Self;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        let applied = read_lock(&self.shared.applied);
        Ok((applied.last_applied, applied.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<ReplyBatch>, StorageError>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let started = Instant::now();
        if let Some(h) = self.halted() {
            // openraft stops on the first error; this only guards a call racing that stop.
            return Err(halted_error(None, &h));
        }
        // Decode every command first, outside the lock: an entry is applied whole or not at
        // all, and nothing after an entry that does not decode is applied.
        let mut decoded = Vec::new();
        let mut halt = None;
        for entry in entries {
            let payload = match entry.payload {
                EntryPayload::Blank => Decoded::Blank,
                EntryPayload::Membership(m) => Decoded::Membership(m),
                EntryPayload::Normal(batch) => {
                    let bytes: u64 = batch.0.iter().map(|c| c.len() as u64).sum();
                    match batch
                        .0
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            A::decode(c)
                                .map_err(|e| format!("command {} of {}: {e}", i + 1, batch.0.len()))
                        })
                        .collect::<Result<Vec<_>, _>>()
                    {
                        Ok(commands) => Decoded::Normal { commands, bytes },
                        Err(reason) => {
                            halt = Some((entry.log_id, reason));
                            break;
                        }
                    }
                }
            };
            decoded.push((entry.log_id, payload));
        }
        let mut replies = Vec::with_capacity(decoded.len());
        let mut applied_bytes = 0u64;
        {
            let mut applied = write_lock(&self.shared.applied);
            for (log_id, payload) in decoded {
                applied.last_applied = Some(log_id);
                match payload {
                    Decoded::Blank => replies.push(ReplyBatch::default()),
                    Decoded::Normal { commands, bytes } => {
                        applied_bytes += bytes;
                        let index = LogIndex(log_id.index);
                        let out = commands
                            .into_iter()
                            .map(|c| applied.app.apply(index, c))
                            .collect();
                        replies.push(ReplyBatch(out));
                    }
                    Decoded::Membership(membership) => {
                        applied.membership = StoredMembership::new(Some(log_id), membership);
                        replies.push(ReplyBatch::default());
                    }
                }
            }
        }
        self.shared.timings.apply(started.elapsed());
        let before = self
            .shared
            .bytes_since_snapshot
            .fetch_add(applied_bytes, Ordering::Relaxed);
        let threshold = self.shared.snapshot_bytes_threshold;
        if before < threshold && before + applied_bytes >= threshold {
            self.shared.bytes_threshold_crossed.notify_one();
        }
        if let Some((log_id, reason)) = halt {
            let h = self.halt(
                log_id.index,
                format!("undecodable committed entry: {reason}"),
            );
            return Err(halted_error(Some(log_id), &h));
        }
        Ok(replies)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<Cursor<Vec<u8>>>, StorageError> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError> {
        let _io = self.shared.snapshot_io.lock().await;
        let image = Bytes::from(snapshot.into_inner());
        let label = self.shared.dir.path().join("received");
        let index = meta.last_log_id.map_or(0, |l| l.index);
        let refuse = |reason: String| {
            let h = self.halt(
                index,
                format!("received snapshot {}: {reason}", meta.snapshot_id),
            );
            halted_error(None, &h)
        };
        let (file_meta, records) =
            snapshot_file::decode(&label, image.clone()).map_err(|e| refuse(e.to_string()))?;
        if file_meta.last_log_id != meta.last_log_id
            || file_meta.last_membership != meta.last_membership
        {
            return Err(refuse(format!(
                "it holds {:?}, announced as {:?}",
                file_meta.last_log_id, meta.last_log_id
            )));
        }
        // Persist before switching state: once openraft hears back it may purge the log.
        let bytes = image.len();
        let space = self.shared.space.clone();
        self.persist(meta, {
            let meta = meta.clone();
            // A full disk: wait for room and try again (a failed install stops openraft).
            move |dir| loop {
                match dir.install(&meta, image.clone()) {
                    Err(e) if e.is_storage_full() => {
                        space.mark_full(&e.to_string());
                        space.wait_until_writable();
                    }
                    other => return other,
                }
            }
        })
        .await
        .map_err(|e| snapshot_write_err(&e))?;
        let mut applied = write_lock(&self.shared.applied);
        if let Err(e) = applied.app.restore(records) {
            drop(applied);
            return Err(refuse(e.to_string()));
        }
        applied.last_applied = meta.last_log_id;
        applied.membership = meta.last_membership.clone();
        self.shared.bytes_since_snapshot.store(0, Ordering::Relaxed);
        tracing::info!(last_log_id = ?meta.last_log_id, bytes, "snapshot installed");
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
        let current = self
            .shared
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some((meta, file)) = current else {
            return Ok(None);
        };
        let opened = self
            .shared
            .opened_image
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .filter(|(opened_file, _)| *opened_file == file);
        let image = match opened {
            // Verified by `open`.
            Some((_, image)) => image,
            None => {
                let dir = self.shared.dir.clone();
                tokio::task::spawn_blocking(move || dir.read(&file))
                    .await
                    .map_err(|e| errors::read_any(std::io::Error::other(e.to_string())))?
                    .map_err(|e| snapshot_read_err(&e))?
                    .0
            }
        };
        Ok(Some(Snapshot {
            meta,
            // No copy when nothing else holds a slice of the image.
            snapshot: Box::new(Cursor::new(Vec::from(image))),
        }))
    }
}

impl<A: Application> StateMachine<A> {
    /// The meta of the snapshot currently served, for status output.
    pub fn snapshot_meta(&self) -> Option<SnapshotMeta> {
        self.current_snapshot_meta()
    }
}
