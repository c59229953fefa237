//! LeaveGroup (13), v0–v5: one member (v0–v2) or a batch with per-member answers (v3+).

use coordinator::{ApiVersion, GroupId, LeaveGroup, LeavingMember, MemberId, Reply};
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::{LeaveGroupRequest, LeaveGroupResponse};

use super::group_common::{
    domain_code, failure_code, groups, instance_id, str_bytes, to_str, unexpected,
};
use super::RequestContext;

/// Removes the members from their group.
pub async fn handle(ctx: &RequestContext, req: LeaveGroupRequest) -> LeaveGroupResponse {
    let members = if ctx.version >= 3 {
        req.members
            .iter()
            .map(|m| LeavingMember {
                member_id: MemberId::new(m.member_id.as_str()),
                group_instance_id: instance_id(m.group_instance_id.as_ref()),
                reason: m.reason.as_ref().map(to_str),
            })
            .collect()
    } else {
        vec![LeavingMember {
            member_id: MemberId::new(req.member_id.as_str()),
            group_instance_id: None,
            reason: None,
        }]
    };
    let command = LeaveGroup {
        api_version: ApiVersion(ctx.version),
        now_ms: crate::clock::now(),
        group_id: GroupId::new(req.group_id.0.as_str()),
        members,
    };
    let result = match groups(ctx) {
        Ok(g) => {
            g.write(coordinator::WriteCommand::LeaveGroup(command))
                .await
        }
        Err(e) => Err(e),
    };
    let resp = match result {
        Ok(Reply::Leave(r)) => r,
        Ok(other) => {
            let code = failure_code(ctx, &unexpected(&other));
            return LeaveGroupResponse::default().with_error_code(code);
        }
        Err(e) => return LeaveGroupResponse::default().with_error_code(failure_code(ctx, &e)),
    };
    if ctx.version < 3 {
        return LeaveGroupResponse::default()
            .with_error_code(domain_code(ctx, resp.single_error()));
    }
    let members = resp
        .members
        .into_iter()
        .map(|m| {
            MemberResponse::default()
                .with_member_id(str_bytes(m.member_id.into_string()))
                .with_group_instance_id(m.group_instance_id.map(|i| str_bytes(i.into_string())))
                .with_error_code(domain_code(ctx, m.error))
        })
        .collect();
    LeaveGroupResponse::default()
        .with_error_code(domain_code(ctx, resp.error))
        .with_members(members)
}
