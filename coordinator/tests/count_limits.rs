//! Cohort's count limits, `Config::groups_max` and `Config::offsets_per_group_max`
//! (POLICY_VIOLATION on the wire, decision 0113): each request that would create a group or
//! a group's offset past its limit is refused, and nothing else is (every step replays).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::consumer::*;
use harness::*;

fn limited(groups_max: usize, offsets_per_group_max: usize) -> Harness {
    Harness::with_config(Config {
        groups_max,
        offsets_per_group_max,
        ..Config::default()
    })
}

fn admin_commit(h: &mut Harness, group: &str, partition: i32) -> Option<ErrorKind> {
    let r = h.commit_with(CommitReq::admin().group(group).offset(partition, 7));
    r[0].1
}

fn delete_group(h: &mut Harness, group: &str) {
    let out = h.write(WriteCommand::DeleteGroups(DeleteGroups {
        api_version: ApiVersion(2),
        now_ms: h.now_ms(),
        group_ids: vec![GroupId::from(group)],
    }));
    let Reply::DeleteGroups(r) = out.reply else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(r[0].1, Ok(()));
}

#[test]
fn a_commit_that_would_create_a_group_past_the_limit_is_refused() {
    let mut h = limited(2, 100);
    assert_eq!(admin_commit(&mut h, "a", 0), None);
    assert_eq!(admin_commit(&mut h, "b", 0), None);
    let r = h.commit_with(CommitReq::admin().group("c").offset(0, 7).offset(1, 8));
    assert_eq!(
        r,
        vec![
            (PartitionIndex(0), Some(ErrorKind::GroupsMaxReached)),
            (PartitionIndex(1), Some(ErrorKind::GroupsMaxReached)),
        ]
    );
    assert_eq!(h.fetch("c", 0), -1, "a refused commit is never visible");
    assert_eq!(h.state.group_count(), 2);
    // Existing groups keep working at the limit.
    assert_eq!(admin_commit(&mut h, "a", 1), None);
    // A deleted group frees its place.
    delete_group(&mut h, "b");
    assert_eq!(admin_commit(&mut h, "c", 0), None);
    assert_eq!(h.fetch("c", 0), 7);
}

#[test]
fn a_join_that_would_create_a_group_past_the_limit_is_refused() {
    let mut h = limited(1, 100);
    assert_eq!(admin_commit(&mut h, "simple", 0), None);
    let out = h.join(JoinReq::new(""));
    let Reply::Join(r) = &out.reply else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(r.error, Some(ErrorKind::GroupsMaxReached));
    assert!(out.records.is_empty(), "nothing is written");
    assert!(h.state.group(&GROUP.into()).is_none());
    // Joining the group that exists (offsets only) is not refused: KIP-394's first step.
    let out = h.join(JoinReq::new("").group("simple"));
    let Reply::Join(r) = &out.reply else {
        panic!("{:?}", out.reply)
    };
    assert_eq!(r.error, Some(ErrorKind::MemberIdRequired));
}

#[test]
fn a_consumer_heartbeat_that_would_create_a_group_past_the_limit_is_refused() {
    let mut h = limited(1, 100);
    h.topics_changed(&[(TOPIC, 1, 2)], &[]);
    assert_eq!(admin_commit(&mut h, "simple", 0), None);
    let r = h.cg_heartbeat(&Hb::join("m1", &[TOPIC]));
    assert_eq!(r.error, Some(ErrorKind::GroupsMaxReached));
    let message = r.error_message.unwrap_or_default();
    assert!(
        message.contains("maximum of 1 groups") && message.contains("--groups-max"),
        "the client is told which limit: {message:?}"
    );
    assert_eq!(h.state.group_count(), 1);
    // The group that exists (offsets only) becomes a consumer group: not a new group.
    let r = h.cg_heartbeat(&Hb::join("m1", &[TOPIC]).group("simple"));
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(h.state.group_count(), 1);
}

#[test]
fn a_commit_past_the_offsets_per_group_limit_is_refused_for_the_new_partitions_only() {
    let mut h = limited(100, 2);
    let r = h.commit_with(
        CommitReq::admin()
            .offset(0, 10)
            .offset(0, 11) // the same partition twice counts once
            .offset(1, 20)
            .offset(2, 30),
    );
    assert_eq!(
        r,
        vec![
            (PartitionIndex(0), None),
            (PartitionIndex(0), None),
            (PartitionIndex(1), None),
            (
                PartitionIndex(2),
                Some(ErrorKind::OffsetsPerGroupMaxReached)
            ),
        ]
    );
    assert_eq!(h.fetch(GROUP, 2), -1);
    // At the limit the group still moves every offset it holds; another topic counts too.
    let r = h.commit_with(CommitReq::admin().offset(1, 21).offset(0, 12));
    assert_eq!(
        r,
        vec![(PartitionIndex(1), None), (PartitionIndex(0), None)]
    );
    assert_eq!((h.fetch(GROUP, 0), h.fetch(GROUP, 1)), (12, 21));
    let r = h.commit_with(CommitReq::admin().topic("payments").offset(0, 1));
    assert_eq!(
        r,
        vec![(
            PartitionIndex(0),
            Some(ErrorKind::OffsetsPerGroupMaxReached)
        )]
    );
    // Other groups have their own count.
    assert_eq!(admin_commit(&mut h, "other", 5), None);
}

#[test]
fn a_member_commit_past_the_offsets_per_group_limit_is_refused() {
    let mut h = limited(100, 1);
    let (members, generation) = h.stable_group(1);
    let r = h.commit_with(
        CommitReq::new(&members[0], generation)
            .offset(0, 5)
            .offset(1, 6),
    );
    assert_eq!(
        r,
        vec![
            (PartitionIndex(0), None),
            (
                PartitionIndex(1),
                Some(ErrorKind::OffsetsPerGroupMaxReached)
            ),
        ]
    );
}
