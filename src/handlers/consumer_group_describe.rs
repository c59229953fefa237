//! ConsumerGroupDescribe (69), v0–v1: consumer groups (KIP-848) as their coordinator holds
//! them. A classic group or an unknown id answers GROUP_ID_NOT_FOUND, as Kafka does.

use coordinator::{
    ApiVersion, DescribeConsumerGroups, DescribedTopicPartitions, GroupId, ReadCommand, Reply,
};
use kafka_protocol::messages::consumer_group_describe_response::{
    Assignment, DescribedGroup, Member, TopicPartitions,
};
use kafka_protocol::messages::{ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse};

use super::describe_groups::{AUTHORIZED_OPERATIONS_OMITTED, GROUP_OPERATIONS_ALL};
use super::group_common::{domain_code, failure_code, groups, str_bytes, unexpected};
use super::RequestContext;

/// v1 `MemberType`: 0 a classic member of the group, 1 a consumer-protocol member.
const MEMBER_TYPE_CLASSIC: i8 = 0;
const MEMBER_TYPE_CONSUMER: i8 = 1;

/// Describes each consumer group.
pub async fn handle(
    ctx: &RequestContext,
    req: ConsumerGroupDescribeRequest,
) -> ConsumerGroupDescribeResponse {
    let operations = if req.include_authorized_operations {
        GROUP_OPERATIONS_ALL
    } else {
        AUTHORIZED_OPERATIONS_OMITTED
    };
    let command = ReadCommand::DescribeConsumerGroups(DescribeConsumerGroups {
        api_version: ApiVersion(ctx.version),
        group_ids: req
            .group_ids
            .iter()
            .map(|g| GroupId::new(g.0.as_str()))
            .collect(),
    });
    let result = groups(ctx).and_then(|g| match g.read(&command)? {
        Reply::DescribeConsumerGroups(r) => Ok(r),
        other => Err(unexpected(&other)),
    });
    let described = match result {
        Ok(described) => described
            .into_iter()
            .map(|g| {
                let members = g
                    .members
                    .into_iter()
                    .map(|m| {
                        Member::default()
                            .with_member_id(str_bytes(m.member_id.into_string()))
                            .with_instance_id(m.instance_id.map(|i| str_bytes(i.into_string())))
                            .with_rack_id(m.rack_id.map(str_bytes))
                            .with_member_epoch(m.member_epoch)
                            .with_client_id(str_bytes(m.client_id))
                            .with_client_host(str_bytes(m.client_host))
                            .with_subscribed_topic_names(
                                m.subscribed_topic_names
                                    .into_iter()
                                    .map(|t| {
                                        kafka_protocol::messages::TopicName(str_bytes(
                                            t.as_str().to_owned(),
                                        ))
                                    })
                                    .collect(),
                            )
                            .with_subscribed_topic_regex(m.subscribed_topic_regex.map(str_bytes))
                            .with_assignment(assignment(m.assignment))
                            .with_target_assignment(assignment(m.target_assignment))
                            .with_member_type(if m.uses_classic_protocol {
                                MEMBER_TYPE_CLASSIC
                            } else {
                                MEMBER_TYPE_CONSUMER
                            })
                    })
                    .collect();
                DescribedGroup::default()
                    .with_error_code(domain_code(ctx, g.error))
                    .with_error_message(g.error_message.map(str_bytes))
                    .with_group_id(kafka_protocol::messages::GroupId(str_bytes(
                        g.group_id.into_string(),
                    )))
                    .with_group_state(str_bytes(g.state.as_str()))
                    .with_group_epoch(g.group_epoch)
                    .with_assignment_epoch(g.assignment_epoch)
                    .with_assignor_name(str_bytes(g.assignor_name))
                    .with_members(members)
                    .with_authorized_operations(operations)
            })
            .collect(),
        Err(e) => {
            let code = failure_code(ctx, &e);
            req.group_ids
                .into_iter()
                .map(|id| {
                    DescribedGroup::default()
                        .with_error_code(code)
                        .with_group_id(id)
                        .with_authorized_operations(operations)
                })
                .collect()
        }
    };
    ConsumerGroupDescribeResponse::default().with_groups(described)
}

fn assignment(topics: Vec<DescribedTopicPartitions>) -> Assignment {
    Assignment::default().with_topic_partitions(
        topics
            .into_iter()
            .map(|t| {
                TopicPartitions::default()
                    .with_topic_id(uuid::Uuid::from_u128(t.topic_id.0))
                    .with_topic_name(kafka_protocol::messages::TopicName(str_bytes(t.topic_name)))
                    .with_partitions(t.partitions.into_iter().map(|p| p.0).collect())
            })
            .collect(),
    )
}
