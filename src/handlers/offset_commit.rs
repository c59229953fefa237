//! OffsetCommit (8), v2–v9: generation-fenced commits, acknowledged once the command is
//! committed through Raft (on one node: fsynced). Unknown topics and partitions are checked
//! against the replicated topic metadata before the command is submitted, as KafkaApis does.

use coordinator::{ApiVersion, CommitOffsets, Generation, GroupId, MemberId, Reply, TopicResults};
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::{OffsetCommitRequest, OffsetCommitResponse};

use super::group_common::{
    commit_topics, domain_code, failure_code, groups, instance_id, str_bytes, unexpected,
    WireCommit,
};
use super::RequestContext;
use crate::group_coordinator::{metrics as gm, GroupError};

/// Commits the offsets, answering per partition.
pub async fn handle(ctx: &RequestContext, req: OffsetCommitRequest) -> OffsetCommitResponse {
    match commit(ctx, &req).await {
        Ok(topics) => {
            metrics::counter!(gm::GROUP_COMMITS_TOTAL, "result" => "ok").increment(1);
            let out = topics
                .into_iter()
                .map(|(name, partitions)| {
                    OffsetCommitResponseTopic::default()
                        .with_name(kafka_protocol::messages::TopicName(str_bytes(
                            name.into_string(),
                        )))
                        .with_partitions(
                            partitions
                                .into_iter()
                                .map(|(p, error)| {
                                    OffsetCommitResponsePartition::default()
                                        .with_partition_index(p.0)
                                        .with_error_code(domain_code(ctx, error))
                                })
                                .collect(),
                        )
                })
                .collect();
            OffsetCommitResponse::default().with_topics(out)
        }
        Err(e) => {
            metrics::counter!(gm::GROUP_COMMITS_TOTAL, "result" => "error").increment(1);
            refused(&req, failure_code(ctx, &e))
        }
    }
}

/// The answer to an OffsetCommit the node could not serve (`code`). OffsetCommit has no
/// top-level error: the failure goes in every partition.
pub fn refused(req: &OffsetCommitRequest, code: i16) -> OffsetCommitResponse {
    let out = req
        .topics
        .iter()
        .map(|t| {
            OffsetCommitResponseTopic::default()
                .with_name(t.name.clone())
                .with_partitions(
                    t.partitions
                        .iter()
                        .map(|p| {
                            OffsetCommitResponsePartition::default()
                                .with_partition_index(p.partition_index)
                                .with_error_code(code)
                        })
                        .collect(),
                )
        })
        .collect();
    OffsetCommitResponse::default().with_topics(out)
}

async fn commit(
    ctx: &RequestContext,
    req: &OffsetCommitRequest,
) -> Result<TopicResults, GroupError> {
    let groups = groups(ctx)?;
    let v = ctx.version;
    let topics = commit_topics(
        groups,
        req.topics.iter().map(|t| {
            let partitions = t.partitions.iter().map(|p| WireCommit {
                partition: p.partition_index,
                offset: p.committed_offset,
                leader_epoch: if v >= 6 { p.committed_leader_epoch } else { -1 },
                metadata: p.committed_metadata.as_ref(),
            });
            (&t.name.0, partitions)
        }),
    );
    let partitions: usize = topics.iter().map(|t| t.partitions.len()).sum();
    let command = CommitOffsets {
        api_version: ApiVersion(v),
        now_ms: crate::clock::now(),
        group_id: GroupId::new(req.group_id.0.as_str()),
        generation: Generation(req.generation_id_or_member_epoch),
        member_id: MemberId::new(req.member_id.as_str()),
        group_instance_id: if v >= 7 {
            instance_id(req.group_instance_id.as_ref())
        } else {
            None
        },
        retention_time_ms: if v <= 4 { req.retention_time_ms } else { -1 },
        topics,
    };
    match groups
        .write(coordinator::WriteCommand::CommitOffsets(command))
        .await?
    {
        Reply::Commit(r) => {
            metrics::counter!(gm::GROUP_COMMITTED_PARTITIONS_TOTAL).increment(partitions as u64);
            Ok(r.topics)
        }
        other => Err(unexpected(&other)),
    }
}
