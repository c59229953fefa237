//! OffsetFetch (9), v1–v9: committed offsets from the leader's applied state. v1–v7 carry one
//! group (top-level error from v2, per-partition only in v1); v8+ batch groups.

use coordinator::{
    ApiVersion, FetchGroup, FetchOffsets, FetchResponse, FetchTopic, FetchedGroup, GroupId,
    MemberId, PartitionIndex, ReadCommand, Reply, TopicName,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::{OffsetFetchRequest, OffsetFetchResponse};

use super::group_common::{domain_code, failure_code, groups, str_bytes, unexpected};
use super::RequestContext;

/// One requested topic, the same in the v1–v7 and the v8+ request shapes.
fn fetch_topic(name: &kafka_protocol::messages::TopicName, partitions: &[i32]) -> FetchTopic {
    FetchTopic {
        name: TopicName::new(name.0.as_str()),
        partitions: partitions.iter().map(|p| PartitionIndex(*p)).collect(),
    }
}

/// Answers the committed offsets of the requested groups and partitions.
pub async fn handle(ctx: &RequestContext, req: OffsetFetchRequest) -> OffsetFetchResponse {
    let v = ctx.version;
    let requested = requested(v, &req);
    let command = ReadCommand::FetchOffsets(FetchOffsets {
        api_version: ApiVersion(v),
        groups: requested.clone(),
        require_stable: v >= 7 && req.require_stable,
    });
    let result = groups(ctx).and_then(|g| match g.read(&command)? {
        Reply::Fetch(r) => Ok(r),
        other => Err(unexpected(&other)),
    });
    match result {
        Ok(r) if v >= 8 => batched(ctx, r),
        Ok(r) => single(ctx, r),
        Err(e) => failed(v, &requested, failure_code(ctx, &e)),
    }
}

/// The groups a request asks about (one before v8).
fn requested(v: i16, req: &OffsetFetchRequest) -> Vec<FetchGroup> {
    if v >= 8 {
        req.groups
            .iter()
            .map(|g| FetchGroup {
                group_id: GroupId::new(g.group_id.0.as_str()),
                topics: g.topics.as_ref().map(|ts| {
                    ts.iter()
                        .map(|t| fetch_topic(&t.name, &t.partition_indexes))
                        .collect()
                }),
                member_id: g.member_id.as_ref().map(|m| MemberId::new(m.as_str())),
                member_epoch: g.member_epoch,
            })
            .collect()
    } else {
        vec![FetchGroup {
            group_id: GroupId::new(req.group_id.0.as_str()),
            topics: req.topics.as_ref().map(|ts| {
                ts.iter()
                    .map(|t| fetch_topic(&t.name, &t.partition_indexes))
                    .collect()
            }),
            member_id: None,
            member_epoch: -1,
        }]
    }
}

/// The answer to an OffsetFetch the node could not serve (`code`), at `version`.
pub fn refused(version: i16, req: &OffsetFetchRequest, code: i16) -> OffsetFetchResponse {
    failed(version, &requested(version, req), code)
}

fn batched(ctx: &RequestContext, r: FetchResponse) -> OffsetFetchResponse {
    let groups = r
        .groups
        .into_iter()
        .map(|g| {
            let topics = g
                .topics
                .into_iter()
                .map(|t| {
                    OffsetFetchResponseTopics::default()
                        .with_name(kafka_protocol::messages::TopicName(str_bytes(
                            t.name.into_string(),
                        )))
                        .with_partitions(
                            t.partitions
                                .into_iter()
                                .map(|p| {
                                    OffsetFetchResponsePartitions::default()
                                        .with_partition_index(p.partition.0)
                                        .with_committed_offset(p.offset.0)
                                        .with_committed_leader_epoch(p.leader_epoch.0)
                                        .with_metadata(Some(str_bytes(p.metadata)))
                                        .with_error_code(domain_code(ctx, p.error))
                                })
                                .collect(),
                        )
                })
                .collect();
            OffsetFetchResponseGroup::default()
                .with_group_id(kafka_protocol::messages::GroupId(str_bytes(
                    g.group_id.into_string(),
                )))
                .with_topics(topics)
                .with_error_code(domain_code(ctx, g.error))
        })
        .collect();
    OffsetFetchResponse::default().with_groups(groups)
}

fn single(ctx: &RequestContext, r: FetchResponse) -> OffsetFetchResponse {
    let Some(FetchedGroup { error, topics, .. }) = r.groups.into_iter().next() else {
        return OffsetFetchResponse::default();
    };
    let topics = topics
        .into_iter()
        .map(|t| {
            OffsetFetchResponseTopic::default()
                .with_name(kafka_protocol::messages::TopicName(str_bytes(
                    t.name.into_string(),
                )))
                .with_partitions(
                    t.partitions
                        .into_iter()
                        .map(|p| {
                            // v1 has no top-level error: a group error goes in each partition.
                            let e = if ctx.version < 2 {
                                p.error.or(error)
                            } else {
                                p.error
                            };
                            OffsetFetchResponsePartition::default()
                                .with_partition_index(p.partition.0)
                                .with_committed_offset(p.offset.0)
                                .with_committed_leader_epoch(p.leader_epoch.0)
                                .with_metadata(Some(str_bytes(p.metadata)))
                                .with_error_code(domain_code(ctx, e))
                        })
                        .collect(),
                )
        })
        .collect();
    let mut out = OffsetFetchResponse::default().with_topics(topics);
    if ctx.version >= 2 {
        out = out.with_error_code(domain_code(ctx, error));
    }
    out
}

fn failed(version: i16, requested: &[FetchGroup], code: i16) -> OffsetFetchResponse {
    if version >= 8 {
        let groups = requested
            .iter()
            .map(|g| {
                OffsetFetchResponseGroup::default()
                    .with_group_id(kafka_protocol::messages::GroupId(str_bytes(
                        g.group_id.as_str(),
                    )))
                    .with_error_code(code)
            })
            .collect();
        return OffsetFetchResponse::default().with_groups(groups);
    }
    if version >= 2 {
        return OffsetFetchResponse::default().with_error_code(code);
    }
    // v1: the only place for the error is each requested partition.
    let topics = requested
        .iter()
        .flat_map(|g| g.topics.iter().flatten())
        .map(|t| {
            OffsetFetchResponseTopic::default()
                .with_name(kafka_protocol::messages::TopicName(str_bytes(
                    t.name.as_str(),
                )))
                .with_partitions(
                    t.partitions
                        .iter()
                        .map(|p| {
                            OffsetFetchResponsePartition::default()
                                .with_partition_index(p.0)
                                .with_committed_offset(-1)
                                .with_committed_leader_epoch(-1)
                                .with_metadata(Some(str_bytes("")))
                                .with_error_code(code)
                        })
                        .collect(),
                )
        })
        .collect();
    OffsetFetchResponse::default().with_topics(topics)
}
