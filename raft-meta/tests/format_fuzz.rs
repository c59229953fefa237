//! The payload decoders against hostile input: arbitrary bytes, arbitrary bodies behind valid
//! headers, and mutated valid payloads never panic; arbitrary values round-trip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

use coordinator::{
    ApiVersion, CommitOffsets, CommitPartition, CommitTopic, Generation, GroupId, LeaderEpoch,
    MemberId, Offset, PartitionIndex, TimerKey, TimestampMs, TopicName, WriteCommand,
};
use openraft::{CommittedLeaderId, Membership};
use proptest::prelude::*;
use raft_meta::app::Application;
use raft_meta::cohort_app::{
    AppReply, Body, ClusterMeta, CohortApp, Envelope, RequestToken, TopicMeta,
};
use raft_meta::format::openraft_codec::{decode_snapshot_meta, encode_snapshot_meta};
use raft_meta::format::tags::REGISTRY;
use raft_meta::format::write_header;
use raft_meta::store::format::StoreFormat;
use raft_meta::store::segment_store::RaftStateFile;
use raft_meta::types::{LogId, SnapshotMeta, StoredMembership, Vote};
use raft_meta::NodeInfo;

/// Runs every decoder on `bytes`; each may refuse, none may panic.
fn decode_all(bytes: &[u8]) {
    let _ = Envelope::decode(bytes);
    let _ = CohortApp::decode(bytes);
    let _ = CohortApp::admit(bytes);
    let _ = AppReply::decode(bytes);
    let _ = TopicMeta::decode_record(bytes);
    let _ = ClusterMeta::decode_record(bytes);
    let _ = decode_snapshot_meta(bytes);
    let _ = RaftStateFile::decode(bytes);
    let _ = StoreFormat::decode(bytes);
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-z0-9._-]{1,12}", ".{0,8}"]
}

fn token() -> impl Strategy<Value = Option<RequestToken>> {
    proptest::option::of((any::<u64>(), any::<u64>(), any::<u64>()).prop_map(
        |(node, incarnation, seq)| RequestToken {
            node,
            incarnation,
            seq,
        },
    ))
}

fn topic_meta() -> impl Strategy<Value = TopicMeta> {
    (
        text(),
        any::<u128>(),
        proptest::collection::vec(proptest::collection::vec(any::<i32>(), 0..4), 0..4),
        proptest::collection::btree_map(text(), text(), 0..4),
    )
        .prop_map(|(name, id, partitions, configs)| TopicMeta {
            name,
            id,
            partitions,
            configs,
        })
}

fn commit() -> impl Strategy<Value = WriteCommand> {
    (
        any::<i16>(),
        any::<i64>(),
        text(),
        any::<i32>(),
        text(),
        any::<i64>(),
        proptest::collection::vec(
            (
                text(),
                any::<i32>(),
                any::<i64>(),
                any::<i32>(),
                proptest::option::of(text()),
                any::<bool>(),
            ),
            0..4,
        ),
    )
        .prop_map(|(v, now, group, generation, member, retention, parts)| {
            WriteCommand::CommitOffsets(CommitOffsets {
                api_version: ApiVersion(v),
                now_ms: TimestampMs(now),
                group_id: GroupId::new(group),
                generation: Generation(generation),
                member_id: MemberId::new(member),
                group_instance_id: None,
                retention_time_ms: retention,
                topics: parts
                    .into_iter()
                    .map(|(t, p, o, e, m, known)| CommitTopic {
                        name: TopicName::new(t),
                        partitions: vec![CommitPartition {
                            partition: PartitionIndex(p),
                            offset: Offset(o),
                            leader_epoch: LeaderEpoch(e),
                            metadata: m,
                            partition_known: known,
                        }],
                    })
                    .collect(),
            })
        })
}

fn timer() -> impl Strategy<Value = WriteCommand> {
    (0u8..4, text(), any::<i32>(), any::<i64>()).prop_map(|(kind, g, n, now)| {
        let group_id = GroupId::new(g.clone());
        let key = match kind {
            0 => TimerKey::JoinPhase {
                group_id,
                generation: Generation(n),
            },
            1 => TimerKey::SyncPhase {
                group_id,
                generation: Generation(n),
            },
            2 => TimerKey::MemberHeartbeat {
                group_id,
                member_id: MemberId::new(g),
            },
            _ => TimerKey::OffsetsRetention,
        };
        WriteCommand::TimerFired {
            key,
            now_ms: TimestampMs(now),
        }
    })
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        commit().prop_map(Body::Group),
        timer().prop_map(Body::Group),
        any::<i64>().prop_map(|now| Body::Group(WriteCommand::ExpireOffsets {
            now_ms: TimestampMs(now)
        })),
        (proptest::collection::vec(text(), 0..4), any::<i64>()).prop_map(|(t, now)| Body::Group(
            WriteCommand::TopicsDeleted {
                topics: t.into_iter().map(TopicName::new).collect(),
                now_ms: TimestampMs(now)
            }
        )),
        proptest::collection::vec(topic_meta(), 0..3)
            .prop_map(|topics| Body::CreateTopics { topics }),
        (proptest::collection::vec(text(), 0..4), any::<i64>()).prop_map(|(names, now)| {
            Body::DeleteTopics {
                names,
                now_ms: TimestampMs(now),
            }
        }),
        text().prop_map(|cluster_id| Body::InitCluster { cluster_id }),
        any::<u32>().prop_map(|count| Body::AllocateProducerIds { count }),
    ]
}

fn log_id() -> impl Strategy<Value = LogId> {
    (any::<u64>(), any::<u64>(), any::<u64>())
        .prop_map(|(t, n, i)| LogId::new(CommittedLeaderId::new(t, n), i))
}

fn snapshot_meta() -> impl Strategy<Value = SnapshotMeta> {
    (
        proptest::option::of(log_id()),
        proptest::option::of(log_id()),
        proptest::collection::vec(proptest::collection::btree_set(0u64..8, 1..4), 1..3),
        text(),
    )
        .prop_map(|(last, membership_log, configs, id)| {
            let nodes: BTreeMap<u64, NodeInfo> = configs
                .iter()
                .flatten()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .map(|n| {
                    (
                        *n,
                        NodeInfo {
                            raft_addr: format!("r{n}"),
                            kafka_addr: format!("k{n}"),
                            listeners: Vec::new(),
                        },
                    )
                })
                .collect();
            SnapshotMeta {
                last_log_id: last,
                last_membership: StoredMembership::new(
                    membership_log,
                    Membership::new(configs, nodes),
                ),
                snapshot_id: id,
            }
        })
}

fn vote() -> impl Strategy<Value = Vote> {
    (any::<u64>(), any::<u64>(), any::<bool>()).prop_map(|(t, n, c)| {
        if c {
            Vote::new_committed(t, n)
        } else {
            Vote::new(t, n)
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
        decode_all(&bytes);
    }

    #[test]
    fn arbitrary_bodies_behind_every_valid_header_never_panic(
        row in 0..REGISTRY.len(),
        version in 0u16..4,
        body in proptest::collection::vec(any::<u8>(), 0..96),
    ) {
        let mut bytes = Vec::new();
        write_header(&mut bytes, REGISTRY[row].tag, version);
        bytes.extend_from_slice(&body);
        decode_all(&bytes);
        // The untagged forms too.
        let mut untagged = vec![1u8];
        untagged.extend_from_slice(&body);
        decode_all(&untagged);
    }

    #[test]
    fn mutated_commands_never_panic(
        origin in token(),
        body in body(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let mut bytes = Envelope { origin, body }.encode().to_vec();
        for (at, x) in flips {
            let at = at % bytes.len();
            bytes[at] ^= x;
        }
        decode_all(&bytes);
        decode_all(&bytes[..cut % (bytes.len() + 1)]);
    }

    #[test]
    fn commands_round_trip(origin in token(), body in body()) {
        let envelope = Envelope { origin, body };
        let bytes = envelope.encode();
        prop_assert!(CohortApp::admit(&bytes).is_ok());
        prop_assert_eq!(Envelope::decode(&bytes).unwrap(), envelope);
        // A truncated command is refused, never misread as a shorter one.
        for len in 0..bytes.len() {
            prop_assert!(Envelope::decode(&bytes[..len]).is_err(), "cut at {}", len);
        }
    }

    #[test]
    fn records_and_replies_round_trip(topic in topic_meta(), id in proptest::option::of(text()), next in any::<i64>(), first in any::<i64>()) {
        prop_assert_eq!(TopicMeta::decode_record(&topic.encode_record()).unwrap(), topic.clone());
        let cluster = ClusterMeta { cluster_id: id, next_producer_id: next };
        prop_assert_eq!(ClusterMeta::decode_record(&cluster.encode_record()).unwrap(), cluster);
        for reply in [
            AppReply::CreateTopics(vec![Ok(topic.clone())]),
            AppReply::DeleteTopics(vec![Ok(topic)]),
            AppReply::ProducerIds { first },
        ] {
            prop_assert_eq!(AppReply::decode(&reply.encode()).unwrap(), reply);
        }
    }

    #[test]
    fn raft_files_round_trip(meta in snapshot_meta(), v in proptest::option::of(vote()), c in proptest::option::of(log_id()), p in proptest::option::of(log_id())) {
        let bytes = encode_snapshot_meta(&meta);
        prop_assert_eq!(decode_snapshot_meta(&bytes).unwrap(), meta);
        for len in 0..bytes.len() {
            prop_assert!(decode_snapshot_meta(&bytes[..len]).is_err());
        }
        let state = RaftStateFile { vote: v, committed: c, last_purged: p };
        prop_assert_eq!(RaftStateFile::decode(&state.encode()).unwrap(), state);
    }
}

#[test]
fn the_untagged_bytes_of_every_command_kind_still_decode() {
    // One untagged command from the c076aca fixture per kind is in tests/legacy_log.rs; here,
    // a truncated or extended untagged command is refused.
    let raw = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/testdata/legacy-c076aca/payloads.txt"),
    )
    .unwrap();
    for line in raw.lines().filter(|l| l.starts_with("envelope ")) {
        let hex = &line["envelope ".len()..];
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        assert!(Envelope::decode(&bytes).is_ok());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            Envelope::decode(&longer).is_err(),
            "trailing byte accepted: {line}"
        );
        assert!(
            Envelope::decode(&bytes[..bytes.len() - 1]).is_err(),
            "cut accepted: {line}"
        );
    }
}
