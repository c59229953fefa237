//! FindCoordinator (10), v0–v6 (batched keys from v4): the Raft leader coordinates every
//! group and, while `protocol::TRANSACTIONS_SERVED` holds, every transactional id (decision
//! 0119), so every key is answered with the leader's Kafka endpoint.
//!
//! v5 only tells the broker the client understands TRANSACTION_ABORTABLE (KIP-890), which
//! Kafka's FindCoordinator never answers and neither does Cohort. v6 adds the share-group key
//! type (2, KIP-932): Cohort has no share coordinator and answers it INVALID_REQUEST, as Kafka
//! does without one and at any version below 6 (decision 0161).

use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::{BrokerId, FindCoordinatorRequest, FindCoordinatorResponse};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::group_common::{failure_code, groups, str_bytes};
use super::RequestContext;
use crate::cluster::BrokerEndpoint;
use crate::group_coordinator::GroupError;

/// `FindCoordinatorRequest.KeyType` of consumer groups.
const KEY_TYPE_GROUP: i8 = 0;
/// `FindCoordinatorRequest.KeyType` of transactional ids.
const KEY_TYPE_TRANSACTION: i8 = 1;
/// Why a key type Cohort does not coordinate (share groups, or transactions while they are not
/// served) is refused.
pub const KEY_TYPE_REFUSED: &str = if protocol::TRANSACTIONS_SERVED {
    "Cohort coordinates groups and transactional ids only"
} else {
    "Cohort serves group coordinators only (no transactions)"
};

/// Whether Cohort coordinates keys of this type.
pub fn serves_key_type(key_type: i8) -> bool {
    key_type == KEY_TYPE_GROUP
        || (key_type == KEY_TYPE_TRANSACTION && protocol::TRANSACTIONS_SERVED)
}

/// Answers where each key's coordinator is.
pub async fn handle(ctx: &RequestContext, req: FindCoordinatorRequest) -> FindCoordinatorResponse {
    let answer = locate(ctx, req.key_type);
    respond(ctx.version, &req, answer)
}

/// The response at `version` naming `answer` (the coordinator, or why there is none) for
/// every key.
pub fn respond(
    version: i16,
    req: &FindCoordinatorRequest,
    answer: Result<BrokerEndpoint, (i16, String)>,
) -> FindCoordinatorResponse {
    if version >= 4 {
        let coordinators = req
            .coordinator_keys
            .iter()
            .map(|key| {
                let c = Coordinator::default().with_key(key.clone());
                match &answer {
                    Ok(b) => c
                        .with_node_id(b.node_id)
                        .with_host(str_bytes(b.host.clone()))
                        .with_port(b.port),
                    Err((code, msg)) => c
                        .with_node_id(BrokerId(-1))
                        .with_host(StrBytes::default())
                        .with_port(-1)
                        .with_error_code(*code)
                        .with_error_message(Some(str_bytes(msg.clone()))),
                }
            })
            .collect();
        return FindCoordinatorResponse::default().with_coordinators(coordinators);
    }
    match answer {
        Ok(b) => FindCoordinatorResponse::default()
            .with_node_id(b.node_id)
            .with_host(str_bytes(b.host))
            .with_port(b.port),
        Err((code, msg)) => FindCoordinatorResponse::default()
            .with_error_code(code)
            .with_error_message(Some(str_bytes(msg)))
            .with_node_id(BrokerId(-1))
            .with_host(StrBytes::default())
            .with_port(-1),
    }
}

fn locate(ctx: &RequestContext, key_type: i8) -> Result<BrokerEndpoint, (i16, String)> {
    if !serves_key_type(key_type) {
        return Err((
            ctx.error(ErrorCode::InvalidRequest),
            KEY_TYPE_REFUSED.into(),
        ));
    }
    let not_available = |e: GroupError| (failure_code(ctx, &e), e.to_string());
    let groups = groups(ctx).map_err(not_available)?;
    let Some(leader) = groups.coordinator() else {
        return Err(not_available(GroupError::NotAvailable(
            "no Raft leader holding its lease is known".into(),
        )));
    };
    ctx.brokers()
        .into_iter()
        .find(|b| u64::try_from(b.node_id.0).ok() == Some(leader.node_id))
        .ok_or_else(|| {
            // Kafka's COORDINATOR_NOT_AVAILABLE for a coordinator without the request's
            // listener (`getAliveBrokerNode(leader, listenerName)` is empty).
            not_available(GroupError::NotAvailable(format!(
                "leader {} has no {} listener",
                leader.node_id,
                ctx.listener.protocol.name()
            )))
        })
}
