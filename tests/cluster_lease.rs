//! A leader cut off from its peers by a real network fault (a proxy on every Raft path that the
//! test cuts; the process keeps running and keeps its Kafka clients) while clients keep talking
//! to it:
//!
//! - within its lease it stops answering group APIs as coordinator: OffsetFetch and Heartbeat
//!   get NOT_COORDINATOR, FindCoordinator stops naming it;
//! - no answer it gives after the majority acknowledged a newer commit is stale (a poller
//!   hammers it from the cut to the heal and every answer is checked against that moment);
//! - it acknowledges nothing: a commit sent to it during the cut is never acknowledged and never
//!   shows up once healed;
//! - healed, it follows the new leader and the cluster agrees.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use cluster_support::proxy::RaftProxies;
use cluster_support::*;
use kafka_protocol::messages::*;

const TOPIC: &str = "lease";
/// Admin commits only (an empty group): the offsets whose staleness is checked.
const OFFSETS: &str = "lease-offsets";
/// One classic member: the heartbeats whose staleness is checked.
const MEMBERS: &str = "lease-members";
const NOT_COORDINATOR: i16 = 16;
/// raft-meta's default leader lease (4/5 of the 500 ms election lease).
const LEASE: Duration = Duration::from_millis(400);
/// Room for a loaded two-core machine between the lease running out and the poller seeing it.
const SLACK: Duration = Duration::from_millis(1000);

fn join_and_sync(conn: &mut Conn, group: &str) -> (String, i32) {
    let mut member = String::new();
    for _ in 0..2 {
        let req = JoinGroupRequest::default()
            .with_group_id(GroupId(s(group)))
            .with_session_timeout_ms(30_000)
            .with_rebalance_timeout_ms(30_000)
            .with_member_id(s(&member))
            .with_protocol_type(s("consumer"))
            .with_protocols(vec![join_group_request::JoinGroupRequestProtocol::default(
            )
            .with_name(s("range"))
            .with_metadata(Bytes::from_static(&[0, 1, 0, 0, 0, 0]))]);
        let ResponseKind::JoinGroup(r) = conn
            .call(ApiKey::JoinGroup, 5, RequestKind::JoinGroup(req))
            .unwrap()
        else {
            panic!("not a JoinGroup response")
        };
        member = r.member_id.to_string();
        match r.error_code {
            79 => continue, // MEMBER_ID_REQUIRED: join again with the id
            0 => {
                let req = SyncGroupRequest::default()
                    .with_group_id(GroupId(s(group)))
                    .with_generation_id(r.generation_id)
                    .with_member_id(s(&member))
                    .with_assignments(vec![
                        sync_group_request::SyncGroupRequestAssignment::default()
                            .with_member_id(s(&member))
                            .with_assignment(Bytes::from_static(&[0, 1, 0, 0, 0, 0, 0, 0])),
                    ]);
                let ResponseKind::SyncGroup(sync) = conn
                    .call(ApiKey::SyncGroup, 3, RequestKind::SyncGroup(req))
                    .unwrap()
                else {
                    panic!("not a SyncGroup response")
                };
                assert_eq!(sync.error_code, 0, "SyncGroup");
                return (member, r.generation_id);
            }
            code => panic!("JoinGroup: error {code}"),
        }
    }
    panic!("JoinGroup asked for a member id twice")
}

fn heartbeat(conn: &mut Conn, group: &str, member: &str, generation: i32) -> Result<i16, String> {
    let req = HeartbeatRequest::default()
        .with_group_id(GroupId(s(group)))
        .with_generation_id(generation)
        .with_member_id(s(member));
    match conn.call(ApiKey::Heartbeat, 3, RequestKind::Heartbeat(req))? {
        ResponseKind::Heartbeat(r) => Ok(r.error_code),
        other => Err(format!("{other:?}")),
    }
}

/// One answer of the cut-off node, with when its request was sent.
#[derive(Debug, Clone)]
struct Answer {
    sent: Instant,
    what: &'static str,
    /// Error code; for OffsetFetch with the offset read.
    code: i16,
    offset: Option<i64>,
}

/// Polls `addr` with OffsetFetch and Heartbeat until `stop`, recording every answer.
fn poll_answers(
    addr: std::net::SocketAddr,
    member: String,
    generation: i32,
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<Vec<Answer>>>,
) {
    let mut conn = None;
    while !stop.load(Ordering::Relaxed) {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match Conn::open(addr, Duration::from_secs(5)) {
                Ok(c) => conn.insert(c),
                Err(_) => continue,
            },
        };
        let fetch_sent = Instant::now();
        let fetched = fetch_offsets_on(c, OFFSETS);
        let beat_sent = Instant::now();
        let beat = heartbeat(c, MEMBERS, &member, generation);
        let mut out = answers.lock().unwrap();
        match fetched {
            Ok((code, offsets)) => out.push(Answer {
                sent: fetch_sent,
                what: "OffsetFetch",
                code,
                offset: offsets.iter().find(|o| o.1 == 0).map(|o| o.2),
            }),
            Err(_) => conn = None,
        }
        match beat {
            Ok(code) => out.push(Answer {
                sent: beat_sent,
                what: "Heartbeat",
                code,
                offset: None,
            }),
            Err(_) => conn = None,
        }
        drop(out);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// OffsetFetch v8 of `group` on an open connection: (group error, (topic, partition, offset)).
fn fetch_offsets_on(conn: &mut Conn, group: &str) -> Result<(i16, Vec<Committed>), String> {
    use offset_fetch_request::*;
    let req = OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
        .with_group_id(GroupId(s(group)))
        .with_topics(None)]);
    match conn.call(ApiKey::OffsetFetch, 8, RequestKind::OffsetFetch(req))? {
        ResponseKind::OffsetFetch(r) => {
            let g = &r.groups[0];
            let out = g
                .topics
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| (t.name.to_string(), p.partition_index, p.committed_offset))
                })
                .collect();
            Ok((g.error_code, out))
        }
        other => Err(format!("{other:?}")),
    }
}

#[test]
fn a_cut_off_leader_answers_nothing_stale_and_acknowledges_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base = ScriptCluster::free_base();
    let proxies = RaftProxies::start(ScriptCluster::proxy_routes(base));
    let c = ScriptCluster::up_behind_proxies(
        dir.path(),
        base,
        &["--group-initial-rebalance-delay-ms", "0"],
    );
    let old = c.wait_controller(&NODES, Duration::from_secs(30));
    assert_eq!(create_topic(c.kafka(old), TOPIC, 1), Ok(0));
    let mut conn = Conn::open(c.kafka(old), Duration::from_secs(10)).unwrap();
    assert_eq!(commit(&mut conn, OFFSETS, TOPIC, 0, 1), Ok(0));
    let (member, generation) = join_and_sync(&mut conn, MEMBERS);
    assert_eq!(heartbeat(&mut conn, MEMBERS, &member, generation), Ok(0));
    assert_eq!(
        fetch_offsets_on(&mut conn, OFFSETS).map(|(code, o)| (code, o[0].2)),
        Ok((0, 1))
    );

    // Cut the leader off; a poller keeps asking it from now to the heal.
    let answers = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let cut = Instant::now();
    proxies.cut(old);
    let poller = {
        let (addr, member, stop, answers) =
            (c.kafka(old), member.clone(), stop.clone(), answers.clone());
        std::thread::spawn(move || poll_answers(addr, member, generation, stop, answers))
    };

    // The majority elects a leader and takes a newer commit.
    let others: Vec<u64> = NODES.into_iter().filter(|n| *n != old).collect();
    let new = c.wait_controller(&others, Duration::from_secs(30));
    let elected = cut.elapsed();
    let mut last = None;
    let acked = loop {
        let answer = Conn::open(c.kafka(new), Duration::from_secs(10))
            .and_then(|mut conn| commit(&mut conn, OFFSETS, TOPIC, 0, 2));
        if answer == Ok(0) {
            break Instant::now();
        }
        assert!(
            cut.elapsed() < Duration::from_secs(30),
            "node {new} acknowledged no commit within 30 s of the cut: last answer {last:?}"
        );
        last = Some(answer);
        std::thread::sleep(Duration::from_millis(20));
    };

    // The cut-off node takes a commit it cannot replicate: never acknowledged.
    let mut stale = Conn::open(c.kafka(old), Duration::from_secs(10)).unwrap();
    let answer = commit(&mut stale, OFFSETS, TOPIC, 0, 1_000_000);
    assert!(
        !matches!(answer, Ok(0)),
        "the cut-off node acknowledged a commit"
    );
    let (code, _) = find_coordinator(c.kafka(old), OFFSETS).unwrap();
    assert_ne!(code, 0, "the cut-off node still names a coordinator");

    // Keep polling it a while after the newer commit, then stop and judge every answer.
    std::thread::sleep(Duration::from_millis(1000));
    stop.store(true, Ordering::Relaxed);
    poller.join().unwrap();
    let answers = answers.lock().unwrap().clone();
    let refused_from = answers
        .iter()
        .position(|a| a.code == NOT_COORDINATOR)
        .expect("the cut-off node never answered NOT_COORDINATOR");
    let refused_after = answers[refused_from].sent.saturating_duration_since(cut);
    let last_served = answers.iter().rev().find(|a| a.code == 0);
    for a in &answers {
        assert!(
            a.code == 0 || a.code == NOT_COORDINATOR,
            "{} answered {} by the cut-off node",
            a.what,
            a.code
        );
        if a.code == 0 {
            assert!(
                a.sent < acked,
                "{} answered {:?} by the cut-off node {:?} after the majority acknowledged offset 2",
                a.what,
                a.offset,
                a.sent.saturating_duration_since(acked)
            );
            assert!(
                a.sent.saturating_duration_since(cut) <= LEASE + SLACK,
                "{} served {:?} after the cut, past the {LEASE:?} lease",
                a.what,
                a.sent.saturating_duration_since(cut)
            );
            if let Some(offset) = a.offset {
                assert_eq!(offset, 1);
            }
        }
    }
    let refusals = answers.iter().filter(|a| a.code == NOT_COORDINATOR).count();
    assert!(
        answers[refused_from..]
            .iter()
            .all(|a| a.code == NOT_COORDINATOR),
        "the cut-off node served again after refusing"
    );
    eprintln!(
        "cut node {old}: served until {:?}, first NOT_COORDINATOR at {refused_after:?}, \
         {refusals} of {} answers refused; node {new} elected after {elected:?}, \
         acknowledged offset 2 after {:?}; commit to the cut-off node: {answer:?}",
        last_served.map(|a| a.sent.saturating_duration_since(cut)),
        answers.len(),
        acked.saturating_duration_since(cut)
    );

    // Healed: it follows, the cluster agrees, and only the majority's commit is there.
    proxies.heal(old);
    c.wait_healthy(Duration::from_secs(30));
    let leader = c.wait_controller(&NODES, Duration::from_secs(10));
    let (code, offsets) = fetch_offsets(c.kafka(leader), OFFSETS).unwrap();
    assert_eq!(code, 0);
    assert_eq!(offsets, vec![(TOPIC.to_owned(), 0, 2)]);
    drop(c);
    drop(proxies);
}
