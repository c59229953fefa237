//! What the catalog knows about one topic.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::configs::TopicConfigs;

/// Where one partition lives: its replicas, the first being the preferred leader. In the first
/// cluster version every partition has one replica (DESIGN.md §4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionAssignment {
    /// Node ids of the replicas; never empty.
    pub replicas: Vec<i32>,
}

impl PartitionAssignment {
    /// The node that takes writes (no leader election yet: the first replica).
    pub fn leader(&self) -> i32 {
        self.replicas.first().copied().unwrap_or(-1)
    }
}

/// A topic: its identity, its partitions' placement, its configs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicSpec {
    /// Valid per `names::validate_topic_name`.
    pub name: String,
    /// Kafka topic id (Metadata v10+, CreateTopics v7, DeleteTopics v6). A re-created topic of
    /// the same name gets a new id, which is how stale partition data is told apart.
    pub id: Uuid,
    /// One entry per partition, indexed by partition number.
    pub partitions: Vec<PartitionAssignment>,
    /// Configs set at creation.
    pub configs: TopicConfigs,
}

impl TopicSpec {
    /// Number of partitions.
    pub fn partition_count(&self) -> i32 {
        i32::try_from(self.partitions.len()).unwrap_or(i32::MAX)
    }

    /// The assignment of `partition`, if it exists.
    pub fn partition(&self, partition: i32) -> Option<&PartitionAssignment> {
        usize::try_from(partition)
            .ok()
            .and_then(|p| self.partitions.get(p))
    }
}
