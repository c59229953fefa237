//! Properties of the server-side assignors over random groups: every partition of a subscribed
//! topic is assigned exactly once, to a subscriber; `uniform` with homogeneous subscriptions is
//! balanced within one partition and sticky (a member that stays keeps at least its fair share
//! of what it had); `range` co-partitions; every assignor is deterministic.
//!
//! The seed is printed; `COORDINATOR_SEED=<seed> cargo test -p coordinator --test
//! assignor_property` replays a failing run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use coordinator::assignor::{self, GroupSpec, MemberSpec, TopicSpec};
use coordinator::{Assignment, MemberId, PartitionIndex, TopicId};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};
use std::collections::BTreeSet;

#[derive(Clone, Debug)]
struct Case {
    partitions: Vec<u32>,
    /// Per member: which topics (bit i = topic i).
    subscriptions: Vec<u32>,
    homogeneous: bool,
    /// Members (by index into the first run) that leave before the second run.
    leaving: BTreeSet<usize>,
    joining: usize,
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(0u32..24, 1..6),
        proptest::collection::vec(any::<u32>(), 1..14),
        any::<bool>(),
        proptest::collection::btree_set(0usize..14, 0..4),
        0usize..4,
    )
        .prop_map(
            |(partitions, subscriptions, homogeneous, leaving, joining)| Case {
                partitions,
                subscriptions,
                homogeneous,
                leaving,
                joining,
            },
        )
}

fn spec_of(
    case: &Case,
    members: &[(String, u32)],
    previous: &dyn Fn(&str) -> Assignment,
) -> GroupSpec {
    let topics: Vec<TopicSpec> = case
        .partitions
        .iter()
        .enumerate()
        .map(|(i, p)| TopicSpec {
            id: TopicId(100 + i as u128),
            partitions: *p,
        })
        .collect();
    let mut members: Vec<MemberSpec> = members
        .iter()
        .map(|(id, bits)| {
            let bits = if case.homogeneous { u32::MAX } else { *bits };
            let mut subscribed: Vec<TopicId> = topics
                .iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .map(|(_, t)| t.id)
                .collect();
            // An unknown topic id in a subscription is ignored by every assignor.
            if bits & (1 << 20) != 0 {
                subscribed.push(TopicId(7));
            }
            MemberSpec {
                member_id: MemberId::new(id.clone()),
                subscribed,
                previous: previous(id),
            }
        })
        .collect();
    members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
    GroupSpec { topics, members }
}

/// Every partition of a subscribed topic exactly once, to a subscriber; nothing else.
fn check_exactly_once(spec: &GroupSpec, out: &[Assignment]) {
    assert_eq!(out.len(), spec.members.len());
    for topic in &spec.topics {
        let subscribers: Vec<usize> = spec
            .members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.subscribed.contains(&topic.id))
            .map(|(i, _)| i)
            .collect();
        for p in 0..topic.partitions {
            let owners: Vec<usize> = out
                .iter()
                .enumerate()
                .filter(|(_, a)| a.contains(topic.id, PartitionIndex(p as i32)))
                .map(|(i, _)| i)
                .collect();
            if subscribers.is_empty() {
                assert!(
                    owners.is_empty(),
                    "unsubscribed {:?}-{p} assigned",
                    topic.id
                );
            } else {
                assert_eq!(owners.len(), 1, "{:?}-{p} owners {owners:?}", topic.id);
                assert!(
                    subscribers.contains(&owners[0]),
                    "{:?}-{p} to a non-subscriber",
                    topic.id
                );
            }
        }
    }
    for a in out {
        for (t, p) in a.iter() {
            let topic = spec
                .topics
                .iter()
                .find(|x| x.id == t)
                .expect("a known topic");
            assert!((p.0 as u32) < topic.partitions);
        }
    }
}

fn run_case(case: &Case) {
    let first: Vec<(String, u32)> = case
        .subscriptions
        .iter()
        .enumerate()
        .map(|(i, bits)| (format!("member-{i:02}"), *bits))
        .collect();
    for name in assignor::ASSIGNOR_NAMES {
        let a = assignor::by_name(name).unwrap();
        let spec1 = spec_of(case, &first, &|_| Assignment::new());
        let out1 = a.assign(&spec1).members;
        check_exactly_once(&spec1, &out1);
        assert_eq!(a.assign(&spec1).members, out1, "{name} is deterministic");

        // Second run: some leave, some join, each keeps its previous target as input.
        let mut second: Vec<(String, u32)> = first
            .iter()
            .enumerate()
            .filter(|(i, _)| !case.leaving.contains(i))
            .map(|(_, m)| m.clone())
            .collect();
        for j in 0..case.joining {
            second.push((
                format!("joiner-{j}"),
                case.subscriptions[j % case.subscriptions.len()].rotate_left(3),
            ));
        }
        if second.is_empty() {
            continue;
        }
        let previous = |id: &str| {
            spec1
                .members
                .iter()
                .position(|m| m.member_id.as_str() == id)
                .map(|i| out1[i].clone())
                .unwrap_or_default()
        };
        let spec2 = spec_of(case, &second, &previous);
        let out2 = a.assign(&spec2).members;
        check_exactly_once(&spec2, &out2);

        if name == "uniform" && case.homogeneous {
            let total: usize = case.partitions.iter().map(|p| *p as usize).sum();
            let loads: Vec<usize> = out2.iter().map(Assignment::len).collect();
            let (min, max) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
            assert!(max - min <= 1, "unbalanced {loads:?}");
            let fair = total / spec2.members.len();
            for (m, now) in spec2.members.iter().zip(&out2) {
                let kept = m.previous.intersection(now).len();
                assert!(
                    kept >= fair.min(m.previous.len()),
                    "{} kept {kept} of {} (fair share {fair})",
                    m.member_id,
                    m.previous.len()
                );
            }
        }
        if name == "range" {
            // Topics with the same partition count and the same subscribers: same numbers.
            for (x, tx) in spec2.topics.iter().enumerate() {
                for ty in spec2.topics.iter().skip(x + 1) {
                    let subs = |t: TopicId| -> Vec<bool> {
                        spec2
                            .members
                            .iter()
                            .map(|m| m.subscribed.contains(&t))
                            .collect()
                    };
                    if tx.partitions != ty.partitions || subs(tx.id) != subs(ty.id) {
                        continue;
                    }
                    for a in &out2 {
                        let px: Vec<PartitionIndex> = a
                            .iter()
                            .filter(|(t, _)| *t == tx.id)
                            .map(|(_, p)| p)
                            .collect();
                        let py: Vec<PartitionIndex> = a
                            .iter()
                            .filter(|(t, _)| *t == ty.id)
                            .map(|(_, p)| p)
                            .collect();
                        assert_eq!(px, py, "not co-partitioned");
                    }
                }
            }
        }
    }
}

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
fn assignors_assign_every_subscribed_partition_once_balanced_and_sticky() {
    let seed = seed();
    println!("assignor_property seed = {seed} (COORDINATOR_SEED={seed} reproduces)");
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        ProptestConfig {
            cases: 512,
            failure_persistence: None,
            ..ProptestConfig::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let result = runner.run(&case(), |case| {
        run_case(&case);
        Ok(())
    });
    if let Err(e) = result {
        panic!("seed {seed}: {e}");
    }
}

#[test]
fn uniform_gives_a_new_member_its_share_and_moves_nothing_else() {
    // 3 members on 9 partitions, then a 4th joins: each of the 3 keeps 2 of its 3, the
    // newcomer gets the 3 freed ones (one from each), nothing else moves.
    let topic = TopicId(1);
    let spec = |ids: &[&str], previous: &dyn Fn(&str) -> Assignment| GroupSpec {
        topics: vec![TopicSpec {
            id: topic,
            partitions: 9,
        }],
        members: ids
            .iter()
            .map(|id| MemberSpec {
                member_id: MemberId::new(*id),
                subscribed: vec![topic],
                previous: previous(id),
            })
            .collect(),
    };
    let uniform = assignor::by_name("uniform").unwrap();
    let first = uniform
        .assign(&spec(&["a", "b", "c"], &|_| Assignment::new()))
        .members;
    assert!(first.iter().all(|a| a.len() == 3));
    let prev = |id: &str| match id {
        "a" => first[0].clone(),
        "b" => first[1].clone(),
        "c" => first[2].clone(),
        _ => Assignment::new(),
    };
    let second = uniform.assign(&spec(&["a", "b", "c", "d"], &prev)).members;
    let loads: Vec<usize> = second.iter().map(Assignment::len).collect();
    assert_eq!(loads.iter().sum::<usize>(), 9);
    assert!(loads.iter().all(|l| (2..=3).contains(l)), "{loads:?}");
    for i in 0..3 {
        assert!(
            second[i].difference(&first[i]).is_empty(),
            "member {i} was given new partitions"
        );
    }
    assert_eq!(
        second[3].len(),
        9 - second[..3].iter().map(Assignment::len).sum::<usize>()
    );
}
