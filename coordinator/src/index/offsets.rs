//! The committed-offset index: compact enough for millions of (group, topic, partition) keys.
//!
//! ```text
//!   CoordinatorState.groups: GroupTable                         one slot per group
//!        GroupEntry.offsets: GroupOffsets                       this group's offsets only
//!             One: a lone offset, inline                        40 bytes, no allocation
//!             Small: sorted Vec<(TopicIdx, partition), entry>   40 bytes a key, exact size
//!             Large: BTreeMap<(TopicIdx, partition), entry>     40 bytes a key + B-tree slack
//!   TopicInterner: TopicIdx <-> name, reference-counted         one copy of each topic name
//! ```
//!
//! A group's offsets live with the group, so fetching them is O(that group's size). Topic
//! names are interned (one `Arc<str>` per distinct topic, freed when no offset uses it) and
//! the rare parts of a value (non-empty metadata, a legacy expire timestamp) sit behind one
//! optional box, keeping the common entry at 32 bytes. Many groups hold a single offset (one
//! group per service instance), so that offset sits in the group's slot itself rather than
//! in an allocation of its own. `examples/index_memory.rs` measures the resulting bytes per
//! key.

use crate::ids::{LeaderEpoch, Offset, PartitionIndex, TimestampMs, TopicName};
use crate::record::offset_commit::OffsetCommitValue;
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

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Extra {
    metadata: Box<str>,
    expire_timestamp: Option<i64>,
}

/// Fills a byte of `OffsetEntry`'s padding with a field that has spare bit patterns, where
/// `Entries` can keep its variant tag: `Entries::One` then stays 40 bytes instead of 48.
/// (`repr(u8)` gives it a byte: a plain one-variant enum would take none.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum TagRoom {
    Unused = 0,
}

/// 32 bytes; the rare fields are boxed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OffsetEntry {
    offset: i64,
    commit_timestamp: i64,
    leader_epoch: i32,
    tag_room: TagRoom,
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
            tag_room: TagRoom::Unused,
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

/// Groups with at most this many offsets keep them in an exactly-sized sorted vector: a
/// B-tree leaf allocates room for 11 entries, which would dominate small groups.
const SMALL_GROUP_MAX: usize = 32;

type Key = (TopicIdx, i32);

/// The entries of one group, sorted by (topic, partition) in every representation.
#[derive(Clone, Debug)]
enum Entries {
    /// Exactly one offset, the most common small group, held without an allocation.
    One(Key, OffsetEntry),
    /// None, or two up to `SMALL_GROUP_MAX`.
    Small(Vec<(Key, OffsetEntry)>),
    Large(BTreeMap<Key, OffsetEntry>),
}

impl Default for Entries {
    fn default() -> Self {
        Entries::Small(Vec::new())
    }
}

/// One group's committed offsets.
#[derive(Clone, Debug, Default)]
pub struct GroupOffsets {
    entries: Entries,
}

impl GroupOffsets {
    pub fn len(&self) -> usize {
        match &self.entries {
            Entries::One(..) => 1,
            Entries::Small(v) => v.len(),
            Entries::Large(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn entry(&self, key: &Key) -> Option<&OffsetEntry> {
        match &self.entries {
            Entries::One(k, e) => (k == key).then_some(e),
            Entries::Small(v) => v
                .binary_search_by(|(k, _)| k.cmp(key))
                .ok()
                .and_then(|i| v.get(i))
                .map(|(_, e)| e),
            Entries::Large(m) => m.get(key),
        }
    }

    pub fn get(
        &self,
        topics: &TopicInterner,
        topic: &str,
        partition: PartitionIndex,
    ) -> Option<OffsetCommitValue> {
        let idx = topics.lookup(topic)?;
        self.entry(&(idx, partition.0)).map(OffsetEntry::to_value)
    }

    pub fn contains(&self, topics: &TopicInterner, topic: &str, partition: PartitionIndex) -> bool {
        topics
            .lookup(topic)
            .is_some_and(|idx| self.entry(&(idx, partition.0)).is_some())
    }

    /// Replaces the entry under `key`; gives the entry back when there is none.
    fn replace(&mut self, key: &Key, entry: OffsetEntry) -> Result<(), OffsetEntry> {
        let slot = match &mut self.entries {
            Entries::One(k, e) => (k == key).then_some(e),
            Entries::Small(v) => match v.binary_search_by(|(k, _)| k.cmp(key)) {
                Ok(i) => v.get_mut(i).map(|(_, e)| e),
                Err(_) => None,
            },
            Entries::Large(m) => m.get_mut(key),
        };
        match slot {
            Some(existing) => {
                *existing = entry;
                Ok(())
            }
            None => Err(entry),
        }
    }

    fn insert_new(&mut self, key: Key, entry: OffsetEntry) {
        match &mut self.entries {
            Entries::Small(v) if v.is_empty() => self.entries = Entries::One(key, entry),
            Entries::Small(v) if v.len() < SMALL_GROUP_MAX => {
                let at = v.partition_point(|(k, _)| *k < key);
                v.reserve_exact(1);
                v.insert(at, (key, entry));
            }
            Entries::Small(v) => {
                let mut map: BTreeMap<Key, OffsetEntry> = std::mem::take(v).into_iter().collect();
                map.insert(key, entry);
                self.entries = Entries::Large(map);
            }
            Entries::Large(m) => {
                m.insert(key, entry);
            }
            Entries::One(..) => {
                let Entries::One(k, e) = std::mem::take(&mut self.entries) else {
                    return;
                };
                let mut pair = Vec::with_capacity(2);
                if k < key {
                    pair.extend([(k, e), (key, entry)]);
                } else {
                    pair.extend([(key, entry), (k, e)]);
                }
                self.entries = Entries::Small(pair);
            }
        }
    }

    pub fn put(
        &mut self,
        topics: &mut TopicInterner,
        topic: &str,
        partition: PartitionIndex,
        value: &OffsetCommitValue,
    ) {
        let mut entry = OffsetEntry::from_value(value);
        if let Some(idx) = topics.lookup(topic) {
            match self.replace(&(idx, partition.0), entry) {
                Ok(()) => return,
                Err(back) => entry = back,
            }
        }
        let idx = topics.acquire(topic);
        self.insert_new((idx, partition.0), entry);
    }

    pub fn remove(&mut self, topics: &mut TopicInterner, topic: &str, partition: PartitionIndex) {
        let Some(idx) = topics.lookup(topic) else {
            return;
        };
        let key = (idx, partition.0);
        let removed = match &mut self.entries {
            Entries::One(k, _) => {
                let removed = *k == key;
                if removed {
                    self.entries = Entries::default();
                }
                removed
            }
            Entries::Small(v) => match v.binary_search_by(|(k, _)| k.cmp(&key)) {
                Ok(i) => {
                    v.remove(i);
                    if v.len() == 1 {
                        if let Some((k, e)) = v.pop() {
                            self.entries = Entries::One(k, e);
                        }
                    } else {
                        v.shrink_to_fit();
                    }
                    true
                }
                Err(_) => false,
            },
            Entries::Large(m) => {
                let removed = m.remove(&key).is_some();
                if m.len() <= SMALL_GROUP_MAX / 2 {
                    let small: Vec<(Key, OffsetEntry)> = std::mem::take(m).into_iter().collect();
                    self.entries = Entries::Small(small);
                }
                removed
            }
        };
        if removed {
            topics.release(idx);
        }
    }

    /// Releases every topic reference before the group's offsets are dropped.
    #[cfg(test)]
    pub fn clear(&mut self, topics: &mut TopicInterner) {
        let keys: Vec<Key> = self.all().map(|(k, _)| *k).collect();
        for (idx, _) in keys {
            topics.release(idx);
        }
        self.entries = Entries::default();
    }

    /// The entries sorted by key, whatever the representation; in place, no allocation.
    fn all(&self) -> AllEntries<'_> {
        match &self.entries {
            Entries::One(k, e) => AllEntries::One(Some((k, e))),
            Entries::Small(v) => AllEntries::Small(v.iter()),
            Entries::Large(m) => AllEntries::Large(m.range(..)),
        }
    }

    fn range(&self, idx: TopicIdx) -> impl Iterator<Item = (&Key, &OffsetEntry)> + '_ {
        self.span(idx, i32::MIN, i32::MAX)
    }

    /// The entries of topic `idx` with partitions `from..=to`, in partition order.
    fn span(
        &self,
        idx: TopicIdx,
        from: i32,
        to: i32,
    ) -> impl Iterator<Item = (&Key, &OffsetEntry)> + '_ {
        let first = (idx, from);
        let range = match &self.entries {
            Entries::Small(v) => {
                let start = v.partition_point(|(k, _)| *k < first);
                AllEntries::Small(v.get(start..).unwrap_or_default().iter())
            }
            Entries::Large(m) => AllEntries::Large(m.range(first..=(idx, to))),
            Entries::One(..) => self.all(),
        };
        range
            .skip_while(move |(k, _)| **k < first)
            .take_while(move |((t, p), _)| *t == idx && *p <= to)
    }

    /// The committed values of `partitions` of `topic`, in the order asked. Partitions asked
    /// in ascending order and about as many as they span (a consumer's usual fetch) are read
    /// in one walk of the topic's entries; any others are looked up one by one.
    pub fn values_of(
        &self,
        topics: &TopicInterner,
        topic: &str,
        partitions: &[PartitionIndex],
        mut each: impl FnMut(PartitionIndex, Option<OffsetCommitValue>),
    ) {
        let Some(idx) = topics.lookup(topic) else {
            partitions.iter().for_each(|&p| each(p, None));
            return;
        };
        let ascending = partitions.windows(2).all(|w| w[0].0 < w[1].0);
        let (first, last) = match (partitions.first(), partitions.last()) {
            (Some(f), Some(l)) => (f.0, l.0),
            _ => return,
        };
        let spanned = i64::from(last) - i64::from(first) + 1;
        if !ascending || spanned > 2 * partitions.len() as i64 {
            for &p in partitions {
                each(p, self.entry(&(idx, p.0)).map(OffsetEntry::to_value));
            }
            return;
        }
        let mut entries = self.span(idx, first, last).peekable();
        for &p in partitions {
            while entries.next_if(|((_, q), _)| *q < p.0).is_some() {}
            let found = entries.next_if(|((_, q), _)| *q == p.0);
            each(p, found.map(|(_, e)| e.to_value()));
        }
    }

    /// Every (topic, partition, value), topics grouped together: O(this group's size).
    pub fn iter<'a>(
        &'a self,
        topics: &'a TopicInterner,
    ) -> impl Iterator<Item = (&'a str, PartitionIndex, OffsetCommitValue)> + 'a {
        self.all()
            .map(move |((idx, p), e)| (topics.name(*idx), PartitionIndex(*p), e.to_value()))
    }

    /// The committed partitions of one topic.
    pub fn topic_iter<'a>(
        &'a self,
        topics: &TopicInterner,
        topic: &str,
    ) -> impl Iterator<Item = (PartitionIndex, OffsetCommitValue)> + 'a {
        topics
            .lookup(topic)
            .map(|idx| self.range(idx))
            .into_iter()
            .flatten()
            .map(|((_, p), e)| (PartitionIndex(*p), e.to_value()))
    }

    /// The distinct topics this group has offsets for.
    pub fn topic_names(&self, topics: &TopicInterner) -> Vec<TopicName> {
        let mut out: Vec<TopicName> = Vec::new();
        let mut last: Option<TopicIdx> = None;
        for ((idx, _), _) in self.all() {
            if last != Some(*idx) {
                out.push(TopicName::from(topics.name(*idx)));
                last = Some(*idx);
            }
        }
        out
    }
}

/// Iterates any representation of `Entries` in key order without boxing.
enum AllEntries<'a> {
    One(Option<(&'a Key, &'a OffsetEntry)>),
    Small(std::slice::Iter<'a, (Key, OffsetEntry)>),
    Large(std::collections::btree_map::Range<'a, Key, OffsetEntry>),
}

impl<'a> Iterator for AllEntries<'a> {
    type Item = (&'a Key, &'a OffsetEntry);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            AllEntries::One(one) => one.take(),
            AllEntries::Small(it) => it.next().map(|(k, e)| (k, e)),
            AllEntries::Large(it) => it.next(),
        }
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
    fn the_common_entry_is_32_bytes_and_a_lone_one_needs_no_more_than_its_key() {
        assert_eq!(std::mem::size_of::<OffsetEntry>(), 32);
        assert_eq!(std::mem::size_of::<GroupOffsets>(), 40);
    }

    /// `values_of` answers as `get` does, partition by partition, whichever way it reads.
    #[test]
    fn values_of_answers_each_partition_as_get_does() {
        let asks: Vec<Vec<i32>> = vec![
            vec![],
            vec![3],
            (0..10).collect(),
            vec![0, 2, 4, 6, 8, 40],
            vec![1, 2, 3, 90, 91, 92],
            vec![5, 1, 3],
            vec![2, 2, 7],
            vec![-1, 0, 1],
            vec![0, 1_000_000],
            vec![i32::MIN, i32::MAX],
            (30..70).collect(),
        ];
        // One entry, a few (Small), many (Large); a second topic on both sides of the first.
        for partitions in [
            vec![4],
            vec![0, 2, 3, 7, 9],
            (0..60).step_by(2).collect(),
            (0..90).collect(),
        ] {
            let mut topics = TopicInterner::default();
            let mut offsets = GroupOffsets::default();
            offsets.put(&mut topics, "before", PartitionIndex(5), &value(-5));
            for &p in &partitions {
                offsets.put(
                    &mut topics,
                    "t",
                    PartitionIndex(p),
                    &value(i64::from(p) + 100),
                );
            }
            offsets.put(&mut topics, "after", PartitionIndex(0), &value(-7));
            if partitions.len() == 1 {
                offsets.remove(&mut topics, "before", PartitionIndex(5));
                offsets.remove(&mut topics, "after", PartitionIndex(0));
                assert!(matches!(offsets.entries, Entries::One(..)));
            }
            for topic in ["t", "before", "after", "missing"] {
                for ask in &asks {
                    let ask: Vec<PartitionIndex> =
                        ask.iter().copied().map(PartitionIndex).collect();
                    let mut seen = Vec::new();
                    offsets.values_of(&topics, topic, &ask, |p, v| seen.push((p, v)));
                    let expected: Vec<_> = ask
                        .iter()
                        .map(|&p| (p, offsets.get(&topics, topic, p)))
                        .collect();
                    assert_eq!(seen, expected, "{topic} {ask:?} of {partitions:?}");
                }
            }
        }
    }

    #[test]
    fn a_lone_offset_becomes_a_pair_and_back_in_key_order() {
        let mut topics = TopicInterner::default();
        let mut offsets = GroupOffsets::default();
        offsets.put(&mut topics, "b", PartitionIndex(1), &value(1));
        assert!(matches!(offsets.entries, Entries::One(..)));
        offsets.put(&mut topics, "b", PartitionIndex(1), &value(2));
        assert!(matches!(offsets.entries, Entries::One(..)));
        offsets.put(&mut topics, "a", PartitionIndex(0), &value(3));
        assert!(matches!(offsets.entries, Entries::Small(_)));
        let seen: Vec<(String, i32, i64)> = offsets
            .iter(&topics)
            .map(|(t, p, v)| (t.to_owned(), p.0, v.offset.0))
            .collect();
        // Topic indexes follow interning order: "b" was interned first.
        assert_eq!(seen, vec![("b".into(), 1, 2), ("a".into(), 0, 3)]);
        assert_eq!(offsets.topic_iter(&topics, "a").count(), 1);
        assert_eq!(offsets.topic_iter(&topics, "b").count(), 1);
        assert_eq!(offsets.topic_iter(&topics, "c").count(), 0);
        offsets.remove(&mut topics, "b", PartitionIndex(1));
        assert!(matches!(offsets.entries, Entries::One(..)));
        assert_eq!(offsets.get(&topics, "a", PartitionIndex(0)), Some(value(3)));
        assert_eq!(offsets.get(&topics, "b", PartitionIndex(1)), None);
        offsets.remove(&mut topics, "a", PartitionIndex(1));
        assert_eq!(offsets.len(), 1);
        offsets.remove(&mut topics, "a", PartitionIndex(0));
        assert!(offsets.is_empty());
        assert!(topics.is_empty());
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

    #[test]
    fn small_and_large_groups_behave_alike_through_growth_and_shrinking() {
        let mut topics = TopicInterner::default();
        let mut offsets = GroupOffsets::default();
        let mut model = std::collections::BTreeMap::new();
        // Insert out of order past the small-group limit, then remove back below it.
        for i in (0..100i64).rev() {
            let topic = if i % 3 == 0 { "a" } else { "b" };
            let p = PartitionIndex(i32::try_from(i).unwrap());
            offsets.put(&mut topics, topic, p, &value(i));
            model.insert((topic.to_owned(), p), i);
            if i % 7 == 0 {
                offsets.put(&mut topics, topic, p, &value(i + 1000));
                model.insert((topic.to_owned(), p), i + 1000);
            }
        }
        let check =
            |offsets: &GroupOffsets,
             topics: &TopicInterner,
             model: &std::collections::BTreeMap<(String, PartitionIndex), i64>| {
                assert_eq!(offsets.len(), model.len());
                let mut seen: Vec<((String, PartitionIndex), i64)> = offsets
                    .iter(topics)
                    .map(|(t, p, v)| ((t.to_owned(), p), v.offset.0))
                    .collect();
                seen.sort();
                let expected: Vec<_> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
                assert_eq!(seen, expected);
                for t in ["a", "b"] {
                    let n = offsets.topic_iter(topics, t).count();
                    assert_eq!(n, model.keys().filter(|(mt, _)| mt == t).count());
                }
            };
        check(&offsets, &topics, &model);
        for i in 0..90i64 {
            let topic = if i % 3 == 0 { "a" } else { "b" };
            let p = PartitionIndex(i32::try_from(i).unwrap());
            offsets.remove(&mut topics, topic, p);
            model.remove(&(topic.to_owned(), p));
            check(&offsets, &topics, &model);
        }
        offsets.clear(&mut topics);
        assert!(topics.is_empty());
    }
}
