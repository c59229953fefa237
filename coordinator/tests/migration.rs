//! Online migration between the classic and the consumer protocol (Kafka 4.x,
//! `group.consumer.migration.policy`), rule by rule, on the scenario harness: every step
//! replays, compacts and checks that no partition is held by two members; a follower started
//! from a snapshot before the migration applies every command itself and must stay equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use bytes::Bytes;
use coordinator::*;
use harness::consumer::*;
use harness::*;

const ORDERS: u128 = 1;

fn config(policy: MigrationPolicy) -> Config {
    Config {
        consumer_migration_policy: policy,
        ..Config::default()
    }
}

fn harness(policy: MigrationPolicy) -> Harness {
    let mut h = Harness::with_config(config(policy));
    h.topics_changed(&[(TOPIC, ORDERS, 6)], &[]);
    h
}

/// A ConsumerProtocol assignment of `orders` partitions.
fn orders(partitions: &[i32]) -> Vec<u8> {
    subscription::encode_assignment(0, &[(TOPIC, partitions)])
}

fn decoded(bytes: &[u8]) -> Vec<i32> {
    subscription::decode_assignment(bytes)
        .unwrap()
        .into_iter()
        .flat_map(|(_, p)| p)
        .collect()
}

/// A Stable classic group of two librdkafka-like members on `orders` (0-2 and 3-5).
/// Returns (member ids, generation).
fn classic_pair(h: &mut Harness) -> (Vec<String>, i32) {
    let a = h.join_new(JoinReq::new(""));
    let b = h.join_new(JoinReq::new(""));
    h.finish_initial_delay();
    let generation = h.generation();
    let leader = h.group().leader.clone().unwrap().as_str().to_owned();
    let follower = if leader == a { b.clone() } else { a.clone() };
    h.sync(&follower, generation, &[]);
    let (la, lb) = (orders(&[0, 1, 2]), orders(&[3, 4, 5]));
    h.sync(
        &leader,
        generation,
        &[
            (leader.as_str(), la.as_slice()),
            (follower.as_str(), lb.as_slice()),
        ],
    );
    assert_eq!(h.group_state(), GroupState::Stable);
    (vec![leader, follower], generation)
}

fn join_reply(out: &Outcome) -> JoinResponse {
    match &out.reply {
        Reply::Join(r) => r.clone(),
        other => panic!("expected a join reply, got {other:?}"),
    }
}

fn sync_reply(out: &Outcome) -> SyncResponse {
    match &out.reply {
        Reply::Sync(r) => r.clone(),
        other => panic!("expected a sync reply, got {other:?}"),
    }
}

/// A classic member of a consumer group rejoins and syncs; returns (generation, partitions).
fn classic_rejoin(h: &mut Harness, member: &str) -> (i32, Vec<i32>) {
    let join = join_reply(&h.join(JoinReq::new(member)));
    assert_eq!(join.error, None, "{join:?}");
    assert_eq!(
        join.leader,
        MemberId::default(),
        "no classic leader assigns"
    );
    assert!(join.members.is_empty());
    let generation = join.generation.0;
    let sync = sync_reply(&h.sync_full(
        GROUP,
        member,
        None,
        generation,
        Some("consumer"),
        Some("range"),
        &[],
    ));
    assert_eq!(sync.error, None, "{sync:?}");
    (generation, decoded(&sync.assignment))
}

/// A consumer-protocol client that owns what its last answer assigned.
struct Client {
    member: String,
    epoch: i32,
    owned: Assignment,
}

impl Client {
    fn join(h: &mut Harness, member: &str) -> Client {
        let r = h.cg_heartbeat(&Hb::join(member, &[TOPIC]));
        assert_eq!(r.error, None, "{r:?}");
        let mut c = Client {
            member: member.to_owned(),
            epoch: 0,
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

    fn beat(&mut self, h: &mut Harness) {
        let r = h.cg_heartbeat(&Hb::beat(&self.member, self.epoch, &self.owned));
        assert_eq!(r.error, None, "{r:?}");
        self.take(&r);
    }
}

fn upgraded(h: &mut Harness) -> (Vec<String>, i32, Client) {
    let (classic, generation) = classic_pair(h);
    let client = Client::join(h, "c1");
    (classic, generation, client)
}

#[test]
fn a_consumer_member_joining_a_classic_group_upgrades_it_keeping_the_classic_assignment() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (classic, generation) = classic_pair(&mut h);
    h.add_follower_from_snapshot();
    let client = Client::join(&mut h, "c1");
    assert!(
        h.state.group(&GROUP.into()).is_none(),
        "the classic record is gone"
    );
    let cg = h.cg(GROUP);
    assert_eq!(cg.members.len(), 3);
    assert_eq!(
        cg.group_epoch(),
        generation + 1,
        "the joining subscription bumps it"
    );
    for (m, partitions) in classic.iter().zip([[0, 1, 2], [3, 4, 5]]) {
        let id = MemberId::from(m.as_str());
        assert!(cg.uses_classic(&id));
        let current = cg.current_of(&id);
        assert_eq!(current.member_epoch, generation);
        let held: Vec<i32> = current.assigned.iter().map(|(_, p)| p.0).collect();
        assert_eq!(held, partitions, "the classic assignment is kept");
    }
    // The newcomer waits for partitions the classic members still hold.
    assert!(client.owned.is_empty());
    let described = h.read(ReadCommand::DescribeConsumerGroups(
        DescribeConsumerGroups {
            api_version: ApiVersion(1),
            group_ids: vec![GROUP.into()],
        },
    ));
    let Reply::DescribeConsumerGroups(groups) = described.reply else {
        panic!("expected a describe reply")
    };
    let classic_flags: Vec<bool> = groups[0]
        .members
        .iter()
        .map(|m| m.uses_classic_protocol)
        .collect();
    assert_eq!(classic_flags.iter().filter(|c| **c).count(), 2);
}

#[test]
fn classic_members_rejoin_to_the_server_side_assignment_and_everything_is_owned_once() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (classic, generation, mut client) = upgraded(&mut h);
    // Their heartbeats say the group moved on.
    for m in &classic {
        assert_eq!(
            h.heartbeat(m, generation),
            Err(ErrorKind::RebalanceInProgress)
        );
    }
    let mut held = Vec::new();
    for _ in 0..4 {
        held.clear();
        for m in &classic {
            let (_, partitions) = classic_rejoin(&mut h, m);
            held.extend(partitions);
        }
        client.beat(&mut h);
    }
    let epoch = h.cg(GROUP).group_epoch();
    for m in &classic {
        assert_eq!(
            h.cg(GROUP)
                .current_of(&MemberId::from(m.as_str()))
                .member_epoch,
            epoch
        );
        let current_generation = h
            .cg(GROUP)
            .current_of(&MemberId::from(m.as_str()))
            .member_epoch;
        assert_eq!(h.heartbeat(m, current_generation), Ok(()), "reconciled");
    }
    held.extend(client.owned.iter().map(|(_, p)| p.0));
    held.sort_unstable();
    assert_eq!(
        held,
        vec![0, 1, 2, 3, 4, 5],
        "every partition owned exactly once"
    );
    assert_eq!(
        client.owned.len(),
        2,
        "uniform gives each of three members two"
    );
}

#[test]
fn classic_members_commit_with_their_generation_and_a_stale_one_is_illegal_generation() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (classic, generation, _client) = upgraded(&mut h);
    // OffsetCommit v8 from a classic member: its generation is its member epoch.
    assert_eq!(
        h.commit_with(
            CommitReq::new(&classic[0], generation)
                .version(8)
                .offset(0, 42)
        ),
        vec![(PartitionIndex(0), None)]
    );
    assert_eq!(h.fetch(GROUP, 0), 42);
    assert_eq!(
        h.commit_with(
            CommitReq::new(&classic[0], generation - 1)
                .version(8)
                .offset(0, 43)
        ),
        vec![(PartitionIndex(0), Some(ErrorKind::IllegalGeneration))]
    );
    // A consumer-protocol member below v9 is still refused.
    assert_eq!(
        h.commit_with(CommitReq::new("c1", 0).version(8).offset(0, 44)),
        vec![(PartitionIndex(0), Some(ErrorKind::UnsupportedVersion))]
    );
    assert_eq!(h.fetch(GROUP, 0), 42);
}

fn refused(h: &mut Harness) -> ConsumerHeartbeatResponse {
    h.cg_heartbeat(&Hb::join("c1", &[TOPIC]))
}

#[test]
fn the_upgrade_is_refused_with_group_id_not_found_when_the_policy_forbids_it() {
    for policy in [MigrationPolicy::Disabled, MigrationPolicy::Downgrade] {
        let mut h = harness(policy);
        classic_pair(&mut h);
        let r = refused(&mut h);
        assert_eq!(r.error, Some(ErrorKind::GroupIdNotFound), "{policy:?}");
        assert_eq!(
            r.error_message.as_deref(),
            Some("Cannot upgrade classic group g to consumer group because online upgrade is disabled.")
        );
        assert_eq!(
            h.group_state(),
            GroupState::Stable,
            "the classic group is untouched"
        );
    }
}

#[test]
fn the_upgrade_is_refused_for_a_group_not_using_the_consumer_protocol() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    h.join_new(
        JoinReq::new("")
            .protocol_type("connect")
            .protocols(&[("sessioned", Bytes::from_static(b"worker"))]),
    );
    let r = refused(&mut h);
    assert_eq!(r.error, Some(ErrorKind::GroupIdNotFound));
    assert_eq!(
        r.error_message.as_deref(),
        Some("Cannot upgrade classic group g to consumer group because the group does not use the consumer embedded protocol.")
    );
}

#[test]
fn the_upgrade_is_refused_past_the_consumer_group_max_size() {
    let mut h = Harness::with_config(Config {
        consumer_group_max_size: 1,
        ..Config::default()
    });
    h.topics_changed(&[(TOPIC, ORDERS, 6)], &[]);
    classic_pair(&mut h);
    let r = refused(&mut h);
    assert_eq!(r.error, Some(ErrorKind::GroupIdNotFound));
    assert_eq!(
        r.error_message.as_deref(),
        Some("Cannot upgrade classic group g to consumer group because the group size exceeds the consumer group maximum size.")
    );
}

#[test]
fn the_upgrade_is_refused_when_the_embedded_protocol_is_malformed() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    h.join_new(JoinReq::new("").protocols(&[("range", Bytes::from_static(b"\xff"))]));
    let r = refused(&mut h);
    assert_eq!(r.error, Some(ErrorKind::GroupIdNotFound));
    assert_eq!(
        r.error_message.as_deref(),
        Some("Cannot upgrade classic group g to consumer group because the embedded consumer protocol is malformed.")
    );
}

#[test]
fn parked_classic_requests_are_told_to_rejoin_when_the_group_upgrades() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let a = h.join_new(JoinReq::new(""));
    // Still in the initial delay: a's JoinGroup is parked.
    assert_eq!(h.group_state(), GroupState::PreparingRebalance);
    let command = h.command_of(&Hb::join("c1", &[TOPIC]));
    let out = h.write(WriteCommand::ConsumerGroupHeartbeat(command));
    assert!(out.member_replies.iter().any(|r| r.member_id.as_str() == a
        && matches!(&r.reply, Reply::Join(j) if j.error == Some(ErrorKind::RebalanceInProgress))));
    assert!(h.cg(GROUP).uses_classic(&MemberId::from(a.as_str())));
}

#[test]
fn a_classic_join_to_a_consumer_group_follows_kafkas_checks() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let _client = Client::join(&mut h, "c1");
    // v5 without a member id: MEMBER_ID_REQUIRED with a minted id, nothing written.
    let first = join_reply(&h.join(JoinReq::new("")));
    assert_eq!(first.error, Some(ErrorKind::MemberIdRequired));
    let minted = first.member_id.as_str().to_owned();
    assert!(!h.cg(GROUP).members.contains_key(&first.member_id));
    // Another protocol type: INCONSISTENT_GROUP_PROTOCOL.
    let other = join_reply(&h.join(JoinReq::new(&minted).protocol_type("connect")));
    assert_eq!(other.error, Some(ErrorKind::InconsistentGroupProtocol));
    let (generation, _) = classic_rejoin(&mut h, &minted);
    // SyncGroup and Heartbeat at another generation: ILLEGAL_GENERATION.
    let stale = sync_reply(&h.sync_full(GROUP, &minted, None, generation + 7, None, None, &[]));
    assert_eq!(stale.error, Some(ErrorKind::IllegalGeneration));
    assert_eq!(
        h.heartbeat(&minted, generation + 7),
        Err(ErrorKind::IllegalGeneration)
    );
    // Another protocol name than its join's: INCONSISTENT_GROUP_PROTOCOL.
    let renamed = sync_reply(&h.sync_full(
        GROUP,
        &minted,
        None,
        generation,
        Some("consumer"),
        Some("roundrobin"),
        &[],
    ));
    assert_eq!(renamed.error, Some(ErrorKind::InconsistentGroupProtocol));
    // Unknown members, and a consumer-protocol member speaking classic: UNKNOWN_MEMBER_ID.
    assert_eq!(h.heartbeat("nobody", 1), Err(ErrorKind::UnknownMemberId));
    assert_eq!(h.heartbeat("c1", 1), Err(ErrorKind::UnknownMemberId));
    // A second member on a protocol the classic member lacks: INCONSISTENT_GROUP_PROTOCOL.
    let odd =
        join_reply(&h.join(JoinReq::new("x").protocols(&[("roundrobin", subscription(&[TOPIC]))])));
    assert_eq!(odd.error, Some(ErrorKind::InconsistentGroupProtocol));
}

#[test]
fn a_static_classic_member_is_fenced_by_instance_id() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let _client = Client::join(&mut h, "c1");
    let join = join_reply(&h.join(JoinReq::new("").instance("i1")));
    assert_eq!(join.error, None, "a static member gets its id at once");
    let id = join.member_id.as_str().to_owned();
    assert_eq!(
        h.heartbeat_full(GROUP, "someone-else", Some("i1"), join.generation.0),
        Err(ErrorKind::FencedInstanceId)
    );
    assert_eq!(
        h.heartbeat_full(GROUP, &id, Some("i2"), join.generation.0),
        Err(ErrorKind::UnknownMemberId)
    );
    let other = join_reply(&h.join(JoinReq::new("someone-else").instance("i1")));
    assert_eq!(other.error, Some(ErrorKind::FencedInstanceId));
}

#[test]
fn with_the_policy_disabled_no_classic_member_joins_a_consumer_group() {
    // KAFKA-20640: neither direction allowed, so a group never becomes mixed.
    let mut h = harness(MigrationPolicy::Disabled);
    let _client = Client::join(&mut h, "c1");
    let r = join_reply(&h.join(JoinReq::new("")));
    assert_eq!(r.error, Some(ErrorKind::InconsistentGroupProtocol));
    // Under `upgrade` a classic member may still join (it may be rejoining mid-upgrade).
    let mut h = harness(MigrationPolicy::Upgrade);
    let _client = Client::join(&mut h, "c1");
    let r = join_reply(&h.join(JoinReq::new("").version(3)));
    assert_eq!(r.error, None, "{r:?}");
}

#[test]
fn a_classic_member_leaving_a_mixed_group_bumps_the_epoch() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (classic, _, _client) = upgraded(&mut h);
    let epoch = h.cg(GROUP).group_epoch();
    let out = h.leave(&[(classic[0].as_str(), None), ("nobody", None), ("c1", None)]);
    let errors: Vec<Option<ErrorKind>> = out.members.iter().map(|m| m.error).collect();
    assert_eq!(
        errors,
        vec![
            None,
            Some(ErrorKind::UnknownMemberId),
            Some(ErrorKind::UnknownMemberId)
        ],
        "a consumer-protocol member cannot leave through LeaveGroup"
    );
    let cg = h.cg(GROUP);
    assert_eq!(cg.group_epoch(), epoch + 1);
    assert_eq!(cg.members.len(), 2);
}

#[test]
fn the_last_consumer_member_leaving_downgrades_the_group_and_it_rebalances_as_classic() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (classic, old_generation, client) = upgraded(&mut h);
    h.add_follower_from_snapshot();
    let epoch = h.cg(GROUP).group_epoch();
    let r = h.cg_heartbeat(&Hb::beat(&client.member, client.epoch, &client.owned).epoch(-1));
    assert_eq!(r.error, None, "{r:?}");
    assert_eq!(r.member_epoch, -1);
    assert!(h.state.consumer_group(&GROUP.into()).is_none());
    let group = h.group();
    assert_eq!(group.state, GroupState::PreparingRebalance);
    assert_eq!(group.generation.0, epoch);
    assert_eq!(group.members.len(), 2);
    assert_eq!(group.protocol_name.as_deref(), Some("range"));
    // The members learn of the rebalance by heartbeat (at the generation they last joined,
    // ILLEGAL_GENERATION; at the group's, REBALANCE_IN_PROGRESS) and rejoin.
    for m in &classic {
        assert_eq!(
            h.heartbeat(m, old_generation),
            Err(ErrorKind::IllegalGeneration)
        );
        assert_eq!(h.heartbeat(m, epoch), Err(ErrorKind::RebalanceInProgress));
    }
    for m in &classic {
        h.join(JoinReq::new(m));
    }
    assert_eq!(h.group_state(), GroupState::CompletingRebalance);
    assert_eq!(h.generation(), epoch + 1);
}

#[test]
fn a_fenced_last_consumer_member_downgrades_the_group_too() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (classic, _, _client) = upgraded(&mut h);
    // The consumer member stops heartbeating; the classic ones keep theirs alive, and rejoin
    // when told to (else their join deadline would fence them first).
    for _ in 0..6 {
        h.advance(8_000);
        for m in &classic {
            let generation = match h.state.consumer_group(&GROUP.into()) {
                Some(cg) => cg.current_of(&MemberId::from(m.as_str())).member_epoch,
                None => h.generation(),
            };
            let told = h.heartbeat(m, generation);
            if told == Err(ErrorKind::RebalanceInProgress)
                && h.state.consumer_group(&GROUP.into()).is_some()
            {
                classic_rejoin(&mut h, m);
            }
        }
    }
    assert!(
        h.state.consumer_group(&GROUP.into()).is_none(),
        "downgraded"
    );
    assert_eq!(h.group().members.len(), 2);
}

#[test]
fn without_downgrade_in_the_policy_the_group_stays_a_consumer_group() {
    let mut h = harness(MigrationPolicy::Upgrade);
    let (_, _, client) = upgraded(&mut h);
    let r = h.cg_heartbeat(&Hb::beat(&client.member, client.epoch, &client.owned).epoch(-1));
    assert_eq!(r.error, None);
    let cg = h.cg(GROUP);
    assert_eq!(cg.members.len(), 2);
    assert_eq!(cg.classic_member_count(), 2);
}

#[test]
fn empty_groups_change_protocol_whatever_the_policy() {
    // Kafka: "conversions of empty groups in both directions are always enabled regardless of
    // this policy".
    let mut h = harness(MigrationPolicy::Disabled);
    let (classic, _) = classic_pair(&mut h);
    let left = h.leave(&[(classic[0].as_str(), None), (classic[1].as_str(), None)]);
    assert!(left.members.iter().all(|m| m.error.is_none()), "{left:?}");
    assert_eq!(h.group_state(), GroupState::Empty);
    let client = Client::join(&mut h, "c1");
    assert_eq!(
        h.cg(GROUP).members.len(),
        1,
        "the empty classic group was replaced"
    );
    let r = h.cg_heartbeat(&Hb::beat(&client.member, client.epoch, &client.owned).epoch(-1));
    assert_eq!(r.error, None);
    let out = h.join(JoinReq::new("").version(3));
    assert!(
        matches!(out.reply, Reply::Parked { .. }),
        "a classic join replaces the empty consumer group: {:?}",
        out.reply
    );
    assert!(h.state.consumer_group(&GROUP.into()).is_none());
    assert_eq!(h.group().members.len(), 1);
}

// ---- Join and sync deadlines of classic members (Kafka's `consumerGroupJoinKey`,
// `consumerGroupSyncKey`), the downgrade by a static replacement, malformed subscriptions.

fn epoch_of(h: &Harness, member: &str) -> i32 {
    h.cg(GROUP).current_of(&MemberId::from(member)).member_epoch
}

fn join_key(member: &str, member_epoch: i32) -> TimerKey {
    TimerKey::ClassicMemberJoin {
        group_id: GROUP.into(),
        member_id: member.into(),
        member_epoch,
    }
}

fn sync_key(member: &str, member_epoch: i32) -> TimerKey {
    TimerKey::ClassicMemberSync {
        group_id: GROUP.into(),
        member_id: member.into(),
        member_epoch,
    }
}

/// Moves the clock by `ms` in 5 s steps, keeping alive the consumer-protocol `client` and the
/// classic `members` (each rejoining when told to); `idle` only heartbeats, never rejoining.
fn keep_alive(h: &mut Harness, ms: i64, client: &mut Client, members: &[&str], idle: &[&str]) {
    let mut left = ms;
    while left > 0 {
        let step = left.min(5_000);
        h.advance(step);
        left -= step;
        client.beat(h);
        for m in members {
            let epoch = epoch_of(h, m);
            if h.heartbeat(m, epoch) == Err(ErrorKind::RebalanceInProgress) {
                classic_rejoin(h, m);
            }
        }
        for m in idle {
            if h.cg(GROUP).members.contains_key(&MemberId::from(*m)) {
                let epoch = epoch_of(h, m);
                let _ = h.heartbeat(m, epoch);
            }
        }
    }
}

/// A mixed group where classic member `a` has just been told to rejoin (and `b` has caught
/// up). Returns (a, b, the consumer client, a's epoch when told).
fn told_to_rejoin(h: &mut Harness) -> (String, String, Client, i32) {
    let (classic, _, client) = upgraded(h);
    let (a, b) = (classic[0].clone(), classic[1].clone());
    classic_rejoin(h, &b);
    let told_at = epoch_of(h, &a);
    assert_eq!(
        h.heartbeat(&a, told_at),
        Err(ErrorKind::RebalanceInProgress)
    );
    (a, b, client, told_at)
}

#[test]
fn a_classic_member_told_to_rejoin_that_does_not_is_fenced_at_its_rebalance_timeout() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (a, b, mut client, told_at) = told_to_rejoin(&mut h);
    let key = join_key(&a, told_at);
    let deadline = h.timers[&key];
    assert_eq!(deadline.0, h.now + 30_000, "its rebalance timeout");
    // Told again, by heartbeat or SyncGroup: the deadline does not move (armed if absent).
    h.advance(4_000);
    assert_eq!(
        h.heartbeat(&a, told_at),
        Err(ErrorKind::RebalanceInProgress)
    );
    let sync = sync_reply(&h.sync_full(GROUP, &a, None, told_at, None, None, &[]));
    assert_eq!(sync.error, Some(ErrorKind::RebalanceInProgress));
    assert_eq!(h.timers[&key], deadline);
    // Its session stays alive; its join deadline does not.
    let until = deadline.0 - 1 - h.now;
    keep_alive(&mut h, until, &mut client, &[&b], &[&a]);
    assert!(h
        .cg(GROUP)
        .members
        .contains_key(&MemberId::from(a.as_str())));
    let epoch = h.cg(GROUP).group_epoch();
    let fired = h.write(WriteCommand::TimerFired {
        key: key.clone(),
        now_ms: TimestampMs(deadline.0),
    });
    assert!(!fired.records.is_empty());
    let cg = h.cg(GROUP);
    assert!(
        !cg.members.contains_key(&MemberId::from(a.as_str())),
        "fenced"
    );
    assert_eq!(cg.group_epoch(), epoch + 1, "the group epoch moves on");
    assert_eq!(cg.members.len(), 2);
    assert!(
        !h.timers.keys().any(
            |k| matches!(k, TimerKey::MemberHeartbeat { member_id, .. } if member_id.as_str() == a)
        ),
        "its timers end with it"
    );
}

#[test]
fn a_classic_member_that_rejoins_in_time_cancels_its_join_deadline_and_a_stale_firing_is_a_no_op() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (a, b, mut client, told_at) = told_to_rejoin(&mut h);
    let key = join_key(&a, told_at);
    assert!(h.timers.contains_key(&key));
    h.advance(3_000);
    classic_rejoin(&mut h, &a);
    assert!(!h.timers.contains_key(&key), "its JoinGroup cancels it");
    assert_ne!(epoch_of(&h, &a), told_at, "it moved to the group's epoch");
    keep_alive(&mut h, 40_000, &mut client, &[&a, &b], &[]);
    assert_eq!(h.cg(GROUP).members.len(), 3, "nobody was fenced");
    // A firing of the deadline it met (the member has left that epoch) changes nothing.
    let stale = h.write(WriteCommand::TimerFired {
        key,
        now_ms: h.now_ms(),
    });
    assert!(stale.records.is_empty(), "{:?}", stale.records);
    assert_eq!(h.cg(GROUP).members.len(), 3);
    // Nor does one for a member that has left the group.
    let epoch = epoch_of(&h, &a);
    h.leave(&[(a.as_str(), None)]);
    let gone = h.write(WriteCommand::TimerFired {
        key: join_key(&a, epoch),
        now_ms: h.now_ms(),
    });
    assert!(gone.records.is_empty());
}

#[test]
fn a_new_leader_re_arms_the_join_deadline_of_classic_members_told_to_rejoin_but_no_sync_deadline() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (a, b, _client, told_at) = told_to_rejoin(&mut h);
    let replica = replay_all(&h.config, &h.records);
    let later = TimestampMs(h.now + 7);
    let timers = replica.timers_to_arm(later);
    assert!(timers.contains(&TimerOp::SetIfAbsent {
        key: join_key(&a, told_at),
        at_ms: TimestampMs(later.0 + 30_000),
    }));
    assert!(
        !timers
            .iter()
            .any(|t| matches!(t.key(), TimerKey::ClassicMemberJoin { member_id, .. } if member_id.as_str() == b)),
        "b is up to date"
    );
    assert!(
        !timers
            .iter()
            .any(|t| matches!(t.key(), TimerKey::ClassicMemberSync { .. })),
        "whether a member has synced is not in the state"
    );
}

/// A consumer group of one consumer-protocol member, joined by a classic member (JoinGroup
/// v3: no MEMBER_ID_REQUIRED round). Returns (client, the classic member, its generation).
fn joined_not_synced(h: &mut Harness) -> (Client, String, i32) {
    let client = Client::join(h, "c1");
    let join = join_reply(&h.join(JoinReq::new("").version(3)));
    assert_eq!(join.error, None, "{join:?}");
    (
        client,
        join.member_id.as_str().to_owned(),
        join.generation.0,
    )
}

#[test]
fn a_classic_member_that_joins_and_never_syncs_is_fenced_at_its_rebalance_timeout() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (mut client, m, generation) = joined_not_synced(&mut h);
    let key = sync_key(&m, generation);
    let deadline = h.timers[&key];
    assert_eq!(deadline.0, h.now + 30_000);
    let until = deadline.0 - 1 - h.now;
    keep_alive(&mut h, until, &mut client, &[], &[&m]);
    assert!(h
        .cg(GROUP)
        .members
        .contains_key(&MemberId::from(m.as_str())));
    let epoch = h.cg(GROUP).group_epoch();
    h.advance(1);
    let cg = h.cg(GROUP);
    assert!(
        !cg.members.contains_key(&MemberId::from(m.as_str())),
        "fenced"
    );
    assert_eq!(cg.group_epoch(), epoch + 1);
}

#[test]
fn a_classic_member_that_syncs_cancels_its_sync_deadline_and_a_stale_firing_is_a_no_op() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (mut client, m, generation) = joined_not_synced(&mut h);
    let key = sync_key(&m, generation);
    h.advance(2_000);
    let sync = sync_reply(&h.sync_full(GROUP, &m, None, generation, None, None, &[]));
    assert_eq!(sync.error, None, "{sync:?}");
    assert!(!h.timers.contains_key(&key), "its SyncGroup cancels it");
    keep_alive(&mut h, 40_000, &mut client, &[&m], &[]);
    assert!(h
        .cg(GROUP)
        .members
        .contains_key(&MemberId::from(m.as_str())));
    // A sync deadline of an epoch the member has since left changes nothing.
    let now = epoch_of(&h, &m);
    let stale = h.write(WriteCommand::TimerFired {
        key: sync_key(&m, now - 1),
        now_ms: h.now_ms(),
    });
    assert!(stale.records.is_empty());
}

#[test]
fn a_static_classic_member_replacing_the_last_consumer_member_downgrades_the_group() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    let (classic, _) = classic_pair(&mut h);
    let r = h.cg_heartbeat(&Hb::join("c1", &[TOPIC]).instance("i1"));
    assert_eq!(r.error, None);
    // The classic members catch up, so the consumer member gets its share.
    for m in &classic {
        classic_rejoin(&mut h, m);
    }
    let mut client = Client {
        member: "c1".into(),
        epoch: r.member_epoch,
        owned: r.assignment.clone().unwrap_or_default(),
    };
    for _ in 0..3 {
        client.beat(&mut h);
        for m in &classic {
            let e = epoch_of(&h, m);
            if h.heartbeat(m, e) == Err(ErrorKind::RebalanceInProgress) {
                classic_rejoin(&mut h, m);
            }
        }
    }
    let cg = h.cg(GROUP).clone();
    let target: Vec<i32> = cg
        .target_of(&MemberId::from("c1"))
        .iter()
        .map(|(_, p)| p.0)
        .collect();
    assert!(!target.is_empty(), "c1 has partitions");
    h.add_follower_from_snapshot();
    // c1 restarts with the classic protocol under its instance id.
    let join = join_reply(&h.join(JoinReq::new("").instance("i1")));
    assert_eq!(join.error, None, "{join:?}");
    assert!(
        h.state.consumer_group(&GROUP.into()).is_none(),
        "downgraded"
    );
    let group = h.group();
    assert_eq!(
        group.state,
        GroupState::Stable,
        "the same subscription: no rebalance (KAFKA-20273)"
    );
    assert_eq!(group.generation.0, cg.group_epoch());
    assert_eq!(
        join.generation.0,
        cg.group_epoch(),
        "reconciled to the target"
    );
    assert_eq!(group.members.len(), 3);
    assert!(!group.members.contains_key(&MemberId::from("c1")));
    let joined = &group.members[&join.member_id];
    assert_eq!(
        joined.group_instance_id.as_ref().map(|i| i.as_str()),
        Some("i1")
    );
    let mut got = decoded(&joined.assignment);
    got.sort();
    let mut want = target.clone();
    want.sort();
    assert_eq!(got, want, "it takes the replaced member's target");
    // It syncs with the classic group at the generation it was given.
    let sync = sync_reply(&h.sync_full(
        GROUP,
        join.member_id.as_str(),
        Some("i1"),
        join.generation.0,
        Some("consumer"),
        Some("range"),
        &[],
    ));
    assert_eq!(sync.error, None, "{sync:?}");
    let mut synced = decoded(&sync.assignment);
    synced.sort();
    assert_eq!(synced, want);
}

#[test]
fn a_static_replacement_with_another_subscription_downgrades_into_a_rebalance() {
    let mut h = harness(MigrationPolicy::Bidirectional);
    h.topics_changed(&[("audit", 2, 2)], &[]);
    classic_pair(&mut h);
    let r = h.cg_heartbeat(&Hb::join("c1", &[TOPIC]).instance("i1"));
    assert_eq!(r.error, None);
    let epoch = h.cg(GROUP).group_epoch();
    let join = join_reply(
        &h.join(
            JoinReq::new("")
                .instance("i1")
                .protocols(&[("range", subscription(&[TOPIC, "audit"]))]),
        ),
    );
    assert_eq!(join.error, None, "{join:?}");
    assert_eq!(join.generation.0, 0, "not reconciled: the group rebalances");
    assert!(h.state.consumer_group(&GROUP.into()).is_none());
    let group = h.group();
    assert_eq!(group.state, GroupState::PreparingRebalance);
    assert_eq!(group.generation.0, epoch, "the epoch before the join");
}

#[test]
fn without_downgrade_in_the_policy_a_static_replacement_keeps_the_consumer_group() {
    let mut h = harness(MigrationPolicy::Upgrade);
    classic_pair(&mut h);
    let r = h.cg_heartbeat(&Hb::join("c1", &[TOPIC]).instance("i1"));
    assert_eq!(r.error, None);
    let join = join_reply(&h.join(JoinReq::new("").instance("i1")));
    assert_eq!(join.error, None, "{join:?}");
    let cg = h.cg(GROUP);
    assert_eq!(cg.members.len(), 3);
    assert_eq!(
        cg.classic_member_count(),
        3,
        "all classic, still a consumer group"
    );
    assert!(!cg.members.contains_key(&MemberId::from("c1")));
}

#[test]
fn a_malformed_classic_subscription_is_inconsistent_group_protocol_once_the_member_is_known() {
    // KAFKA-20662 (apache/kafka #22580): INCONSISTENT_GROUP_PROTOCOL, not the
    // UNKNOWN_SERVER_ERROR of the IllegalStateException before it.
    let mut h = harness(MigrationPolicy::Bidirectional);
    let _client = Client::join(&mut h, "c1");
    let garbage = Bytes::from_static(&[0, 1, 0, 0, 0, 9, b'x']);
    let r = join_reply(
        &h.join(
            JoinReq::new("")
                .version(3)
                .protocols(&[("range", garbage.clone())]),
        ),
    );
    assert_eq!(r.error, Some(ErrorKind::InconsistentGroupProtocol));
    assert_eq!(
        r.member_id,
        MemberId::default(),
        "a thrown error names no member"
    );
    assert_eq!(h.cg(GROUP).members.len(), 1, "nothing written");
    // The member is resolved first: an unknown instance's answer wins.
    let r = join_reply(
        &h.join(
            JoinReq::new("ghost")
                .instance("nobody")
                .protocols(&[("range", garbage)]),
        ),
    );
    assert_eq!(r.error, Some(ErrorKind::UnknownMemberId));
}

#[test]
fn with_the_policy_disabled_no_classic_member_joins_or_replaces_one_in_a_consumer_group() {
    // KAFKA-20640 (apache/kafka #22457): `throwIfClassicMemberCannotJoinConsumerGroup`,
    // before any other check, for new, rejoining and replacing members alike.
    let mut h = harness(MigrationPolicy::Disabled);
    let r = h.cg_heartbeat(&Hb::join("c1", &[TOPIC]).instance("i1"));
    assert_eq!(r.error, None);
    for req in [
        JoinReq::new(""),
        JoinReq::new("").instance("i2"),
        JoinReq::new("").instance("i1"),
        JoinReq::new("c1"),
    ] {
        let r = join_reply(&h.join(req));
        assert_eq!(r.error, Some(ErrorKind::InconsistentGroupProtocol));
        assert_eq!(r.member_id, MemberId::default());
    }
    let cg = h.cg(GROUP);
    assert_eq!(cg.members.len(), 1);
    assert_eq!(cg.classic_member_count(), 0);
}

// ---- KAFKA-20272: classic members are told to rejoin only once a newer target assignment
// exists, not while the group epoch runs ahead of a target computed off the request path.

/// A mixed group assigned off the request path, every member reconciled: returns the two
/// classic members, the consumer client and the group's epoch (= the assignment epoch).
fn mixed_assigned_off_path(h: &mut Harness) -> (Vec<String>, Client, i32) {
    let (classic, _, mut client) = upgraded(h);
    for _ in 0..4 {
        for m in &classic {
            let epoch = epoch_of(h, m);
            if h.heartbeat(m, epoch) == Err(ErrorKind::RebalanceInProgress) {
                classic_rejoin(h, m);
            }
        }
        client.beat(h);
    }
    let epoch = h.cg(GROUP).group_epoch();
    assert_eq!(h.cg(GROUP).assignment_epoch(), epoch);
    for m in &classic {
        assert_eq!(epoch_of(h, m), epoch, "{m} reconciled");
    }
    (classic, client, epoch)
}

/// A consumer-protocol member joins; its target is left to compute (the runtime's part).
fn join_leaving_the_assignment_pending(h: &mut Harness, member: &str) -> Vec<AssignmentNeeded> {
    let command = h.command_of(&Hb::join(member, &[TOPIC]));
    let HeartbeatPath::Write(write) = h.state.consumer_heartbeat(command) else {
        panic!("a join writes")
    };
    let out = h.write(write);
    assert!(!out.assignments.is_empty(), "assigned off the request path");
    out.assignments
}

fn off_path_harness() -> Harness {
    let mut h = Harness::with_config(Config {
        consumer_migration_policy: MigrationPolicy::Bidirectional,
        consumer_inline_assignment_max_cost: 0,
        ..Config::default()
    });
    h.topics_changed(&[(TOPIC, ORDERS, 6)], &[]);
    h
}

#[test]
fn a_classic_heartbeat_is_told_to_rejoin_only_once_the_new_target_assignment_exists() {
    let mut h = off_path_harness();
    let (classic, _client, epoch) = mixed_assigned_off_path(&mut h);
    let a = classic[0].clone();
    let pending = join_leaving_the_assignment_pending(&mut h, "c2");
    let cg = h.cg(GROUP);
    assert_eq!(cg.group_epoch(), epoch + 1);
    assert_eq!(
        cg.assignment_epoch(),
        epoch,
        "the target is not computed yet"
    );
    // Kafka 4.3 (KAFKA-20272): the member is at the assignment epoch, nothing to rejoin for.
    assert_eq!(h.heartbeat(&a, epoch), Ok(()));
    assert!(
        !h.timers.contains_key(&join_key(&a, epoch)),
        "no join deadline while nothing is asked of it"
    );
    h.run_assignments(&pending);
    assert_eq!(h.cg(GROUP).assignment_epoch(), epoch + 1);
    assert_eq!(
        h.heartbeat(&a, epoch),
        Err(ErrorKind::RebalanceInProgress),
        "told once the new target exists"
    );
    assert!(h.timers.contains_key(&join_key(&a, epoch)));
    let (generation, _) = classic_rejoin(&mut h, &a);
    assert_eq!(generation, epoch + 1);
}

#[test]
fn a_classic_sync_is_told_to_rejoin_only_once_the_new_target_assignment_exists() {
    let mut h = off_path_harness();
    let (classic, _client, epoch) = mixed_assigned_off_path(&mut h);
    let a = classic[0].clone();
    let held = h
        .cg(GROUP)
        .current_of(&MemberId::from(a.as_str()))
        .assigned
        .clone();
    let pending = join_leaving_the_assignment_pending(&mut h, "c2");
    let sync =
        sync_reply(&h.sync_full(GROUP, &a, None, epoch, Some("consumer"), Some("range"), &[]));
    assert_eq!(sync.error, None, "{sync:?}");
    let mut got = decoded(&sync.assignment);
    got.sort_unstable();
    let mut expected: Vec<i32> = held.iter().map(|(_, p)| p.0).collect();
    expected.sort_unstable();
    assert_eq!(got, expected, "what it holds, at the epoch it holds it");
    assert!(!h.timers.contains_key(&join_key(&a, epoch)));
    h.run_assignments(&pending);
    let sync =
        sync_reply(&h.sync_full(GROUP, &a, None, epoch, Some("consumer"), Some("range"), &[]));
    assert_eq!(sync.error, Some(ErrorKind::RebalanceInProgress));
    assert!(h.timers.contains_key(&join_key(&a, epoch)));
}
