//! The coordinator's state: groups and their offsets. `replay` is its only mutator.

use crate::command::ConsumerGroupHeartbeat;
use crate::command::{ReadCommand, WriteCommand};
use crate::config::Config;
use crate::group::consumer;
use crate::group::{ClassicGroup, GroupState};
use crate::ids::TransactionalId;
use crate::ids::{GroupId, PartitionIndex, TimestampMs};
use crate::index::transactions::TxnIndex;
use crate::index::GroupIndex;
use crate::outcome::AssignmentNeeded;
use crate::outcome::TxnMarkers;
use crate::outcome::{Outcome, ReadOutcome};
use crate::record::consumer_group::ConsumerGroup;
use crate::record::offset_commit::OffsetCommitValue;
use crate::record::transaction::{TransactionValue, TxnState};
use crate::record::Record;
use crate::reply::{JoinResponse, Reply};
use crate::timer::{TimerKey, TimerOp};
use crate::transactions::admin::{ListTransactionsFilter, ListedTransactions};
use crate::{admin, consumer_group, expiry, membership, migration, offsets, transactions};
use std::borrow::Cow;

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
    config: Config,
    groups: GroupIndex,
    /// The transaction coordinator's state and the pending transactional offsets.
    txns: TxnIndex,
}

impl CoordinatorState {
    pub fn new(config: Config) -> CoordinatorState {
        CoordinatorState {
            config,
            groups: GroupIndex::default(),
            txns: TxnIndex::default(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Replaces the settings `decide` reads: the replicated configuration changed (applied at
    /// the same log position on every replica). Groups are untouched: a new session bound
    /// applies from the next join, as in Kafka.
    pub fn set_config(&mut self, config: Config) {
        self.config = config;
    }

    /// Decides what a write command does. Pure: the state changes only when the runtime
    /// replays `outcome.records`.
    pub fn decide(&self, command: &WriteCommand) -> Outcome {
        let (config, groups, txns) = (&self.config, &self.groups, &self.txns);
        match command {
            WriteCommand::JoinGroup(c) => match groups.consumer_group(c.group_id.as_str()) {
                // An empty consumer group is replaced by the classic group the join creates;
                // one with members takes the classic member in (online migration).
                Some(g) if !g.members.is_empty() => {
                    match membership::join::validate_request(config, c) {
                        Err(error) => Outcome::reply(Reply::Join(JoinResponse::error(
                            error,
                            c.member_id.clone(),
                        ))),
                        Ok(()) => migration::classic_member::join(config, groups, g, c),
                    }
                }
                Some(g) => {
                    let mut outcome = membership::join::decide(config, groups, c);
                    if !outcome.records.is_empty() {
                        let mut records = consumer::tombstones(&c.group_id, g);
                        records.append(&mut outcome.records);
                        outcome.records = records;
                    }
                    outcome
                }
                None => membership::join::decide(config, groups, c),
            },
            WriteCommand::SyncGroup(c) => match groups.consumer_group(c.group_id.as_str()) {
                Some(g) if !crate::group::invalid_member_api_group_id(config, &c.group_id) => {
                    migration::classic_member::sync(groups, g, c)
                }
                _ => membership::sync::decide(config, groups, c),
            },
            WriteCommand::LeaveGroup(c) => match groups.consumer_group(c.group_id.as_str()) {
                Some(g) if !crate::group::invalid_member_api_group_id(config, &c.group_id) => {
                    migration::classic_member::leave(config, groups, g, c)
                }
                _ => membership::leave::decide(config, groups, c),
            },
            WriteCommand::CommitOffsets(c) => offsets::commit::decide(config, groups, txns, c),
            WriteCommand::DeleteOffsets(c) => offsets::delete::decide(config, groups, c),
            WriteCommand::DeleteGroups(c) => admin::delete_groups(config, groups, c),
            WriteCommand::TimerFired { key, now_ms } => match key {
                TimerKey::OffsetsRetention => expiry::decide(config, groups, txns, *now_ms),
                TimerKey::TransactionTimeout { transactional_id } => {
                    transactions::timed_out(txns, transactional_id, *now_ms)
                }
                TimerKey::ConsumerRebalance { .. }
                | TimerKey::ClassicMemberJoin { .. }
                | TimerKey::ClassicMemberSync { .. } => {
                    consumer_timer(config, groups, key, *now_ms)
                }
                TimerKey::MemberHeartbeat { group_id, .. }
                    if groups.consumer_group(group_id.as_str()).is_some() =>
                {
                    consumer_timer(config, groups, key, *now_ms)
                }
                _ => membership::timers::decide(config, groups, key, *now_ms),
            },
            WriteCommand::ExpireOffsets { now_ms } => expiry::decide(config, groups, txns, *now_ms),
            WriteCommand::TopicsDeleted { topics, .. } => {
                offsets::delete::topics_deleted(groups, topics)
            }
            WriteCommand::ConsumerGroupHeartbeat(c) => consumer_heartbeat(config, groups, c),
            WriteCommand::InstallTargetAssignment(c) => consumer_group::install(groups, c),
            WriteCommand::TopicsChanged(c) => {
                let mut outcome = offsets::delete::topics_deleted(groups, &c.deleted);
                let mut changed = consumer_group::topics::decide(config, groups, c);
                outcome.records.append(&mut changed.records);
                outcome.timers.append(&mut changed.timers);
                outcome.assignments.append(&mut changed.assignments);
                outcome
            }
            WriteCommand::InitTransactionalProducer(c) => {
                transactions::init_producer(config, txns, c)
            }
            WriteCommand::AddPartitionsToTxn(c) => transactions::add_partitions(config, txns, c),
            WriteCommand::AddOffsetsToTxn(c) => transactions::add_offsets(config, txns, c),
            WriteCommand::EndTxn(c) => transactions::end(config, txns, c),
            WriteCommand::TxnMarkersWritten(c) => {
                transactions::markers_written(txns, c, |group_id, producer_id, commit| {
                    offsets::txn_commit::complete(txns, group_id, producer_id, commit)
                })
            }
            WriteCommand::TxnOffsetCommit(c) => {
                offsets::txn_commit::decide(config, groups, txns, c)
            }
        }
    }

    /// ConsumerGroupHeartbeat, the way the leader serves it: a heartbeat that changes nothing
    /// but the member's session (or that fails) is answered from applied state and never
    /// replicated (`Answered`, with the session timer to re-arm); any other must be written
    /// as `WriteCommand::ConsumerGroupHeartbeat` and answered from its applied outcome.
    pub fn consumer_heartbeat(&self, command: ConsumerGroupHeartbeat) -> HeartbeatPath {
        let outcome = consumer_group::heartbeat(&self.config, &self.groups, &command);
        if consumer_group::unchanged(&outcome) || consumer_group::is_error(&outcome) {
            HeartbeatPath::Answered(ReadOutcome {
                reply: outcome.reply,
                timers: outcome.timers,
            })
        } else {
            HeartbeatPath::Write(WriteCommand::ConsumerGroupHeartbeat(command))
        }
    }

    /// The assignor run a consumer group needs (its group epoch is ahead of its target
    /// assignment), for the leader to compute off the request path after an outcome listed
    /// it in `Outcome::assignments`. `None` once the group no longer needs one.
    pub fn assignment_job(&self, group_id: &GroupId) -> Option<consumer_group::AssignmentJob> {
        consumer_group::assignment_job(&self.groups, group_id)
    }

    /// Every consumer group whose target assignment is behind its group epoch: what a new
    /// leader must compute (the assignor runs of the previous leader are lost with it).
    pub fn assignments_to_run(&self) -> Vec<AssignmentNeeded> {
        self.groups
            .consumer_groups()
            .filter(|(_, g)| g.group_epoch() > g.assignment_epoch())
            .map(|(id, g)| AssignmentNeeded {
                group_id: GroupId::from(id),
                epoch: g.group_epoch(),
            })
            .collect()
    }

    /// A consumer-protocol group's records, if `group_id` is one.
    pub fn consumer_group(&self, group_id: &GroupId) -> Option<&ConsumerGroup> {
        self.groups.consumer_group(group_id.as_str())
    }

    /// Every consumer-protocol group.
    pub fn consumer_groups(&self) -> impl Iterator<Item = (&str, &ConsumerGroup)> + '_ {
        self.groups.consumer_groups()
    }

    /// A topic as the coordinator knows it: (id, partition count).
    pub fn topic(&self, name: &str) -> Option<(crate::ids::TopicId, i32)> {
        self.groups
            .topic_image
            .get(name)
            .map(|t| (t.id, t.partitions))
    }

    /// The name of topic `id`, as the coordinator knows it.
    pub fn topic_name(&self, id: crate::ids::TopicId) -> Option<&crate::ids::TopicName> {
        self.groups.topic_image.name_of(id)
    }

    /// Makes the topic image exactly `topics` by replaying `Topic` records, without bumping
    /// any group's epoch: for a state restored from a snapshot older than the image.
    pub fn sync_topic_image(
        &mut self,
        topics: impl IntoIterator<Item = crate::command::TopicMetadata>,
    ) {
        let wanted: std::collections::BTreeMap<
            crate::ids::TopicName,
            crate::record::consumer_group::TopicValue,
        > = topics
            .into_iter()
            .map(|t| {
                (
                    t.name,
                    crate::record::consumer_group::TopicValue {
                        id: t.id,
                        partitions: t.partitions,
                    },
                )
            })
            .collect();
        let stale: Vec<crate::ids::TopicName> = self
            .groups
            .topic_image
            .iter()
            .filter(|(name, v)| wanted.get(*name) != Some(*v))
            .map(|(name, _)| name.clone())
            .collect();
        for name in stale {
            self.replay(&Record::Topic { name, value: None });
        }
        for (name, value) in wanted {
            if self.groups.topic_image.get(name.as_str()) != Some(&value) {
                self.replay(&Record::Topic {
                    name,
                    value: Some(value),
                });
            }
        }
    }

    /// Number of topics the coordinator knows.
    pub fn topic_count(&self) -> usize {
        self.groups.topic_image.len()
    }

    /// A group's config overrides (the GROUP config resource), if it has any.
    pub fn group_configs(&self, group_id: &GroupId) -> Option<&crate::group_config::GroupConfigs> {
        self.groups.group_configs.get(group_id)
    }

    /// What an alteration of a group's overrides would leave, validated (nothing changes).
    pub fn check_group_configs(
        &self,
        c: &crate::group_config::AlterGroupConfigs,
    ) -> Result<crate::group_config::GroupConfigs, crate::group_config::GroupConfigError> {
        crate::group_config::altered(&self.config, self.group_configs(&c.group_id), c)
    }

    /// Alters a group's overrides (how every replica applies the replicated command): decide
    /// then replay its record. The overrides after the change, or why nothing changed.
    pub fn alter_group_configs(
        &mut self,
        c: &crate::group_config::AlterGroupConfigs,
    ) -> Result<crate::group_config::GroupConfigs, crate::group_config::GroupConfigError> {
        let next = self.check_group_configs(c)?;
        let current = self.group_configs(&c.group_id);
        if let Some(record) = crate::group_config::record(current, &c.group_id, next.clone()) {
            self.replay(&record);
        }
        Ok(next)
    }

    /// `decide` then `replay` of every record: how every replica applies a command.
    pub fn apply(&mut self, command: &WriteCommand) -> Outcome {
        let outcome = self.decide(command);
        for record in &outcome.records {
            self.replay(record);
        }
        outcome
    }

    /// ListTransactions with Kafka's filters.
    pub fn list_transactions(&self, filter: &ListTransactionsFilter) -> ListedTransactions {
        transactions::admin::list(&self.txns, filter)
    }

    /// When the oldest transaction still open or completing started (`/metrics`).
    pub fn oldest_open_transaction_start(&self) -> Option<TimestampMs> {
        transactions::admin::oldest_open_start(&self.txns)
    }

    /// How many transactional ids are in each state (`/metrics`).
    pub fn transactions_by_state(&self) -> Vec<(TxnState, usize)> {
        transactions::admin::count_by_state(&self.txns)
    }

    /// Answers a read-only command from applied state.
    pub fn read(&self, command: &ReadCommand) -> ReadOutcome {
        let (config, groups) = (&self.config, &self.groups);
        match command {
            ReadCommand::Heartbeat(c) => match groups.consumer_group(c.group_id.as_str()) {
                Some(g) if !crate::group::invalid_member_api_group_id(config, &c.group_id) => {
                    migration::classic_member::heartbeat(g, c)
                }
                _ => membership::heartbeat::read(config, groups, c),
            },
            ReadCommand::FetchOffsets(c) => offsets::fetch::read(config, groups, &self.txns, c),
            ReadCommand::DescribeGroups(c) => admin::describe_groups(config, groups, c),
            ReadCommand::ListGroups(c) => admin::list_groups(groups, c),
            ReadCommand::DescribeConsumerGroups(c) => {
                consumer_group::describe::read(config, groups, c)
            }
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
            } => self.groups.put_offset(group_id, topic, *partition, value),
            Record::OffsetCommit {
                group_id,
                topic,
                partition,
                value: None,
            } => self.groups.remove_offset(group_id, topic, *partition),
            Record::GroupMetadata {
                group_id,
                value: Some(group),
            } => self.groups.put_group(group_id, group),
            Record::GroupMetadata {
                group_id,
                value: None,
            } => self.groups.remove_group(group_id),
            Record::ConsumerGroup { group_id, value } => {
                self.groups.put_consumer_epochs(group_id, value.as_ref())
            }
            Record::ConsumerMember {
                group_id,
                member_id,
                value,
            } => self
                .groups
                .put_consumer_member(group_id, member_id, value.as_deref()),
            Record::ConsumerTarget {
                group_id,
                member_id,
                value,
            } => self
                .groups
                .put_consumer_target(group_id, member_id, value.as_ref()),
            Record::ConsumerCurrent {
                group_id,
                member_id,
                value,
            } => self
                .groups
                .put_consumer_current(group_id, member_id, value.as_deref()),
            Record::Topic { name, value } => self.groups.put_topic(name, value.as_ref()),
            Record::Transaction {
                transactional_id,
                value,
            } => self
                .txns
                .put_transaction(transactional_id, value.as_deref()),
            Record::TxnOffsets {
                group_id,
                producer_id,
                value,
            } => self
                .txns
                .put_pending(group_id, *producer_id, value.as_deref()),
            Record::GroupConfig { group_id, value } => {
                self.groups.put_group_config(group_id, value.as_ref())
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
        self.groups.records().chain(self.txns.records())
    }

    /// Every timer the state implies, for a leader that just took over (or started): join
    /// and sync deadlines as recorded, member sessions restarted from `now_ms` (as Kafka does
    /// after a coordinator move), and the periodic offset expiry.
    pub fn timers_to_arm(&self, now_ms: TimestampMs) -> Vec<TimerOp> {
        let mut timers = Vec::new();
        // Groups with no record, or an idle one, have no member and no deadline to arm.
        for (group_id, group) in self.groups.full_groups() {
            membership::timers::arm_all(
                &GroupId::from(group_id),
                group,
                now_ms,
                &self.config,
                &mut timers,
            );
        }
        for (group_id, group) in self.groups.consumer_groups() {
            consumer_group::timers::arm_all(
                &GroupId::from(group_id),
                group,
                now_ms,
                &self.config,
                self.groups.group_configs.get(group_id),
                &mut timers,
            );
        }
        transactions::arm_all(&self.txns, &mut timers);
        timers.push(TimerOp::Set {
            key: TimerKey::OffsetsRetention,
            at_ms: now_ms.plus_ms(self.config.offsets_retention_check_interval_ms),
        });
        timers
    }

    /// The markers of every transaction left in a Prepare state: what a new leader (or a
    /// restarted single node) must write again before the transaction completes. Writing a
    /// marker twice is harmless; `TxnMarkersWritten` for a completed one is a no-op.
    pub fn txn_markers_to_redrive(&self) -> Vec<TxnMarkers> {
        self.txns
            .iter()
            .filter_map(|(id, t)| transactions::markers_of(id, t))
            .collect()
    }

    /// One transactional id's state.
    pub fn transaction(&self, id: &TransactionalId) -> Option<&TransactionValue> {
        self.txns.get(id)
    }

    /// Every transactional id's state, in id order (ListTransactions, metrics).
    pub fn transactions(&self) -> impl Iterator<Item = (&TransactionalId, &TransactionValue)> + '_ {
        self.txns.iter()
    }

    /// The committed offset of one partition.
    pub fn committed_offset(
        &self,
        group_id: &GroupId,
        topic: &str,
        partition: PartitionIndex,
    ) -> Option<OffsetCommitValue> {
        self.groups.committed_offset(group_id, topic, partition)
    }

    /// Every committed offset, group by group: what lag reporting (`/metrics`) reads.
    pub fn committed_offsets(
        &self,
    ) -> impl Iterator<Item = (&str, &str, PartitionIndex, OffsetCommitValue)> + '_ {
        self.groups.committed_offsets()
    }

    /// One group's committed offsets, in O(that group's size).
    pub fn group_committed_offsets<'a>(
        &'a self,
        group_id: &GroupId,
    ) -> impl Iterator<Item = (&'a str, PartitionIndex, OffsetCommitValue)> + 'a {
        self.groups.group_committed_offsets(group_id)
    }

    /// A group's recorded state, if it has one (simple groups have none). Borrowed, except
    /// for a group with no member, which is held compactly and rebuilt here.
    pub fn group(&self, group_id: &GroupId) -> Option<Cow<'_, ClassicGroup>> {
        self.groups.group(group_id.as_str())
    }

    /// `group`, for the `&str` ids that `group_states` and `committed_offsets` yield.
    pub fn group_by_id(&self, group_id: &str) -> Option<Cow<'_, ClassicGroup>> {
        self.groups.group(group_id)
    }

    /// Number of groups, simple ones included.
    pub fn group_count(&self) -> usize {
        self.groups.group_count()
    }

    /// Number of committed (group, topic, partition) offsets.
    pub fn offset_count(&self) -> usize {
        self.groups.offset_count()
    }

    /// Every group's state, for lag reporting and tests: (group id, state).
    pub fn group_states(&self) -> impl Iterator<Item = (&str, GroupState)> + '_ {
        self.groups.group_states()
    }
}

/// Two states are equal when they hold the same groups and offsets under the same config,
/// whatever order the topic names were interned in.
impl PartialEq for CoordinatorState {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.txns == other.txns
            && self.groups.topic_image == other.groups.topic_image
            && self.groups.group_count() == other.groups.group_count()
            && self.groups.canonical() == other.groups.canonical()
            && self.groups.group_configs == other.groups.group_configs
    }
}

impl Eq for CoordinatorState {}

/// A ConsumerGroupHeartbeat; a leave (−1) that leaves only classic members downgrades the
/// group when the policy allows (Kafka's `consumerGroupFenceMember`).
fn consumer_heartbeat(config: &Config, groups: &GroupIndex, c: &ConsumerGroupHeartbeat) -> Outcome {
    let outcome = consumer_group::heartbeat(config, groups, c);
    if c.member_epoch != -1 || consumer_group::is_error(&outcome) {
        return outcome;
    }
    match groups.consumer_group(c.group_id.as_str()) {
        Some(group) => migration::downgrade::after_leave(
            config,
            &c.group_id,
            group,
            &groups.topic_image,
            &c.member_id,
            c.now_ms,
            outcome.reply.clone(),
        )
        .unwrap_or(outcome),
        None => outcome,
    }
}

/// A consumer-group member's session, revocation, or (classic member) join or sync deadline:
/// the member is fenced, and a group left with classic members only is downgraded when the
/// policy allows.
fn consumer_timer(
    config: &Config,
    groups: &GroupIndex,
    key: &TimerKey,
    now: TimestampMs,
) -> Outcome {
    let outcome = consumer_group::timers::decide(config, groups, key);
    let Some((group_id, member_id)) = key.member() else {
        return outcome;
    };
    if outcome.records.is_empty() {
        return outcome;
    }
    match groups.consumer_group(group_id.as_str()) {
        Some(group) => migration::downgrade::after_leave(
            config,
            group_id,
            group,
            &groups.topic_image,
            member_id,
            now,
            outcome.reply.clone(),
        )
        .unwrap_or(outcome),
        None => outcome,
    }
}

/// How the leader serves a ConsumerGroupHeartbeat (see `CoordinatorState::consumer_heartbeat`).
#[derive(Clone, Debug, PartialEq)]
pub enum HeartbeatPath {
    /// Changes nothing: answer with `reply` and arm `timers` (the member's session).
    Answered(ReadOutcome),
    /// Replicate this command; its outcome's reply is the answer.
    Write(WriteCommand),
}
