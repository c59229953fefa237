//! Property: for random command sequences,
//! `state(apply commands) == state(replay records) == state(replay compacted records)`
//! (the harness checks it after every step, plus the snapshot and the record codec), and a
//! follower restored from an encoded snapshot halfway through, applying the remaining
//! commands itself, decides the same replies and ends in the same state.
//!
//! The seed is printed; `COORDINATOR_SEED=<seed> cargo test -p coordinator --test
//! replay_property` replays a failing run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::*;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};

const GROUPS: [&str; 2] = ["g0", "g1"];
const TOPICS: [&str; 2] = ["t0", "t1"];

#[derive(Clone, Debug)]
enum Op {
    Join {
        group: usize,
        member: Option<usize>,
        version: i16,
        instance: Option<usize>,
        protocol: usize,
        topic: usize,
    },
    Sync {
        group: usize,
        member: usize,
        generation_delta: i32,
        assign: bool,
    },
    Heartbeat {
        group: usize,
        member: usize,
    },
    Leave {
        group: usize,
        member: Option<usize>,
        instance: Option<usize>,
    },
    Commit {
        group: usize,
        member: Option<usize>,
        generation_delta: i32,
        topic: usize,
        partition: i32,
        offset: i64,
        big_metadata: bool,
        version: i16,
    },
    DeleteOffsets {
        group: usize,
        topic: usize,
    },
    DeleteGroups {
        group: usize,
    },
    Expire {
        days: i64,
    },
    TopicsDeleted {
        topic: usize,
    },
    Advance {
        ms: i64,
    },
    StaleTimer {
        group: usize,
        generation: i32,
        kind: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let group = 0..GROUPS.len();
    prop_oneof![
        4 => (group.clone(), proptest::option::of(0..6usize), prop_oneof![Just(3i16), Just(5), Just(9)],
              proptest::option::weighted(0.3, 0..2usize), 0..3usize, 0..TOPICS.len())
            .prop_map(|(group, member, version, instance, protocol, topic)| Op::Join { group, member, version, instance, protocol, topic }),
        3 => (group.clone(), 0..6usize, -1..=1i32, any::<bool>())
            .prop_map(|(group, member, generation_delta, assign)| Op::Sync { group, member, generation_delta, assign }),
        2 => (group.clone(), 0..6usize).prop_map(|(group, member)| Op::Heartbeat { group, member }),
        1 => (group.clone(), proptest::option::of(0..6usize), proptest::option::of(0..2usize))
            .prop_map(|(group, member, instance)| Op::Leave { group, member, instance }),
        4 => (group.clone(), proptest::option::of(0..6usize), -1..=0i32, 0..TOPICS.len(), 0..3i32, 0..1000i64, proptest::bool::weighted(0.1), prop_oneof![Just(2i16), Just(8), Just(9)])
            .prop_map(|(group, member, generation_delta, topic, partition, offset, big_metadata, version)|
                Op::Commit { group, member, generation_delta, topic, partition, offset, big_metadata, version }),
        1 => (group.clone(), 0..TOPICS.len()).prop_map(|(group, topic)| Op::DeleteOffsets { group, topic }),
        1 => group.clone().prop_map(|group| Op::DeleteGroups { group }),
        1 => (0..10i64).prop_map(|days| Op::Expire { days }),
        1 => (0..TOPICS.len()).prop_map(|topic| Op::TopicsDeleted { topic }),
        4 => prop_oneof![Just(100i64), Just(1_000), Just(3_000), Just(7_000), Just(31_000), Just(400_000)]
            .prop_map(|ms| Op::Advance { ms }),
        1 => (group, 0..4i32, 0..3u8).prop_map(|(group, generation, kind)| Op::StaleTimer { group, generation, kind }),
    ]
}

/// Member ids of a group (members and pending), to aim ops at real members most of the time.
fn member_ids(h: &Harness, group: &str) -> Vec<String> {
    h.state
        .group(&group.into())
        .map(|g| {
            g.members
                .keys()
                .chain(g.pending_members.keys())
                .map(|m| m.as_str().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn pick(h: &Harness, group: &str, idx: usize) -> String {
    let ids = member_ids(h, group);
    if ids.is_empty() || idx > ids.len() {
        format!("stranger-{idx}")
    } else {
        ids.get(idx)
            .cloned()
            .unwrap_or_else(|| "stranger".to_owned())
    }
}

fn generation(h: &Harness, group: &str) -> i32 {
    h.state.group(&group.into()).map_or(0, |g| g.generation.0)
}

fn run(h: &mut Harness, op: &Op) {
    match op {
        Op::Join {
            group,
            member,
            version,
            instance,
            protocol,
            topic,
        } => {
            let g = GROUPS[*group];
            let member = member.map(|m| pick(h, g, m)).unwrap_or_default();
            let sub = subscription(&[TOPICS[*topic]]);
            let protocols: Vec<(&str, bytes::Bytes)> = match protocol {
                0 => vec![("range", sub)],
                1 => vec![("roundrobin", sub.clone()), ("range", sub)],
                _ => vec![("sticky", sub)],
            };
            let mut req = JoinReq::new(&member)
                .group(g)
                .version(*version)
                .protocols(&protocols);
            if let Some(i) = instance {
                req = req.instance(&format!("i-{i}"));
            }
            h.join(req);
        }
        Op::Sync {
            group,
            member,
            generation_delta,
            assign,
        } => {
            let g = GROUPS[*group];
            let m = pick(h, g, *member);
            let gen = generation(h, g) + generation_delta;
            let ids = member_ids(h, g);
            let assignments: Vec<(&str, &[u8])> = if *assign {
                ids.iter()
                    .map(|id| (id.as_str(), b"a".as_slice()))
                    .collect()
            } else {
                Vec::new()
            };
            h.sync_full(g, &m, None, gen, None, None, &assignments);
        }
        Op::Heartbeat { group, member } => {
            let g = GROUPS[*group];
            let m = pick(h, g, *member);
            let gen = generation(h, g);
            let _ = h.heartbeat_full(g, &m, None, gen);
        }
        Op::Leave {
            group,
            member,
            instance,
        } => {
            let g = GROUPS[*group];
            let m = member.map(|m| pick(h, g, m)).unwrap_or_default();
            let i = instance.map(|i| format!("i-{i}"));
            h.write(WriteCommand::LeaveGroup(LeaveGroup {
                api_version: ApiVersion(5),
                now_ms: h.now_ms(),
                group_id: g.into(),
                members: vec![LeavingMember {
                    member_id: m.as_str().into(),
                    group_instance_id: i.as_deref().map(GroupInstanceId::from),
                    reason: None,
                }],
            }));
        }
        Op::Commit {
            group,
            member,
            generation_delta,
            topic,
            partition,
            offset,
            big_metadata,
            version,
        } => {
            let g = GROUPS[*group];
            let (m, gen) = match member {
                None => (String::new(), -1),
                Some(idx) => (pick(h, g, *idx), generation(h, g) + generation_delta),
            };
            let metadata = if *big_metadata {
                "m".repeat(5000)
            } else {
                "meta".to_owned()
            };
            let mut req = CommitReq::new(&m, gen)
                .group(g)
                .topic(TOPICS[*topic])
                .version(*version);
            req = req.metadata(*partition, *offset, &metadata);
            if *version == 2 && *offset % 2 == 0 {
                req = req.retention(86_400_000);
            }
            h.commit_with(req);
        }
        Op::DeleteOffsets { group, topic } => {
            h.write(WriteCommand::DeleteOffsets(DeleteOffsets {
                api_version: ApiVersion(0),
                now_ms: h.now_ms(),
                group_id: GROUPS[*group].into(),
                topics: vec![DeleteTopic {
                    name: TOPICS[*topic].into(),
                    partitions: vec![PartitionIndex(0), PartitionIndex(1), PartitionIndex(2)],
                    topic_known: true,
                }],
            }));
        }
        Op::DeleteGroups { group } => {
            h.write(WriteCommand::DeleteGroups(DeleteGroups {
                api_version: ApiVersion(2),
                now_ms: h.now_ms(),
                group_ids: vec![GROUPS[*group].into()],
            }));
        }
        Op::Expire { days } => {
            h.now += days * 86_400_000;
            h.write(WriteCommand::ExpireOffsets { now_ms: h.now_ms() });
        }
        Op::TopicsDeleted { topic } => {
            h.write(WriteCommand::TopicsDeleted {
                topics: vec![TOPICS[*topic].into()],
                now_ms: h.now_ms(),
            });
        }
        Op::Advance { ms } => h.advance(*ms),
        Op::StaleTimer {
            group,
            generation,
            kind,
        } => {
            let group_id: GroupId = GROUPS[*group].into();
            let key = match kind {
                0 => TimerKey::JoinPhase {
                    group_id,
                    generation: Generation(*generation),
                },
                1 => TimerKey::SyncPhase {
                    group_id,
                    generation: Generation(*generation),
                },
                _ => TimerKey::MemberHeartbeat {
                    group_id,
                    member_id: pick(h, GROUPS[*group], 0).as_str().into(),
                },
            };
            h.write(WriteCommand::TimerFired {
                key,
                now_ms: h.now_ms(),
            });
        }
    }
}

// A fresh seed per run explores new sequences; it is printed so any failure replays.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
fn seed() -> u64 {
    match std::env::var("COORDINATOR_SEED") {
        Ok(s) => s.parse().expect("COORDINATOR_SEED is a u64"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    }
}

#[test]
fn applying_commands_equals_replaying_records_and_the_compacted_log() {
    let seed = seed();
    println!("replay_property seed = {seed} (COORDINATOR_SEED={seed} reproduces)");
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let result = runner.run(&proptest::collection::vec(op(), 1..80), |ops| {
        let mut h = Harness::with_config(Config {
            pending_members_max: 4,
            group_max_size: 5,
            ..Config::default()
        });
        // Halfway, a follower starts from an encoded snapshot and applies the rest itself.
        let fork_at = ops.len() / 2;
        for (i, op) in ops.iter().enumerate() {
            if i == fork_at {
                h.add_follower_from_snapshot();
            }
            run(&mut h, op);
        }
        // And once more at the end, against a fresh snapshot-and-restore.
        h.check_replay();
        Ok(())
    });
    if let Err(e) = result {
        panic!("seed {seed}: {e}");
    }
}
