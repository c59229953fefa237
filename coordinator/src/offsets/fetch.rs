//! OffsetFetch v1–v9: read-only, from applied state. An unknown group is not an error:
//! requested partitions come back with offset −1, an all-topics request with nothing. With
//! `require_stable` (v7+, KIP-447) a partition a transaction holds an uncompleted offset for
//! answers UNSTABLE_OFFSET_COMMIT with offset −1, so the consumer waits for the transaction.

use crate::command::FetchOffsets;
use crate::config::Config;
use crate::ids::{LeaderEpoch, Offset, PartitionIndex};
use crate::index::transactions::TxnIndex;
use crate::index::GroupIndex;
use crate::outcome::ReadOutcome;
use crate::record::offset_commit::OffsetCommitValue;
use crate::reply::{ErrorKind, FetchResponse, FetchedGroup, FetchedPartition, FetchedTopic, Reply};

pub(crate) fn read(
    config: &Config,
    groups: &GroupIndex,
    txns: &TxnIndex,
    c: &FetchOffsets,
) -> ReadOutcome {
    let groups = c
        .groups
        .iter()
        .map(|request| {
            if request.group_id.as_str().len() > config.group_id_max_bytes {
                return FetchedGroup {
                    group_id: request.group_id.clone(),
                    error: Some(ErrorKind::InvalidGroupId),
                    topics: Vec::new(),
                };
            }
            if let Some(group) = groups.consumer_group(request.group_id.as_str()) {
                if let Err(error) = crate::group::consumer::validate_offset_fetch(
                    group,
                    request.member_id.as_ref().filter(|m| !m.is_empty()),
                    request.member_epoch,
                ) {
                    return FetchedGroup {
                        group_id: request.group_id.clone(),
                        error: Some(error),
                        topics: Vec::new(),
                    };
                }
            }
            let offsets = groups.group_offsets(&request.group_id);
            let mut topics: Vec<FetchedTopic> = match &request.topics {
                None => offsets
                    .map(|o| {
                        o.topic_names(&groups.topics)
                            .into_iter()
                            .map(|name| FetchedTopic {
                                partitions: o
                                    .topic_iter(&groups.topics, name.as_str())
                                    .map(|(partition, v)| committed(partition, v))
                                    .collect(),
                                name,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                Some(topics) => topics
                    .iter()
                    .map(|t| {
                        let mut partitions = Vec::with_capacity(t.partitions.len());
                        let mut push = |partition, value: Option<OffsetCommitValue>| {
                            partitions.push(match value {
                                Some(v) => committed(partition, v),
                                None => uncommitted(partition, None),
                            })
                        };
                        match offsets {
                            Some(o) => o.values_of(
                                &groups.topics,
                                t.name.as_str(),
                                &t.partitions,
                                &mut push,
                            ),
                            None => t.partitions.iter().for_each(|&p| push(p, None)),
                        }
                        FetchedTopic {
                            name: t.name.clone(),
                            partitions,
                        }
                    })
                    .collect(),
            };
            if c.require_stable && txns.group_has_pending(&request.group_id) {
                for topic in &mut topics {
                    for p in &mut topic.partitions {
                        if txns.has_pending(&request.group_id, topic.name.as_str(), p.partition) {
                            *p = uncommitted(p.partition, Some(ErrorKind::UnstableOffsetCommit));
                        }
                    }
                }
            }
            FetchedGroup {
                group_id: request.group_id.clone(),
                error: None,
                topics,
            }
        })
        .collect();
    ReadOutcome {
        reply: Reply::Fetch(FetchResponse { groups }),
        timers: Vec::new(),
    }
}

fn committed(partition: PartitionIndex, v: OffsetCommitValue) -> FetchedPartition {
    FetchedPartition {
        partition,
        offset: v.offset,
        leader_epoch: v.leader_epoch,
        metadata: v.metadata,
        error: None,
    }
}

/// Offset −1, leader epoch −1, metadata "": no committed offset to show.
fn uncommitted(partition: PartitionIndex, error: Option<ErrorKind>) -> FetchedPartition {
    FetchedPartition {
        partition,
        offset: Offset::NONE,
        leader_epoch: LeaderEpoch::NONE,
        metadata: String::new(),
        error,
    }
}
