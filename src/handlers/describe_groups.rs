//! DescribeGroups (15), v0–v5. Unknown groups are Dead with no error (kafkajs `setOffsets`
//! relies on it); authorized operations are Kafka's "not requested" value unless asked for
//! (kafka-python's admin fails on −1).

use coordinator::{ApiVersion, DescribeGroups, GroupId, ReadCommand, Reply};
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
    let described = match result {
        Ok(groups) => groups
            .into_iter()
            .map(|g| {
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
                    .with_group_id(kafka_protocol::messages::GroupId(str_bytes(
                        g.group_id.into_string(),
                    )))
                    .with_group_state(str_bytes(g.state.as_str()))
                    .with_protocol_type(str_bytes(g.protocol_type))
                    .with_protocol_data(str_bytes(g.protocol_data))
                    .with_members(members)
                    .with_authorized_operations(operations)
            })
            .collect(),
        Err(e) => return refused(ctx.version, &req, failure_code(ctx, &e)),
    };
    DescribeGroupsResponse::default().with_groups(described)
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
