//! SyncGroup, Heartbeat, LeaveGroup and session scenarios.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::*;

fn sync_reply(out: &Outcome) -> Option<SyncResponse> {
    match &out.reply {
        Reply::Sync(r) => Some(r.clone()),
        Reply::Parked { .. } => None,
        other => panic!("expected a sync reply, got {other:?}"),
    }
}

/// A group in CompletingRebalance: (leader, follower, generation).
fn completing(h: &mut Harness) -> (String, String, i32) {
    let a = h.join_new(JoinReq::new(""));
    let b = h.join_new(JoinReq::new(""));
    h.finish_initial_delay();
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    let leader = h.group().leader.clone().unwrap().as_str().to_owned();
    let follower = if leader == a { b } else { a };
    (leader, follower, h.generation())
}

#[test]
fn sync_with_empty_group_id_returns_invalid_group_id() {
    let mut h = Harness::new();
    let out = h.sync_full("", "m", None, 1, None, None, &[]);
    assert_eq!(
        sync_reply(&out).unwrap().error,
        Some(ErrorKind::InvalidGroupId)
    );
}

#[test]
fn sync_to_unknown_group_returns_unknown_member_id() {
    let mut h = Harness::new();
    let out = h.sync("m", 1, &[]);
    assert_eq!(
        sync_reply(&out).unwrap().error,
        Some(ErrorKind::UnknownMemberId)
    );
}

#[test]
fn sync_from_unknown_member_returns_unknown_member_id() {
    let mut h = Harness::new();
    let (_, _, generation) = completing(&mut h);
    let out = h.sync("stranger", generation, &[]);
    assert_eq!(
        sync_reply(&out).unwrap().error,
        Some(ErrorKind::UnknownMemberId)
    );
}

#[test]
fn sync_with_stale_generation_returns_illegal_generation() {
    let mut h = Harness::new();
    let (leader, _, generation) = completing(&mut h);
    let out = h.sync(&leader, generation - 1, &[]);
    assert_eq!(
        sync_reply(&out).unwrap().error,
        Some(ErrorKind::IllegalGeneration)
    );
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
}

#[test]
fn sync_v5_with_another_protocol_name_returns_inconsistent_group_protocol() {
    let mut h = Harness::new();
    let (leader, _, generation) = completing(&mut h);
    let out = h.sync_full(
        GROUP,
        &leader,
        None,
        generation,
        Some("consumer"),
        Some("roundrobin"),
        &[],
    );
    assert_eq!(
        sync_reply(&out).unwrap().error,
        Some(ErrorKind::InconsistentGroupProtocol)
    );
    let out = h.sync_full(GROUP, &leader, None, generation, Some("connect"), None, &[]);
    assert_eq!(
        sync_reply(&out).unwrap().error,
        Some(ErrorKind::InconsistentGroupProtocol)
    );
}

#[test]
fn sync_during_preparing_rebalance_returns_rebalance_in_progress() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(2);
    h.join(JoinReq::new(&members[0]).protocols(&[("range", subscription(&["new"]))]));
    let out = h.sync(&members[1], generation, &[]);
    assert_eq!(
        sync_reply(&out).unwrap().error,
        Some(ErrorKind::RebalanceInProgress)
    );
}

#[test]
fn follower_sync_parks_until_the_leader_sends_the_assignment() {
    let mut h = Harness::new();
    let (leader, follower, generation) = completing(&mut h);
    let out = h.sync(&follower, generation, &[]);
    assert!(matches!(
        out.reply,
        Reply::Parked {
            kind: ParkedKind::Sync,
            ..
        }
    ));
    assert!(h.group().members[&MemberId::from(follower.as_str())].awaiting_sync);
    let out = h.sync(&leader, generation, &[(&leader, b"L"), (&follower, b"F")]);
    let own = sync_reply(&out).expect("the leader is answered at once");
    assert_eq!(own.assignment.as_ref(), b"L");
    assert_eq!(own.protocol_name.as_deref(), Some("range"));
    assert_eq!(out.member_replies.len(), 1);
    assert_eq!(out.member_replies[0].member_id.as_str(), follower);
    let Reply::Sync(r) = &out.member_replies[0].reply else {
        panic!()
    };
    assert_eq!(r.assignment.as_ref(), b"F");
    assert_eq!(h.group_state(), GroupState::Stable);
}

#[test]
fn members_missing_from_the_leaders_assignment_get_an_empty_one() {
    let mut h = Harness::new();
    let (leader, follower, generation) = completing(&mut h);
    h.sync(&follower, generation, &[]);
    h.sync(
        &leader,
        generation,
        &[(&leader, b"L"), ("not-a-member", b"X")],
    );
    assert!(h.last_sync_response(&follower).assignment.is_empty());
    assert!(!h
        .group()
        .members
        .contains_key(&MemberId::from("not-a-member")));
}

#[test]
fn sync_in_a_stable_group_returns_the_stored_assignment() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(2);
    let out = h.sync(&members[0], generation, &[]);
    let r = sync_reply(&out).unwrap();
    assert_eq!(r.error, None);
    assert_eq!(
        r.assignment.as_ref(),
        format!("assignment-of-{}", members[0]).as_bytes()
    );
}

#[test]
fn oversized_assignment_from_the_leader_returns_invalid_request() {
    let mut h = Harness::with_config(Config {
        member_assignment_max_bytes: 4,
        ..Config::default()
    });
    let (leader, _, generation) = completing(&mut h);
    let out = h.sync(&leader, generation, &[(&leader, b"12345")]);
    assert_eq!(
        sync_reply(&out).unwrap().error,
        Some(ErrorKind::InvalidRequest)
    );
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
}

#[test]
fn members_that_do_not_sync_in_time_are_removed_and_the_group_rebalances() {
    let mut h = Harness::new();
    let (leader, follower, generation) = completing(&mut h);
    // The leader keeps heartbeating but nobody syncs.
    for _ in 0..6 {
        h.advance(5_000);
        let _ = h.heartbeat(&leader, generation);
        let _ = h.heartbeat(&follower, generation);
    }
    assert!(h.group().members.is_empty(), "both owed a SyncGroup");
    assert_eq!(h.group_state(), GroupState::Empty);
}

#[test]
fn a_new_rebalance_answers_parked_syncs_with_rebalance_in_progress() {
    let mut h = Harness::new();
    let (_leader, follower, generation) = completing(&mut h);
    h.sync(&follower, generation, &[]);
    h.join(JoinReq::new(&follower).protocols(&[("range", subscription(&["changed"]))]));
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
    assert_eq!(
        h.last_sync_response(&follower).error,
        Some(ErrorKind::RebalanceInProgress)
    );
}

#[test]
fn heartbeat_with_empty_group_id_returns_invalid_group_id() {
    let mut h = Harness::new();
    assert_eq!(
        h.heartbeat_full("", "m", None, 0),
        Err(ErrorKind::InvalidGroupId)
    );
}

#[test]
fn heartbeat_to_unknown_group_returns_unknown_member_id() {
    let mut h = Harness::new();
    assert_eq!(h.heartbeat("m", 0), Err(ErrorKind::UnknownMemberId));
}

#[test]
fn heartbeat_with_stale_generation_returns_illegal_generation() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(1);
    assert_eq!(
        h.heartbeat(&members[0], generation + 1),
        Err(ErrorKind::IllegalGeneration)
    );
}

#[test]
fn heartbeat_during_preparing_rebalance_returns_rebalance_in_progress() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(2);
    h.join(JoinReq::new(&members[0]).protocols(&[("range", subscription(&["new"]))]));
    assert_eq!(
        h.heartbeat(&members[1], generation),
        Err(ErrorKind::RebalanceInProgress)
    );
}

#[test]
fn heartbeat_in_a_stable_group_succeeds_writes_nothing_and_rearms_the_session() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(1);
    let records = h.records.len();
    h.advance(9_000);
    assert_eq!(h.heartbeat(&members[0], generation), Ok(()));
    assert_eq!(h.records.len(), records, "heartbeats never write");
    let key = TimerKey::MemberHeartbeat {
        group_id: GROUP.into(),
        member_id: members[0].as_str().into(),
    };
    assert_eq!(h.timers[&key], TimestampMs(h.now + 10_000));
    h.advance(9_000);
    assert_eq!(h.group().members.len(), 1, "the session was extended");
}

#[test]
fn a_lapsed_session_removes_the_member_and_rebalances() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(2);
    for _ in 0..2 {
        h.advance(4_000);
        assert_eq!(h.heartbeat(&members[0], generation), Ok(()));
    }
    h.advance(4_000);
    // members[1] was silent for 12 s > its 10 s session.
    assert!(!h
        .group()
        .members
        .contains_key(&MemberId::from(members[1].as_str())));
    assert_eq!(
        h.heartbeat(&members[0], generation),
        Err(ErrorKind::RebalanceInProgress)
    );
}

#[test]
fn leave_of_the_last_member_empties_the_group_and_bumps_the_generation() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(1);
    let r = h.leave(&[(&members[0], None)]);
    assert_eq!(r.error, None);
    assert_eq!(r.members[0].error, None);
    assert_eq!(h.group_state(), GroupState::Empty);
    assert_eq!(h.generation(), generation + 1);
    assert_eq!(h.group().protocol_name, None);
}

#[test]
fn leave_triggers_a_rebalance_of_the_remaining_members() {
    let mut h = Harness::new();
    let (members, _) = h.stable_group(2);
    h.leave(&[(&members[0], None)]);
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
}

#[test]
fn batched_leave_reports_errors_per_member() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").instance("i-1"));
    h.finish_initial_delay();
    let static_id = h.group().members.keys().next().unwrap().as_str().to_owned();
    let r = h.leave(&[
        ("ghost", None),
        ("wrong-id", Some("i-1")),
        (&static_id, Some("i-1")),
    ]);
    assert_eq!(r.members[0].error, Some(ErrorKind::UnknownMemberId));
    assert_eq!(r.members[1].error, Some(ErrorKind::FencedInstanceId));
    assert_eq!(r.members[2].error, None);
    assert_eq!(h.group_state(), GroupState::Empty);
}

#[test]
fn an_admin_removes_a_static_member_by_instance_id() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").instance("i-1"));
    h.finish_initial_delay();
    let r = h.leave(&[("", Some("i-1")), ("", Some("i-unknown"))]);
    assert_eq!(r.members[0].error, None);
    assert_eq!(r.members[1].error, Some(ErrorKind::UnknownMemberId));
    assert!(h.group().members.is_empty());
}

#[test]
fn leave_of_unknown_group_fails_every_member_with_unknown_member_id() {
    let mut h = Harness::new();
    let r = h.leave(&[("a", None), ("b", None)]);
    assert_eq!(r.error, None);
    assert!(r
        .members
        .iter()
        .all(|m| m.error == Some(ErrorKind::UnknownMemberId)));
    assert_eq!(r.single_error(), Some(ErrorKind::UnknownMemberId));
}

#[test]
fn leave_of_a_pending_member_removes_it() {
    let mut h = Harness::new();
    let out = h.join(JoinReq::new(""));
    let Reply::Join(j) = &out.reply else { panic!() };
    let r = h.leave(&[(j.member_id.as_str(), None)]);
    assert_eq!(r.members[0].error, None);
    assert!(h.group().pending_members.is_empty());
}

#[test]
fn a_member_leaving_while_parked_in_a_join_gets_unknown_member_id() {
    let mut h = Harness::new();
    let (members, _) = h.stable_group(2);
    h.join(JoinReq::new(&members[0]).protocols(&[("range", subscription(&["new"]))]));
    h.leave(&[(&members[0], None)]);
    assert_eq!(
        h.last_join_response(&members[0]).error,
        Some(ErrorKind::UnknownMemberId)
    );
}

#[test]
fn leave_with_empty_group_id_returns_invalid_group_id() {
    let mut h = Harness::new();
    let out = h.write(WriteCommand::LeaveGroup(LeaveGroup {
        api_version: ApiVersion(0),
        now_ms: h.now_ms(),
        group_id: "".into(),
        members: vec![LeavingMember {
            member_id: "m".into(),
            group_instance_id: None,
            reason: None,
        }],
    }));
    let Reply::Leave(r) = out.reply else { panic!() };
    assert_eq!(r.single_error(), Some(ErrorKind::InvalidGroupId));
}

#[test]
fn a_stale_join_timer_firing_is_a_no_op() {
    let mut h = Harness::new();
    h.join_new(JoinReq::new(""));
    let key = TimerKey::JoinPhase {
        group_id: GROUP.into(),
        generation: Generation(0),
    };
    // Fired early (a later command moved the deadline, or the leader's clock lags its timer):
    // nothing changes, and the timer is armed again at the recorded deadline.
    let out = h.write(WriteCommand::TimerFired {
        key: key.clone(),
        now_ms: h.now_ms(),
    });
    assert!(out.records.is_empty());
    assert_eq!(
        out.timers,
        vec![TimerOp::Set {
            key: key.clone(),
            at_ms: h.group().join_deadline.unwrap()
        }]
    );
    // A key from another generation: nothing happens either.
    h.finish_initial_delay();
    let out = h.write(WriteCommand::TimerFired {
        key,
        now_ms: TimestampMs(h.now + 1_000_000),
    });
    assert!(out.records.is_empty());
    let out = h.write(WriteCommand::TimerFired {
        key: TimerKey::MemberHeartbeat {
            group_id: "nope".into(),
            member_id: "m".into(),
        },
        now_ms: h.now_ms(),
    });
    assert!(out.records.is_empty());
}

#[test]
fn a_new_leader_rearms_every_timer_the_state_implies() {
    let mut h = Harness::new();
    let (members, _) = h.stable_group(2);
    h.join(JoinReq::new(&members[0]).protocols(&[("range", subscription(&["x"]))]));
    h.join(JoinReq::new("").group("other"));
    // A fresh replica rebuilt from the records takes over at a later time.
    let replica = replay_all(&h.config, &h.records);
    let later = TimestampMs(h.now + 7);
    let timers = replica.timers_to_arm(later);
    let keys: Vec<&TimerKey> = timers.iter().map(TimerOp::key).collect();
    assert!(keys.iter().any(|k| matches!(k, TimerKey::JoinPhase { .. })));
    assert_eq!(
        keys.iter()
            .filter(|k| matches!(k, TimerKey::MemberHeartbeat { .. }))
            .count(),
        3
    );
    assert!(keys.contains(&&TimerKey::OffsetsRetention));
    let session = timers.iter().find_map(|t| match t {
        TimerOp::Set {
            key: TimerKey::MemberHeartbeat { member_id, .. },
            at_ms,
        } if member_id.as_str() == members[1] => Some(*at_ms),
        _ => None,
    });
    assert_eq!(
        session,
        Some(TimestampMs(later.0 + 10_000)),
        "sessions restart from now"
    );
    let join = timers.iter().find_map(|t| match t {
        TimerOp::Set {
            key: TimerKey::JoinPhase { .. },
            at_ms,
        } => Some(*at_ms),
        _ => None,
    });
    assert_eq!(join, h.group().join_deadline, "recorded deadlines are kept");
}
