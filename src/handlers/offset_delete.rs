//! OffsetDelete (47), v0 (KIP-496): removes a group's offsets for topics no member subscribes
//! to. Unknown topics are checked against the replicated topic metadata first.

use coordinator::{
    ApiVersion, DeleteOffsets, DeleteTopic, GroupId, PartitionIndex, Reply, TopicName,
};
use kafka_protocol::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use kafka_protocol::messages::{OffsetDeleteRequest, OffsetDeleteResponse};

use super::group_common::{domain_code, failure_code, groups, str_bytes, unexpected};
use super::RequestContext;

/// Deletes the group's offsets of the requested partitions.
pub async fn handle(ctx: &RequestContext, req: OffsetDeleteRequest) -> OffsetDeleteResponse {
    let groups = match groups(ctx) {
        Ok(g) => g,
        Err(e) => return OffsetDeleteResponse::default().with_error_code(failure_code(ctx, &e)),
    };
    let command = DeleteOffsets {
        api_version: ApiVersion(ctx.version),
        now_ms: crate::clock::now(),
        group_id: GroupId::new(req.group_id.0.as_str()),
        topics: req
            .topics
            .iter()
            .map(|t| DeleteTopic {
                name: TopicName::new(t.name.0.as_str()),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| PartitionIndex(p.partition_index))
                    .collect(),
                topic_known: groups.topic_known(t.name.0.as_str()),
            })
            .collect(),
    };
    let resp = match groups
        .write(coordinator::WriteCommand::DeleteOffsets(command))
        .await
    {
        Ok(Reply::DeleteOffsets(r)) => r,
        Ok(other) => {
            let code = failure_code(ctx, &unexpected(&other));
            return OffsetDeleteResponse::default().with_error_code(code);
        }
        Err(e) => return OffsetDeleteResponse::default().with_error_code(failure_code(ctx, &e)),
    };
    let topics = resp
        .topics
        .into_iter()
        .map(|(name, partitions)| {
            OffsetDeleteResponseTopic::default()
                .with_name(kafka_protocol::messages::TopicName(str_bytes(
                    name.into_string(),
                )))
                .with_partitions(
                    partitions
                        .into_iter()
                        .map(|(p, e)| {
                            OffsetDeleteResponsePartition::default()
                                .with_partition_index(p.0)
                                .with_error_code(domain_code(ctx, e))
                        })
                        .collect(),
                )
        })
        .collect();
    OffsetDeleteResponse::default()
        .with_error_code(domain_code(ctx, resp.error))
        .with_topics(topics)
}
