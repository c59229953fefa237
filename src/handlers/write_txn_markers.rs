//! WriteTxnMarkers (27), v1: the transaction coordinator (the Raft leader) has this node write
//! the COMMIT or ABORT marker of a transaction to the partitions it owns (decision 0125).
//! Each partition is answered on its own: written and durable (NONE), not owned here
//! (NOT_LEADER_OR_FOLLOWER, or UNKNOWN_TOPIC_OR_PARTITION), or the data plane's refusal
//! (INVALID_PRODUCER_EPOCH when a newer epoch of the producer already wrote there,
//! TRANSACTION_COORDINATOR_FENCED when a newer coordinator epoch did, decision 0153). Like a
//! Kafka broker without an authorizer, any client may send it.

use kafka_protocol::messages::write_txn_markers_response::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
};
use kafka_protocol::messages::{WriteTxnMarkersRequest, WriteTxnMarkersResponse};
use protocol::batch::control::{encode_control_batch, ControlMarker, ControlType};
use protocol::ErrorCode;

use super::RequestContext;
use crate::data::LookupError;
use crate::errors::{to_kafka_error, BrokerError};
use crate::group_coordinator::txn_marker_log::append_local;

/// Writes every marker to every partition named, answering per partition.
pub async fn handle(ctx: &RequestContext, req: WriteTxnMarkersRequest) -> WriteTxnMarkersResponse {
    let mut markers = Vec::with_capacity(req.markers.len());
    for m in &req.markers {
        let marker = ControlMarker {
            kind: if m.transaction_result {
                ControlType::Commit
            } else {
                ControlType::Abort
            },
            producer_id: m.producer_id.0,
            producer_epoch: m.producer_epoch,
            coordinator_epoch: m.coordinator_epoch,
            timestamp_ms: crate::clock::now().0,
        };
        let batch = encode_control_batch(&marker);
        let mut topics = Vec::with_capacity(m.topics.len());
        for t in &m.topics {
            let mut partitions = Vec::with_capacity(t.partition_indexes.len());
            for &p in &t.partition_indexes {
                let code = match ctx.broker.data.partition(t.name.0.as_str(), p).await {
                    Ok(partition) => match append_local(partition, batch.clone()).await {
                        Ok(()) => ErrorCode::None,
                        Err((code, why)) => {
                            tracing::warn!(topic = t.name.0.as_str(), partition = p,
                                error = %why, "transaction marker not written");
                            code
                        }
                    },
                    Err(LookupError::NotLeader { .. }) => ErrorCode::NotLeaderOrFollower,
                    Err(e) => to_kafka_error(&BrokerError::from(e)),
                };
                partitions.push(
                    WritableTxnMarkerPartitionResult::default()
                        .with_partition_index(p)
                        .with_error_code(ctx.error(code)),
                );
            }
            topics.push(
                WritableTxnMarkerTopicResult::default()
                    .with_name(t.name.clone())
                    .with_partitions(partitions),
            );
        }
        markers.push(
            WritableTxnMarkerResult::default()
                .with_producer_id(m.producer_id)
                .with_topics(topics),
        );
    }
    WriteTxnMarkersResponse::default().with_markers(markers)
}
