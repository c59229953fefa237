//! The groups of a shard and their offsets, indexed: a packed table of groups in id order
//! (`group_table`), the compact store of group records (`stored_group`) and the
//! committed-offset index (`offsets`). Each concern reads it through `&GroupIndex`; only the
//! state's `replay` writes it, through the four record operations at the bottom.
//!
//! ```text
//!   GroupIndex.table: GroupTable<GroupEntry>     one slot per group, in id order
//!        GroupEntry.group: GroupRef              its GroupMetadata record, if any ──▶ store
//!        GroupEntry.offsets: GroupOffsets        its committed offsets ──names──▶ topics
//! ```

pub(crate) mod group_table;
pub mod offsets;
pub(crate) mod stored_group;
pub(crate) mod topics;
pub(crate) mod transactions;

use crate::ids::MemberId;
use crate::ids::{GroupId, PartitionIndex, TimestampMs, TopicName};
use crate::record::assignment::Assignment;
use crate::record::consumer_group::{
    ConsumerGroup, ConsumerGroupValue, ConsumerMemberValue, CurrentAssignment, TopicValue,
};
use crate::record::group_metadata::{ClassicGroup, GroupState};
use crate::record::offset_commit::OffsetCommitValue;
use crate::record::Record;
use group_table::GroupTable;
use offsets::{GroupOffsets, TopicInterner};
use std::borrow::Cow;
use std::collections::BTreeMap;
use stored_group::{GroupRef, GroupStore};
use topics::TopicImage;

/// One group: its membership state (none for a simple, offset-only group; see
/// `stored_group.rs` for how it is held) and its offsets. An entry exists while either is
/// present.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupEntry {
    pub(crate) group: GroupRef,
    pub(crate) offsets: GroupOffsets,
}

/// Every group of a shard with its record and its offsets.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupIndex {
    pub(crate) table: GroupTable<GroupEntry>,
    /// The group records that are not idle, which `GroupEntry::group` points into.
    pub(crate) store: GroupStore,
    pub(crate) topics: TopicInterner,
    /// The topics as the coordinator knows them (ids, partition counts): what consumer groups
    /// subscribe to and are assigned from.
    pub(crate) topic_image: TopicImage,
    /// Per-group config overrides (GroupConfig records), apart from the table: a group may
    /// have overrides before it has members or offsets.
    pub(crate) group_configs: BTreeMap<GroupId, crate::record::group_config::GroupConfigs>,
}

impl GroupIndex {
    /// A group as the membership logic sees it: its recorded state, or, for a simple group
    /// (offsets only), an Empty group with no protocol type, as Kafka materialises one.
    pub(crate) fn classic_group(&self, group_id: &GroupId) -> Option<Cow<'_, ClassicGroup>> {
        let entry = self.table.get(group_id.as_str())?;
        if entry.group.is_consumer() {
            return None;
        }
        match self.store.group(entry.group) {
            Some(group) => Some(group),
            None => Some(Cow::Owned(ClassicGroup::new(TimestampMs(0)))),
        }
    }

    /// A group's recorded state, if it has one (simple groups have none). Borrowed, except
    /// for a group with no member, which is held compactly and rebuilt here.
    pub(crate) fn group(&self, group_id: &str) -> Option<Cow<'_, ClassicGroup>> {
        self.store.group(self.table.get(group_id)?.group)
    }

    /// A consumer-protocol group, if `group_id` is one.
    pub(crate) fn consumer_group(&self, group_id: &str) -> Option<&ConsumerGroup> {
        self.store.consumer_group(self.table.get(group_id)?.group)
    }

    /// Every consumer-protocol group.
    pub(crate) fn consumer_groups(&self) -> impl Iterator<Item = (&str, &ConsumerGroup)> + '_ {
        self.table
            .iter()
            .filter_map(|(id, e)| Some((id, self.store.consumer_group(e.group)?)))
    }

    /// The groups whose record holds members or deadlines (not idle, not simple).
    pub(crate) fn full_groups(&self) -> impl Iterator<Item = (&str, &ClassicGroup)> + '_ {
        self.table
            .iter()
            .filter_map(|(id, entry)| Some((id, self.store.full_group(entry.group)?)))
    }

    pub(crate) fn group_offsets(&self, group_id: &GroupId) -> Option<&GroupOffsets> {
        self.table.get(group_id.as_str()).map(|e| &e.offsets)
    }

    pub(crate) fn committed_offset(
        &self,
        group_id: &GroupId,
        topic: &str,
        partition: PartitionIndex,
    ) -> Option<OffsetCommitValue> {
        self.group_offsets(group_id)?
            .get(&self.topics, topic, partition)
    }

    pub(crate) fn committed_offsets(
        &self,
    ) -> impl Iterator<Item = (&str, &str, PartitionIndex, OffsetCommitValue)> + '_ {
        self.table.iter().flat_map(move |(group_id, entry)| {
            entry
                .offsets
                .iter(&self.topics)
                .map(move |(topic, partition, value)| (group_id, topic, partition, value))
        })
    }

    pub(crate) fn group_committed_offsets<'a>(
        &'a self,
        group_id: &GroupId,
    ) -> impl Iterator<Item = (&'a str, PartitionIndex, OffsetCommitValue)> + 'a {
        self.table
            .get(group_id.as_str())
            .into_iter()
            .flat_map(move |entry| entry.offsets.iter(&self.topics))
    }

    pub(crate) fn group_count(&self) -> usize {
        self.table.len()
    }

    /// Whether a write that creates `group_id` would hold more than `max` groups
    /// (`Config::groups_max`). A group that exists in any form (classic, consumer, offsets
    /// only) never does: the limit refuses new groups, never the work of existing ones.
    pub(crate) fn would_pass_groups_max(&self, group_id: &str, max: usize) -> bool {
        self.table.get(group_id).is_none() && self.group_count() >= max
    }

    /// Whether the group holds a committed offset for the partition.
    pub(crate) fn has_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: PartitionIndex,
    ) -> bool {
        self.table
            .get(group_id)
            .is_some_and(|e| e.offsets.contains(&self.topics, topic, partition))
    }

    pub(crate) fn offset_count(&self) -> usize {
        self.table.values().map(|e| e.offsets.len()).sum()
    }

    pub(crate) fn group_states(&self) -> impl Iterator<Item = (&str, GroupState)> + '_ {
        self.table
            .iter()
            .map(|(id, e)| (id, self.store.state(e.group)))
    }

    /// The live records (the latest non-tombstone record per key) of every group.
    pub(crate) fn records(&self) -> impl Iterator<Item = Record> + '_ {
        self.table
            .iter()
            .flat_map(move |(group_id, entry)| {
                let group_id = GroupId::from(group_id);
                let group = self
                    .store
                    .group(entry.group)
                    .map(|g| Record::GroupMetadata {
                        group_id: group_id.clone(),
                        value: Some(Box::new(g.into_owned())),
                    });
                let consumer = self
                    .store
                    .consumer_group(entry.group)
                    .map(|g| consumer_records(&GroupId::from(group_id.as_str()), g))
                    .unwrap_or_default();
                let offsets =
                    entry
                        .offsets
                        .iter(&self.topics)
                        .map(move |(topic, partition, value)| Record::OffsetCommit {
                            group_id: group_id.clone(),
                            topic: topic.into(),
                            partition,
                            value: Some(value),
                        });
                group.into_iter().chain(consumer).chain(offsets)
            })
            .chain(self.topic_image.records())
            .chain(
                self.group_configs
                    .iter()
                    .map(|(group_id, c)| Record::GroupConfig {
                        group_id: group_id.clone(),
                        value: Some(c.clone()),
                    }),
            )
    }

    /// A form that does not depend on interning order, for equality.
    pub(crate) fn canonical(&self) -> BTreeMap<&str, CanonicalGroup<'_>> {
        self.table
            .iter()
            .map(|(id, e)| {
                let offsets = e
                    .offsets
                    .iter(&self.topics)
                    .map(|(t, p, v)| ((t.to_owned(), p), v))
                    .collect();
                let consumer = self.store.consumer_group(e.group);
                (id, (self.store.group(e.group), consumer, offsets))
            })
            .collect()
    }

    // The record operations `replay` applies. Each accepts any input without panicking: a
    // tombstone for a missing key is a no-op, an id the table cannot hold is dropped (decide
    // refuses such ids long before).

    pub(crate) fn put_offset(
        &mut self,
        group_id: &GroupId,
        topic: &TopicName,
        partition: PartitionIndex,
        value: &OffsetCommitValue,
    ) {
        if let Some(entry) = self
            .table
            .get_or_insert_with(group_id.as_str(), GroupEntry::default)
        {
            entry
                .offsets
                .put(&mut self.topics, topic.as_str(), partition, value);
        }
    }

    pub(crate) fn remove_offset(
        &mut self,
        group_id: &GroupId,
        topic: &TopicName,
        partition: PartitionIndex,
    ) {
        if let Some(entry) = self.table.get_mut(group_id.as_str()) {
            entry
                .offsets
                .remove(&mut self.topics, topic.as_str(), partition);
            if !entry.group.is_some() && entry.offsets.is_empty() {
                self.table.remove(group_id.as_str());
            }
        }
    }

    pub(crate) fn put_group(&mut self, group_id: &GroupId, group: &ClassicGroup) {
        if let Some(entry) = self
            .table
            .get_or_insert_with(group_id.as_str(), GroupEntry::default)
        {
            self.store.put(&mut entry.group, group);
        }
    }

    pub(crate) fn remove_group(&mut self, group_id: &GroupId) {
        if let Some(entry) = self.table.get_mut(group_id.as_str()) {
            if entry.group.is_consumer() {
                // The tombstone of a classic record the group no longer has.
                return;
            }
            self.store.remove(&mut entry.group);
            if entry.offsets.is_empty() {
                self.table.remove(group_id.as_str());
            }
        }
    }

    /// Applies a change to a consumer-protocol group's records: the group is made a consumer
    /// group by a value (a classic record it held is dropped), a tombstone for a group that is
    /// not one is a no-op, and a group left with no record is removed.
    fn with_consumer_group(
        &mut self,
        group_id: &GroupId,
        tombstone: bool,
        change: impl FnOnce(&mut ConsumerGroup),
    ) {
        if tombstone {
            let Some(entry) = self.table.get_mut(group_id.as_str()) else {
                return;
            };
            if !entry.group.is_consumer() {
                return;
            }
            let gone = match self.store.consumer_group_mut(&mut entry.group) {
                Some(group) => {
                    change(group);
                    group.is_unrecorded()
                }
                None => false,
            };
            if gone {
                self.store.remove(&mut entry.group);
                if entry.offsets.is_empty() {
                    self.table.remove(group_id.as_str());
                }
            }
            return;
        }
        if let Some(entry) = self
            .table
            .get_or_insert_with(group_id.as_str(), GroupEntry::default)
        {
            if let Some(group) = self.store.consumer_group_mut(&mut entry.group) {
                change(group);
            }
        }
    }

    pub(crate) fn put_consumer_epochs(
        &mut self,
        group_id: &GroupId,
        value: Option<&ConsumerGroupValue>,
    ) {
        self.with_consumer_group(group_id, value.is_none(), |g| g.put_epochs(value.copied()));
    }

    pub(crate) fn put_consumer_member(
        &mut self,
        group_id: &GroupId,
        member_id: &MemberId,
        value: Option<&ConsumerMemberValue>,
    ) {
        self.with_consumer_group(group_id, value.is_none(), |g| {
            g.put_member(member_id, value)
        });
    }

    pub(crate) fn put_consumer_target(
        &mut self,
        group_id: &GroupId,
        member_id: &MemberId,
        value: Option<&Assignment>,
    ) {
        self.with_consumer_group(group_id, value.is_none(), |g| {
            g.put_target(member_id, value)
        });
    }

    pub(crate) fn put_consumer_current(
        &mut self,
        group_id: &GroupId,
        member_id: &MemberId,
        value: Option<&CurrentAssignment>,
    ) {
        self.with_consumer_group(group_id, value.is_none(), |g| {
            g.put_current(member_id, value)
        });
    }

    pub(crate) fn put_topic(&mut self, name: &TopicName, value: Option<&TopicValue>) {
        self.topic_image.put(name, value);
    }

    pub(crate) fn put_group_config(
        &mut self,
        group_id: &GroupId,
        value: Option<&crate::record::group_config::GroupConfigs>,
    ) {
        match value {
            Some(v) if !v.is_empty() => {
                self.group_configs.insert(group_id.clone(), v.clone());
            }
            _ => {
                self.group_configs.remove(group_id);
            }
        }
    }

    /// The tombstone of a group's config overrides, if it has any (the group is deleted).
    pub(crate) fn group_config_tombstone(&self, group_id: &GroupId) -> Option<Record> {
        self.group_configs
            .contains_key(group_id)
            .then(|| Record::GroupConfig {
                group_id: group_id.clone(),
                value: None,
            })
    }
}

pub(crate) type CanonicalGroup<'a> = (
    Option<Cow<'a, ClassicGroup>>,
    Option<&'a ConsumerGroup>,
    BTreeMap<(String, PartitionIndex), OffsetCommitValue>,
);

/// The live records of a consumer-protocol group, in the order decide writes a new group's.
pub(crate) fn consumer_records(group_id: &GroupId, g: &ConsumerGroup) -> Vec<Record> {
    let mut out = Vec::with_capacity(1 + 3 * g.members.len());
    if g.has_epochs {
        out.push(Record::ConsumerGroup {
            group_id: group_id.clone(),
            value: Some(g.epochs),
        });
    }
    for (member_id, m) in &g.members {
        out.push(Record::ConsumerMember {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            value: Some(Box::new(m.clone())),
        });
    }
    for (member_id, t) in &g.targets {
        out.push(Record::ConsumerTarget {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            value: Some(t.clone()),
        });
    }
    for (member_id, c) in &g.current {
        out.push(Record::ConsumerCurrent {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            value: Some(Box::new(c.clone())),
        });
    }
    out
}
