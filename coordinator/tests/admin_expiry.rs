//! DeleteGroups, DescribeGroups, ListGroups and KIP-211 offset retention scenarios.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::*;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;
const RETENTION_MS: i64 = 7 * DAY_MS;

fn delete_groups(h: &mut Harness, groups: &[&str]) -> Vec<(GroupId, Result<(), ErrorKind>)> {
    let out = h.write(WriteCommand::DeleteGroups(DeleteGroups {
        api_version: ApiVersion(2),
        now_ms: h.now_ms(),
        group_ids: groups.iter().map(|g| GroupId::from(*g)).collect(),
    }));
    match out.reply {
        Reply::DeleteGroups(r) => r,
        other => panic!("{other:?}"),
    }
}

fn describe(h: &mut Harness, version: i16, group: &str) -> DescribedGroup {
    let out = h.read(ReadCommand::DescribeGroups(DescribeGroups {
        api_version: ApiVersion(version),
        group_ids: vec![group.into()],
    }));
    match out.reply {
        Reply::DescribeGroups(mut r) => r.remove(0),
        other => panic!("{other:?}"),
    }
}

fn list(h: &mut Harness, states: &[&str], types: &[&str]) -> Vec<(String, GroupState)> {
    let out = h.read(ReadCommand::ListGroups(ListGroups {
        api_version: ApiVersion(5),
        states_filter: states.iter().map(|s| (*s).to_owned()).collect(),
        types_filter: types.iter().map(|s| (*s).to_owned()).collect(),
    }));
    match out.reply {
        Reply::ListGroups(r) => r
            .into_iter()
            .map(|g| (g.group_id.into_string(), g.state))
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn expire(h: &mut Harness) {
    h.write(WriteCommand::ExpireOffsets { now_ms: h.now_ms() });
}

#[test]
fn delete_groups_reports_unknown_and_non_empty_groups_and_deletes_empty_ones() {
    let mut h = Harness::new();
    h.stable_group(1);
    h.commit_with(CommitReq::admin().group("simple").offset(0, 1));
    let r = delete_groups(&mut h, &["nope", GROUP, "simple"]);
    assert_eq!(r[0].1, Err(ErrorKind::GroupIdNotFound));
    assert_eq!(r[1].1, Err(ErrorKind::NonEmptyGroup));
    assert_eq!(r[2].1, Ok(()));
    assert_eq!(h.fetch("simple", 0), -1);
    assert!(h.state.group(&GROUP.into()).is_some());
}

#[test]
fn deleting_an_empty_group_removes_its_metadata_and_offsets() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(1);
    h.commit(&members[0], generation, 5);
    h.leave(&[(&members[0], None)]);
    let r = delete_groups(&mut h, &[GROUP]);
    assert_eq!(r[0].1, Ok(()));
    assert_eq!(h.state.group_count(), 0);
    assert_eq!(describe(&mut h, 5, GROUP).state, GroupState::Dead);
}

#[test]
fn describe_a_stable_group_shows_protocol_metadata_and_assignments() {
    let mut h = Harness::new();
    let (members, _) = h.stable_group(2);
    let d = describe(&mut h, 5, GROUP);
    assert_eq!(d.error, None);
    assert_eq!(d.state, GroupState::Stable);
    assert_eq!(d.protocol_type, "consumer");
    assert_eq!(d.protocol_data, "range");
    assert_eq!(d.members.len(), 2);
    for m in &d.members {
        assert_eq!(m.client_id, "client");
        assert_eq!(m.client_host, "/127.0.0.1");
        assert_eq!(m.metadata, subscription(&[TOPIC]));
        assert_eq!(
            m.assignment.as_ref(),
            format!("assignment-of-{}", m.member_id).as_bytes()
        );
        assert!(members.contains(&m.member_id.as_str().to_owned()));
    }
}

#[test]
fn describe_a_rebalancing_group_lists_members_without_metadata() {
    let mut h = Harness::new();
    let (members, _) = h.stable_group(2);
    h.join(JoinReq::new(&members[0]).protocols(&[("range", subscription(&["x"]))]));
    let d = describe(&mut h, 5, GROUP);
    assert_eq!(d.state, GroupState::PreparingRebalance);
    assert_eq!(d.protocol_data, "");
    assert_eq!(d.members.len(), 2);
    assert!(d
        .members
        .iter()
        .all(|m| m.metadata.is_empty() && m.assignment.is_empty()));
}

#[test]
fn describe_an_unknown_group_is_dead_without_error_up_to_v5_and_not_found_from_v6() {
    let mut h = Harness::new();
    let d = describe(&mut h, 5, "nope");
    assert_eq!(
        (d.state, d.error, d.protocol_type.as_str()),
        (GroupState::Dead, None, "")
    );
    let d = describe(&mut h, 6, "nope");
    assert_eq!(d.error, Some(ErrorKind::GroupIdNotFound));
}

#[test]
fn describe_shows_static_members_instance_ids() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").instance("i-1"));
    let d = describe(&mut h, 5, GROUP);
    assert_eq!(
        d.members[0].group_instance_id,
        Some(GroupInstanceId::from("i-1"))
    );
}

#[test]
fn list_groups_filters_by_state_and_type_case_insensitively() {
    let mut h = Harness::new();
    h.stable_group(1);
    h.commit_with(CommitReq::admin().group("simple").offset(0, 1));
    assert_eq!(list(&mut h, &[], &[]).len(), 2);
    assert_eq!(
        list(&mut h, &["stable"], &[]),
        vec![(GROUP.to_owned(), GroupState::Stable)]
    );
    assert_eq!(
        list(&mut h, &["EMPTY"], &[]),
        vec![("simple".to_owned(), GroupState::Empty)]
    );
    assert_eq!(list(&mut h, &[], &["Classic"]).len(), 2);
    assert!(list(&mut h, &[], &["consumer"]).is_empty());
}

#[test]
fn offsets_of_an_empty_group_expire_retention_after_it_became_empty_then_the_group_is_deleted() {
    let mut h = Harness::new();
    let member = h.join_new(JoinReq::new("").session(1_800_000));
    h.finish_initial_delay();
    let generation = h.generation();
    h.sync(&member, generation, &[]);
    h.commit(&member, generation, 5);
    h.advance(20 * 60 * 1000);
    h.leave(&[(&member, None)]);
    let emptied_at = h.now;
    // Counted from when the group became Empty, not from the commit (20 minutes earlier).
    h.now = emptied_at + RETENTION_MS - 1;
    expire(&mut h);
    assert_eq!(h.fetch(GROUP, 0), 5);
    h.now = emptied_at + RETENTION_MS;
    expire(&mut h);
    assert_eq!(h.fetch(GROUP, 0), -1);
    assert_eq!(
        h.state.group_count(),
        0,
        "an Empty group with no offset left is deleted"
    );
}

#[test]
fn offsets_of_a_simple_group_expire_retention_after_their_commit() {
    let mut h = Harness::new();
    h.commit_with(CommitReq::admin().offset(0, 1));
    h.now += DAY_MS;
    h.commit_with(CommitReq::admin().offset(1, 2));
    h.now += RETENTION_MS - DAY_MS;
    expire(&mut h);
    assert_eq!(h.fetch(GROUP, 0), -1);
    assert_eq!(h.fetch(GROUP, 1), 2);
    h.now += DAY_MS;
    expire(&mut h);
    assert_eq!(h.state.group_count(), 0);
}

#[test]
fn a_stable_consumer_groups_offsets_expire_only_for_topics_no_member_subscribes_to() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(1);
    h.commit_with(CommitReq::new(&members[0], generation).offset(0, 1));
    h.commit_with(
        CommitReq::new(&members[0], generation)
            .topic("retired")
            .offset(0, 2),
    );
    // Keep the member alive across the retention period with heartbeats.
    let step = 5_000;
    let mut elapsed = 0;
    while elapsed < RETENTION_MS {
        h.now += step;
        elapsed += step;
        let _ = h.heartbeat(&members[0], generation);
        h.timers.retain(|_, at| at.0 > h.now);
    }
    expire(&mut h);
    assert_eq!(
        h.fetch(GROUP, 0),
        1,
        "a subscribed topic's offset never expires while Stable"
    );
    assert!(h
        .state
        .committed_offset(&GROUP.into(), "retired", PartitionIndex(0))
        .is_none());
    assert_eq!(h.group_state(), GroupState::Stable);
}

#[test]
fn offsets_of_a_rebalancing_group_never_expire() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(2);
    h.commit(&members[0], generation, 1);
    h.join(JoinReq::new(&members[0]).protocols(&[("range", subscription(&["x"]))]));
    h.now += 2 * RETENTION_MS;
    expire(&mut h);
    assert_eq!(h.fetch(GROUP, 0), 1);
}

#[test]
fn the_retention_timer_runs_expiry_and_rearms_itself() {
    let mut h = Harness::new();
    h.commit_with(CommitReq::admin().offset(0, 1));
    let out = h.write(WriteCommand::TimerFired {
        key: TimerKey::OffsetsRetention,
        now_ms: TimestampMs(h.now + RETENTION_MS),
    });
    assert_eq!(h.fetch(GROUP, 0), -1);
    assert_eq!(
        out.timers,
        vec![TimerOp::Set {
            key: TimerKey::OffsetsRetention,
            at_ms: TimestampMs(h.now + RETENTION_MS + 600_000)
        }]
    );
}

#[test]
fn an_empty_group_without_offsets_is_deleted_at_the_next_check() {
    let mut h = Harness::new();
    let (members, _) = h.stable_group(1);
    h.leave(&[(&members[0], None)]);
    expire(&mut h);
    assert_eq!(h.state.group_count(), 0);
}
