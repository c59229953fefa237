//! Golden bytes of the consumer-protocol records and the topic record (key type 3–7, value
//! version 0): a change of their encoding shows up here, not as a replica that can no longer
//! read its log. Plus round trips, tombstones, and garbage that must fail, not panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use coordinator::*;
use proptest::prelude::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn a(pairs: &[(u128, i32)]) -> Assignment {
    Assignment::from_pairs(pairs.iter().map(|(t, p)| (TopicId(*t), PartitionIndex(*p))))
}

fn records() -> Vec<(Record, &'static str, &'static str)> {
    vec![
        (
            Record::ConsumerGroup {
                group_id: "g".into(),
                value: Some(ConsumerGroupValue {
                    group_epoch: 5,
                    assignment_epoch: 4,
                }),
            },
            // type 3, "g"
            "00030000000167",
            // version 0, epoch 5, assignment epoch 4
            "00000000000500000004",
        ),
        (
            Record::ConsumerMember {
                group_id: "g".into(),
                member_id: "m".into(),
                value: Some(Box::new(ConsumerMemberValue {
                    instance_id: Some("i".into()),
                    rack_id: None,
                    client_id: "c".into(),
                    client_host: "/h".into(),
                    subscribed_topic_names: vec!["t".into()],
                    subscribed_topic_regex: Some("x.*".into()),
                    server_assignor: None,
                    rebalance_timeout_ms: 30_000,
                    classic: None,
                })),
            },
            "00040000000167000000016d",
            // v0, instance "i", no rack, "c", "/h", ["t"], regex "x.*", no assignor, 30000
            "0000010000000169000000000163000000022f68000000010000000174010000000378 2e2a0000007530",
        ),
        (
            // A classic member of a consumer group (online migration): version 1.
            Record::ConsumerMember {
                group_id: "g".into(),
                member_id: "m2".into(),
                value: Some(Box::new(ConsumerMemberValue {
                    instance_id: None,
                    rack_id: None,
                    client_id: "c".into(),
                    client_host: "/h".into(),
                    subscribed_topic_names: vec!["t".into()],
                    subscribed_topic_regex: None,
                    server_assignor: None,
                    rebalance_timeout_ms: 30_000,
                    classic: Some(ClassicMemberMetadata {
                        session_timeout_ms: 45_000,
                        protocols: vec![("range".into(), bytes::Bytes::from_static(b"ab"))],
                    }),
                })),
            },
            "00040000000167000000026d32",
            // v1, no instance, no rack, "c", "/h", ["t"], no regex, no assignor, 30000, then
            // session 45000, 1 protocol: "range" with metadata "ab"
            "0001 00 00 0000000163 000000022f68 00000001 0000000174 00 00 00007530 0000afc8 00000001 0000000572616e6765 000000026162",
        ),
        (
            Record::ConsumerTarget {
                group_id: "g".into(),
                member_id: "m".into(),
                value: Some(a(&[(1, 0), (1, 2)])),
            },
            "00050000000167000000016d",
            // v0, 1 topic: id 1 (16 bytes), 2 partitions: 0, 2
            "00000000000100000000000000000000000000000001000000020000000000000002",
        ),
        (
            Record::ConsumerCurrent {
                group_id: "g".into(),
                member_id: "m".into(),
                value: Some(Box::new(CurrentAssignment {
                    member_epoch: 3,
                    previous_member_epoch: 2,
                    state: MemberState::UnrevokedPartitions,
                    assigned: a(&[(1, 1)]),
                    pending_revocation: Assignment::new(),
                })),
            },
            "00060000000167000000016d",
            // v0, epoch 3, previous 2, state 1, assigned {1: [1]}, revoking {}
            "00000000000300000002010000000100000000000000000000000000000001000000010000000100000000",
        ),
        (
            Record::Topic {
                name: "t".into(),
                value: Some(TopicValue {
                    id: TopicId(0x0102),
                    partitions: 6,
                }),
            },
            "00070000000174",
            // v0, id 0x0102, 6 partitions
            "00000000000000000000000000000000010200000006",
        ),
    ]
}

#[test]
fn consumer_records_have_pinned_bytes() {
    for (record, key, value) in records() {
        let value = value.replace(' ', "");
        assert_eq!(hex(&record.encode_key()), key, "key of {record:?}");
        assert_eq!(hex(&record.encode_value()), value, "value of {record:?}");
        assert_eq!(
            Record::decode(&record.encode_key(), &record.encode_value()).unwrap(),
            record
        );
    }
}

#[test]
fn consumer_tombstones_are_empty_values_and_round_trip() {
    for (record, _, _) in records() {
        let tombstone = match record {
            Record::ConsumerGroup { group_id, .. } => Record::ConsumerGroup {
                group_id,
                value: None,
            },
            Record::ConsumerMember {
                group_id,
                member_id,
                ..
            } => Record::ConsumerMember {
                group_id,
                member_id,
                value: None,
            },
            Record::ConsumerTarget {
                group_id,
                member_id,
                ..
            } => Record::ConsumerTarget {
                group_id,
                member_id,
                value: None,
            },
            Record::ConsumerCurrent {
                group_id,
                member_id,
                ..
            } => Record::ConsumerCurrent {
                group_id,
                member_id,
                value: None,
            },
            Record::Topic { name, .. } => Record::Topic { name, value: None },
            other => panic!("{other:?}"),
        };
        assert!(tombstone.encode_value().is_empty());
        assert_eq!(
            Record::decode(&tombstone.encode_key(), &[]).unwrap(),
            tombstone
        );
    }
}

#[test]
fn unordered_or_newer_values_fail_closed() {
    let key = Record::ConsumerTarget {
        group_id: "g".into(),
        member_id: "m".into(),
        value: None,
    }
    .encode_key();
    // Partitions out of order: 2 then 0.
    let mut bad = vec![0, 0, 0, 0, 0, 1];
    bad.extend_from_slice(&1u128.to_be_bytes());
    bad.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0]);
    assert!(matches!(
        Record::decode(&key, &bad),
        Err(DecodeError::Unordered { .. })
    ));
    // A version this code does not know.
    assert!(matches!(
        Record::decode(&key, &[0, 1, 0, 0, 0, 0]),
        Err(DecodeError::UnsupportedVersion {
            record_type: 5,
            version: 1
        })
    ));
}

#[test]
fn a_member_record_newer_than_version_1_fails_closed() {
    let key = Record::ConsumerMember {
        group_id: "g".into(),
        member_id: "m".into(),
        value: None,
    }
    .encode_key();
    assert!(matches!(
        Record::decode(&key, &[0, 2, 0, 0]),
        Err(DecodeError::UnsupportedVersion {
            record_type: 4,
            version: 2
        })
    ));
}

proptest! {
    #[test]
    fn garbage_after_a_consumer_key_never_panics(tag in 3u16..8, value in proptest::collection::vec(any::<u8>(), 0..96)) {
        let mut key = tag.to_be_bytes().to_vec();
        key.extend_from_slice(&[0, 0, 0, 1, b'g']);
        if tag != 3 && tag != 7 {
            key.extend_from_slice(&[0, 0, 0, 1, b'm']);
        }
        let _ = Record::decode(&key, &value);
    }
}
