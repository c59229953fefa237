//! Per-group config overrides (the GROUP config resource): what a consumer-protocol member's
//! heartbeat answer and session timer take from them, their replication (records, compaction,
//! snapshots, followers), and their deletion with the group.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::group_config::{
    AlterGroupConfigs, GroupConfigError, GroupConfigOp, CONSUMER_HEARTBEAT_INTERVAL_MS,
    CONSUMER_SESSION_TIMEOUT_MS,
};
use coordinator::*;
use harness::consumer::*;
use harness::*;

fn set(pairs: &[(&str, &str)]) -> AlterGroupConfigs {
    AlterGroupConfigs {
        group_id: GROUP.into(),
        ops: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), GroupConfigOp::Set((*v).to_owned())))
            .collect(),
        replace: false,
    }
}

/// Bounds wide enough to override both values (Kafka's defaults pin the session at 45–60 s
/// and the interval at 5–15 s).
fn config() -> Config {
    Config {
        consumer_session_timeout_min_ms: 6_000,
        consumer_heartbeat_interval_min_ms: 1_000,
        ..Config::default()
    }
}

#[test]
fn overrides_reach_the_heartbeat_answer_and_the_session_timer() {
    let mut h = Harness::with_config(config());
    h.topics_changed(&[("orders", 1, 2)], &[]);
    h.add_follower_from_snapshot();
    let r = h.cg_heartbeat(&Hb::join("a", &["orders"]));
    assert_eq!(r.heartbeat_interval_ms, 5_000);

    let altered = h
        .alter_group_configs(&set(&[
            (CONSUMER_HEARTBEAT_INTERVAL_MS, "2000"),
            (CONSUMER_SESSION_TIMEOUT_MS, "8000"),
        ]))
        .unwrap();
    assert_eq!(altered.len(), 2);
    let epoch = r.member_epoch;
    let r = h.cg_heartbeat(&Hb::beat(
        "a",
        epoch,
        &r.assignment.clone().unwrap_or_default(),
    ));
    assert_eq!(r.error, None);
    assert_eq!(r.heartbeat_interval_ms, 2_000);
    // The session is the override's 8 s: silent for 9 s, the member is fenced.
    h.advance(9_000);
    assert!(
        h.cg(GROUP).members.is_empty(),
        "fenced after the overridden session"
    );

    // A refused change leaves the overrides as they were.
    let refused = h.alter_group_configs(&set(&[(CONSUMER_HEARTBEAT_INTERVAL_MS, "8000")]));
    assert_eq!(
        refused,
        Err(GroupConfigError::InvalidConfig(
            "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"
                .into()
        ))
    );
    assert_eq!(
        h.state
            .group_configs(&GROUP.into())
            .and_then(|c| c.get(CONSUMER_SESSION_TIMEOUT_MS))
            .map(String::as_str),
        Some("8000")
    );

    // Deleting a key returns the member to the broker's value.
    let delete = AlterGroupConfigs {
        group_id: GROUP.into(),
        ops: vec![(CONSUMER_HEARTBEAT_INTERVAL_MS.into(), GroupConfigOp::Delete)],
        replace: false,
    };
    h.alter_group_configs(&delete).unwrap();
    let r = h.cg_heartbeat(&Hb::join("b", &["orders"]));
    assert_eq!(r.heartbeat_interval_ms, 5_000);
}

#[test]
fn overrides_are_deleted_with_the_group_and_survive_a_snapshot() {
    let mut h = Harness::with_config(config());
    h.topics_changed(&[("orders", 1, 2)], &[]);
    // Overrides may be set before the group exists.
    h.alter_group_configs(&set(&[(CONSUMER_HEARTBEAT_INTERVAL_MS, "3000")]))
        .unwrap();
    h.add_follower_from_snapshot();
    let r = h.cg_heartbeat(&Hb::join("a", &["orders"]));
    assert_eq!(r.heartbeat_interval_ms, 3_000);
    let leave = Hb {
        epoch: -1,
        ..Hb::beat("a", r.member_epoch, &Assignment::new())
    };
    h.cg_heartbeat(&leave);
    assert!(h.cg(GROUP).members.is_empty());
    let out = h.write(WriteCommand::DeleteGroups(DeleteGroups {
        api_version: ApiVersion(2),
        now_ms: h.now_ms(),
        group_ids: vec![GROUP.into()],
    }));
    assert_eq!(out.reply, Reply::DeleteGroups(vec![(GROUP.into(), Ok(()))]));
    assert!(out
        .records
        .iter()
        .any(|r| matches!(r, Record::GroupConfig { value: None, .. })));
    assert_eq!(h.state.group_configs(&GROUP.into()), None);
    // A new group of that name starts from the broker's values.
    let r = h.cg_heartbeat(&Hb::join("b", &["orders"]));
    assert_eq!(r.heartbeat_interval_ms, 5_000);
}
