//! Round trips for every served API at every served version: a populated request encoded as a
//! client would is decoded by `decode_request` into the same value and re-encodes to the same
//! bytes; a populated response framed by `encode_response` decodes (as a client would) into the
//! same value. Samples set every field the version carries, so nothing passes by being empty.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use protocol::apis::PRODUCE_MIN_DECODABLE_VERSION;
use protocol::{decode_request, encode_response, SUPPORTED_APIS};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn topic(v: &str) -> TopicName {
    TopicName(s(v))
}

fn uuid(n: u8) -> uuid::Uuid {
    uuid::Uuid::from_bytes([n; 16])
}

fn records() -> Bytes {
    Bytes::from_static(b"\0\0\0\0\0\0\0\0opaque record batch bytes")
}

fn request_sample(key: ApiKey, v: i16) -> RequestKind {
    match key {
        ApiKey::Produce => RequestKind::Produce(
            ProduceRequest::default()
                .with_transactional_id(None)
                .with_acks(-1)
                .with_timeout_ms(1500)
                .with_topic_data(vec![produce_request::TopicProduceData::default()
                    .with_name(topic("orders"))
                    .with_partition_data(vec![
                        produce_request::PartitionProduceData::default()
                            .with_index(0)
                            .with_records(Some(records())),
                        produce_request::PartitionProduceData::default().with_index(2),
                    ])]),
        ),
        ApiKey::Fetch => {
            let mut p = fetch_request::FetchPartition::default()
                .with_partition(1)
                .with_fetch_offset(42)
                .with_partition_max_bytes(1 << 20);
            if v >= 5 {
                p = p.with_log_start_offset(-1);
            }
            if v >= 9 {
                p = p.with_current_leader_epoch(3);
            }
            if v >= 12 {
                p = p.with_last_fetched_epoch(2);
            }
            if v >= 17 {
                p = p.with_replica_directory_id(uuid(5));
            }
            // From v13 topics are named by id (KIP-516).
            let (fetched, forgotten) = if v >= 13 {
                (
                    fetch_request::FetchTopic::default().with_topic_id(uuid(9)),
                    fetch_request::ForgottenTopic::default().with_topic_id(uuid(8)),
                )
            } else {
                (
                    fetch_request::FetchTopic::default().with_topic(topic("orders")),
                    fetch_request::ForgottenTopic::default().with_topic(topic("old")),
                )
            };
            let mut r = FetchRequest::default()
                .with_max_wait_ms(500)
                .with_min_bytes(1)
                .with_max_bytes(50 << 20)
                .with_isolation_level(1)
                .with_topics(vec![fetched.with_partitions(vec![p])]);
            // v15 moves the replica id into ReplicaState (KIP-903).
            if v >= 15 {
                r = r.with_replica_state(
                    fetch_request::ReplicaState::default()
                        .with_replica_id(BrokerId(2))
                        .with_replica_epoch(7),
                );
            } else {
                r = r.with_replica_id(BrokerId(-1));
            }
            if v >= 7 {
                r = r
                    .with_session_id(0)
                    .with_session_epoch(-1)
                    .with_forgotten_topics_data(vec![forgotten.with_partitions(vec![4])]);
            }
            if v >= 11 {
                r = r.with_rack_id(s("rack-a"));
            }
            if v >= 12 {
                r = r.with_cluster_id(Some(s("cohort-cluster")));
            }
            RequestKind::Fetch(r)
        }
        ApiKey::ListOffsets => {
            let mut p = list_offsets_request::ListOffsetsPartition::default()
                .with_partition_index(2)
                .with_timestamp(-2);
            if v >= 4 {
                p = p.with_current_leader_epoch(7);
            }
            let mut r = ListOffsetsRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(vec![list_offsets_request::ListOffsetsTopic::default()
                    .with_name(topic("orders"))
                    .with_partitions(vec![p])]);
            if v >= 2 {
                r = r.with_isolation_level(1);
            }
            if v >= 10 {
                r = r.with_timeout_ms(15_000);
            }
            RequestKind::ListOffsets(r)
        }
        ApiKey::Metadata => {
            let mut t = MetadataRequestTopic::default().with_name(Some(topic("orders")));
            if v >= 10 {
                t = t.with_topic_id(uuid(9));
            }
            let mut r = MetadataRequest::default().with_topics(Some(vec![t]));
            if v >= 4 {
                r = r.with_allow_auto_topic_creation(false);
            }
            if v >= 8 {
                r = r.with_include_topic_authorized_operations(true);
            }
            if (8..=10).contains(&v) {
                r = r.with_include_cluster_authorized_operations(true);
            }
            RequestKind::Metadata(r)
        }
        ApiKey::ApiVersions => {
            let mut r = ApiVersionsRequest::default();
            if v >= 3 {
                r = r
                    .with_client_software_name(s("librdkafka"))
                    .with_client_software_version(s("2.16.0"));
            }
            RequestKind::ApiVersions(r)
        }
        ApiKey::CreateTopics => RequestKind::CreateTopics(
            CreateTopicsRequest::default()
                .with_timeout_ms(30_000)
                .with_validate_only(true)
                .with_topics(vec![
                    CreatableTopic::default()
                        .with_name(topic("orders"))
                        .with_num_partitions(3)
                        .with_replication_factor(1)
                        .with_configs(vec![create_topics_request::CreatableTopicConfig::default()
                            .with_name(s("retention.ms"))
                            .with_value(Some(s("60000")))]),
                    CreatableTopic::default()
                        .with_name(topic("assigned"))
                        .with_num_partitions(-1)
                        .with_replication_factor(-1)
                        .with_assignments(vec![
                            create_topics_request::CreatableReplicaAssignment::default()
                                .with_partition_index(0)
                                .with_broker_ids(vec![BrokerId(1)]),
                        ]),
                ]),
        ),
        ApiKey::DeleteTopics => {
            let r = DeleteTopicsRequest::default().with_timeout_ms(10_000);
            RequestKind::DeleteTopics(if v >= 6 {
                r.with_topics(vec![
                    DeleteTopicState::default().with_name(Some(topic("orders"))),
                    DeleteTopicState::default().with_topic_id(uuid(3)),
                ])
            } else {
                r.with_topic_names(vec![topic("orders"), topic("other")])
            })
        }
        ApiKey::InitProducerId => {
            let mut r = InitProducerIdRequest::default()
                .with_transactional_id(None)
                .with_transaction_timeout_ms(60_000);
            if v >= 3 {
                r = r.with_producer_id(ProducerId(17)).with_producer_epoch(2);
            }
            RequestKind::InitProducerId(r)
        }
        // A SCRAM client-first message; v0 handshakes are followed by bare tokens instead.
        ApiKey::SaslHandshake => RequestKind::SaslHandshake(
            SaslHandshakeRequest::default().with_mechanism(s("SCRAM-SHA-256")),
        ),
        ApiKey::SaslAuthenticate => RequestKind::SaslAuthenticate(
            SaslAuthenticateRequest::default()
                .with_auth_bytes(Bytes::from_static(b"n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL")),
        ),
        other => group_request_sample(other, v)
            .or_else(|| admin_request_sample(other, v))
            .or_else(|| txn_request_sample(other, v))
            .unwrap_or_else(|| panic!("no sample for {other:?}: add one with its handler")),
    }
}

fn response_sample(key: ApiKey, v: i16) -> ResponseKind {
    match key {
        ApiKey::Produce => {
            let mut p = produce_response::PartitionProduceResponse::default()
                .with_index(0)
                .with_error_code(0)
                .with_base_offset(1000);
            if v >= 2 {
                p = p.with_log_append_time_ms(-1);
            }
            if v >= 5 {
                p = p.with_log_start_offset(10);
            }
            if v >= 8 {
                p = p
                    .with_record_errors(vec![produce_response::BatchIndexAndErrorMessage::default(
                    )
                    .with_batch_index(1)
                    .with_batch_index_error_message(Some(s("bad record")))])
                    .with_error_message(Some(s("partly bad")));
            }
            ResponseKind::Produce(
                ProduceResponse::default()
                    .with_throttle_time_ms(0)
                    .with_responses(vec![produce_response::TopicProduceResponse::default()
                        .with_name(topic("orders"))
                        .with_partition_responses(vec![p])]),
            )
        }
        ApiKey::Fetch => {
            let mut p = fetch_response::PartitionData::default()
                .with_partition_index(1)
                .with_error_code(0)
                .with_high_watermark(99)
                .with_last_stable_offset(99)
                .with_records(Some(records()));
            if v >= 5 {
                p = p.with_log_start_offset(5);
            }
            if v >= 11 {
                p = p.with_preferred_read_replica(BrokerId(-1));
            }
            // From v16 a leadership error names the current leader (KIP-951).
            let hinted = fetch_response::PartitionData::default()
                .with_partition_index(2)
                .with_error_code(6)
                .with_high_watermark(-1)
                .with_last_stable_offset(-1)
                .with_log_start_offset(-1)
                .with_current_leader(if v >= 16 {
                    fetch_response::LeaderIdAndEpoch::default()
                        .with_leader_id(BrokerId(3))
                        .with_leader_epoch(0)
                } else {
                    fetch_response::LeaderIdAndEpoch::default()
                })
                .with_records(Some(Bytes::new()));
            let t = if v >= 13 {
                fetch_response::FetchableTopicResponse::default().with_topic_id(uuid(9))
            } else {
                fetch_response::FetchableTopicResponse::default().with_topic(topic("orders"))
            };
            let mut r = FetchResponse::default()
                .with_throttle_time_ms(0)
                .with_responses(vec![t.with_partitions(vec![p, hinted])]);
            if v >= 7 {
                r = r.with_error_code(0).with_session_id(0);
            }
            if v >= 16 {
                r = r.with_node_endpoints(vec![fetch_response::NodeEndpoint::default()
                    .with_node_id(BrokerId(3))
                    .with_host(s("127.0.0.1"))
                    .with_port(19094)
                    .with_rack(Some(s("rack-c")))]);
            }
            ResponseKind::Fetch(r)
        }
        ApiKey::ListOffsets => {
            let mut p = list_offsets_response::ListOffsetsPartitionResponse::default()
                .with_partition_index(2)
                .with_error_code(0)
                .with_timestamp(1_700_000_000_000)
                .with_offset(77);
            if v >= 4 {
                p = p.with_leader_epoch(0);
            }
            ResponseKind::ListOffsets(ListOffsetsResponse::default().with_topics(vec![
                    list_offsets_response::ListOffsetsTopicResponse::default()
                        .with_name(topic("orders"))
                        .with_partitions(vec![p]),
                ]))
        }
        ApiKey::Metadata => {
            let mut broker = MetadataResponseBroker::default()
                .with_node_id(BrokerId(1))
                .with_host(s("127.0.0.1"))
                .with_port(9092);
            if v >= 1 {
                broker = broker.with_rack(Some(s("rack-a")));
            }
            let mut p = MetadataResponsePartition::default()
                .with_partition_index(0)
                .with_leader_id(BrokerId(1))
                .with_replica_nodes(vec![BrokerId(1)])
                .with_isr_nodes(vec![BrokerId(1)]);
            if v >= 5 {
                p = p.with_offline_replicas(vec![]);
            }
            if v >= 7 {
                p = p.with_leader_epoch(0);
            }
            let mut t = MetadataResponseTopic::default()
                .with_name(Some(topic("orders")))
                .with_partitions(vec![p]);
            if v >= 1 {
                t = t.with_is_internal(false);
            }
            if v >= 8 {
                t = t.with_topic_authorized_operations(0);
            }
            if v >= 10 {
                t = t.with_topic_id(uuid(9));
            }
            let mut r = MetadataResponse::default()
                .with_brokers(vec![broker])
                .with_topics(vec![t]);
            if v >= 1 {
                r = r.with_controller_id(BrokerId(1));
            }
            if v >= 2 {
                r = r.with_cluster_id(Some(s("cohort-cluster")));
            }
            if (8..=10).contains(&v) {
                r = r.with_cluster_authorized_operations(0);
            }
            if v >= 13 {
                // Any code: the codec must carry it (Cohort always answers 0).
                r = r.with_error_code(129);
            }
            ResponseKind::Metadata(r)
        }
        ApiKey::ApiVersions => ResponseKind::ApiVersions(protocol::response::api_versions_body(
            SUPPORTED_APIS,
            protocol::ErrorCode::None,
        )),
        ApiKey::CreateTopics => {
            let mut t = CreatableTopicResult::default()
                .with_name(topic("orders"))
                .with_error_code(36);
            if v >= 1 {
                t = t.with_error_message(Some(s("Topic 'orders' already exists.")));
            }
            if v >= 5 {
                t = t
                    .with_num_partitions(3)
                    .with_replication_factor(1)
                    .with_configs(Some(vec![
                        create_topics_response::CreatableTopicConfigs::default()
                            .with_name(s("cleanup.policy"))
                            .with_value(Some(s("delete")))
                            .with_config_source(5),
                    ]));
            }
            if v >= 7 {
                t = t.with_topic_id(uuid(4));
            }
            ResponseKind::CreateTopics(CreateTopicsResponse::default().with_topics(vec![t]))
        }
        ApiKey::DeleteTopics => {
            let mut t = DeletableTopicResult::default()
                .with_name(Some(topic("orders")))
                .with_error_code(3);
            if v >= 5 {
                t = t
                    .with_error_message(Some(s("This server does not host this topic-partition.")));
            }
            if v >= 6 {
                t = t.with_topic_id(uuid(3));
            }
            ResponseKind::DeleteTopics(DeleteTopicsResponse::default().with_responses(vec![t]))
        }
        ApiKey::InitProducerId => ResponseKind::InitProducerId(
            InitProducerIdResponse::default()
                .with_error_code(0)
                .with_producer_id(ProducerId(4000))
                .with_producer_epoch(0),
        ),
        ApiKey::SaslHandshake => ResponseKind::SaslHandshake(
            SaslHandshakeResponse::default()
                .with_error_code(0)
                .with_mechanisms(vec![s("SCRAM-SHA-256"), s("SCRAM-SHA-512"), s("PLAIN")]),
        ),
        ApiKey::SaslAuthenticate => {
            let mut r = SaslAuthenticateResponse::default()
                .with_error_code(58)
                .with_error_message(Some(s(
                    "Authentication failed: Invalid username or password",
                )))
                .with_auth_bytes(Bytes::from_static(
                    b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
                ));
            if v >= 1 {
                r = r.with_session_lifetime_ms(0);
            }
            ResponseKind::SaslAuthenticate(r)
        }
        other => group_response_sample(other, v)
            .or_else(|| admin_response_sample(other, v))
            .or_else(|| txn_response_sample(other, v))
            .unwrap_or_else(|| panic!("no sample for {other:?}: add one with its handler")),
    }
}

fn client_frame(key: ApiKey, v: i16, body: &RequestKind) -> Bytes {
    let header = RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(v)
        .with_correlation_id(1000 + i32::from(v))
        .with_client_id(Some(s("round-trip")));
    let mut buf = BytesMut::new();
    header
        .encode(&mut buf, key.request_header_version(v))
        .unwrap();
    body.encode(&mut buf, v)
        .unwrap_or_else(|e| panic!("{key:?} v{v} sample does not encode: {e}"));
    buf.freeze()
}

fn decodable_versions() -> impl Iterator<Item = (ApiKey, i16)> {
    SUPPORTED_APIS.iter().flat_map(|r| {
        let low = if r.key == ApiKey::Produce {
            PRODUCE_MIN_DECODABLE_VERSION
        } else {
            r.min
        };
        (low..=r.max).map(move |v| (r.key, v))
    })
}

#[test]
fn every_served_request_version_round_trips() {
    let mut checked = 0;
    for (key, v) in decodable_versions() {
        let sample = request_sample(key, v);
        let frame = client_frame(key, v, &sample);
        let req = decode_request(frame.clone())
            .unwrap_or_else(|e| panic!("{key:?} v{v} does not decode: {e}"));
        assert_eq!(req.api_key, key);
        assert_eq!(req.version(), v);
        assert_eq!(req.correlation_id(), 1000 + i32::from(v));
        assert_eq!(req.client_id(), "round-trip");
        assert_eq!(req.body, sample, "{key:?} v{v} decoded to something else");
        assert_eq!(
            client_frame(key, v, &req.body),
            frame,
            "{key:?} v{v} re-encodes differently"
        );
        checked += 1;
    }
    let expected: usize = decodable_versions().count();
    assert_eq!(checked, expected);
    assert!(checked >= 30, "only {checked} versions checked");
}

#[test]
fn every_served_response_version_round_trips() {
    for (key, v) in decodable_versions() {
        let sample = response_sample(key, v);
        let mut frame = encode_response(7, key, v, &sample)
            .unwrap_or_else(|e| panic!("{key:?} v{v} response does not encode: {e}"));
        assert_eq!(
            frame.get_i32() as usize,
            frame.len(),
            "{key:?} v{v} length prefix"
        );
        let header = ResponseHeader::decode(&mut frame, key.response_header_version(v)).unwrap();
        assert_eq!(header.correlation_id, 7);
        let back = ResponseKind::decode(key, &mut frame, v)
            .unwrap_or_else(|e| panic!("{key:?} v{v} response does not decode: {e}"));
        assert!(!frame.has_remaining(), "{key:?} v{v} left bytes over");
        assert_eq!(
            back, sample,
            "{key:?} v{v} response decoded to something else"
        );
    }
}

#[test]
fn api_versions_responses_use_header_v0_even_when_flexible() {
    for v in 0..=4 {
        let frame = encode_response(
            9,
            ApiKey::ApiVersions,
            v,
            &response_sample(ApiKey::ApiVersions, v),
        )
        .unwrap();
        // size, then the correlation id, then straight away the i16 error code: no tag buffer.
        assert_eq!(&frame[4..8], &9i32.to_be_bytes());
        assert_eq!(&frame[8..10], &0i16.to_be_bytes());
    }
}

#[test]
fn legacy_produce_versions_decode_for_their_error_answer() {
    let sample = request_sample(ApiKey::Produce, 3);
    // v0–v2 carry no transactional id: encode v3 and drop the null one (two bytes) after the
    // header, which is how an old client lays the body out.
    for v in 0..PRODUCE_MIN_DECODABLE_VERSION {
        let v3 = client_frame(ApiKey::Produce, 3, &sample);
        let header_bytes = 8 + 2 + "round-trip".len();
        let mut legacy = BytesMut::new();
        legacy.extend_from_slice(&v3[..header_bytes]);
        legacy[2..4].copy_from_slice(&v.to_be_bytes());
        legacy[4..8].copy_from_slice(&(1000 + i32::from(v)).to_be_bytes());
        legacy.extend_from_slice(&v3[header_bytes + 2..]);
        let req = decode_request(legacy.freeze()).unwrap();
        assert_eq!(req.version(), v);
        assert_eq!(req.body, sample);
    }
}

/// Request samples of the group coordinator's APIs (served by `src/group`).
fn group_request_sample(key: ApiKey, v: i16) -> Option<RequestKind> {
    let gid = || GroupId(s("billing"));
    Some(match key {
        ApiKey::FindCoordinator => {
            let mut r = FindCoordinatorRequest::default();
            if v >= 1 {
                r = r.with_key_type(0);
            }
            r = if v >= 4 {
                r.with_coordinator_keys(vec![s("billing"), s("audit")])
            } else {
                r.with_key(s("billing"))
            };
            RequestKind::FindCoordinator(r)
        }
        ApiKey::JoinGroup => {
            let mut r = JoinGroupRequest::default()
                .with_group_id(gid())
                .with_session_timeout_ms(10_000)
                .with_member_id(s("m-1"))
                .with_protocol_type(s("consumer"))
                .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
                )
                .with_name(s("range"))
                .with_metadata(Bytes::from_static(b"subscription"))]);
            if v >= 1 {
                r = r.with_rebalance_timeout_ms(300_000);
            }
            if v >= 5 {
                r = r.with_group_instance_id(Some(s("instance-1")));
            }
            if v >= 8 {
                r = r.with_reason(Some(s("rejoin")));
            }
            RequestKind::JoinGroup(r)
        }
        ApiKey::SyncGroup => {
            let mut r = SyncGroupRequest::default()
                .with_group_id(gid())
                .with_generation_id(3)
                .with_member_id(s("m-1"))
                .with_assignments(vec![
                    sync_group_request::SyncGroupRequestAssignment::default()
                        .with_member_id(s("m-1"))
                        .with_assignment(Bytes::from_static(b"assignment")),
                ]);
            if v >= 3 {
                r = r.with_group_instance_id(Some(s("instance-1")));
            }
            if v >= 5 {
                r = r
                    .with_protocol_type(Some(s("consumer")))
                    .with_protocol_name(Some(s("range")));
            }
            RequestKind::SyncGroup(r)
        }
        ApiKey::Heartbeat => {
            let mut r = HeartbeatRequest::default()
                .with_group_id(gid())
                .with_generation_id(3)
                .with_member_id(s("m-1"));
            if v >= 3 {
                r = r.with_group_instance_id(Some(s("instance-1")));
            }
            RequestKind::Heartbeat(r)
        }
        ApiKey::LeaveGroup => {
            let r = LeaveGroupRequest::default().with_group_id(gid());
            RequestKind::LeaveGroup(if v >= 3 {
                let mut m = leave_group_request::MemberIdentity::default()
                    .with_member_id(s("m-1"))
                    .with_group_instance_id(Some(s("instance-1")));
                if v >= 5 {
                    m = m.with_reason(Some(s("closing")));
                }
                r.with_members(vec![m])
            } else {
                r.with_member_id(s("m-1"))
            })
        }
        ApiKey::OffsetCommit => {
            let mut p = offset_commit_request::OffsetCommitRequestPartition::default()
                .with_partition_index(2)
                .with_committed_offset(42)
                .with_committed_metadata(Some(s("meta")));
            if v >= 6 {
                p = p.with_committed_leader_epoch(5);
            }
            let mut r = OffsetCommitRequest::default()
                .with_group_id(gid())
                .with_generation_id_or_member_epoch(3)
                .with_member_id(s("m-1"))
                .with_topics(vec![
                    offset_commit_request::OffsetCommitRequestTopic::default()
                        .with_name(topic("orders"))
                        .with_partitions(vec![p]),
                ]);
            if v <= 4 {
                r = r.with_retention_time_ms(60_000);
            }
            if v >= 7 {
                r = r.with_group_instance_id(Some(s("instance-1")));
            }
            RequestKind::OffsetCommit(r)
        }
        ApiKey::OffsetFetch => {
            let mut r = OffsetFetchRequest::default();
            if v >= 8 {
                let mut g = offset_fetch_request::OffsetFetchRequestGroup::default()
                    .with_group_id(gid())
                    .with_topics(Some(vec![
                        offset_fetch_request::OffsetFetchRequestTopics::default()
                            .with_name(topic("orders"))
                            .with_partition_indexes(vec![0, 2]),
                    ]));
                if v >= 9 {
                    g = g.with_member_id(Some(s("m-1"))).with_member_epoch(4);
                }
                r = r.with_groups(vec![
                    g,
                    offset_fetch_request::OffsetFetchRequestGroup::default()
                        .with_group_id(GroupId(s("audit")))
                        .with_topics(None),
                ]);
            } else {
                r = r.with_group_id(gid()).with_topics(Some(vec![
                    offset_fetch_request::OffsetFetchRequestTopic::default()
                        .with_name(topic("orders"))
                        .with_partition_indexes(vec![0, 2]),
                ]));
            }
            if v >= 7 {
                r = r.with_require_stable(true);
            }
            RequestKind::OffsetFetch(r)
        }
        ApiKey::OffsetDelete => RequestKind::OffsetDelete(
            OffsetDeleteRequest::default()
                .with_group_id(gid())
                .with_topics(vec![
                    offset_delete_request::OffsetDeleteRequestTopic::default()
                        .with_name(topic("orders"))
                        .with_partitions(vec![
                            offset_delete_request::OffsetDeleteRequestPartition::default()
                                .with_partition_index(1),
                        ]),
                ]),
        ),
        ApiKey::DeleteGroups => RequestKind::DeleteGroups(
            DeleteGroupsRequest::default().with_groups_names(vec![gid(), GroupId(s("audit"))]),
        ),
        ApiKey::ListGroups => {
            let mut r = ListGroupsRequest::default();
            if v >= 4 {
                r = r.with_states_filter(vec![s("Stable"), s("Empty")]);
            }
            if v >= 5 {
                r = r.with_types_filter(vec![s("classic")]);
            }
            RequestKind::ListGroups(r)
        }
        ApiKey::DescribeGroups => {
            let mut r = DescribeGroupsRequest::default().with_groups(vec![gid()]);
            if v >= 3 {
                r = r.with_include_authorized_operations(true);
            }
            RequestKind::DescribeGroups(r)
        }
        ApiKey::ConsumerGroupHeartbeat => {
            let owned = consumer_group_heartbeat_request::TopicPartitions::default()
                .with_topic_id(uuid(7))
                .with_partitions(vec![0, 2]);
            let mut r = ConsumerGroupHeartbeatRequest::default()
                .with_group_id(gid())
                .with_member_id(s("m-1"))
                .with_member_epoch(4)
                .with_instance_id(Some(s("instance-1")))
                .with_rack_id(Some(s("rack-a")))
                .with_rebalance_timeout_ms(30_000)
                .with_subscribed_topic_names(Some(vec![topic("orders")]))
                .with_server_assignor(Some(s("uniform")))
                .with_topic_partitions(Some(vec![owned]));
            if v >= 1 {
                r = r.with_subscribed_topic_regex(Some(s("orders-.*")));
            }
            RequestKind::ConsumerGroupHeartbeat(r)
        }
        ApiKey::ConsumerGroupDescribe => RequestKind::ConsumerGroupDescribe(
            ConsumerGroupDescribeRequest::default()
                .with_group_ids(vec![gid(), GroupId(s("audit"))])
                .with_include_authorized_operations(true),
        ),
        _ => return None,
    })
}

/// Response samples of the group coordinator's APIs.
fn group_response_sample(key: ApiKey, v: i16) -> Option<ResponseKind> {
    let gid = || GroupId(s("billing"));
    Some(match key {
        ApiKey::FindCoordinator => {
            let mut r = FindCoordinatorResponse::default();
            if v >= 1 {
                r = r.with_throttle_time_ms(0);
            }
            r = if v >= 4 {
                r.with_coordinators(vec![find_coordinator_response::Coordinator::default()
                    .with_key(s("billing"))
                    .with_node_id(BrokerId(2))
                    .with_host(s("127.0.0.1"))
                    .with_port(19092)
                    .with_error_code(0)
                    .with_error_message(None)])
            } else {
                let r = r
                    .with_error_code(0)
                    .with_node_id(BrokerId(2))
                    .with_host(s("127.0.0.1"))
                    .with_port(19092);
                if v >= 1 {
                    r.with_error_message(Some(s("NONE")))
                } else {
                    r
                }
            };
            ResponseKind::FindCoordinator(r)
        }
        ApiKey::JoinGroup => {
            let mut m = join_group_response::JoinGroupResponseMember::default()
                .with_member_id(s("m-1"))
                .with_metadata(Bytes::from_static(b"subscription"));
            if v >= 5 {
                m = m.with_group_instance_id(Some(s("instance-1")));
            }
            let mut r = JoinGroupResponse::default()
                .with_error_code(0)
                .with_generation_id(3)
                .with_protocol_name(Some(s("range")))
                .with_leader(s("m-1"))
                .with_member_id(s("m-1"))
                .with_members(vec![m]);
            if v >= 2 {
                r = r.with_throttle_time_ms(0);
            }
            if v >= 7 {
                r = r.with_protocol_type(Some(s("consumer")));
            }
            if v >= 9 {
                r = r.with_skip_assignment(true);
            }
            ResponseKind::JoinGroup(r)
        }
        ApiKey::SyncGroup => {
            let mut r = SyncGroupResponse::default()
                .with_error_code(0)
                .with_assignment(Bytes::from_static(b"assignment"));
            if v >= 1 {
                r = r.with_throttle_time_ms(0);
            }
            if v >= 5 {
                r = r
                    .with_protocol_type(Some(s("consumer")))
                    .with_protocol_name(Some(s("range")));
            }
            ResponseKind::SyncGroup(r)
        }
        ApiKey::Heartbeat => {
            let mut r = HeartbeatResponse::default().with_error_code(27);
            if v >= 1 {
                r = r.with_throttle_time_ms(0);
            }
            ResponseKind::Heartbeat(r)
        }
        ApiKey::LeaveGroup => {
            let mut r = LeaveGroupResponse::default().with_error_code(0);
            if v >= 1 {
                r = r.with_throttle_time_ms(0);
            }
            if v >= 3 {
                r = r.with_members(vec![leave_group_response::MemberResponse::default()
                    .with_member_id(s("m-1"))
                    .with_group_instance_id(Some(s("instance-1")))
                    .with_error_code(25)]);
            }
            ResponseKind::LeaveGroup(r)
        }
        ApiKey::OffsetCommit => {
            let mut r = OffsetCommitResponse::default().with_topics(vec![
                offset_commit_response::OffsetCommitResponseTopic::default()
                    .with_name(topic("orders"))
                    .with_partitions(vec![
                        offset_commit_response::OffsetCommitResponsePartition::default()
                            .with_partition_index(2)
                            .with_error_code(22),
                    ]),
            ]);
            if v >= 3 {
                r = r.with_throttle_time_ms(0);
            }
            ResponseKind::OffsetCommit(r)
        }
        ApiKey::OffsetFetch => {
            let mut r = OffsetFetchResponse::default();
            if v >= 3 {
                r = r.with_throttle_time_ms(0);
            }
            if v >= 8 {
                r = r.with_groups(vec![
                    offset_fetch_response::OffsetFetchResponseGroup::default()
                        .with_group_id(gid())
                        .with_error_code(0)
                        .with_topics(vec![
                            offset_fetch_response::OffsetFetchResponseTopics::default()
                                .with_name(topic("orders"))
                                .with_partitions(vec![
                                    offset_fetch_response::OffsetFetchResponsePartitions::default()
                                        .with_partition_index(2)
                                        .with_committed_offset(42)
                                        .with_committed_leader_epoch(5)
                                        .with_metadata(Some(s("meta")))
                                        .with_error_code(0),
                                ]),
                        ]),
                ]);
            } else {
                let mut p = offset_fetch_response::OffsetFetchResponsePartition::default()
                    .with_partition_index(2)
                    .with_committed_offset(42)
                    .with_metadata(Some(s("meta")))
                    .with_error_code(0);
                if v >= 5 {
                    p = p.with_committed_leader_epoch(5);
                }
                r = r.with_topics(vec![
                    offset_fetch_response::OffsetFetchResponseTopic::default()
                        .with_name(topic("orders"))
                        .with_partitions(vec![p]),
                ]);
                if v >= 2 {
                    r = r.with_error_code(0);
                }
            }
            ResponseKind::OffsetFetch(r)
        }
        ApiKey::OffsetDelete => ResponseKind::OffsetDelete(
            OffsetDeleteResponse::default()
                .with_error_code(0)
                .with_throttle_time_ms(0)
                .with_topics(vec![
                    offset_delete_response::OffsetDeleteResponseTopic::default()
                        .with_name(topic("orders"))
                        .with_partitions(vec![
                            offset_delete_response::OffsetDeleteResponsePartition::default()
                                .with_partition_index(1)
                                .with_error_code(86),
                        ]),
                ]),
        ),
        ApiKey::DeleteGroups => ResponseKind::DeleteGroups(
            DeleteGroupsResponse::default()
                .with_throttle_time_ms(0)
                .with_results(vec![delete_groups_response::DeletableGroupResult::default(
                )
                .with_group_id(gid())
                .with_error_code(68)]),
        ),
        ApiKey::ListGroups => {
            let mut g = list_groups_response::ListedGroup::default()
                .with_group_id(gid())
                .with_protocol_type(s("consumer"));
            if v >= 4 {
                g = g.with_group_state(s("Stable"));
            }
            if v >= 5 {
                g = g.with_group_type(s("classic"));
            }
            let mut r = ListGroupsResponse::default()
                .with_error_code(0)
                .with_groups(vec![g]);
            if v >= 1 {
                r = r.with_throttle_time_ms(0);
            }
            ResponseKind::ListGroups(r)
        }
        ApiKey::DescribeGroups => {
            let mut m = describe_groups_response::DescribedGroupMember::default()
                .with_member_id(s("m-1"))
                .with_client_id(s("rdkafka"))
                .with_client_host(s("/127.0.0.1"))
                .with_member_metadata(Bytes::from_static(b"subscription"))
                .with_member_assignment(Bytes::from_static(b"assignment"));
            if v >= 4 {
                m = m.with_group_instance_id(Some(s("instance-1")));
            }
            let mut g = describe_groups_response::DescribedGroup::default()
                .with_error_code(0)
                .with_group_id(gid())
                .with_group_state(s("Stable"))
                .with_protocol_type(s("consumer"))
                .with_protocol_data(s("range"))
                .with_members(vec![m]);
            if v >= 3 {
                g = g.with_authorized_operations(328);
            }
            let mut groups = vec![g];
            if v >= 6 {
                groups.push(
                    describe_groups_response::DescribedGroup::default()
                        .with_error_code(69)
                        .with_error_message(Some(s("Group audit not found.")))
                        .with_group_id(GroupId(s("audit")))
                        .with_group_state(s("Dead"))
                        .with_authorized_operations(i32::MIN),
                );
            }
            let mut r = DescribeGroupsResponse::default().with_groups(groups);
            if v >= 1 {
                r = r.with_throttle_time_ms(0);
            }
            ResponseKind::DescribeGroups(r)
        }
        ApiKey::ConsumerGroupHeartbeat => ResponseKind::ConsumerGroupHeartbeat(
            ConsumerGroupHeartbeatResponse::default()
                .with_throttle_time_ms(0)
                .with_error_code(0)
                .with_error_message(None)
                .with_member_id(Some(s("m-1")))
                .with_member_epoch(5)
                .with_heartbeat_interval_ms(5_000)
                .with_assignment(Some(
                    consumer_group_heartbeat_response::Assignment::default().with_topic_partitions(
                        vec![
                            consumer_group_heartbeat_response::TopicPartitions::default()
                                .with_topic_id(uuid(7))
                                .with_partitions(vec![0, 1]),
                        ],
                    ),
                )),
        ),
        ApiKey::ConsumerGroupDescribe => {
            let assigned = |partitions: Vec<i32>| {
                consumer_group_describe_response::Assignment::default().with_topic_partitions(vec![
                    consumer_group_describe_response::TopicPartitions::default()
                        .with_topic_id(uuid(7))
                        .with_topic_name(topic("orders"))
                        .with_partitions(partitions),
                ])
            };
            let mut m = consumer_group_describe_response::Member::default()
                .with_member_id(s("m-1"))
                .with_instance_id(Some(s("instance-1")))
                .with_rack_id(None)
                .with_member_epoch(5)
                .with_client_id(s("rdkafka"))
                .with_client_host(s("/127.0.0.1"))
                .with_subscribed_topic_names(vec![topic("orders")])
                .with_subscribed_topic_regex(None)
                .with_assignment(assigned(vec![0]))
                .with_target_assignment(assigned(vec![0, 1]));
            if v >= 1 {
                m = m.with_member_type(1);
            }
            ResponseKind::ConsumerGroupDescribe(
                ConsumerGroupDescribeResponse::default()
                    .with_throttle_time_ms(0)
                    .with_groups(vec![
                        consumer_group_describe_response::DescribedGroup::default()
                            .with_error_code(0)
                            .with_error_message(None)
                            .with_group_id(gid())
                            .with_group_state(s("Reconciling"))
                            .with_group_epoch(5)
                            .with_assignment_epoch(5)
                            .with_assignor_name(s("uniform"))
                            .with_members(vec![m])
                            .with_authorized_operations(i32::MIN),
                    ]),
            )
        }
        _ => return None,
    })
}

/// Request samples of the admin APIs (configs, partitions, records).
fn admin_request_sample(key: ApiKey, v: i16) -> Option<RequestKind> {
    Some(match key {
        ApiKey::DescribeConfigs => {
            let mut r = DescribeConfigsRequest::default()
                .with_resources(vec![
                    describe_configs_request::DescribeConfigsResource::default()
                        .with_resource_type(2)
                        .with_resource_name(s("orders"))
                        .with_configuration_keys(Some(vec![s("retention.ms")])),
                    describe_configs_request::DescribeConfigsResource::default()
                        .with_resource_type(4)
                        .with_resource_name(s("1"))
                        .with_configuration_keys(None),
                ])
                .with_include_synonyms(true);
            if v >= 3 {
                r = r.with_include_documentation(true);
            }
            RequestKind::DescribeConfigs(r)
        }
        ApiKey::AlterConfigs => RequestKind::AlterConfigs(
            AlterConfigsRequest::default()
                .with_resources(vec![alter_configs_request::AlterConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s("orders"))
                    .with_configs(vec![
                        alter_configs_request::AlterableConfig::default()
                            .with_name(s("retention.ms"))
                            .with_value(Some(s("60000"))),
                        alter_configs_request::AlterableConfig::default()
                            .with_name(s("segment.ms"))
                            .with_value(None),
                    ])])
                .with_validate_only(true),
        ),
        ApiKey::IncrementalAlterConfigs => RequestKind::IncrementalAlterConfigs(
            IncrementalAlterConfigsRequest::default()
                .with_resources(vec![
                    incremental_alter_configs_request::AlterConfigsResource::default()
                        .with_resource_type(2)
                        .with_resource_name(s("orders"))
                        .with_configs(vec![
                            incremental_alter_configs_request::AlterableConfig::default()
                                .with_name(s("cleanup.policy"))
                                .with_config_operation(2)
                                .with_value(Some(s("compact"))),
                            incremental_alter_configs_request::AlterableConfig::default()
                                .with_name(s("retention.ms"))
                                .with_config_operation(1)
                                .with_value(None),
                        ]),
                ])
                .with_validate_only(true),
        ),
        ApiKey::CreatePartitions => RequestKind::CreatePartitions(
            CreatePartitionsRequest::default()
                .with_topics(vec![
                    create_partitions_request::CreatePartitionsTopic::default()
                        .with_name(topic("orders"))
                        .with_count(4)
                        .with_assignments(Some(vec![
                            create_partitions_request::CreatePartitionsAssignment::default()
                                .with_broker_ids(vec![BrokerId(2)]),
                        ])),
                    create_partitions_request::CreatePartitionsTopic::default()
                        .with_name(topic("audit"))
                        .with_count(2)
                        .with_assignments(None),
                ])
                .with_timeout_ms(30_000)
                .with_validate_only(true),
        ),
        ApiKey::DeleteRecords => RequestKind::DeleteRecords(
            DeleteRecordsRequest::default()
                .with_topics(vec![delete_records_request::DeleteRecordsTopic::default()
                    .with_name(topic("orders"))
                    .with_partitions(vec![
                        delete_records_request::DeleteRecordsPartition::default()
                            .with_partition_index(0)
                            .with_offset(42),
                        delete_records_request::DeleteRecordsPartition::default()
                            .with_partition_index(1)
                            .with_offset(-1),
                    ])])
                .with_timeout_ms(30_000),
        ),
        ApiKey::DescribeLogDirs => {
            RequestKind::DescribeLogDirs(DescribeLogDirsRequest::default().with_topics(Some(vec![
                describe_log_dirs_request::DescribableLogDirTopic::default()
                    .with_topic(topic("orders"))
                    .with_partitions(vec![0, 3]),
                describe_log_dirs_request::DescribableLogDirTopic::default()
                    .with_topic(topic("audit"))
                    .with_partitions(vec![]),
            ])))
        }
        ApiKey::OffsetForLeaderEpoch => {
            let mut r = OffsetForLeaderEpochRequest::default().with_topics(vec![
                offset_for_leader_epoch_request::OffsetForLeaderTopic::default()
                    .with_topic(topic("orders"))
                    .with_partitions(vec![
                        offset_for_leader_epoch_request::OffsetForLeaderPartition::default()
                            .with_partition(0)
                            .with_current_leader_epoch(3)
                            .with_leader_epoch(2),
                        offset_for_leader_epoch_request::OffsetForLeaderPartition::default()
                            .with_partition(4)
                            .with_current_leader_epoch(-1)
                            .with_leader_epoch(0),
                    ]),
            ]);
            if v >= 3 {
                r = r.with_replica_id(BrokerId(-1));
            }
            RequestKind::OffsetForLeaderEpoch(r)
        }
        ApiKey::DescribeCluster => {
            let mut r =
                DescribeClusterRequest::default().with_include_cluster_authorized_operations(true);
            if v >= 1 {
                r = r.with_endpoint_type(2);
            }
            if v >= 2 {
                r = r.with_include_fenced_brokers(true);
            }
            RequestKind::DescribeCluster(r)
        }
        ApiKey::DescribeTopicPartitions => RequestKind::DescribeTopicPartitions(
            DescribeTopicPartitionsRequest::default()
                .with_topics(vec![
                    describe_topic_partitions_request::TopicRequest::default()
                        .with_name(topic("orders")),
                    describe_topic_partitions_request::TopicRequest::default()
                        .with_name(topic("audit")),
                ])
                .with_response_partition_limit(500)
                .with_cursor(Some(
                    describe_topic_partitions_request::Cursor::default()
                        .with_topic_name(topic("audit"))
                        .with_partition_index(3),
                )),
        ),
        // kafka-acls.sh --list --topic orders --resource-pattern-type match
        ApiKey::DescribeAcls => RequestKind::DescribeAcls(
            DescribeAclsRequest::default()
                .with_resource_type_filter(2)
                .with_resource_name_filter(Some(s("orders")))
                .with_pattern_type_filter(2)
                .with_principal_filter(None)
                .with_host_filter(None)
                .with_operation(1)
                .with_permission_type(1),
        ),
        ApiKey::CreateAcls => {
            RequestKind::CreateAcls(CreateAclsRequest::default().with_creations(vec![
                create_acls_request::AclCreation::default()
                    .with_resource_type(2)
                    .with_resource_name(s("orders-"))
                    .with_resource_pattern_type(4)
                    .with_principal(s("User:alice"))
                    .with_host(s("*"))
                    .with_operation(3)
                    .with_permission_type(3),
                create_acls_request::AclCreation::default()
                    .with_resource_type(4)
                    .with_resource_name(s("kafka-cluster"))
                    .with_resource_pattern_type(3)
                    .with_principal(s("User:*"))
                    .with_host(s("10.0.0.1"))
                    .with_operation(7)
                    .with_permission_type(2),
            ]))
        }
        ApiKey::DeleteAcls => RequestKind::DeleteAcls(DeleteAclsRequest::default().with_filters(
            vec![delete_acls_request::DeleteAclsFilter::default()
                .with_resource_type_filter(3)
                .with_resource_name_filter(Some(s("g")))
                .with_pattern_type_filter(1)
                .with_principal_filter(Some(s("User:bob")))
                .with_host_filter(None)
                .with_operation(1)
                .with_permission_type(1)],
        )),
        ApiKey::DescribeUserScramCredentials => RequestKind::DescribeUserScramCredentials(
            DescribeUserScramCredentialsRequest::default().with_users(Some(vec![
                describe_user_scram_credentials_request::UserName::default().with_name(s("alice")),
                describe_user_scram_credentials_request::UserName::default().with_name(s("bob")),
            ])),
        ),
        ApiKey::AlterUserScramCredentials => RequestKind::AlterUserScramCredentials(
            AlterUserScramCredentialsRequest::default()
                .with_deletions(vec![
                    alter_user_scram_credentials_request::ScramCredentialDeletion::default()
                        .with_name(s("bob"))
                        .with_mechanism(2),
                ])
                .with_upsertions(vec![
                    alter_user_scram_credentials_request::ScramCredentialUpsertion::default()
                        .with_name(s("alice"))
                        .with_mechanism(1)
                        .with_iterations(8192)
                        .with_salt(Bytes::from_static(b"0123456789abcdef"))
                        .with_salted_password(Bytes::from_static(&[0x5a; 32])),
                ]),
        ),
        _ => return None,
    })
}

/// Response samples of the admin APIs.
fn admin_response_sample(key: ApiKey, v: i16) -> Option<ResponseKind> {
    Some(match key {
        ApiKey::DescribeConfigs => {
            let mut entry = describe_configs_response::DescribeConfigsResourceResult::default()
                .with_name(s("retention.ms"))
                .with_value(Some(s("60000")))
                .with_read_only(false)
                .with_config_source(1)
                .with_is_sensitive(false)
                .with_synonyms(vec![
                    describe_configs_response::DescribeConfigsSynonym::default()
                        .with_name(s("retention.ms"))
                        .with_value(Some(s("60000")))
                        .with_source(1),
                    describe_configs_response::DescribeConfigsSynonym::default()
                        .with_name(s("log.retention.hours"))
                        .with_value(Some(s("168")))
                        .with_source(5),
                ]);
            if v >= 3 {
                entry = entry
                    .with_config_type(5)
                    .with_documentation(Some(s("How long a segment is kept.")));
            }
            ResponseKind::DescribeConfigs(
                DescribeConfigsResponse::default()
                    .with_throttle_time_ms(0)
                    .with_results(vec![
                        describe_configs_response::DescribeConfigsResult::default()
                            .with_error_code(0)
                            .with_error_message(None)
                            .with_resource_type(2)
                            .with_resource_name(s("orders"))
                            .with_configs(vec![entry]),
                        describe_configs_response::DescribeConfigsResult::default()
                            .with_error_code(3)
                            .with_error_message(Some(s("Topic 'gone' does not exist.")))
                            .with_resource_type(2)
                            .with_resource_name(s("gone")),
                    ]),
            )
        }
        ApiKey::AlterConfigs => ResponseKind::AlterConfigs(
            AlterConfigsResponse::default()
                .with_throttle_time_ms(0)
                .with_responses(vec![
                    alter_configs_response::AlterConfigsResourceResponse::default()
                        .with_error_code(40)
                        .with_error_message(Some(s("Unknown topic config name: x")))
                        .with_resource_type(2)
                        .with_resource_name(s("orders")),
                ]),
        ),
        ApiKey::IncrementalAlterConfigs => ResponseKind::IncrementalAlterConfigs(
            IncrementalAlterConfigsResponse::default()
                .with_throttle_time_ms(0)
                .with_responses(vec![
                    incremental_alter_configs_response::AlterConfigsResourceResponse::default()
                        .with_error_code(0)
                        .with_error_message(None)
                        .with_resource_type(2)
                        .with_resource_name(s("orders")),
                    incremental_alter_configs_response::AlterConfigsResourceResponse::default()
                        .with_error_code(40)
                        .with_error_message(Some(s("not dynamically alterable")))
                        .with_resource_type(4)
                        .with_resource_name(s("1")),
                ]),
        ),
        ApiKey::CreatePartitions => ResponseKind::CreatePartitions(
            CreatePartitionsResponse::default()
                .with_throttle_time_ms(0)
                .with_results(vec![
                    create_partitions_response::CreatePartitionsTopicResult::default()
                        .with_name(topic("orders"))
                        .with_error_code(0)
                        .with_error_message(None),
                    create_partitions_response::CreatePartitionsTopicResult::default()
                        .with_name(topic("audit"))
                        .with_error_code(37)
                        .with_error_message(Some(s("Topic already has 2 partition(s)."))),
                ]),
        ),
        ApiKey::DeleteRecords => ResponseKind::DeleteRecords(
            DeleteRecordsResponse::default()
                .with_throttle_time_ms(0)
                .with_topics(vec![
                    delete_records_response::DeleteRecordsTopicResult::default()
                        .with_name(topic("orders"))
                        .with_partitions(vec![
                            delete_records_response::DeleteRecordsPartitionResult::default()
                                .with_partition_index(0)
                                .with_low_watermark(42)
                                .with_error_code(0),
                            delete_records_response::DeleteRecordsPartitionResult::default()
                                .with_partition_index(1)
                                .with_low_watermark(-1)
                                .with_error_code(1),
                        ]),
                ]),
        ),
        ApiKey::DescribeLogDirs => {
            let mut dir = describe_log_dirs_response::DescribeLogDirsResult::default()
                .with_error_code(0)
                .with_log_dir(s("/var/lib/cohort"))
                .with_topics(vec![describe_log_dirs_response::DescribeLogDirsTopic::default()
                    .with_name(topic("orders"))
                    .with_partitions(vec![
                        describe_log_dirs_response::DescribeLogDirsPartition::default()
                            .with_partition_index(0)
                            .with_partition_size(4096)
                            .with_offset_lag(0)
                            .with_is_future_key(false),
                        describe_log_dirs_response::DescribeLogDirsPartition::default()
                            .with_partition_index(3)
                            .with_partition_size(0)
                            .with_offset_lag(0)
                            .with_is_future_key(false),
                    ])]);
            if v >= 4 {
                dir = dir
                    .with_total_bytes(1 << 40)
                    .with_usable_bytes(1 << 39);
            }
            let mut r = DescribeLogDirsResponse::default()
                .with_throttle_time_ms(0)
                .with_results(vec![dir]);
            if v >= 3 {
                r = r.with_error_code(0);
            }
            ResponseKind::DescribeLogDirs(r)
        }
        ApiKey::OffsetForLeaderEpoch => ResponseKind::OffsetForLeaderEpoch(
            OffsetForLeaderEpochResponse::default()
                .with_throttle_time_ms(0)
                .with_topics(vec![
                    offset_for_leader_epoch_response::OffsetForLeaderTopicResult::default()
                        .with_topic(topic("orders"))
                        .with_partitions(vec![
                            offset_for_leader_epoch_response::EpochEndOffset::default()
                                .with_error_code(0)
                                .with_partition(0)
                                .with_leader_epoch(2)
                                .with_end_offset(1200),
                            offset_for_leader_epoch_response::EpochEndOffset::default()
                                .with_error_code(74)
                                .with_partition(4)
                                .with_leader_epoch(-1)
                                .with_end_offset(-1),
                        ]),
                ]),
        ),
        ApiKey::DescribeCluster => {
            let broker = |id: i32, rack: Option<&str>| {
                let b = describe_cluster_response::DescribeClusterBroker::default()
                    .with_broker_id(BrokerId(id))
                    .with_host(s("10.0.0.7"))
                    .with_port(9092 + id)
                    .with_rack(rack.map(s));
                if v >= 2 {
                    b.with_is_fenced(id == 3)
                } else {
                    b
                }
            };
            let mut r = DescribeClusterResponse::default()
                .with_throttle_time_ms(0)
                .with_error_code(0)
                .with_error_message(None)
                .with_cluster_id(s("Lk8V1cfsQbWnVKUmA0KbJA"))
                .with_controller_id(BrokerId(2))
                .with_brokers(vec![broker(1, Some("r1")), broker(2, None), broker(3, None)])
                .with_cluster_authorized_operations(4000);
            if v >= 1 {
                r = r.with_endpoint_type(1);
            }
            ResponseKind::DescribeCluster(r)
        }
        ApiKey::DescribeTopicPartitions => ResponseKind::DescribeTopicPartitions(
            DescribeTopicPartitionsResponse::default()
                .with_throttle_time_ms(0)
                .with_topics(vec![
                    describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic::default()
                        .with_error_code(0)
                        .with_name(Some(topic("audit")))
                        .with_topic_id(uuid(5))
                        .with_is_internal(false)
                        .with_partitions(vec![
                            describe_topic_partitions_response::DescribeTopicPartitionsResponsePartition::default()
                                .with_error_code(0)
                                .with_partition_index(3)
                                .with_leader_id(BrokerId(2))
                                .with_leader_epoch(0)
                                .with_replica_nodes(vec![BrokerId(2)])
                                .with_isr_nodes(vec![BrokerId(2)])
                                .with_eligible_leader_replicas(Some(vec![]))
                                .with_last_known_elr(None)
                                .with_offline_replicas(vec![]),
                        ])
                        .with_topic_authorized_operations(3576),
                    describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic::default()
                        .with_error_code(3)
                        .with_name(Some(topic("gone")))
                        .with_topic_id(uuid::Uuid::nil())
                        .with_is_internal(false)
                        .with_topic_authorized_operations(3576),
                ])
                .with_next_cursor(Some(
                    describe_topic_partitions_response::Cursor::default()
                        .with_topic_name(topic("orders"))
                        .with_partition_index(0),
                )),
        ),
        ApiKey::DescribeAcls => ResponseKind::DescribeAcls(
            DescribeAclsResponse::default().with_resources(vec![
                describe_acls_response::DescribeAclsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s("orders"))
                    .with_pattern_type(3)
                    .with_acls(vec![describe_acls_response::AclDescription::default()
                        .with_principal(s("User:alice"))
                        .with_host(s("*"))
                        .with_operation(3)
                        .with_permission_type(3)]),
            ]),
        ),
        ApiKey::CreateAcls => ResponseKind::CreateAcls(CreateAclsResponse::default().with_results(
            vec![
                create_acls_response::AclCreationResult::default(),
                create_acls_response::AclCreationResult::default()
                    .with_error_code(42)
                    .with_error_message(Some(s("Resource name should not be empty"))),
            ],
        )),
        ApiKey::DeleteAcls => ResponseKind::DeleteAcls(
            DeleteAclsResponse::default().with_filter_results(vec![
                delete_acls_response::DeleteAclsFilterResult::default().with_matching_acls(vec![
                    delete_acls_response::DeleteAclsMatchingAcl::default()
                        .with_resource_type(3)
                        .with_resource_name(s("g"))
                        .with_pattern_type(3)
                        .with_principal(s("User:bob"))
                        .with_host(s("*"))
                        .with_operation(3)
                        .with_permission_type(3),
                ]),
                delete_acls_response::DeleteAclsFilterResult::default()
                    .with_error_code(31)
                    .with_error_message(Some(s("Cluster authorization failed."))),
            ]),
        ),
        ApiKey::DescribeUserScramCredentials => ResponseKind::DescribeUserScramCredentials(
            DescribeUserScramCredentialsResponse::default()
                .with_throttle_time_ms(0)
                .with_results(vec![
                    describe_user_scram_credentials_response::DescribeUserScramCredentialsResult::default()
                        .with_user(s("alice"))
                        .with_credential_infos(vec![
                            describe_user_scram_credentials_response::CredentialInfo::default()
                                .with_mechanism(1)
                                .with_iterations(8192),
                        ]),
                    describe_user_scram_credentials_response::DescribeUserScramCredentialsResult::default()
                        .with_user(s("bob"))
                        .with_error_code(91)
                        .with_error_message(Some(s(
                            "Attempt to describe a user credential that does not exist: bob",
                        ))),
                ]),
        ),
        ApiKey::AlterUserScramCredentials => ResponseKind::AlterUserScramCredentials(
            AlterUserScramCredentialsResponse::default().with_results(vec![
                alter_user_scram_credentials_response::AlterUserScramCredentialsResult::default()
                    .with_user(s("alice")),
                alter_user_scram_credentials_response::AlterUserScramCredentialsResult::default()
                    .with_user(s("bob"))
                    .with_error_code(91)
                    .with_error_message(Some(s(
                        "Attempt to delete a user credential that does not exist",
                    ))),
            ]),
        ),
        _ => return None,
    })
}

/// Request samples of the transaction APIs (served by `src/handlers`, decision 0125).
fn txn_request_sample(key: ApiKey, v: i16) -> Option<RequestKind> {
    let tid = || TransactionalId(s("payments-tx-1"));
    Some(match key {
        ApiKey::AddPartitionsToTxn => RequestKind::AddPartitionsToTxn(
            AddPartitionsToTxnRequest::default()
                .with_v3_and_below_transactional_id(tid())
                .with_v3_and_below_producer_id(ProducerId(4000))
                .with_v3_and_below_producer_epoch(3)
                .with_v3_and_below_topics(vec![
                    add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                        .with_name(topic("orders"))
                        .with_partitions(vec![0, 2]),
                    add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                        .with_name(topic("audit"))
                        .with_partitions(vec![1]),
                ]),
        ),
        ApiKey::AddOffsetsToTxn => RequestKind::AddOffsetsToTxn(
            AddOffsetsToTxnRequest::default()
                .with_transactional_id(tid())
                .with_producer_id(ProducerId(4000))
                .with_producer_epoch(3)
                .with_group_id(GroupId(s("billing"))),
        ),
        ApiKey::EndTxn => RequestKind::EndTxn(
            EndTxnRequest::default()
                .with_transactional_id(tid())
                .with_producer_id(ProducerId(4000))
                .with_producer_epoch(3)
                .with_committed(true),
        ),
        ApiKey::TxnOffsetCommit => {
            let mut p = txn_offset_commit_request::TxnOffsetCommitRequestPartition::default()
                .with_partition_index(2)
                .with_committed_offset(1234)
                .with_committed_metadata(Some(s("md")));
            if v >= 2 {
                p = p.with_committed_leader_epoch(5);
            }
            let mut r = TxnOffsetCommitRequest::default()
                .with_transactional_id(tid())
                .with_group_id(GroupId(s("billing")))
                .with_producer_id(ProducerId(4000))
                .with_producer_epoch(3)
                .with_topics(vec![
                    txn_offset_commit_request::TxnOffsetCommitRequestTopic::default()
                        .with_name(topic("orders"))
                        .with_partitions(vec![p]),
                ]);
            if v >= 3 {
                r = r
                    .with_generation_id(7)
                    .with_member_id(s("consumer-1-abc"))
                    .with_group_instance_id(Some(s("instance-1")));
            }
            RequestKind::TxnOffsetCommit(r)
        }
        ApiKey::WriteTxnMarkers => {
            RequestKind::WriteTxnMarkers(WriteTxnMarkersRequest::default().with_markers(vec![
                write_txn_markers_request::WritableTxnMarker::default()
                    .with_producer_id(ProducerId(4000))
                    .with_producer_epoch(3)
                    .with_transaction_result(true)
                    .with_coordinator_epoch(2)
                    .with_topics(vec![
                        write_txn_markers_request::WritableTxnMarkerTopic::default()
                            .with_name(topic("orders"))
                            .with_partition_indexes(vec![0, 2]),
                    ]),
            ]))
        }
        ApiKey::DescribeTransactions => RequestKind::DescribeTransactions(
            DescribeTransactionsRequest::default()
                .with_transactional_ids(vec![tid(), TransactionalId(s("unknown-tx"))]),
        ),
        ApiKey::ListTransactions => {
            let r = ListTransactionsRequest::default()
                .with_state_filters(vec![s("Ongoing"), s("PrepareAbort")])
                .with_producer_id_filters(vec![ProducerId(4000)]);
            RequestKind::ListTransactions(if v >= 1 {
                r.with_duration_filter(60_000)
            } else {
                r
            })
        }
        ApiKey::DescribeProducers => {
            RequestKind::DescribeProducers(DescribeProducersRequest::default().with_topics(vec![
                describe_producers_request::TopicRequest::default()
                    .with_name(topic("orders"))
                    .with_partition_indexes(vec![0, 3]),
            ]))
        }
        _ => return None,
    })
}

/// Response samples of the transaction APIs.
fn txn_response_sample(key: ApiKey, _v: i16) -> Option<ResponseKind> {
    Some(match key {
        ApiKey::AddPartitionsToTxn => ResponseKind::AddPartitionsToTxn(
            AddPartitionsToTxnResponse::default()
                .with_throttle_time_ms(0)
                .with_results_by_topic_v3_and_below(vec![
                    add_partitions_to_txn_response::AddPartitionsToTxnTopicResult::default()
                        .with_name(topic("orders"))
                        .with_results_by_partition(vec![
                            add_partitions_to_txn_response::AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(0)
                                .with_partition_error_code(55),
                            add_partitions_to_txn_response::AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(9)
                                .with_partition_error_code(3),
                        ]),
                ]),
        ),
        ApiKey::AddOffsetsToTxn => ResponseKind::AddOffsetsToTxn(
            AddOffsetsToTxnResponse::default()
                .with_throttle_time_ms(0)
                .with_error_code(51),
        ),
        ApiKey::EndTxn => ResponseKind::EndTxn(
            EndTxnResponse::default()
                .with_throttle_time_ms(0)
                .with_error_code(48),
        ),
        ApiKey::TxnOffsetCommit => ResponseKind::TxnOffsetCommit(
            TxnOffsetCommitResponse::default()
                .with_throttle_time_ms(0)
                .with_topics(vec![
                    txn_offset_commit_response::TxnOffsetCommitResponseTopic::default()
                        .with_name(topic("orders"))
                        .with_partitions(vec![
                            txn_offset_commit_response::TxnOffsetCommitResponsePartition::default()
                                .with_partition_index(2)
                                .with_error_code(90),
                        ]),
                ]),
        ),
        ApiKey::WriteTxnMarkers => ResponseKind::WriteTxnMarkers(
            WriteTxnMarkersResponse::default().with_markers(vec![
                write_txn_markers_response::WritableTxnMarkerResult::default()
                    .with_producer_id(ProducerId(4000))
                    .with_topics(vec![
                        write_txn_markers_response::WritableTxnMarkerTopicResult::default()
                            .with_name(topic("orders"))
                            .with_partitions(vec![
                                write_txn_markers_response::WritableTxnMarkerPartitionResult::default()
                                    .with_partition_index(0)
                                    .with_error_code(0),
                            ]),
                    ]),
            ]),
        ),
        ApiKey::DescribeTransactions => ResponseKind::DescribeTransactions(
            DescribeTransactionsResponse::default()
                .with_throttle_time_ms(0)
                .with_transaction_states(vec![
                    describe_transactions_response::TransactionState::default()
                        .with_error_code(0)
                        .with_transactional_id(TransactionalId(s("payments-tx-1")))
                        .with_transaction_state(s("Ongoing"))
                        .with_transaction_timeout_ms(60_000)
                        .with_transaction_start_time_ms(1_700_000_000_000)
                        .with_producer_id(ProducerId(4000))
                        .with_producer_epoch(3)
                        .with_topics(vec![describe_transactions_response::TopicData::default()
                            .with_topic(topic("orders"))
                            .with_partitions(vec![0, 2])]),
                    describe_transactions_response::TransactionState::default()
                        .with_error_code(105)
                        .with_transactional_id(TransactionalId(s("unknown-tx")))
                        .with_transaction_start_time_ms(-1)
                        .with_producer_id(ProducerId(-1))
                        .with_producer_epoch(-1),
                ]),
        ),
        ApiKey::ListTransactions => ResponseKind::ListTransactions(
            ListTransactionsResponse::default()
                .with_throttle_time_ms(0)
                .with_error_code(0)
                .with_unknown_state_filters(vec![s("Hanging")])
                .with_transaction_states(vec![
                    list_transactions_response::TransactionState::default()
                        .with_transactional_id(TransactionalId(s("payments-tx-1")))
                        .with_producer_id(ProducerId(4000))
                        .with_transaction_state(s("Ongoing")),
                ]),
        ),
        ApiKey::DescribeProducers => ResponseKind::DescribeProducers(
            DescribeProducersResponse::default()
                .with_throttle_time_ms(0)
                .with_topics(vec![describe_producers_response::TopicResponse::default()
                    .with_name(topic("orders"))
                    .with_partitions(vec![
                        describe_producers_response::PartitionResponse::default()
                            .with_partition_index(0)
                            .with_error_code(0)
                            .with_active_producers(vec![
                                describe_producers_response::ProducerState::default()
                                    .with_producer_id(ProducerId(4000))
                                    .with_producer_epoch(3)
                                    .with_last_sequence(41)
                                    .with_last_timestamp(1_700_000_000_123)
                                    .with_coordinator_epoch(2)
                                    .with_current_txn_start_offset(17),
                            ]),
                        describe_producers_response::PartitionResponse::default()
                            .with_partition_index(3)
                            .with_error_code(6)
                            .with_error_message(None),
                    ])]),
        ),
        _ => return None,
    })
}

/// Writes `bytes` to the fuzz corpus of `target` as `name` when `COHORT_WRITE_FUZZ_SEEDS` is
/// set; otherwise checks the kept seed is exactly these bytes.
fn fuzz_seed(target: &str, name: &str, bytes: &[u8]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let path = dir.join(name);
    if std::env::var_os("COHORT_WRITE_FUZZ_SEEDS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, bytes).unwrap();
        return;
    }
    let kept = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `COHORT_WRITE_FUZZ_SEEDS=1 cargo test -p protocol` to write the seeds",
            path.display()
        )
    });
    assert_eq!(
        kept,
        bytes,
        "{} is stale: rewrite the seeds",
        path.display()
    );
}

/// The request fuzzer starts from every served API and version, and from what real clients
/// sent (`tests/golden`), so its first input already reaches every decoder.
#[test]
fn the_request_fuzz_corpus_has_every_served_version_and_the_real_clients_frames() {
    for (key, v) in decodable_versions() {
        let frame = client_frame(key, v, &request_sample(key, v));
        fuzz_seed("decode_request", &format!("{key:?}-v{v}"), &frame);
    }
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut real = 0;
    for entry in std::fs::read_dir(golden).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "bin") {
            let name = path.file_stem().unwrap().to_string_lossy();
            fuzz_seed(
                "decode_request",
                &format!("client-{name}"),
                &std::fs::read(&path).unwrap(),
            );
            real += 1;
        }
    }
    assert!(real >= 8, "only {real} real client frames");
}
