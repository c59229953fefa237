//! JoinGroup (11), v0–v9. The response is held (parked) until the join phase completes; the
//! coordinator runtime completes it when a later command releases the members.

use coordinator::{ApiVersion, GroupId, JoinGroup, JoinProtocol, JoinResponse, MemberId, Reply};
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::{JoinGroupRequest, JoinGroupResponse};

use super::group_common::{
    client_host, domain_code, failure_code, groups, instance_id, str_bytes, to_str, unexpected,
};
use super::RequestContext;
use crate::group_coordinator::{self, GroupError};

/// Joins (or rejoins) the member to its group.
pub async fn handle(ctx: &RequestContext, req: JoinGroupRequest) -> JoinGroupResponse {
    let member_id = to_str(&req.member_id);
    let result = join(ctx, req).await;
    match result {
        Ok(r) => response(ctx, r),
        Err(e) => {
            let code = failure_code(ctx, &e);
            refused(ctx.version, code, member_id)
        }
    }
}

async fn join(ctx: &RequestContext, req: JoinGroupRequest) -> Result<JoinResponse, GroupError> {
    let groups = groups(ctx)?;
    let command = JoinGroup {
        api_version: ApiVersion(ctx.version),
        now_ms: crate::clock::now(),
        nonce: group_coordinator::nonce(),
        group_id: GroupId::new(req.group_id.0.as_str()),
        member_id: MemberId::new(req.member_id.as_str()),
        group_instance_id: instance_id(req.group_instance_id.as_ref()),
        session_timeout_ms: req.session_timeout_ms,
        rebalance_timeout_ms: if ctx.version >= 1 {
            req.rebalance_timeout_ms
        } else {
            req.session_timeout_ms
        },
        protocol_type: to_str(&req.protocol_type),
        protocols: req
            .protocols
            .into_iter()
            .map(|p| JoinProtocol {
                name: to_str(&p.name),
                metadata: p.metadata,
            })
            .collect(),
        client_id: ctx.client_id.clone(),
        client_host: client_host(ctx),
        reason: req.reason.as_ref().map(to_str),
    };
    let started = std::time::Instant::now();
    let reply = groups
        .write(coordinator::WriteCommand::JoinGroup(command))
        .await?;
    metrics::histogram!(group_coordinator::metrics::GROUP_WRITE_SECONDS, "api" => "JoinGroup")
        .record(started.elapsed().as_secs_f64());
    match reply {
        Reply::Join(r) => Ok(r),
        other => Err(unexpected(&other)),
    }
}

fn response(ctx: &RequestContext, r: JoinResponse) -> JoinGroupResponse {
    let v = ctx.version;
    let mut out = JoinGroupResponse::default()
        .with_error_code(domain_code(ctx, r.error))
        .with_generation_id(r.generation.0)
        .with_leader(str_bytes(r.leader.into_string()))
        .with_member_id(str_bytes(r.member_id.into_string()))
        .with_members(
            r.members
                .into_iter()
                .map(|m| {
                    JoinGroupResponseMember::default()
                        .with_member_id(str_bytes(m.member_id.into_string()))
                        .with_group_instance_id(
                            m.group_instance_id.map(|i| str_bytes(i.into_string())),
                        )
                        .with_metadata(m.metadata)
                })
                .collect(),
        );
    // The protocol name is nullable from v7 only; earlier versions carry "" instead.
    out = if v >= 7 {
        out.with_protocol_type(r.protocol_type.map(str_bytes))
            .with_protocol_name(r.protocol_name.map(str_bytes))
    } else {
        out.with_protocol_name(Some(str_bytes(r.protocol_name.unwrap_or_default())))
    };
    if v >= 9 {
        out = out.with_skip_assignment(r.skip_assignment);
    }
    out
}

/// The answer to a JoinGroup the node could not serve (`code`), at `version`.
pub fn refused(version: i16, code: i16, member_id: String) -> JoinGroupResponse {
    let out = JoinGroupResponse::default()
        .with_error_code(code)
        .with_generation_id(-1)
        .with_member_id(str_bytes(member_id));
    if version >= 7 {
        out
    } else {
        out.with_protocol_name(Some(str_bytes("")))
    }
}
