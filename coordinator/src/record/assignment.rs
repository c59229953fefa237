//! A set of partitions named by topic id: what a consumer-protocol member is assigned, owns,
//! is asked to revoke, or is targeted to own. Kept as one sorted, duplicate-free vector per
//! topic (no empty topic), so that equal sets are equal values and the codec has one
//! encoding per set.

use crate::ids::{PartitionIndex, TopicId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Assignment {
    topics: BTreeMap<TopicId, Vec<PartitionIndex>>,
}

impl Assignment {
    /// The empty set, for statics.
    pub const EMPTY: Assignment = Assignment {
        topics: BTreeMap::new(),
    };

    pub fn new() -> Assignment {
        Assignment::default()
    }

    /// Builds a set from any (topic, partition) pairs, duplicates allowed.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (TopicId, PartitionIndex)>) -> Assignment {
        let mut topics: BTreeMap<TopicId, Vec<PartitionIndex>> = BTreeMap::new();
        for (topic, partition) in pairs {
            topics.entry(topic).or_default().push(partition);
        }
        for partitions in topics.values_mut() {
            partitions.sort_unstable();
            partitions.dedup();
        }
        Assignment { topics }
    }

    /// One topic's partitions, already sorted and unique (the codec checks it on decode).
    pub(crate) fn from_sorted_topics(
        mut topics: BTreeMap<TopicId, Vec<PartitionIndex>>,
    ) -> Assignment {
        // Rebuilt only when a topic is empty (never, from the assignors).
        if topics.values().any(Vec::is_empty) {
            topics.retain(|_, p| !p.is_empty());
        }
        Assignment { topics }
    }

    pub fn is_empty(&self) -> bool {
        self.topics.is_empty()
    }

    /// Number of partitions.
    pub fn len(&self) -> usize {
        self.topics.values().map(Vec::len).sum()
    }

    pub fn contains(&self, topic: TopicId, partition: PartitionIndex) -> bool {
        self.topics
            .get(&topic)
            .is_some_and(|p| p.binary_search(&partition).is_ok())
    }

    pub fn has_topic(&self, topic: TopicId) -> bool {
        self.topics.contains_key(&topic)
    }

    /// Adds one partition; `false` if it was there already.
    pub fn insert(&mut self, topic: TopicId, partition: PartitionIndex) -> bool {
        let partitions = self.topics.entry(topic).or_default();
        match partitions.binary_search(&partition) {
            Ok(_) => false,
            Err(at) => {
                partitions.insert(at, partition);
                true
            }
        }
    }

    /// Each topic with its sorted partitions, in topic id order.
    pub fn topics(&self) -> impl Iterator<Item = (TopicId, &[PartitionIndex])> + '_ {
        self.topics.iter().map(|(t, p)| (*t, p.as_slice()))
    }

    /// Every (topic, partition), in order.
    pub fn iter(&self) -> impl Iterator<Item = (TopicId, PartitionIndex)> + '_ {
        self.topics
            .iter()
            .flat_map(|(t, p)| p.iter().map(move |p| (*t, *p)))
    }

    /// The partitions of `self` for which `keep` holds.
    pub fn filter(&self, mut keep: impl FnMut(TopicId, PartitionIndex) -> bool) -> Assignment {
        let topics = self
            .topics
            .iter()
            .filter_map(|(t, p)| {
                let kept: Vec<PartitionIndex> =
                    p.iter().copied().filter(|p| keep(*t, *p)).collect();
                (!kept.is_empty()).then_some((*t, kept))
            })
            .collect();
        Assignment { topics }
    }

    /// `self ∩ other`.
    pub fn intersection(&self, other: &Assignment) -> Assignment {
        self.filter(|t, p| other.contains(t, p))
    }

    /// `self − other`.
    pub fn difference(&self, other: &Assignment) -> Assignment {
        self.filter(|t, p| !other.contains(t, p))
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &Assignment) -> Assignment {
        Assignment::from_pairs(self.iter().chain(other.iter()))
    }

    /// Whether some partition of `self` is in `other`.
    pub fn intersects(&self, other: &Assignment) -> bool {
        self.iter().any(|(t, p)| other.contains(t, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(pairs: &[(u128, i32)]) -> Assignment {
        Assignment::from_pairs(pairs.iter().map(|(t, p)| (TopicId(*t), PartitionIndex(*p))))
    }

    #[test]
    fn set_operations_keep_one_form_per_set() {
        let x = a(&[(1, 2), (1, 0), (2, 5), (1, 2)]);
        assert_eq!(x.len(), 3);
        assert_eq!(x, a(&[(1, 0), (1, 2), (2, 5)]));
        let y = a(&[(1, 2), (3, 1)]);
        assert_eq!(x.intersection(&y), a(&[(1, 2)]));
        assert_eq!(x.difference(&y), a(&[(1, 0), (2, 5)]));
        assert_eq!(x.union(&y).len(), 4);
        assert!(x.intersects(&y));
        assert!(x.difference(&x).is_empty());
        assert_eq!(x.difference(&x), Assignment::new());
    }
}
