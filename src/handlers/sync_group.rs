//! SyncGroup (14), v0–v5. Followers' requests are parked until the leader's assignment is
//! committed; the leader's own request is answered by the command that stores it.

use coordinator::{
    ApiVersion, Generation, GroupId, MemberId, Reply, SyncAssignment, SyncGroup, SyncResponse,
};
use kafka_protocol::messages::{SyncGroupRequest, SyncGroupResponse};

use super::group_common::{
    domain_code, failure_code, groups, instance_id, str_bytes, to_str, unexpected,
};
use super::RequestContext;
use crate::group_coordinator::{self, GroupError};

/// Syncs the member: stores the leader's assignment or waits for it.
pub async fn handle(ctx: &RequestContext, req: SyncGroupRequest) -> SyncGroupResponse {
    match sync(ctx, req).await {
        Ok(r) => {
            let mut out = SyncGroupResponse::default()
                .with_error_code(domain_code(ctx, r.error))
                .with_assignment(r.assignment);
            if ctx.version >= 5 {
                out = out
                    .with_protocol_type(r.protocol_type.map(str_bytes))
                    .with_protocol_name(r.protocol_name.map(str_bytes));
            }
            out
        }
        Err(e) => SyncGroupResponse::default().with_error_code(failure_code(ctx, &e)),
    }
}

async fn sync(ctx: &RequestContext, req: SyncGroupRequest) -> Result<SyncResponse, GroupError> {
    let groups = groups(ctx)?;
    let command = SyncGroup {
        api_version: ApiVersion(ctx.version),
        now_ms: crate::clock::now(),
        group_id: GroupId::new(req.group_id.0.as_str()),
        generation: Generation(req.generation_id),
        member_id: MemberId::new(req.member_id.as_str()),
        group_instance_id: instance_id(req.group_instance_id.as_ref()),
        protocol_type: req.protocol_type.as_ref().map(to_str),
        protocol_name: req.protocol_name.as_ref().map(to_str),
        assignments: req
            .assignments
            .into_iter()
            .map(|a| SyncAssignment {
                member_id: MemberId::new(a.member_id.as_str()),
                assignment: a.assignment,
            })
            .collect(),
    };
    let started = std::time::Instant::now();
    let reply = groups
        .write(coordinator::WriteCommand::SyncGroup(command))
        .await?;
    metrics::histogram!(group_coordinator::metrics::GROUP_WRITE_SECONDS, "api" => "SyncGroup")
        .record(started.elapsed().as_secs_f64());
    match reply {
        Reply::Sync(r) => Ok(r),
        other => Err(unexpected(&other)),
    }
}
