//! The committed-offset index: compact enough for millions of (group, topic, partition) keys.
//!
//! ```text
//!   CoordinatorState.groups: BTreeMap<GroupId, GroupEntry>      one entry per group
//!        GroupEntry.offsets: GroupOffsets                       this group's offsets only
//!             BTreeMap<(TopicIdx, partition), OffsetEntry>      40 bytes a key + B-tree slack
//!   TopicInterner: TopicIdx <-> name, reference-counted         one copy of each topic name
//! ```
//!
//! A group's offsets live with the group, so fetching them is O(that group's size). Topic
//! names are interned (one `Arc<str>` per distinct topic, freed when no offset uses it) and
//! the rare parts of a value (non-empty metadata, a legacy expire timestamp) sit behind one
//! optional box, keeping the common entry at 32 bytes. `examples/index_memory.rs` measures
//! the resulting bytes per key.

use crate::ids::{LeaderEpoch, Offset, PartitionIndex, TimestampMs, TopicName};
use std::collections::BTreeMap;
use std::sync::Arc;

/// An interned topic name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicIdx(u32);

/// Reference-counted topic names; indexes are reused once a name is no longer referenced.
#[derive(Clone, Debug, Default)]
pub struct TopicInterner {
    by_name: BTreeMap<Arc<str>, TopicIdx>,
    /// Slot per index: the name and how many offset entries use it.
    slots: Vec<Option<(Arc<str>, u64)>>,
    free: Vec<u32>,
}

impl TopicInterner {
    pub fn lookup(&self, name: &str) -> Option<TopicIdx> {
        self.by_name.get(name).copied()
    }

    pub fn name(&self, idx: TopicIdx) -> &str {
        match self.slots.get(idx.0 as usize) {
            Some(Some((name, _))) => name,
            // Unreachable while the index holds only live indexes; an empty name is a
            // harmless answer that never panics.
            _ => "",
        }
    }

    /// Takes one reference on `name`, interning it if new.
    fn acquire(&mut self, name: &str) -> TopicIdx {
        if let Some(idx) = self.by_name.get(name).copied() {
            if let Some(Some((_, refs))) = self.slots.get_mut(idx.0 as usize) {
                *refs += 1;
            }
            return idx;
        }
        let name: Arc<str> = Arc::from(name);
        let idx = match self.free.pop() {
            Some(slot) => {
                if let Some(s) = self.slots.get_mut(slot as usize) {
                    *s = Some((name.clone(), 1));
                }
                TopicIdx(slot)
            }
            None => {
                let slot = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
                self.slots.push(Some((name.clone(), 1)));
                TopicIdx(slot)
            }
        };
        self.by_name.insert(name, idx);
        idx
    }

    /// Drops one reference; the name is forgotten with its last reference.
    fn release(&mut self, idx: TopicIdx) {
        let Some(slot) = self.slots.get_mut(idx.0 as usize) else {
            return;
        };
        let forget = match slot {
            Some((_, refs)) => {
                *refs = refs.saturating_sub(1);
                *refs == 0
            }
            None => false,
        };
        if forget {
            if let Some((name, _)) = slot.take() {
                self.by_name.remove(&name);
                self.free.push(idx.0);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// A committed offset as stored and replicated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetCommitValue {
    pub offset: Offset,
    pub leader_epoch: LeaderEpoch,
    pub metadata: String,
    pub commit_timestamp: TimestampMs,
    /// Set only by OffsetCommit v2–v4 with an explicit retention time (legacy semantics:
    /// expires at this instant whatever the group does).
    pub expire_timestamp: Option<TimestampMs>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Extra {
    metadata: Box<str>,
    expire_timestamp: Option<i64>,
}

/// 32 bytes; the rare fields are boxed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OffsetEntry {
    offset: i64,
    commit_timestamp: i64,
    leader_epoch: i32,
    extra: Option<Box<Extra>>,
}

impl OffsetEntry {
    fn from_value(value: &OffsetCommitValue) -> OffsetEntry {
        let extra = if value.metadata.is_empty() && value.expire_timestamp.is_none() {
            None
        } else {
            Some(Box::new(Extra {
                metadata: value.metadata.as_str().into(),
                expire_timestamp: value.expire_timestamp.map(|t| t.0),
            }))
        };
        OffsetEntry {
            offset: value.offset.0,
            commit_timestamp: value.commit_timestamp.0,
            leader_epoch: value.leader_epoch.0,
            extra,
        }
    }

    fn to_value(&self) -> OffsetCommitValue {
        OffsetCommitValue {
            offset: Offset(self.offset),
            leader_epoch: LeaderEpoch(self.leader_epoch),
            metadata: self
                .extra
                .as_ref()
                .map(|e| e.metadata.to_string())
                .unwrap_or_default(),
            commit_timestamp: TimestampMs(self.commit_timestamp),
            expire_timestamp: self
                .extra
                .as_ref()
                .and_then(|e| e.expire_timestamp.map(TimestampMs)),
        }
    }
}

/// One group's committed offsets.
#[derive(Clone, Debug, Default)]
pub struct GroupOffsets {
    entries: BTreeMap<(TopicIdx, i32), OffsetEntry>,
}

impl GroupOffsets {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(
        &self,
        topics: &TopicInterner,
        topic: &str,
        partition: PartitionIndex,
    ) -> Option<OffsetCommitValue> {
        let idx = topics.lookup(topic)?;
        self.entries
            .get(&(idx, partition.0))
            .map(OffsetEntry::to_value)
    }

    pub fn contains(&self, topics: &TopicInterner, topic: &str, partition: PartitionIndex) -> bool {
        topics
            .lookup(topic)
            .is_some_and(|idx| self.entries.contains_key(&(idx, partition.0)))
    }

    pub fn put(
        &mut self,
        topics: &mut TopicInterner,
        topic: &str,
        partition: PartitionIndex,
        value: &OffsetCommitValue,
    ) {
        let entry = OffsetEntry::from_value(value);
        if let Some(idx) = topics.lookup(topic) {
            if let Some(existing) = self.entries.get_mut(&(idx, partition.0)) {
                *existing = entry;
                return;
            }
        }
        let idx = topics.acquire(topic);
        self.entries.insert((idx, partition.0), entry);
    }

    pub fn remove(&mut self, topics: &mut TopicInterner, topic: &str, partition: PartitionIndex) {
        let Some(idx) = topics.lookup(topic) else {
            return;
        };
        if self.entries.remove(&(idx, partition.0)).is_some() {
            topics.release(idx);
        }
    }

    /// Releases every topic reference before the group's offsets are dropped.
    pub fn clear(&mut self, topics: &mut TopicInterner) {
        for (idx, _) in std::mem::take(&mut self.entries).into_keys() {
            topics.release(idx);
        }
    }

    /// Every (topic, partition, value), topics grouped together: O(this group's size).
    pub fn iter<'a>(
        &'a self,
        topics: &'a TopicInterner,
    ) -> impl Iterator<Item = (&'a str, PartitionIndex, OffsetCommitValue)> + 'a {
        self.entries
            .iter()
            .map(move |((idx, p), e)| (topics.name(*idx), PartitionIndex(*p), e.to_value()))
    }

    /// The committed partitions of one topic.
    pub fn topic_iter<'a>(
        &'a self,
        topics: &TopicInterner,
        topic: &str,
    ) -> impl Iterator<Item = (PartitionIndex, OffsetCommitValue)> + 'a {
        let range = topics
            .lookup(topic)
            .map(|idx| self.entries.range((idx, i32::MIN)..=(idx, i32::MAX)));
        range
            .into_iter()
            .flatten()
            .map(|((_, p), e)| (PartitionIndex(*p), e.to_value()))
    }

    /// The distinct topics this group has offsets for.
    pub fn topic_names<'a>(&'a self, topics: &'a TopicInterner) -> Vec<TopicName> {
        let mut out: Vec<TopicName> = Vec::new();
        let mut last: Option<TopicIdx> = None;
        for (idx, _) in self.entries.keys() {
            if last != Some(*idx) {
                out.push(TopicName::from(topics.name(*idx)));
                last = Some(*idx);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(offset: i64) -> OffsetCommitValue {
        OffsetCommitValue {
            offset: Offset(offset),
            leader_epoch: LeaderEpoch::NONE,
            metadata: String::new(),
            commit_timestamp: TimestampMs(1),
            expire_timestamp: None,
        }
    }

    #[test]
    fn the_common_entry_is_32_bytes() {
        assert_eq!(std::mem::size_of::<OffsetEntry>(), 32);
    }

    #[test]
    fn topic_names_are_freed_with_their_last_offset() {
        let mut topics = TopicInterner::default();
        let mut a = GroupOffsets::default();
        let mut b = GroupOffsets::default();
        a.put(&mut topics, "t", PartitionIndex(0), &value(1));
        a.put(&mut topics, "t", PartitionIndex(0), &value(2));
        b.put(&mut topics, "t", PartitionIndex(1), &value(3));
        assert_eq!(topics.len(), 1);
        a.remove(&mut topics, "t", PartitionIndex(0));
        assert_eq!(topics.len(), 1);
        b.clear(&mut topics);
        assert!(topics.is_empty());
        b.put(&mut topics, "u", PartitionIndex(0), &value(4));
        assert_eq!(b.get(&topics, "u", PartitionIndex(0)), Some(value(4)));
        assert_eq!(b.get(&topics, "t", PartitionIndex(1)), None);
    }
}
