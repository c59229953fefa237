//! Golden bytes: every payload type, at every version this binary reads, encodes to the bytes
//! pinned here and those bytes decode back to the same value.
//!
//! A failure here means a struct or an encoder changed the bytes of a replicated or persisted
//! payload: nodes running the previous binary, and the logs and snapshots already on disk, hold
//! the old bytes. Do not update the hex. Add a version instead (docs/decisions/
//! 0109-replicated-formats.md, `raft_meta::format::tags`): keep a reader for the old bytes
//! and pin the new version's bytes in a new sample.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use bytes::Bytes;
use coordinator::group_config::{AlterGroupConfigs, GroupConfigError, GroupConfigOp};
use coordinator::{
    AddOffsetsToTxn, AddPartitionsToTxn, EndTxn, InitTransactionalProducer, ProducerEpoch,
    ProducerId, TxnMarkersWritten, TxnOffsetCommit, TxnPartition, TxnProducer, TxnTopic,
};
use coordinator::{
    ApiVersion, CommitOffsets, CommitPartition, CommitTopic, DeleteGroups, DeleteOffsets,
    DeleteTopic, Generation, GroupId, GroupInstanceId, JoinGroup, JoinProtocol, LeaderEpoch,
    LeaveGroup, LeavingMember, MemberId, Offset, PartitionIndex, SyncAssignment, SyncGroup,
    TimerKey, TimestampMs, TopicName, WriteCommand,
};
use coordinator::{
    Assignment, ConsumerGroupHeartbeat, InstallTargetAssignment, OwnedTopicPartitions, TopicId,
    TopicMetadata, TopicsChanged,
};
use coordinator::{ClusterConfig, ConfigChange, ConfigError};
use openraft::{CommittedLeaderId, EntryPayload, Membership};
use raft_meta::cohort_app::{
    decode_cluster_config_record, decode_scram_bootstrap_record, encode_cluster_config_record,
    encode_scram_bootstrap_record, AppReply, Body, ClusterMeta, Envelope, PartitionsAdded,
    RequestToken, ScramChangeError, ScramCredentialRecord, ScramMechanismType, ScramOp,
    StoredScramCredential, TopicChangeError, TopicConfigChange, TopicMeta, UserScramChange,
};
use raft_meta::cohort_app::{
    AclBinding, AclFilter, AclOperation, AclPatternFilter, AclPatternType, AclPermission,
    AclResourceType,
};
use raft_meta::format::openraft_codec::{decode_snapshot_meta, encode_snapshot_meta};
use raft_meta::format::tags::{self, Tag, REGISTRY};
use raft_meta::store::format::StoreFormat;
use raft_meta::store::segment_store::RaftStateFile;
use raft_meta::store::RaftStore;
use raft_meta::types::{Entry, LogId, SnapshotMeta, StoredMembership, Vote};
use raft_meta::{CommandBatch, NodeInfo};

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// One pinned payload: its bytes now, and whether the pinned bytes decode to the same value.
/// Whether given bytes decode to the sample's value (`Err` says how they do not).
type DecodesBack = Box<dyn Fn(&[u8]) -> Result<(), String>>;

struct Sample {
    name: String,
    now: Vec<u8>,
    pinned: &'static str,
    decodes_back: DecodesBack,
}

fn sample<T, E>(
    name: &str,
    value: T,
    encode: impl Fn(&T) -> Vec<u8>,
    decode: impl Fn(&[u8]) -> Result<T, E> + 'static,
    pinned: &'static str,
) -> Sample
where
    T: PartialEq + std::fmt::Debug + 'static,
    E: std::fmt::Display,
{
    let now = encode(&value);
    Sample {
        name: name.to_owned(),
        now,
        pinned,
        decodes_back: Box::new(move |bytes| match decode(bytes) {
            Ok(v) if v == value => Ok(()),
            Ok(v) => Err(format!("decodes to {v:?}, not {value:?}")),
            Err(e) => Err(format!("does not decode: {e}")),
        }),
    }
}

fn command(name: &str, origin: Option<RequestToken>, body: Body, pinned: &'static str) -> Sample {
    sample(
        name,
        Envelope { origin, body },
        |e| e.encode().to_vec(),
        Envelope::decode,
        pinned,
    )
}

fn reply(name: &str, value: AppReply, pinned: &'static str) -> Sample {
    sample(
        name,
        value,
        |r| r.encode().to_vec(),
        AppReply::decode,
        pinned,
    )
}

fn postcard_layout<T>(name: &str, value: T, pinned: &'static str) -> Sample
where
    T: PartialEq + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned + 'static,
{
    sample(
        name,
        value,
        |v| postcard::to_stdvec(v).unwrap(),
        |b| postcard::from_bytes::<T>(b),
        pinned,
    )
}

const TOKEN: RequestToken = RequestToken {
    node: 3,
    incarnation: 0x1122_3344_5566_7788,
    seq: 300,
};

fn topic_meta() -> TopicMeta {
    TopicMeta {
        name: "orders".to_owned(),
        id: 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10,
        partitions: vec![vec![1, 2], vec![2, 3]],
        configs: BTreeMap::from([
            ("cleanup.policy".to_owned(), "compact".to_owned()),
            ("retention.ms".to_owned(), "60000".to_owned()),
        ]),
    }
}

fn cluster_config() -> ClusterConfig {
    ClusterConfig {
        static_values: BTreeMap::from([
            ("group.max.size".to_owned(), 50),
            ("group.min.session.timeout.ms".to_owned(), 6_000),
        ]),
        dynamic_values: BTreeMap::from([("offsets.retention.minutes".to_owned(), 60)]),
    }
}

fn txn_producer() -> TxnProducer {
    TxnProducer {
        api_version: ApiVersion(3),
        now_ms: TimestampMs(1_700_000_000_000),
        transactional_id: "txn-a".into(),
        producer_id: ProducerId(4_000),
        producer_epoch: ProducerEpoch(3),
    }
}

fn acl_binding() -> AclBinding {
    AclBinding {
        resource_type: AclResourceType::Topic,
        name: "orders-".to_owned(),
        pattern: AclPatternType::Prefixed,
        principal: "User:alice".to_owned(),
        host: "*".to_owned(),
        operation: AclOperation::Read,
        permission: AclPermission::Allow,
    }
}

fn acl_cluster_deny() -> AclBinding {
    AclBinding {
        resource_type: AclResourceType::Cluster,
        name: "kafka-cluster".to_owned(),
        pattern: AclPatternType::Literal,
        principal: "User:*".to_owned(),
        host: "10.0.0.1".to_owned(),
        operation: AclOperation::Alter,
        permission: AclPermission::Deny,
    }
}

fn scram_credential() -> StoredScramCredential {
    StoredScramCredential {
        salt: vec![0x5a; 4],
        stored_key: vec![0x11; 4],
        server_key: vec![0x22; 4],
        iterations: 8192,
    }
}

fn scram_record(user: &str, mechanism: ScramMechanismType) -> ScramCredentialRecord {
    ScramCredentialRecord {
        user: user.to_owned(),
        mechanism,
        credential: scram_credential(),
    }
}

fn group(command: WriteCommand) -> Body {
    Body::Group(command)
}

fn log_id(term: u64, node: u64, index: u64) -> LogId {
    LogId::new(CommittedLeaderId::new(term, node), index)
}

fn membership() -> Membership<u64, NodeInfo> {
    let nodes: BTreeMap<u64, NodeInfo> = (1..=3)
        .map(|id| {
            (
                id,
                NodeInfo {
                    raft_addr: format!("10.0.0.{id}:9093"),
                    kafka_addr: format!("10.0.0.{id}:9092"),
                    listeners: Vec::new(),
                },
            )
        })
        .collect();
    Membership::new(vec![BTreeSet::from([1, 2, 3])], nodes)
}

fn joint_membership() -> Membership<u64, NodeInfo> {
    let nodes: BTreeMap<u64, NodeInfo> = (1..=4)
        .map(|id| {
            (
                id,
                NodeInfo {
                    raft_addr: format!("r{id}"),
                    kafka_addr: format!("k{id}"),
                    listeners: Vec::new(),
                },
            )
        })
        .collect();
    Membership::new(
        vec![BTreeSet::from([1, 2, 3]), BTreeSet::from([2, 3, 4])],
        nodes,
    )
}

// One push per sample, each with its comment-free block: a vec![] literal of 60 would be harder
// to read and to extend.
#[allow(clippy::vec_init_then_push)]
fn samples() -> Vec<Sample> {
    let mut s = Vec::new();

    // Commands, one per kind (a TimerFired per timer key).
    s.push(command(
        "JoinGroup",
        Some(TOKEN),
        group(WriteCommand::JoinGroup(JoinGroup {
            api_version: ApiVersion(9),
            now_ms: TimestampMs(1_700_000_000_001),
            nonce: 0xa1a2_a3a4_a5a6_a7a8_a9aa_abac_adae_afb0,
            group_id: GroupId::new("group-a"),
            member_id: MemberId::new("member-1"),
            group_instance_id: Some(GroupInstanceId::new("instance-1")),
            session_timeout_ms: 45_000,
            rebalance_timeout_ms: 300_000,
            protocol_type: "consumer".to_owned(),
            protocols: vec![
                JoinProtocol {
                    name: "range".to_owned(),
                    metadata: Bytes::from_static(b"\x00\x03abc"),
                },
                JoinProtocol {
                    name: "cooperative-sticky".to_owned(),
                    metadata: Bytes::from_static(b"\x00\x03de"),
                },
            ],
            client_id: "client-a".to_owned(),
            client_host: "/10.0.0.5".to_owned(),
            reason: Some("rejoin".to_owned()),
        })),
        "0202010001010388ef99abc5e88c9111ac021282a0abfef962b0dfbaedcaf5aad5a9d19eb5da94e9d1a2c3020767726f75702d61086d656d6265722d31010a696e7374616e63652d3190bf05c0cf2408636f6e73756d6572020572616e676505000361626312636f6f70657261746976652d737469636b79040003646508636c69656e742d61092f31302e302e302e35010672656a6f696e",
    ));
    s.push(command(
        "SyncGroup",
        Some(TOKEN),
        group(WriteCommand::SyncGroup(SyncGroup {
            api_version: ApiVersion(5),
            now_ms: TimestampMs(1_700_000_000_002),
            group_id: GroupId::new("group-a"),
            generation: Generation(7),
            member_id: MemberId::new("member-1"),
            group_instance_id: None,
            protocol_type: Some("consumer".to_owned()),
            protocol_name: Some("range".to_owned()),
            assignments: vec![
                SyncAssignment {
                    member_id: MemberId::new("member-1"),
                    assignment: Bytes::from_static(b"\x00\x01p0"),
                },
                SyncAssignment {
                    member_id: MemberId::new("member-2"),
                    assignment: Bytes::from_static(b"\x00\x01p1"),
                },
            ],
        })),
        "0202020001010388ef99abc5e88c9111ac020a84a0abfef9620767726f75702d610e086d656d6265722d31000108636f6e73756d6572010572616e676502086d656d6265722d310400017030086d656d6265722d320400017031",
    ));
    s.push(command(
        "LeaveGroup",
        Some(TOKEN),
        group(WriteCommand::LeaveGroup(LeaveGroup {
            api_version: ApiVersion(5),
            now_ms: TimestampMs(1_700_000_000_003),
            group_id: GroupId::new("group-a"),
            members: vec![
                LeavingMember {
                    member_id: MemberId::new("member-1"),
                    group_instance_id: None,
                    reason: Some("bye".to_owned()),
                },
                LeavingMember {
                    member_id: MemberId::default(),
                    group_instance_id: Some(GroupInstanceId::new("instance-2")),
                    reason: None,
                },
            ],
        })),
        "0202030001010388ef99abc5e88c9111ac020a86a0abfef9620767726f75702d6102086d656d6265722d3100010362796500010a696e7374616e63652d3200",
    ));
    s.push(command(
        "CommitOffsets",
        Some(TOKEN),
        group(WriteCommand::CommitOffsets(CommitOffsets {
            api_version: ApiVersion(8),
            now_ms: TimestampMs(1_700_000_000_004),
            group_id: GroupId::new("group-a"),
            generation: Generation(7),
            member_id: MemberId::new("member-1"),
            group_instance_id: Some(GroupInstanceId::new("instance-1")),
            retention_time_ms: 86_400_000,
            topics: vec![CommitTopic {
                name: TopicName::new("orders"),
                partitions: vec![
                    CommitPartition {
                        partition: PartitionIndex(0),
                        offset: Offset(1234),
                        leader_epoch: LeaderEpoch(5),
                        metadata: Some("m".to_owned()),
                        partition_known: true,
                    },
                    CommitPartition {
                        partition: PartitionIndex(1),
                        offset: Offset(99),
                        leader_epoch: LeaderEpoch(-1),
                        metadata: None,
                        partition_known: false,
                    },
                ],
            }],
        })),
        "0202040001010388ef99abc5e88c9111ac021088a0abfef9620767726f75702d610e086d656d6265722d31010a696e7374616e63652d3180f0b25201066f72646572730200a4130a01016d0102c601010000",
    ));
    s.push(command(
        "DeleteOffsets",
        Some(TOKEN),
        group(WriteCommand::DeleteOffsets(DeleteOffsets {
            api_version: ApiVersion(0),
            now_ms: TimestampMs(1_700_000_000_005),
            group_id: GroupId::new("group-b"),
            topics: vec![DeleteTopic {
                name: TopicName::new("orders"),
                partitions: vec![PartitionIndex(0), PartitionIndex(2)],
                topic_known: true,
            }],
        })),
        "0202050001010388ef99abc5e88c9111ac02008aa0abfef9620767726f75702d6201066f726465727302000401",
    ));
    s.push(command(
        "DeleteGroups",
        Some(TOKEN),
        group(WriteCommand::DeleteGroups(DeleteGroups {
            api_version: ApiVersion(2),
            now_ms: TimestampMs(1_700_000_000_006),
            group_ids: vec![GroupId::new("group-b"), GroupId::new("group-c")],
        })),
        "0202060001010388ef99abc5e88c9111ac02048ca0abfef962020767726f75702d620767726f75702d63",
    ));
    let timer = |key, now| {
        group(WriteCommand::TimerFired {
            key,
            now_ms: TimestampMs(now),
        })
    };
    s.push(command(
        "TimerFired JoinPhase",
        None,
        timer(
            TimerKey::JoinPhase {
                group_id: GroupId::new("group-a"),
                generation: Generation(6),
            },
            1_700_000_000_007,
        ),
        "020207000100000767726f75702d610c8ea0abfef962",
    ));
    s.push(command(
        "TimerFired SyncPhase",
        None,
        timer(
            TimerKey::SyncPhase {
                group_id: GroupId::new("group-a"),
                generation: Generation(7),
            },
            1_700_000_000_008,
        ),
        "020207000100010767726f75702d610e90a0abfef962",
    ));
    s.push(command(
        "TimerFired MemberHeartbeat",
        None,
        timer(
            TimerKey::MemberHeartbeat {
                group_id: GroupId::new("group-a"),
                member_id: MemberId::new("member-2"),
            },
            1_700_000_000_009,
        ),
        "020207000100020767726f75702d61086d656d6265722d3292a0abfef962",
    ));
    s.push(command(
        "TimerFired OffsetsRetention",
        None,
        timer(TimerKey::OffsetsRetention, 1_700_000_000_010),
        "0202070001000394a0abfef962",
    ));
    s.push(command(
        "TimerFired ConsumerRebalance",
        None,
        timer(
            TimerKey::ConsumerRebalance {
                group_id: GroupId::new("group-c"),
                member_id: MemberId::new("member-3"),
                member_epoch: 12,
            },
            1_700_000_000_014,
        ),
        "020207000100040767726f75702d63086d656d6265722d33189ca0abfef962",
    ));
    s.push(command(
        "ExpireOffsets",
        None,
        group(WriteCommand::ExpireOffsets {
            now_ms: TimestampMs(1_700_000_000_011),
        }),
        "02020800010096a0abfef962",
    ));
    s.push(command(
        "TopicsDeleted",
        None,
        group(WriteCommand::TopicsDeleted {
            topics: vec![TopicName::new("orders"), TopicName::new("audit")],
            now_ms: TimestampMs(1_700_000_000_012),
        }),
        "02020900010002066f726465727305617564697498a0abfef962",
    ));
    s.push(command(
        "CreateTopics",
        Some(TOKEN),
        Body::CreateTopics {
            topics: vec![
                topic_meta(),
                TopicMeta {
                    name: "audit".to_owned(),
                    id: 9,
                    partitions: vec![vec![3]],
                    configs: BTreeMap::new(),
                },
            ],
        },
        "02020a0001010388ef99abc5e88c9111ac0202066f7264657273909eb8e8c0e1828589909cb0d080c181820202020204020406020e636c65616e75702e706f6c69637907636f6d706163740c726574656e74696f6e2e6d730536303030300561756469740901010600",
    ));
    s.push(command(
        "DeleteTopics",
        Some(TOKEN),
        Body::DeleteTopics {
            names: vec!["orders".to_owned(), "audit".to_owned()],
            now_ms: TimestampMs(1_700_000_000_013),
        },
        "02020b0001010388ef99abc5e88c9111ac0202066f72646572730561756469749aa0abfef962",
    ));
    s.push(command(
        "InitCluster",
        None,
        Body::InitCluster {
            cluster_id: "q1w2e3r4t5y6u7i8o9p0aa".to_owned(),
        },
        "02020c00010016713177326533723474357936753769386f3970306161",
    ));
    s.push(command(
        "AllocateProducerIds",
        Some(TOKEN),
        Body::AllocateProducerIds { count: 1000 },
        "02020d0001010388ef99abc5e88c9111ac02e807",
    ));
    s.push(command(
        "ConsumerGroupHeartbeat",
        Some(TOKEN),
        group(WriteCommand::ConsumerGroupHeartbeat(ConsumerGroupHeartbeat {
            api_version: ApiVersion(1),
            now_ms: TimestampMs(1_700_000_000_015),
            nonce: 0xb1b2_b3b4_b5b6_b7b8_b9ba_bbbc_bdbe_bfc0,
            group_id: GroupId::new("group-c"),
            member_id: MemberId::new("member-3"),
            member_epoch: 4,
            instance_id: Some(GroupInstanceId::new("instance-3")),
            rack_id: Some("rack-1".to_owned()),
            rebalance_timeout_ms: 300_000,
            subscribed_topic_names: Some(vec![TopicName::new("orders")]),
            subscribed_topic_regex: Some("ord.*".to_owned()),
            server_assignor: Some("uniform".to_owned()),
            owned_partitions: Some(vec![OwnedTopicPartitions {
                topic_id: TopicId(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10),
                partitions: vec![PartitionIndex(0), PartitionIndex(2)],
            }]),
            client_id: "client-c".to_owned(),
            client_host: "/10.0.0.7".to_owned(),
        })),
        "02020e0001010388ef99abc5e88c9111ac02029ea0abfef962c0fffaedcbf7aeddb9f1deb5db96edd9b2e3020767726f75702d63086d656d6265722d3308010a696e7374616e63652d3301067261636b2d31c0cf240101066f726465727301056f72642e2a0107756e69666f726d0101909eb8e8c0e1828589909cb0d080c181820202000408636c69656e742d63092f31302e302e302e37",
    ));
    s.push(command(
        "InstallTargetAssignment",
        None,
        group(WriteCommand::InstallTargetAssignment(InstallTargetAssignment {
            now_ms: TimestampMs(1_700_000_000_016),
            group_id: GroupId::new("group-c"),
            epoch: 5,
            members: vec![
                (
                    MemberId::new("member-3"),
                    Assignment::from_pairs([
                        (TopicId(7), PartitionIndex(1)),
                        (TopicId(7), PartitionIndex(0)),
                        (TopicId(9), PartitionIndex(3)),
                    ]),
                ),
                (MemberId::new("member-4"), Assignment::new()),
            ],
        })),
        "02020f000100a0a0abfef9620767726f75702d630a02086d656d6265722d330207020002090106086d656d6265722d3400",
    ));
    s.push(command(
        "TopicsChanged",
        None,
        group(WriteCommand::TopicsChanged(TopicsChanged {
            now_ms: TimestampMs(1_700_000_000_017),
            upserted: vec![TopicMetadata {
                name: TopicName::new("orders"),
                id: TopicId(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10),
                partitions: 3,
            }],
            deleted: vec![TopicName::new("audit")],
        })),
        "020210000100a2a0abfef96201066f7264657273909eb8e8c0e1828589909cb0d080c18182020601056175646974",
    ));
    s.push(command(
        "InitClusterConfig",
        None,
        Body::InitClusterConfig {
            static_values: BTreeMap::from([
                ("group.max.size".to_owned(), 50),
                ("offsets.retention.minutes".to_owned(), 10_080),
            ]),
            replace: true,
        },
        "020211000100020e67726f75702e6d61782e73697a6564196f6666736574732e726574656e74696f6e2e6d696e75746573c09d0101",
    ));
    s.push(command(
        "AlterClusterConfig",
        None,
        Body::AlterClusterConfig {
            changes: vec![
                ConfigChange {
                    key: "group.max.size".to_owned(),
                    value: Some(7),
                },
                ConfigChange {
                    key: "offsets.retention.minutes".to_owned(),
                    value: None,
                },
            ],
        },
        "020212000100020e67726f75702e6d61782e73697a65010e196f6666736574732e726574656e74696f6e2e6d696e7574657300",
    ));

    s.push(command(
        "InitTransactionalProducer",
        Some(TOKEN),
        group(WriteCommand::InitTransactionalProducer(
            InitTransactionalProducer {
                now_ms: TimestampMs(1_700_000_000_000),
                transactional_id: "txn-a".into(),
                timeout_ms: 60_000,
                expected: Some((ProducerId(4_000), ProducerEpoch(3))),
                fresh_producer_id: ProducerId(4_001),
            },
        )),
        "0202150001010388ef99abc5e88c9111ac0280a0abfef9620574786e2d61c0a90701c03e06c23e",
    ));
    s.push(command(
        "AddPartitionsToTxn",
        Some(TOKEN),
        group(WriteCommand::AddPartitionsToTxn(AddPartitionsToTxn {
            producer: txn_producer(),
            topics: vec![TxnTopic {
                name: "orders".into(),
                partitions: vec![
                    TxnPartition {
                        partition: PartitionIndex(0),
                        partition_known: true,
                    },
                    TxnPartition {
                        partition: PartitionIndex(9),
                        partition_known: false,
                    },
                ],
            }],
        })),
        "0202160001010388ef99abc5e88c9111ac020680a0abfef9620574786e2d61c03e0601066f72646572730200011200",
    ));
    s.push(command(
        "AddOffsetsToTxn",
        Some(TOKEN),
        group(WriteCommand::AddOffsetsToTxn(AddOffsetsToTxn {
            producer: txn_producer(),
            group_id: "group-a".into(),
        })),
        "0202170001010388ef99abc5e88c9111ac020680a0abfef9620574786e2d61c03e060767726f75702d61",
    ));
    s.push(command(
        "EndTxn",
        Some(TOKEN),
        group(WriteCommand::EndTxn(EndTxn {
            producer: txn_producer(),
            commit: true,
        })),
        "0202180001010388ef99abc5e88c9111ac020680a0abfef9620574786e2d61c03e0601",
    ));
    s.push(command(
        "TxnMarkersWritten",
        None,
        group(WriteCommand::TxnMarkersWritten(TxnMarkersWritten {
            producer: txn_producer(),
            commit: false,
        })),
        "0202190001000680a0abfef9620574786e2d61c03e0600",
    ));
    s.push(command(
        "TxnOffsetCommit",
        Some(TOKEN),
        group(WriteCommand::TxnOffsetCommit(TxnOffsetCommit {
            producer: txn_producer(),
            group_id: "group-a".into(),
            generation: Generation(5),
            member_id: "member-1".into(),
            group_instance_id: Some("instance-1".into()),
            topics: vec![CommitTopic {
                name: "orders".into(),
                partitions: vec![CommitPartition {
                    partition: PartitionIndex(0),
                    offset: Offset(17),
                    leader_epoch: LeaderEpoch(2),
                    metadata: Some("m".to_owned()),
                    partition_known: true,
                }],
            }],
        })),
        "02021a0001010388ef99abc5e88c9111ac020680a0abfef9620574786e2d61c03e060767726f75702d610a086d656d6265722d31010a696e7374616e63652d3101066f72646572730100220401016d01",
    ));
    s.push(command(
        "TimerFired, transaction timeout",
        None,
        group(WriteCommand::TimerFired {
            key: TimerKey::TransactionTimeout {
                transactional_id: "txn-a".into(),
            },
            now_ms: TimestampMs(1_700_000_060_000),
        }),
        "020207000100050574786e2d61c0c9b2fef962",
    ));

    // Replies, one per variant (and every topic error).
    s.push(command(
        "AlterTopicConfigs",
        Some(TOKEN),
        Body::AlterTopicConfigs(TopicConfigChange {
            name: "orders".to_owned(),
            id: 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10,
            expected: BTreeMap::from([("retention.ms".to_owned(), "60000".to_owned())]),
            configs: BTreeMap::from([
                ("retention.ms".to_owned(), "60000".to_owned()),
                ("segment.bytes".to_owned(), "1048576".to_owned()),
            ]),
        }),
        "0202130001010388ef99abc5e88c9111ac02066f7264657273909eb8e8c0e1828589909cb0d080c1818202010c726574656e74696f6e2e6d73053630303030020c726574656e74696f6e2e6d730536303030300d7365676d656e742e62797465730731303438353736",
    ));
    s.push(command(
        "CreatePartitions",
        Some(TOKEN),
        Body::CreatePartitions(PartitionsAdded {
            name: "orders".to_owned(),
            id: 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10,
            expected_count: 2,
            added: vec![vec![3], vec![1]],
        }),
        "0202140001010388ef99abc5e88c9111ac02066f7264657273909eb8e8c0e1828589909cb0d080c1818202020201060102",
    ));
    s.push(command(
        "AlterScramCredentials",
        Some(TOKEN),
        Body::AlterScramCredentials {
            changes: vec![
                UserScramChange {
                    user: "alice".to_owned(),
                    op: ScramOp::Upsert {
                        mechanism: ScramMechanismType::Sha256,
                        credential: scram_credential(),
                    },
                },
                UserScramChange {
                    user: "bob".to_owned(),
                    op: ScramOp::Delete {
                        mechanism: ScramMechanismType::Sha512,
                    },
                },
            ],
        },
        "0202210001010388ef99abc5e88c9111ac020205616c6963650000045a5a5a5a04111111110422222222804003626f620101",
    ));
    s.push(command(
        "BootstrapScramCredentials",
        None,
        Body::BootstrapScramCredentials {
            credentials: vec![scram_record("admin", ScramMechanismType::Sha256)],
        },
        "020222000100010561646d696e00045a5a5a5a041111111104222222228040",
    ));
    s.push(reply(
        "AppReply ScramAltered",
        AppReply::ScramAltered(vec![
            Ok(()),
            Err(ScramChangeError::NotFound),
            Err(ScramChangeError::Unacceptable(
                "Too few iterations".to_owned(),
            )),
            Err(ScramChangeError::Duplicate),
        ]),
        "02030100010804000100010112546f6f2066657720697465726174696f6e730102",
    ));
    s.push(command(
        "CreateAcls",
        Some(TOKEN),
        Body::CreateAcls {
            acls: vec![acl_binding(), acl_cluster_deny()],
        },
        "0202230001010388ef99abc5e88c9111ac020200076f72646572732d010a557365723a616c696365012a0100020d6b61666b612d636c75737465720006557365723a2a0831302e302e302e310501",
    ));
    s.push(command(
        "DeleteAcls",
        Some(TOKEN),
        Body::DeleteAcls {
            filters: vec![
                AclFilter {
                    resource_type: None,
                    name: None,
                    pattern: AclPatternFilter::Any,
                    principal: None,
                    host: None,
                    operation: None,
                    permission: None,
                },
                AclFilter {
                    resource_type: Some(AclResourceType::Topic),
                    name: Some("orders-eu".to_owned()),
                    pattern: AclPatternFilter::Match,
                    principal: Some("User:alice".to_owned()),
                    host: Some("*".to_owned()),
                    operation: Some(AclOperation::Read),
                    permission: Some(AclPermission::Allow),
                },
                AclFilter {
                    resource_type: Some(AclResourceType::Group),
                    name: Some("g".to_owned()),
                    pattern: AclPatternFilter::Exactly(AclPatternType::Literal),
                    principal: None,
                    host: None,
                    operation: Some(AclOperation::All),
                    permission: Some(AclPermission::Deny),
                },
            ],
        },
        "0202240001010388ef99abc5e88c9111ac020300000000000000010001096f72646572732d657501010a557365723a616c69636501012a0101010001010101670200000001000101",
    ));
    s.push(reply(
        "AppReply AclsCreated",
        AppReply::AclsCreated(vec![
            Ok(()),
            Err("Resource name should not be empty".to_owned()),
        ]),
        "02030100010b020001215265736f75726365206e616d652073686f756c64206e6f7420626520656d707479",
    ));
    s.push(reply(
        "AppReply AclsDeleted",
        AppReply::AclsDeleted(vec![vec![acl_binding(), acl_cluster_deny()], vec![]]),
        "02030100010c020200076f72646572732d010a557365723a616c696365012a0100020d6b61666b612d636c75737465720006557365723a2a0831302e302e302e31050100",
    ));
    s.push(reply(
        "AppReply ScramBootstrapped",
        AppReply::ScramBootstrapped(true),
        "02030100010901",
    ));
    s.push(reply("AppReply Group", AppReply::Group, "020301000100"));
    s.push(command(
        "AlterGroupConfigs",
        None,
        Body::AlterGroupConfigs(AlterGroupConfigs {
            group_id: "group-a".into(),
            ops: vec![
                (
                    "consumer.session.timeout.ms".to_owned(),
                    GroupConfigOp::Set("50000".to_owned()),
                ),
                ("consumer.heartbeat.interval.ms".to_owned(), GroupConfigOp::Delete),
            ],
            replace: false,
        }),
        "0202290001000767726f75702d61021b636f6e73756d65722e73657373696f6e2e74696d656f75742e6d73000535303030301e636f6e73756d65722e6865617274626561742e696e74657276616c2e6d730100",
    ));
    s.push(reply(
        "AppReply GroupConfigs",
        AppReply::GroupConfigs(Ok([(
            "consumer.session.timeout.ms".to_owned(),
            "50000".to_owned(),
        )]
        .into())),
        "02030100010a00011b636f6e73756d65722e73657373696f6e2e74696d656f75742e6d73053530303030",
    ));
    s.push(reply(
        "AppReply GroupConfigs refused",
        AppReply::GroupConfigs(Err(GroupConfigError::InvalidConfig(
            "Unknown group config name: x".to_owned(),
        ))),
        "02030100010a01001c556e6b6e6f776e2067726f757020636f6e666967206e616d653a2078",
    ));
    s.push(reply(
        "AppReply CreateTopics",
        AppReply::CreateTopics(vec![
            Ok(topic_meta()),
            Err(TopicChangeError::Exists("orders".to_owned())),
            Err(TopicChangeError::LimitReached("too many".to_owned())),
            Err(TopicChangeError::Invalid("no partitions".to_owned())),
        ]),
        "0203010001010400066f7264657273909eb8e8c0e1828589909cb0d080c181820202020204020406020e636c65616e75702e706f6c69637907636f6d706163740c726574656e74696f6e2e6d730536303030300100066f7264657273010208746f6f206d616e7901030d6e6f20706172746974696f6e73",
    ));
    s.push(reply(
        "AppReply DeleteTopics",
        AppReply::DeleteTopics(vec![
            Ok(topic_meta()),
            Err(TopicChangeError::Unknown("gone".to_owned())),
        ]),
        "0203010001020200066f7264657273909eb8e8c0e1828589909cb0d080c181820202020204020406020e636c65616e75702e706f6c69637907636f6d706163740c726574656e74696f6e2e6d73053630303030010104676f6e65",
    ));
    s.push(reply(
        "AppReply ClusterId",
        AppReply::ClusterId("q1w2e3r4t5y6u7i8o9p0aa".to_owned()),
        "02030100010316713177326533723474357936753769386f3970306161",
    ));
    s.push(reply(
        "AppReply ProducerIds",
        AppReply::ProducerIds { first: 4000 },
        "020301000104c03e",
    ));
    s.push(reply(
        "AppReply Rejected",
        AppReply::Rejected("out of range".to_owned()),
        "0203010001050c6f7574206f662072616e6765",
    ));
    s.push(reply(
        "AppReply ClusterConfig",
        AppReply::ClusterConfig(Ok(cluster_config())),
        "02030100010600020e67726f75702e6d61782e73697a65641c67726f75702e6d696e2e73657373696f6e2e74696d656f75742e6d73e05d01196f6666736574732e726574656e74696f6e2e6d696e7574657378",
    ));
    s.push(reply(
        "AppReply ClusterConfig refused",
        AppReply::ClusterConfig(Err(ConfigError::OutOfRange {
            key: "group.max.size".to_owned(),
            value: 0,
            min: 1,
            max: 2_147_483_647,
        })),
        "02030100010601010e67726f75702e6d61782e73697a650002feffffff0f",
    ));

    s.push(reply(
        "AppReply TopicAltered",
        AppReply::TopicAltered(Ok(topic_meta())),
        "02030100010700066f7264657273909eb8e8c0e1828589909cb0d080c181820202020204020406020e636c65616e75702e706f6c69637907636f6d706163740c726574656e74696f6e2e6d73053630303030",
    ));
    s.push(reply(
        "AppReply TopicAltered conflict",
        AppReply::TopicAltered(Err(TopicChangeError::Conflict("changed".to_owned()))),
        "0203010001070104076368616e676564",
    ));

    // Snapshot records of the Cohort application.
    s.push(sample(
        "topic record",
        topic_meta(),
        |t| t.encode_record().to_vec(),
        TopicMeta::decode_record,
        "0204010001066f7264657273909eb8e8c0e1828589909cb0d080c181820202020204020406020e636c65616e75702e706f6c69637907636f6d706163740c726574656e74696f6e2e6d73053630303030",
    ));
    s.push(sample(
        "cluster record",
        ClusterMeta {
            cluster_id: Some("q1w2e3r4t5y6u7i8o9p0aa".to_owned()),
            next_producer_id: 5000,
        },
        |c| c.encode_record().to_vec(),
        ClusterMeta::decode_record,
        "02040200010116713177326533723474357936753769386f3970306161904e",
    ));
    s.push(sample(
        "cluster record, no id yet",
        ClusterMeta::default(),
        |c| c.encode_record().to_vec(),
        ClusterMeta::decode_record,
        "02040200010000",
    ));
    s.push(sample(
        "cluster config record",
        cluster_config(),
        |c| encode_cluster_config_record(c).to_vec(),
        decode_cluster_config_record,
        "0204030001020e67726f75702e6d61782e73697a65641c67726f75702e6d696e2e73657373696f6e2e74696d656f75742e6d73e05d01196f6666736574732e726574656e74696f6e2e6d696e7574657378",
    ));
    s.push(sample(
        "SCRAM credential record",
        scram_record("alice", ScramMechanismType::Sha512),
        |r| r.encode_record().to_vec(),
        ScramCredentialRecord::decode_record,
        "020421000105616c69636501045a5a5a5a041111111104222222228040",
    ));
    s.push(sample(
        "SCRAM bootstrap record",
        true,
        |b| encode_scram_bootstrap_record(*b).to_vec(),
        decode_scram_bootstrap_record,
        "020422000101",
    ));

    s.push(sample(
        "ACL record",
        acl_binding(),
        |a| a.encode_record().to_vec(),
        AclBinding::decode_record,
        "020423000100076f72646572732d010a557365723a616c696365012a0100",
    ));
    s.push(sample(
        "ACL record, CLUSTER DENY",
        acl_cluster_deny(),
        |a| a.encode_record().to_vec(),
        AclBinding::decode_record,
        "0204230001020d6b61666b612d636c75737465720006557365723a2a0831302e302e302e310501",
    ));

    // Raft machinery files.
    s.push(sample(
        "snapshot meta",
        SnapshotMeta {
            last_log_id: Some(log_id(4, 2, 1_000)),
            last_membership: StoredMembership::new(Some(log_id(3, 1, 17)), membership()),
            snapshot_id: "4-2-1000".to_owned(),
        },
        encode_snapshot_meta,
        decode_snapshot_meta,
        "0201010001010000000000000004000000000000000200000000000003e80100000000000000030000000000000001000000000000001100000001000000030000000000000001000000000000000200000000000000030000000300000000000000010000000d31302e302e302e313a393039330000000d31302e302e302e313a3930393200000000000000020000000d31302e302e302e323a393039330000000d31302e302e302e323a3930393200000000000000030000000d31302e302e302e333a393039330000000d31302e302e302e333a3930393200000008342d322d31303030",
    ));
    s.push(sample(
        "snapshot meta, empty state, joint membership",
        SnapshotMeta {
            last_log_id: None,
            last_membership: StoredMembership::new(None, joint_membership()),
            snapshot_id: "empty".to_owned(),
        },
        encode_snapshot_meta,
        decode_snapshot_meta,
        "02010100010000000000020000000300000000000000010000000000000002000000000000000300000003000000000000000200000000000000030000000000000004000000040000000000000001000000027231000000026b310000000000000002000000027232000000026b320000000000000003000000027233000000026b330000000000000004000000027234000000026b3400000005656d707479",
    ));
    s.push(sample(
        "segment store state",
        RaftStateFile {
            vote: Some(Vote::new_committed(5, 2)),
            committed: Some(log_id(5, 2, 812)),
            last_purged: Some(log_id(4, 1, 500)),
        },
        RaftStateFile::encode,
        RaftStateFile::decode,
        "02010200010100000000000000050000000000000002010100000000000000050000000000000002000000000000032c010000000000000004000000000000000100000000000001f4",
    ));
    s.push(sample(
        "segment store state, uncommitted vote",
        RaftStateFile {
            vote: Some(Vote::new(6, 3)),
            committed: None,
            last_purged: None,
        },
        RaftStateFile::encode,
        RaftStateFile::decode,
        "02010200010100000000000000060000000000000003000000",
    ));
    s.push(sample(
        "log store format",
        StoreFormat {
            store: RaftStore::Segments,
            version: 1,
        },
        StoreFormat::encode,
        StoreFormat::decode,
        "020103000102",
    ));

    // Store layout version 1: openraft's entries and sled's meta values as postcard.
    s.push(postcard_layout(
        "log entry, blank",
        Entry {
            log_id: log_id(7, 3, 4242),
            payload: EntryPayload::Blank,
        },
        "0703922100",
    ));
    s.push(postcard_layout(
        "log entry, commands",
        Entry {
            log_id: log_id(7, 3, 4243),
            payload: EntryPayload::Normal(CommandBatch(vec![
                Bytes::from_static(b"\x02\x02\x0d\x00\x01cmd-a"),
                Bytes::from_static(b"cmd-b"),
            ])),
        },
        "0703932101020a02020d0001636d642d6105636d642d62",
    ));
    s.push(postcard_layout(
        "log entry, membership",
        Entry {
            log_id: log_id(7, 3, 4244),
            payload: EntryPayload::Membership(joint_membership()),
        },
        "07039421020203010203030203040401027231026b3102027232026b3203027233026b3304027234026b34",
    ));
    s.push(postcard_layout(
        "sled vote",
        Vote::new_committed(9, 1),
        "090101",
    ));
    s.push(postcard_layout(
        "sled committed",
        Some(log_id(9, 1, 77)),
        "0109014d",
    ));
    s
}

#[test]
fn every_payload_encodes_to_its_pinned_bytes() {
    let mut changed = Vec::new();
    for s in samples() {
        if hex(&s.now) != s.pinned {
            changed.push(format!("{}: now {}", s.name, hex(&s.now)));
        }
    }
    assert!(
        changed.is_empty(),
        "the bytes of {} payload(s) changed; add a version rather than editing the pins:\n{}",
        changed.len(),
        changed.join("\n")
    );
}

#[test]
fn pinned_bytes_decode_to_the_same_values() {
    let mut failed = Vec::new();
    for s in samples() {
        if let Err(e) = (s.decodes_back)(&unhex(s.pinned)) {
            failed.push(format!("{}: {e}", s.name));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn every_registered_tag_and_version_has_a_sample() {
    let mut covered = BTreeSet::new();
    for s in samples() {
        let b = unhex(s.pinned);
        if b.first() == Some(&raft_meta::format::TAGGED) && b.len() >= 5 {
            covered.insert((
                u16::from_be_bytes([b[1], b[2]]),
                u16::from_be_bytes([b[3], b[4]]),
            ));
        }
    }
    let missing: Vec<String> = REGISTRY
        .iter()
        .flat_map(|i| (1..=i.newest).map(move |v| (i, v)))
        .filter(|(i, v)| !covered.contains(&(i.tag.0, *v)))
        .map(|(i, v)| format!("{} v{v}", i.name))
        .collect();
    assert!(missing.is_empty(), "no golden sample for: {missing:?}");
}

/// Rewrites a pinned tagged payload's version or tag.
fn with_header(pinned: &str, tag: Option<Tag>, version: Option<u16>) -> Vec<u8> {
    let mut b = unhex(pinned);
    if let Some(t) = tag {
        b[1..3].copy_from_slice(&t.0.to_be_bytes());
    }
    if let Some(v) = version {
        b[3..5].copy_from_slice(&v.to_be_bytes());
    }
    b
}

#[test]
fn a_newer_version_or_an_unknown_tag_is_refused_by_name() {
    for s in samples() {
        let b = unhex(s.pinned);
        if b.first() != Some(&raft_meta::format::TAGGED) {
            continue;
        }
        let tag = Tag(u16::from_be_bytes([b[1], b[2]]));
        let info = tags::info(tag).unwrap();
        let newer = with_header(s.pinned, None, Some(info.newest + 1));
        let err = (s.decodes_back)(&newer).unwrap_err();
        assert!(
            err.contains("newer than this binary reads"),
            "{}: {err}",
            s.name
        );
        let unknown = with_header(s.pinned, Some(Tag(tag.0 | 0x00ff)), None);
        let err = (s.decodes_back)(&unknown).unwrap_err();
        assert!(err.contains("unknown type tag"), "{}: {err}", s.name);
    }
}
