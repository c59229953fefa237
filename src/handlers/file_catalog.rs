//! A file-backed topic catalog for the handlers' unit tests: topics, the cluster id and the
//! producer-id high-water mark in one JSON file under the test's directory. (The broker keeps
//! topics in the Raft meta service: `replicated::catalog`.)
//!
//! Every change writes the whole file anew: `metadata.json.tmp`, fsync, rename over
//! `metadata.json`, fsync the directory. A crash leaves either the old or the new file, never
//! a mix. The in-memory copy changes only after the file did, so a failed write changes
//! nothing.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::topics::catalog::{BoxFuture, CatalogError, ProducerIdAllocator, TopicCatalog};
use crate::topics::spec::TopicSpec;
use crate::topics::{
    PartitionAssignment, TopicConfigs, MAX_PARTITIONS_PER_TOPIC, MAX_TOPICS, MAX_TOTAL_PARTITIONS,
};

/// File name under the data directory.
pub const METADATA_FILE_NAME: &str = "metadata.json";
/// Version of the file's layout.
const FORMAT_VERSION: u32 = 1;
/// Producer ids are reserved on disk this many at a time, so that handing one out rarely
/// writes the file, and a restart never reuses one (it skips the rest of the block).
const PRODUCER_ID_BLOCK: i64 = 1000;
/// Largest metadata file read at open.
const MAX_METADATA_FILE_BYTES: u64 = 256 << 20;

#[derive(Debug, Serialize, Deserialize)]
struct OnDisk {
    format_version: u32,
    cluster_id: String,
    /// Producer ids below this may have been handed out.
    producer_id_block_end: i64,
    topics: Vec<TopicSpec>,
}

#[derive(Debug, Clone)]
struct State {
    cluster_id: String,
    topics: BTreeMap<String, Arc<TopicSpec>>,
    producer_id_block_end: i64,
    next_producer_id: i64,
}

impl State {
    fn to_disk(&self) -> OnDisk {
        OnDisk {
            format_version: FORMAT_VERSION,
            cluster_id: self.cluster_id.clone(),
            producer_id_block_end: self.producer_id_block_end,
            topics: self.topics.values().map(|t| (**t).clone()).collect(),
        }
    }

    fn total_partitions(&self) -> usize {
        self.topics.values().map(|t| t.partitions.len()).sum()
    }
}

/// Why the catalog cannot open.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file exists but is not a metadata file this version understands. Starting anyway
    /// would forget every topic, so the broker refuses to start.
    #[error("{path} is not a valid cohort metadata file: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// Topics in `<data-dir>/metadata.json`.
#[derive(Debug)]
pub struct FileCatalog {
    dir: PathBuf,
    state: RwLock<State>,
    /// Serializes writers: each change is read-modify-write of the whole file.
    write: tokio::sync::Mutex<()>,
}

impl FileCatalog {
    /// Opens the catalog in `dir`, creating it (with a new cluster id) if absent.
    pub fn open(dir: &Path) -> Result<FileCatalog, OpenError> {
        let path = dir.join(METADATA_FILE_NAME);
        let io = |source| OpenError::Io {
            path: path.clone(),
            source,
        };
        let state = match std::fs::metadata(&path) {
            Ok(meta) => {
                if meta.len() > MAX_METADATA_FILE_BYTES {
                    return Err(OpenError::Invalid {
                        path,
                        reason: format!("{} bytes is more than this version reads", meta.len()),
                    });
                }
                let bytes = std::fs::read(&path).map_err(io)?;
                let disk: OnDisk =
                    serde_json::from_slice(&bytes).map_err(|e| OpenError::Invalid {
                        path: path.clone(),
                        reason: e.to_string(),
                    })?;
                if disk.format_version != FORMAT_VERSION {
                    return Err(OpenError::Invalid {
                        path,
                        reason: format!("format version {}", disk.format_version),
                    });
                }
                State {
                    cluster_id: disk.cluster_id,
                    topics: disk
                        .topics
                        .into_iter()
                        .map(|t| (t.name.clone(), Arc::new(t)))
                        .collect(),
                    producer_id_block_end: disk.producer_id_block_end,
                    next_producer_id: disk.producer_id_block_end,
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let state = State {
                    cluster_id: new_cluster_id(),
                    topics: BTreeMap::new(),
                    producer_id_block_end: 0,
                    next_producer_id: 0,
                };
                write_atomically(dir, &state.to_disk()).map_err(io)?;
                state
            }
            Err(e) => return Err(io(e)),
        };
        Ok(FileCatalog {
            dir: dir.to_path_buf(),
            state: RwLock::new(state),
            write: tokio::sync::Mutex::new(()),
        })
    }

    fn snapshot(&self) -> State {
        self.state.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Persists `next` and makes it current. Called with `write` held.
    async fn commit(&self, next: State) -> Result<(), CatalogError> {
        let dir = self.dir.clone();
        let disk = next.to_disk();
        tokio::task::spawn_blocking(move || write_atomically(&dir, &disk))
            .await
            .map_err(|e| CatalogError::Storage(e.to_string()))?
            .map_err(|e| CatalogError::Storage(e.to_string()))?;
        *self.state.write().unwrap_or_else(|e| e.into_inner()) = next;
        Ok(())
    }
}

impl TopicCatalog for FileCatalog {
    fn cluster_id(&self) -> String {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .cluster_id
            .clone()
    }

    fn topics(&self) -> Vec<Arc<TopicSpec>> {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .topics
            .values()
            .cloned()
            .collect()
    }

    fn topic(&self, name: &str) -> Option<Arc<TopicSpec>> {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .topics
            .get(name)
            .cloned()
    }

    fn topic_by_id(&self, id: Uuid) -> Option<Arc<TopicSpec>> {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .topics
            .values()
            .find(|t| t.id == id)
            .cloned()
    }

    fn create(&self, spec: TopicSpec) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>> {
        Box::pin(async move {
            let _writer = self.write.lock().await;
            let mut next = self.snapshot();
            if next.topics.contains_key(&spec.name) {
                return Err(CatalogError::TopicExists(spec.name));
            }
            if next.topics.len() >= MAX_TOPICS {
                return Err(CatalogError::LimitReached(format!(
                    "The cluster already holds the maximum of {MAX_TOPICS} topics."
                )));
            }
            if next.total_partitions() + spec.partitions.len() > MAX_TOTAL_PARTITIONS {
                return Err(CatalogError::LimitReached(format!(
                    "Creating {} partitions would exceed the cluster maximum of \
                     {MAX_TOTAL_PARTITIONS} partitions.",
                    spec.partitions.len()
                )));
            }
            let spec = Arc::new(spec);
            next.topics.insert(spec.name.clone(), spec.clone());
            self.commit(next).await?;
            Ok(spec)
        })
    }

    fn delete(&self, name: &str) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>> {
        let name = name.to_string();
        Box::pin(async move {
            let _writer = self.write.lock().await;
            let mut next = self.snapshot();
            let removed = next
                .topics
                .remove(&name)
                .ok_or(CatalogError::UnknownTopic(name))?;
            self.commit(next).await?;
            Ok(removed)
        })
    }

    fn alter_configs(
        &self,
        current: &TopicSpec,
        configs: TopicConfigs,
    ) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>> {
        let current = current.clone();
        Box::pin(async move {
            let _writer = self.write.lock().await;
            let mut next = self.snapshot();
            let topic = still(&next, &current)?;
            if topic.configs != current.configs {
                return Err(CatalogError::Conflict(format!(
                    "the configs of topic '{}' changed meanwhile",
                    current.name
                )));
            }
            let mut spec = (*topic).clone();
            spec.configs = configs;
            let spec = Arc::new(spec);
            next.topics.insert(spec.name.clone(), spec.clone());
            self.commit(next).await?;
            Ok(spec)
        })
    }

    fn add_partitions(
        &self,
        current: &TopicSpec,
        added: Vec<PartitionAssignment>,
    ) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>> {
        let current = current.clone();
        Box::pin(async move {
            let _writer = self.write.lock().await;
            let mut next = self.snapshot();
            let topic = still(&next, &current)?;
            if topic.partitions.len() != current.partitions.len() {
                return Err(CatalogError::Conflict(format!(
                    "the partitions of topic '{}' changed meanwhile",
                    current.name
                )));
            }
            let total = topic.partitions.len() + added.len();
            if total > MAX_PARTITIONS_PER_TOPIC as usize
                || next.total_partitions() + added.len() > MAX_TOTAL_PARTITIONS
            {
                return Err(CatalogError::LimitReached(format!(
                    "{total} partitions are more than the catalog's limits allow."
                )));
            }
            let mut spec = (*topic).clone();
            spec.partitions.extend(added);
            let spec = Arc::new(spec);
            next.topics.insert(spec.name.clone(), spec.clone());
            self.commit(next).await?;
            Ok(spec)
        })
    }
}

/// The catalog's topic `current.name` if it is still the incarnation `current.id`.
fn still(state: &State, current: &TopicSpec) -> Result<Arc<TopicSpec>, CatalogError> {
    state
        .topics
        .get(&current.name)
        .filter(|t| t.id == current.id)
        .cloned()
        .ok_or_else(|| CatalogError::UnknownTopic(current.name.clone()))
}

impl ProducerIdAllocator for FileCatalog {
    fn next_producer_id(&self) -> BoxFuture<'_, Result<i64, CatalogError>> {
        Box::pin(async move {
            let _writer = self.write.lock().await;
            let mut next = self.snapshot();
            let id = next.next_producer_id;
            if id >= next.producer_id_block_end {
                next.producer_id_block_end = id.saturating_add(PRODUCER_ID_BLOCK);
            }
            next.next_producer_id = id + 1;
            let persist = next.producer_id_block_end
                != self
                    .state
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .producer_id_block_end;
            if persist {
                self.commit(next).await?;
            } else {
                *self.state.write().unwrap_or_else(|e| e.into_inner()) = next;
            }
            Ok(id)
        })
    }
}

/// Writes `disk` as `<dir>/metadata.json`, atomically and durably.
fn write_atomically(dir: &Path, disk: &OnDisk) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(disk).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!("{METADATA_FILE_NAME}.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, dir.join(METADATA_FILE_NAME))?;
    std::fs::File::open(dir)?.sync_all()
}

/// A Kafka-style cluster id: 16 random bytes, URL-safe base64 without padding (22 chars).
fn new_cluster_id() -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let bytes = Uuid::new_v4().into_bytes();
    let mut out = String::with_capacity(22);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(char::from(ALPHABET[((acc >> bits) & 63) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((acc << (6 - bits)) & 63) as usize]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topics::{PartitionAssignment, TopicConfigs};

    fn spec(name: &str, partitions: usize) -> TopicSpec {
        TopicSpec {
            name: name.into(),
            id: Uuid::new_v4(),
            partitions: vec![PartitionAssignment { replicas: vec![1] }; partitions],
            configs: TopicConfigs::from_pairs([("retention.ms", Some("1000"))]).unwrap(),
        }
    }

    #[tokio::test]
    async fn topics_and_the_cluster_id_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = FileCatalog::open(dir.path()).unwrap();
        let cluster_id = catalog.cluster_id();
        assert_eq!(cluster_id.len(), 22);
        let a = catalog.create(spec("a", 3)).await.unwrap();
        catalog.create(spec("b", 1)).await.unwrap();
        assert!(matches!(
            catalog.create(spec("a", 1)).await,
            Err(CatalogError::TopicExists(_))
        ));
        catalog.delete("b").await.unwrap();
        assert!(matches!(
            catalog.delete("b").await,
            Err(CatalogError::UnknownTopic(_))
        ));
        drop(catalog);

        let catalog = FileCatalog::open(dir.path()).unwrap();
        assert_eq!(catalog.cluster_id(), cluster_id);
        let names: Vec<String> = catalog.topics().iter().map(|t| t.name.clone()).collect();
        assert_eq!(names, vec!["a"]);
        assert_eq!(catalog.topic("a").unwrap(), a);
        assert_eq!(catalog.topic_by_id(a.id).unwrap().name, "a");
    }

    #[tokio::test]
    async fn producer_ids_are_never_reused_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = FileCatalog::open(dir.path()).unwrap();
        let first: Vec<i64> = [
            catalog.next_producer_id().await.unwrap(),
            catalog.next_producer_id().await.unwrap(),
        ]
        .to_vec();
        assert_eq!(first, vec![0, 1]);
        drop(catalog);
        let catalog = FileCatalog::open(dir.path()).unwrap();
        let after = catalog.next_producer_id().await.unwrap();
        assert!(after > 1, "{after}");
    }

    #[test]
    fn a_damaged_file_refuses_to_open() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(METADATA_FILE_NAME), b"{ not json").unwrap();
        let err = FileCatalog::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a valid cohort metadata file"), "{err}");
    }
}
