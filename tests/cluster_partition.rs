//! Nodes cut off with SIGSTOP (a process that stops answering without closing anything, as
//! a partitioned or frozen machine looks to its peers):
//!
//! - a stopped follower does not disrupt the majority (commits keep being acknowledged, the
//!   term does not move), and once resumed it rejoins without forcing an election and catches
//!   up;
//! - a leader whose peers are both stopped has lost its quorum: a commit sent to it is never
//!   acknowledged (an error code or no answer), and once the peers resume the cluster is whole.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;

use std::time::{Duration, Instant};

use cluster_support::*;

const TOPIC: &str = "cut";

fn term_of(c: &ScriptCluster, n: u64) -> u64 {
    let view = c
        .raft_status(n)
        .unwrap_or_else(|| panic!("node {n} gave no status"));
    view["term"].as_u64().unwrap()
}

fn applied_of(c: &ScriptCluster, n: u64) -> Option<u64> {
    c.raft_status(n)?["applied_index"].as_u64()
}

#[test]
fn a_cut_off_node_never_disrupts_the_majority_nor_acknowledges_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ScriptCluster::up(dir.path(), &[]);
    let leader = c.wait_controller(&NODES, Duration::from_secs(30));
    assert_eq!(create_topic(c.kafka(leader), TOPIC, 3), Ok(0));
    let term = term_of(&c, leader);
    let mut conn = Conn::open(c.kafka(leader), Duration::from_secs(10)).unwrap();
    let mut offset = 0;
    let mut commit_ok = |conn: &mut Conn| {
        offset += 1;
        commit(conn, "g", TOPIC, 0, offset)
    };
    assert_eq!(commit_ok(&mut conn), Ok(0));

    // A follower frozen for longer than several election timeouts.
    let follower = NODES.into_iter().find(|n| *n != leader).unwrap();
    c.sigstop(follower);
    let frozen = Instant::now();
    let mut during = 0;
    while frozen.elapsed() < Duration::from_secs(3) {
        assert_eq!(
            commit_ok(&mut conn),
            Ok(0),
            "commit {during} with node {follower} stopped"
        );
        during += 1;
    }
    assert_eq!(term_of(&c, leader), term, "the majority changed term");
    c.sigcont(follower);
    let leader_applied = applied_of(&c, leader).unwrap();
    eventually(
        &format!("node {follower} catches up to {leader_applied}"),
        Duration::from_secs(30),
        || applied_of(&c, follower).filter(|a| *a >= leader_applied),
    );
    c.wait_healthy(Duration::from_secs(30));
    // The pre-vote kept it from campaigning: nobody was deposed.
    assert_eq!(c.wait_controller(&NODES, Duration::from_secs(10)), leader);
    assert_eq!(
        term_of(&c, leader),
        term,
        "the resumed follower forced an election"
    );
    eprintln!("{during} commits acknowledged while node {follower} was stopped");

    // The leader alone: both peers frozen.
    let peers: Vec<u64> = NODES.into_iter().filter(|n| *n != leader).collect();
    for p in &peers {
        c.sigstop(*p);
    }
    let mut stale = Conn::open(c.kafka(leader), Duration::from_secs(10)).unwrap();
    let stale_offset = 1_000_000;
    let answer = commit(&mut stale, "g", TOPIC, 1, stale_offset);
    assert!(
        !matches!(answer, Ok(0)),
        "a leader without a quorum acknowledged a commit"
    );
    eprintln!("commit to the isolated leader: {answer:?}");
    // A second try on a fresh connection, after the leader had time to notice.
    let mut again = Conn::open(c.kafka(leader), Duration::from_secs(10)).unwrap();
    let answer = commit(&mut again, "g", TOPIC, 2, stale_offset);
    assert!(
        !matches!(answer, Ok(0)),
        "a leader without a quorum acknowledged a commit"
    );
    for p in &peers {
        c.sigcont(*p);
    }
    c.wait_healthy(Duration::from_secs(30));
    // The cluster takes commits again. The resumed peers may well elect a new leader (they
    // heard nothing for seconds while the old one backed off its retries), so each attempt
    // looks the coordinator up, as a client does.
    let mut last = None;
    let resumed = Instant::now();
    while resumed.elapsed() < Duration::from_secs(30) {
        let answer = find_coordinator(c.kafka(leader), "g").and_then(|(code, id)| {
            if code != 0 || id < 1 {
                return Err(format!("FindCoordinator: error {code}, node {id}"));
            }
            let mut conn = Conn::open(c.kafka(id as u64), Duration::from_secs(10))?;
            commit(&mut conn, "g", TOPIC, 0, 7)
        });
        if answer == Ok(0) {
            return;
        }
        last = Some(answer);
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no commit acknowledged after the peers resumed: last answer {last:?}");
}
