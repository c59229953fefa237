//! The topic data plane: partition logs on `compaction`, under `<data-dir>/topics/`.
//!
//! ```text
//!  <data-dir>/topics/<topic>-<partition>/partition.json   which topic incarnation (id) owns it
//!                                        log/             compaction::Log segments
//!                                        txn/             .txnindex per segment, producer snapshots
//! ```
//!
//! Partitions open lazily, on first use, after checking the catalog says the topic exists and
//! this node leads the partition.
//!
//! Partition data is deleted only on proof that its topic is gone: the applied deletion of
//! that exact topic id ([`DataPlane::remove_topic`], driven by the DeleteTopics apply). A
//! directory the catalog does not account for (no topic of its id, no readable marker) may
//! only look orphaned because this node's applied state is behind — after a restart it has
//! applied only what its log store recorded as committed, a mark written lazily — so it is left
//! alone until the node has caught up with the leader's commit index ([`DataPlane::reconcile`],
//! see `reconcile`), and even then only moved aside under `<data-dir>/stray/`, never deleted.
//! Until then a partition whose directory belongs to another incarnation of its topic is not
//! served (retriable NOT_LEADER_OR_FOLLOWER) rather than overwritten.

pub mod epochs;
pub mod partition;
pub mod producers;
pub mod reconcile;
pub mod records;
pub mod sizes;
pub mod timestamp_lookup;
pub mod transactions;
pub mod txn_index;
#[cfg(test)]
mod txn_tests;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use compaction::LogError;
use tokio::sync::watch;

pub use partition::{
    AppendError, Appended, Appending, Partition, ReadBatches, ReadError, TxnGuard,
};
pub use records::{FetchRecords, RecordPart};
pub use timestamp_lookup::{LookupBudget, Wanted};

use crate::topics::{TopicCatalog, TopicSpec};

/// Why a partition cannot be served here.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// No such topic or partition.
    #[error("This server does not host this topic-partition.")]
    UnknownTopicOrPartition,
    /// Another node leads it.
    #[error("this node does not lead the partition (leader {leader})")]
    NotLeader {
        /// The leader's node id.
        leader: i32,
    },
    /// Its directory holds another incarnation of the topic and this node has not caught up
    /// with the leader yet, so which one is current is not known for sure.
    #[error("the partition's data is not reconciled with the topic list yet")]
    NotReconciled,
    /// Its log could not be opened.
    #[error(transparent)]
    Storage(#[from] LogError),
}

/// Every partition this node serves.
pub struct DataPlane {
    topics_dir: PathBuf,
    /// Where directories no topic owns are moved once the node has caught up.
    stray_dir: PathBuf,
    /// Set once this node's applied topic list is known to be as new as the leader's
    /// (`reconcile`): only then does a directory's absence from it mean anything.
    reconciled: watch::Sender<bool>,
    catalog: Arc<dyn TopicCatalog>,
    local_node: i32,
    sync_before_ack: bool,
    partitions: RwLock<HashMap<(String, i32), Arc<Partition>>>,
    /// Serializes opening, so two requests never open the same log twice.
    opening: Mutex<()>,
    /// Memory ListOffsets-by-timestamp lookups decode batches in.
    timestamp_lookups: LookupBudget,
    /// The open-file budget of every partition's segments.
    open_files: compaction::OpenFiles,
    /// The guards every partition log is opened under.
    space: Option<DataSpace>,
}

/// A partition placed on this node, as [`DataPlane::held_partitions`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldPartition {
    /// Topic name.
    pub topic: String,
    /// The topic's id: the directory is this partition's only if its marker says so.
    pub topic_id: uuid::Uuid,
    /// Partition index.
    pub index: i32,
    /// Where its data lives (it may not exist yet).
    pub dir: PathBuf,
}

/// Bounds of the data plane.
#[derive(Debug, Clone)]
pub struct DataLimits {
    /// `--list-offsets-decompress-bytes-max`.
    pub list_offsets_decompress_bytes: usize,
    /// `--open-segment-files-max`: every partition's segment files share it.
    pub open_files: compaction::OpenFiles,
    /// The disk-full guards of partition logs and their index files (decision 0112); `None`:
    /// appends are refused only by the errors of a full disk.
    pub space: Option<DataSpace>,
}

/// The guards a partition log is opened under.
#[derive(Debug, Clone)]
pub struct DataSpace {
    /// Refuses appends while full or below `--disk-reserve-bytes`.
    pub log: compaction::SpaceGuard,
    /// Told when a sealed segment's index files could not be written.
    pub index: compaction::SpaceGuard,
}

impl std::fmt::Debug for DataPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataPlane")
            .field("topics_dir", &self.topics_dir)
            .finish_non_exhaustive()
    }
}

impl DataPlane {
    /// Prepares `<data_dir>/topics`. Removes nothing: see [`DataPlane::reconcile`].
    pub fn open(
        data_dir: &Path,
        catalog: Arc<dyn TopicCatalog>,
        local_node: i32,
        sync_before_ack: bool,
        limits: DataLimits,
    ) -> Result<DataPlane, LogError> {
        let topics_dir = data_dir.join("topics");
        compaction::create_dir_durably(&topics_dir)?;
        let (reconciled, _) = watch::channel(false);
        Ok(DataPlane {
            topics_dir,
            stray_dir: data_dir.join(reconcile::STRAY_DIR),
            reconciled,
            catalog,
            local_node,
            sync_before_ack,
            partitions: RwLock::new(HashMap::new()),
            opening: Mutex::new(()),
            timestamp_lookups: LookupBudget::new(limits.list_offsets_decompress_bytes),
            open_files: limits.open_files,
            space: limits.space,
        })
    }

    /// The memory budget of ListOffsets-by-timestamp lookups.
    pub fn timestamp_lookups(&self) -> &LookupBudget {
        &self.timestamp_lookups
    }

    /// The open-file budget of the partitions' segment files.
    pub fn open_files(&self) -> &compaction::OpenFiles {
        &self.open_files
    }

    fn partition_dir(&self, topic: &str, index: i32) -> PathBuf {
        self.topics_dir.join(format!("{topic}-{index}"))
    }

    /// Every partition the catalog places on this node, opened or not, in topic-name and index
    /// order, with the directory its data lives in.
    pub fn held_partitions(&self) -> Vec<HeldPartition> {
        let mut topics = self.catalog.topics();
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        let mut out = Vec::new();
        for spec in topics {
            for (index, assignment) in (0..).zip(&spec.partitions) {
                if assignment.leader() == self.local_node {
                    out.push(HeldPartition {
                        topic: spec.name.clone(),
                        topic_id: spec.id,
                        index,
                        dir: self.partition_dir(&spec.name, index),
                    });
                }
            }
        }
        out
    }

    /// Call once this node's catalog is at least as new as the leader's commit index of the
    /// current term (so at least as new as anything this node ever applied): from then on a
    /// directory the catalog does not account for is known to be of a deleted topic. Moves
    /// every such directory under `stray/` (one log line each; partitions open right now are
    /// left to their deletion) and returns how many it moved. Later calls (after a snapshot
    /// replaced the state, or deletions were missed) sweep again.
    pub fn reconcile(&self) -> Result<usize, LogError> {
        let _opening = self.opening.lock().unwrap_or_else(|e| e.into_inner());
        self.reconciled.send_replace(true);
        let open: Vec<PathBuf> = self
            .open_partitions()
            .iter()
            .map(|p| p.dir().to_path_buf())
            .collect();
        let mut moved = 0;
        for dir in reconcile::list_dirs(&self.topics_dir)? {
            if open.contains(&dir) || self.owned(&dir) {
                continue;
            }
            reconcile::move_aside(&dir, &self.stray_dir, "no topic owns it")?;
            moved += 1;
        }
        if moved > 0 {
            compaction::sync_dir(&self.topics_dir)?;
        }
        Ok(moved)
    }

    /// Whether [`DataPlane::reconcile`] has run.
    pub fn is_reconciled(&self) -> bool {
        *self.reconciled.borrow()
    }

    /// Resolves once [`DataPlane::reconcile`] has run.
    pub async fn wait_reconciled(&self) {
        let mut rx = self.reconciled.subscribe();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// Whether the catalog accounts for `dir`: its marker names a current topic id and one of
    /// its partitions, at the path that partition lives at.
    fn owned(&self, dir: &Path) -> bool {
        partition::read_marker(dir).is_some_and(|m| {
            self.catalog.topic(&m.topic).is_some_and(|t| {
                t.id == m.topic_id
                    && dir == self.partition_dir(&m.topic, m.partition)
                    && t.partition(m.partition).is_some()
            })
        })
    }

    /// The partition, opened if needed, if the catalog has it and this node leads it.
    pub async fn partition(
        self: &Arc<Self>,
        topic: &str,
        index: i32,
    ) -> Result<Arc<Partition>, LookupError> {
        let spec = self
            .catalog
            .topic(topic)
            .ok_or(LookupError::UnknownTopicOrPartition)?;
        let assignment = spec
            .partition(index)
            .ok_or(LookupError::UnknownTopicOrPartition)?;
        if assignment.leader() != self.local_node {
            return Err(LookupError::NotLeader {
                leader: assignment.leader(),
            });
        }
        if let Some(p) = self.cached(topic, index, &spec) {
            p.apply_configs(&spec.configs);
            return Ok(p);
        }
        let plane = Arc::clone(self);
        tokio::task::spawn_blocking(move || plane.open_partition(&spec, index))
            .await
            .map_err(|e| LogError::Io {
                op: "open partition",
                path: PathBuf::new(),
                source: std::io::Error::other(e.to_string()),
            })?
    }

    fn cached(&self, topic: &str, index: i32, spec: &TopicSpec) -> Option<Arc<Partition>> {
        self.partitions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(topic.to_string(), index))
            .filter(|p| p.topic_id == spec.id)
            .cloned()
    }

    fn open_partition(&self, spec: &TopicSpec, index: i32) -> Result<Arc<Partition>, LookupError> {
        let _opening = self.opening.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = self.cached(&spec.name, index, spec) {
            p.apply_configs(&spec.configs);
            return Ok(p);
        }
        let dir = self.partition_dir(&spec.name, index);
        if let Some(marker) = partition::read_marker(&dir) {
            if marker.topic_id != spec.id {
                // Another incarnation of the topic. Once caught up, the catalog's is the
                // current one, so that one was deleted; before, it may be the catalog that is
                // stale. Either way its data is kept.
                if !self.is_reconciled() {
                    return Err(LookupError::NotReconciled);
                }
                reconcile::move_aside(&dir, &self.stray_dir, "another topic id owns the name")?;
                compaction::sync_dir(&self.topics_dir)?;
            }
        }
        let partition = Arc::new(Partition::open(
            &dir,
            spec,
            index,
            self.sync_before_ack,
            &self.open_files,
            self.space.as_ref(),
        )?);
        tracing::debug!(topic = %spec.name, partition = index,
            end = partition.log_end_offset(), "opened partition");
        self.partitions
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert((spec.name.clone(), index), Arc::clone(&partition));
        Ok(partition)
    }

    /// Forgets a deleted topic's partitions and removes their data: call it only once the
    /// deletion of `spec` (this exact topic id) is committed and applied. Directories of any
    /// other id are left alone. Requests still holding a partition finish on the unlinked files.
    pub async fn remove_topic(&self, spec: &TopicSpec) -> Result<(), LogError> {
        {
            let mut map = self.partitions.write().unwrap_or_else(|e| e.into_inner());
            map.retain(|(topic, _), p| {
                let removed = topic == &spec.name && p.topic_id == spec.id;
                if removed {
                    // Requests may still hold it; its files must not be reopened by path.
                    p.forget_paths();
                }
                !removed
            });
        }
        let dirs: Vec<PathBuf> = (0..spec.partition_count())
            .map(|i| self.partition_dir(&spec.name, i))
            .collect();
        let topics_dir = self.topics_dir.clone();
        let id = spec.id;
        tokio::task::spawn_blocking(move || {
            for dir in dirs {
                let ours = partition::read_marker(&dir).is_some_and(|m| m.topic_id == id);
                if ours {
                    std::fs::remove_dir_all(&dir).map_err(|e| LogError::Io {
                        op: "remove directory",
                        path: dir.clone(),
                        source: e,
                    })?;
                }
            }
            compaction::sync_dir(&topics_dir)
        })
        .await
        .map_err(|e| LogError::Io {
            op: "remove topic",
            path: PathBuf::new(),
            source: std::io::Error::other(e.to_string()),
        })?
    }

    /// Partitions opened so far.
    pub fn open_partitions(&self) -> Vec<Arc<Partition>> {
        self.partitions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Makes every appended batch durable (the `--flush-ms` flusher and shutdown).
    pub async fn flush_all(&self) {
        for p in self.open_partitions() {
            let name = format!("{}-{}", p.topic, p.index);
            match tokio::task::spawn_blocking(move || p.flush()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!(partition = %name, error = %e, "flush failed"),
                Err(e) => tracing::error!(partition = %name, error = %e, "flush task failed"),
            }
        }
    }

    /// Applies retention to every partition this node leads (opening the ones not open yet).
    pub async fn enforce_retention(self: &Arc<Self>, now_ms: i64) {
        for spec in self.catalog.topics() {
            for index in 0..spec.partition_count() {
                let p = match self.partition(&spec.name, index).await {
                    Ok(p) => p,
                    Err(
                        LookupError::NotLeader { .. }
                        | LookupError::UnknownTopicOrPartition
                        | LookupError::NotReconciled,
                    ) => continue,
                    Err(e) => {
                        tracing::error!(topic = %spec.name, partition = index, error = %e,
                            "cannot open partition for retention");
                        continue;
                    }
                };
                let name = format!("{}-{index}", spec.name);
                match tokio::task::spawn_blocking(move || p.apply_retention(now_ms)).await {
                    Ok(Ok(0)) => {}
                    Ok(Ok(n)) => {
                        tracing::info!(partition = %name, segments = n, "retention deleted segments")
                    }
                    Ok(Err(e)) => {
                        tracing::error!(partition = %name, error = %e, "retention failed")
                    }
                    Err(e) => {
                        tracing::error!(partition = %name, error = %e, "retention task failed")
                    }
                }
            }
        }
    }
}
