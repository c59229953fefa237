//! Commands and outcomes cross the Raft log and task boundaries in whatever serde format the
//! runtime picks; they must survive a round trip (u128 nonces and byte strings included).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::*;

#[test]
fn write_commands_and_outcomes_round_trip_through_serde_json() {
    let mut h = Harness::new();
    let command = WriteCommand::JoinGroup(JoinGroup {
        api_version: ApiVersion(9),
        now_ms: TimestampMs(1_700_000_000_000),
        nonce: u128::MAX - 7,
        group_id: "g".into(),
        member_id: "".into(),
        group_instance_id: Some("i".into()),
        session_timeout_ms: 45_000,
        rebalance_timeout_ms: 300_000,
        protocol_type: "consumer".into(),
        protocols: vec![JoinProtocol {
            name: "range".into(),
            metadata: subscription(&[TOPIC]),
        }],
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        reason: Some("because".into()),
    });
    let json = serde_json::to_vec(&command).unwrap();
    let back: WriteCommand = serde_json::from_slice(&json).unwrap();
    assert_eq!(back, command);

    let outcome = h.write(command);
    assert!(!outcome.records.is_empty());
    let json = serde_json::to_vec(&outcome).unwrap();
    let back: Outcome = serde_json::from_slice(&json).unwrap();
    assert_eq!(back, outcome);

    let read = ReadCommand::FetchOffsets(FetchOffsets {
        api_version: ApiVersion(8),
        groups: vec![FetchGroup {
            group_id: "g".into(),
            topics: None,
            member_id: None,
            member_epoch: -1,
        }],
        require_stable: true,
    });
    let back: ReadCommand = serde_json::from_slice(&serde_json::to_vec(&read).unwrap()).unwrap();
    assert_eq!(back, read);
}

#[test]
fn single_group_commands_name_their_group_for_shard_routing() {
    let join = WriteCommand::TimerFired {
        key: TimerKey::SyncPhase {
            group_id: "g".into(),
            generation: Generation(1),
        },
        now_ms: TimestampMs(0),
    };
    assert_eq!(join.group_id(), Some(&GroupId::from("g")));
    let delete = |ids: &[&str]| {
        WriteCommand::DeleteGroups(DeleteGroups {
            api_version: ApiVersion(2),
            now_ms: TimestampMs(0),
            group_ids: ids.iter().map(|g| GroupId::from(*g)).collect(),
        })
    };
    assert_eq!(delete(&["a"]).group_id(), Some(&GroupId::from("a")));
    assert_eq!(delete(&["a", "b"]).group_id(), None);
    assert_eq!(
        WriteCommand::ExpireOffsets {
            now_ms: TimestampMs(0)
        }
        .group_id(),
        None
    );
}
