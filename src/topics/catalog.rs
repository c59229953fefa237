//! The interface handlers use to read and change topics, whatever keeps them.
//!
//! Reads are synchronous snapshots (Metadata is hot). Changes are futures: with the Raft meta
//! service they become replicated commands that finish once committed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use uuid::Uuid;

use super::configs::TopicConfigs;
use super::spec::{PartitionAssignment, TopicSpec};

/// A boxed future, so the traits stay object-safe (`Arc<dyn TopicCatalog>`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a catalog change failed.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// Creating a name that exists.
    #[error("Topic '{0}' already exists.")]
    TopicExists(String),
    /// Deleting or reading a name that does not exist.
    #[error("Topic '{0}' does not exist.")]
    UnknownTopic(String),
    /// Deleting an id that does not exist.
    #[error("Topic id {0} does not exist.")]
    UnknownTopicId(Uuid),
    /// A limit on topics or partitions.
    #[error("{0}")]
    LimitReached(String),
    /// Persisting the change failed; nothing changed.
    #[error("persisting topic metadata failed: {0}")]
    Storage(String),
    /// Changes are made by the controller (the Raft leader), which could not be reached.
    #[error("This node is not the controller.")]
    NotController,
    /// The topic changed between the read a change was computed from and the change: nothing
    /// changed (the caller computes again).
    #[error("{0}")]
    Conflict(String),
    /// The change was submitted but its outcome is unknown (the controller timed out or lost
    /// its office meanwhile); it may still take effect.
    #[error("the controller did not confirm the change in time: {0}")]
    Timeout(String),
}

/// Topics, wherever they are kept.
pub trait TopicCatalog: Send + Sync {
    /// The cluster id clients see in Metadata; stable for the life of the data.
    fn cluster_id(&self) -> String;
    /// Every topic, ordered by name.
    fn topics(&self) -> Vec<Arc<TopicSpec>>;
    /// One topic by name.
    fn topic(&self, name: &str) -> Option<Arc<TopicSpec>>;
    /// One topic by id.
    fn topic_by_id(&self, id: Uuid) -> Option<Arc<TopicSpec>>;
    /// Adds a topic; the spec is complete (id, placement, configs already chosen and checked).
    fn create(&self, spec: TopicSpec) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>>;
    /// Removes a topic, returning what it was.
    fn delete(&self, name: &str) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>>;
    /// Replaces the configs of `current` (validated already) if the topic is still `current`
    /// (same id, same configs), else [`CatalogError::Conflict`] or `UnknownTopic`.
    fn alter_configs(
        &self,
        current: &TopicSpec,
        configs: TopicConfigs,
    ) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>>;
    /// Appends partitions (placed already) to `current` if the topic still has its id and
    /// partition count, else [`CatalogError::Conflict`] or `UnknownTopic`.
    fn add_partitions(
        &self,
        current: &TopicSpec,
        added: Vec<PartitionAssignment>,
    ) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>>;
}

/// Hands out producer ids for idempotent producers; never the same id twice, restarts included.
pub trait ProducerIdAllocator: Send + Sync {
    /// A fresh producer id.
    fn next_producer_id(&self) -> BoxFuture<'_, Result<i64, CatalogError>>;
}
