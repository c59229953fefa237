//! The consumer group protocol (KIP-848), rule by rule, on the scenario harness (every step
//! replays, compacts and checks that no partition is held by two members).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::consumer::*;
use harness::*;

const ORDERS: u128 = 1;

/// A client that follows the protocol: it owns exactly what its last answer assigned.
struct Client {
    member: String,
    epoch: i32,
    owned: Assignment,
}

impl Client {
    fn join(h: &mut Harness, member: &str, topics: &[&str]) -> Client {
        let r = h.cg_heartbeat(&Hb::join(member, topics));
        assert_eq!(r.error, None, "{r:?}");
        let mut c = Client {
            member: member.to_owned(),
            epoch: r.member_epoch,
            owned: Assignment::new(),
        };
        c.take(&r);
        c
    }

    fn take(&mut self, r: &ConsumerHeartbeatResponse) {
        self.epoch = r.member_epoch;
        if let Some(a) = &r.assignment {
            self.owned = a.clone();
        }
    }

    fn beat(&mut self, h: &mut Harness) -> ConsumerHeartbeatResponse {
        let r = h.cg_heartbeat(&Hb::beat(&self.member, self.epoch, &self.owned));
        assert_eq!(r.error, None, "{r:?}");
        self.take(&r);
        r
    }
}

fn harness_with_orders(partitions: i32) -> Harness {
    let mut h = Harness::new();
    h.topics_changed(&[("orders", ORDERS, partitions)], &[]);
    h
}

fn settle(h: &mut Harness, clients: &mut [Client]) {
    for _ in 0..6 {
        for c in clients.iter_mut() {
            c.beat(h);
        }
    }
}

#[test]
fn members_join_and_converge_without_a_partition_owned_twice() {
    let mut h = harness_with_orders(6);
    let mut a = Client::join(&mut h, "a", &["orders"]);
    assert_eq!(a.owned.len(), 6, "a lone member gets every partition");
    let mut b = Client::join(&mut h, "b", &["orders"]);
    // b's target is half of a's partitions, but a still holds them: b waits.
    assert!(b.owned.is_empty());
    assert_eq!(
        h.cg(GROUP).current_of(&"b".into()).state,
        MemberState::UnreleasedPartitions
    );
    // a is asked to revoke 3; until it reports them gone they stay its own.
    a.beat(&mut h);
    assert_eq!(a.owned.len(), 3);
    assert_eq!(
        h.cg(GROUP).current_of(&"a".into()).state,
        MemberState::UnrevokedPartitions
    );
    a.beat(&mut h);
    assert_eq!(
        h.cg(GROUP).current_of(&"a".into()).state,
        MemberState::Stable
    );
    b.beat(&mut h);
    assert_eq!(b.owned.len(), 3);
    assert!(!a.owned.intersects(&b.owned));
    let mut c = Client::join(&mut h, "c", &["orders"]);
    let mut clients = [a, b, c];
    settle(&mut h, &mut clients);
    for cl in &clients {
        assert_eq!(cl.owned.len(), 2, "{} owns {:?}", cl.member, cl.owned);
    }
    assert_eq!(
        group::consumer::state(h.cg(GROUP)),
        ConsumerGroupState::Stable
    );
    c = Client {
        member: String::new(),
        epoch: 0,
        owned: Assignment::new(),
    };
    let _ = c;
}

#[test]
fn a_heartbeat_that_changes_nothing_is_answered_without_a_write() {
    let mut h = harness_with_orders(2);
    let mut a = Client::join(&mut h, "a", &["orders"]);
    a.beat(&mut h);
    let records = h.records.len();
    let (r, wrote) = h.cg_heartbeat_path(&Hb::beat("a", a.epoch, &a.owned));
    assert!(!wrote, "an unchanged heartbeat touched the log");
    assert_eq!(h.records.len(), records);
    assert_eq!(r.error, None);
    assert_eq!(r.assignment, None, "an unchanged assignment is null");
    assert_eq!(r.heartbeat_interval_ms, 5_000);
    assert_eq!(r.member_epoch, a.epoch);
    // The answer still re-armed the member's session on the leader.
    assert!(h.timers.contains_key(&TimerKey::MemberHeartbeat {
        group_id: GROUP.into(),
        member_id: "a".into()
    }));
}

#[test]
fn request_validation_answers_invalid_request_as_kafka_does() {
    let mut h = harness_with_orders(1);
    let cases = [
        (Hb::join("", &["orders"]), "MemberId can't be empty."),
        (
            Hb {
                rebalance_ms: -1,
                ..Hb::join("m", &["orders"])
            },
            "RebalanceTimeoutMs must be provided in first request.",
        ),
        (
            Hb {
                owned: Some(vec![(ORDERS, vec![0])]),
                ..Hb::join("m", &["orders"])
            },
            "TopicPartitions must be empty when (re-)joining.",
        ),
        (
            Hb {
                owned: None,
                ..Hb::join("m", &["orders"])
            },
            "TopicPartitions must be empty when (re-)joining.",
        ),
        (
            Hb::join("m", &[]),
            "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.",
        ),
        (
            Hb::join("m", &["orders"]).group(" "),
            "GroupId can't be empty.",
        ),
        (
            Hb::join("m", &["orders"]).instance(""),
            "InstanceId can't be empty.",
        ),
        (
            Hb::join("m", &["orders"]).epoch(-3),
            "MemberEpoch is invalid.",
        ),
        (
            Hb::join("m", &["orders"]).epoch(-2),
            "InstanceId can't be null.",
        ),
    ];
    for (hb, message) in cases {
        let r = h.cg_heartbeat(&hb);
        assert_eq!(r.error, Some(ErrorKind::InvalidRequest), "{hb:?}");
        assert_eq!(r.error_message.as_deref(), Some(message));
    }
    // v0 lets the coordinator mint the member id.
    let r = h.cg_heartbeat(&Hb::join("", &["orders"]).version(0));
    assert_eq!(r.error, None);
    assert_eq!(r.member_id.unwrap().as_str().len(), 36);
}

#[test]
fn an_unknown_assignor_is_unsupported_assignor() {
    let mut h = harness_with_orders(1);
    let r = h.cg_heartbeat(&Hb::join("m", &["orders"]).assignor("sticky"));
    assert_eq!(r.error, Some(ErrorKind::UnsupportedAssignor));
    let r = h.cg_heartbeat(&Hb::join("m", &["orders"]).assignor("range"));
    assert_eq!(r.error, None);
}

#[test]
fn unknown_groups_and_members() {
    let mut h = harness_with_orders(1);
    let r = h.cg_heartbeat(&Hb::beat("m", 3, &Assignment::new()));
    assert_eq!(r.error, Some(ErrorKind::GroupIdNotFound));
    Client::join(&mut h, "a", &["orders"]);
    let r = h.cg_heartbeat(&Hb::beat("stranger", 1, &Assignment::new()));
    assert_eq!(r.error, Some(ErrorKind::UnknownMemberId));
    let r = h.cg_heartbeat(&Hb::beat("stranger", -1, &Assignment::new()));
    assert_eq!(r.error, Some(ErrorKind::UnknownMemberId));
}

#[test]
fn member_epochs_fence_zombies() {
    let mut h = harness_with_orders(2);
    let mut a = Client::join(&mut h, "a", &["orders"]);
    a.beat(&mut h);
    let epoch = a.epoch;
    let r = h.cg_heartbeat(&Hb::beat("a", epoch + 1, &a.owned));
    assert_eq!(r.error, Some(ErrorKind::FencedMemberEpoch));
    // b joins: the group epoch moves, a moves to the new epoch.
    let _b = Client::join(&mut h, "b", &["orders"]);
    a.beat(&mut h);
    a.beat(&mut h);
    assert!(a.epoch > epoch);
    // Its previous epoch with a subset of what it owns: a lost response, accepted.
    let previous = h.cg(GROUP).current_of(&"a".into()).previous_member_epoch;
    let r = h.cg_heartbeat(&Hb::beat("a", previous, &a.owned));
    assert_eq!(r.error, None, "{r:?}");
    // Anything older is a zombie.
    let _c = Client::join(&mut h, "c", &["orders"]);
    a.beat(&mut h);
    a.beat(&mut h);
    assert!(h.cg(GROUP).current_of(&"a".into()).previous_member_epoch > previous);
    let r = h.cg_heartbeat(&Hb::beat("a", previous, &a.owned));
    assert_eq!(r.error, Some(ErrorKind::FencedMemberEpoch));
    // A fenced member rejoins with epoch 0 (KAFKA-19233).
    let r = h.cg_heartbeat(&Hb::join("a", &["orders"]));
    assert_eq!(r.error, None);
}

#[test]
fn static_members_leave_temporarily_and_come_back_to_their_partitions() {
    let mut h = harness_with_orders(4);
    let r = h.cg_heartbeat(&Hb::join("a1", &["orders"]).instance("host-a"));
    assert_eq!(r.error, None);
    let mut b = Client::join(&mut h, "b", &["orders"]);
    let mut a = Client {
        member: "a1".into(),
        epoch: r.member_epoch,
        owned: r.assignment.unwrap_or_default(),
    };
    let mut clients = [a, b];
    settle(&mut h, &mut clients);
    [a, b] = clients;
    let kept = a.owned.clone();
    assert_eq!(kept.len(), 2);

    // Another process with the same instance id while a1 is alive.
    let r = h.cg_heartbeat(&Hb::join("a2", &["orders"]).instance("host-a"));
    assert_eq!(r.error, Some(ErrorKind::UnreleasedInstanceId));
    // A heartbeat naming the instance with another member id.
    let r = h.cg_heartbeat(&Hb::beat("a2", 1, &Assignment::new()).instance("host-a"));
    assert_eq!(r.error, Some(ErrorKind::FencedInstanceId));
    let r = h.cg_heartbeat(&Hb::beat("a2", 1, &Assignment::new()).instance("host-z"));
    assert_eq!(r.error, Some(ErrorKind::UnknownMemberId));

    // a1 leaves temporarily (−2): nothing is reassigned.
    let epoch = h.cg(GROUP).group_epoch();
    let r = h.cg_heartbeat(
        &Hb::beat("a1", a.epoch, &a.owned)
            .instance("host-a")
            .epoch(-2),
    );
    assert_eq!((r.error, r.member_epoch), (None, -2));
    assert_eq!(h.cg(GROUP).group_epoch(), epoch);
    b.beat(&mut h);
    assert_eq!(b.owned.len(), 2, "b did not get a's partitions");
    // It restarts as a new member id with the same instance id: same partitions, no rebalance.
    let r = h.cg_heartbeat(&Hb::join("a2", &["orders"]).instance("host-a"));
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(r.assignment.as_ref(), Some(&kept));
    assert_eq!(h.cg(GROUP).group_epoch(), epoch);
    assert!(!h.cg(GROUP).members.contains_key(&MemberId::from("a1")));
    let _ = a;
}

#[test]
fn group_consumer_max_size_is_group_max_size_reached() {
    let mut h = Harness::with_config(Config {
        consumer_group_max_size: 2,
        ..Config::default()
    });
    h.topics_changed(&[("orders", ORDERS, 3)], &[]);
    Client::join(&mut h, "a", &["orders"]);
    Client::join(&mut h, "b", &["orders"]);
    let r = h.cg_heartbeat(&Hb::join("c", &["orders"]));
    assert_eq!(r.error, Some(ErrorKind::GroupMaxSizeReached));
    // A member already in the group still heartbeats.
    let r = h.cg_heartbeat(&Hb::join("a", &["orders"]));
    assert_eq!(r.error, None);
}

#[test]
fn a_regex_subscription_picks_up_topics_created_later_and_a_bad_one_is_refused() {
    let mut h = harness_with_orders(2);
    let r = h.cg_heartbeat(&Hb::join("m", &[]).regex("("));
    assert_eq!(r.error, Some(ErrorKind::InvalidRegularExpression));
    let r = h.cg_heartbeat(&Hb::join("m", &[]).regex("pay.*"));
    assert_eq!(r.error, None);
    assert_eq!(
        r.assignment,
        Some(Assignment::new()),
        "no topic matches yet"
    );
    let epoch = h.cg(GROUP).group_epoch();
    h.topics_changed(&[("payments", 7, 3)], &[]);
    assert_eq!(
        h.cg(GROUP).group_epoch(),
        epoch + 1,
        "a new matching topic bumps the epoch"
    );
    let mut m = Client {
        member: "m".into(),
        epoch: r.member_epoch,
        owned: Assignment::new(),
    };
    m.beat(&mut h);
    assert_eq!(m.owned, assignment(&[(7, 0), (7, 1), (7, 2)]));
    // A topic that does not match changes nothing.
    h.topics_changed(&[("audit", 8, 1)], &[]);
    assert_eq!(h.cg(GROUP).group_epoch(), epoch + 1);
}

#[test]
fn topics_grown_and_deleted_bump_the_epoch_and_move_partitions() {
    let mut h = harness_with_orders(2);
    let mut a = Client::join(&mut h, "a", &["orders"]);
    a.beat(&mut h);
    h.topics_changed(&[("orders", ORDERS, 4)], &[]);
    a.beat(&mut h);
    assert_eq!(a.owned.len(), 4);
    h.topics_changed(&[], &["orders"]);
    a.beat(&mut h);
    a.beat(&mut h);
    assert!(
        a.owned.is_empty(),
        "a deleted topic's partitions are revoked"
    );
}

#[test]
fn sessions_and_revocation_deadlines_fence_members() {
    let mut h = harness_with_orders(4);
    let mut a = Client::join(&mut h, "a", &["orders"]);
    a.beat(&mut h);
    let mut b = Client::join(&mut h, "b", &["orders"]);
    // a is asked to revoke and never does: its rebalance timeout (30 s) fences it, and b
    // gets everything.
    let r = h.cg_heartbeat(&Hb::beat("a", a.epoch, &a.owned));
    assert_eq!(
        h.cg(GROUP).current_of(&"a".into()).state,
        MemberState::UnrevokedPartitions
    );
    assert!(r.assignment.is_some());
    for _ in 0..4 {
        h.advance(9_000);
        b.beat(&mut h);
    }
    assert!(!h.cg(GROUP).members.contains_key(&MemberId::from("a")));
    b.beat(&mut h);
    assert_eq!(b.owned.len(), 4);
    // b stops heartbeating: after the session timeout (45 s) it is gone.
    h.advance(46_000);
    assert!(h.cg(GROUP).members.is_empty());
    assert_eq!(
        group::consumer::state(h.cg(GROUP)),
        ConsumerGroupState::Empty
    );
}

#[test]
fn a_leave_bumps_the_epoch_and_frees_the_members_partitions() {
    let mut h = harness_with_orders(4);
    let mut a = Client::join(&mut h, "a", &["orders"]);
    let mut b = Client::join(&mut h, "b", &["orders"]);
    let mut clients = [a, b];
    settle(&mut h, &mut clients);
    [a, b] = clients;
    let epoch = h.cg(GROUP).group_epoch();
    let r = h.cg_heartbeat(&Hb::beat("a", -1, &a.owned));
    assert_eq!((r.error, r.member_epoch), (None, -1));
    assert_eq!(h.cg(GROUP).group_epoch(), epoch + 1);
    b.beat(&mut h);
    assert_eq!(b.owned.len(), 4);
    let _ = a;
}

#[test]
fn offset_commits_are_fenced_by_member_epoch() {
    let mut h = harness_with_orders(1);
    let mut a = Client::join(&mut h, "a", &["orders"]);
    a.beat(&mut h);
    let commit = |h: &mut Harness, member: &str, epoch: i32, version: i16| {
        h.commit_with(CommitReq::new(member, epoch).version(version).offset(0, 42))[0].1
    };
    assert_eq!(commit(&mut h, "a", a.epoch, 9), None);
    assert_eq!(h.fetch(GROUP, 0), 42);
    assert_eq!(
        commit(&mut h, "a", a.epoch + 1, 9),
        Some(ErrorKind::StaleMemberEpoch)
    );
    assert_eq!(
        commit(&mut h, "stranger", a.epoch, 9),
        Some(ErrorKind::UnknownMemberId)
    );
    assert_eq!(
        commit(&mut h, "a", a.epoch, 8),
        Some(ErrorKind::UnsupportedVersion)
    );
    assert_eq!(commit(&mut h, "", -1, 9), Some(ErrorKind::UnknownMemberId));
    assert_eq!(h.fetch(GROUP, 0), 42, "nothing rejected became visible");
    // OffsetFetch v9 with a member epoch.
    let fetch = |h: &mut Harness, member: Option<&str>, epoch: i32| {
        let out = h.read(ReadCommand::FetchOffsets(FetchOffsets {
            api_version: ApiVersion(9),
            groups: vec![FetchGroup {
                group_id: GROUP.into(),
                topics: None,
                member_id: member.map(MemberId::from),
                member_epoch: epoch,
            }],
            require_stable: true,
        }));
        let Reply::Fetch(r) = out.reply else { panic!() };
        r.groups[0].error
    };
    assert_eq!(fetch(&mut h, Some("a"), a.epoch), None);
    assert_eq!(
        fetch(&mut h, Some("a"), a.epoch - 1),
        Some(ErrorKind::StaleMemberEpoch)
    );
    assert_eq!(
        fetch(&mut h, Some("z"), a.epoch),
        Some(ErrorKind::UnknownMemberId)
    );
    assert_eq!(fetch(&mut h, None, -1), None);
    // Once empty, an admin commit goes through.
    h.cg_heartbeat(&Hb::beat("a", -1, &a.owned));
    assert_eq!(commit(&mut h, "", -1, 9), None);
}

#[test]
fn admin_apis_see_consumer_groups() {
    let mut h = harness_with_orders(2);
    let mut a = Client::join(&mut h, "a", &["orders"]);
    a.beat(&mut h);
    let out = h.read(ReadCommand::ListGroups(ListGroups {
        api_version: ApiVersion(5),
        states_filter: vec![],
        types_filter: vec!["consumer".into()],
    }));
    let Reply::ListGroups(listed) = out.reply else {
        panic!()
    };
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].group_type.as_str(), listed[0].state_name.as_str()),
        ("consumer", "Stable")
    );
    let out = h.read(ReadCommand::ListGroups(ListGroups {
        api_version: ApiVersion(5),
        states_filter: vec![],
        types_filter: vec!["classic".into()],
    }));
    assert_eq!(out.reply, Reply::ListGroups(vec![]));

    let out = h.read(ReadCommand::DescribeConsumerGroups(
        DescribeConsumerGroups {
            api_version: ApiVersion(1),
            group_ids: vec![GROUP.into(), "nope".into()],
        },
    ));
    let Reply::DescribeConsumerGroups(d) = out.reply else {
        panic!()
    };
    assert_eq!(d[0].state, ConsumerGroupState::Stable);
    assert_eq!(d[0].members[0].assignment[0].topic_name, "orders");
    assert_eq!(d[0].assignor_name, "uniform");
    assert_eq!(d[1].error, Some(ErrorKind::GroupIdNotFound));

    // The classic APIs: DescribeGroups sees no classic group; a JoinGroup is a classic member
    // joining the consumer group (online migration, `tests/migration.rs`): a v5 dynamic one is
    // first given its id, and nothing is written.
    let out = h.read(ReadCommand::DescribeGroups(DescribeGroups {
        api_version: ApiVersion(6),
        group_ids: vec![GROUP.into()],
    }));
    let Reply::DescribeGroups(d) = out.reply else {
        panic!()
    };
    assert_eq!(
        (d[0].error, d[0].state),
        (Some(ErrorKind::GroupIdNotFound), GroupState::Dead)
    );
    let out = h.join(JoinReq::new(""));
    let Reply::Join(j) = out.reply else { panic!() };
    assert_eq!(j.error, Some(ErrorKind::MemberIdRequired));
    assert!(out.records.is_empty());

    let delete = |h: &mut Harness| {
        let out = h.write(WriteCommand::DeleteGroups(DeleteGroups {
            api_version: ApiVersion(2),
            now_ms: h.now_ms(),
            group_ids: vec![GROUP.into()],
        }));
        let Reply::DeleteGroups(r) = out.reply else {
            panic!()
        };
        r[0].1
    };
    assert_eq!(delete(&mut h), Err(ErrorKind::NonEmptyGroup));
    h.cg_heartbeat(&Hb::beat("a", -1, &a.owned));
    assert_eq!(delete(&mut h), Ok(()));
    assert!(h.state.consumer_group(&GROUP.into()).is_none());
    // The id is free for a classic group again.
    let classic = h.join_new(JoinReq::new(""));
    // And a consumer heartbeat upgrades a classic group with members online (Kafka 4.0's
    // default policy; the rules are `tests/migration.rs`'s): the classic member stays.
    let r = h.cg_heartbeat(&Hb::join("x", &["orders"]));
    assert_eq!(r.error, None);
    assert!(h.cg(GROUP).uses_classic(&MemberId::from(classic.as_str())));
}

#[test]
fn large_groups_are_assigned_off_the_request_path() {
    let mut h = Harness::with_config(Config {
        consumer_inline_assignment_max_cost: 0,
        ..Config::default()
    });
    h.topics_changed(&[("orders", ORDERS, 4)], &[]);
    // The group's first assignment is computed inline whatever its size.
    let mut first = Client::join(&mut h, "first", &["orders"]);
    first.beat(&mut h);
    assert_eq!(first.owned.len(), 4);
    let command = h.command_of(&Hb::join("a", &["orders"]));
    let HeartbeatPath::Write(write) = h.state.consumer_heartbeat(command) else {
        panic!("a join writes")
    };
    let out = h.write(write);
    assert_eq!(
        out.assignments,
        vec![AssignmentNeeded {
            group_id: GROUP.into(),
            epoch: 2
        }]
    );
    assert_eq!(
        group::consumer::state(h.cg(GROUP)),
        ConsumerGroupState::Assigning
    );
    let job = h.state.assignment_job(&GROUP.into()).unwrap();
    let install = job.run(h.now_ms());
    // A result for an older epoch, or one that assigns a partition twice, is ignored.
    let mut stale = install.clone();
    stale.epoch = 1;
    h.write(WriteCommand::InstallTargetAssignment(stale));
    let mut twice = install.clone();
    twice.members.push(("a".into(), assignment(&[(ORDERS, 0)])));
    let before = h.records.len();
    h.write(WriteCommand::InstallTargetAssignment(twice));
    assert_eq!(h.records.len(), before);
    h.write(WriteCommand::InstallTargetAssignment(install));
    assert_eq!(h.cg(GROUP).assignment_epoch(), 2);
    let Reply::ConsumerGroupHeartbeat(joined) = out.reply else {
        panic!()
    };
    assert_eq!(
        joined.member_epoch, 1,
        "the newcomer waits at the assignment epoch"
    );
    let mut a = Client {
        member: "a".into(),
        epoch: joined.member_epoch,
        owned: Assignment::new(),
    };
    let mut clients = [first, a];
    settle(&mut h, &mut clients);
    [first, a] = clients;
    assert_eq!((first.owned.len(), a.owned.len()), (2, 2));
}

#[test]
fn a_follower_restored_from_a_snapshot_continues_reconciliation() {
    let mut h = harness_with_orders(6);
    let mut a = Client::join(&mut h, "a", &["orders"]);
    let _b = Client::join(&mut h, "b", &["orders"]);
    a.beat(&mut h);
    h.add_follower_from_snapshot();
    // The follower applies the rest itself and must stay equal (the harness checks).
    let mut b = Client {
        member: "b".into(),
        epoch: h.cg(GROUP).current_of(&"b".into()).member_epoch,
        owned: Assignment::new(),
    };
    let mut clients = [a, b];
    settle(&mut h, &mut clients);
    [a, b] = clients;
    assert_eq!(a.owned.len() + b.owned.len(), 6);
    // A new leader arms every member's session and the deadlines of members revoking.
    let timers = h.state.timers_to_arm(h.now_ms());
    assert!(timers.iter().any(|t| matches!(t, TimerOp::Set { key: TimerKey::MemberHeartbeat { member_id, .. }, .. } if member_id.as_str() == "b")));
}
