//! The coordinator's state: groups and their offsets. `replay` is its only mutator.

use crate::command::{ReadCommand, WriteCommand};
use crate::config::Config;
use crate::group::{ClassicGroup, GroupState};
use crate::ids::{GroupId, PartitionIndex, TimestampMs};
use crate::index::group_table::GroupTable;
use crate::index::offsets::{GroupOffsets, OffsetCommitValue, TopicInterner};
use crate::index::stored_group::{GroupRef, GroupStore};
use crate::outcome::{Outcome, ReadOutcome, TimerKey, TimerOp};
use crate::record::Record;
use crate::{admin, expiry, membership, offsets};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// One group: its membership state (none for a simple, offset-only group; see
/// `index/stored_group.rs` for how it is held) and its offsets. An entry exists while either is
/// present.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupEntry {
    pub(crate) group: GroupRef,
    pub(crate) offsets: GroupOffsets,
}

/// The whole coordinator state of one shard.
///
/// ```text
///   WriteCommand ──decide(&self)──▶ Outcome { records, reply, member_replies, timers }
///                                       │
///        state.replay(&record) ◀────────┘   (every replica, in order)
///
///   ReadCommand ──read(&self)──▶ ReadOutcome { reply, timers }   (leader only)
/// ```
#[derive(Clone, Debug)]
pub struct CoordinatorState {
    pub(crate) config: Config,
    pub(crate) groups: GroupTable<GroupEntry>,
    /// The group records that are not idle, which `GroupEntry::group` points into.
    pub(crate) group_store: GroupStore,
    pub(crate) topics: TopicInterner,
}

impl CoordinatorState {
    pub fn new(config: Config) -> CoordinatorState {
        CoordinatorState {
            config,
            groups: GroupTable::default(),
            group_store: GroupStore::default(),
            topics: TopicInterner::default(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Decides what a write command does. Pure: the state changes only when the runtime
    /// replays `outcome.records`.
    pub fn decide(&self, command: &WriteCommand) -> Outcome {
        match command {
            WriteCommand::JoinGroup(c) => membership::join::decide(self, c),
            WriteCommand::SyncGroup(c) => membership::sync::decide(self, c),
            WriteCommand::LeaveGroup(c) => membership::leave::decide(self, c),
            WriteCommand::CommitOffsets(c) => offsets::commit::decide(self, c),
            WriteCommand::DeleteOffsets(c) => offsets::delete::decide(self, c),
            WriteCommand::DeleteGroups(c) => admin::delete_groups(self, c),
            WriteCommand::TimerFired { key, now_ms } => match key {
                TimerKey::OffsetsRetention => expiry::decide(self, *now_ms),
                _ => membership::timers::decide(self, key, *now_ms),
            },
            WriteCommand::ExpireOffsets { now_ms } => expiry::decide(self, *now_ms),
            WriteCommand::TopicsDeleted { topics, .. } => {
                offsets::delete::topics_deleted(self, topics)
            }
        }
    }

    /// `decide` then `replay` of every record: how every replica applies a command.
    pub fn apply(&mut self, command: &WriteCommand) -> Outcome {
        let outcome = self.decide(command);
        for record in &outcome.records {
            self.replay(record);
        }
        outcome
    }

    /// Answers a read-only command from applied state.
    pub fn read(&self, command: &ReadCommand) -> ReadOutcome {
        match command {
            ReadCommand::Heartbeat(c) => membership::heartbeat::read(self, c),
            ReadCommand::FetchOffsets(c) => offsets::fetch::read(self, c),
            ReadCommand::DescribeGroups(c) => admin::describe_groups(self, c),
            ReadCommand::ListGroups(c) => admin::list_groups(self, c),
        }
    }

    /// Applies one record. Records come from `decide` or from the log (possibly compacted);
    /// any record, even one inconsistent with the state, is applied without panicking.
    pub fn replay(&mut self, record: &Record) {
        match record {
            Record::OffsetCommit {
                group_id,
                topic,
                partition,
                value: Some(value),
            } => {
                if let Some(entry) = self
                    .groups
                    .get_or_insert_with(group_id.as_str(), GroupEntry::default)
                {
                    entry
                        .offsets
                        .put(&mut self.topics, topic.as_str(), *partition, value);
                }
            }
            Record::OffsetCommit {
                group_id,
                topic,
                partition,
                value: None,
            } => {
                if let Some(entry) = self.groups.get_mut(group_id.as_str()) {
                    entry
                        .offsets
                        .remove(&mut self.topics, topic.as_str(), *partition);
                    if !entry.group.is_some() && entry.offsets.is_empty() {
                        self.groups.remove(group_id.as_str());
                    }
                }
            }
            Record::GroupMetadata {
                group_id,
                value: Some(group),
            } => {
                if let Some(entry) = self
                    .groups
                    .get_or_insert_with(group_id.as_str(), GroupEntry::default)
                {
                    self.group_store.put(&mut entry.group, group);
                }
            }
            Record::GroupMetadata {
                group_id,
                value: None,
            } => {
                if let Some(entry) = self.groups.get_mut(group_id.as_str()) {
                    self.group_store.remove(&mut entry.group);
                    if entry.offsets.is_empty() {
                        self.groups.remove(group_id.as_str());
                    }
                }
            }
        }
    }

    /// Rebuilds a state from encoded records (a snapshot, then the log's records): decode and
    /// replay each. The first record that does not decode is an error.
    pub fn from_encoded<'a>(
        config: Config,
        records: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
    ) -> Result<CoordinatorState, crate::record::codec::DecodeError> {
        let mut state = CoordinatorState::new(config);
        for (key, value) in records {
            state.replay(&Record::decode(key, value)?);
        }
        Ok(state)
    }

    /// The live records (the latest non-tombstone record per key), from which a snapshot is
    /// built: replaying them into a fresh state gives a state equal to this one.
    pub fn snapshot_records(&self) -> impl Iterator<Item = Record> + '_ {
        self.groups.iter().flat_map(move |(group_id, entry)| {
            let group_id = GroupId::from(group_id);
            let group = self
                .group_store
                .group(entry.group)
                .map(|g| Record::GroupMetadata {
                    group_id: group_id.clone(),
                    value: Some(Box::new(g.into_owned())),
                });
            let offsets = entry
                .offsets
                .iter(&self.topics)
                .map(move |(topic, partition, value)| Record::OffsetCommit {
                    group_id: group_id.clone(),
                    topic: topic.into(),
                    partition,
                    value: Some(value),
                });
            group.into_iter().chain(offsets)
        })
    }

    /// Every timer the state implies, for a leader that just took over (or started): join
    /// and sync deadlines as recorded, member sessions restarted from `now_ms` (as Kafka does
    /// after a coordinator move), and the periodic offset expiry.
    pub fn timers_to_arm(&self, now_ms: TimestampMs) -> Vec<TimerOp> {
        let mut timers = Vec::new();
        for (group_id, entry) in self.groups.iter() {
            let Some(group) = self.group_store.full_group(entry.group) else {
                // No record, or an idle one: no member and no deadline, nothing to arm.
                continue;
            };
            membership::timers::arm_all(
                &GroupId::from(group_id),
                group,
                now_ms,
                &self.config,
                &mut timers,
            );
        }
        timers.push(TimerOp::Set {
            key: TimerKey::OffsetsRetention,
            at_ms: now_ms.plus_ms(self.config.offsets_retention_check_interval_ms),
        });
        timers
    }

    /// A group as the membership logic sees it: its recorded state, or, for a simple group
    /// (offsets only), an Empty group with no protocol type, as Kafka materialises one.
    pub(crate) fn classic_group(&self, group_id: &GroupId) -> Option<Cow<'_, ClassicGroup>> {
        let entry = self.groups.get(group_id.as_str())?;
        match self.group_store.group(entry.group) {
            Some(group) => Some(group),
            None => Some(Cow::Owned(ClassicGroup::new(TimestampMs(0)))),
        }
    }

    pub(crate) fn group_offsets(&self, group_id: &GroupId) -> Option<&GroupOffsets> {
        self.groups.get(group_id.as_str()).map(|e| &e.offsets)
    }

    /// The committed offset of one partition.
    pub fn committed_offset(
        &self,
        group_id: &GroupId,
        topic: &str,
        partition: PartitionIndex,
    ) -> Option<OffsetCommitValue> {
        self.group_offsets(group_id)?
            .get(&self.topics, topic, partition)
    }

    /// Every committed offset, group by group: what lag reporting (`/metrics`) reads.
    pub fn committed_offsets(
        &self,
    ) -> impl Iterator<Item = (&str, &str, PartitionIndex, OffsetCommitValue)> + '_ {
        self.groups.iter().flat_map(move |(group_id, entry)| {
            entry
                .offsets
                .iter(&self.topics)
                .map(move |(topic, partition, value)| (group_id, topic, partition, value))
        })
    }

    /// One group's committed offsets, in O(that group's size).
    pub fn group_committed_offsets<'a>(
        &'a self,
        group_id: &GroupId,
    ) -> impl Iterator<Item = (&'a str, PartitionIndex, OffsetCommitValue)> + 'a {
        self.groups
            .get(group_id.as_str())
            .into_iter()
            .flat_map(move |entry| entry.offsets.iter(&self.topics))
    }

    /// A group's recorded state, if it has one (simple groups have none). Borrowed, except
    /// for a group with no member, which is held compactly and rebuilt here.
    pub fn group(&self, group_id: &GroupId) -> Option<Cow<'_, ClassicGroup>> {
        self.group_by_id(group_id.as_str())
    }

    /// `group`, for the `&str` ids that `group_states` and `committed_offsets` yield.
    pub fn group_by_id(&self, group_id: &str) -> Option<Cow<'_, ClassicGroup>> {
        self.group_store.group(self.groups.get(group_id)?.group)
    }

    /// Number of groups, simple ones included.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// Number of committed (group, topic, partition) offsets.
    pub fn offset_count(&self) -> usize {
        self.groups.values().map(|e| e.offsets.len()).sum()
    }

    /// Every group's state, for lag reporting and tests: (group, state, protocol type).
    pub fn group_states(&self) -> impl Iterator<Item = (&str, GroupState)> + '_ {
        self.groups
            .iter()
            .map(|(id, e)| (id, self.group_store.state(e.group)))
    }

    /// A form that does not depend on interning order, for equality.
    fn canonical(&self) -> BTreeMap<&str, CanonicalGroup<'_>> {
        self.groups
            .iter()
            .map(|(id, e)| {
                let offsets = e
                    .offsets
                    .iter(&self.topics)
                    .map(|(t, p, v)| ((t.to_owned(), p), v))
                    .collect();
                (id, (self.group_store.group(e.group), offsets))
            })
            .collect()
    }
}

type CanonicalGroup<'a> = (
    Option<Cow<'a, ClassicGroup>>,
    BTreeMap<(String, PartitionIndex), OffsetCommitValue>,
);

/// Two states are equal when they hold the same groups and offsets under the same config,
/// whatever order the topic names were interned in.
impl PartialEq for CoordinatorState {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.groups.len() == other.groups.len()
            && self.canonical() == other.canonical()
    }
}

impl Eq for CoordinatorState {}
