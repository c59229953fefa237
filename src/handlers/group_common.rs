//! What the group handlers share: reaching the coordinator, turning its answers into codes,
//! and string conversions between the wire and the domain.

use std::sync::Arc;

use coordinator::{ErrorKind, GroupInstanceId, Reply};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::RequestContext;
use crate::errors::{coordinator_error_code, to_kafka_error, BrokerError};
use crate::group_coordinator::{GroupCoordinator, GroupError};

/// The coordinator on this broker, or COORDINATOR_NOT_AVAILABLE when it runs without one.
pub fn groups(ctx: &RequestContext) -> Result<&Arc<GroupCoordinator>, GroupError> {
    ctx.broker
        .groups
        .as_ref()
        .ok_or_else(|| GroupError::NotAvailable("this broker runs no group coordinator".into()))
}

/// The wire code of a domain answer, counted in the error metrics (and a count-limit refusal
/// in its own, `group_limits`).
pub fn domain_code(ctx: &RequestContext, error: Option<ErrorKind>) -> i16 {
    if let Some(kind) = error {
        super::group_limits::note(kind);
    }
    ctx.error(error.map_or(ErrorCode::None, coordinator_error_code))
}

/// The wire code of a node-level failure, counted in the error metrics.
pub fn failure_code(ctx: &RequestContext, error: &GroupError) -> i16 {
    ctx.error(to_kafka_error(&BrokerError::Group(error.clone())))
}

/// A reply of a kind the request cannot produce: a bug, answered as a retriable failure
/// rather than a panic.
pub fn unexpected(reply: &Reply) -> GroupError {
    tracing::error!(?reply, "coordinator answered with an unexpected reply kind");
    GroupError::NotAvailable("unexpected coordinator reply".into())
}

pub fn to_str(s: &StrBytes) -> String {
    s.as_str().to_owned()
}

/// A static member's `group.instance.id` from the wire (absent or null: a dynamic member).
pub fn instance_id(id: Option<&StrBytes>) -> Option<GroupInstanceId> {
    id.map(|i| GroupInstanceId::new(i.as_str()))
}

pub fn str_bytes(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

/// The client's address as Kafka shows it in DescribeGroups (`/10.0.0.5`).
pub fn client_host(ctx: &RequestContext) -> String {
    format!("/{}", ctx.peer.ip())
}
