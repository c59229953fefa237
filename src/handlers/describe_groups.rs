//! DescribeGroups (15), v0–v6. Below v6 unknown groups are Dead with no error (kafkajs
//! `setOffsets` relies on it); from v6 (KIP-1043) they are GROUP_ID_NOT_FOUND with Kafka's
//! message, "Group G not found.", and a consumer-protocol group, which DescribeGroups does not
//! describe, "Group G is not a classic group." (Kafka 4.x's `GroupMetadataManager`).
//! Authorized operations are Kafka's "not requested" value unless asked for (kafka-python's
//! admin fails on −1).

use std::collections::BTreeSet;

use coordinator::{
    ApiVersion, DescribeConsumerGroups, DescribeGroups, ErrorKind, GroupId, ReadCommand, Reply,
};
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::{DescribeGroupsRequest, DescribeGroupsResponse};

use super::group_common::{domain_code, failure_code, groups, str_bytes, unexpected};
use super::RequestContext;

/// Kafka's `authorized_operations` when the client did not ask for them.
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;
/// Without an authorizer every group operation is allowed: READ (3), DELETE (6), DESCRIBE (8).
pub const GROUP_OPERATIONS_ALL: i32 = (1 << 3) | (1 << 6) | (1 << 8);

/// Describes each group.
pub async fn handle(ctx: &RequestContext, req: DescribeGroupsRequest) -> DescribeGroupsResponse {
    let operations = operations(ctx.version, &req);
    let command = ReadCommand::DescribeGroups(DescribeGroups {
        api_version: ApiVersion(ctx.version),
        group_ids: req
            .groups
            .iter()
            .map(|g| GroupId::new(g.0.as_str()))
            .collect(),
    });
    let result = groups(ctx).and_then(|g| match g.read(&command)? {
        Reply::DescribeGroups(r) => Ok(r),
        other => Err(unexpected(&other)),
    });
    let groups_found = match result {
        Ok(groups) => groups,
        Err(e) => return refused(ctx.version, &req, failure_code(ctx, &e)),
    };
    let not_found: Vec<GroupId> = groups_found
        .iter()
        .filter(|g| g.error == Some(ErrorKind::GroupIdNotFound))
        .map(|g| g.group_id.clone())
        .collect();
    let consumer_groups = consumer_groups_among(ctx, not_found);
    let described = groups_found
        .into_iter()
        .map(|g| {
            let error_message = (g.error == Some(ErrorKind::GroupIdNotFound)).then(|| {
                if consumer_groups.contains(&g.group_id) {
                    format!("Group {} is not a classic group.", g.group_id.as_str())
                } else {
                    format!("Group {} not found.", g.group_id.as_str())
                }
            });
            let members = g
                .members
                .into_iter()
                .map(|m| {
                    DescribedGroupMember::default()
                        .with_member_id(str_bytes(m.member_id.into_string()))
                        .with_group_instance_id(
                            m.group_instance_id.map(|i| str_bytes(i.into_string())),
                        )
                        .with_client_id(str_bytes(m.client_id))
                        .with_client_host(str_bytes(m.client_host))
                        .with_member_metadata(m.metadata)
                        .with_member_assignment(m.assignment)
                })
                .collect();
            DescribedGroup::default()
                .with_error_code(domain_code(ctx, g.error))
                .with_error_message(error_message.map(str_bytes))
                .with_group_id(kafka_protocol::messages::GroupId(str_bytes(
                    g.group_id.into_string(),
                )))
                .with_group_state(str_bytes(g.state.as_str()))
                .with_protocol_type(str_bytes(g.protocol_type))
                .with_protocol_data(str_bytes(g.protocol_data))
                .with_members(members)
                .with_authorized_operations(operations)
        })
        .collect();
    DescribeGroupsResponse::default().with_groups(described)
}

/// Which of `group_ids` (groups DescribeGroups did not find) are consumer-protocol groups, for
/// Kafka's message. Asked only for groups not found, which from v6 only; a failed read names
/// none (the code is right either way, only the message is less precise).
fn consumer_groups_among(ctx: &RequestContext, group_ids: Vec<GroupId>) -> BTreeSet<GroupId> {
    if group_ids.is_empty() {
        return BTreeSet::new();
    }
    let command = ReadCommand::DescribeConsumerGroups(DescribeConsumerGroups {
        api_version: ApiVersion(0),
        group_ids,
    });
    match groups(ctx).and_then(|g| g.read(&command)) {
        Ok(Reply::DescribeConsumerGroups(described)) => described
            .into_iter()
            .filter(|g| g.error.is_none())
            .map(|g| g.group_id)
            .collect(),
        _ => BTreeSet::new(),
    }
}

fn operations(version: i16, req: &DescribeGroupsRequest) -> i32 {
    if version >= 3 && req.include_authorized_operations {
        GROUP_OPERATIONS_ALL
    } else {
        AUTHORIZED_OPERATIONS_OMITTED
    }
}

/// The answer to a DescribeGroups the node could not serve (`code` in every group), at
/// `version`.
pub fn refused(version: i16, req: &DescribeGroupsRequest, code: i16) -> DescribeGroupsResponse {
    let operations = operations(version, req);
    let groups = req
        .groups
        .iter()
        .map(|g| {
            DescribedGroup::default()
                .with_error_code(code)
                .with_group_id(g.clone())
                .with_authorized_operations(operations)
        })
        .collect();
    DescribeGroupsResponse::default().with_groups(groups)
}
