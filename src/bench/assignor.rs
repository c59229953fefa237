//! `cohort bench assignor`: the server-side assignors of the consumer protocol
//! (`coordinator::assignor`) timed in-process on the two groups Kafka publishes figures for,
//! beside baselines measured in the same run.
//!
//! ```text
//!  homogeneous    10,000 members × 10 partitions each: 100 topics × 1,000 partitions, every
//!                 member subscribed to all (Kafka's uniform assignor: 4.3 ms, PR #17133)
//!  heterogeneous  1,000 members, 1,000 topics × 50 partitions in Kafka's shape
//!                 (`ServerSideAssignorBenchmark`: 5 buckets of 200 members, each bucket
//!                 subscribed to its own 200 topics; Kafka: 15–20 ms, KIP-1263)
//!  overlapping    the same members and topics, each member subscribed to 100 topics picked
//!                 by a fixed hash: 1,000 different, overlapping subscriptions (harder than
//!                 Kafka's case; no published figure, no target)
//!  per group:     uniform from scratch │ uniform sticky after one member left │ range (baseline)
//! ```
//!
//! Every run's result is checked (each subscribed partition assigned exactly once, to a
//! subscriber) before its time counts, so a fast wrong assignor cannot print a figure.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use clap::Args;
use coordinator::assignor::{
    Assignor, GroupAssignment, GroupSpec, MemberSpec, RangeAssignor, TopicSpec, UniformAssignor,
};
use coordinator::{Assignment, MemberId, TopicId};

use super::stats::{ms, Latencies, Summary};
use super::BenchError;

/// Flags of `cohort bench assignor`.
#[derive(Debug, Clone, Args)]
pub struct AssignorArgs {
    /// Timed runs of each assignor on each group.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub repetitions: u32,
    /// Untimed runs before the timed ones.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub warmup: u32,
}

/// Buckets of Kafka's heterogeneous case (`ServerSideAssignorBenchmark.MAX_BUCKET_COUNT`).
const KAFKA_BUCKETS: usize = 5;

/// One of the groups.
struct Group {
    name: &'static str,
    spec: GroupSpec,
    /// What Kafka publishes for its uniform assignor on this group, and Cohort's target.
    kafka: &'static str,
    target: Option<Duration>,
}

/// The homogeneous group: `members` members, `topics` topics, `per_member` partitions per
/// member in all, everyone subscribed to every topic.
fn homogeneous(members: usize, topics: usize, per_member: usize) -> GroupSpec {
    let partitions = (members * per_member / topics.max(1)) as u32;
    let topics: Vec<TopicSpec> = (0..topics)
        .map(|t| TopicSpec {
            id: TopicId(1 + t as u128),
            partitions,
        })
        .collect();
    let all: Vec<TopicId> = topics.iter().map(|t| t.id).collect();
    GroupSpec {
        members: member_ids(members)
            .map(|member_id| MemberSpec {
                member_id,
                subscribed: all.clone(),
                previous: Assignment::new(),
            })
            .collect(),
        topics,
    }
}

/// Kafka's heterogeneous group: members and topics split into `buckets` consecutive runs of
/// equal size; the members of a bucket subscribe to the topics of the same bucket.
fn bucketed(members: usize, topics: usize, partitions: u32, buckets: usize) -> GroupSpec {
    let buckets = buckets.clamp(1, members.max(1));
    let topics_per_bucket = topics.div_ceil(buckets);
    let members_per_bucket = members.div_ceil(buckets);
    GroupSpec {
        members: member_ids(members)
            .enumerate()
            .map(|(i, member_id)| {
                let bucket = i / members_per_bucket.max(1);
                let first = bucket * topics_per_bucket;
                let last = ((bucket + 1) * topics_per_bucket).min(topics);
                MemberSpec {
                    member_id,
                    subscribed: (first..last).map(|t| TopicId(1 + t as u128)).collect(),
                    previous: Assignment::new(),
                }
            })
            .collect(),
        topics: topic_specs(topics, partitions),
    }
}

/// Topics 1..=`topics` of `partitions` partitions each.
fn topic_specs(topics: usize, partitions: u32) -> Vec<TopicSpec> {
    (0..topics)
        .map(|t| TopicSpec {
            id: TopicId(1 + t as u128),
            partitions,
        })
        .collect()
}

/// The overlapping group: each member subscribes to `per_member` distinct topics chosen by
/// a fixed hash of (member, draw), so every run of the benchmark sees the same group.
fn heterogeneous(members: usize, topics: usize, partitions: u32, per_member: usize) -> GroupSpec {
    GroupSpec {
        members: member_ids(members)
            .enumerate()
            .map(|(i, member_id)| {
                let mut chosen = BTreeSet::new();
                let mut draw = 0u64;
                while chosen.len() < per_member.min(topics) {
                    let h = splitmix(((i as u64) << 32) | draw);
                    chosen.insert(TopicId(1 + (h % topics as u64) as u128));
                    draw += 1;
                }
                MemberSpec {
                    member_id,
                    subscribed: chosen.into_iter().collect(),
                    previous: Assignment::new(),
                }
            })
            .collect(),
        topics: topic_specs(topics, partitions),
    }
}

/// Member ids that sort in creation order (the spec is sorted by member id).
fn member_ids(n: usize) -> impl Iterator<Item = MemberId> {
    (0..n).map(|i| MemberId::new(format!("member-{i:06}")))
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The spec of a sticky rerun: every member's previous target is what `result` gave it, and
/// the middle member has left.
fn after_one_left(spec: &GroupSpec, result: &GroupAssignment) -> GroupSpec {
    let leaving = spec.members.len() / 2;
    GroupSpec {
        topics: spec.topics.clone(),
        members: spec
            .members
            .iter()
            .zip(&result.members)
            .enumerate()
            .filter(|(i, _)| *i != leaving)
            .map(|(_, (m, a))| MemberSpec {
                member_id: m.member_id.clone(),
                subscribed: m.subscribed.clone(),
                previous: a.clone(),
            })
            .collect(),
    }
}

/// Checks that `result` assigns every partition of a subscribed topic exactly once, to a
/// member that subscribes to it, and nothing else.
fn check(spec: &GroupSpec, result: &GroupAssignment) -> Result<(), String> {
    if result.members.len() != spec.members.len() {
        return Err(format!(
            "{} assignments for {} members",
            result.members.len(),
            spec.members.len()
        ));
    }
    let mut subscribed: BTreeSet<TopicId> = BTreeSet::new();
    for m in &spec.members {
        subscribed.extend(m.subscribed.iter().copied());
    }
    let expected: usize = spec
        .topics
        .iter()
        .filter(|t| subscribed.contains(&t.id))
        .map(|t| t.partitions as usize)
        .sum();
    let mut seen = BTreeSet::new();
    for (m, a) in spec.members.iter().zip(&result.members) {
        for (topic, partition) in a.iter() {
            if m.subscribed.binary_search(&topic).is_err() {
                return Err(format!(
                    "{} got {topic:?} it does not subscribe to",
                    m.member_id
                ));
            }
            if !seen.insert((topic, partition)) {
                return Err(format!("{topic:?}-{} assigned twice", partition.0));
            }
        }
    }
    if seen.len() != expected {
        return Err(format!("{} of {expected} partitions assigned", seen.len()));
    }
    Ok(())
}

/// Times `assignor` on `spec`; the first result is checked and returned.
fn time(
    assignor: &dyn Assignor,
    spec: &GroupSpec,
    args: &AssignorArgs,
) -> Result<(Summary, GroupAssignment), BenchError> {
    let first = assignor.assign(spec);
    check(spec, &first).map_err(|e| BenchError::Setup(format!("{}: {e}", assignor.name())))?;
    for _ in 0..args.warmup {
        std::hint::black_box(assignor.assign(std::hint::black_box(spec)));
    }
    let mut latencies = Latencies::default();
    for _ in 0..args.repetitions {
        let started = Instant::now();
        let result = assignor.assign(std::hint::black_box(spec));
        latencies.record(started.elapsed());
        // Dropping the result (freeing its maps) is not part of the assignor's time.
        std::hint::black_box(result);
    }
    Ok((latencies.summary(), first))
}

/// Balance of a result: the smallest and largest member loads.
fn loads(result: &GroupAssignment) -> (usize, usize) {
    let lens = result.members.iter().map(Assignment::len);
    (lens.clone().min().unwrap_or(0), lens.max().unwrap_or(0))
}

/// Partitions that stayed with their member between `before` (with `spec.members`) and a
/// sticky rerun on `after`.
fn kept(after: &GroupSpec, result: &GroupAssignment) -> (usize, usize) {
    let mut kept = 0;
    let mut had = 0;
    for (m, a) in after.members.iter().zip(&result.members) {
        had += m.previous.len();
        kept += m
            .previous
            .iter()
            .filter(|(t, p)| a.contains(*t, *p))
            .count();
    }
    (kept, had)
}

/// The CPU model and core count of this machine, for the record.
fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    format!("{model}, {cores} cores available")
}

pub fn run(args: AssignorArgs) -> Result<(), BenchError> {
    let profile = if cfg!(debug_assertions) {
        "debug build: figures are not comparable, use --release"
    } else {
        "release build"
    };
    println!("cohort bench assignor: {}", machine());
    println!(
        "{profile}; {} timed runs after {} warm-up runs each; load average {}",
        args.repetitions,
        args.warmup,
        super::broker::load_average()
    );
    let groups = [
        Group {
            name: "homogeneous 10,000 members × 10 partitions (100 topics × 1,000)",
            spec: homogeneous(10_000, 100, 10),
            kafka: "4.3 ms",
            target: Some(Duration::from_millis(4)),
        },
        Group {
            name: "heterogeneous 1,000 members, 1,000 topics × 50 partitions, 5 buckets (Kafka's shape)",
            spec: bucketed(1_000, 1_000, 50, KAFKA_BUCKETS),
            kafka: "15–20 ms",
            target: Some(Duration::from_millis(10)),
        },
        Group {
            name: "overlapping 1,000 members, 1,000 topics × 50 partitions, 100 random topics each",
            spec: heterogeneous(1_000, 1_000, 50, 100),
            kafka: "-",
            target: None,
        },
    ];
    println!();
    println!(
        "| group | run | p50 ms | p99 ms | max ms | × range p50 | min/max load | kept | Kafka | target |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut missed = Vec::new();
    for g in &groups {
        eprintln!("timing {} ...", g.name);
        let (range, range_result) = time(&RangeAssignor, &g.spec, &args)?;
        let (scratch, scratch_result) = time(&UniformAssignor, &g.spec, &args)?;
        let sticky_spec = after_one_left(&g.spec, &scratch_result);
        let (sticky, sticky_result) = time(&UniformAssignor, &sticky_spec, &args)?;
        let ratio = |s: &Summary| {
            let base = range.p50.as_secs_f64();
            if base > 0.0 {
                format!("{:.2}", s.p50.as_secs_f64() / base)
            } else {
                "-".into()
            }
        };
        let row = |run: &str,
                   s: &Summary,
                   r: &GroupAssignment,
                   kept: String,
                   kafka: &str,
                   target: String| {
            let (lo, hi) = loads(r);
            println!(
                "| {} | {run} | {} | {} | {} | {} | {lo}/{hi} | {kept} | {kafka} | {target} |",
                g.name,
                ms(s.p50),
                ms(s.p99),
                ms(s.max),
                ratio(s)
            );
        };
        let target = g
            .target
            .map_or_else(|| "-".into(), |t| format!("≤ {} ms", t.as_millis()));
        row(
            "uniform, from scratch",
            &scratch,
            &scratch_result,
            "-".into(),
            g.kafka,
            target.clone(),
        );
        let (k, had) = kept(&sticky_spec, &sticky_result);
        row(
            "uniform, sticky after one member left",
            &sticky,
            &sticky_result,
            format!("{k}/{had}"),
            "-",
            target,
        );
        row(
            "range (baseline)",
            &range,
            &range_result,
            "-".into(),
            "-",
            "-".into(),
        );
        for (run, s) in [("from scratch", &scratch), ("sticky", &sticky)] {
            if g.target.is_some_and(|t| s.p50 > t) {
                missed.push(format!("{} {run}: p50 {} ms", g.name, ms(s.p50)));
            }
        }
    }
    println!();
    if missed.is_empty() {
        println!("every uniform run's p50 is within its target");
    } else {
        for m in &missed {
            println!("target missed: {m}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_have_the_published_shapes_and_results_are_checked() {
        let h = homogeneous(100, 10, 10);
        assert_eq!(h.members.len(), 100);
        assert_eq!(h.topics.iter().map(|t| t.partitions).sum::<u32>(), 1_000);
        let g = heterogeneous(50, 40, 5, 7);
        assert!(g.members.iter().all(|m| m.subscribed.len() == 7));
        assert!(g
            .members
            .windows(2)
            .all(|w| w[0].member_id < w[1].member_id));
        // Kafka's buckets: 12 members and 10 topics in 5 buckets of 3 members (the last
        // bucket empty) and 2 topics; a bucket's members share its topics, no topic is shared
        // across buckets.
        let b = bucketed(12, 10, 3, 5);
        assert_eq!(b.members.len(), 12);
        let topics_of = |i: usize| b.members[i].subscribed.clone();
        assert_eq!(topics_of(0), vec![TopicId(1), TopicId(2)]);
        assert_eq!(topics_of(2), topics_of(0));
        assert_eq!(topics_of(3), vec![TopicId(3), TopicId(4)]);
        assert_eq!(topics_of(11), vec![TopicId(7), TopicId(8)]);
        assert!(b.members.iter().all(|m| m.subscribed.len() == 2));
        for spec in [&h, &g, &b] {
            let first = UniformAssignor.assign(spec);
            check(spec, &first).unwrap();
            let after = after_one_left(spec, &first);
            assert_eq!(after.members.len(), spec.members.len() - 1);
            let second = UniformAssignor.assign(&after);
            check(&after, &second).unwrap();
            let (k, had) = kept(&after, &second);
            assert!(k > 0 && k <= had);
            check(spec, &RangeAssignor.assign(spec)).unwrap();
        }
        // A result that drops a partition is refused.
        let mut bad = UniformAssignor.assign(&h);
        bad.members[0] = Assignment::new();
        assert!(check(&h, &bad).is_err());
    }
}
