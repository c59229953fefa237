//! Times the server-side assignors on Kafka's published cases, beside a naive round-robin
//! assignor measured in the same run (the baseline: one pass, no stickiness, no balance
//! across topics).
//!
//! ```text
//! cargo run --release -p coordinator --example assignor_bench [-- RUNS]
//! ```
//!
//! Cases (Kafka's figures: apache/kafka PR #17133 for the first, KIP-1263 for the second):
//! - homogeneous: 10,000 members × 10 partitions each (100 topics × 1,000 partitions, every
//!   member subscribed to all), a fresh assignment and a sticky one after one member left;
//! - heterogeneous: 1,000 members, 1,000 topics, 50,000 partitions (50 each); members in 5
//!   buckets, bucket b subscribed to the topics t with t mod 5 ≠ b (800 topics each).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types
)]

use coordinator::assignor::{self, GroupAssignment, GroupSpec, MemberSpec, TopicSpec};
use coordinator::{Assignment, MemberId, PartitionIndex, TopicId};
use std::time::Instant;

fn spec(
    members: usize,
    topics: u32,
    partitions: u32,
    subscribed: impl Fn(usize, u32) -> bool,
) -> GroupSpec {
    GroupSpec {
        topics: (0..topics)
            .map(|t| TopicSpec {
                id: TopicId(1 + u128::from(t)),
                partitions,
            })
            .collect(),
        members: (0..members)
            .map(|m| MemberSpec {
                member_id: MemberId::new(format!("member-{m:06}")),
                subscribed: (0..topics)
                    .filter(|t| subscribed(m, *t))
                    .map(|t| TopicId(1 + u128::from(t)))
                    .collect(),
                previous: Assignment::new(),
            })
            .collect(),
    }
}

/// The baseline: each topic's partitions dealt round-robin to its subscribers, continuing
/// where the previous topic stopped.
fn round_robin(spec: &GroupSpec) -> GroupAssignment {
    let mut pairs: Vec<Vec<(TopicId, PartitionIndex)>> = vec![Vec::new(); spec.members.len()];
    let mut next = 0usize;
    for topic in &spec.topics {
        let subscribers: Vec<usize> = spec
            .members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.subscribed.binary_search(&topic.id).is_ok())
            .map(|(i, _)| i)
            .collect();
        if subscribers.is_empty() {
            continue;
        }
        for p in 0..topic.partitions {
            let m = subscribers[next % subscribers.len()];
            pairs[m].push((topic.id, PartitionIndex(p as i32)));
            next += 1;
        }
    }
    GroupAssignment {
        members: pairs.into_iter().map(Assignment::from_pairs).collect(),
    }
}

/// The median and the fastest of `runs` timed calls of `f`, and its last result. On a machine
/// shared with other work the fastest run is the one least slowed by it.
fn median_ms(runs: usize, mut f: impl FnMut() -> GroupAssignment) -> (f64, f64, GroupAssignment) {
    let mut times = Vec::with_capacity(runs);
    let mut last = GroupAssignment::default();
    for _ in 0..runs {
        let start = Instant::now();
        let out = std::hint::black_box(f());
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        // Freeing the previous result is not the assignor's time (as in `cohort bench
        // assignor`); it used to be counted here, inside the timed assignment.
        last = out;
    }
    times.sort_by(|a, b| a.total_cmp(b));
    (times[times.len() / 2], times[0], last)
}

fn spread(out: &GroupAssignment) -> (usize, usize) {
    let loads: Vec<usize> = out.members.iter().map(Assignment::len).collect();
    (
        *loads.iter().min().unwrap_or(&0),
        *loads.iter().max().unwrap_or(&0),
    )
}

fn report(case: &str, runs: usize, spec: &GroupSpec) -> GroupAssignment {
    let uniform = assignor::by_name("uniform").unwrap();
    let (base_ms, base_min, base_out) = median_ms(runs, || round_robin(spec));
    let (ms, min, out) = median_ms(runs, || uniform.assign(spec));
    let (lo, hi) = spread(&out);
    let (blo, bhi) = spread(&base_out);
    println!(
        "{case:<44} uniform {ms:>8.2} ms (min {min:.2}, load {lo}..{hi})   round-robin {base_ms:>8.2} ms (min {base_min:.2}, load {blo}..{bhi})   ratio {:.3}",
        ms / base_ms
    );
    out
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(21);
    println!("assignor_bench: median (and fastest) of {runs} runs each");

    let mut homogeneous = spec(10_000, 100, 1_000, |_, _| true);
    let first = report(
        "homogeneous 10,000 members x 10 partitions",
        runs,
        &homogeneous,
    );
    // Sticky: the same group after one member left, each keeping its previous target.
    for (m, a) in homogeneous.members.iter_mut().zip(first.members) {
        m.previous = a;
    }
    homogeneous.members.remove(4_321);
    report(
        "homogeneous, sticky, after one member left",
        runs,
        &homogeneous,
    );

    let heterogeneous = spec(1_000, 1_000, 50, |m, t| t % 5 != (m % 5) as u32);
    report(
        "heterogeneous 1,000 m, 1,000 t, 50,000 p",
        runs,
        &heterogeneous,
    );

    let range = assignor::by_name("range").unwrap();
    let (ms, min, _) = median_ms(runs, || range.assign(&heterogeneous));
    println!(
        "{:<44} range   {ms:>8.2} ms (min {min:.2})",
        "heterogeneous, range assignor"
    );
}
