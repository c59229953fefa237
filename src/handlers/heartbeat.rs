//! Heartbeat (12), v0–v4: leader soft state only (no Raft write): validated against applied
//! state, then the member's session timer is re-armed.

use coordinator::{ApiVersion, Generation, GroupId, Heartbeat, MemberId, Reply};
use kafka_protocol::messages::{HeartbeatRequest, HeartbeatResponse};

use super::group_common::{domain_code, failure_code, groups, instance_id, unexpected};
use super::RequestContext;

/// Answers a member's heartbeat.
pub async fn handle(ctx: &RequestContext, req: HeartbeatRequest) -> HeartbeatResponse {
    let command = Heartbeat {
        api_version: ApiVersion(ctx.version),
        now_ms: crate::clock::now(),
        group_id: GroupId::new(req.group_id.0.as_str()),
        generation: Generation(req.generation_id),
        member_id: MemberId::new(req.member_id.as_str()),
        group_instance_id: instance_id(req.group_instance_id.as_ref()),
    };
    let result = match groups(ctx) {
        Ok(g) => g.heartbeat(command).await,
        Err(e) => Err(e),
    };
    let code = match result {
        Ok(Reply::Heartbeat(r)) => domain_code(ctx, r.err()),
        Ok(other) => failure_code(ctx, &unexpected(&other)),
        Err(e) => failure_code(ctx, &e),
    };
    HeartbeatResponse::default().with_error_code(code)
}
