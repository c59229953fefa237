//! DescribeAcls (29), v1–v3: the ACLs a filter matches, from this node's applied state,
//! grouped by resource pattern (Kafka's `AclApis.handleDescribeAcls` and
//! `DescribeAclsResponse.aclsResources`).
//!
//! DESCRIBE on the CLUSTER is required (else CLUSTER_AUTHORIZATION_FAILED); without
//! `--authorizer acl`, SECURITY_DISABLED; a filter with an UNKNOWN part, INVALID_REQUEST.

use kafka_protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use kafka_protocol::messages::{DescribeAclsRequest, DescribeAclsResponse};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;
use raft_meta::cohort_app::AclBinding;

use super::acl_common::{filter, gate, pattern_code, permission_code, WireAclFilter, WireFilter};
use super::RequestContext;
use crate::replicated::acls::ReplicatedAcls;

/// `acls` (sorted by resource) as DescribeAcls resources.
pub fn resources(acls: &[AclBinding]) -> Vec<DescribeAclsResource> {
    let mut out: Vec<DescribeAclsResource> = Vec::new();
    for acl in acls {
        let description = AclDescription::default()
            .with_principal(StrBytes::from_string(acl.principal.clone()))
            .with_host(StrBytes::from_string(acl.host.clone()))
            .with_operation(acl.operation.code())
            .with_permission_type(permission_code(acl.permission));
        let same = out.last().is_some_and(|r| {
            r.resource_type == acl.resource_type.code()
                && r.resource_name.as_str() == acl.name
                && r.pattern_type == pattern_code(acl.pattern)
        });
        match out.last_mut() {
            Some(r) if same => r.acls.push(description),
            _ => out.push(
                DescribeAclsResource::default()
                    .with_resource_type(acl.resource_type.code())
                    .with_resource_name(StrBytes::from_string(acl.name.clone()))
                    .with_pattern_type(pattern_code(acl.pattern))
                    .with_acls(vec![description]),
            ),
        }
    }
    out
}

/// Describes the ACLs the filter matches.
pub async fn handle(ctx: &RequestContext, req: DescribeAclsRequest) -> DescribeAclsResponse {
    let fail = |code: ErrorCode, message: String| {
        DescribeAclsResponse::default()
            .with_error_code(ctx.error(code))
            .with_error_message(Some(StrBytes::from_string(message)))
    };
    if let Err((code, message)) = gate(ctx) {
        // Kafka words this one differently from Create/DeleteAcls.
        let message = if code == ErrorCode::SecurityDisabled {
            "No Authorizer is configured on the broker".to_owned()
        } else {
            message
        };
        return fail(code, message);
    }
    let wire = WireAclFilter {
        resource_type: req.resource_type_filter,
        name: req.resource_name_filter.as_deref(),
        pattern: req.pattern_type_filter,
        principal: req.principal_filter.as_deref(),
        host: req.host_filter.as_deref(),
        operation: req.operation,
        permission: req.permission_type,
    };
    let f = match filter(&wire) {
        Ok(WireFilter::Filter(f)) => f,
        Ok(WireFilter::Nothing) => return DescribeAclsResponse::default().with_error_message(None),
        Err(message) => return fail(ErrorCode::InvalidRequest, message),
    };
    let Some(groups) = &ctx.broker.groups else {
        return fail(
            ErrorCode::CoordinatorNotAvailable,
            "the replicated state is not running".to_owned(),
        );
    };
    let acls = ReplicatedAcls::new(groups.node().clone()).read(|t| t.describe(&f));
    // Kafka sends a null message with no error (the crate's default is "").
    DescribeAclsResponse::default()
        .with_error_message(None)
        .with_resources(resources(&acls))
}
