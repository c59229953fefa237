//! CreateAcls (30), v1–v3: ACLs added to the cluster's replicated state (Kafka's
//! `AclApis.handleCreateAcls` and `AclControlManager.createAcls`).
//!
//! ALTER on the CLUSTER is required (else every creation answers CLUSTER_AUTHORIZATION_FAILED);
//! without `--authorizer acl`, SECURITY_DISABLED. Each creation is checked (INVALID_REQUEST with
//! Kafka's message) and the valid ones go to Raft in one command; an ACL already there is a
//! success. Answers are in request order.

use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::{CreateAclsRequest, CreateAclsResponse};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::acl_common::{new_acl, writable, WireAcl};
use super::RequestContext;
use crate::errors::code_and_message;
use crate::replicated::acls::ReplicatedAcls;

fn failed(ctx: &RequestContext, code: ErrorCode, message: String) -> AclCreationResult {
    AclCreationResult::default()
        .with_error_code(ctx.error(code))
        .with_error_message(Some(StrBytes::from_string(message)))
}

/// Creates the ACLs asked for.
pub async fn handle(ctx: &RequestContext, req: CreateAclsRequest) -> CreateAclsResponse {
    let all = |code: ErrorCode, message: String| {
        let results = req
            .creations
            .iter()
            .map(|_| failed(ctx, code, message.clone()))
            .collect();
        CreateAclsResponse::default().with_results(results)
    };
    let groups = match writable(ctx) {
        Ok(groups) => groups,
        Err((code, message)) => return all(code, message),
    };
    let checked: Vec<Result<_, String>> = req
        .creations
        .iter()
        .map(|c| {
            new_acl(&WireAcl {
                resource_type: c.resource_type,
                name: c.resource_name.as_str(),
                pattern: c.resource_pattern_type,
                principal: c.principal.as_str(),
                host: c.host.as_str(),
                operation: c.operation,
                permission: c.permission_type,
            })
        })
        .collect();
    let valid: Vec<_> = checked
        .iter()
        .filter_map(|c| c.as_ref().ok())
        .cloned()
        .collect();
    let applied = if valid.is_empty() {
        Ok(Vec::new())
    } else {
        ReplicatedAcls::new(groups.node().clone())
            .create(valid)
            .await
            .map_err(code_and_message)
    };
    let mut answers = match &applied {
        Ok(results) => results.iter(),
        Err(_) => [].iter(),
    };
    let results = checked
        .into_iter()
        .map(|c| match (c, &applied) {
            (Err(message), _) => failed(ctx, ErrorCode::InvalidRequest, message),
            (Ok(_), Err((code, message))) => failed(ctx, *code, message.clone()),
            (Ok(_), Ok(_)) => match answers.next() {
                // Kafka sends a null message with no error (the crate's default is "").
                Some(Ok(())) => AclCreationResult::default().with_error_message(None),
                Some(Err(message)) => failed(ctx, ErrorCode::InvalidRequest, message.clone()),
                None => failed(
                    ctx,
                    ErrorCode::UnknownServerError,
                    "the replicated state answered fewer ACLs than asked".to_owned(),
                ),
            },
        })
        .collect();
    CreateAclsResponse::default().with_results(results)
}
