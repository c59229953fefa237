//! Replicated topic metadata: names, ids, partition placement and configs, plus the cluster's
//! identity and the producer-id high-water mark.
//!
//! The binary validates a new topic against Kafka's rules and picks its id and placement
//! before it submits the command; `apply` only checks what depends on the replicated state
//! (the name is free, the limits hold), so every replica reaches the same answer.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One topic as every node knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicMeta {
    pub name: String,
    /// Kafka's topic id (a UUID's 128 bits).
    pub id: u128,
    /// Replicas of each partition, indexed by partition number; the first replica leads.
    pub partitions: Vec<Vec<i32>>,
    /// Configs set at creation (name → value); defaults are the binary's business.
    pub configs: BTreeMap<String, String>,
}

impl TopicMeta {
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }

    /// Whether `partition` exists in this topic.
    pub fn has_partition(&self, partition: i32) -> bool {
        usize::try_from(partition).is_ok_and(|p| p < self.partitions.len())
    }
}

/// Bounds on what the topic table may hold. Every replica must use the same values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicLimits {
    pub topics_max: usize,
    pub partitions_per_topic_max: usize,
    pub partitions_total_max: usize,
}

impl Default for TopicLimits {
    fn default() -> Self {
        Self {
            topics_max: 10_000,
            partitions_per_topic_max: 10_000,
            partitions_total_max: 50_000,
        }
    }
}

/// Why a topic change was refused by the replicated state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum TopicChangeError {
    #[error("Topic '{0}' already exists.")]
    Exists(String),
    #[error("Topic '{0}' does not exist.")]
    Unknown(String),
    #[error("{0}")]
    LimitReached(String),
    #[error("{0}")]
    Invalid(String),
    /// The topic changed since the change was computed from it (another alteration came
    /// first): nothing changed; the writer recomputes and retries.
    #[error("{0}")]
    Conflict(String),
}

/// A topic's configs replaced as a whole (IncrementalAlterConfigs, AlterConfigs), if the topic
/// of this id still holds `expected`: the binary computed and validated `configs` from it, so
/// a concurrent alteration applied first is never overwritten (compare-and-set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicConfigChange {
    pub name: String,
    pub id: u128,
    pub expected: BTreeMap<String, String>,
    pub configs: BTreeMap<String, String>,
}

/// Partitions added to a topic (CreatePartitions), placed by the binary, if the topic of this
/// id still has `expected_count` partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionsAdded {
    pub name: String,
    pub id: u128,
    pub expected_count: u32,
    /// Replicas of each new partition, numbered from `expected_count`.
    pub added: Vec<Vec<i32>>,
}

/// The cluster's identity and counters, one record in snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterMeta {
    /// Set once by the first leader; `None` until then.
    pub cluster_id: Option<String>,
    /// Producer ids below this have been handed out.
    pub next_producer_id: i64,
}

/// The replicated topic table.
#[derive(Debug, Clone, Default)]
pub struct TopicTable {
    limits: TopicLimits,
    topics: BTreeMap<String, Arc<TopicMeta>>,
    total_partitions: usize,
    /// Bumped by every change, so readers can cache what they derive from the table.
    version: u64,
}

impl TopicTable {
    pub fn new(limits: TopicLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<TopicMeta>> {
        self.topics.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<TopicMeta>> {
        self.topics.values()
    }

    pub fn len(&self) -> usize {
        self.topics.len()
    }

    pub fn is_empty(&self) -> bool {
        self.topics.is_empty()
    }

    /// Changes with every create, delete or restore.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Adds `topic` if its name is free and the limits allow it.
    pub fn create(&mut self, topic: TopicMeta) -> Result<Arc<TopicMeta>, TopicChangeError> {
        if self.topics.contains_key(&topic.name) {
            return Err(TopicChangeError::Exists(topic.name));
        }
        if topic.partitions.is_empty() || topic.partitions.iter().any(Vec::is_empty) {
            return Err(TopicChangeError::Invalid(format!(
                "topic '{}' needs at least one partition and one replica per partition",
                topic.name
            )));
        }
        if topic.partitions.len() > self.limits.partitions_per_topic_max {
            return Err(TopicChangeError::LimitReached(format!(
                "Number of partitions {} is more than the maximum of {} per topic.",
                topic.partitions.len(),
                self.limits.partitions_per_topic_max
            )));
        }
        if self.topics.len() >= self.limits.topics_max {
            return Err(TopicChangeError::LimitReached(format!(
                "The cluster already holds the maximum of {} topics.",
                self.limits.topics_max
            )));
        }
        if self.total_partitions + topic.partitions.len() > self.limits.partitions_total_max {
            return Err(TopicChangeError::LimitReached(format!(
                "Creating {} partitions would exceed the cluster's maximum of {} partitions.",
                topic.partitions.len(),
                self.limits.partitions_total_max
            )));
        }
        self.total_partitions += topic.partitions.len();
        self.version += 1;
        let topic = Arc::new(topic);
        self.topics.insert(topic.name.clone(), topic.clone());
        Ok(topic)
    }

    /// Removes `name`, returning what it was.
    pub fn delete(&mut self, name: &str) -> Result<Arc<TopicMeta>, TopicChangeError> {
        let removed = self
            .topics
            .remove(name)
            .ok_or_else(|| TopicChangeError::Unknown(name.to_owned()))?;
        self.total_partitions -= removed.partitions.len();
        self.version += 1;
        Ok(removed)
    }

    /// The topic `name` if it is still the incarnation `id`.
    fn incarnation(&self, name: &str, id: u128) -> Result<&Arc<TopicMeta>, TopicChangeError> {
        match self.topics.get(name) {
            Some(t) if t.id == id => Ok(t),
            _ => Err(TopicChangeError::Unknown(name.to_owned())),
        }
    }

    /// Replaces a topic's configs (see [`TopicConfigChange`]).
    pub fn alter_configs(
        &mut self,
        change: TopicConfigChange,
    ) -> Result<Arc<TopicMeta>, TopicChangeError> {
        let current = self.incarnation(&change.name, change.id)?;
        if current.configs != change.expected {
            return Err(TopicChangeError::Conflict(format!(
                "the configs of topic '{}' changed meanwhile",
                change.name
            )));
        }
        let mut next = (**current).clone();
        next.configs = change.configs;
        let next = Arc::new(next);
        self.topics.insert(change.name, next.clone());
        self.version += 1;
        Ok(next)
    }

    /// Adds partitions to a topic (see [`PartitionsAdded`]), within the limits.
    pub fn add_partitions(
        &mut self,
        change: PartitionsAdded,
    ) -> Result<Arc<TopicMeta>, TopicChangeError> {
        let current = self.incarnation(&change.name, change.id)?;
        let have = current.partitions.len();
        if u32::try_from(have).ok() != Some(change.expected_count) {
            return Err(TopicChangeError::Conflict(format!(
                "topic '{}' has {have} partitions, not {}",
                change.name, change.expected_count
            )));
        }
        if change.added.is_empty() || change.added.iter().any(Vec::is_empty) {
            return Err(TopicChangeError::Invalid(format!(
                "partitions added to topic '{}' need one replica each",
                change.name
            )));
        }
        let total = have + change.added.len();
        if total > self.limits.partitions_per_topic_max {
            return Err(TopicChangeError::LimitReached(format!(
                "Number of partitions {total} is more than the maximum of {} per topic.",
                self.limits.partitions_per_topic_max
            )));
        }
        if self.total_partitions + change.added.len() > self.limits.partitions_total_max {
            return Err(TopicChangeError::LimitReached(format!(
                "Adding {} partitions would exceed the cluster's maximum of {} partitions.",
                change.added.len(),
                self.limits.partitions_total_max
            )));
        }
        let mut next = (**current).clone();
        self.total_partitions += change.added.len();
        next.partitions.extend(change.added);
        let next = Arc::new(next);
        self.topics.insert(change.name, next.clone());
        self.version += 1;
        Ok(next)
    }

    /// Replaces the whole table (snapshot restore). Limits are not re-checked: the snapshot
    /// holds what replicas already accepted.
    pub fn restore(&mut self, topics: Vec<TopicMeta>) {
        self.topics = topics
            .into_iter()
            .map(|t| (t.name.clone(), Arc::new(t)))
            .collect();
        self.total_partitions = self.topics.values().map(|t| t.partitions.len()).sum();
        self.version += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(name: &str, partitions: usize) -> TopicMeta {
        TopicMeta {
            name: name.to_owned(),
            id: 7,
            partitions: vec![vec![1]; partitions],
            configs: BTreeMap::new(),
        }
    }

    #[test]
    fn create_refuses_a_taken_name_and_limits() {
        let mut t = TopicTable::new(TopicLimits {
            topics_max: 2,
            partitions_per_topic_max: 4,
            partitions_total_max: 6,
        });
        assert!(t.create(topic("a", 4)).is_ok());
        assert_eq!(
            t.create(topic("a", 1)),
            Err(TopicChangeError::Exists("a".into()))
        );
        assert!(matches!(
            t.create(topic("b", 5)),
            Err(TopicChangeError::LimitReached(_))
        ));
        assert!(matches!(
            t.create(topic("b", 3)),
            Err(TopicChangeError::LimitReached(_))
        ));
        assert!(t.create(topic("b", 2)).is_ok());
        assert!(matches!(
            t.create(topic("c", 0)),
            Err(TopicChangeError::Invalid(_))
        ));
        assert!(matches!(
            t.create(topic("c", 1)),
            Err(TopicChangeError::LimitReached(_))
        ));
        let v = t.version();
        assert_eq!(t.delete("a").map(|m| m.partition_count()), Ok(4));
        assert!(t.version() > v);
        assert_eq!(t.delete("a"), Err(TopicChangeError::Unknown("a".into())));
        assert!(t.create(topic("c", 4)).is_ok());
    }

    #[test]
    fn config_changes_compare_and_set_on_the_incarnation() {
        let mut t = TopicTable::new(TopicLimits::default());
        t.create(topic("a", 1)).unwrap();
        let set = |expected: &[(&str, &str)], configs: &[(&str, &str)], id| TopicConfigChange {
            name: "a".into(),
            id,
            expected: expected
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            configs: configs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let v = t.version();
        let a = t
            .alter_configs(set(&[], &[("retention.ms", "1")], 7))
            .unwrap();
        assert_eq!(a.configs.get("retention.ms").map(String::as_str), Some("1"));
        assert!(t.version() > v);
        // Computed from the configs before the change above: refused, nothing changed.
        assert!(matches!(
            t.alter_configs(set(&[], &[("segment.ms", "5")], 7)),
            Err(TopicChangeError::Conflict(_))
        ));
        assert_eq!(t.get("a").unwrap().configs.len(), 1);
        // Another incarnation of the name.
        assert_eq!(
            t.alter_configs(set(&[("retention.ms", "1")], &[], 8)),
            Err(TopicChangeError::Unknown("a".into()))
        );
        assert!(t
            .alter_configs(set(&[("retention.ms", "1")], &[], 7))
            .unwrap()
            .configs
            .is_empty());
    }

    #[test]
    fn partitions_are_added_once_within_the_limits() {
        let mut t = TopicTable::new(TopicLimits {
            topics_max: 10,
            partitions_per_topic_max: 4,
            partitions_total_max: 5,
        });
        t.create(topic("a", 2)).unwrap();
        t.create(topic("b", 1)).unwrap();
        let add = |expected_count, n| PartitionsAdded {
            name: "a".into(),
            id: 7,
            expected_count,
            added: vec![vec![1]; n],
        };
        assert_eq!(t.add_partitions(add(2, 1)).unwrap().partition_count(), 3);
        assert!(matches!(
            t.add_partitions(add(2, 1)),
            Err(TopicChangeError::Conflict(_))
        ));
        assert!(matches!(
            t.add_partitions(add(3, 2)),
            Err(TopicChangeError::LimitReached(_))
        ));
        assert!(matches!(
            t.add_partitions(add(3, 0)),
            Err(TopicChangeError::Invalid(_))
        ));
        assert_eq!(t.add_partitions(add(3, 1)).unwrap().partition_count(), 4);
        t.create(topic("c", 1)).unwrap_err();
        assert_eq!(t.delete("a").map(|m| m.partition_count()), Ok(4));
        assert!(t.create(topic("c", 4)).is_ok());
    }
}
