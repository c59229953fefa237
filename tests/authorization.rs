//! The authorization matrix (issue 12 item 3, decision 0149), over real sockets against
//! `cohort serve --authorizer acl --super-users User:admin` on a SASL_PLAINTEXT listener with
//! PLAIN users admin, alice and bob.
//!
//! For every served API, alice is given exactly the ACLs Kafka's documentation requires (and
//! nothing else: they are created before her request and deleted after it), and must pass;
//! bob has no ACL and must get Kafka's error code, or the filtered answer. The expected table
//! below is written from Kafka's documentation, not from the broker's table: the "Operations
//! and Resources on Protocols" table of docs/security (Kafka 4.0, "Authorization and ACLs"),
//! with the error codes of `org.apache.kafka.common.protocol.Errors` and the per-API behaviour
//! described in KafkaApis (per-partition TOPIC_AUTHORIZATION_FAILED, whole-request
//! GROUP_AUTHORIZATION_FAILED, ListGroups/Metadata/ListTransactions filtering, DescribeCluster
//! answering 0 authorized operations).
//!
//! Also: a real client (confluent-kafka) consumes in a group with READ on the topic and the
//! group, and fails with GROUP_AUTHORIZATION_FAILED without the group's; and an ACL deleted
//! while a connection is open counts for that connection's next request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use common::raw::RawClient;
use common::Cohort;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

// Kafka's error codes (org.apache.kafka.common.protocol.Errors).
const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
const GROUP_AUTHORIZATION_FAILED: i16 = 30;
const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
const AUTHORIZATION_CODES: [i16; 4] = [
    TOPIC_AUTHORIZATION_FAILED,
    GROUP_AUTHORIZATION_FAILED,
    CLUSTER_AUTHORIZATION_FAILED,
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
];

// Resource types, operations, pattern and permission of the ACL wire format.
const TOPIC: i8 = 2;
const GROUP: i8 = 3;
const CLUSTER: i8 = 4;
const TXN_ID: i8 = 5;
const READ: i8 = 3;
const WRITE: i8 = 4;
const CREATE: i8 = 5;
const DELETE: i8 = 6;
const ALTER: i8 = 7;
const DESCRIBE: i8 = 8;
const CLUSTER_ACTION: i8 = 9;
const DESCRIBE_CONFIGS: i8 = 10;
const ALTER_CONFIGS: i8 = 11;
const IDEMPOTENT_WRITE: i8 = 12;
const LITERAL: i8 = 3;
const ALLOW: i8 = 3;

const CLUSTER_NAME: &str = "kafka-cluster";
/// The topic most cases act on, and a second one for CreatePartitions.
const T: &str = "authz-t";
const T2: &str = "authz-t2";
/// A group with committed offsets (admin's), and a transactional id admin initialized.
const G: &str = "authz-g";
const TX: &str = "authz-tx";

/// What a listing API answers: whether the resource under test is in it.
const LISTED: i16 = -100;
const NOT_LISTED: i16 = -101;
/// DescribeLogDirs below v3 has no top-level code: a refusal is an empty answer.
const EMPTY: i16 = -102;

/// What the principal is expected to get.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Past authorization: any code but the four authorization failures.
    Authorized,
    /// Exactly this code (or `LISTED` / `NOT_LISTED`).
    Code(i16),
}

/// One row of the matrix.
struct Case {
    name: &'static str,
    api: ApiKey,
    version: i16,
    /// What Kafka's documentation requires: (resource type, name, operation).
    grants: &'static [(i8, &'static str, i8)],
    request: fn(&Fixture, i16) -> RequestKind,
    /// The code under test in the answer.
    code: fn(&ResponseKind) -> i16,
    granted: Expect,
    denied: Expect,
}

/// State the setup leaves for the cases.
struct Fixture {
    producer_id: i64,
    producer_epoch: i16,
    /// T's topic id, which Fetch names it by from v13.
    topic_id: uuid::Uuid,
}

const NO_PRODUCER: Fixture = Fixture {
    producer_id: -1,
    producer_epoch: -1,
    topic_id: uuid::Uuid::nil(),
};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

fn topic(v: &str) -> TopicName {
    TopicName(s(v))
}

fn batch(n: usize) -> Bytes {
    let records: Vec<Record> = (0..n)
        .map(|i| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: i as i32 - 1,
            timestamp: 1_000 + i as i64,
            key: None,
            value: Some(Bytes::from(format!("v{i}"))),
            headers: Default::default(),
        })
        .collect();
    let mut buf = bytes::BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        records.iter(),
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    buf.freeze()
}

// --- The matrix ------------------------------------------------------------------------------

fn produce(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::Produce(
        ProduceRequest::default()
            .with_acks(1)
            .with_timeout_ms(10_000)
            .with_topic_data(vec![produce_request::TopicProduceData::default()
                .with_name(topic(T))
                .with_partition_data(vec![
                    produce_request::PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(batch(2))),
                ])]),
    )
}

fn fetch(f: &Fixture, v: i16) -> RequestKind {
    // From v13 the topic is named by id (KIP-516).
    let t = if v >= 13 {
        fetch_request::FetchTopic::default().with_topic_id(f.topic_id)
    } else {
        fetch_request::FetchTopic::default().with_topic(topic(T))
    };
    RequestKind::Fetch(
        FetchRequest::default()
            .with_max_wait_ms(0)
            .with_min_bytes(0)
            .with_max_bytes(1 << 20)
            .with_session_epoch(-1)
            .with_topics(vec![t.with_partitions(vec![
                fetch_request::FetchPartition::default()
                    .with_partition(0)
                    .with_fetch_offset(0)
                    .with_partition_max_bytes(1 << 20),
            ])]),
    )
}

fn list_offsets(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::ListOffsets(
        ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_topics(vec![list_offsets_request::ListOffsetsTopic::default()
                .with_name(topic(T))
                .with_partitions(vec![
                    list_offsets_request::ListOffsetsPartition::default()
                        .with_partition_index(0)
                        .with_timestamp(-1),
                ])]),
    )
}

fn metadata_named(_: &Fixture, v: i16) -> RequestKind {
    RequestKind::Metadata(
        MetadataRequest::default()
            .with_topics(Some(vec![metadata_request::MetadataRequestTopic::default(
            )
            .with_name(Some(topic(T)))]))
            // The fields exist from v4 and v8.
            .with_allow_auto_topic_creation(v < 4)
            .with_include_topic_authorized_operations(v >= 8),
    )
}

fn metadata_all(_: &Fixture, v: i16) -> RequestKind {
    // v0 says "all topics" with an empty list, later versions with null.
    RequestKind::Metadata(MetadataRequest::default().with_topics((v == 0).then(Vec::new)))
}

fn create_topics(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::CreateTopics(
        CreateTopicsRequest::default()
            .with_timeout_ms(10_000)
            .with_topics(vec![create_topics_request::CreatableTopic::default()
                .with_name(topic("authz-created"))
                .with_num_partitions(1)
                .with_replication_factor(1)]),
    )
}

fn delete_topics(_: &Fixture, v: i16) -> RequestKind {
    let req = DeleteTopicsRequest::default().with_timeout_ms(10_000);
    // v6 names topics in `topics`, earlier versions in `topic_names`.
    RequestKind::DeleteTopics(if v >= 6 {
        req.with_topics(vec![delete_topics_request::DeleteTopicState::default()
            .with_name(Some(topic("authz-doomed")))])
    } else {
        req.with_topic_names(vec![topic("authz-doomed")])
    })
}

fn init_idempotent(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::InitProducerId(
        InitProducerIdRequest::default()
            .with_transactional_id(None)
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1),
    )
}

fn init_transactional(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::InitProducerId(
        InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(s("authz-tx-alice"))))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1),
    )
}

fn find_group(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::FindCoordinator(
        FindCoordinatorRequest::default()
            .with_key_type(0)
            .with_coordinator_keys(vec![s(G)]),
    )
}

fn find_group_v3(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::FindCoordinator(
        FindCoordinatorRequest::default()
            .with_key_type(0)
            .with_key(s(G)),
    )
}

fn find_txn(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::FindCoordinator(
        FindCoordinatorRequest::default()
            .with_key_type(1)
            .with_coordinator_keys(vec![s(TX)]),
    )
}

fn join_group(_: &Fixture, v: i16) -> RequestKind {
    RequestKind::JoinGroup(
        JoinGroupRequest::default()
            .with_group_id(GroupId(s("authz-join")))
            .with_session_timeout_ms(10_000)
            // From v1.
            .with_rebalance_timeout_ms(if v >= 1 { 10_000 } else { -1 })
            .with_member_id(s(""))
            .with_protocol_type(s("consumer"))
            .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
            )
            .with_name(s("range"))
            .with_metadata(Bytes::from_static(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 0]))]),
    )
}

fn sync_group(_: &Fixture, v: i16) -> RequestKind {
    let req = SyncGroupRequest::default()
        .with_group_id(GroupId(s("authz-join")))
        .with_generation_id(1)
        .with_member_id(s("nobody"));
    // The protocol fields exist from v5.
    RequestKind::SyncGroup(if v >= 5 {
        req.with_protocol_type(Some(s("consumer")))
            .with_protocol_name(Some(s("range")))
    } else {
        req
    })
}

fn heartbeat(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::Heartbeat(
        HeartbeatRequest::default()
            .with_group_id(GroupId(s("authz-join")))
            .with_generation_id(1)
            .with_member_id(s("nobody")),
    )
}

fn leave_group(_: &Fixture, v: i16) -> RequestKind {
    let req = LeaveGroupRequest::default().with_group_id(GroupId(s("authz-join")));
    // v0-2 name one member, v3+ a list.
    RequestKind::LeaveGroup(if v >= 3 {
        req.with_members(vec![
            leave_group_request::MemberIdentity::default().with_member_id(s("nobody"))
        ])
    } else {
        req.with_member_id(s("nobody"))
    })
}

fn commit_topics(offset: i64) -> Vec<offset_commit_request::OffsetCommitRequestTopic> {
    vec![offset_commit_request::OffsetCommitRequestTopic::default()
        .with_name(topic(T))
        .with_partitions(vec![
            offset_commit_request::OffsetCommitRequestPartition::default()
                .with_partition_index(0)
                .with_committed_offset(offset)
                .with_committed_leader_epoch(-1)
                .with_committed_metadata(Some(s(""))),
        ])]
}

fn offset_commit_to(group: &str) -> RequestKind {
    RequestKind::OffsetCommit(
        OffsetCommitRequest::default()
            .with_group_id(GroupId(s(group)))
            .with_generation_id_or_member_epoch(-1)
            .with_member_id(s(""))
            .with_topics(commit_topics(1)),
    )
}

fn offset_commit(_: &Fixture, _: i16) -> RequestKind {
    offset_commit_to(G)
}

fn offset_fetch(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::OffsetFetch(OffsetFetchRequest::default().with_groups(vec![
        offset_fetch_request::OffsetFetchRequestGroup::default()
            .with_group_id(GroupId(s(G)))
            .with_member_id(None)
            .with_member_epoch(-1)
            .with_topics(Some(vec![
                offset_fetch_request::OffsetFetchRequestTopics::default()
                    .with_name(topic(T))
                    .with_partition_indexes(vec![0]),
            ])),
    ]))
}

fn offset_fetch_v7(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::OffsetFetch(
        OffsetFetchRequest::default()
            .with_group_id(GroupId(s(G)))
            .with_topics(Some(vec![
                offset_fetch_request::OffsetFetchRequestTopic::default()
                    .with_name(topic(T))
                    .with_partition_indexes(vec![0]),
            ])),
    )
}

fn offset_delete(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::OffsetDelete(
        OffsetDeleteRequest::default()
            .with_group_id(GroupId(s("authz-g-offsets")))
            .with_topics(vec![
                offset_delete_request::OffsetDeleteRequestTopic::default()
                    .with_name(topic(T))
                    .with_partitions(vec![
                        offset_delete_request::OffsetDeleteRequestPartition::default()
                            .with_partition_index(0),
                    ]),
            ]),
    )
}

fn delete_groups(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DeleteGroups(
        DeleteGroupsRequest::default().with_groups_names(vec![GroupId(s("authz-g-doomed"))]),
    )
}

fn list_groups(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::ListGroups(ListGroupsRequest::default())
}

fn describe_groups(_: &Fixture, v: i16) -> RequestKind {
    RequestKind::DescribeGroups(
        DescribeGroupsRequest::default()
            .with_groups(vec![GroupId(s(G))])
            .with_include_authorized_operations(v >= 3),
    )
}

fn consumer_group_heartbeat(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::ConsumerGroupHeartbeat(
        ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s("authz-cg")))
            .with_member_id(s("0123456789abcdefABCDEF"))
            .with_member_epoch(0)
            .with_rebalance_timeout_ms(10_000)
            .with_subscribed_topic_names(Some(vec![topic(T)]))
            .with_topic_partitions(Some(vec![])),
    )
}

fn consumer_group_describe(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::ConsumerGroupDescribe(
        ConsumerGroupDescribeRequest::default()
            .with_group_ids(vec![GroupId(s("authz-cg"))])
            .with_include_authorized_operations(true),
    )
}

fn describe_topic_configs(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DescribeConfigs(DescribeConfigsRequest::default().with_resources(vec![
        describe_configs_request::DescribeConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(s(T))
            .with_configuration_keys(None),
    ]))
}

fn describe_broker_configs(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DescribeConfigs(DescribeConfigsRequest::default().with_resources(vec![
        describe_configs_request::DescribeConfigsResource::default()
            .with_resource_type(4)
            .with_resource_name(s("1"))
            .with_configuration_keys(None),
    ]))
}

fn alter_configs(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::AlterConfigs(
        AlterConfigsRequest::default()
            .with_validate_only(true)
            .with_resources(vec![alter_configs_request::AlterConfigsResource::default()
                .with_resource_type(2)
                .with_resource_name(s(T))
                .with_configs(vec![alter_configs_request::AlterableConfig::default()
                    .with_name(s("retention.ms"))
                    .with_value(Some(s("86400000")))])]),
    )
}

fn incremental_alter_configs(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::IncrementalAlterConfigs(
        IncrementalAlterConfigsRequest::default()
            .with_validate_only(true)
            .with_resources(vec![
                incremental_alter_configs_request::AlterConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s(T))
                    .with_configs(vec![
                        incremental_alter_configs_request::AlterableConfig::default()
                            .with_name(s("retention.ms"))
                            .with_config_operation(0)
                            .with_value(Some(s("86400000"))),
                    ]),
            ]),
    )
}

fn create_partitions(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::CreatePartitions(
        CreatePartitionsRequest::default()
            .with_timeout_ms(10_000)
            .with_validate_only(true)
            .with_topics(vec![
                create_partitions_request::CreatePartitionsTopic::default()
                    .with_name(topic(T2))
                    .with_count(2)
                    .with_assignments(None),
            ]),
    )
}

fn delete_records(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DeleteRecords(
        DeleteRecordsRequest::default()
            .with_timeout_ms(10_000)
            .with_topics(vec![delete_records_request::DeleteRecordsTopic::default()
                .with_name(topic(T))
                .with_partitions(vec![
                    delete_records_request::DeleteRecordsPartition::default()
                        .with_partition_index(0)
                        .with_offset(0),
                ])]),
    )
}

fn describe_log_dirs(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DescribeLogDirs(DescribeLogDirsRequest::default().with_topics(None))
}

fn offset_for_leader_epoch(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::OffsetForLeaderEpoch(
        // The replica id left at its default, -2: a consumer's request.
        OffsetForLeaderEpochRequest::default().with_topics(vec![
            offset_for_leader_epoch_request::OffsetForLeaderTopic::default()
                .with_topic(topic(T))
                .with_partitions(vec![
                    offset_for_leader_epoch_request::OffsetForLeaderPartition::default()
                        .with_partition(0)
                        .with_current_leader_epoch(-1)
                        .with_leader_epoch(0),
                ]),
        ]),
    )
}

fn describe_cluster(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DescribeCluster(
        DescribeClusterRequest::default()
            .with_include_cluster_authorized_operations(true)
            .with_endpoint_type(1),
    )
}

fn describe_topic_partitions(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DescribeTopicPartitions(
        DescribeTopicPartitionsRequest::default()
            .with_response_partition_limit(100)
            .with_topics(vec![
                describe_topic_partitions_request::TopicRequest::default().with_name(topic(T)),
            ]),
    )
}

fn api_versions(_: &Fixture, v: i16) -> RequestKind {
    let req = ApiVersionsRequest::default();
    // The client software fields exist from v3.
    RequestKind::ApiVersions(if v >= 3 {
        req.with_client_software_name(s("authz"))
            .with_client_software_version(s("1"))
    } else {
        req
    })
}

fn describe_scram(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DescribeUserScramCredentials(
        DescribeUserScramCredentialsRequest::default().with_users(None),
    )
}

fn alter_scram(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::AlterUserScramCredentials(
        AlterUserScramCredentialsRequest::default().with_deletions(vec![
            alter_user_scram_credentials_request::ScramCredentialDeletion::default()
                .with_name(s("nobody"))
                .with_mechanism(1),
        ]),
    )
}

fn describe_acls(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DescribeAcls(
        DescribeAclsRequest::default()
            .with_resource_type_filter(1)
            .with_resource_name_filter(None)
            .with_pattern_type_filter(1)
            .with_principal_filter(None)
            .with_host_filter(None)
            .with_operation(1)
            .with_permission_type(1),
    )
}

fn create_acls(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::CreateAcls(CreateAclsRequest::default().with_creations(vec![
        create_acls_request::AclCreation::default()
            .with_resource_type(TOPIC)
            .with_resource_name(s("authz-carol"))
            .with_resource_pattern_type(LITERAL)
            .with_principal(s("User:carol"))
            .with_host(s("*"))
            .with_operation(READ)
            .with_permission_type(ALLOW),
    ]))
}

fn delete_acls(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DeleteAcls(DeleteAclsRequest::default().with_filters(vec![
        delete_acls_request::DeleteAclsFilter::default()
            .with_resource_type_filter(1)
            .with_resource_name_filter(None)
            .with_pattern_type_filter(1)
            .with_principal_filter(Some(s("User:carol")))
            .with_host_filter(None)
            .with_operation(1)
            .with_permission_type(1),
    ]))
}

fn describe_producers(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DescribeProducers(DescribeProducersRequest::default().with_topics(vec![
        describe_producers_request::TopicRequest::default()
            .with_name(topic(T))
            .with_partition_indexes(vec![0]),
    ]))
}

fn describe_transactions(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::DescribeTransactions(
        DescribeTransactionsRequest::default().with_transactional_ids(vec![TransactionalId(s(TX))]),
    )
}

fn list_transactions(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::ListTransactions(ListTransactionsRequest::default().with_duration_filter(-1))
}

fn add_partitions_to_txn(f: &Fixture, _: i16) -> RequestKind {
    RequestKind::AddPartitionsToTxn(
        AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(TransactionalId(s(TX)))
            .with_v3_and_below_producer_id(ProducerId(f.producer_id))
            .with_v3_and_below_producer_epoch(f.producer_epoch)
            .with_v3_and_below_topics(vec![
                add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                    .with_name(topic(T))
                    .with_partitions(vec![0]),
            ]),
    )
}

fn add_offsets_to_txn(f: &Fixture, _: i16) -> RequestKind {
    RequestKind::AddOffsetsToTxn(
        AddOffsetsToTxnRequest::default()
            .with_transactional_id(TransactionalId(s(TX)))
            .with_producer_id(ProducerId(f.producer_id))
            .with_producer_epoch(f.producer_epoch)
            .with_group_id(GroupId(s(G))),
    )
}

fn txn_offset_commit(f: &Fixture, _: i16) -> RequestKind {
    RequestKind::TxnOffsetCommit(
        TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(s(TX)))
            .with_group_id(GroupId(s(G)))
            .with_producer_id(ProducerId(f.producer_id))
            .with_producer_epoch(f.producer_epoch)
            .with_generation_id(-1)
            .with_member_id(s(""))
            .with_topics(vec![
                txn_offset_commit_request::TxnOffsetCommitRequestTopic::default()
                    .with_name(topic(T))
                    .with_partitions(vec![
                        txn_offset_commit_request::TxnOffsetCommitRequestPartition::default()
                            .with_partition_index(0)
                            .with_committed_offset(0)
                            .with_committed_leader_epoch(-1)
                            .with_committed_metadata(Some(s(""))),
                    ]),
            ]),
    )
}

fn end_txn(f: &Fixture, _: i16) -> RequestKind {
    RequestKind::EndTxn(
        EndTxnRequest::default()
            .with_transactional_id(TransactionalId(s(TX)))
            .with_producer_id(ProducerId(f.producer_id))
            .with_producer_epoch(f.producer_epoch)
            .with_committed(false),
    )
}

fn write_txn_markers(_: &Fixture, _: i16) -> RequestKind {
    RequestKind::WriteTxnMarkers(WriteTxnMarkersRequest::default().with_markers(vec![
        write_txn_markers_request::WritableTxnMarker::default()
            .with_producer_id(ProducerId(987_654))
            .with_producer_epoch(0)
            .with_transaction_result(false)
            .with_coordinator_epoch(0)
            .with_topics(vec![
                write_txn_markers_request::WritableTxnMarkerTopic::default()
                    .with_name(topic(T))
                    .with_partition_indexes(vec![0]),
            ]),
    ]))
}

/// The code of the first item of the answer (or its top-level code where the API has one per
/// request), or whether the resource under test is listed.
fn code_of(r: &ResponseKind) -> i16 {
    match r {
        ResponseKind::Produce(r) => r.responses[0].partition_responses[0].error_code,
        ResponseKind::Fetch(r) => r.responses[0].partitions[0].error_code,
        ResponseKind::ListOffsets(r) => r.topics[0].partitions[0].error_code,
        ResponseKind::CreateTopics(r) => r.topics[0].error_code,
        ResponseKind::DeleteTopics(r) => r.responses[0].error_code,
        ResponseKind::InitProducerId(r) => r.error_code,
        ResponseKind::FindCoordinator(r) => r
            .coordinators
            .first()
            .map_or(r.error_code, |c| c.error_code),
        ResponseKind::JoinGroup(r) => r.error_code,
        ResponseKind::SyncGroup(r) => r.error_code,
        ResponseKind::Heartbeat(r) => r.error_code,
        ResponseKind::LeaveGroup(r) => r.error_code,
        ResponseKind::OffsetCommit(r) => r.topics[0].partitions[0].error_code,
        ResponseKind::OffsetFetch(r) => match r.groups.first() {
            Some(g) if g.error_code != 0 => g.error_code,
            Some(g) => g.topics[0].partitions[0].error_code,
            None if r.error_code != 0 => r.error_code,
            None => r.topics[0].partitions[0].error_code,
        },
        ResponseKind::OffsetDelete(r) => r.error_code,
        ResponseKind::DeleteGroups(r) => r.results[0].error_code,
        ResponseKind::ListGroups(r) => listed(r.groups.iter().any(|g| g.group_id.0.as_str() == G)),
        ResponseKind::DescribeGroups(r) => r.groups[0].error_code,
        ResponseKind::ConsumerGroupHeartbeat(r) => r.error_code,
        ResponseKind::ConsumerGroupDescribe(r) => r.groups[0].error_code,
        ResponseKind::DescribeConfigs(r) => r.results[0].error_code,
        ResponseKind::AlterConfigs(r) => r.responses[0].error_code,
        ResponseKind::IncrementalAlterConfigs(r) => r.responses[0].error_code,
        ResponseKind::CreatePartitions(r) => r.results[0].error_code,
        ResponseKind::DeleteRecords(r) => r.topics[0].partitions[0].error_code,
        ResponseKind::DescribeLogDirs(r) if r.error_code == 0 && r.results.is_empty() => EMPTY,
        ResponseKind::DescribeLogDirs(r) => r.error_code,
        ResponseKind::OffsetForLeaderEpoch(r) => r.topics[0].partitions[0].error_code,
        ResponseKind::DescribeTopicPartitions(r) => r.topics[0].error_code,
        ResponseKind::ApiVersions(r) => r.error_code,
        ResponseKind::DescribeUserScramCredentials(r) => r.error_code,
        ResponseKind::AlterUserScramCredentials(r) => r.results[0].error_code,
        ResponseKind::DescribeAcls(r) => r.error_code,
        ResponseKind::CreateAcls(r) => r.results[0].error_code,
        ResponseKind::DeleteAcls(r) => r.filter_results[0].error_code,
        ResponseKind::DescribeProducers(r) => r.topics[0].partitions[0].error_code,
        ResponseKind::DescribeTransactions(r) => r.transaction_states[0].error_code,
        ResponseKind::ListTransactions(r) => listed(
            r.transaction_states
                .iter()
                .any(|t| t.transactional_id.0.as_str() == TX),
        ),
        ResponseKind::AddPartitionsToTxn(r) => {
            r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
        }
        ResponseKind::AddOffsetsToTxn(r) => r.error_code,
        ResponseKind::EndTxn(r) => r.error_code,
        ResponseKind::TxnOffsetCommit(r) => r.topics[0].partitions[0].error_code,
        ResponseKind::WriteTxnMarkers(r) => r.markers[0].topics[0].partitions[0].error_code,
        other => panic!("no code for {other:?}"),
    }
}

fn listed(yes: bool) -> i16 {
    if yes {
        LISTED
    } else {
        NOT_LISTED
    }
}

/// Metadata for all topics: whether `T` is listed.
fn metadata_lists_t(r: &ResponseKind) -> i16 {
    match r {
        ResponseKind::Metadata(r) => listed(
            r.topics
                .iter()
                .any(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == T)),
        ),
        other => panic!("{other:?}"),
    }
}

fn metadata_code(r: &ResponseKind) -> i16 {
    match r {
        ResponseKind::Metadata(r) => r.topics[0].error_code,
        other => panic!("{other:?}"),
    }
}

/// DescribeCluster refuses nothing: the authorized operations asked for are the code under
/// test (bit 8, DESCRIBE, for a principal with DESCRIBE on the cluster; 0 without).
fn cluster_operations(r: &ResponseKind) -> i16 {
    match r {
        ResponseKind::DescribeCluster(r) => {
            assert_eq!(r.error_code, 0);
            i16::try_from(r.cluster_authorized_operations).unwrap()
        }
        other => panic!("{other:?}"),
    }
}

use Expect::{Authorized, Code};

/// The expected table: one row per served API (some APIs twice, for their two resources or
/// their two shapes). Grants and denial codes from Kafka's "Operations and Resources on
/// Protocols" table and `Errors`; the filtering rows from its notes (LIST_GROUPS: "If none of
/// the groups are authorized, then just an empty response will be sent back instead of an
/// error"; METADATA and LIST_TRANSACTIONS list only what the principal may DESCRIBE).
fn matrix() -> Vec<Case> {
    vec![
        case(
            "Produce: Write Topic",
            ApiKey::Produce,
            12,
            &[(TOPIC, T, WRITE)],
            produce,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "Fetch: Read Topic",
            ApiKey::Fetch,
            12,
            &[(TOPIC, T, READ)],
            fetch,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "ListOffsets: Describe Topic",
            ApiKey::ListOffsets,
            7,
            &[(TOPIC, T, DESCRIBE)],
            list_offsets,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "ListOffsets: Describe implied by Read",
            ApiKey::ListOffsets,
            7,
            &[(TOPIC, T, READ)],
            list_offsets,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "Metadata (named): Describe Topic",
            ApiKey::Metadata,
            12,
            &[(TOPIC, T, DESCRIBE)],
            metadata_named,
            metadata_code,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "Metadata (all): lists only what may be described",
            ApiKey::Metadata,
            12,
            &[(TOPIC, T, DESCRIBE)],
            metadata_all,
            metadata_lists_t,
            Code(LISTED),
            Code(NOT_LISTED),
        ),
        case(
            "Metadata v0 (all)",
            ApiKey::Metadata,
            0,
            &[(TOPIC, T, WRITE)],
            metadata_all,
            metadata_lists_t,
            Code(LISTED),
            Code(NOT_LISTED),
        ),
        case(
            "ApiVersions: none",
            ApiKey::ApiVersions,
            4,
            &[],
            api_versions,
            code_of,
            Code(0),
            Code(0),
        ),
        case(
            "CreateTopics: Create Topic",
            ApiKey::CreateTopics,
            7,
            &[(TOPIC, "authz-created", CREATE)],
            create_topics,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "DeleteTopics: Delete Topic",
            ApiKey::DeleteTopics,
            6,
            &[(TOPIC, "authz-doomed", DELETE)],
            delete_topics,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "InitProducerId: IdempotentWrite Cluster",
            ApiKey::InitProducerId,
            4,
            &[(CLUSTER, CLUSTER_NAME, IDEMPOTENT_WRITE)],
            init_idempotent,
            code_of,
            Code(0),
            Code(CLUSTER_AUTHORIZATION_FAILED),
        ),
        case(
            "InitProducerId: Write TransactionalId",
            ApiKey::InitProducerId,
            4,
            &[(TXN_ID, "authz-tx-alice", WRITE)],
            init_transactional,
            code_of,
            Code(0),
            Code(TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        ),
        case(
            "FindCoordinator: Describe Group",
            ApiKey::FindCoordinator,
            4,
            &[(GROUP, G, DESCRIBE)],
            find_group,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "FindCoordinator v3: Describe Group",
            ApiKey::FindCoordinator,
            3,
            &[(GROUP, G, DESCRIBE)],
            find_group_v3,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "FindCoordinator: Describe TransactionalId",
            ApiKey::FindCoordinator,
            4,
            &[(TXN_ID, TX, DESCRIBE)],
            find_txn,
            code_of,
            Code(0),
            Code(TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        ),
        case(
            "JoinGroup: Read Group",
            ApiKey::JoinGroup,
            9,
            &[(GROUP, "authz-join", READ)],
            join_group,
            code_of,
            Authorized,
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "SyncGroup: Read Group",
            ApiKey::SyncGroup,
            5,
            &[(GROUP, "authz-join", READ)],
            sync_group,
            code_of,
            Authorized,
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "Heartbeat: Read Group",
            ApiKey::Heartbeat,
            4,
            &[(GROUP, "authz-join", READ)],
            heartbeat,
            code_of,
            Authorized,
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "LeaveGroup: Read Group",
            ApiKey::LeaveGroup,
            5,
            &[(GROUP, "authz-join", READ)],
            leave_group,
            code_of,
            Authorized,
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "OffsetCommit: Read Group + Read Topic",
            ApiKey::OffsetCommit,
            9,
            &[(GROUP, G, READ), (TOPIC, T, READ)],
            offset_commit,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "OffsetCommit: group checked first, then the topic",
            ApiKey::OffsetCommit,
            9,
            &[(GROUP, G, READ)],
            offset_commit,
            code_of,
            Code(TOPIC_AUTHORIZATION_FAILED),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "OffsetFetch: Describe Group + Describe Topic",
            ApiKey::OffsetFetch,
            9,
            &[(GROUP, G, DESCRIBE), (TOPIC, T, DESCRIBE)],
            offset_fetch,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "OffsetFetch v7: Describe Group + Describe Topic",
            ApiKey::OffsetFetch,
            7,
            &[(GROUP, G, DESCRIBE), (TOPIC, T, DESCRIBE)],
            offset_fetch_v7,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "OffsetDelete: Delete Group + Read Topic",
            ApiKey::OffsetDelete,
            0,
            &[(GROUP, "authz-g-offsets", DELETE), (TOPIC, T, READ)],
            offset_delete,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "DeleteGroups: Delete Group",
            ApiKey::DeleteGroups,
            2,
            &[(GROUP, "authz-g-doomed", DELETE)],
            delete_groups,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "ListGroups: Describe Group (filtered)",
            ApiKey::ListGroups,
            5,
            &[(GROUP, G, DESCRIBE)],
            list_groups,
            code_of,
            Code(LISTED),
            Code(NOT_LISTED),
        ),
        case(
            "ListGroups: Describe Cluster lists all",
            ApiKey::ListGroups,
            5,
            &[(CLUSTER, CLUSTER_NAME, DESCRIBE)],
            list_groups,
            code_of,
            Code(LISTED),
            Code(NOT_LISTED),
        ),
        case(
            "DescribeGroups: Describe Group",
            ApiKey::DescribeGroups,
            5,
            &[(GROUP, G, DESCRIBE)],
            describe_groups,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "ConsumerGroupHeartbeat: Read Group (+ Describe subscribed Topic)",
            ApiKey::ConsumerGroupHeartbeat,
            1,
            &[(GROUP, "authz-cg", READ), (TOPIC, T, DESCRIBE)],
            consumer_group_heartbeat,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "ConsumerGroupDescribe: Read Group (+ Describe member Topics)",
            ApiKey::ConsumerGroupDescribe,
            1,
            &[(GROUP, "authz-cg", READ), (TOPIC, T, DESCRIBE)],
            consumer_group_describe,
            code_of,
            Code(0),
            Code(GROUP_AUTHORIZATION_FAILED),
        ),
        case(
            "DescribeConfigs: DescribeConfigs Topic",
            ApiKey::DescribeConfigs,
            4,
            &[(TOPIC, T, DESCRIBE_CONFIGS)],
            describe_topic_configs,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "DescribeConfigs: DescribeConfigs Cluster (broker)",
            ApiKey::DescribeConfigs,
            4,
            &[(CLUSTER, CLUSTER_NAME, DESCRIBE_CONFIGS)],
            describe_broker_configs,
            code_of,
            Code(0),
            Code(CLUSTER_AUTHORIZATION_FAILED),
        ),
        case(
            "AlterConfigs: AlterConfigs Topic",
            ApiKey::AlterConfigs,
            2,
            &[(TOPIC, T, ALTER_CONFIGS)],
            alter_configs,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "IncrementalAlterConfigs: AlterConfigs Topic",
            ApiKey::IncrementalAlterConfigs,
            1,
            &[(TOPIC, T, ALTER_CONFIGS)],
            incremental_alter_configs,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "CreatePartitions: Alter Topic",
            ApiKey::CreatePartitions,
            3,
            &[(TOPIC, T2, ALTER)],
            create_partitions,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "DeleteRecords: Delete Topic",
            ApiKey::DeleteRecords,
            2,
            &[(TOPIC, T, DELETE)],
            delete_records,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "DescribeLogDirs: Describe Cluster",
            ApiKey::DescribeLogDirs,
            4,
            &[(CLUSTER, CLUSTER_NAME, DESCRIBE)],
            describe_log_dirs,
            code_of,
            Code(0),
            Code(CLUSTER_AUTHORIZATION_FAILED),
        ),
        case(
            "OffsetForLeaderEpoch: Describe Topic",
            ApiKey::OffsetForLeaderEpoch,
            4,
            &[(TOPIC, T, DESCRIBE)],
            offset_for_leader_epoch,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "DescribeCluster: Describe Cluster (authorized operations)",
            ApiKey::DescribeCluster,
            2,
            &[(CLUSTER, CLUSTER_NAME, DESCRIBE)],
            describe_cluster,
            cluster_operations,
            Code(1 << 8),
            Code(0),
        ),
        case(
            "DescribeTopicPartitions: Describe Topic",
            ApiKey::DescribeTopicPartitions,
            0,
            &[(TOPIC, T, DESCRIBE)],
            describe_topic_partitions,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "DescribeUserScramCredentials: Describe Cluster",
            ApiKey::DescribeUserScramCredentials,
            0,
            &[(CLUSTER, CLUSTER_NAME, DESCRIBE)],
            describe_scram,
            code_of,
            Code(0),
            Code(CLUSTER_AUTHORIZATION_FAILED),
        ),
        case(
            "AlterUserScramCredentials: Alter Cluster",
            ApiKey::AlterUserScramCredentials,
            0,
            &[(CLUSTER, CLUSTER_NAME, ALTER)],
            alter_scram,
            code_of,
            Authorized,
            Code(CLUSTER_AUTHORIZATION_FAILED),
        ),
        case(
            "DescribeAcls: Describe Cluster",
            ApiKey::DescribeAcls,
            3,
            &[(CLUSTER, CLUSTER_NAME, DESCRIBE)],
            describe_acls,
            code_of,
            Code(0),
            Code(CLUSTER_AUTHORIZATION_FAILED),
        ),
        case(
            "CreateAcls: Alter Cluster",
            ApiKey::CreateAcls,
            3,
            &[(CLUSTER, CLUSTER_NAME, ALTER)],
            create_acls,
            code_of,
            Code(0),
            Code(CLUSTER_AUTHORIZATION_FAILED),
        ),
        case(
            "DeleteAcls: Alter Cluster",
            ApiKey::DeleteAcls,
            3,
            &[(CLUSTER, CLUSTER_NAME, ALTER)],
            delete_acls,
            code_of,
            Code(0),
            Code(CLUSTER_AUTHORIZATION_FAILED),
        ),
        case(
            "DescribeProducers: Read Topic",
            ApiKey::DescribeProducers,
            0,
            &[(TOPIC, T, READ)],
            describe_producers,
            code_of,
            Code(0),
            Code(TOPIC_AUTHORIZATION_FAILED),
        ),
        case(
            "DescribeTransactions: Describe TransactionalId",
            ApiKey::DescribeTransactions,
            0,
            &[(TXN_ID, TX, DESCRIBE)],
            describe_transactions,
            code_of,
            Code(0),
            Code(TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        ),
        case(
            "ListTransactions: Describe TransactionalId (filtered)",
            ApiKey::ListTransactions,
            1,
            &[(TXN_ID, TX, DESCRIBE)],
            list_transactions,
            code_of,
            Code(LISTED),
            Code(NOT_LISTED),
        ),
        case(
            "AddPartitionsToTxn: Write TransactionalId + Write Topic",
            ApiKey::AddPartitionsToTxn,
            3,
            &[(TXN_ID, TX, WRITE), (TOPIC, T, WRITE)],
            add_partitions_to_txn,
            code_of,
            Code(0),
            Code(TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        ),
        case(
            "AddOffsetsToTxn: Write TransactionalId + Read Group",
            ApiKey::AddOffsetsToTxn,
            3,
            &[(TXN_ID, TX, WRITE), (GROUP, G, READ)],
            add_offsets_to_txn,
            code_of,
            Code(0),
            Code(TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        ),
        case(
            "TxnOffsetCommit: Write TransactionalId + Read Group + Read Topic",
            ApiKey::TxnOffsetCommit,
            3,
            &[(TXN_ID, TX, WRITE), (GROUP, G, READ), (TOPIC, T, READ)],
            txn_offset_commit,
            code_of,
            Code(0),
            Code(TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        ),
        case(
            "EndTxn: Write TransactionalId",
            ApiKey::EndTxn,
            3,
            &[(TXN_ID, TX, WRITE)],
            end_txn,
            code_of,
            Code(0),
            Code(TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        ),
        case(
            "WriteTxnMarkers: ClusterAction Cluster",
            ApiKey::WriteTxnMarkers,
            1,
            &[(CLUSTER, CLUSTER_NAME, CLUSTER_ACTION)],
            write_txn_markers,
            code_of,
            Authorized,
            Code(CLUSTER_AUTHORIZATION_FAILED),
        ),
    ]
}

#[allow(clippy::too_many_arguments)]
fn case(
    name: &'static str,
    api: ApiKey,
    version: i16,
    grants: &'static [(i8, &'static str, i8)],
    request: fn(&Fixture, i16) -> RequestKind,
    code: fn(&ResponseKind) -> i16,
    granted: Expect,
    denied: Expect,
) -> Case {
    Case {
        name,
        api,
        version,
        grants,
        request,
        code,
        granted,
        denied,
    }
}

// --- The broker and its clients --------------------------------------------------------------

fn authz_broker(dir: &Path) -> Cohort {
    let users = dir.join("plain-users");
    std::fs::write(
        &users,
        "admin:admin-secret\nalice:alice-secret\nbob:bob-secret\n",
    )
    .unwrap();
    Cohort::start(
        &dir.join("data"),
        &[
            "--listeners",
            "SASL_PLAINTEXT://127.0.0.1:0",
            "--sasl-enabled-mechanisms",
            "PLAIN",
            "--sasl-plain-users",
            users.to_str().unwrap(),
            "--authorizer",
            "acl",
            "--super-users",
            "User:admin",
        ],
    )
}

fn acl_creation(
    principal: &str,
    (resource_type, name, operation): (i8, &str, i8),
) -> create_acls_request::AclCreation {
    create_acls_request::AclCreation::default()
        .with_resource_type(resource_type)
        .with_resource_name(s(name))
        .with_resource_pattern_type(LITERAL)
        .with_principal(s(principal))
        .with_host(s("*"))
        .with_operation(operation)
        .with_permission_type(ALLOW)
}

fn grant(admin: &mut RawClient, principal: &str, grants: &[(i8, &str, i8)]) {
    if grants.is_empty() {
        return;
    }
    let req = CreateAclsRequest::default()
        .with_creations(grants.iter().map(|g| acl_creation(principal, *g)).collect());
    match admin.call(ApiKey::CreateAcls, 3, RequestKind::CreateAcls(req)) {
        ResponseKind::CreateAcls(r) => {
            assert!(r.results.iter().all(|x| x.error_code == 0), "{r:?}")
        }
        other => panic!("{other:?}"),
    }
}

/// Deletes every ACL of `principal`.
fn revoke_all(admin: &mut RawClient, principal: &str) {
    let req = DeleteAclsRequest::default().with_filters(vec![
        delete_acls_request::DeleteAclsFilter::default()
            .with_resource_type_filter(1)
            .with_resource_name_filter(None)
            .with_pattern_type_filter(1)
            .with_principal_filter(Some(s(principal)))
            .with_host_filter(None)
            .with_operation(1)
            .with_permission_type(1),
    ]);
    match admin.call(ApiKey::DeleteAcls, 3, RequestKind::DeleteAcls(req)) {
        ResponseKind::DeleteAcls(r) => assert_eq!(r.filter_results[0].error_code, 0),
        other => panic!("{other:?}"),
    }
}

fn admin_call(admin: &mut RawClient, api: ApiKey, version: i16, body: RequestKind) -> ResponseKind {
    admin.call(api, version, body)
}

/// Topics, a group with offsets, a transaction, as the super user.
fn setup(admin: &mut RawClient) -> Fixture {
    let create = CreateTopicsRequest::default()
        .with_timeout_ms(10_000)
        .with_topics(
            [T, T2, "authz-doomed", "authz-consumed"]
                .iter()
                .map(|t| {
                    create_topics_request::CreatableTopic::default()
                        .with_name(topic(t))
                        .with_num_partitions(1)
                        .with_replication_factor(1)
                })
                .collect(),
        );
    match admin_call(
        admin,
        ApiKey::CreateTopics,
        7,
        RequestKind::CreateTopics(create),
    ) {
        ResponseKind::CreateTopics(r) => {
            assert!(r.topics.iter().all(|t| t.error_code == 0), "{r:?}")
        }
        other => panic!("{other:?}"),
    }
    // Records to read (and a group to list, describe and delete offsets of).
    assert_eq!(
        code_of(&admin_call(
            admin,
            ApiKey::Produce,
            12,
            produce(&NO_PRODUCER, 12)
        )),
        0
    );
    for group in [G, "authz-g-offsets", "authz-g-doomed"] {
        assert_eq!(
            code_of(&admin_call(
                admin,
                ApiKey::OffsetCommit,
                9,
                offset_commit_to(group)
            )),
            0
        );
    }
    let topic_id = match admin_call(
        admin,
        ApiKey::Metadata,
        12,
        metadata_named(&NO_PRODUCER, 12),
    ) {
        ResponseKind::Metadata(r) => r.topics[0].topic_id,
        other => panic!("{other:?}"),
    };
    // The transaction the transaction APIs act on: its coordinator may still be loading.
    let init = InitProducerIdRequest::default()
        .with_transactional_id(Some(TransactionalId(s(TX))))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        match admin_call(
            admin,
            ApiKey::InitProducerId,
            4,
            RequestKind::InitProducerId(init.clone()),
        ) {
            ResponseKind::InitProducerId(r) if r.error_code == 0 => {
                return Fixture {
                    producer_id: r.producer_id.0,
                    producer_epoch: r.producer_epoch,
                    topic_id,
                }
            }
            ResponseKind::InitProducerId(r) if std::time::Instant::now() < deadline => {
                eprintln!("InitProducerId: {}", r.error_code);
                std::thread::sleep(Duration::from_millis(200));
            }
            other => panic!("{other:?}"),
        }
    }
}

fn check(case: &Case, who: &str, got: i16, expect: Expect) {
    match expect {
        Authorized => assert!(
            !AUTHORIZATION_CODES.contains(&got),
            "{}: {who} got {got}, an authorization failure",
            case.name
        ),
        Code(c) => assert_eq!(got, c, "{}: {who}", case.name),
    }
}

#[test]
fn every_served_api_is_authorized_as_kafka_documents() {
    let dir = tempfile::tempdir().unwrap();
    let broker = authz_broker(dir.path());
    let addr = broker.listener("SASL_PLAINTEXT");
    let mut admin = RawClient::connect_plain(addr, "admin", "admin-secret");
    let fixture = setup(&mut admin);
    // Connections opened once: every grant and revoke below counts for the open ones.
    let mut alice = RawClient::connect_plain(addr, "alice", "alice-secret");
    let mut bob = RawClient::connect_plain(addr, "bob", "bob-secret");

    let cases = matrix();
    let covered: BTreeSet<i16> = cases.iter().map(|c| c.api as i16).collect();
    for api in protocol::SUPPORTED_APIS {
        if matches!(api.key, ApiKey::SaslHandshake | ApiKey::SaslAuthenticate) {
            // Never authorized (Kafka's table: "part of the authentication process"): admin,
            // alice and bob all authenticated above with both, error 0 (`RawClient::connect_plain`).
            continue;
        }
        assert!(
            covered.contains(&(api.key as i16)),
            "{:?} has no case",
            api.key
        );
    }

    // Every served version, for the principal without ACLs: Kafka's code or filtered answer
    // at each version the case's request exists in (a request naming a field a version lacks
    // does not encode; another case covers that version, which the check below holds).
    let mut swept: BTreeSet<(i16, i16)> = BTreeSet::new();
    for case in &cases {
        let range = protocol::apis::supported_range(case.api).unwrap();
        for v in range.min..=range.max {
            // Kafka 4.0 answers Produce v0-2 UNSUPPORTED_VERSION before anything else
            // (KIP-896), in a shape the codec does not decode: nothing to authorize there.
            if case.api == ApiKey::Produce && v < 3 {
                continue;
            }
            let body = (case.request)(&fixture, v);
            if common::raw::encode_frame(1, "authz", case.api, v, &body).is_err() {
                continue;
            }
            let expect = match (case.api, v) {
                // "An empty response will be returned on authorization failure" (no code
                // before v3).
                (ApiKey::DescribeLogDirs, 0..=2) => Code(EMPTY),
                _ => case.denied,
            };
            let got = (case.code)(&bob.call(case.api, v, body));
            check(case, &format!("bob (no ACL) at v{v}"), got, expect);
            swept.insert((case.api as i16, v));
        }
    }
    for api in protocol::SUPPORTED_APIS {
        for v in api.min..=api.max {
            let unswept = matches!(api.key, ApiKey::SaslHandshake | ApiKey::SaslAuthenticate)
                || (api.key == ApiKey::Produce && v < 3);
            assert!(
                unswept || swept.contains(&(api.key as i16, v)),
                "{:?} v{v} is not covered",
                api.key
            );
        }
    }
    eprintln!("swept {} (api, version) pairs for bob", swept.len());

    for case in &cases {
        let started = std::time::Instant::now();
        let denied = (case.code)(&bob.call(
            case.api,
            case.version,
            (case.request)(&fixture, case.version),
        ));
        check(case, "bob (no ACL)", denied, case.denied);
        grant(&mut admin, "User:alice", case.grants);
        let granted = (case.code)(&alice.call(
            case.api,
            case.version,
            (case.request)(&fixture, case.version),
        ));
        revoke_all(&mut admin, "User:alice");
        check(case, "alice (the documented ACLs)", granted, case.granted);
        eprintln!(
            "{:<70} bob {denied:>5}  alice {granted:>5}  {:?}",
            case.name,
            started.elapsed()
        );
    }
}

#[test]
fn authorized_operations_are_the_principals() {
    let dir = tempfile::tempdir().unwrap();
    let broker = authz_broker(dir.path());
    let addr = broker.listener("SASL_PLAINTEXT");
    let mut admin = RawClient::connect_plain(addr, "admin", "admin-secret");
    setup(&mut admin);
    let mut alice = RawClient::connect_plain(addr, "alice", "alice-secret");
    grant(
        &mut admin,
        "User:alice",
        &[
            (TOPIC, T, READ),
            (GROUP, G, DESCRIBE),
            (CLUSTER, CLUSTER_NAME, DESCRIBE),
        ],
    );
    // READ on the topic implies DESCRIBE: bits 3 and 8 (Kafka's AclOperation codes).
    match alice.call(ApiKey::Metadata, 10, metadata_ops_request()) {
        ResponseKind::Metadata(r) => {
            assert_eq!(r.topics[0].error_code, 0);
            assert_eq!(r.topics[0].topic_authorized_operations, (1 << 3) | (1 << 8));
            assert_eq!(r.cluster_authorized_operations, 1 << 8);
        }
        other => panic!("{other:?}"),
    }
    match alice.call(ApiKey::DescribeGroups, 5, describe_groups(&NO_PRODUCER, 5)) {
        ResponseKind::DescribeGroups(r) => {
            assert_eq!(r.groups[0].error_code, 0);
            assert_eq!(r.groups[0].authorized_operations, 1 << 8);
        }
        other => panic!("{other:?}"),
    }
    match alice.call(
        ApiKey::DescribeTopicPartitions,
        0,
        describe_topic_partitions(&NO_PRODUCER, 0),
    ) {
        ResponseKind::DescribeTopicPartitions(r) => {
            assert_eq!(r.topics[0].topic_authorized_operations, (1 << 3) | (1 << 8));
        }
        other => panic!("{other:?}"),
    }
    // The super user may do everything.
    match admin.call(ApiKey::Metadata, 10, metadata_ops_request()) {
        ResponseKind::Metadata(r) => {
            let all_topic_ops = [3, 4, 5, 6, 7, 8, 10, 11]
                .iter()
                .fold(0, |b, o| b | (1 << o));
            assert_eq!(r.topics[0].topic_authorized_operations, all_topic_ops);
        }
        other => panic!("{other:?}"),
    }
}

fn metadata_ops_request() -> RequestKind {
    RequestKind::Metadata(
        MetadataRequest::default()
            .with_topics(Some(vec![metadata_request::MetadataRequestTopic::default(
            )
            .with_name(Some(topic(T)))]))
            .with_allow_auto_topic_creation(false)
            .with_include_topic_authorized_operations(true)
            .with_include_cluster_authorized_operations(true),
    )
}

#[test]
fn an_acl_deleted_while_a_connection_is_open_counts_for_its_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let broker = authz_broker(dir.path());
    let addr = broker.listener("SASL_PLAINTEXT");
    let mut admin = RawClient::connect_plain(addr, "admin", "admin-secret");
    let fixture = setup(&mut admin);
    let mut alice = RawClient::connect_plain(addr, "alice", "alice-secret");
    grant(&mut admin, "User:alice", &[(TOPIC, T, READ)]);
    let fetch_code = |c: &mut RawClient| code_of(&c.call(ApiKey::Fetch, 12, fetch(&fixture, 12)));
    assert_eq!(fetch_code(&mut alice), 0);
    revoke_all(&mut admin, "User:alice");
    assert_eq!(fetch_code(&mut alice), TOPIC_AUTHORIZATION_FAILED);
    grant(&mut admin, "User:alice", &[(TOPIC, T, READ)]);
    assert_eq!(fetch_code(&mut alice), 0);
}

#[test]
fn confluent_kafka_consumes_with_read_on_topic_and_group_and_not_without_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let broker = authz_broker(dir.path());
    let addr = broker.listener("SASL_PLAINTEXT");
    let mut admin = RawClient::connect_plain(addr, "admin", "admin-secret");
    setup(&mut admin);
    let produce = RequestKind::Produce(
        ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(10_000)
            .with_topic_data(vec![produce_request::TopicProduceData::default()
                .with_name(topic("authz-consumed"))
                .with_partition_data(vec![
                    produce_request::PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(batch(5))),
                ])]),
    );
    assert_eq!(code_of(&admin.call(ApiKey::Produce, 12, produce)), 0);
    grant(
        &mut admin,
        "User:alice",
        &[
            (TOPIC, "authz-consumed", READ),
            (GROUP, "authz-readers", READ),
        ],
    );
    let consume = |group: &str| {
        let out = common::python_script(
            "authz_consume.py",
            &[
                &addr.to_string(),
                "authz-consumed",
                group,
                "5",
                "-X",
                "security.protocol=SASL_PLAINTEXT",
                "-X",
                "sasl.mechanism=PLAIN",
                "-X",
                "sasl.username=alice",
                "-X",
                "sasl.password=alice-secret",
            ],
            Duration::from_secs(90),
        );
        let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        eprintln!("{group}: {line}");
        line
    };
    let allowed = consume("authz-readers");
    assert!(
        allowed.contains("\"consumed\": 5") && allowed.contains("\"committed\": 5"),
        "{allowed}"
    );
    assert!(allowed.contains("\"errors\": []"), "{allowed}");
    let refused = consume("authz-strangers");
    assert!(refused.contains("\"consumed\": 0"), "{refused}");
    assert!(refused.contains("GROUP_AUTHORIZATION_FAILED"), "{refused}");
}

#[test]
fn refusals_hide_what_the_principal_may_not_describe() {
    let dir = tempfile::tempdir().unwrap();
    let broker = authz_broker(dir.path());
    let addr = broker.listener("SASL_PLAINTEXT");
    let mut admin = RawClient::connect_plain(addr, "admin", "admin-secret");
    setup(&mut admin);
    let mut alice = RawClient::connect_plain(addr, "alice", "alice-secret");

    // Metadata by topic id (v10+): refused by id, the name behind it not told.
    let id = match admin.call(ApiKey::Metadata, 12, metadata_named(&NO_PRODUCER, 12)) {
        ResponseKind::Metadata(r) => r.topics[0].topic_id,
        other => panic!("{other:?}"),
    };
    let by_id = RequestKind::Metadata(
        MetadataRequest::default()
            .with_topics(Some(vec![metadata_request::MetadataRequestTopic::default(
            )
            .with_name(None)
            .with_topic_id(id)]))
            .with_allow_auto_topic_creation(false),
    );
    match alice.call(ApiKey::Metadata, 12, by_id.clone()) {
        ResponseKind::Metadata(r) => {
            assert_eq!(r.topics[0].error_code, TOPIC_AUTHORIZATION_FAILED);
            assert_eq!(r.topics[0].name, None);
            assert_eq!(r.topics[0].topic_id, id);
        }
        other => panic!("{other:?}"),
    }
    grant(&mut admin, "User:alice", &[(TOPIC, T, DESCRIBE)]);
    match alice.call(ApiKey::Metadata, 12, by_id) {
        ResponseKind::Metadata(r) => {
            assert_eq!(r.topics[0].error_code, 0);
            assert_eq!(r.topics[0].name.as_ref().unwrap().0.as_str(), T);
        }
        other => panic!("{other:?}"),
    }
    revoke_all(&mut admin, "User:alice");

    // OffsetFetch for all of a group's topics lists only those the principal may DESCRIBE.
    let all_topics = RequestKind::OffsetFetch(OffsetFetchRequest::default().with_groups(vec![
        offset_fetch_request::OffsetFetchRequestGroup::default()
            .with_group_id(GroupId(s(G)))
            .with_member_id(None)
            .with_member_epoch(-1)
            .with_topics(None),
    ]));
    let fetched_topics =
        |c: &mut RawClient| match c.call(ApiKey::OffsetFetch, 9, all_topics.clone()) {
            ResponseKind::OffsetFetch(r) => {
                assert_eq!(r.groups[0].error_code, 0);
                r.groups[0]
                    .topics
                    .iter()
                    .map(|t| t.name.0.to_string())
                    .collect::<Vec<_>>()
            }
            other => panic!("{other:?}"),
        };
    grant(&mut admin, "User:alice", &[(GROUP, G, DESCRIBE)]);
    assert!(fetched_topics(&mut alice).is_empty());
    grant(&mut admin, "User:alice", &[(TOPIC, T, DESCRIBE)]);
    assert_eq!(fetched_topics(&mut alice), vec![T.to_owned()]);
    revoke_all(&mut admin, "User:alice");

    // An acks=0 produce to a topic without WRITE: no answer can carry the code, so the
    // connection is closed (KafkaApis closes it on any acks=0 error).
    let mut bob = RawClient::connect_plain(addr, "bob", "bob-secret");
    let silent = match produce(&NO_PRODUCER, 12) {
        RequestKind::Produce(p) => RequestKind::Produce(p.with_acks(0)),
        other => panic!("{other:?}"),
    };
    let (_, frame) = bob.frame(ApiKey::Produce, 12, &silent);
    std::io::Write::write_all(&mut bob.stream, &frame).unwrap();
    assert!(bob.closed_by_broker());
}
