//! DescribeCluster (60), v0–v2: the cluster id, the controller and the brokers, exactly as
//! Metadata reports them (`ClusterView`: brokers = the Raft membership, controller = the Raft
//! leader, which is a broker here), so an Admin client that switches from Metadata to this
//! API sees the same cluster.
//!
//! Kafka's broker (`AuthHelper.computeDescribeClusterResponse`): `endpoint_type` (v1+) must be
//! 1 (brokers) — 2 (controllers) answers MISMATCHED_ENDPOINT_TYPE (this port is a broker's; the
//! Raft port speaks no Kafka), anything else UNSUPPORTED_ENDPOINT_TYPE, and both are
//! INVALID_REQUEST at v0; a controller id that is not among the brokers is answered -1;
//! `cluster_authorized_operations` is filled only when asked for (else Kafka's `i32::MIN`).
//! v2's `include_fenced_brokers` lists fenced brokers too: a member of the membership is never
//! fenced here, so the list is the same and `is_fenced` is false.

use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::{BrokerId, DescribeClusterRequest, DescribeClusterResponse};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::metadata::{ALL_CLUSTER_OPERATIONS, OPERATIONS_NOT_REQUESTED};
use super::RequestContext;

/// Kafka's `EndpointType.BROKER`.
const ENDPOINT_BROKER: i8 = 1;
/// Kafka's `EndpointType.CONTROLLER`.
const ENDPOINT_CONTROLLER: i8 = 2;

/// Describes the cluster.
pub fn handle(ctx: &RequestContext, req: DescribeClusterRequest) -> DescribeClusterResponse {
    let v = ctx.version;
    if req.endpoint_type != ENDPOINT_BROKER {
        let (code, message) = if req.endpoint_type == ENDPOINT_CONTROLLER {
            (
                ErrorCode::MismatchedEndpointType,
                "The request was sent to an endpoint of type BROKER, but we wanted an endpoint \
                 of type CONTROLLER"
                    .to_string(),
            )
        } else {
            (
                ErrorCode::UnsupportedEndpointType,
                format!("Unsupported endpoint type {}", req.endpoint_type),
            )
        };
        let code = if v == 0 {
            ErrorCode::InvalidRequest
        } else {
            code
        };
        return DescribeClusterResponse::default()
            .with_error_code(ctx.error(code))
            .with_error_message(Some(StrBytes::from_string(message)));
    }
    let cluster = &ctx.broker.cluster;
    // This node at the advertised address of the listener the request came in on.
    let brokers: Vec<DescribeClusterBroker> = ctx
        .brokers()
        .into_iter()
        .map(|b| {
            DescribeClusterBroker::default()
                .with_broker_id(b.node_id)
                .with_host(StrBytes::from_string(b.host))
                .with_port(b.port)
                .with_rack(b.rack.map(StrBytes::from_string))
                .with_is_fenced(false)
        })
        .collect();
    let controller = cluster.controller_id();
    let controller = if brokers.iter().any(|b| b.broker_id == controller) {
        controller
    } else {
        BrokerId(-1)
    };
    let mut resp = DescribeClusterResponse::default()
        .with_error_code(0)
        .with_cluster_id(StrBytes::from_string(ctx.broker.catalog.cluster_id()))
        .with_controller_id(controller)
        .with_brokers(brokers)
        .with_cluster_authorized_operations(if req.include_cluster_authorized_operations {
            ALL_CLUSTER_OPERATIONS
        } else {
            OPERATIONS_NOT_REQUESTED
        });
    if v >= 1 {
        resp = resp.with_endpoint_type(ENDPOINT_BROKER);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx};
    use kafka_protocol::messages::{ApiKey, ResponseKind};

    #[test]
    fn the_cluster_as_metadata_reports_it_at_every_version() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        for v in 0..=2 {
            let c = ctx(&b, ApiKey::DescribeCluster, v);
            for asked in [false, true] {
                let resp = handle(
                    &c,
                    DescribeClusterRequest::default()
                        .with_include_cluster_authorized_operations(asked)
                        .with_include_fenced_brokers(v >= 2),
                );
                assert_eq!(resp.error_code, 0);
                assert_eq!(resp.cluster_id.as_str(), b.catalog.cluster_id());
                assert_eq!(resp.controller_id, BrokerId(1));
                assert_eq!(resp.brokers.len(), 1);
                let one = &resp.brokers[0];
                assert_eq!(
                    (one.broker_id, one.host.as_str(), one.port, one.is_fenced),
                    (BrokerId(1), "127.0.0.1", 9092, false)
                );
                assert_eq!(
                    resp.cluster_authorized_operations,
                    if asked {
                        ALL_CLUSTER_OPERATIONS
                    } else {
                        i32::MIN
                    }
                );
                assert_eq!(resp.endpoint_type, 1);
                assert_encodes(&c, &ResponseKind::DescribeCluster(resp));
            }
        }
    }

    #[test]
    fn only_the_broker_endpoint_type_is_served() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        for (v, kind, code) in [(1, 2, 114), (2, 2, 114), (1, 7, 115), (1, 0, 115)] {
            let c = ctx(&b, ApiKey::DescribeCluster, v);
            let resp = handle(
                &c,
                DescribeClusterRequest::default().with_endpoint_type(kind),
            );
            assert_eq!(resp.error_code, code, "v{v} type {kind}");
            assert!(resp.brokers.is_empty());
            assert_encodes(&c, &ResponseKind::DescribeCluster(resp));
        }
    }
}
