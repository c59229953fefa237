//! ConsumerGroupDescribe v0–v1 (read-only, from applied state) and the consumer groups'
//! lines of ListGroups.

use crate::assignor;
use crate::command::DescribeConsumerGroups;
use crate::config::Config;
use crate::group::consumer::state;
use crate::index::topics::TopicImage;
use crate::index::GroupIndex;
use crate::outcome::ReadOutcome;
use crate::record::assignment::Assignment;
use crate::reply::{
    ConsumerGroupState, DescribedConsumerGroup, DescribedConsumerMember, DescribedTopicPartitions,
    ErrorKind, Reply,
};

fn topics_of(a: &Assignment, image: &TopicImage) -> Vec<DescribedTopicPartitions> {
    a.topics()
        .map(|(id, partitions)| DescribedTopicPartitions {
            topic_id: id,
            topic_name: image
                .name_of(id)
                .map(|n| n.as_str().to_owned())
                .unwrap_or_default(),
            partitions: partitions.to_vec(),
        })
        .collect()
}

pub(crate) fn read(
    config: &Config,
    groups: &GroupIndex,
    c: &DescribeConsumerGroups,
) -> ReadOutcome {
    let described = c
        .group_ids
        .iter()
        .map(|group_id| {
            let missing = |message: String| DescribedConsumerGroup {
                group_id: group_id.clone(),
                error: Some(ErrorKind::GroupIdNotFound),
                error_message: Some(message),
                state: ConsumerGroupState::Dead,
                group_epoch: 0,
                assignment_epoch: 0,
                assignor_name: String::new(),
                members: Vec::new(),
            };
            if group_id.as_str().len() > config.group_id_max_bytes {
                return DescribedConsumerGroup {
                    error: Some(ErrorKind::InvalidGroupId),
                    error_message: None,
                    ..missing(String::new())
                };
            }
            let Some(group) = groups.consumer_group(group_id.as_str()) else {
                let message = if groups.table.get(group_id.as_str()).is_some() {
                    format!("Group {group_id} is not a consumer group.")
                } else {
                    format!("Group {group_id} not found.")
                };
                return missing(message);
            };
            let image = &groups.topic_image;
            DescribedConsumerGroup {
                group_id: group_id.clone(),
                error: None,
                error_message: None,
                state: state(group),
                group_epoch: group.group_epoch(),
                assignment_epoch: group.assignment_epoch(),
                assignor_name: crate::group::consumer::preferred_assignor(
                    group,
                    assignor::ASSIGNOR_NAMES[0],
                )
                .to_owned(),
                members: group
                    .members
                    .iter()
                    .map(|(id, m)| {
                        let current = group.current_of(id);
                        DescribedConsumerMember {
                            member_id: id.clone(),
                            instance_id: m.instance_id.clone(),
                            rack_id: m.rack_id.clone(),
                            member_epoch: current.member_epoch,
                            client_id: m.client_id.clone(),
                            client_host: m.client_host.clone(),
                            subscribed_topic_names: m.subscribed_topic_names.clone(),
                            subscribed_topic_regex: m.subscribed_topic_regex.clone(),
                            assignment: topics_of(&current.assigned, image),
                            target_assignment: topics_of(group.target_of(id), image),
                            uses_classic_protocol: m.classic.is_some(),
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    ReadOutcome {
        reply: Reply::DescribeConsumerGroups(described),
        timers: Vec::new(),
    }
}
