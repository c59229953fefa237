//! ConsumerGroupHeartbeat (68), v0–v1: the consumer group protocol (KIP-848). The coordinator
//! owns membership and assignment; a heartbeat that changes nothing is answered from applied
//! state without Raft (see `GroupCoordinator::consumer_heartbeat`).

use coordinator::{
    ApiVersion, ConsumerGroupHeartbeat, GroupId, GroupInstanceId, MemberId, OwnedTopicPartitions,
    PartitionIndex, Reply, TopicId, TopicName,
};
use kafka_protocol::messages::consumer_group_heartbeat_response::{
    Assignment as WireAssignment, TopicPartitions as WireTopicPartitions,
};
use kafka_protocol::messages::{ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};
use kafka_protocol::protocol::StrBytes;

use super::group_common::{client_host, domain_code, failure_code, groups, str_bytes, unexpected};
use super::RequestContext;
use crate::group_coordinator;

/// Answers a consumer's heartbeat (join, reconcile, leave).
pub async fn handle(
    ctx: &RequestContext,
    req: ConsumerGroupHeartbeatRequest,
) -> ConsumerGroupHeartbeatResponse {
    let command = command(ctx, req);
    let result = match groups(ctx) {
        Ok(g) => g.consumer_heartbeat(command).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(Reply::ConsumerGroupHeartbeat(r)) => ConsumerGroupHeartbeatResponse::default()
            .with_error_code(domain_code(ctx, r.error))
            .with_error_message(r.error_message.map(str_bytes))
            .with_member_id(r.member_id.map(|m| str_bytes(m.into_string())))
            .with_member_epoch(r.member_epoch)
            .with_heartbeat_interval_ms(r.heartbeat_interval_ms)
            .with_assignment(r.assignment.map(|a| {
                WireAssignment::default().with_topic_partitions(
                    a.topics()
                        .map(|(topic, partitions)| {
                            WireTopicPartitions::default()
                                .with_topic_id(uuid::Uuid::from_u128(topic.0))
                                .with_partitions(partitions.iter().map(|p| p.0).collect())
                        })
                        .collect(),
                )
            })),
        Ok(other) => ConsumerGroupHeartbeatResponse::default()
            .with_error_code(failure_code(ctx, &unexpected(&other))),
        Err(e) => ConsumerGroupHeartbeatResponse::default()
            .with_error_code(failure_code(ctx, &e))
            .with_error_message(Some(str_bytes(e.to_string()))),
    }
}

/// The request as the coordinator takes it (null on the wire = `None`).
fn command(ctx: &RequestContext, req: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeat {
    let text = |s: Option<StrBytes>| s.map(|s| s.as_str().to_owned());
    ConsumerGroupHeartbeat {
        api_version: ApiVersion(ctx.version),
        now_ms: crate::clock::now(),
        // Only a member without an id (v0 joining) needs one minted: drawing randomness is a
        // system call, and nearly every heartbeat has its member id.
        nonce: if req.member_id.is_empty() {
            group_coordinator::nonce()
        } else {
            0
        },
        group_id: GroupId::new(req.group_id.0.as_str()),
        member_id: MemberId::new(req.member_id.as_str()),
        member_epoch: req.member_epoch,
        instance_id: req
            .instance_id
            .as_ref()
            .map(|i| GroupInstanceId::new(i.as_str())),
        rack_id: text(req.rack_id),
        rebalance_timeout_ms: req.rebalance_timeout_ms,
        subscribed_topic_names: req
            .subscribed_topic_names
            .map(|names| names.iter().map(|n| TopicName::new(n.0.as_str())).collect()),
        subscribed_topic_regex: if ctx.version >= 1 {
            text(req.subscribed_topic_regex)
        } else {
            None
        },
        server_assignor: text(req.server_assignor),
        owned_partitions: req.topic_partitions.map(|topics| {
            topics
                .into_iter()
                .map(|t| OwnedTopicPartitions {
                    topic_id: TopicId(t.topic_id.as_u128()),
                    partitions: t.partitions.into_iter().map(PartitionIndex).collect(),
                })
                .collect()
        }),
        client_id: ctx.client_id.clone(),
        client_host: client_host(ctx),
    }
}
