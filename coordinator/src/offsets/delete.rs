//! OffsetDelete v0 (KIP-496) and the removal of a deleted topic's offsets.

use crate::command::DeleteOffsets;
use crate::config::Config;
use crate::group::invalid_member_api_group_id;
use crate::group::GroupState;
use crate::ids::TopicName;
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::record::Record;
use crate::reply::{DeleteOffsetsResponse, ErrorKind, Reply};

pub(crate) fn decide(config: &Config, groups: &GroupIndex, c: &DeleteOffsets) -> Outcome {
    let fail = |error| {
        Outcome::reply(Reply::DeleteOffsets(DeleteOffsetsResponse {
            error: Some(error),
            topics: Vec::new(),
        }))
    };
    if invalid_member_api_group_id(config, &c.group_id) {
        return fail(ErrorKind::InvalidGroupId);
    }
    if let Some(group) = groups.consumer_group(c.group_id.as_str()) {
        // Kafka's ConsumerGroup.validateOffsetDelete accepts any state; a subscribed topic's
        // offsets stay.
        return delete_unless(groups, c, |topic| {
            crate::group::consumer::is_subscribed_to(group, topic)
        });
    }
    let Some(group) = groups.classic_group(&c.group_id) else {
        return fail(ErrorKind::GroupIdNotFound);
    };
    // A consumer group's members say which topics they use; other non-empty groups cannot.
    if group.state != GroupState::Empty && !group.uses_consumer_protocol() {
        return fail(ErrorKind::NonEmptyGroup);
    }
    let subscribed = group.subscribed_topics();
    delete_unless(groups, c, |topic| {
        group.is_subscribed_to(topic, subscribed.as_ref())
    })
}

/// Tombstones the requested offsets of every known topic the group does not use.
fn delete_unless(
    groups: &GroupIndex,
    c: &DeleteOffsets,
    subscribed: impl Fn(&str) -> bool,
) -> Outcome {
    let offsets = groups.group_offsets(&c.group_id);
    let mut records = Vec::new();
    let mut topics = Vec::with_capacity(c.topics.len());
    for topic in &c.topics {
        let error = if !topic.topic_known {
            Some(ErrorKind::UnknownTopicOrPartition)
        } else if subscribed(topic.name.as_str()) {
            Some(ErrorKind::GroupSubscribedToTopic)
        } else {
            None
        };
        let mut partitions = Vec::with_capacity(topic.partitions.len());
        for &partition in &topic.partitions {
            let exists =
                offsets.is_some_and(|o| o.contains(&groups.topics, topic.name.as_str(), partition));
            if error.is_none() && exists {
                records.push(Record::OffsetCommit {
                    group_id: c.group_id.clone(),
                    topic: topic.name.clone(),
                    partition,
                    value: None,
                });
            }
            partitions.push((partition, error));
        }
        topics.push((topic.name.clone(), partitions));
    }
    Outcome {
        records,
        reply: Reply::DeleteOffsets(DeleteOffsetsResponse {
            error: None,
            topics,
        }),
        member_replies: Vec::new(),
        timers: Vec::new(),
        assignments: Vec::new(),
        txn_markers: Vec::new(),
    }
}

/// Tombstones every group's offsets for the deleted topics.
pub(crate) fn topics_deleted(groups: &GroupIndex, topics: &[TopicName]) -> Outcome {
    let mut records = Vec::new();
    for (group_id, entry) in groups.table.iter() {
        for topic in topics {
            for (partition, _) in entry.offsets.topic_iter(&groups.topics, topic.as_str()) {
                records.push(Record::OffsetCommit {
                    group_id: group_id.into(),
                    topic: topic.clone(),
                    partition,
                    value: None,
                });
            }
        }
    }
    Outcome {
        records,
        reply: Reply::Done,
        member_replies: Vec::new(),
        timers: Vec::new(),
        assignments: Vec::new(),
        txn_markers: Vec::new(),
    }
}
