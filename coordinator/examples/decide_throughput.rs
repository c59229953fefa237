//! How fast the coordinator core decides and replays, single-threaded, without Raft or IO:
//! the ceiling the runtime builds on.
//!
//! ```sh
//! cargo run --release -p coordinator --example decide_throughput
//! ```
//!
//! It forms 1,000 Stable single-member groups through real JoinGroup/SyncGroup commands, then
//! times OffsetCommits of one partition (decide + replay), OffsetFetches of a 100-partition
//! group and heartbeats.

use bytes::Bytes;
use coordinator::*;

const GROUPS: usize = 1_000;
const COMMITS: usize = 1_000_000;
const FETCHES: usize = 200_000;
const HEARTBEATS: usize = 1_000_000;

fn join(state: &mut CoordinatorState, group: &str, member: &str, nonce: u128, now: i64) -> Outcome {
    state.apply(&WriteCommand::JoinGroup(JoinGroup {
        api_version: ApiVersion(5),
        now_ms: TimestampMs(now),
        nonce,
        group_id: group.into(),
        member_id: member.into(),
        group_instance_id: None,
        session_timeout_ms: 45_000,
        rebalance_timeout_ms: 300_000,
        protocol_type: "consumer".into(),
        protocols: vec![JoinProtocol {
            name: "range".into(),
            metadata: Bytes::from(coordinator::subscription::encode_v0(&["orders"])),
        }],
        client_id: "bench".into(),
        client_host: "/127.0.0.1".into(),
        reason: None,
    }))
}

// Timing an example is the point of this file.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
fn main() {
    let mut state = CoordinatorState::new(Config::default());
    let mut now = 1_000_000i64;
    let mut members = Vec::with_capacity(GROUPS);
    for g in 0..GROUPS {
        let group = format!("group-{g}");
        let first = join(&mut state, &group, "", g as u128, now);
        let Reply::Join(r) = first.reply else { return };
        join(&mut state, &group, r.member_id.as_str(), 0, now);
        members.push((group, r.member_id));
    }
    now += 3_000;
    for (group, _) in &members {
        state.apply(&WriteCommand::TimerFired {
            key: TimerKey::JoinPhase {
                group_id: group.as_str().into(),
                generation: Generation(0),
            },
            now_ms: TimestampMs(now),
        });
    }
    for (group, member) in &members {
        state.apply(&WriteCommand::SyncGroup(SyncGroup {
            api_version: ApiVersion(5),
            now_ms: TimestampMs(now),
            group_id: group.as_str().into(),
            generation: Generation(1),
            member_id: member.clone(),
            group_instance_id: None,
            protocol_type: None,
            protocol_name: None,
            assignments: vec![SyncAssignment {
                member_id: member.clone(),
                assignment: Bytes::from_static(b"a"),
            }],
        }));
    }

    let started = std::time::Instant::now();
    let mut accepted = 0usize;
    for i in 0..COMMITS {
        let (group, member) = &members[i % GROUPS];
        let out = state.apply(&WriteCommand::CommitOffsets(CommitOffsets {
            api_version: ApiVersion(8),
            now_ms: TimestampMs(now),
            group_id: group.as_str().into(),
            generation: Generation(1),
            member_id: member.clone(),
            group_instance_id: None,
            retention_time_ms: -1,
            topics: vec![CommitTopic {
                name: "orders".into(),
                partitions: vec![CommitPartition {
                    partition: PartitionIndex((i / GROUPS % 100) as i32),
                    offset: Offset(i as i64),
                    leader_epoch: LeaderEpoch(0),
                    metadata: None,
                    partition_known: true,
                }],
            }],
        }));
        accepted += out.records.len();
    }
    let commit_secs = started.elapsed().as_secs_f64();

    let fetch_group: GroupId = members[0].0.as_str().into();
    let started = std::time::Instant::now();
    let mut partitions = 0usize;
    for _ in 0..FETCHES {
        let out = state.read(&ReadCommand::FetchOffsets(FetchOffsets {
            api_version: ApiVersion(8),
            groups: vec![FetchGroup {
                group_id: fetch_group.clone(),
                topics: None,
                member_id: None,
                member_epoch: -1,
            }],
            require_stable: false,
        }));
        if let Reply::Fetch(r) = out.reply {
            partitions += r
                .groups
                .iter()
                .flat_map(|g| &g.topics)
                .map(|t| t.partitions.len())
                .sum::<usize>();
        }
    }
    let fetch_secs = started.elapsed().as_secs_f64();

    let started = std::time::Instant::now();
    let mut ok = 0usize;
    for i in 0..HEARTBEATS {
        let (group, member) = &members[i % GROUPS];
        let out = state.read(&ReadCommand::Heartbeat(Heartbeat {
            api_version: ApiVersion(4),
            now_ms: TimestampMs(now),
            group_id: group.as_str().into(),
            generation: Generation(1),
            member_id: member.clone(),
            group_instance_id: None,
        }));
        if out.reply == Reply::Heartbeat(Ok(())) {
            ok += 1;
        }
    }
    let heartbeat_secs = started.elapsed().as_secs_f64();

    println!(
        "commits: {COMMITS} one-partition commits ({accepted} accepted) in {commit_secs:.2} s = {:.0}/s",
        COMMITS as f64 / commit_secs
    );
    println!(
        "fetches: {FETCHES} all-topic fetches of a {}-partition group in {fetch_secs:.2} s = {:.0}/s",
        partitions / FETCHES,
        FETCHES as f64 / fetch_secs
    );
    println!(
        "heartbeats: {HEARTBEATS} ({ok} ok) in {heartbeat_secs:.2} s = {:.0}/s",
        HEARTBEATS as f64 / heartbeat_secs
    );
}
