//! OffsetCommit v2–v9 with Kafka's validation order (`OffsetMetadataManager.validateOffsetCommit`
//! then `ClassicGroup.validateOffsetCommit`):
//!
//! 1. no such group: generation < 0 creates a simple group and accepts; otherwise
//!    GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION below;
//! 2. generation < 0 on an Empty group: accepted (admin tools, simple consumers);
//! 3. a generation, member id or instance id: the member must be valid (UNKNOWN_MEMBER_ID,
//!    FENCED_INSTANCE_ID) and the generation current (ILLEGAL_GENERATION);
//! 4. neither, on a non-Empty group: UNKNOWN_MEMBER_ID;
//! 5. CompletingRebalance: REBALANCE_IN_PROGRESS;
//! 6. accepted in Stable and PreparingRebalance, where it also refreshes the member's session.
//!
//! Per partition: an unknown topic or partition (checked by the binary, before the group, as
//! KafkaApis does) is UNKNOWN_TOPIC_OR_PARTITION; otherwise the group's error if any; then
//! metadata over `offset.metadata.max.bytes` is OFFSET_METADATA_TOO_LARGE.
//!
//! Cohort's count limits (POLICY_VIOLATION, decision 0113): a commit that would create a group
//! past `Config::groups_max` fails as a group error; a partition that would give the group an
//! offset past `Config::offsets_per_group_max` fails alone, after the checks above.

use crate::command::{CommitOffsets, CommitTopic};
use crate::config::Config;
use crate::group::Effects;
use crate::group::GroupState;
use crate::ids::{
    ApiVersion, Generation, GroupId, GroupInstanceId, MemberId, PartitionIndex, TimestampMs,
    TopicName,
};
use crate::index::transactions::TxnIndex;
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::record::offset_commit::OffsetCommitValue;
use crate::record::Record;
use crate::reply::{CommitResponse, ErrorKind, Reply, TopicResults};
use std::collections::BTreeSet;

/// From v9 a commit to an unknown group says so.
const GROUP_ID_NOT_FOUND_MIN_VERSION: i16 = 9;

/// Who commits: the group fields of an OffsetCommit or a TxnOffsetCommit.
pub(crate) struct Committer<'a> {
    pub(crate) api_version: ApiVersion,
    pub(crate) group_id: &'a GroupId,
    pub(crate) generation: Generation,
    pub(crate) member_id: &'a MemberId,
    pub(crate) group_instance_id: Option<&'a GroupInstanceId>,
    /// A TxnOffsetCommit: Kafka's `validateOffsetCommit(isTransactional = true)` accepts a
    /// commit with no member on a non-Empty group (producers before KIP-447) and during
    /// CompletingRebalance.
    pub(crate) transactional: bool,
}

impl<'a> Committer<'a> {
    fn of(c: &'a CommitOffsets) -> Committer<'a> {
        Committer {
            api_version: c.api_version,
            group_id: &c.group_id,
            generation: c.generation,
            member_id: &c.member_id,
            group_instance_id: c.group_instance_id.as_ref(),
            transactional: false,
        }
    }
}

/// What the group check decided: the member whose session the commit refreshes, if any.
pub(crate) fn validate(
    config: &Config,
    groups: &GroupIndex,
    c: &Committer<'_>,
) -> Result<Option<MemberId>, ErrorKind> {
    if c.group_id.as_str().len() > config.group_id_max_bytes {
        return Err(ErrorKind::InvalidGroupId);
    }
    if let Some(group) = groups.consumer_group(c.group_id.as_str()) {
        // `GenerationIdOrMemberEpoch` is the member epoch for a consumer-protocol group.
        crate::group::consumer::validate_offset_commit(
            group,
            c.member_id,
            c.generation.0,
            c.api_version,
            c.transactional,
        )?;
        return Ok(None);
    }
    let Some(group) = groups.classic_group(c.group_id) else {
        if c.generation.0 < 0 {
            // The commit creates a simple group.
            if groups.would_pass_groups_max(c.group_id.as_str(), config.groups_max) {
                return Err(ErrorKind::GroupsMaxReached);
            }
            return Ok(None);
        }
        return Err(if c.api_version.0 >= GROUP_ID_NOT_FOUND_MIN_VERSION {
            ErrorKind::GroupIdNotFound
        } else {
            ErrorKind::IllegalGeneration
        });
    };
    if c.generation.0 < 0 && group.state == GroupState::Empty {
        return Ok(None);
    }
    if c.generation.0 >= 0 || !c.member_id.is_empty() || c.group_instance_id.is_some() {
        group.validate_member(c.member_id, c.group_instance_id)?;
        if c.generation != group.generation {
            return Err(ErrorKind::IllegalGeneration);
        }
    } else if !c.transactional && group.state != GroupState::Empty {
        return Err(ErrorKind::UnknownMemberId);
    }
    match group.state {
        GroupState::CompletingRebalance if !c.transactional => Err(ErrorKind::RebalanceInProgress),
        GroupState::CompletingRebalance => Ok(None),
        GroupState::Stable | GroupState::PreparingRebalance => Ok(Some(c.member_id.clone())),
        GroupState::Empty | GroupState::Dead => Ok(None),
    }
}

/// The group's offset count as this commit grows it, against `Config::offsets_per_group_max`:
/// only a partition the group holds no offset for (and this commit did not already add)
/// counts, so a group at its limit can still move every offset it has.
struct OffsetCount<'a> {
    groups: &'a GroupIndex,
    group_id: &'a str,
    held: usize,
    added: BTreeSet<(&'a str, PartitionIndex)>,
    max: usize,
}

impl<'a> OffsetCount<'a> {
    fn new(config: &Config, groups: &'a GroupIndex, group_id: &'a GroupId) -> Self {
        OffsetCount {
            groups,
            group_id: group_id.as_str(),
            held: groups.group_offsets(group_id).map_or(0, |o| o.len()),
            added: BTreeSet::new(),
            max: config.offsets_per_group_max,
        }
    }

    /// Whether the group may hold an offset for the partition; counts it if new.
    fn admit(&mut self, topic: &'a str, partition: PartitionIndex) -> bool {
        if self.added.contains(&(topic, partition))
            || self.groups.has_offset(self.group_id, topic, partition)
        {
            return true;
        }
        if self.held.saturating_add(self.added.len()) >= self.max {
            return false;
        }
        self.added.insert((topic, partition));
        true
    }
}

/// UTF-16 units, as Java's `String.length()` counts them for `offset.metadata.max.bytes`.
fn metadata_len(metadata: &str) -> usize {
    metadata.encode_utf16().count()
}

pub(crate) fn decide(
    config: &Config,
    groups: &GroupIndex,
    txns: &TxnIndex,
    c: &CommitOffsets,
) -> Outcome {
    let group_check = validate(config, groups, &Committer::of(c));
    let mut fx = Effects::new(&c.group_id, c.now_ms, config);
    if let Ok(Some(member_id)) = &group_check {
        let session = groups
            .group(c.group_id.as_str())
            .and_then(|g| g.members.get(member_id).map(|m| m.session_timeout_ms));
        if let Some(session) = session {
            fx.set_heartbeat(member_id, session);
        }
    }
    let expire_timestamp =
        (c.retention_time_ms != -1).then(|| c.now_ms.plus_ms(c.retention_time_ms));
    let mut records = Vec::with_capacity(1);
    let topics = check_partitions(
        config,
        groups,
        &c.group_id,
        &c.topics,
        group_check.err(),
        c.now_ms,
        expire_timestamp,
        |topic, partition, value| {
            records.push(Record::OffsetCommit {
                group_id: c.group_id.clone(),
                topic,
                partition,
                value: Some(value),
            })
        },
    );
    if txns.group_has_pending(&c.group_id) {
        supersede(txns, &c.group_id, &mut records);
    }
    fx.finish_with_records(records, Reply::Commit(CommitResponse { topics }))
}

/// The per-partition checks of every commit, in Kafka's order: `accept` gets each partition
/// to store, the answer holds every partition's result.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_partitions(
    config: &Config,
    groups: &GroupIndex,
    group_id: &GroupId,
    topics: &[CommitTopic],
    group_error: Option<ErrorKind>,
    now: TimestampMs,
    expire_timestamp: Option<TimestampMs>,
    mut accept: impl FnMut(TopicName, PartitionIndex, OffsetCommitValue),
) -> TopicResults {
    let mut count = OffsetCount::new(config, groups, group_id);
    let mut results = Vec::with_capacity(topics.len());
    for topic in topics {
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for p in &topic.partitions {
            let metadata = p.metadata.as_deref().unwrap_or("");
            // No Kafka topic name is longer than 249 characters.
            let error = if !p.partition_known || topic.name.as_str().len() > config.field_max_bytes
            {
                Some(ErrorKind::UnknownTopicOrPartition)
            } else if let Some(error) = group_error {
                Some(error)
            } else if metadata_len(metadata) > config.offset_metadata_max_bytes {
                Some(ErrorKind::OffsetMetadataTooLarge)
            } else if !count.admit(topic.name.as_str(), p.partition) {
                Some(ErrorKind::OffsetsPerGroupMaxReached)
            } else {
                accept(
                    topic.name.clone(),
                    p.partition,
                    OffsetCommitValue {
                        offset: p.offset,
                        leader_epoch: p.leader_epoch,
                        metadata: metadata.to_owned(),
                        commit_timestamp: now,
                        expire_timestamp,
                    },
                );
                None
            };
            partitions.push((p.partition, error));
        }
        results.push((topic.name.clone(), partitions));
    }
    results
}

/// A plain commit applied while transactions hold pending offsets for the same partitions:
/// Kafka keeps whichever offset was written last, so those pending offsets are marked
/// superseded and their commit marker leaves this offset in place.
fn supersede(txns: &TxnIndex, group_id: &GroupId, records: &mut Vec<Record>) {
    let mut superseded = Vec::new();
    for (producer_id, pending) in txns.group_pending(group_id) {
        let mut next = pending.clone();
        let mut changed = false;
        for record in records.iter() {
            if let Record::OffsetCommit {
                topic, partition, ..
            } = record
            {
                if let Some(p) = next.offsets.get_mut(&(topic.clone(), *partition)) {
                    changed |= !p.superseded;
                    p.superseded = true;
                }
            }
        }
        if changed {
            superseded.push(Record::TxnOffsets {
                group_id: group_id.clone(),
                producer_id,
                value: Some(Box::new(next)),
            });
        }
    }
    records.append(&mut superseded);
}
