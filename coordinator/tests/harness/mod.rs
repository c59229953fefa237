//! A scenario harness around `CoordinatorState`: a fake clock, the leader's timer wheel,
//! and, after every step, the check that replaying every record emitted so far (and the log
//! compacted to the latest record per key) rebuilds exactly the live state.

#![allow(dead_code)]

use bytes::Bytes;
use coordinator::*;
use std::borrow::Cow;
use std::collections::BTreeMap;

pub const GROUP: &str = "g";
pub const TOPIC: &str = "orders";

pub mod consumer;

/// The latest record per key, in the order of their last write: what `compaction` keeps.
pub fn compact(records: &[Record]) -> Vec<Record> {
    let mut last: BTreeMap<RecordKey, usize> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        last.insert(r.key(), i);
    }
    let mut keep: Vec<usize> = last.into_values().collect();
    keep.sort_unstable();
    keep.into_iter()
        .map(|i| records[i].clone())
        .filter(|r| !r.is_tombstone())
        .collect()
}

pub fn replay_all(config: &Config, records: &[Record]) -> CoordinatorState {
    let mut state = CoordinatorState::new(config.clone());
    for r in records {
        state.replay(r);
    }
    state
}

/// A consumer subscription for `topics`, as ConsumerProtocol v0 encodes it.
pub fn subscription(topics: &[&str]) -> Bytes {
    Bytes::from(coordinator::subscription::encode_v0(topics))
}

/// A JoinGroup request with a consumer's usual fields; adjust what a test needs.
#[derive(Clone, Debug)]
pub struct JoinReq {
    pub version: i16,
    pub group: String,
    pub member: String,
    pub instance: Option<String>,
    pub session_ms: i32,
    pub rebalance_ms: i32,
    pub protocol_type: String,
    pub protocols: Vec<(String, Bytes)>,
    pub client_id: String,
}

impl JoinReq {
    pub fn new(member: &str) -> JoinReq {
        JoinReq {
            version: 5,
            group: GROUP.to_owned(),
            member: member.to_owned(),
            instance: None,
            session_ms: 10_000,
            rebalance_ms: 30_000,
            protocol_type: "consumer".to_owned(),
            protocols: vec![("range".to_owned(), subscription(&[TOPIC]))],
            client_id: "client".to_owned(),
        }
    }
    pub fn version(mut self, v: i16) -> Self {
        self.version = v;
        self
    }
    pub fn instance(mut self, i: &str) -> Self {
        self.instance = Some(i.to_owned());
        self
    }
    pub fn session(mut self, ms: i32) -> Self {
        self.session_ms = ms;
        self
    }
    pub fn rebalance(mut self, ms: i32) -> Self {
        self.rebalance_ms = ms;
        self
    }
    pub fn protocols(mut self, p: &[(&str, Bytes)]) -> Self {
        self.protocols = p
            .iter()
            .map(|(n, m)| ((*n).to_owned(), m.clone()))
            .collect();
        self
    }
    pub fn protocol_type(mut self, t: &str) -> Self {
        self.protocol_type = t.to_owned();
        self
    }
    pub fn group(mut self, g: &str) -> Self {
        self.group = g.to_owned();
        self
    }
}

pub struct Harness {
    pub state: CoordinatorState,
    pub config: Config,
    pub now: i64,
    pub records: Vec<Record>,
    /// The leader's armed timers.
    pub timers: BTreeMap<TimerKey, TimestampMs>,
    /// Every member reply delivered so far, in order.
    pub member_replies: Vec<MemberReply>,
    /// Replicas restored from a snapshot of this state at some point, which then apply every
    /// later command themselves: they must stay equal to the live state.
    pub followers: Vec<CoordinatorState>,
    nonce: u128,
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with_config(Config::default())
    }

    pub fn with_config(config: Config) -> Harness {
        Harness {
            state: CoordinatorState::new(config.clone()),
            config,
            now: 1_000_000,
            records: Vec::new(),
            timers: BTreeMap::new(),
            member_replies: Vec::new(),
            followers: Vec::new(),
            nonce: 0,
        }
    }

    pub fn now_ms(&self) -> TimestampMs {
        TimestampMs(self.now)
    }

    pub fn arm_ops(&mut self, ops: &[TimerOp]) {
        self.arm(ops);
    }

    pub fn nonce_bump(&mut self) {
        self.nonce += 1;
    }

    pub fn nonce(&self) -> u128 {
        self.nonce
    }

    fn arm(&mut self, ops: &[TimerOp]) {
        for op in ops {
            match op {
                TimerOp::Set { key, at_ms } => {
                    self.timers.insert(key.clone(), *at_ms);
                }
                TimerOp::Cancel { key } => {
                    self.timers.remove(key);
                }
                TimerOp::SetIfAbsent { key, at_ms } => {
                    self.timers.entry(key.clone()).or_insert(*at_ms);
                }
            }
        }
    }

    /// Applies a write command as every replica does, then checks replay equality.
    pub fn write(&mut self, command: WriteCommand) -> Outcome {
        let outcome = self.state.decide(&command);
        for r in &outcome.records {
            self.state.replay(r);
        }
        self.records.extend(outcome.records.iter().cloned());
        self.arm(&outcome.timers);
        self.member_replies
            .extend(outcome.member_replies.iter().cloned());
        for follower in &mut self.followers {
            let theirs = follower.apply(&command);
            assert_eq!(
                theirs.reply, outcome.reply,
                "a follower decided another reply"
            );
            assert_eq!(*follower, self.state, "a follower diverged");
        }
        self.check_replay();
        self.check_ownership();
        outcome
    }

    /// Alters a group's config overrides as every replica does (the replicated command's
    /// apply), recording the record it writes, then checks replay equality.
    pub fn alter_group_configs(
        &mut self,
        c: &coordinator::group_config::AlterGroupConfigs,
    ) -> Result<coordinator::group_config::GroupConfigs, coordinator::group_config::GroupConfigError>
    {
        let before = self.state.group_configs(&c.group_id).cloned();
        let result = self.state.alter_group_configs(c);
        if let Ok(next) = &result {
            self.records.extend(coordinator::group_config::record(
                before.as_ref(),
                &c.group_id,
                next.clone(),
            ));
        }
        for follower in &mut self.followers {
            assert_eq!(
                follower.alter_group_configs(c),
                result,
                "a follower decided otherwise"
            );
            assert_eq!(*follower, self.state, "a follower diverged");
        }
        self.check_replay();
        result
    }

    /// Starts a follower from an encoded snapshot of the current state.
    pub fn add_follower_from_snapshot(&mut self) {
        let encoded: Vec<(Vec<u8>, Vec<u8>)> = self
            .state
            .snapshot_records()
            .map(|r| (r.encode_key(), r.encode_value()))
            .collect();
        let follower = CoordinatorState::from_encoded(
            self.config.clone(),
            encoded.iter().map(|(k, v)| (k.as_slice(), v.as_slice())),
        )
        .expect("a snapshot decodes");
        assert_eq!(follower, self.state);
        self.followers.push(follower);
    }

    pub fn read(&mut self, command: ReadCommand) -> ReadOutcome {
        let outcome = self.state.read(&command);
        self.arm(&outcome.timers);
        outcome
    }

    /// `state(apply commands) == state(replay records) == state(replay compacted records)`.
    pub fn check_replay(&self) {
        let replayed = replay_all(&self.config, &self.records);
        assert_eq!(replayed, self.state, "replaying every record diverged");
        let compacted = replay_all(&self.config, &compact(&self.records));
        assert_eq!(
            compacted, self.state,
            "replaying the compacted log diverged"
        );
        let snapshot: Vec<Record> = self.state.snapshot_records().collect();
        assert_eq!(
            replay_all(&self.config, &snapshot),
            self.state,
            "snapshot diverged"
        );
        for r in &self.records {
            let decoded = Record::decode(&r.encode_key(), &r.encode_value()).expect("decodes");
            assert_eq!(&decoded, r, "record codec round trip");
        }
    }

    /// Moves the clock, firing due timers in deadline order as the leader would.
    pub fn advance(&mut self, ms: i64) {
        let target = self.now + ms;
        for firing in 0.. {
            assert!(firing < 100_000, "timers keep firing: a busy loop");
            let due = self
                .timers
                .iter()
                .filter(|(_, at)| at.0 <= target)
                .min_by_key(|(k, at)| (**at, (*k).clone()))
                .map(|(k, at)| (k.clone(), *at));
            let Some((key, at)) = due else { break };
            self.timers.remove(&key);
            self.now = self.now.max(at.0);
            self.write(WriteCommand::TimerFired {
                key,
                now_ms: self.now_ms(),
            });
        }
        self.now = target;
    }

    pub fn join(&mut self, req: JoinReq) -> Outcome {
        self.nonce += 1;
        let command = WriteCommand::JoinGroup(JoinGroup {
            api_version: ApiVersion(req.version),
            now_ms: self.now_ms(),
            nonce: self.nonce,
            group_id: GroupId::from(req.group.as_str()),
            member_id: MemberId::from(req.member.as_str()),
            group_instance_id: req.instance.as_deref().map(GroupInstanceId::from),
            session_timeout_ms: req.session_ms,
            rebalance_timeout_ms: req.rebalance_ms,
            protocol_type: req.protocol_type.clone(),
            protocols: req
                .protocols
                .iter()
                .map(|(name, metadata)| JoinProtocol {
                    name: name.clone(),
                    metadata: metadata.clone(),
                })
                .collect(),
            client_id: req.client_id.clone(),
            client_host: "/127.0.0.1".to_owned(),
            reason: None,
        });
        let out = self.write(command);
        // Log a direct answer like a member reply, so tests read every join response alike.
        if let Reply::Join(r) = &out.reply {
            let member = if req.member.is_empty() {
                r.member_id.clone()
            } else {
                MemberId::from(req.member.as_str())
            };
            self.member_replies.push(MemberReply {
                group_id: GroupId::from(req.group.as_str()),
                member_id: member,
                kind: ParkedKind::Join,
                reply: out.reply.clone(),
            });
        }
        out
    }

    /// A v5 dynamic member's two-step join: MEMBER_ID_REQUIRED, then the rejoin that parks.
    /// Returns the minted member id.
    pub fn join_new(&mut self, req: JoinReq) -> String {
        let first = self.join(req.clone());
        let Reply::Join(response) = &first.reply else {
            panic!("expected a join reply, got {:?}", first.reply)
        };
        assert_eq!(response.error, Some(ErrorKind::MemberIdRequired));
        let member = response.member_id.as_str().to_owned();
        let second = self.join(JoinReq {
            member: member.clone(),
            ..req
        });
        assert!(
            matches!(second.reply, Reply::Parked { .. } | Reply::Join(_)),
            "{:?}",
            second.reply
        );
        member
    }

    pub fn sync(
        &mut self,
        member: &str,
        generation: i32,
        assignments: &[(&str, &[u8])],
    ) -> Outcome {
        self.sync_full(GROUP, member, None, generation, None, None, assignments)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn sync_full(
        &mut self,
        group: &str,
        member: &str,
        instance: Option<&str>,
        generation: i32,
        protocol_type: Option<&str>,
        protocol_name: Option<&str>,
        assignments: &[(&str, &[u8])],
    ) -> Outcome {
        let command = WriteCommand::SyncGroup(SyncGroup {
            api_version: ApiVersion(5),
            now_ms: self.now_ms(),
            group_id: group.into(),
            generation: Generation(generation),
            member_id: member.into(),
            group_instance_id: instance.map(GroupInstanceId::from),
            protocol_type: protocol_type.map(str::to_owned),
            protocol_name: protocol_name.map(str::to_owned),
            assignments: assignments
                .iter()
                .map(|(m, a)| SyncAssignment {
                    member_id: (*m).into(),
                    assignment: Bytes::copy_from_slice(a),
                })
                .collect(),
        });
        let out = self.write(command);
        if let Reply::Sync(_) = &out.reply {
            self.member_replies.push(MemberReply {
                group_id: GroupId::from(group),
                member_id: MemberId::from(member),
                kind: ParkedKind::Sync,
                reply: out.reply.clone(),
            });
        }
        out
    }

    /// The SyncGroup response a member got last.
    pub fn last_sync_response(&self, member: &str) -> SyncResponse {
        match self.replies_to(member, ParkedKind::Sync).pop() {
            Some(Reply::Sync(r)) => r,
            other => panic!("no sync response for {member}: {other:?}"),
        }
    }

    pub fn heartbeat(&mut self, member: &str, generation: i32) -> Result<(), ErrorKind> {
        self.heartbeat_full(GROUP, member, None, generation)
    }

    pub fn heartbeat_full(
        &mut self,
        group: &str,
        member: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> Result<(), ErrorKind> {
        let out = self.read(ReadCommand::Heartbeat(Heartbeat {
            api_version: ApiVersion(4),
            now_ms: self.now_ms(),
            group_id: group.into(),
            generation: Generation(generation),
            member_id: member.into(),
            group_instance_id: instance.map(GroupInstanceId::from),
        }));
        match out.reply {
            Reply::Heartbeat(r) => r,
            other => panic!("expected a heartbeat reply, got {other:?}"),
        }
    }

    pub fn leave(&mut self, members: &[(&str, Option<&str>)]) -> LeaveResponse {
        let out = self.write(WriteCommand::LeaveGroup(LeaveGroup {
            api_version: ApiVersion(5),
            now_ms: self.now_ms(),
            group_id: GROUP.into(),
            members: members
                .iter()
                .map(|(m, i)| LeavingMember {
                    member_id: (*m).into(),
                    group_instance_id: i.map(GroupInstanceId::from),
                    reason: None,
                })
                .collect(),
        }));
        match out.reply {
            Reply::Leave(r) => r,
            other => panic!("expected a leave reply, got {other:?}"),
        }
    }

    /// Commits one offset on `TOPIC` partition 0 and returns that partition's error.
    pub fn commit(&mut self, member: &str, generation: i32, offset: i64) -> Option<ErrorKind> {
        self.commit_with(CommitReq::new(member, generation).offset(0, offset))
            .into_iter()
            .next()
            .and_then(|(_, e)| e)
    }

    pub fn commit_with(&mut self, req: CommitReq) -> Vec<(PartitionIndex, Option<ErrorKind>)> {
        let out = self.write(WriteCommand::CommitOffsets(CommitOffsets {
            api_version: ApiVersion(req.version),
            now_ms: self.now_ms(),
            group_id: req.group.as_str().into(),
            generation: Generation(req.generation),
            member_id: req.member.as_str().into(),
            group_instance_id: req.instance.as_deref().map(GroupInstanceId::from),
            retention_time_ms: req.retention_ms,
            topics: vec![CommitTopic {
                name: req.topic.as_str().into(),
                partitions: req.partitions.clone(),
            }],
        }));
        match out.reply {
            Reply::Commit(r) => r.topics.into_iter().flat_map(|(_, p)| p).collect(),
            other => panic!("expected a commit reply, got {other:?}"),
        }
    }

    /// The committed offset of `TOPIC`/`partition`, −1 when none.
    pub fn fetch(&mut self, group: &str, partition: i32) -> i64 {
        self.fetch_stable(group, partition).0
    }

    /// OffsetFetch of `TOPIC`/`partition` with `require_stable`: (offset, partition error).
    pub fn fetch_stable(&mut self, group: &str, partition: i32) -> (i64, Option<ErrorKind>) {
        let out = self.read(ReadCommand::FetchOffsets(FetchOffsets {
            api_version: ApiVersion(8),
            groups: vec![FetchGroup {
                group_id: group.into(),
                topics: Some(vec![FetchTopic {
                    name: TOPIC.into(),
                    partitions: vec![PartitionIndex(partition)],
                }]),
                member_id: None,
                member_epoch: -1,
            }],
            require_stable: true,
        }));
        let Reply::Fetch(r) = out.reply else {
            panic!("expected a fetch reply")
        };
        let p = &r.groups[0].topics[0].partitions[0];
        (p.offset.0, p.error)
    }

    pub fn group(&self) -> Cow<'_, ClassicGroup> {
        self.state.group(&GROUP.into()).expect("group exists")
    }

    pub fn generation(&self) -> i32 {
        self.group().generation.0
    }

    pub fn group_state(&self) -> GroupState {
        self.group().state
    }

    /// Member replies addressed to `member` so far.
    pub fn replies_to(&self, member: &str, kind: ParkedKind) -> Vec<Reply> {
        self.member_replies
            .iter()
            .filter(|r| r.member_id.as_str() == member && r.kind == kind)
            .map(|r| r.reply.clone())
            .collect()
    }

    /// The JoinGroup response a member got, from the request itself or a member reply.
    pub fn last_join_response(&self, member: &str) -> JoinResponse {
        match self.replies_to(member, ParkedKind::Join).pop() {
            Some(Reply::Join(r)) => r,
            other => panic!("no join response for {member}: {other:?}"),
        }
    }

    /// Advances through the initial-rebalance delay, which every join re-arms.
    pub fn finish_initial_delay(&mut self) {
        for _ in 0..100 {
            if self.group_state() != GroupState::PreparingRebalance {
                return;
            }
            self.advance(i64::from(self.config.initial_rebalance_delay_ms));
        }
    }

    /// Forms a Stable group of dynamic members (v5 joins, initial delay, leader assigns).
    /// Returns (member ids in join order, generation).
    pub fn stable_group(&mut self, n: usize) -> (Vec<String>, i32) {
        let mut members = Vec::new();
        for _ in 0..n {
            members.push(self.join_new(JoinReq::new("")));
        }
        self.finish_initial_delay();
        assert_eq!(self.group_state(), GroupState::CompletingRebalance);
        let generation = self.generation();
        let leader = self
            .group()
            .leader
            .clone()
            .expect("leader")
            .as_str()
            .to_owned();
        let assignment: Vec<(String, Vec<u8>)> = members
            .iter()
            .map(|m| (m.clone(), format!("assignment-of-{m}").into_bytes()))
            .collect();
        for m in &members {
            if *m != leader {
                self.sync(m, generation, &[]);
            }
        }
        let refs: Vec<(&str, &[u8])> = assignment
            .iter()
            .map(|(m, a)| (m.as_str(), a.as_slice()))
            .collect();
        self.sync(&leader, generation, &refs);
        assert_eq!(self.group_state(), GroupState::Stable);
        (members, generation)
    }
}

/// An OffsetCommit for `TOPIC`.
#[derive(Clone, Debug)]
pub struct CommitReq {
    pub version: i16,
    pub group: String,
    pub member: String,
    pub instance: Option<String>,
    pub generation: i32,
    pub retention_ms: i64,
    pub topic: String,
    pub partitions: Vec<CommitPartition>,
}

impl CommitReq {
    pub fn new(member: &str, generation: i32) -> CommitReq {
        CommitReq {
            version: 8,
            group: GROUP.to_owned(),
            member: member.to_owned(),
            instance: None,
            generation,
            retention_ms: -1,
            topic: TOPIC.to_owned(),
            partitions: Vec::new(),
        }
    }
    pub fn admin() -> CommitReq {
        CommitReq::new("", -1)
    }
    pub fn offset(mut self, partition: i32, offset: i64) -> Self {
        self.partitions.push(CommitPartition {
            partition: PartitionIndex(partition),
            offset: Offset(offset),
            leader_epoch: LeaderEpoch(-1),
            metadata: None,
            partition_known: true,
        });
        self
    }
    pub fn metadata(mut self, partition: i32, offset: i64, metadata: &str) -> Self {
        self.partitions.push(CommitPartition {
            partition: PartitionIndex(partition),
            offset: Offset(offset),
            leader_epoch: LeaderEpoch(3),
            metadata: Some(metadata.to_owned()),
            partition_known: true,
        });
        self
    }
    pub fn unknown_partition(mut self, partition: i32, offset: i64) -> Self {
        self.partitions.push(CommitPartition {
            partition: PartitionIndex(partition),
            offset: Offset(offset),
            leader_epoch: LeaderEpoch(-1),
            metadata: None,
            partition_known: false,
        });
        self
    }
    pub fn version(mut self, v: i16) -> Self {
        self.version = v;
        self
    }
    pub fn group(mut self, g: &str) -> Self {
        self.group = g.to_owned();
        self
    }
    pub fn instance(mut self, i: &str) -> Self {
        self.instance = Some(i.to_owned());
        self
    }
    pub fn topic(mut self, t: &str) -> Self {
        self.topic = t.to_owned();
        self
    }
    pub fn retention(mut self, ms: i64) -> Self {
        self.retention_ms = ms;
        self
    }
}
