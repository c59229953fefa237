//! DeleteGroups (42), v0–v2: Empty groups are deleted with their offsets; others answer
//! NON_EMPTY_GROUP or GROUP_ID_NOT_FOUND per group.

use coordinator::{ApiVersion, DeleteGroups, GroupId, Reply};
use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::{DeleteGroupsRequest, DeleteGroupsResponse};

use super::group_common::{domain_code, failure_code, groups, str_bytes, unexpected};
use super::RequestContext;

/// Deletes each group, answering per group.
pub async fn handle(ctx: &RequestContext, req: DeleteGroupsRequest) -> DeleteGroupsResponse {
    let command = DeleteGroups {
        api_version: ApiVersion(ctx.version),
        now_ms: crate::clock::now(),
        group_ids: req
            .groups_names
            .iter()
            .map(|g| GroupId::new(g.0.as_str()))
            .collect(),
    };
    let result = match groups(ctx) {
        Ok(g) => {
            g.write(coordinator::WriteCommand::DeleteGroups(command))
                .await
        }
        Err(e) => Err(e),
    };
    let results = match result {
        Ok(Reply::DeleteGroups(r)) => r
            .into_iter()
            .map(|(g, r)| {
                DeletableGroupResult::default()
                    .with_group_id(kafka_protocol::messages::GroupId(str_bytes(
                        g.into_string(),
                    )))
                    .with_error_code(domain_code(ctx, r.err()))
            })
            .collect(),
        other => {
            let e = match other {
                Ok(reply) => unexpected(&reply),
                Err(e) => e,
            };
            return refused(&req, failure_code(ctx, &e));
        }
    };
    DeleteGroupsResponse::default().with_results(results)
}

/// The answer to a DeleteGroups the node could not serve (`code` for every group).
pub fn refused(req: &DeleteGroupsRequest, code: i16) -> DeleteGroupsResponse {
    let results = req
        .groups_names
        .iter()
        .map(|g| {
            DeletableGroupResult::default()
                .with_group_id(g.clone())
                .with_error_code(code)
        })
        .collect();
    DeleteGroupsResponse::default().with_results(results)
}
