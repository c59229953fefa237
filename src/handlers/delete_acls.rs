//! DeleteAcls (31), v1–v3: every ACL any filter matches removed from the replicated state;
//! each filter answered with the ACLs it matched (Kafka's `AclApis.handleDeleteAcls` and
//! `AclControlManager.deleteAcls`: an ACL two filters match is listed by both).
//!
//! ALTER on the CLUSTER is required (else every filter answers CLUSTER_AUTHORIZATION_FAILED);
//! without `--authorizer acl`, SECURITY_DISABLED; a filter with an UNKNOWN part answers
//! INVALID_REQUEST and removes nothing, the others are applied.

use kafka_protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use kafka_protocol::messages::{DeleteAclsRequest, DeleteAclsResponse};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;
use raft_meta::cohort_app::AclBinding;

use super::acl_common::{
    filter, pattern_code, permission_code, writable, WireAclFilter, WireFilter,
};
use super::RequestContext;
use crate::errors::code_and_message;
use crate::replicated::acls::ReplicatedAcls;

fn failed(ctx: &RequestContext, code: ErrorCode, message: String) -> DeleteAclsFilterResult {
    DeleteAclsFilterResult::default()
        .with_error_code(ctx.error(code))
        .with_error_message(Some(StrBytes::from_string(message)))
}

fn matching(acl: &AclBinding) -> DeleteAclsMatchingAcl {
    DeleteAclsMatchingAcl::default()
        .with_error_message(None)
        .with_resource_type(acl.resource_type.code())
        .with_resource_name(StrBytes::from_string(acl.name.clone()))
        .with_pattern_type(pattern_code(acl.pattern))
        .with_principal(StrBytes::from_string(acl.principal.clone()))
        .with_host(StrBytes::from_string(acl.host.clone()))
        .with_operation(acl.operation.code())
        .with_permission_type(permission_code(acl.permission))
}

/// Deletes what the filters match.
pub async fn handle(ctx: &RequestContext, req: DeleteAclsRequest) -> DeleteAclsResponse {
    let all = |code: ErrorCode, message: String| {
        let results = req
            .filters
            .iter()
            .map(|_| failed(ctx, code, message.clone()))
            .collect();
        DeleteAclsResponse::default().with_filter_results(results)
    };
    let groups = match writable(ctx) {
        Ok(groups) => groups,
        Err((code, message)) => return all(code, message),
    };
    let checked: Vec<Result<WireFilter, String>> = req
        .filters
        .iter()
        .map(|f| {
            filter(&WireAclFilter {
                resource_type: f.resource_type_filter,
                name: f.resource_name_filter.as_deref(),
                pattern: f.pattern_type_filter,
                principal: f.principal_filter.as_deref(),
                host: f.host_filter.as_deref(),
                operation: f.operation,
                permission: f.permission_type,
            })
        })
        .collect();
    let valid: Vec<_> = checked
        .iter()
        .filter_map(|c| match c {
            Ok(WireFilter::Filter(f)) => Some(f.clone()),
            _ => None,
        })
        .collect();
    let applied = if valid.is_empty() {
        Ok(Vec::new())
    } else {
        ReplicatedAcls::new(groups.node().clone())
            .delete(valid)
            .await
            .map_err(code_and_message)
    };
    let mut answers = match &applied {
        Ok(removed) => removed.iter(),
        Err(_) => [].iter(),
    };
    let results = checked
        .into_iter()
        .map(|c| match (c, &applied) {
            (Err(message), _) => failed(ctx, ErrorCode::InvalidRequest, message),
            (Ok(WireFilter::Nothing), _) => {
                DeleteAclsFilterResult::default().with_error_message(None)
            }
            (Ok(WireFilter::Filter(_)), Err((code, message))) => {
                failed(ctx, *code, message.clone())
            }
            (Ok(WireFilter::Filter(_)), Ok(_)) => match answers.next() {
                Some(removed) => DeleteAclsFilterResult::default()
                    .with_error_message(None)
                    .with_matching_acls(removed.iter().map(matching).collect()),
                None => failed(
                    ctx,
                    ErrorCode::UnknownServerError,
                    "the replicated state answered fewer filters than asked".to_owned(),
                ),
            },
        })
        .collect();
    DeleteAclsResponse::default().with_filter_results(results)
}
