//! TxnOffsetCommit (28), v0–v3: a consumer group's offsets inside the producer's transaction,
//! pending until its marker (applied on commit, dropped on abort; decision 0119). Sent to the
//! group's coordinator, which is the transaction's too. v3+ (KIP-447) carries the consumer's
//! generation (or member epoch), member id and instance id, fencing a zombie consumer's
//! commits. Unknown topics and partitions are checked against the replicated topic metadata
//! before the command is submitted, as KafkaApis does. v4+ (KIP-890) is not served.

use coordinator::{Generation, GroupId, MemberId, Reply, WriteCommand};
use kafka_protocol::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use kafka_protocol::messages::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
use protocol::ErrorCode;

use super::group_common::{
    commit_topics, failure_code, groups, instance_id, str_bytes, unexpected, WireCommit,
};
use super::txn_common::{fenced_since, producer, txn_code};
use super::RequestContext;

/// Records the transaction's offsets, answering per partition.
pub async fn handle(ctx: &RequestContext, req: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse {
    let groups = match groups(ctx) {
        Ok(g) => g,
        Err(e) => return refused(ctx, &req, failure_code(ctx, &e)),
    };
    let v = ctx.version;
    let topics = commit_topics(
        groups,
        req.topics.iter().map(|t| {
            let partitions = t.partitions.iter().map(|p| WireCommit {
                partition: p.partition_index,
                offset: p.committed_offset,
                leader_epoch: if v >= 2 { p.committed_leader_epoch } else { -1 },
                metadata: p.committed_metadata.as_ref(),
            });
            (&t.name.0, partitions)
        }),
    );
    let command = coordinator::TxnOffsetCommit {
        producer: producer(
            ctx,
            req.transactional_id.0.as_str(),
            req.producer_id.0,
            req.producer_epoch,
        ),
        group_id: GroupId::new(req.group_id.0.as_str()),
        generation: Generation(if v >= 3 { req.generation_id } else { -1 }),
        member_id: MemberId::new(if v >= 3 { req.member_id.as_str() } else { "" }),
        group_instance_id: if v >= 3 {
            instance_id(req.group_instance_id.as_ref())
        } else {
            None
        },
        topics,
    };
    match groups.write(WriteCommand::TxnOffsetCommit(command)).await {
        Ok(Reply::Commit(r)) => {
            let out = r
                .topics
                .into_iter()
                .map(|(name, partitions)| {
                    TxnOffsetCommitResponseTopic::default()
                        .with_name(kafka_protocol::messages::TopicName(str_bytes(
                            name.into_string(),
                        )))
                        .with_partitions(
                            partitions
                                .into_iter()
                                .map(|(p, error)| {
                                    TxnOffsetCommitResponsePartition::default()
                                        .with_partition_index(p.0)
                                        .with_error_code(txn_code(
                                            ctx,
                                            error,
                                            fenced_since::TXN_OFFSET_COMMIT,
                                        ))
                                })
                                .collect(),
                        )
                })
                .collect();
            TxnOffsetCommitResponse::default().with_topics(out)
        }
        Ok(other) => refused(ctx, &req, failure_code(ctx, &unexpected(&other))),
        Err(e) => refused(ctx, &req, failure_code(ctx, &e)),
    }
}

/// `code` for every partition of a request the node could not serve. Below v2 a loading
/// coordinator is COORDINATOR_NOT_AVAILABLE: KafkaApis' answer to 0.11–2.0 producers, which
/// could crash on COORDINATOR_LOAD_IN_PROGRESS (KAFKA-7296).
pub fn refused(
    ctx: &RequestContext,
    req: &TxnOffsetCommitRequest,
    code: i16,
) -> TxnOffsetCommitResponse {
    let code = if ctx.version < 2 && code == ErrorCode::CoordinatorLoadInProgress.code() {
        ErrorCode::CoordinatorNotAvailable.code()
    } else {
        code
    };
    let out = req
        .topics
        .iter()
        .map(|t| {
            TxnOffsetCommitResponseTopic::default()
                .with_name(t.name.clone())
                .with_partitions(
                    t.partitions
                        .iter()
                        .map(|p| {
                            TxnOffsetCommitResponsePartition::default()
                                .with_partition_index(p.partition_index)
                                .with_error_code(code)
                        })
                        .collect(),
                )
        })
        .collect();
    TxnOffsetCommitResponse::default().with_topics(out)
}
