//! The topic data plane: partition logs on `compaction`, under `<data-dir>/topics/`.
//!
//! ```text
//!  <data-dir>/topics/<topic>-<partition>/partition.json   which topic incarnation (id) owns it
//!                                        log/             compaction::Log segments
//! ```
//!
//! Partitions open lazily, on first use, after checking the catalog says the topic exists and
//! this node leads the partition. A deleted topic's directories go with it; directories whose
//! marker names no current topic (a crash between the catalog change and the removal, or a
//! topic re-created under the same name) are removed at startup and skipped at open.

pub mod partition;
pub mod producers;
pub mod records;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use compaction::LogError;

pub use partition::{AppendError, Appended, Appending, Partition, ReadBatches, ReadError};
pub use records::{FetchRecords, RecordPart};

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
    /// Its log could not be opened.
    #[error(transparent)]
    Storage(#[from] LogError),
}

/// Every partition this node serves.
pub struct DataPlane {
    topics_dir: PathBuf,
    catalog: Arc<dyn TopicCatalog>,
    local_node: i32,
    sync_before_ack: bool,
    partitions: RwLock<HashMap<(String, i32), Arc<Partition>>>,
    /// Serializes opening, so two requests never open the same log twice.
    opening: Mutex<()>,
}

impl std::fmt::Debug for DataPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataPlane")
            .field("topics_dir", &self.topics_dir)
            .finish_non_exhaustive()
    }
}

impl DataPlane {
    /// Prepares `<data_dir>/topics` and removes directories no current topic owns.
    pub fn open(
        data_dir: &Path,
        catalog: Arc<dyn TopicCatalog>,
        local_node: i32,
        sync_before_ack: bool,
    ) -> Result<DataPlane, LogError> {
        let topics_dir = data_dir.join("topics");
        compaction::create_dir_durably(&topics_dir)?;
        let plane = DataPlane {
            topics_dir,
            catalog,
            local_node,
            sync_before_ack,
            partitions: RwLock::new(HashMap::new()),
            opening: Mutex::new(()),
        };
        plane.remove_orphans()?;
        Ok(plane)
    }

    fn partition_dir(&self, topic: &str, index: i32) -> PathBuf {
        self.topics_dir.join(format!("{topic}-{index}"))
    }

    fn remove_orphans(&self) -> Result<(), LogError> {
        let listing = std::fs::read_dir(&self.topics_dir).map_err(|e| LogError::Io {
            op: "list directory",
            path: self.topics_dir.clone(),
            source: e,
        })?;
        let mut removed = false;
        for entry in listing.flatten() {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let owned = partition::read_marker(&path).is_some_and(|m| {
                self.catalog.topic(&m.topic).is_some_and(|t| {
                    t.id == m.topic_id
                        && path == self.partition_dir(&m.topic, m.partition)
                        && t.partition(m.partition).is_some()
                })
            });
            if !owned {
                tracing::warn!(dir = %path.display(), "removing partition data no topic owns");
                std::fs::remove_dir_all(&path).map_err(|e| LogError::Io {
                    op: "remove directory",
                    path: path.clone(),
                    source: e,
                })?;
                removed = true;
            }
        }
        if removed {
            compaction::sync_dir(&self.topics_dir)?;
        }
        Ok(())
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
            return Ok(p);
        }
        let dir = self.partition_dir(&spec.name, index);
        if let Some(marker) = partition::read_marker(&dir) {
            if marker.topic_id != spec.id {
                // Data of an earlier topic of the same name.
                std::fs::remove_dir_all(&dir).map_err(|e| LogError::Io {
                    op: "remove directory",
                    path: dir.clone(),
                    source: e,
                })?;
            }
        }
        let partition = Arc::new(Partition::open(&dir, spec, index, self.sync_before_ack)?);
        tracing::debug!(topic = %spec.name, partition = index,
            end = partition.log_end_offset(), "opened partition");
        self.partitions
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert((spec.name.clone(), index), Arc::clone(&partition));
        Ok(partition)
    }

    /// Forgets a deleted topic's partitions and removes their data. Requests still holding a
    /// partition finish on the unlinked files.
    pub async fn remove_topic(&self, spec: &TopicSpec) -> Result<(), LogError> {
        {
            let mut map = self.partitions.write().unwrap_or_else(|e| e.into_inner());
            map.retain(|(topic, _), p| !(topic == &spec.name && p.topic_id == spec.id));
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
                    Err(LookupError::NotLeader { .. } | LookupError::UnknownTopicOrPartition) => {
                        continue
                    }
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
