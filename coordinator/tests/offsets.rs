//! OffsetCommit (the exact validation order), OffsetFetch and OffsetDelete scenarios.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::*;

#[test]
fn admin_commit_to_an_unknown_group_creates_a_simple_group() {
    let mut h = Harness::new();
    assert_eq!(h.commit("", -1, 42), None);
    assert_eq!(h.fetch(GROUP, 0), 42);
    assert!(
        h.state.group(&GROUP.into()).is_none(),
        "a simple group has no membership record"
    );
    let out = h.read(ReadCommand::ListGroups(ListGroups {
        api_version: ApiVersion(5),
        states_filter: vec![],
        types_filter: vec![],
    }));
    let Reply::ListGroups(groups) = out.reply else {
        panic!()
    };
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].protocol_type, "");
    assert_eq!(groups[0].state, GroupState::Empty);
}

#[test]
fn commit_v9_with_a_generation_to_an_unknown_group_returns_group_id_not_found() {
    let mut h = Harness::new();
    let r = h.commit_with(CommitReq::new("m", 1).version(9).offset(0, 5));
    assert_eq!(r[0].1, Some(ErrorKind::GroupIdNotFound));
    assert_eq!(h.fetch(GROUP, 0), -1);
}

#[test]
fn commit_v8_with_a_generation_to_an_unknown_group_returns_illegal_generation() {
    let mut h = Harness::new();
    let r = h.commit_with(CommitReq::new("m", 1).version(8).offset(0, 5));
    assert_eq!(r[0].1, Some(ErrorKind::IllegalGeneration));
    assert_eq!(h.group_count(), 0);
}

trait Count {
    fn group_count(&self) -> usize;
}
impl Count for Harness {
    fn group_count(&self) -> usize {
        self.state.group_count()
    }
}

#[test]
fn admin_commit_to_an_empty_group_is_accepted() {
    let mut h = Harness::new();
    let (members, _) = h.stable_group(1);
    h.leave(&[(&members[0], None)]);
    assert_eq!(h.group_state(), GroupState::Empty);
    assert_eq!(h.commit("", -1, 7), None);
    assert_eq!(h.fetch(GROUP, 0), 7);
}

#[test]
fn admin_commit_to_an_active_group_returns_unknown_member_id() {
    let mut h = Harness::new();
    h.stable_group(1);
    assert_eq!(h.commit("", -1, 7), Some(ErrorKind::UnknownMemberId));
    assert_eq!(h.fetch(GROUP, 0), -1, "a rejected commit is never visible");
}

#[test]
fn commit_from_an_unknown_member_returns_unknown_member_id() {
    let mut h = Harness::new();
    let (_, generation) = h.stable_group(1);
    assert_eq!(
        h.commit("zombie", generation, 7),
        Some(ErrorKind::UnknownMemberId)
    );
    assert_eq!(h.fetch(GROUP, 0), -1);
}

#[test]
fn commit_with_member_id_but_no_generation_to_an_empty_group_returns_unknown_member_id() {
    let mut h = Harness::new();
    assert_eq!(h.commit("", -1, 1), None);
    assert_eq!(
        h.commit("someone", -1, 2),
        None,
        "generation < 0 on an Empty group is always accepted"
    );
    assert_eq!(h.commit("someone", 0, 3), Some(ErrorKind::UnknownMemberId));
}

#[test]
fn commit_with_stale_generation_returns_illegal_generation() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(1);
    assert_eq!(
        h.commit(&members[0], generation - 1, 7),
        Some(ErrorKind::IllegalGeneration)
    );
    assert_eq!(h.fetch(GROUP, 0), -1);
}

#[test]
fn commit_with_a_superseded_instance_id_returns_fenced_instance_id() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").instance("i-1"));
    h.finish_initial_delay();
    let old = h.group().members.keys().next().unwrap().as_str().to_owned();
    h.sync(&old, 1, &[]);
    h.join(JoinReq::new("").instance("i-1"));
    let r = h.commit_with(CommitReq::new(&old, 1).instance("i-1").offset(0, 9));
    assert_eq!(r[0].1, Some(ErrorKind::FencedInstanceId));
    assert_eq!(h.fetch(GROUP, 0), -1);
}

#[test]
fn commit_during_completing_rebalance_returns_rebalance_in_progress() {
    let mut h = Harness::new();
    let a = h.join_new(JoinReq::new(""));
    h.finish_initial_delay();
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    assert_eq!(h.commit(&a, 1, 7), Some(ErrorKind::RebalanceInProgress));
    assert_eq!(h.fetch(GROUP, 0), -1);
}

#[test]
fn commit_during_preparing_rebalance_is_accepted_and_refreshes_the_session() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(2);
    h.join(JoinReq::new(&members[0]).protocols(&[("range", subscription(&["x"]))]));
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
    h.advance(1_000);
    assert_eq!(h.commit(&members[1], generation, 11), None);
    assert_eq!(h.fetch(GROUP, 0), 11);
    let key = TimerKey::MemberHeartbeat {
        group_id: GROUP.into(),
        member_id: members[1].as_str().into(),
    };
    assert_eq!(h.timers[&key], TimestampMs(h.now + 10_000));
}

#[test]
fn commit_in_a_stable_group_is_stored_with_its_metadata_and_leader_epoch() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(1);
    let r = h.commit_with(CommitReq::new(&members[0], generation).metadata(3, 100, "note"));
    assert_eq!(r[0].1, None);
    let v = h
        .state
        .committed_offset(&GROUP.into(), TOPIC, PartitionIndex(3))
        .unwrap();
    assert_eq!(v.offset, Offset(100));
    assert_eq!(v.leader_epoch, LeaderEpoch(3));
    assert_eq!(v.metadata, "note");
    assert_eq!(v.commit_timestamp, h.now_ms());
    assert_eq!(v.expire_timestamp, None);
}

#[test]
fn commit_with_oversized_metadata_returns_offset_metadata_too_large_for_that_partition_only() {
    let mut h = Harness::new();
    let big = "x".repeat(4097);
    let r = h.commit_with(
        CommitReq::admin()
            .metadata(0, 1, &big)
            .offset(1, 2)
            .metadata(2, 3, &"y".repeat(4096)),
    );
    assert_eq!(r[0].1, Some(ErrorKind::OffsetMetadataTooLarge));
    assert_eq!(r[1].1, None);
    assert_eq!(r[2].1, None);
    assert_eq!(h.fetch(GROUP, 0), -1);
    assert_eq!(h.fetch(GROUP, 1), 2);
}

#[test]
fn commit_to_an_unknown_partition_returns_unknown_topic_or_partition_before_group_errors() {
    let mut h = Harness::new();
    let (_, generation) = h.stable_group(1);
    let r = h.commit_with(
        CommitReq::new("zombie", generation)
            .unknown_partition(0, 1)
            .offset(1, 1),
    );
    assert_eq!(r[0].1, Some(ErrorKind::UnknownTopicOrPartition));
    assert_eq!(r[1].1, Some(ErrorKind::UnknownMemberId));
}

#[test]
fn commit_with_a_too_long_group_id_returns_invalid_group_id() {
    let mut h = Harness::new();
    let long = "g".repeat(h.config.group_id_max_bytes + 1);
    let r = h.commit_with(CommitReq::admin().group(&long).offset(0, 1));
    assert_eq!(r[0].1, Some(ErrorKind::InvalidGroupId));
}

#[test]
fn commit_with_the_empty_group_id_is_accepted_as_kafka_does() {
    let mut h = Harness::new();
    let r = h.commit_with(CommitReq::admin().group("").offset(0, 1));
    assert_eq!(r[0].1, None);
    assert_eq!(h.fetch("", 0), 1);
}

#[test]
fn legacy_retention_time_sets_an_expire_timestamp() {
    let mut h = Harness::new();
    let r = h.commit_with(CommitReq::admin().version(2).retention(60_000).offset(0, 1));
    assert_eq!(r[0].1, None);
    let v = h
        .state
        .committed_offset(&GROUP.into(), TOPIC, PartitionIndex(0))
        .unwrap();
    assert_eq!(v.expire_timestamp, Some(TimestampMs(h.now + 60_000)));
    h.advance(59_999);
    h.write(WriteCommand::ExpireOffsets { now_ms: h.now_ms() });
    assert_eq!(h.fetch(GROUP, 0), 1);
    h.advance(1);
    h.write(WriteCommand::ExpireOffsets { now_ms: h.now_ms() });
    assert_eq!(h.fetch(GROUP, 0), -1);
}

#[test]
fn fetch_of_an_unknown_group_returns_minus_one_without_error() {
    let mut h = Harness::new();
    let out = h.read(ReadCommand::FetchOffsets(FetchOffsets {
        api_version: ApiVersion(7),
        groups: vec![
            FetchGroup {
                group_id: "nope".into(),
                topics: None,
                member_id: None,
                member_epoch: -1,
            },
            FetchGroup {
                group_id: "nope".into(),
                topics: Some(vec![FetchTopic {
                    name: TOPIC.into(),
                    partitions: vec![PartitionIndex(0)],
                }]),
                member_id: None,
                member_epoch: -1,
            },
        ],
        require_stable: false,
    }));
    let Reply::Fetch(r) = out.reply else { panic!() };
    assert_eq!(r.groups[0].error, None);
    assert!(r.groups[0].topics.is_empty());
    let p = &r.groups[1].topics[0].partitions[0];
    assert_eq!(
        (p.offset, p.leader_epoch, p.metadata.as_str(), p.error),
        (Offset(-1), LeaderEpoch(-1), "", None)
    );
}

#[test]
fn fetch_of_all_topics_returns_every_committed_partition_of_each_batched_group() {
    let mut h = Harness::new();
    h.commit_with(CommitReq::admin().offset(0, 10).offset(1, 11));
    h.commit_with(CommitReq::admin().topic("payments").offset(0, 20));
    h.commit_with(CommitReq::admin().group("other").offset(0, 30));
    let out = h.read(ReadCommand::FetchOffsets(FetchOffsets {
        api_version: ApiVersion(8),
        groups: vec![
            FetchGroup {
                group_id: GROUP.into(),
                topics: None,
                member_id: None,
                member_epoch: -1,
            },
            FetchGroup {
                group_id: "other".into(),
                topics: None,
                member_id: None,
                member_epoch: -1,
            },
        ],
        require_stable: true,
    }));
    let Reply::Fetch(r) = out.reply else { panic!() };
    let mut seen: Vec<(String, i32, i64)> = r.groups[0]
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| (t.name.as_str().to_owned(), p.partition.0, p.offset.0))
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![
            ("orders".into(), 0, 10),
            ("orders".into(), 1, 11),
            ("payments".into(), 0, 20)
        ]
    );
    assert_eq!(r.groups[1].topics[0].partitions[0].offset, Offset(30));
}

fn delete_offsets(h: &mut Harness, group: &str, topic: &str, known: bool) -> DeleteOffsetsResponse {
    let out = h.write(WriteCommand::DeleteOffsets(DeleteOffsets {
        api_version: ApiVersion(0),
        now_ms: h.now_ms(),
        group_id: group.into(),
        topics: vec![DeleteTopic {
            name: topic.into(),
            partitions: vec![PartitionIndex(0), PartitionIndex(1)],
            topic_known: known,
        }],
    }));
    match out.reply {
        Reply::DeleteOffsets(r) => r,
        other => panic!("{other:?}"),
    }
}

#[test]
fn offset_delete_of_an_unknown_group_returns_group_id_not_found() {
    let mut h = Harness::new();
    assert_eq!(
        delete_offsets(&mut h, "nope", TOPIC, true).error,
        Some(ErrorKind::GroupIdNotFound)
    );
    assert_eq!(
        delete_offsets(&mut h, "", TOPIC, true).error,
        Some(ErrorKind::InvalidGroupId)
    );
}

#[test]
fn offset_delete_of_a_non_consumer_active_group_returns_non_empty_group() {
    let mut h = Harness::new();
    h.join(JoinReq::new("").version(3).protocol_type("connect"));
    h.commit_with(CommitReq::admin().group("other"));
    assert_eq!(
        delete_offsets(&mut h, GROUP, TOPIC, true).error,
        Some(ErrorKind::NonEmptyGroup)
    );
}

#[test]
fn offset_delete_of_a_subscribed_topic_returns_group_subscribed_to_topic() {
    let mut h = Harness::new();
    let (members, generation) = h.stable_group(1);
    h.commit_with(CommitReq::new(&members[0], generation).offset(0, 1));
    h.commit_with(
        CommitReq::new(&members[0], generation)
            .topic("old")
            .offset(0, 2),
    );
    let r = delete_offsets(&mut h, GROUP, TOPIC, true);
    assert_eq!(r.error, None);
    assert!(r.topics[0]
        .1
        .iter()
        .all(|(_, e)| *e == Some(ErrorKind::GroupSubscribedToTopic)));
    assert_eq!(h.fetch(GROUP, 0), 1);
    // A topic no member subscribes to can be cleaned while the group is active.
    let r = delete_offsets(&mut h, GROUP, "old", true);
    assert!(r.topics[0].1.iter().all(|(_, e)| e.is_none()));
    assert!(h
        .state
        .committed_offset(&GROUP.into(), "old", PartitionIndex(0))
        .is_none());
}

#[test]
fn offset_delete_of_an_unknown_topic_returns_unknown_topic_or_partition() {
    let mut h = Harness::new();
    h.commit_with(CommitReq::admin().offset(0, 1));
    let r = delete_offsets(&mut h, GROUP, "gone", false);
    assert!(r.topics[0]
        .1
        .iter()
        .all(|(_, e)| *e == Some(ErrorKind::UnknownTopicOrPartition)));
}

#[test]
fn offset_delete_in_an_empty_group_removes_the_offsets_and_a_simple_group_goes_with_its_last_offset(
) {
    let mut h = Harness::new();
    h.commit_with(CommitReq::admin().offset(0, 1));
    let r = delete_offsets(&mut h, GROUP, TOPIC, true);
    assert_eq!(r.error, None);
    assert_eq!(h.fetch(GROUP, 0), -1);
    assert_eq!(h.state.group_count(), 0);
}

#[test]
fn deleted_topics_lose_their_offsets_in_every_group() {
    let mut h = Harness::new();
    h.commit_with(CommitReq::admin().offset(0, 1).offset(1, 2));
    h.commit_with(CommitReq::admin().group("other").offset(0, 3));
    h.commit_with(CommitReq::admin().group("other").topic("kept").offset(0, 4));
    h.write(WriteCommand::TopicsDeleted {
        topics: vec![TOPIC.into()],
        now_ms: h.now_ms(),
    });
    assert_eq!(h.fetch(GROUP, 0), -1);
    assert_eq!(h.fetch("other", 0), -1);
    assert!(h
        .state
        .committed_offset(&"other".into(), "kept", PartitionIndex(0))
        .is_some());
    assert_eq!(h.state.offset_count(), 1);
}

#[test]
fn commit_to_a_topic_name_no_kafka_topic_can_have_returns_unknown_topic_or_partition() {
    let mut h = Harness::new();
    let long = "t".repeat(h.config.field_max_bytes + 1);
    let r = h.commit_with(CommitReq::admin().topic(&long).offset(0, 1));
    assert_eq!(r[0].1, Some(ErrorKind::UnknownTopicOrPartition));
    assert_eq!(h.state.offset_count(), 0);
}

#[test]
fn hundreds_of_groups_created_out_of_order_are_listed_in_id_order_fetched_and_deleted() {
    // Enough groups to spread over several chunks of the group table, created in a scrambled
    // order so that chunks split in the middle, with ids sharing a long prefix.
    const GROUPS: usize = 300;
    let mut h = Harness::new();
    let id = |i: usize| format!("service-instance-{:04}", (i * 7919) % GROUPS);
    for i in 0..GROUPS {
        let r = h.commit_with(
            CommitReq::admin()
                .group(&id(i))
                .offset(i as i32 % 3, i as i64),
        );
        assert_eq!(r[0].1, None);
    }
    let list = |h: &mut Harness| {
        let out = h.read(ReadCommand::ListGroups(ListGroups {
            api_version: ApiVersion(5),
            states_filter: vec![],
            types_filter: vec![],
        }));
        let Reply::ListGroups(groups) = out.reply else {
            panic!()
        };
        groups
            .into_iter()
            .map(|g| g.group_id.into_string())
            .collect::<Vec<_>>()
    };
    let mut expected: Vec<String> = (0..GROUPS).map(id).collect();
    expected.sort();
    assert_eq!(list(&mut h), expected);
    for i in 0..GROUPS {
        assert_eq!(h.fetch(&id(i), i as i32 % 3), i as i64, "{}", id(i));
    }
    let deleted: Vec<GroupId> = (0..GROUPS).step_by(3).map(|i| id(i).into()).collect();
    let out = h.write(WriteCommand::DeleteGroups(DeleteGroups {
        api_version: ApiVersion(2),
        now_ms: h.now_ms(),
        group_ids: deleted.clone(),
    }));
    let Reply::DeleteGroups(results) = out.reply else {
        panic!()
    };
    assert!(results.iter().all(|(_, r)| r.is_ok()), "{results:?}");
    expected.retain(|g| !deleted.iter().any(|d| d.as_str() == g));
    assert_eq!(list(&mut h), expected);
    assert_eq!(h.state.group_count(), GROUPS - deleted.len());
    for i in 0..GROUPS {
        let want = if i % 3 == 0 { -1 } else { i as i64 };
        assert_eq!(h.fetch(&id(i), i as i32 % 3), want, "{}", id(i));
    }
}
