//! Bad input never crashes the coordinator: arbitrary commands (extreme numbers, odd strings,
//! ids that collide with existing members, timers for anything) are decided without panicking,
//! and replay still rebuilds the live state after each of them.
//!
//! The seed is printed; `COORDINATOR_SEED=<seed>` replays a failing run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use bytes::Bytes;
use coordinator::*;
use harness::*;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("g".to_owned()),
        Just("m".to_owned()),
        Just("i-1".to_owned()),
        "[a-zé\u{0}-\u{1f}]{0,6}",
        "x{1100}",
    ]
}

fn number() -> impl Strategy<Value = i32> {
    prop_oneof![
        Just(i32::MIN),
        Just(-1),
        Just(0),
        Just(1),
        Just(6_000),
        Just(i32::MAX),
        any::<i32>()
    ]
}

fn big_number() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(i64::MIN),
        Just(-1),
        Just(0),
        Just(i64::MAX),
        any::<i64>()
    ]
}

fn bytes() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        Just(Bytes::new()),
        Just(subscription(&["t"])),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from),
    ]
}

fn command() -> impl Strategy<Value = WriteCommand> {
    let version = -2..12i16;
    prop_oneof![
        (
            version.clone(),
            any::<u128>(),
            text(),
            text(),
            proptest::option::of(text()),
            number(),
            number(),
            text(),
            proptest::collection::vec((text(), bytes()), 0..4),
            text()
        )
            .prop_map(
                |(
                    v,
                    nonce,
                    group,
                    member,
                    instance,
                    session,
                    rebalance,
                    ptype,
                    protocols,
                    client,
                )| {
                    WriteCommand::JoinGroup(JoinGroup {
                        api_version: ApiVersion(v),
                        now_ms: TimestampMs(0),
                        nonce: nonce % 4,
                        group_id: group.into(),
                        member_id: member.into(),
                        group_instance_id: instance.map(GroupInstanceId::from),
                        session_timeout_ms: session,
                        rebalance_timeout_ms: rebalance,
                        protocol_type: ptype,
                        protocols: protocols
                            .into_iter()
                            .map(|(name, metadata)| JoinProtocol { name, metadata })
                            .collect(),
                        client_id: client,
                        client_host: String::new(),
                        reason: None,
                    })
                }
            ),
        (
            version.clone(),
            text(),
            number(),
            text(),
            proptest::option::of(text()),
            proptest::option::of(text()),
            proptest::collection::vec((text(), bytes()), 0..4)
        )
            .prop_map(
                |(v, group, generation, member, instance, name, assignments)| {
                    WriteCommand::SyncGroup(SyncGroup {
                        api_version: ApiVersion(v),
                        now_ms: TimestampMs(0),
                        group_id: group.into(),
                        generation: Generation(generation),
                        member_id: member.into(),
                        group_instance_id: instance.map(GroupInstanceId::from),
                        protocol_type: None,
                        protocol_name: name,
                        assignments: assignments
                            .into_iter()
                            .map(|(m, assignment)| SyncAssignment {
                                member_id: m.into(),
                                assignment,
                            })
                            .collect(),
                    })
                }
            ),
        (
            text(),
            proptest::collection::vec((text(), proptest::option::of(text())), 0..4)
        )
            .prop_map(|(group, members)| {
                WriteCommand::LeaveGroup(LeaveGroup {
                    api_version: ApiVersion(5),
                    now_ms: TimestampMs(0),
                    group_id: group.into(),
                    members: members
                        .into_iter()
                        .map(|(m, i)| LeavingMember {
                            member_id: m.into(),
                            group_instance_id: i.map(GroupInstanceId::from),
                            reason: None,
                        })
                        .collect(),
                })
            }),
        (
            version,
            text(),
            number(),
            text(),
            proptest::option::of(text()),
            big_number(),
            text(),
            number(),
            big_number(),
            proptest::option::of(text()),
            any::<bool>()
        )
            .prop_map(
                |(
                    v,
                    group,
                    generation,
                    member,
                    instance,
                    retention,
                    topic,
                    partition,
                    offset,
                    metadata,
                    known,
                )| {
                    WriteCommand::CommitOffsets(CommitOffsets {
                        api_version: ApiVersion(v),
                        now_ms: TimestampMs(0),
                        group_id: group.into(),
                        generation: Generation(generation),
                        member_id: member.into(),
                        group_instance_id: instance.map(GroupInstanceId::from),
                        retention_time_ms: retention,
                        topics: vec![CommitTopic {
                            name: topic.into(),
                            partitions: vec![CommitPartition {
                                partition: PartitionIndex(partition),
                                offset: Offset(offset),
                                leader_epoch: LeaderEpoch(partition),
                                metadata,
                                partition_known: known,
                            }],
                        }],
                    })
                }
            ),
        (text(), text(), number(), any::<bool>()).prop_map(|(group, topic, partition, known)| {
            WriteCommand::DeleteOffsets(DeleteOffsets {
                api_version: ApiVersion(0),
                now_ms: TimestampMs(0),
                group_id: group.into(),
                topics: vec![DeleteTopic {
                    name: topic.into(),
                    partitions: vec![PartitionIndex(partition)],
                    topic_known: known,
                }],
            })
        }),
        proptest::collection::vec(text(), 0..3).prop_map(|groups| {
            WriteCommand::DeleteGroups(DeleteGroups {
                api_version: ApiVersion(2),
                now_ms: TimestampMs(0),
                group_ids: groups.into_iter().map(GroupId::from).collect(),
            })
        }),
        (text(), text(), number(), 0..4u8).prop_map(|(group, member, generation, kind)| {
            let group_id = GroupId::from(group);
            let key = match kind {
                0 => TimerKey::JoinPhase {
                    group_id,
                    generation: Generation(generation),
                },
                1 => TimerKey::SyncPhase {
                    group_id,
                    generation: Generation(generation),
                },
                2 => TimerKey::MemberHeartbeat {
                    group_id,
                    member_id: member.into(),
                },
                _ => TimerKey::OffsetsRetention,
            };
            WriteCommand::TimerFired {
                key,
                now_ms: TimestampMs(0),
            }
        }),
        proptest::collection::vec(text(), 0..3).prop_map(|topics| WriteCommand::TopicsDeleted {
            topics: topics.into_iter().map(TopicName::from).collect(),
            now_ms: TimestampMs(0),
        }),
        (
            text(),
            text(),
            -4i32..4,
            proptest::option::of(text()),
            proptest::option::of(proptest::collection::vec(text(), 0..3)),
            proptest::option::of(text()),
            proptest::option::of(proptest::collection::vec(
                (0u128..3, proptest::collection::vec(-2i32..4, 0..3)),
                0..3
            )),
            0i16..2,
        )
            .prop_map(
                |(group, member, epoch, instance, names, regex, owned, version)| {
                    WriteCommand::ConsumerGroupHeartbeat(ConsumerGroupHeartbeat {
                        api_version: ApiVersion(version),
                        now_ms: TimestampMs(0),
                        nonce: 7,
                        group_id: group.as_str().into(),
                        member_id: member.as_str().into(),
                        member_epoch: epoch,
                        instance_id: instance.map(GroupInstanceId::from),
                        rack_id: None,
                        rebalance_timeout_ms: if epoch == 0 { 1_000 } else { -1 },
                        subscribed_topic_names: names
                            .map(|n| n.into_iter().map(TopicName::from).collect()),
                        subscribed_topic_regex: regex,
                        server_assignor: None,
                        owned_partitions: owned.map(|o| {
                            o.into_iter()
                                .map(|(t, p)| OwnedTopicPartitions {
                                    topic_id: TopicId(t),
                                    partitions: p.into_iter().map(PartitionIndex).collect(),
                                })
                                .collect()
                        }),
                        client_id: "c".into(),
                        client_host: "h".into(),
                    })
                }
            ),
        (
            proptest::collection::vec((text(), 0u128..3, -1i32..5), 0..3),
            proptest::collection::vec(text(), 0..2)
        )
            .prop_map(|(upserted, deleted)| {
                WriteCommand::TopicsChanged(TopicsChanged {
                    now_ms: TimestampMs(0),
                    upserted: upserted
                        .into_iter()
                        .map(|(name, id, partitions)| TopicMetadata {
                            name: name.as_str().into(),
                            id: TopicId(id),
                            partitions,
                        })
                        .collect(),
                    deleted: deleted.into_iter().map(TopicName::from).collect(),
                })
            }),
        txn_command(),
    ]
}

/// Transaction commands over a few ids, producer ids and epochs, so that they meet the
/// transactions earlier steps created (and the groups, through TxnOffsetCommit).
fn txn_command() -> impl Strategy<Value = WriteCommand> {
    let txn_id = prop_oneof![Just("t".to_owned()), Just(String::new()), text()];
    let producer = (
        -1i16..6,
        txn_id.clone(),
        -1i64..3,
        prop_oneof![
            Just(-1i16),
            Just(0i16),
            Just(1i16),
            Just(i16::MAX - 1),
            any::<i16>()
        ],
    )
        .prop_map(|(v, id, pid, epoch)| TxnProducer {
            api_version: ApiVersion(v),
            now_ms: TimestampMs(0),
            transactional_id: id.as_str().into(),
            producer_id: ProducerId(pid),
            producer_epoch: ProducerEpoch(epoch),
        });
    prop_oneof![
        (
            txn_id,
            number(),
            proptest::option::of((-1i64..3, any::<i16>())),
            0i64..3
        )
            .prop_map(|(id, timeout, expected, fresh)| {
                WriteCommand::InitTransactionalProducer(InitTransactionalProducer {
                    now_ms: TimestampMs(0),
                    transactional_id: id.as_str().into(),
                    timeout_ms: timeout,
                    expected: expected.map(|(p, e)| (ProducerId(p), ProducerEpoch(e))),
                    fresh_producer_id: ProducerId(fresh),
                })
            }),
        (
            producer.clone(),
            proptest::collection::vec(
                (
                    text(),
                    proptest::collection::vec((number(), any::<bool>()), 0..3)
                ),
                0..3
            )
        )
            .prop_map(|(producer, topics)| {
                WriteCommand::AddPartitionsToTxn(AddPartitionsToTxn {
                    producer,
                    topics: topics
                        .into_iter()
                        .map(|(name, ps)| TxnTopic {
                            name: name.as_str().into(),
                            partitions: ps
                                .into_iter()
                                .map(|(p, known)| TxnPartition {
                                    partition: PartitionIndex(p),
                                    partition_known: known,
                                })
                                .collect(),
                        })
                        .collect(),
                })
            }),
        (producer.clone(), text()).prop_map(|(producer, group)| {
            WriteCommand::AddOffsetsToTxn(AddOffsetsToTxn {
                producer,
                group_id: group.as_str().into(),
            })
        }),
        (producer.clone(), any::<bool>())
            .prop_map(|(producer, commit)| { WriteCommand::EndTxn(EndTxn { producer, commit }) }),
        (producer.clone(), any::<bool>()).prop_map(|(producer, commit)| {
            WriteCommand::TxnMarkersWritten(TxnMarkersWritten { producer, commit })
        }),
        (
            producer,
            text(),
            number(),
            text(),
            proptest::collection::vec((text(), number(), big_number()), 0..3)
        )
            .prop_map(|(producer, group, generation, member, offsets)| {
                WriteCommand::TxnOffsetCommit(TxnOffsetCommit {
                    producer,
                    group_id: group.as_str().into(),
                    generation: Generation(generation),
                    member_id: member.as_str().into(),
                    group_instance_id: None,
                    topics: offsets
                        .into_iter()
                        .map(|(topic, p, offset)| CommitTopic {
                            name: topic.as_str().into(),
                            partitions: vec![CommitPartition {
                                partition: PartitionIndex(p),
                                offset: Offset(offset),
                                leader_epoch: LeaderEpoch(-1),
                                metadata: None,
                                partition_known: true,
                            }],
                        })
                        .collect(),
                })
            }),
    ]
}

/// Stamps the harness clock on a command, as the leader would.
fn stamp(command: WriteCommand, now: TimestampMs) -> WriteCommand {
    match command {
        WriteCommand::JoinGroup(mut c) => {
            c.now_ms = now;
            WriteCommand::JoinGroup(c)
        }
        WriteCommand::SyncGroup(mut c) => {
            c.now_ms = now;
            WriteCommand::SyncGroup(c)
        }
        WriteCommand::LeaveGroup(mut c) => {
            c.now_ms = now;
            WriteCommand::LeaveGroup(c)
        }
        WriteCommand::CommitOffsets(mut c) => {
            c.now_ms = now;
            WriteCommand::CommitOffsets(c)
        }
        WriteCommand::DeleteOffsets(mut c) => {
            c.now_ms = now;
            WriteCommand::DeleteOffsets(c)
        }
        WriteCommand::DeleteGroups(mut c) => {
            c.now_ms = now;
            WriteCommand::DeleteGroups(c)
        }
        WriteCommand::TimerFired { key, .. } => WriteCommand::TimerFired { key, now_ms: now },
        WriteCommand::ExpireOffsets { .. } => WriteCommand::ExpireOffsets { now_ms: now },
        WriteCommand::TopicsDeleted { topics, .. } => WriteCommand::TopicsDeleted {
            topics,
            now_ms: now,
        },
        WriteCommand::ConsumerGroupHeartbeat(mut c) => {
            c.now_ms = now;
            WriteCommand::ConsumerGroupHeartbeat(c)
        }
        WriteCommand::InstallTargetAssignment(mut c) => {
            c.now_ms = now;
            WriteCommand::InstallTargetAssignment(c)
        }
        WriteCommand::TopicsChanged(mut c) => {
            c.now_ms = now;
            WriteCommand::TopicsChanged(c)
        }
        WriteCommand::InitTransactionalProducer(mut c) => {
            c.now_ms = now;
            WriteCommand::InitTransactionalProducer(c)
        }
        WriteCommand::AddPartitionsToTxn(mut c) => {
            c.producer.now_ms = now;
            WriteCommand::AddPartitionsToTxn(c)
        }
        WriteCommand::AddOffsetsToTxn(mut c) => {
            c.producer.now_ms = now;
            WriteCommand::AddOffsetsToTxn(c)
        }
        WriteCommand::EndTxn(mut c) => {
            c.producer.now_ms = now;
            WriteCommand::EndTxn(c)
        }
        WriteCommand::TxnMarkersWritten(mut c) => {
            c.producer.now_ms = now;
            WriteCommand::TxnMarkersWritten(c)
        }
        WriteCommand::TxnOffsetCommit(mut c) => {
            c.producer.now_ms = now;
            WriteCommand::TxnOffsetCommit(c)
        }
    }
}

// A fresh seed per run explores new inputs; it is printed so any failure replays.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
fn seed() -> u64 {
    match std::env::var("COORDINATOR_SEED") {
        Ok(s) => s.parse().expect("COORDINATOR_SEED is a u64"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    }
}

#[test]
fn arbitrary_commands_never_panic_and_replay_stays_exact() {
    let seed = seed();
    println!("hostile_input seed = {seed} (COORDINATOR_SEED={seed} reproduces)");
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let steps = proptest::collection::vec((command(), 0..40_000i64), 1..60);
    let result = runner.run(&steps, |steps| {
        let mut h = Harness::with_config(Config {
            session_timeout_min_ms: 0,
            pending_members_max: 3,
            members_max: 4,
            field_max_bytes: 1024,
            ..Config::default()
        });
        for (command, advance_ms) in steps {
            let command = stamp(command, h.now_ms());
            h.write(command);
            h.advance(advance_ms);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("seed {seed}: {e}");
    }
}
