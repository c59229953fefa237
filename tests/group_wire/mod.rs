//! Raw group requests for the `groups_*` tests: each helper sends one request at an exact
//! version through `common::raw::RawClient` and returns the decoded response.
#![allow(dead_code)]

pub mod cluster;

use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestGroup;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use crate::common::raw::RawClient;

pub fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

/// ConsumerProtocol subscription v0 bytes for `topics` (what a Java consumer sends).
pub fn subscription(topics: &[&str]) -> bytes::Bytes {
    let mut out = vec![0u8, 0];
    out.extend_from_slice(&(topics.len() as i32).to_be_bytes());
    for t in topics {
        out.extend_from_slice(&(t.len() as i16).to_be_bytes());
        out.extend_from_slice(t.as_bytes());
    }
    out.extend_from_slice(&(-1i32).to_be_bytes());
    bytes::Bytes::from(out)
}

pub fn create_topic(c: &mut RawClient, name: &str, partitions: i32) {
    let req = CreateTopicsRequest::default()
        .with_topics(vec![
            kafka_protocol::messages::create_topics_request::CreatableTopic::default()
                .with_name(TopicName(s(name)))
                .with_num_partitions(partitions)
                .with_replication_factor(1),
        ])
        .with_timeout_ms(10_000);
    match c.call(ApiKey::CreateTopics, 5, RequestKind::CreateTopics(req)) {
        ResponseKind::CreateTopics(r) => assert_eq!(r.topics[0].error_code, 0, "{r:?}"),
        other => panic!("{other:?}"),
    }
}

pub fn join_request(
    group: &str,
    member: &str,
    instance: Option<&str>,
    topics: &[&str],
    session_ms: i32,
) -> JoinGroupRequest {
    JoinGroupRequest::default()
        .with_group_id(GroupId(s(group)))
        .with_session_timeout_ms(session_ms)
        .with_rebalance_timeout_ms(10_000)
        .with_member_id(s(member))
        .with_group_instance_id(instance.map(s))
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name(s("range"))
            .with_metadata(subscription(topics))])
}

pub fn join(c: &mut RawClient, version: i16, req: JoinGroupRequest) -> JoinGroupResponse {
    match c.call(ApiKey::JoinGroup, version, RequestKind::JoinGroup(req)) {
        ResponseKind::JoinGroup(r) => r,
        other => panic!("{other:?}"),
    }
}

/// A dynamic member's full join: MEMBER_ID_REQUIRED, then the join with the minted id.
pub fn join_new_member(c: &mut RawClient, group: &str, topics: &[&str]) -> JoinGroupResponse {
    let first = join(c, 5, join_request(group, "", None, topics, 10_000));
    assert_eq!(first.error_code, 79, "MEMBER_ID_REQUIRED: {first:?}");
    let id = first.member_id.to_string();
    join(c, 5, join_request(group, &id, None, topics, 10_000))
}

pub fn sync(
    c: &mut RawClient,
    group: &str,
    generation: i32,
    member: &str,
    assignments: &[(&str, &[u8])],
) -> SyncGroupResponse {
    let req = SyncGroupRequest::default()
        .with_group_id(GroupId(s(group)))
        .with_generation_id(generation)
        .with_member_id(s(member))
        .with_assignments(
            assignments
                .iter()
                .map(|(m, a)| {
                    SyncGroupRequestAssignment::default()
                        .with_member_id(s(m))
                        .with_assignment(bytes::Bytes::copy_from_slice(a))
                })
                .collect(),
        );
    match c.call(ApiKey::SyncGroup, 3, RequestKind::SyncGroup(req)) {
        ResponseKind::SyncGroup(r) => r,
        other => panic!("{other:?}"),
    }
}

pub fn heartbeat(c: &mut RawClient, group: &str, generation: i32, member: &str) -> i16 {
    let req = HeartbeatRequest::default()
        .with_group_id(GroupId(s(group)))
        .with_generation_id(generation)
        .with_member_id(s(member));
    match c.call(ApiKey::Heartbeat, 3, RequestKind::Heartbeat(req)) {
        ResponseKind::Heartbeat(r) => r.error_code,
        other => panic!("{other:?}"),
    }
}

pub struct Commit<'a> {
    pub group: &'a str,
    pub generation: i32,
    pub member: &'a str,
    pub instance: Option<&'a str>,
    pub topic: &'a str,
    pub partition: i32,
    pub offset: i64,
    pub metadata: &'a str,
}

impl<'a> Commit<'a> {
    pub fn admin(group: &'a str, topic: &'a str, partition: i32, offset: i64) -> Self {
        Commit {
            group,
            generation: -1,
            member: "",
            instance: None,
            topic,
            partition,
            offset,
            metadata: "",
        }
    }
}

/// Commits one partition at OffsetCommit v8 and returns its error code.
pub fn commit(c: &mut RawClient, commit: &Commit<'_>) -> i16 {
    let req = OffsetCommitRequest::default()
        .with_group_id(GroupId(s(commit.group)))
        .with_generation_id_or_member_epoch(commit.generation)
        .with_member_id(s(commit.member))
        .with_group_instance_id(commit.instance.map(s))
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name(TopicName(s(commit.topic)))
            .with_partitions(vec![OffsetCommitRequestPartition::default()
                .with_partition_index(commit.partition)
                .with_committed_offset(commit.offset)
                .with_committed_leader_epoch(-1)
                .with_committed_metadata(Some(s(commit.metadata)))])]);
    match c.call(ApiKey::OffsetCommit, 8, RequestKind::OffsetCommit(req)) {
        ResponseKind::OffsetCommit(r) => r.topics[0].partitions[0].error_code,
        other => panic!("{other:?}"),
    }
}

/// Every committed offset of `group` (OffsetFetch v8, all topics): (topic, partition, offset).
pub fn fetch_all(c: &mut RawClient, group: &str) -> Vec<(String, i32, i64)> {
    let req = OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
        .with_group_id(GroupId(s(group)))
        .with_topics(None)]);
    match c.call(ApiKey::OffsetFetch, 8, RequestKind::OffsetFetch(req)) {
        ResponseKind::OffsetFetch(r) => {
            assert_eq!(r.groups[0].error_code, 0, "{r:?}");
            let mut out: Vec<(String, i32, i64)> = r.groups[0]
                .topics
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| (t.name.to_string(), p.partition_index, p.committed_offset))
                })
                .collect();
            out.sort();
            out
        }
        other => panic!("{other:?}"),
    }
}

pub fn describe(c: &mut RawClient, group: &str) -> describe_groups_response::DescribedGroup {
    describe_at(c, group, 5)
}

pub fn describe_at(
    c: &mut RawClient,
    group: &str,
    version: i16,
) -> describe_groups_response::DescribedGroup {
    let req = DescribeGroupsRequest::default().with_groups(vec![GroupId(s(group))]);
    match c.call(
        ApiKey::DescribeGroups,
        version,
        RequestKind::DescribeGroups(req),
    ) {
        ResponseKind::DescribeGroups(mut r) => r.groups.remove(0),
        other => panic!("{other:?}"),
    }
}

pub fn delete_groups(c: &mut RawClient, groups: &[&str]) -> Vec<i16> {
    let req = DeleteGroupsRequest::default()
        .with_groups_names(groups.iter().map(|g| GroupId(s(g))).collect());
    match c.call(ApiKey::DeleteGroups, 2, RequestKind::DeleteGroups(req)) {
        ResponseKind::DeleteGroups(r) => r.results.iter().map(|g| g.error_code).collect(),
        other => panic!("{other:?}"),
    }
}

pub fn find_coordinator_v4(
    c: &mut RawClient,
    group: &str,
) -> find_coordinator_response::Coordinator {
    let req = FindCoordinatorRequest::default().with_coordinator_keys(vec![s(group)]);
    match c.call(
        ApiKey::FindCoordinator,
        4,
        RequestKind::FindCoordinator(req),
    ) {
        ResponseKind::FindCoordinator(mut r) => r.coordinators.remove(0),
        other => panic!("{other:?}"),
    }
}
