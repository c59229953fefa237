//! JoinGroup scenarios, one rule of Kafka's classic protocol per test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::*;

fn join_error(out: &Outcome) -> Option<ErrorKind> {
    match &out.reply {
        Reply::Join(r) => r.error,
        Reply::Parked { .. } => None,
        other => panic!("expected a join reply, got {other:?}"),
    }
}

#[test]
fn join_with_empty_group_id_returns_invalid_group_id() {
    let mut h = Harness::new();
    let out = h.join(JoinReq::new("").group(""));
    assert_eq!(join_error(&out), Some(ErrorKind::InvalidGroupId));
    assert!(out.records.is_empty());
}

#[test]
fn join_with_too_long_group_id_returns_invalid_group_id() {
    let mut h = Harness::new();
    let long = "g".repeat(h.config.group_id_max_bytes + 1);
    let out = h.join(JoinReq::new("").group(&long));
    assert_eq!(join_error(&out), Some(ErrorKind::InvalidGroupId));
}

#[test]
fn join_with_session_timeout_outside_bounds_returns_invalid_session_timeout() {
    let mut h = Harness::new();
    let below = h.join(JoinReq::new("").session(5_999));
    assert_eq!(join_error(&below), Some(ErrorKind::InvalidSessionTimeout));
    let above = h.join(JoinReq::new("").session(1_800_001));
    assert_eq!(join_error(&above), Some(ErrorKind::InvalidSessionTimeout));
    let at_bounds = h.join(JoinReq::new("").session(6_000));
    assert_eq!(join_error(&at_bounds), Some(ErrorKind::MemberIdRequired));
}

#[test]
fn join_with_too_many_protocols_returns_invalid_request() {
    let mut h = Harness::new();
    let protocols: Vec<(String, bytes::Bytes)> = (0..=h.config.protocols_max)
        .map(|i| (format!("p{i}"), subscription(&[TOPIC])))
        .collect();
    let refs: Vec<(&str, bytes::Bytes)> = protocols
        .iter()
        .map(|(n, m)| (n.as_str(), m.clone()))
        .collect();
    let out = h.join(JoinReq::new("").protocols(&refs));
    assert_eq!(join_error(&out), Some(ErrorKind::InvalidRequest));
    assert!(out.records.is_empty());
}

#[test]
fn join_with_oversized_metadata_returns_invalid_request() {
    let mut h = Harness::new();
    let big = bytes::Bytes::from(vec![0u8; h.config.member_metadata_max_bytes + 1]);
    let out = h.join(JoinReq::new("").protocols(&[("range", big)]));
    assert_eq!(join_error(&out), Some(ErrorKind::InvalidRequest));
}

#[test]
fn join_v4_with_unknown_member_id_returns_member_id_required() {
    let mut h = Harness::new();
    let out = h.join(JoinReq::new("").version(4));
    let Reply::Join(r) = &out.reply else { panic!() };
    assert_eq!(r.error, Some(ErrorKind::MemberIdRequired));
    assert!(
        r.member_id.as_str().starts_with("client-"),
        "{}",
        r.member_id
    );
    // The pending member is replicated and its session timer armed.
    assert!(h.group().pending_members.contains_key(&r.member_id));
    assert_eq!(h.group_state(), GroupState::Empty);
    assert!(h.timers.contains_key(&TimerKey::MemberHeartbeat {
        group_id: GROUP.into(),
        member_id: r.member_id.clone()
    }));
}

#[test]
fn join_v3_with_unknown_member_id_adds_the_member_and_parks() {
    let mut h = Harness::new();
    let out = h.join(JoinReq::new("").version(3));
    let Reply::Parked {
        member_id, kind, ..
    } = &out.reply
    else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(*kind, ParkedKind::Join);
    assert!(h.group().members.contains_key(member_id));
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
}

#[test]
fn join_with_known_member_id_for_unknown_group_returns_unknown_member_id() {
    let mut h = Harness::new();
    let out = h.join(JoinReq::new("ghost"));
    assert_eq!(join_error(&out), Some(ErrorKind::UnknownMemberId));
    assert!(out.records.is_empty());
}

#[test]
fn join_with_empty_protocol_type_returns_inconsistent_group_protocol() {
    let mut h = Harness::new();
    let out = h.join(JoinReq::new("").protocol_type(""));
    assert_eq!(join_error(&out), Some(ErrorKind::InconsistentGroupProtocol));
    assert!(out.records.is_empty(), "a failed join creates no group");
}

#[test]
fn join_with_no_common_protocol_returns_inconsistent_group_protocol() {
    let mut h = Harness::new();
    h.join_new(JoinReq::new(""));
    let first = h.join(JoinReq::new("").protocols(&[("roundrobin", subscription(&[TOPIC]))]));
    assert_eq!(
        join_error(&first),
        Some(ErrorKind::InconsistentGroupProtocol)
    );
    let other_type = h.join(JoinReq::new("").protocol_type("connect"));
    assert_eq!(
        join_error(&other_type),
        Some(ErrorKind::InconsistentGroupProtocol)
    );
}

#[test]
fn first_join_waits_for_the_initial_rebalance_delay_then_completes() {
    let mut h = Harness::new();
    let a = h.join_new(JoinReq::new(""));
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
    h.advance(2_999);
    assert_eq!(
        h.group_state(),
        GroupState::PreparingRebalance,
        "joins never complete early on the initial rebalance"
    );
    h.advance(1);
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    assert_eq!(h.generation(), 1);
    let r = h.last_join_response(&a);
    assert_eq!(r.error, None);
    assert_eq!(r.generation, Generation(1));
    assert_eq!(r.leader.as_str(), a);
    assert_eq!(r.protocol_name.as_deref(), Some("range"));
    assert_eq!(r.protocol_type.as_deref(), Some("consumer"));
    assert_eq!(r.members.len(), 1, "the leader gets the members' metadata");
    assert_eq!(r.members[0].metadata, subscription(&[TOPIC]));
}

#[test]
fn initial_delay_is_re_armed_per_join_and_capped_by_the_rebalance_timeout() {
    let mut h = Harness::new();
    // Rebalance timeout 7 s: delay 3 s, then at most 4 s more.
    h.join_new(JoinReq::new("").rebalance(7_000));
    h.advance(2_000);
    h.join_new(JoinReq::new("").rebalance(7_000));
    h.advance(1_000); // first delay ends at 3 s: a member was added, extend by min(3 s, 4 s)
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
    h.advance(1_000);
    h.join_new(JoinReq::new("").rebalance(7_000));
    h.advance(2_000); // 6 s: extended again by min(3 s, remaining 1 s)
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
    h.advance(1_000); // 7 s: no time left, the phase completes
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    assert_eq!(h.group().members.len(), 3);
}

#[test]
fn initial_delay_without_new_members_completes_after_one_delay() {
    let mut h = Harness::new();
    h.join_new(JoinReq::new(""));
    h.advance(3_000);
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
}

#[test]
fn join_completes_as_soon_as_all_known_members_rejoin() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(2);
    let out =
        h.join(JoinReq::new(&members[0]).protocols(&[("range", subscription(&[TOPIC, "more"]))]));
    assert!(matches!(out.reply, Reply::Parked { .. }));
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
    let out = h.join(JoinReq::new(&members[1]));
    // The last rejoin completes the phase: its own answer comes back directly.
    let Reply::Join(r) = &out.reply else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(r.generation, Generation(generation + 1));
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    assert_eq!(
        out.member_replies.len(),
        1,
        "the other parked join is released"
    );
}

#[test]
fn join_phase_timeout_removes_dynamic_members_that_did_not_rejoin() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(2);
    h.join(JoinReq::new(&members[1]).protocols(&[("range", subscription(&["x"]))]));
    // members[0] keeps heartbeating but never rejoins.
    for _ in 0..6 {
        h.advance(5_000);
        let _ = h.heartbeat(&members[0], generation);
    }
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    assert!(!h
        .group()
        .members
        .contains_key(&MemberId::from(members[0].as_str())));
    assert_eq!(h.group().members.len(), 1);
    assert_eq!(h.generation(), generation + 1);
}

#[test]
fn leader_that_does_not_rejoin_is_replaced_by_a_member_that_did() {
    let mut h = Harness::new();
    let (_members, _) = h.stable_group(2);
    let leader = h.group().leader.clone().unwrap();
    let follower = h
        .group()
        .members
        .keys()
        .find(|m| **m != leader)
        .unwrap()
        .clone();
    let generation = h.generation();
    h.join(JoinReq::new(follower.as_str()).protocols(&[("range", subscription(&["x"]))]));
    // The leader stays alive (heartbeats) but never rejoins.
    for _ in 0..6 {
        h.advance(5_000);
        let _ = h.heartbeat(leader.as_str(), generation);
    }
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    assert_eq!(h.group().leader.as_ref(), Some(&follower));
    assert_eq!(h.last_join_response(follower.as_str()).members.len(), 1);
}

#[test]
fn join_beyond_group_max_size_returns_group_max_size_reached() {
    let mut h = Harness::with_config(Config {
        group_max_size: 2,
        ..Config::default()
    });
    h.stable_group(2);
    let out = h.join(JoinReq::new("").version(3));
    assert_eq!(join_error(&out), Some(ErrorKind::GroupMaxSizeReached));
    assert_eq!(h.group().members.len(), 2);
}

#[test]
fn join_beyond_the_pending_member_limit_returns_coordinator_not_available() {
    let mut h = Harness::with_config(Config {
        pending_members_max: 2,
        ..Config::default()
    });
    h.join(JoinReq::new(""));
    h.join(JoinReq::new(""));
    let out = h.join(JoinReq::new(""));
    assert_eq!(join_error(&out), Some(ErrorKind::CoordinatorNotAvailable));
    assert_eq!(h.group().pending_members.len(), 2);
}

#[test]
fn pending_member_that_never_rejoins_expires_after_its_session_timeout() {
    let mut h = Harness::new();
    let out = h.join(JoinReq::new("").session(6_000));
    let Reply::Join(r) = &out.reply else { panic!() };
    h.advance(5_999);
    assert!(h.group().pending_members.contains_key(&r.member_id));
    h.advance(1);
    assert!(h.group().pending_members.is_empty());
}

#[test]
fn pending_member_rejoining_with_its_id_is_added() {
    let mut h = Harness::new();
    let member = h.join_new(JoinReq::new(""));
    assert!(h
        .group()
        .members
        .contains_key(&MemberId::from(member.as_str())));
    assert!(h.group().pending_members.is_empty());
}

#[test]
fn new_member_stuck_in_a_long_join_is_dropped_after_the_new_member_timeout() {
    let mut h = Harness::new();
    // A (rebalance timeout 10 min) is Stable; B joins; A never rejoins.
    let a = h.join_new(JoinReq::new("").rebalance(600_000));
    h.advance(3_000);
    let generation = h.generation();
    h.sync(&a, generation, &[(a.as_str(), b"x")]);
    let b = h.join_new(JoinReq::new("").rebalance(600_000));
    for _ in 0..60 {
        h.advance(5_000);
        let _ = h.heartbeat(&a, generation);
    }
    // 5 min passed: B's new-member timeout fired before the 10-min join timeout.
    assert!(!h.group().members.contains_key(&MemberId::from(b.as_str())));
    assert_eq!(
        h.last_join_response(&b).error,
        Some(ErrorKind::UnknownMemberId)
    );
}

#[test]
fn existing_member_of_an_empty_group_gets_unknown_member_id() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(1);
    h.leave(&[(&members[0], None)]);
    assert_eq!(h.group_state(), GroupState::Empty);
    assert_eq!(h.generation(), generation + 1);
    let out = h.join(JoinReq::new(&members[0]));
    assert_eq!(join_error(&out), Some(ErrorKind::UnknownMemberId));
}

#[test]
fn stable_follower_rejoining_unchanged_gets_the_current_generation_without_rebalance() {
    let mut h = Harness::new();
    let (_, generation) = h.stable_group(2);
    let leader = h.group().leader.clone().unwrap();
    let follower = h
        .group()
        .members
        .keys()
        .find(|m| **m != leader)
        .unwrap()
        .clone();
    let out = h.join(JoinReq::new(follower.as_str()));
    let Reply::Join(r) = &out.reply else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(r.generation, Generation(generation));
    assert!(r.members.is_empty());
    assert!(out.records.is_empty());
    assert_eq!(h.group_state(), GroupState::Stable);
}

#[test]
fn stable_leader_rejoining_triggers_a_rebalance() {
    let mut h = Harness::new();
    h.stable_group(2);
    let leader = h.group().leader.clone().unwrap();
    let out = h.join(JoinReq::new(leader.as_str()));
    assert!(matches!(out.reply, Reply::Parked { .. }));
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
}

#[test]
fn completing_rebalance_rejoin_with_same_metadata_returns_the_generation_again() {
    let mut h = Harness::new();
    let a = h.join_new(JoinReq::new(""));
    h.advance(3_000);
    let out = h.join(JoinReq::new(&a));
    let Reply::Join(r) = &out.reply else { panic!() };
    assert_eq!(r.generation, Generation(1));
    assert_eq!(r.members.len(), 1, "the leader gets the members again");
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
}

#[test]
fn protocol_is_selected_by_vote_among_protocols_every_member_supports() {
    let mut h = Harness::new();
    let sub = subscription(&[TOPIC]);
    h.join_new(JoinReq::new("").protocols(&[("roundrobin", sub.clone()), ("range", sub.clone())]));
    h.join_new(JoinReq::new("").protocols(&[
        ("range", sub.clone()),
        ("roundrobin", sub.clone()),
        ("sticky", sub.clone()),
    ]));
    h.join_new(JoinReq::new("").protocols(&[("range", sub.clone()), ("roundrobin", sub.clone())]));
    h.finish_initial_delay();
    assert_eq!(h.group().protocol_name.as_deref(), Some("range"));
}

#[test]
fn static_member_rejoining_a_stable_group_unchanged_replaces_its_id_without_rebalance() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").instance("i-1"));
    h.advance(3_000);
    let old = h.group().members.keys().next().unwrap().clone();
    h.sync(old.as_str(), 1, &[(old.as_str(), b"p0")]);
    assert_eq!(h.group_state(), GroupState::Stable);

    let out = h.join(JoinReq::new("").instance("i-1"));
    let Reply::Join(r) = &out.reply else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(r.error, None);
    assert_ne!(r.member_id, old);
    assert_eq!(r.generation, Generation(1));
    assert_eq!(
        r.leader, old,
        "v<9: the old leader id, so the member does not reassign"
    );
    assert_eq!(h.group_state(), GroupState::Stable, "no rebalance");
    assert_eq!(h.group().members[&r.member_id].assignment.as_ref(), b"p0");
    // The old id is fenced.
    assert_eq!(
        h.heartbeat_full(GROUP, old.as_str(), Some("i-1"), 1),
        Err(ErrorKind::FencedInstanceId)
    );
    assert_eq!(
        h.commit_with(CommitReq::new(old.as_str(), 1).instance("i-1").offset(0, 5))[0].1,
        Some(ErrorKind::FencedInstanceId)
    );
    let new_id = r.member_id.clone();
    assert_eq!(
        h.heartbeat_full(GROUP, new_id.as_str(), Some("i-1"), 1),
        Ok(())
    );
}

#[test]
fn static_leader_rejoining_with_v9_gets_skip_assignment_and_the_members() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").instance("i-1"));
    h.advance(3_000);
    let old = h.group().members.keys().next().unwrap().clone();
    h.sync(old.as_str(), 1, &[]);
    let out = h.join(JoinReq::new("").instance("i-1").version(9));
    let Reply::Join(r) = &out.reply else { panic!() };
    assert!(r.skip_assignment);
    assert_eq!(r.leader, r.member_id);
    assert_eq!(r.members.len(), 1);
}

#[test]
fn static_member_rejoining_with_a_protocol_change_triggers_a_rebalance() {
    let mut h = Harness::new();
    let sub = subscription(&[TOPIC]);
    h.join(JoinReq::new("").instance("i-1"));
    h.advance(3_000);
    let old = h.group().members.keys().next().unwrap().clone();
    h.sync(old.as_str(), 1, &[]);
    let out = h.join(
        JoinReq::new("")
            .instance("i-1")
            .protocols(&[("sticky", sub.clone()), ("range", sub)]),
    );
    // The only member rejoined, so the rebalance completes at once with the new protocol.
    let Reply::Join(r) = &out.reply else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(r.generation, Generation(2));
    assert_eq!(r.protocol_name.as_deref(), Some("sticky"));
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
}

#[test]
fn static_member_rejoining_during_completing_rebalance_forces_a_rebalance_and_fences_the_old_id() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").instance("i-1"));
    h.join_new(JoinReq::new(""));
    h.finish_initial_delay();
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    let old = h
        .group()
        .members
        .iter()
        .find(|(_, m)| m.group_instance_id.is_some())
        .map(|(id, _)| id.clone())
        .unwrap();
    // The old id parked its SyncGroup (it is not the leader or it is; either way it waits).
    let leader = h.group().leader.clone().unwrap();
    if leader != old {
        h.sync(old.as_str(), 1, &[]);
    }
    h.join(JoinReq::new("").instance("i-1"));
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
    if leader != old {
        let r = h.last_sync_response(old.as_str());
        assert_eq!(r.error, Some(ErrorKind::FencedInstanceId));
    }
}

#[test]
fn unknown_static_member_joins_and_triggers_a_rebalance() {
    let mut h = Harness::new();
    h.stable_group(1);
    let out = h.join(JoinReq::new("").instance("i-new"));
    assert!(
        matches!(out.reply, Reply::Parked { .. }),
        "static members skip MEMBER_ID_REQUIRED"
    );
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
}

#[test]
fn static_members_that_did_not_rejoin_are_kept_through_the_join_phase() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").instance("i-1"));
    h.join(
        JoinReq::new("")
            .instance("i-2")
            .protocols(&[("range", subscription(&[TOPIC]))]),
    );
    h.finish_initial_delay();
    let ids: Vec<MemberId> = h.group().members.keys().cloned().collect();
    for id in &ids {
        h.sync(id.as_str(), 1, &[]);
    }
    // i-1 rejoins with new metadata; i-2 does not.
    let i1 = ids
        .iter()
        .find(|id| id.as_str().starts_with("i-1"))
        .unwrap()
        .clone();
    let i2 = ids
        .iter()
        .find(|id| id.as_str().starts_with("i-2"))
        .unwrap()
        .clone();
    let generation = h.generation();
    h.join(
        JoinReq::new(i1.as_str())
            .instance("i-1")
            .protocols(&[("range", subscription(&["other"]))]),
    );
    for _ in 0..6 {
        h.advance(5_000);
        let _ = h.heartbeat_full(GROUP, i2.as_str(), Some("i-2"), generation);
    }
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    assert_eq!(h.generation(), generation + 1);
    assert_eq!(
        h.group().members.len(),
        2,
        "the static member stays until its session expires"
    );
}

#[test]
fn join_that_would_outgrow_the_group_record_returns_group_max_size_reached() {
    let mut h = Harness::with_config(Config {
        group_record_max_bytes: 800,
        ..Config::default()
    });
    let big = bytes::Bytes::from(vec![7u8; 200]);
    h.join(
        JoinReq::new("")
            .version(3)
            .protocols(&[("range", big.clone())]),
    );
    let out = h.join(
        JoinReq::new("")
            .version(3)
            .protocols(&[("range", big.clone())]),
    );
    assert!(matches!(out.reply, Reply::Parked { .. }));
    let out = h.join(JoinReq::new("").version(3).protocols(&[("range", big)]));
    assert_eq!(join_error(&out), Some(ErrorKind::GroupMaxSizeReached));
    assert!(out.records.is_empty());
    assert_eq!(h.group().members.len(), 2);
}

#[test]
fn members_rejoining_beyond_a_shrunk_max_size_are_kicked_out_while_the_others_continue() {
    // Three members, then group.max.size drops to 2 (a config change on restart).
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(3);
    let shrunk = Config {
        group_max_size: 2,
        ..Config::default()
    };
    let mut h2 = Harness::with_config(shrunk.clone());
    h2.now = h.now;
    h2.state = replay_all(&shrunk, &h.records);
    h2.records = h.records.clone();
    // All three rejoin; the third to arrive no longer fits.
    let mut errors = Vec::new();
    for m in &members {
        let out = h2.join(JoinReq::new(m));
        errors.push(match &out.reply {
            Reply::Join(r) => r.error,
            _ => None,
        });
    }
    assert_eq!(
        errors,
        vec![None, None, Some(ErrorKind::GroupMaxSizeReached)]
    );
    assert!(!h2
        .group()
        .members
        .contains_key(&MemberId::from(members[2].as_str())));
    // As in Kafka, the kick-out itself does not end the join phase; its timeout does.
    assert_eq!(h2.group_state(), GroupState::PreparingRebalance);
    h2.advance(30_000);
    assert_eq!(h2.group_state(), GroupState::CompletingRebalance);
    assert_eq!(h2.generation(), generation + 1);
}

#[test]
fn a_static_leader_that_does_not_rejoin_stays_until_its_session_expires() {
    let mut h = Harness::new();
    h.join(
        JoinReq::new("")
            .instance("leader-instance")
            .session(6_000)
            .rebalance(10_000),
    );
    h.finish_initial_delay();
    let first = h.group().members.keys().next().unwrap().as_str().to_owned();
    h.sync_full(GROUP, &first, Some("leader-instance"), 1, None, None, &[]);
    assert_eq!(h.group_state(), GroupState::Stable);

    // A dynamic member arrives (v3: no MEMBER_ID_REQUIRED round trip).
    let out = h.join(JoinReq::new("").version(3).session(6_000).rebalance(10_000));
    let Reply::Parked {
        member_id: second, ..
    } = out.reply
    else {
        panic!()
    };
    for _ in 0..2 {
        h.advance(2_500);
        assert_eq!(
            h.heartbeat_full(GROUP, &first, Some("leader-instance"), 1),
            Err(ErrorKind::RebalanceInProgress)
        );
    }
    // The rebalance timeout ends the join phase: the new member leads, the static one stays.
    h.advance(5_000);
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    assert_eq!(h.generation(), 2);
    assert_eq!(h.group().members.len(), 2);
    assert_eq!(h.group().leader.as_ref(), Some(&second));
    assert_eq!(h.last_join_response(second.as_str()).error, None);
    h.sync(second.as_str(), 2, &[]);
    assert_eq!(h.group_state(), GroupState::Stable);
    // The static member still heartbeats with the old generation, which does not keep it.
    assert_eq!(
        h.heartbeat_full(GROUP, &first, Some("leader-instance"), 1),
        Err(ErrorKind::IllegalGeneration)
    );
    let mut seen = Vec::new();
    for _ in 0..3 {
        h.advance(2_000);
        seen.push(h.heartbeat(second.as_str(), 2));
    }
    assert_eq!(
        seen,
        vec![Ok(()), Ok(()), Err(ErrorKind::RebalanceInProgress)]
    );
    assert_eq!(h.group().members.len(), 1);
}

#[test]
fn a_join_phase_with_only_absent_static_members_is_retried_not_spun() {
    let mut h = Harness::new();
    // A rebalance in progress whose only member is static, did not rejoin, and has a zero
    // rebalance timeout (a hostile client; real ones send max.poll.interval.ms).
    let mut group = ClassicGroup::new(h.now_ms());
    group.state = GroupState::PreparingRebalance;
    group.generation = Generation(3);
    group.protocol_type = Some("consumer".into());
    group.leader = Some("i-1-x".into());
    group.join_deadline = Some(h.now_ms());
    group.members.insert(
        "i-1-x".into(),
        Member {
            group_instance_id: Some("i-1".into()),
            client_id: "c".into(),
            client_host: "h".into(),
            rebalance_timeout_ms: 0,
            session_timeout_ms: 1_800_000,
            protocol_type: "consumer".into(),
            protocols: vec![("range".into(), subscription(&[TOPIC]))],
            assignment: bytes::Bytes::new(),
            awaiting_join: false,
            awaiting_sync: false,
            is_new: false,
        },
    );
    let record = Record::GroupMetadata {
        group_id: GROUP.into(),
        value: Some(Box::new(group)),
    };
    h.state.replay(&record);
    h.records.push(record);
    h.timers.insert(
        TimerKey::JoinPhase {
            group_id: GROUP.into(),
            generation: Generation(3),
        },
        h.now_ms(),
    );
    let before = h.records.len();
    h.advance(10_000);
    // Retries at least a second apart: about ten records, not a spin.
    let written = h.records.len() - before;
    assert!((1..=12).contains(&written), "{written} records");
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
}
