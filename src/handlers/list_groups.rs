//! ListGroups (16), v0–v5: the groups this node coordinates. A follower coordinates none and
//! answers an empty list without error, so `--list` over every broker works on a cluster.

use coordinator::{ApiVersion, ListGroups, ReadCommand, Reply};
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::{ListGroupsRequest, ListGroupsResponse};

use super::group_common::{failure_code, groups, str_bytes, to_str, unexpected};
use super::RequestContext;
use crate::group_coordinator::GroupError;

/// Lists the groups, filtered by state (v4+) and type (v5+).
pub async fn handle(ctx: &RequestContext, req: ListGroupsRequest) -> ListGroupsResponse {
    let command = ReadCommand::ListGroups(ListGroups {
        api_version: ApiVersion(ctx.version),
        states_filter: if ctx.version >= 4 {
            req.states_filter.iter().map(to_str).collect()
        } else {
            Vec::new()
        },
        types_filter: if ctx.version >= 5 {
            req.types_filter.iter().map(to_str).collect()
        } else {
            Vec::new()
        },
    });
    let result = groups(ctx).and_then(|g| match g.read(&command)? {
        Reply::ListGroups(r) => Ok(r),
        other => Err(unexpected(&other)),
    });
    match result {
        Ok(listed) => ListGroupsResponse::default().with_groups(
            listed
                .into_iter()
                .map(|g| {
                    ListedGroup::default()
                        .with_group_id(kafka_protocol::messages::GroupId(str_bytes(
                            g.group_id.into_string(),
                        )))
                        .with_protocol_type(str_bytes(g.protocol_type))
                        .with_group_state(str_bytes(g.state_name))
                        .with_group_type(str_bytes(g.group_type))
                })
                .collect(),
        ),
        Err(GroupError::NotCoordinator) => ListGroupsResponse::default(),
        Err(e) => ListGroupsResponse::default().with_error_code(failure_code(ctx, &e)),
    }
}
