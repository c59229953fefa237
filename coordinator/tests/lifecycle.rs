//! A consumer group's whole life, end to end through the public API, as a client library and
//! `kafka-consumer-groups.sh` drive it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::*;

#[test]
fn three_consumers_rebalance_commit_leave_and_the_group_is_reset_then_deleted() {
    let mut h = Harness::new();
    // Three consumers join; the first rebalance waits out the initial delay.
    let (members, g1) = h.stable_group(3);
    assert_eq!(g1, 1);
    for (i, m) in members.iter().enumerate() {
        assert_eq!(
            h.commit_with(CommitReq::new(m, g1).offset(i32::try_from(i).unwrap(), 100))[0].1,
            None
        );
    }

    // One leaves: the others are told to rejoin by their heartbeats.
    h.leave(&[(&members[2], None)]);
    assert_eq!(
        h.heartbeat(&members[0], g1),
        Err(ErrorKind::RebalanceInProgress)
    );
    // A commit during the join phase is still accepted (Kafka keeps them in PreparingRebalance).
    assert_eq!(h.commit(&members[0], g1, 150), None);
    h.join(JoinReq::new(&members[0]));
    let out = h.join(JoinReq::new(&members[1]));
    let Reply::Join(r) = &out.reply else {
        panic!("{:?}", out.reply)
    };
    let g2 = r.generation.0;
    assert_eq!(g2, g1 + 1);
    // A zombie commit from the old generation is fenced and invisible.
    assert_eq!(
        h.commit(&members[2], g1, 999),
        Some(ErrorKind::UnknownMemberId)
    );
    // During CompletingRebalance commits wait for the assignment.
    assert_eq!(
        h.commit(&members[0], g2, 160),
        Some(ErrorKind::RebalanceInProgress)
    );
    let leader = h.group().leader.clone().unwrap().as_str().to_owned();
    let follower = if leader == members[0] {
        &members[1]
    } else {
        &members[0]
    };
    h.sync(follower, g2, &[]);
    h.sync(
        &leader,
        g2,
        &[(&leader, b"p0,p2"), (follower.as_str(), b"p1")],
    );
    assert_eq!(h.last_sync_response(follower).assignment.as_ref(), b"p1");
    assert_eq!(h.commit(&members[0], g2, 200), None);
    assert_eq!(
        h.commit(&members[0], g1, 201),
        Some(ErrorKind::IllegalGeneration)
    );
    assert_eq!(h.fetch(GROUP, 0), 200);

    // The CLI cannot reset an active group...
    assert_eq!(h.commit("", -1, 0), Some(ErrorKind::UnknownMemberId));
    // ...the consumers stop without leaving (sessions lapse)...
    h.advance(11_000);
    assert_eq!(h.group_state(), GroupState::Empty);
    // ...then it can: an admin commit on the Empty group.
    assert_eq!(h.commit("", -1, 0), None);
    assert_eq!(h.fetch(GROUP, 0), 0);
    assert_eq!(h.fetch(GROUP, 1), 100);

    // Deletion takes the offsets with it.
    let out = h.write(WriteCommand::DeleteGroups(DeleteGroups {
        api_version: ApiVersion(2),
        now_ms: h.now_ms(),
        group_ids: vec![GROUP.into()],
    }));
    assert_eq!(out.reply, Reply::DeleteGroups(vec![(GROUP.into(), Ok(()))]));
    assert_eq!(h.state.group_count(), 0);
    assert_eq!(h.state.offset_count(), 0);
    assert_eq!(h.fetch(GROUP, 1), -1);
}

#[test]
fn a_static_member_restarted_within_its_session_keeps_its_assignment_without_a_rebalance() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").instance("consumer-a").session(30_000));
    h.join(JoinReq::new("").instance("consumer-b").session(30_000));
    h.finish_initial_delay();
    let ids: Vec<String> = h
        .group()
        .members
        .keys()
        .map(|m| m.as_str().to_owned())
        .collect();
    let leader = h.group().leader.clone().unwrap().as_str().to_owned();
    for id in &ids {
        if *id != leader {
            h.sync(id, 1, &[]);
        }
    }
    let assignments: Vec<(&str, &[u8])> =
        ids.iter().map(|id| (id.as_str(), id.as_bytes())).collect();
    h.sync(&leader, 1, &assignments);
    assert_eq!(h.group_state(), GroupState::Stable);

    // consumer-b crashes and comes back 10 s later without its member id.
    let old_b = ids
        .iter()
        .find(|id| id.starts_with("consumer-b"))
        .unwrap()
        .clone();
    h.advance(10_000);
    let a = ids
        .iter()
        .find(|id| id.starts_with("consumer-a"))
        .unwrap()
        .clone();
    assert_eq!(h.heartbeat_full(GROUP, &a, Some("consumer-a"), 1), Ok(()));
    let out = h.join(JoinReq::new("").instance("consumer-b").session(30_000));
    let Reply::Join(r) = &out.reply else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(r.generation, Generation(1), "same generation: no rebalance");
    let new_b = r.member_id.as_str().to_owned();
    let out = h.sync_full(GROUP, &new_b, Some("consumer-b"), 1, None, None, &[]);
    let Reply::Sync(s) = &out.reply else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(
        s.assignment.as_ref(),
        old_b.as_bytes(),
        "the instance keeps its partitions"
    );
    assert_eq!(h.group_state(), GroupState::Stable);
    assert_eq!(h.generation(), 1);
    // The old incarnation is fenced everywhere.
    assert_eq!(
        h.heartbeat_full(GROUP, &old_b, Some("consumer-b"), 1),
        Err(ErrorKind::FencedInstanceId)
    );
}
