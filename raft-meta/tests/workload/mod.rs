//! A fixed workload of Cohort commands that touches every command kind: the fixtures under
//! `tests/testdata/` were written by running it, and the format tests replay it to know what
//! a fixture must restore to.
//!
//! It must stay deterministic and must not change: the fixtures pin what it produced.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use bytes::Bytes;
use coordinator::{
    ApiVersion, CommitOffsets, CommitPartition, CommitTopic, DeleteGroups, DeleteOffsets,
    DeleteTopic, Generation, GroupId, GroupInstanceId, JoinGroup, JoinProtocol, LeaderEpoch,
    LeaveGroup, LeavingMember, MemberId, Offset, PartitionIndex, SyncAssignment, SyncGroup,
    TimerKey, TimestampMs, TopicName, WriteCommand,
};
use raft_meta::app::Application;
use raft_meta::cohort_app::{Body, CohortApp, Envelope, RequestToken, TopicLimits, TopicMeta};
use raft_meta::LogIndex;

pub const T0: i64 = 1_700_000_000_000;

/// The workload in three phases: the fixture snapshots after the first and the second.
pub struct Workload {
    pub phases: [Vec<Envelope>; 3],
}

impl Workload {
    pub fn all(&self) -> impl Iterator<Item = &Envelope> {
        self.phases.iter().flatten()
    }
}

fn token(seq: u64) -> Option<RequestToken> {
    Some(RequestToken {
        node: 1,
        incarnation: 0x0123_4567_89ab_cdef,
        seq,
    })
}

fn topic(name: &str, id: u128, partitions: usize, configs: &[(&str, &str)]) -> TopicMeta {
    TopicMeta {
        name: name.to_owned(),
        id,
        partitions: (0..partitions).map(|p| vec![1, 2 + p as i32]).collect(),
        configs: configs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// JoinGroup v3 for dynamic members (no MEMBER_ID_REQUIRED round), v5 for static ones.
fn join(group: &str, member: &str, instance: Option<&str>, nonce: u128, now: i64) -> WriteCommand {
    WriteCommand::JoinGroup(JoinGroup {
        api_version: ApiVersion(if instance.is_some() { 5 } else { 3 }),
        now_ms: TimestampMs(now),
        nonce,
        group_id: GroupId::new(group),
        member_id: MemberId::new(member),
        group_instance_id: instance.map(GroupInstanceId::new),
        session_timeout_ms: 10_000,
        rebalance_timeout_ms: 30_000,
        protocol_type: "consumer".to_owned(),
        protocols: vec![
            JoinProtocol {
                name: "range".to_owned(),
                metadata: Bytes::from_static(b"\x00\x01sub-range"),
            },
            JoinProtocol {
                name: "roundrobin".to_owned(),
                metadata: Bytes::from_static(b"\x00\x01sub-rr"),
            },
        ],
        client_id: "fixture-client".to_owned(),
        client_host: "/127.0.0.1".to_owned(),
        reason: Some("fixture".to_owned()),
    })
}

fn commit(
    group: &str,
    generation: i32,
    member: &str,
    now: i64,
    offsets: &[(&str, i32, i64)],
) -> WriteCommand {
    let mut topics: Vec<CommitTopic> = Vec::new();
    for (t, p, o) in offsets {
        let partition = CommitPartition {
            partition: PartitionIndex(*p),
            offset: Offset(*o),
            leader_epoch: LeaderEpoch(3),
            metadata: Some(format!("meta-{o}")),
            partition_known: true,
        };
        match topics.iter_mut().find(|x| x.name.as_str() == *t) {
            Some(x) => x.partitions.push(partition),
            None => topics.push(CommitTopic {
                name: TopicName::new(*t),
                partitions: vec![partition],
            }),
        }
    }
    WriteCommand::CommitOffsets(CommitOffsets {
        api_version: ApiVersion(8),
        now_ms: TimestampMs(now),
        group_id: GroupId::new(group),
        generation: Generation(generation),
        member_id: MemberId::new(member),
        group_instance_id: None,
        retention_time_ms: -1,
        topics,
    })
}

/// Applies `body` to `app` (so later commands can name what earlier ones created) and pushes
/// the envelope.
struct Builder {
    app: CohortApp,
    out: Vec<Envelope>,
    seq: u64,
}

impl Builder {
    fn push(&mut self, with_origin: bool, body: Body) {
        self.seq += 1;
        let origin = if with_origin { token(self.seq) } else { None };
        let envelope = Envelope { origin, body };
        let command = CohortApp::decode(&envelope.encode()).unwrap();
        let _ = self.app.apply(LogIndex(self.seq), command);
        self.out.push(envelope);
    }

    fn group(&mut self, with_origin: bool, command: WriteCommand) {
        self.push(with_origin, Body::Group(command));
    }

    fn members(&self, group: &str) -> Vec<MemberId> {
        self.app
            .coordinator()
            .group(&GroupId::new(group))
            .map(|g| g.members.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn generation(&self, group: &str) -> Generation {
        self.app
            .coordinator()
            .group(&GroupId::new(group))
            .map_or(Generation::NONE, |g| g.generation)
    }

    fn phase(&mut self) -> Vec<Envelope> {
        std::mem::take(&mut self.out)
    }
}

pub fn new_app() -> CohortApp {
    CohortApp::new(coordinator::Config::default(), TopicLimits::default(), None)
}

pub fn build() -> Workload {
    let mut b = Builder {
        app: new_app(),
        out: Vec::new(),
        seq: 0,
    };

    // Phase 1: the cluster, topics, a stable group with offsets.
    b.push(
        false,
        Body::InitCluster {
            cluster_id: "fixture-cluster-Q2xlYW4".to_owned(),
        },
    );
    b.push(
        true,
        Body::CreateTopics {
            topics: vec![
                topic(
                    "orders",
                    0x0011_2233_4455_6677_8899_aabb_ccdd_eeff,
                    2,
                    &[("cleanup.policy", "compact"), ("retention.ms", "86400000")],
                ),
                topic("payments", 0xfeed_face_cafe_beef, 1, &[]),
                topic("audit", 7, 3, &[("segment.bytes", "1048576")]),
            ],
        },
    );
    b.push(true, Body::AllocateProducerIds { count: 1000 });
    b.group(true, join("g1", "", None, 0xdead_beef_0000_0001, T0));
    b.group(
        false,
        WriteCommand::TimerFired {
            key: TimerKey::JoinPhase {
                group_id: GroupId::new("g1"),
                generation: Generation(0),
            },
            now_ms: TimestampMs(T0 + 3_000),
        },
    );
    let g1 = b.members("g1");
    let generation = b.generation("g1");
    b.group(
        true,
        WriteCommand::SyncGroup(SyncGroup {
            api_version: ApiVersion(5),
            now_ms: TimestampMs(T0 + 3_100),
            group_id: GroupId::new("g1"),
            generation,
            member_id: g1[0].clone(),
            group_instance_id: None,
            protocol_type: Some("consumer".to_owned()),
            protocol_name: Some("range".to_owned()),
            assignments: vec![SyncAssignment {
                member_id: g1[0].clone(),
                assignment: Bytes::from_static(b"\x00\x01orders-0,1"),
            }],
        }),
    );
    b.group(
        true,
        commit(
            "g1",
            generation.0,
            g1[0].as_str(),
            T0 + 3_200,
            &[("orders", 0, 42), ("orders", 1, 7), ("audit", 2, 1)],
        ),
    );
    b.group(
        true,
        commit(
            "g2",
            -1,
            "",
            T0 + 3_300,
            &[("payments", 0, 5), ("audit", 0, 9)],
        ),
    );
    let phase1 = b.phase();

    // Phase 2: deletions of every kind, a static member, expiry, topics going away.
    b.group(true, commit("g3", -1, "", T0 + 4_000, &[("orders", 0, 11)]));
    b.group(
        true,
        WriteCommand::DeleteOffsets(DeleteOffsets {
            api_version: ApiVersion(0),
            now_ms: TimestampMs(T0 + 4_100),
            group_id: GroupId::new("g2"),
            topics: vec![DeleteTopic {
                name: TopicName::new("payments"),
                partitions: vec![PartitionIndex(0)],
                topic_known: true,
            }],
        }),
    );
    b.group(
        true,
        WriteCommand::DeleteGroups(DeleteGroups {
            api_version: ApiVersion(2),
            now_ms: TimestampMs(T0 + 4_200),
            group_ids: vec![GroupId::new("g3"), GroupId::new("missing")],
        }),
    );
    b.group(
        true,
        join(
            "g4",
            "",
            Some("instance-a"),
            0xdead_beef_0000_0002,
            T0 + 4_300,
        ),
    );
    b.group(
        false,
        WriteCommand::TimerFired {
            key: TimerKey::JoinPhase {
                group_id: GroupId::new("g4"),
                generation: Generation(0),
            },
            now_ms: TimestampMs(T0 + 7_300),
        },
    );
    let g4 = b.members("g4");
    b.group(
        true,
        WriteCommand::LeaveGroup(LeaveGroup {
            api_version: ApiVersion(5),
            now_ms: TimestampMs(T0 + 7_400),
            group_id: GroupId::new("g4"),
            members: vec![LeavingMember {
                member_id: g4.first().cloned().unwrap_or_default(),
                group_instance_id: Some(GroupInstanceId::new("instance-a")),
                reason: Some("shutting down".to_owned()),
            }],
        }),
    );
    b.group(
        false,
        WriteCommand::ExpireOffsets {
            now_ms: TimestampMs(T0 + 8_000),
        },
    );
    b.push(
        true,
        Body::DeleteTopics {
            names: vec!["payments".to_owned(), "never-created".to_owned()],
            now_ms: TimestampMs(T0 + 8_100),
        },
    );
    b.group(
        false,
        WriteCommand::TopicsDeleted {
            topics: vec![TopicName::new("audit")],
            now_ms: TimestampMs(T0 + 8_200),
        },
    );
    let phase2 = b.phase();

    // Phase 3, the log tail after the newest snapshot: more commits, a second member and its
    // heartbeat expiry, a refused producer-id block.
    let generation = b.generation("g1");
    b.group(
        true,
        commit(
            "g1",
            generation.0,
            g1[0].as_str(),
            T0 + 9_000,
            &[("orders", 0, 43)],
        ),
    );
    b.group(
        true,
        join("g1", "", None, 0xdead_beef_0000_0003, T0 + 9_100),
    );
    b.group(
        false,
        WriteCommand::TimerFired {
            key: TimerKey::MemberHeartbeat {
                group_id: GroupId::new("g1"),
                member_id: g1[0].clone(),
            },
            now_ms: TimestampMs(T0 + 20_000),
        },
    );
    b.group(
        false,
        WriteCommand::TimerFired {
            key: TimerKey::OffsetsRetention,
            now_ms: TimestampMs(T0 + 20_100),
        },
    );
    b.push(true, Body::AllocateProducerIds { count: 0 });
    b.push(true, Body::AllocateProducerIds { count: 24 });
    b.push(
        false,
        Body::InitCluster {
            cluster_id: "second-proposal-loses".to_owned(),
        },
    );
    let phase3 = b.phase();

    Workload {
        phases: [phase1, phase2, phase3],
    }
}

/// The state the whole workload leads to, applied by the code under test.
pub fn applied_state() -> CohortApp {
    let w = build();
    let mut app = new_app();
    for (i, e) in w.all().enumerate() {
        let command = CohortApp::decode(&e.encode()).unwrap();
        let _ = app.apply(LogIndex(i as u64 + 1), command);
    }
    app
}
