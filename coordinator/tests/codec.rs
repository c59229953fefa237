//! Record codec: round trips of every record type (tombstones included) and garbage that
//! never panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use coordinator::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

fn offset_record(value: Option<OffsetCommitValue>) -> Record {
    Record::OffsetCommit {
        group_id: "group-é".into(),
        topic: "orders".into(),
        partition: PartitionIndex(7),
        value,
    }
}

fn full_group() -> ClassicGroup {
    let mut members = BTreeMap::new();
    members.insert(
        MemberId::from("m-1"),
        Member {
            group_instance_id: Some("i-1".into()),
            client_id: "client".into(),
            client_host: "/10.0.0.5".into(),
            rebalance_timeout_ms: 300_000,
            session_timeout_ms: 45_000,
            protocol_type: "consumer".into(),
            protocols: vec![
                ("range".into(), Bytes::from_static(b"\x00\x01")),
                ("sticky".into(), Bytes::new()),
            ],
            assignment: Bytes::from_static(b"assignment"),
            awaiting_join: true,
            awaiting_sync: false,
            is_new: true,
        },
    );
    members.insert(
        MemberId::from("m-2"),
        Member {
            group_instance_id: None,
            client_id: String::new(),
            client_host: String::new(),
            rebalance_timeout_ms: -1,
            session_timeout_ms: 6_000,
            protocol_type: "consumer".into(),
            protocols: vec![],
            assignment: Bytes::new(),
            awaiting_join: false,
            awaiting_sync: true,
            is_new: false,
        },
    );
    let mut pending_members = BTreeMap::new();
    pending_members.insert(
        MemberId::from("p-1"),
        coordinator::PendingMember {
            session_timeout_ms: 10_000,
        },
    );
    ClassicGroup {
        state: GroupState::PreparingRebalance,
        state_timestamp: TimestampMs(1_700_000_000_000),
        generation: Generation(42),
        protocol_type: Some("consumer".into()),
        protocol_name: None,
        leader: Some("m-1".into()),
        members,
        pending_members,
        pending_sync: BTreeSet::from([MemberId::from("m-2")]),
        initial_delay: Some(coordinator::InitialDelay {
            delay_ms: 3_000,
            remaining_ms: 27_000,
        }),
        new_member_added: true,
        join_deadline: Some(TimestampMs(5)),
        sync_deadline: None,
    }
}

fn round_trip(record: &Record) {
    let key = record.encode_key();
    let value = record.encode_value();
    assert_eq!(value.is_empty(), record.is_tombstone());
    assert_eq!(Record::decode(&key, &value).unwrap(), *record);
    assert_eq!(RecordKey::decode(&key).unwrap(), record.key());
}

#[test]
fn every_record_type_round_trips() {
    round_trip(&offset_record(Some(OffsetCommitValue {
        offset: Offset(123),
        leader_epoch: LeaderEpoch(4),
        metadata: "some metadata".into(),
        commit_timestamp: TimestampMs(99),
        expire_timestamp: Some(TimestampMs(1_000)),
    })));
    round_trip(&offset_record(Some(OffsetCommitValue {
        offset: Offset(-1),
        leader_epoch: LeaderEpoch::NONE,
        metadata: String::new(),
        commit_timestamp: TimestampMs(0),
        expire_timestamp: None,
    })));
    round_trip(&offset_record(None));
    round_trip(&Record::GroupMetadata {
        group_id: "g".into(),
        value: Some(Box::new(full_group())),
    });
    round_trip(&Record::GroupMetadata {
        group_id: "".into(),
        value: Some(Box::new(ClassicGroup::new(TimestampMs(3)))),
    });
    round_trip(&Record::GroupMetadata {
        group_id: "g".into(),
        value: None,
    });
}

#[test]
fn keys_are_tagged_and_values_versioned() {
    let r = offset_record(None);
    assert_eq!(&r.encode_key()[..2], &[0, 1]);
    let g = Record::GroupMetadata {
        group_id: "g".into(),
        value: Some(Box::new(ClassicGroup::new(TimestampMs(0)))),
    };
    assert_eq!(&g.encode_key()[..2], &[0, 2]);
    assert_eq!(&g.encode_value()[..2], &[0, 0]);
}

#[test]
fn unknown_types_versions_and_trailing_bytes_are_typed_errors() {
    let g = Record::GroupMetadata {
        group_id: "g".into(),
        value: Some(Box::new(full_group())),
    };
    let key = g.encode_key();
    let value = g.encode_value();
    let mut bad_type = key.clone();
    bad_type[1] = 99;
    assert_eq!(
        Record::decode(&bad_type, &value),
        Err(DecodeError::UnknownRecordType(99))
    );
    let mut bad_version = value.clone();
    bad_version[1] = 1;
    assert!(matches!(
        Record::decode(&key, &bad_version),
        Err(DecodeError::UnsupportedVersion { .. })
    ));
    let mut trailing = value.clone();
    trailing.push(0);
    assert_eq!(
        Record::decode(&key, &trailing),
        Err(DecodeError::TrailingBytes(1))
    );
    // Every strict prefix of a valid value is an error, never a panic.
    for cut in 1..value.len() {
        assert!(Record::decode(&key, &value[..cut]).is_err(), "prefix {cut}");
    }
    for cut in 0..key.len() {
        assert!(
            Record::decode(&key[..cut], &value).is_err(),
            "key prefix {cut}"
        );
    }
}

#[test]
fn a_huge_count_is_rejected_without_allocating() {
    let key = Record::GroupMetadata {
        group_id: "g".into(),
        value: None,
    }
    .encode_key();
    let mut value = Record::GroupMetadata {
        group_id: "g".into(),
        value: Some(Box::new(ClassicGroup::new(TimestampMs(0)))),
    }
    .encode_value();
    // The member count is the 4 bytes before the two trailing empty counts.
    let at = value.len() - 12;
    value[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(
        Record::decode(&key, &value),
        Err(DecodeError::Truncated { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(key in proptest::collection::vec(any::<u8>(), 0..64),
                                value in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = Record::decode(&key, &value);
    }

    #[test]
    fn mutated_valid_records_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let g = Record::GroupMetadata { group_id: "g".into(), value: Some(Box::new(full_group())) };
        let key = g.encode_key();
        let mut value = g.encode_value();
        for (at, byte) in flips {
            let i = at % value.len();
            value[i] = byte;
        }
        if let Ok(decoded) = Record::decode(&key, &value) {
            // Whatever decodes re-encodes to the same bytes: the encoding is canonical.
            prop_assert_eq!(decoded.encode_value(), value);
        }
    }

    #[test]
    fn offset_values_round_trip(offset in any::<i64>(), epoch in any::<i32>(), metadata in ".{0,40}",
                                commit in any::<i64>(), expire in proptest::option::of(any::<i64>()),
                                partition in any::<i32>(), topic in "[a-z]{0,20}") {
        let r = Record::OffsetCommit {
            group_id: "g".into(),
            topic: topic.as_str().into(),
            partition: PartitionIndex(partition),
            value: Some(OffsetCommitValue {
                offset: Offset(offset),
                leader_epoch: LeaderEpoch(epoch),
                metadata,
                commit_timestamp: TimestampMs(commit),
                expire_timestamp: expire.map(TimestampMs),
            }),
        };
        prop_assert_eq!(Record::decode(&r.encode_key(), &r.encode_value()).unwrap(), r);
    }
}
