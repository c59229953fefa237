//! No decode path sizes an allocation from a count or a length read off the wire.
//!
//! Forged frames: for every served API at every served version, the default request's body
//! (and populated ones for Metadata, OffsetCommit, JoinGroup, Produce, Fetch (by name, and by
//! topic id from v13), ListOffsets, FindCoordinator and DescribeGroups, so nested counts are
//! reached) with `i32::MAX` (a plain count or length), `i16::MAX` (a string length) or
//! `u32::MAX` (a compact varint count or length) written over, or inserted at, every byte
//! position. Each must decode to an error or a value. The sweep runs once in this process and
//! once in a child whose address space is capped at 1 GiB (`ulimit -v`): there, any allocation
//! sized from a forged count fails and aborts the child.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind};
use kafka_protocol::protocol::{Encodable, StrBytes};
use protocol::apis::PRODUCE_MIN_DECODABLE_VERSION;
use protocol::{decode_request, SUPPORTED_APIS};

/// Address space of the capped child, in KiB: room for the test harness, none for a request
/// sized from a forged count (the smallest forged one announces 2 GiB).
const CHILD_ADDRESS_SPACE_KIB: u64 = 1 << 20;

/// A request frame (no length prefix) for `body`.
fn frame(kind: &RequestKind, key: ApiKey, version: i16) -> BytesMut {
    let header = RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(1)
        .with_client_id(Some(StrBytes::from_static_str("forged")));
    let mut buf = BytesMut::new();
    header
        .encode(&mut buf, key.request_header_version(version))
        .unwrap();
    kind.encode(&mut buf, version).unwrap();
    buf
}

fn populated(key: ApiKey, version: i16) -> Option<RequestKind> {
    use kafka_protocol::messages::*;
    let s = |v: &str| StrBytes::from_string(v.to_string());
    Some(match key {
        ApiKey::Fetch => {
            // From v13 topics are named by id (KIP-516); v15 adds ReplicaState, v17 a
            // replica directory id per partition.
            let (fetched, forgotten) = if version >= 13 {
                (
                    fetch_request::FetchTopic::default().with_topic_id(uuid::Uuid::from_u128(9)),
                    fetch_request::ForgottenTopic::default()
                        .with_topic_id(uuid::Uuid::from_u128(8)),
                )
            } else {
                (
                    fetch_request::FetchTopic::default().with_topic(TopicName(s("t"))),
                    fetch_request::ForgottenTopic::default().with_topic(TopicName(s("o"))),
                )
            };
            let mut partition = fetch_request::FetchPartition::default().with_partition(1);
            if version >= 17 {
                partition = partition.with_replica_directory_id(uuid::Uuid::from_u128(5));
            }
            let mut r =
                FetchRequest::default().with_topics(vec![fetched.with_partitions(vec![partition])]);
            if version >= 7 {
                r = r.with_forgotten_topics_data(vec![forgotten.with_partitions(vec![0, 1])]);
            }
            if version >= 15 {
                r = r.with_replica_state(
                    fetch_request::ReplicaState::default().with_replica_id(BrokerId(2)),
                );
            }
            RequestKind::Fetch(r)
        }
        ApiKey::ListOffsets => {
            let mut r = ListOffsetsRequest::default().with_topics(vec![
                list_offsets_request::ListOffsetsTopic::default()
                    .with_name(TopicName(s("t")))
                    .with_partitions(vec![
                        list_offsets_request::ListOffsetsPartition::default().with_timestamp(-4)
                    ]),
            ]);
            if version >= 10 {
                r = r.with_timeout_ms(1000);
            }
            RequestKind::ListOffsets(r)
        }
        ApiKey::FindCoordinator if version >= 4 => RequestKind::FindCoordinator(
            FindCoordinatorRequest::default()
                // v6 adds share groups' key type (KIP-932).
                .with_key_type(if version >= 6 { 2 } else { 0 })
                .with_coordinator_keys(vec![s("g"), s("h")]),
        ),
        ApiKey::DescribeGroups => RequestKind::DescribeGroups(
            DescribeGroupsRequest::default().with_groups(vec![GroupId(s("g")), GroupId(s("h"))]),
        ),
        ApiKey::AddPartitionsToTxn => RequestKind::AddPartitionsToTxn(
            AddPartitionsToTxnRequest::default()
                .with_v3_and_below_transactional_id(TransactionalId(s("x")))
                .with_v3_and_below_topics(vec![
                    add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                        .with_name(TopicName(s("t")))
                        .with_partitions(vec![0, 1]),
                ]),
        ),
        ApiKey::DescribeProducers => {
            RequestKind::DescribeProducers(DescribeProducersRequest::default().with_topics(vec![
                describe_producers_request::TopicRequest::default()
                    .with_name(TopicName(s("t")))
                    .with_partition_indexes(vec![0, 1]),
            ]))
        }
        ApiKey::DescribeTransactions => RequestKind::DescribeTransactions(
            DescribeTransactionsRequest::default()
                .with_transactional_ids(vec![TransactionalId(s("x")), TransactionalId(s("y"))]),
        ),
        ApiKey::ListTransactions => RequestKind::ListTransactions(
            ListTransactionsRequest::default()
                .with_state_filters(vec![s("Ongoing")])
                .with_producer_id_filters(vec![ProducerId(1)]),
        ),
        ApiKey::TxnOffsetCommit => RequestKind::TxnOffsetCommit(
            TxnOffsetCommitRequest::default()
                .with_transactional_id(TransactionalId(s("x")))
                .with_group_id(GroupId(s("g")))
                .with_topics(vec![
                    txn_offset_commit_request::TxnOffsetCommitRequestTopic::default()
                        .with_name(TopicName(s("t")))
                        .with_partitions(vec![
                            txn_offset_commit_request::TxnOffsetCommitRequestPartition::default()
                                .with_committed_offset(5)
                                .with_committed_metadata(Some(s("md"))),
                        ]),
                ]),
        ),
        ApiKey::WriteTxnMarkers => {
            RequestKind::WriteTxnMarkers(WriteTxnMarkersRequest::default().with_markers(vec![
                write_txn_markers_request::WritableTxnMarker::default().with_topics(vec![
                    write_txn_markers_request::WritableTxnMarkerTopic::default()
                        .with_name(TopicName(s("t")))
                        .with_partition_indexes(vec![0]),
                ]),
            ]))
        }
        ApiKey::Metadata => RequestKind::Metadata(MetadataRequest::default().with_topics(Some(
            vec![metadata_request::MetadataRequestTopic::default(
                )
                .with_name(Some(TopicName(s("t"))))],
        ))),
        ApiKey::OffsetCommit => RequestKind::OffsetCommit(
            OffsetCommitRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_member_id(s("m"))
                .with_topics(vec![
                    offset_commit_request::OffsetCommitRequestTopic::default()
                        .with_name(TopicName(s("t")))
                        .with_partitions(vec![
                            offset_commit_request::OffsetCommitRequestPartition::default()
                                .with_committed_offset(5)
                                .with_committed_metadata(Some(s("md"))),
                        ]),
                ]),
        ),
        ApiKey::JoinGroup => RequestKind::JoinGroup(
            JoinGroupRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_protocol_type(s("consumer"))
                .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
                )
                .with_name(s("range"))
                .with_metadata(Bytes::from_static(b"subscription"))]),
        ),
        ApiKey::Produce => RequestKind::Produce(ProduceRequest::default().with_topic_data(vec![
            produce_request::TopicProduceData::default()
                .with_name(TopicName(s("t")))
                .with_partition_data(vec![produce_request::PartitionProduceData::default()
                    .with_records(Some(Bytes::from_static(&[0u8; 24])))]),
        ])),
        ApiKey::DescribeLogDirs => {
            RequestKind::DescribeLogDirs(DescribeLogDirsRequest::default().with_topics(Some(vec![
                describe_log_dirs_request::DescribableLogDirTopic::default()
                    .with_topic(TopicName(s("t")))
                    .with_partitions(vec![0, 1]),
            ])))
        }
        ApiKey::OffsetForLeaderEpoch => RequestKind::OffsetForLeaderEpoch(
            OffsetForLeaderEpochRequest::default().with_topics(vec![
                offset_for_leader_epoch_request::OffsetForLeaderTopic::default()
                    .with_topic(TopicName(s("t")))
                    .with_partitions(vec![
                        offset_for_leader_epoch_request::OffsetForLeaderPartition::default(),
                    ]),
            ]),
        ),
        ApiKey::DescribeTopicPartitions => RequestKind::DescribeTopicPartitions(
            DescribeTopicPartitionsRequest::default()
                .with_topics(vec![
                    describe_topic_partitions_request::TopicRequest::default()
                        .with_name(TopicName(s("t"))),
                ])
                .with_cursor(Some(
                    describe_topic_partitions_request::Cursor::default()
                        .with_topic_name(TopicName(s("t"))),
                )),
        ),
        ApiKey::DescribeUserScramCredentials => RequestKind::DescribeUserScramCredentials(
            DescribeUserScramCredentialsRequest::default().with_users(Some(vec![
                describe_user_scram_credentials_request::UserName::default().with_name(s("u")),
            ])),
        ),
        ApiKey::AlterUserScramCredentials => RequestKind::AlterUserScramCredentials(
            AlterUserScramCredentialsRequest::default()
                .with_deletions(vec![
                    alter_user_scram_credentials_request::ScramCredentialDeletion::default()
                        .with_name(s("u")),
                ])
                .with_upsertions(vec![
                    alter_user_scram_credentials_request::ScramCredentialUpsertion::default()
                        .with_name(s("u"))
                        .with_salt(Bytes::from_static(b"salt"))
                        .with_salted_password(Bytes::from_static(b"salted")),
                ]),
        ),
        ApiKey::DescribeAcls => RequestKind::DescribeAcls(
            DescribeAclsRequest::default()
                .with_resource_type_filter(2)
                .with_resource_name_filter(Some(s("t")))
                .with_pattern_type_filter(3)
                .with_principal_filter(Some(s("User:a")))
                .with_host_filter(Some(s("*")))
                .with_operation(3)
                .with_permission_type(3),
        ),
        ApiKey::CreateAcls => RequestKind::CreateAcls(CreateAclsRequest::default().with_creations(
            vec![create_acls_request::AclCreation::default()
                .with_resource_type(2)
                .with_resource_name(s("t"))
                .with_resource_pattern_type(3)
                .with_principal(s("User:a"))
                .with_host(s("*"))
                .with_operation(3)
                .with_permission_type(3)],
        )),
        ApiKey::DeleteAcls => RequestKind::DeleteAcls(DeleteAclsRequest::default().with_filters(
            vec![delete_acls_request::DeleteAclsFilter::default()
                .with_resource_type_filter(1)
                .with_resource_name_filter(Some(s("t")))
                .with_pattern_type_filter(2)
                .with_principal_filter(None)
                .with_host_filter(Some(s("*")))
                .with_operation(1)
                .with_permission_type(1)],
        )),
        _ => return None,
    })
}

/// Decodes every forged frame; returns (frames, refused).
fn sweep() -> (usize, usize) {
    let patterns: [&[u8]; 3] = [
        &[0x7f, 0xff, 0xff, 0xff],       // i32::MAX: a count or a bytes length
        &[0x7f, 0xff],                   // i16::MAX: a string length
        &[0xff, 0xff, 0xff, 0xff, 0x0f], // u32::MAX as an unsigned varint: a compact one
    ];
    let mut frames = 0usize;
    let mut errors = 0usize;
    for range in SUPPORTED_APIS {
        let low = if range.key == ApiKey::Produce {
            PRODUCE_MIN_DECODABLE_VERSION
        } else {
            range.min
        };
        for version in low..=range.max {
            let kinds = [
                Some(RequestKind::default_for(range.key)),
                populated(range.key, version),
            ];
            for kind in kinds.iter().flatten() {
                let base = frame(kind, range.key, version);
                // Past the fixed api key / version / correlation id: the rest is fair game.
                for at in 8..=base.len() {
                    for pattern in patterns {
                        for insert in [false, true] {
                            let mut forged = BytesMut::with_capacity(base.len() + pattern.len());
                            forged.put_slice(&base[..at]);
                            forged.put_slice(pattern);
                            let skip = if insert { 0 } else { pattern.len() };
                            if let Some(rest) = base.get(at + skip..) {
                                forged.put_slice(rest);
                            }
                            errors += usize::from(decode_request(Bytes::from(forged)).is_err());
                            frames += 1;
                        }
                    }
                }
            }
        }
    }
    (frames, errors)
}

#[test]
fn forged_counts_and_lengths_are_refused() {
    let (frames, errors) = sweep();
    eprintln!("{frames} forged frames decoded, {errors} refused");
    assert!(frames > 10_000, "{frames}");
    assert!(
        errors > frames / 2,
        "most forged frames are malformed: {errors}/{frames}"
    );
}

#[test]
fn forged_counts_and_lengths_decode_within_a_1_gib_address_space() {
    if std::env::var_os("FORGED_COUNTS_CAPPED").is_some() {
        // This is the capped child: the sweep itself is the test.
        sweep();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {CHILD_ADDRESS_SPACE_KIB} && exec \"$0\" --exact \
             forged_counts_and_lengths_decode_within_a_1_gib_address_space --test-threads 1"
        ))
        .arg(&exe)
        .env("FORGED_COUNTS_CAPPED", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the capped sweep failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
}

/// `RequestKind` has no default per key; this builds one.
trait DefaultFor {
    fn default_for(key: ApiKey) -> Self;
}

impl DefaultFor for RequestKind {
    fn default_for(key: ApiKey) -> Self {
        match key {
            ApiKey::Produce => RequestKind::Produce(Default::default()),
            ApiKey::AddPartitionsToTxn => RequestKind::AddPartitionsToTxn(Default::default()),
            ApiKey::AddOffsetsToTxn => RequestKind::AddOffsetsToTxn(Default::default()),
            ApiKey::EndTxn => RequestKind::EndTxn(Default::default()),
            ApiKey::TxnOffsetCommit => RequestKind::TxnOffsetCommit(Default::default()),
            ApiKey::WriteTxnMarkers => RequestKind::WriteTxnMarkers(Default::default()),
            ApiKey::DescribeTransactions => RequestKind::DescribeTransactions(Default::default()),
            ApiKey::ListTransactions => RequestKind::ListTransactions(Default::default()),
            ApiKey::DescribeProducers => RequestKind::DescribeProducers(Default::default()),
            ApiKey::Fetch => RequestKind::Fetch(Default::default()),
            ApiKey::ListOffsets => RequestKind::ListOffsets(Default::default()),
            ApiKey::Metadata => RequestKind::Metadata(Default::default()),
            ApiKey::ApiVersions => RequestKind::ApiVersions(Default::default()),
            ApiKey::CreateTopics => RequestKind::CreateTopics(Default::default()),
            ApiKey::DeleteTopics => RequestKind::DeleteTopics(Default::default()),
            ApiKey::InitProducerId => RequestKind::InitProducerId(Default::default()),
            ApiKey::FindCoordinator => RequestKind::FindCoordinator(Default::default()),
            ApiKey::JoinGroup => RequestKind::JoinGroup(Default::default()),
            ApiKey::SyncGroup => RequestKind::SyncGroup(Default::default()),
            ApiKey::Heartbeat => RequestKind::Heartbeat(Default::default()),
            ApiKey::LeaveGroup => RequestKind::LeaveGroup(Default::default()),
            ApiKey::OffsetCommit => RequestKind::OffsetCommit(Default::default()),
            ApiKey::OffsetFetch => RequestKind::OffsetFetch(Default::default()),
            ApiKey::OffsetDelete => RequestKind::OffsetDelete(Default::default()),
            ApiKey::DeleteGroups => RequestKind::DeleteGroups(Default::default()),
            ApiKey::ListGroups => RequestKind::ListGroups(Default::default()),
            ApiKey::DescribeGroups => RequestKind::DescribeGroups(Default::default()),
            ApiKey::DescribeConfigs => RequestKind::DescribeConfigs(Default::default()),
            ApiKey::AlterConfigs => RequestKind::AlterConfigs(Default::default()),
            ApiKey::IncrementalAlterConfigs => {
                RequestKind::IncrementalAlterConfigs(Default::default())
            }
            ApiKey::CreatePartitions => RequestKind::CreatePartitions(Default::default()),
            ApiKey::DeleteRecords => RequestKind::DeleteRecords(Default::default()),
            ApiKey::DescribeLogDirs => RequestKind::DescribeLogDirs(Default::default()),
            ApiKey::DescribeTopicPartitions => {
                RequestKind::DescribeTopicPartitions(Default::default())
            }
            ApiKey::DescribeCluster => RequestKind::DescribeCluster(Default::default()),
            ApiKey::OffsetForLeaderEpoch => RequestKind::OffsetForLeaderEpoch(Default::default()),
            ApiKey::ConsumerGroupHeartbeat => {
                RequestKind::ConsumerGroupHeartbeat(Default::default())
            }
            ApiKey::ConsumerGroupDescribe => RequestKind::ConsumerGroupDescribe(Default::default()),
            ApiKey::SaslHandshake => RequestKind::SaslHandshake(Default::default()),
            ApiKey::SaslAuthenticate => RequestKind::SaslAuthenticate(Default::default()),
            ApiKey::DescribeUserScramCredentials => {
                RequestKind::DescribeUserScramCredentials(Default::default())
            }
            ApiKey::AlterUserScramCredentials => {
                RequestKind::AlterUserScramCredentials(Default::default())
            }
            ApiKey::DescribeAcls => RequestKind::DescribeAcls(Default::default()),
            ApiKey::CreateAcls => RequestKind::CreateAcls(Default::default()),
            ApiKey::DeleteAcls => RequestKind::DeleteAcls(Default::default()),
            other => panic!("served API {other:?} has no default here: add it"),
        }
    }
}
