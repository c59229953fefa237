//! Golden bytes of the coordinator's records (snapshot records under namespace 1 and, later,
//! the compacted log): every record type and its tombstone encode to the bytes pinned here and
//! decode back; a newer value version and an unknown record type are refused.
//!
//! A failure means a record's layout changed while logs and snapshots on disk hold the old
//! bytes. Do not update the hex: give the record a new value version with a reader for the old
//! one (docs/decisions/0109-replicated-formats.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use bytes::Bytes;
use coordinator::{
    ClassicGroup, DecodeError, Generation, GroupState, InitialDelay, LeaderEpoch, Member, MemberId,
    Offset, OffsetCommitValue, PartitionIndex, PendingMember, PendingOffset, ProducerEpoch,
    ProducerId, Record, TimestampMs, TransactionValue, TxnOffsetsValue, TxnState,
};

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

fn offset(value: Option<OffsetCommitValue>) -> Record {
    Record::OffsetCommit {
        group_id: "group-a".into(),
        topic: "orders".into(),
        partition: PartitionIndex(3),
        value,
    }
}

fn group() -> ClassicGroup {
    let mut members = BTreeMap::new();
    members.insert(
        MemberId::from("member-1"),
        Member {
            group_instance_id: Some("instance-1".into()),
            client_id: "client-a".into(),
            client_host: "/10.0.0.5".into(),
            rebalance_timeout_ms: 300_000,
            session_timeout_ms: 45_000,
            protocol_type: "consumer".into(),
            protocols: vec![
                ("range".into(), Bytes::from_static(b"\x00\x01r")),
                ("sticky".into(), Bytes::from_static(b"\x00\x01s")),
            ],
            assignment: Bytes::from_static(b"\x00\x01a"),
            awaiting_join: true,
            awaiting_sync: false,
            is_new: true,
        },
    );
    members.insert(
        MemberId::from("member-2"),
        Member {
            group_instance_id: None,
            client_id: "client-b".into(),
            client_host: "/10.0.0.6".into(),
            rebalance_timeout_ms: 60_000,
            session_timeout_ms: 10_000,
            protocol_type: "consumer".into(),
            protocols: vec![("range".into(), Bytes::from_static(b"\x00\x02"))],
            assignment: Bytes::new(),
            awaiting_join: false,
            awaiting_sync: true,
            is_new: false,
        },
    );
    ClassicGroup {
        state: GroupState::CompletingRebalance,
        state_timestamp: TimestampMs(1_700_000_000_100),
        generation: Generation(12),
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        leader: Some("member-1".into()),
        members,
        pending_members: BTreeMap::from([(
            MemberId::from("pending-1"),
            PendingMember {
                session_timeout_ms: 30_000,
            },
        )]),
        pending_sync: BTreeSet::from([MemberId::from("member-2")]),
        initial_delay: Some(InitialDelay {
            delay_ms: 3_000,
            remaining_ms: 1_500,
        }),
        new_member_added: true,
        join_deadline: Some(TimestampMs(1_700_000_030_000)),
        sync_deadline: Some(TimestampMs(1_700_000_060_000)),
    }
}

fn group_record(value: Option<ClassicGroup>) -> Record {
    Record::GroupMetadata {
        group_id: "group-a".into(),
        value: value.map(Box::new),
    }
}

/// (name, record, pinned key hex, pinned value hex).
fn samples() -> Vec<(&'static str, Record, &'static str, &'static str)> {
    vec![
        (
            "offset commit",
            offset(Some(OffsetCommitValue {
                offset: Offset(123_456),
                leader_epoch: LeaderEpoch(7),
                metadata: "meta".into(),
                commit_timestamp: TimestampMs(1_700_000_000_200),
                expire_timestamp: Some(TimestampMs(1_700_086_400_200)),
            })),
            "00010000000767726f75702d61000000066f726465727300000003",
            "0000000000000001e24000000007000000046d6574610000018bcfe568c8010000018bd50bc4c8",
        ),
        (
            "offset commit, no expiry",
            offset(Some(OffsetCommitValue {
                offset: Offset(-1),
                leader_epoch: LeaderEpoch(-1),
                metadata: String::new(),
                commit_timestamp: TimestampMs(5),
                expire_timestamp: None,
            })),
            "00010000000767726f75702d61000000066f726465727300000003",
            "0000ffffffffffffffffffffffff00000000000000000000000500",
        ),
        ("offset commit tombstone", offset(None), "00010000000767726f75702d61000000066f726465727300000003", ""),
        ("group metadata", group_record(Some(group())), "00020000000767726f75702d61", "0000020000018bcfe568640000000c0100000008636f6e73756d6572010000000572616e676501000000086d656d6265722d310100000bb8000005dc01010000018bcfe5dd30010000018bcfe6526000000002000000086d656d6265722d31010000000a696e7374616e63652d3100000008636c69656e742d61000000092f31302e302e302e35000493e00000afc800000008636f6e73756d6572000000020000000572616e67650000000300017200000006737469636b79000000030001730000000300016105000000086d656d6265722d320000000008636c69656e742d62000000092f31302e302e302e360000ea600000271000000008636f6e73756d6572000000010000000572616e67650000000200020000000002000000010000000970656e64696e672d310000753000000001000000086d656d6265722d32"),
        (
            "group metadata, new empty group",
            group_record(Some(ClassicGroup::new(TimestampMs(42)))),
            "00020000000767726f75702d61",
            "000000000000000000002a0000000000000000000000000000000000000000000000",
        ),
        ("group metadata tombstone", group_record(None), "00020000000767726f75702d61", ""),
        (
            "transaction",
            transaction(Some(transaction_value())),
            "00080000000574786e2d61",
            "00000000000000000fa00003ffffffffffffffff00020000ea600100000002000000066f7264657273000000020000000000000002000000087061796d656e74730000000100000001000000010000000767726f75702d61010000018bcfe568000000018bcfe56864",
        ),
        ("transaction tombstone", transaction(None), "00080000000574786e2d61", ""),
        (
            "pending transactional offsets",
            txn_offsets(Some(txn_offsets_value())),
            "00090000000767726f75702d610000000000000fa0",
            "0000000300000002000000066f7264657273000000000000000000000011ffffffff000000016d0000018bcfe568320000000000066f726465727300000002000000000000000900000004000000000000018bcfe5683c0001",
        ),
        (
            "pending transactional offsets tombstone",
            txn_offsets(None),
            "00090000000767726f75702d610000000000000fa0",
            "",
        ),
        (
            "group config overrides",
            Record::GroupConfig {
                group_id: "group-a".into(),
                value: Some(BTreeMap::from([
                    ("consumer.heartbeat.interval.ms".to_owned(), "6000".to_owned()),
                    ("consumer.session.timeout.ms".to_owned(), "50000".to_owned()),
                ])),
            },
            "000a0000000767726f75702d61",
            "0000000000020000001e636f6e73756d65722e6865617274626561742e696e74657276616c2e6d7300000004363030300000001b636f6e73756d65722e73657373696f6e2e74696d656f75742e6d73000000053530303030",
        ),
        (
            "group config tombstone",
            Record::GroupConfig {
                group_id: "group-a".into(),
                value: None,
            },
            "000a0000000767726f75702d61",
            "",
        ),
    ]
}

fn transaction(value: Option<TransactionValue>) -> Record {
    Record::Transaction {
        transactional_id: "txn-a".into(),
        value: value.map(Box::new),
    }
}

fn transaction_value() -> TransactionValue {
    TransactionValue {
        producer_id: ProducerId(4_000),
        producer_epoch: ProducerEpoch(3),
        last_producer_id: ProducerId(-1),
        last_producer_epoch: ProducerEpoch(2),
        timeout_ms: 60_000,
        state: TxnState::Ongoing,
        partitions: BTreeMap::from([
            (
                "orders".into(),
                BTreeSet::from([PartitionIndex(0), PartitionIndex(2)]),
            ),
            ("payments".into(), BTreeSet::from([PartitionIndex(1)])),
        ]),
        groups: BTreeSet::from(["group-a".into()]),
        start_timestamp: Some(TimestampMs(1_700_000_000_000)),
        last_update_timestamp: TimestampMs(1_700_000_000_100),
    }
}

fn txn_offsets(value: Option<TxnOffsetsValue>) -> Record {
    Record::TxnOffsets {
        group_id: "group-a".into(),
        producer_id: ProducerId(4_000),
        value: value.map(Box::new),
    }
}

fn txn_offsets_value() -> TxnOffsetsValue {
    TxnOffsetsValue {
        producer_epoch: ProducerEpoch(3),
        offsets: BTreeMap::from([
            (
                ("orders".into(), PartitionIndex(0)),
                PendingOffset {
                    value: OffsetCommitValue {
                        offset: Offset(17),
                        leader_epoch: LeaderEpoch(-1),
                        metadata: "m".into(),
                        commit_timestamp: TimestampMs(1_700_000_000_050),
                        expire_timestamp: None,
                    },
                    superseded: false,
                },
            ),
            (
                ("orders".into(), PartitionIndex(2)),
                PendingOffset {
                    value: OffsetCommitValue {
                        offset: Offset(9),
                        leader_epoch: LeaderEpoch(4),
                        metadata: String::new(),
                        commit_timestamp: TimestampMs(1_700_000_000_060),
                        expire_timestamp: None,
                    },
                    superseded: true,
                },
            ),
        ]),
    }
}

#[test]
fn every_record_encodes_to_its_pinned_bytes() {
    let mut changed = Vec::new();
    for (name, record, key, value) in samples() {
        let (k, v) = (hex(&record.encode_key()), hex(&record.encode_value()));
        if k != key || v != value {
            changed.push(format!("{name}: key {k} value {v}"));
        }
    }
    assert!(
        changed.is_empty(),
        "record bytes changed; add a value version rather than editing the pins:\n{}",
        changed.join("\n")
    );
}

#[test]
fn pinned_bytes_decode_to_the_same_records() {
    for (name, record, key, value) in samples() {
        let decoded = Record::decode(&unhex(key), &unhex(value)).unwrap();
        assert_eq!(decoded, record, "{name}");
    }
}

#[test]
fn a_newer_value_version_and_an_unknown_record_type_are_refused() {
    for (name, _, key, value) in samples() {
        if value.is_empty() {
            continue; // a tombstone has no version
        }
        let mut newer = unhex(value);
        newer[1] += 1;
        assert!(
            matches!(
                Record::decode(&unhex(key), &newer),
                Err(DecodeError::UnsupportedVersion { version: 1, .. })
            ),
            "{name}"
        );
        let mut unknown = unhex(key);
        unknown[0..2].copy_from_slice(&0x7777u16.to_be_bytes());
        assert_eq!(
            Record::decode(&unknown, &unhex(value)),
            Err(DecodeError::UnknownRecordType(0x7777)),
            "{name}"
        );
    }
}
