//! Property, over random traces of consumer-protocol clients (joins with names or patterns,
//! static members, heartbeats, leaves, temporary leaves, crashes, commits, topics created,
//! grown and deleted, time passing, a follower restored from a snapshot halfway, assignments
//! inline or off the request path; and classic clients joining the consumer group, rejoining
//! when told, committing and leaving, so that groups are upgraded and downgraded online):
//! - `state(apply) == state(replay records) == state(replay compacted log)` after every step
//!   (the harness checks it, with the snapshot and the codec);
//! - no partition is held by two members in the state, and no partition is owned by two live
//!   clients at once, where clients own exactly what their answers gave them;
//! - once the trace stops changing things and the live clients keep heartbeating, the group
//!   is Stable and every partition of the subscribed topics is owned once.
//!
//! The seed is printed; `COORDINATOR_SEED=<seed> cargo test -p coordinator --test
//! consumer_replay_property` replays a failing run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::consumer::*;
use harness::*;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How often the traces took a classic client into a consumer group, and saw a group change
/// protocol: the run checks that migration was exercised, not only allowed.
static CLASSIC_SYNCS: AtomicUsize = AtomicUsize::new(0);
static CONVERSIONS: AtomicUsize = AtomicUsize::new(0);

const TOPICS: [&str; 3] = ["t0", "t1", "t2"];
const CLIENTS: usize = 5;
/// Classic clients (JoinGroup/SyncGroup/Heartbeat, eager: they give up everything to rejoin).
const CLASSIC_CLIENTS: usize = 2;

#[derive(Clone, Debug)]
enum Op {
    Join {
        client: usize,
        topics: u8,
        regex: bool,
        static_: bool,
    },
    Beat {
        client: usize,
    },
    Leave {
        client: usize,
    },
    StaticLeave {
        client: usize,
    },
    Crash {
        client: usize,
    },
    Commit {
        client: usize,
        stale: bool,
    },
    Topic {
        topic: usize,
        partitions: i32,
        delete: bool,
    },
    Advance {
        ms: i64,
    },
    ClassicJoin {
        client: usize,
        topics: u8,
    },
    ClassicBeat {
        client: usize,
    },
    ClassicLeave {
        client: usize,
    },
    ClassicCommit {
        client: usize,
        stale: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let client = 0..CLIENTS;
    prop_oneof![
        3 => (client.clone(), 1u8..8, proptest::bool::weighted(0.2), proptest::bool::weighted(0.3))
            .prop_map(|(client, topics, regex, static_)| Op::Join { client, topics, regex, static_ }),
        8 => client.clone().prop_map(|client| Op::Beat { client }),
        1 => client.clone().prop_map(|client| Op::Leave { client }),
        1 => client.clone().prop_map(|client| Op::StaticLeave { client }),
        1 => client.clone().prop_map(|client| Op::Crash { client }),
        2 => (client, any::<bool>()).prop_map(|(client, stale)| Op::Commit { client, stale }),
        1 => (0..TOPICS.len(), 1i32..7, proptest::bool::weighted(0.3))
            .prop_map(|(topic, partitions, delete)| Op::Topic { topic, partitions, delete }),
        2 => prop_oneof![Just(1_000i64), Just(10_000), Just(31_000), Just(50_000)]
            .prop_map(|ms| Op::Advance { ms }),
        2 => (0..CLASSIC_CLIENTS, 1u8..8).prop_map(|(client, topics)| Op::ClassicJoin { client, topics }),
        4 => (0..CLASSIC_CLIENTS).prop_map(|client| Op::ClassicBeat { client }),
        1 => (0..CLASSIC_CLIENTS).prop_map(|client| Op::ClassicLeave { client }),
        1 => (0..CLASSIC_CLIENTS, any::<bool>()).prop_map(|(client, stale)| Op::ClassicCommit { client, stale }),
    ]
}

#[derive(Clone, Debug, Default)]
struct Client {
    member: String,
    instance: Option<String>,
    epoch: i32,
    owned: Assignment,
    joined: bool,
    generation: u32,
}

/// A classic client in a consumer group: it owns what its last SyncGroup gave it.
#[derive(Clone, Debug, Default)]
struct ClassicClient {
    member: String,
    generation: i32,
    topics: Vec<&'static str>,
    owned: Assignment,
    joined: bool,
}

struct World {
    h: Harness,
    clients: Vec<Client>,
    classic: Vec<ClassicClient>,
    topic_ids: BTreeMap<usize, u128>,
    next_topic_id: u128,
}

impl World {
    fn answer(&mut self, i: usize, r: &ConsumerHeartbeatResponse) {
        let c = &mut self.clients[i];
        match r.error {
            None => {
                c.epoch = r.member_epoch;
                if let Some(a) = &r.assignment {
                    c.owned = a.clone();
                }
                if r.member_epoch < 0 {
                    c.joined = false;
                    c.owned = Assignment::new();
                }
            }
            Some(ErrorKind::FencedMemberEpoch | ErrorKind::UnknownMemberId) => {
                // A fenced client abandons its partitions and rejoins.
                c.joined = false;
                c.owned = Assignment::new();
            }
            Some(_) => {}
        }
    }

    fn beat(&mut self, i: usize) {
        let c = self.clients[i].clone();
        if !c.joined {
            return;
        }
        let mut hb = Hb::beat(&c.member, c.epoch, &c.owned);
        hb.instance = c.instance.clone();
        let r = self.h.cg_heartbeat(&hb);
        self.answer(i, &r);
    }

    fn run(&mut self, op: &Op) {
        match op {
            Op::Join {
                client,
                topics,
                regex,
                static_,
            } => {
                let i = *client;
                if self.clients[i].joined {
                    return self.beat(i);
                }
                let c = &mut self.clients[i];
                c.generation += 1;
                c.member = format!("c{i}-{}", c.generation);
                c.instance = static_.then(|| format!("host-{i}"));
                c.owned = Assignment::new();
                let names: Vec<&str> = TOPICS
                    .iter()
                    .enumerate()
                    .filter(|(t, _)| topics & (1 << t) != 0)
                    .map(|(_, n)| *n)
                    .collect();
                let mut hb = Hb::join(&c.member, &names);
                hb.instance = c.instance.clone();
                if *regex {
                    hb.regex = Some("t[12]".to_owned());
                }
                c.joined = true;
                let r = self.h.cg_heartbeat(&hb);
                if r.error.is_some() {
                    self.clients[i].joined = false;
                }
                self.answer(i, &r);
            }
            Op::Beat { client } => self.beat(*client),
            Op::Leave { client } | Op::StaticLeave { client } => {
                let c = self.clients[*client].clone();
                if !c.joined {
                    return;
                }
                let temporary = matches!(op, Op::StaticLeave { .. }) && c.instance.is_some();
                let mut hb = Hb::beat(&c.member, if temporary { -2 } else { -1 }, &c.owned);
                hb.instance = c.instance.clone();
                let r = self.h.cg_heartbeat(&hb);
                let c = &mut self.clients[*client];
                c.joined = false;
                c.owned = Assignment::new();
                let _ = r;
            }
            Op::Crash { client } => {
                let c = &mut self.clients[*client];
                c.joined = false;
                c.owned = Assignment::new();
            }
            Op::Commit { client, stale } => {
                let c = self.clients[*client].clone();
                if !c.joined {
                    return;
                }
                let epoch = if *stale { c.epoch + 1 } else { c.epoch };
                let error = self.h.commit_with(
                    CommitReq::new(&c.member, epoch)
                        .version(9)
                        .topic("t0")
                        .offset(0, 7),
                )[0]
                .1;
                if !*stale && self.h.state.topic("t0").is_some() {
                    assert_eq!(error, None, "a member's commit with its epoch");
                } else if *stale {
                    assert!(error.is_some(), "a stale epoch committed");
                }
            }
            Op::Topic {
                topic,
                partitions,
                delete,
            } => {
                let name = TOPICS[*topic];
                if *delete {
                    self.topic_ids.remove(topic);
                    self.h.topics_changed(&[], &[name]);
                } else {
                    let id = *self.topic_ids.entry(*topic).or_insert_with(|| {
                        self.next_topic_id += 1;
                        self.next_topic_id
                    });
                    // Topics only grow, as Kafka's do.
                    let now = self.h.state.topic(name).map_or(0, |(_, p)| p);
                    self.h
                        .topics_changed(&[(name, id, now.max(*partitions))], &[]);
                }
            }
            Op::ClassicJoin { client, topics } => {
                let i = *client;
                if self.classic[i].joined {
                    return self.classic_beat(i);
                }
                // Classic clients come into consumer groups only (a classic group's own
                // rebalances are `join.rs`'s); a downgrade stops them (below).
                let mixed = self
                    .h
                    .state
                    .consumer_group(&GROUP.into())
                    .is_some_and(|g| !g.members.is_empty());
                if !mixed {
                    return;
                }
                let c = &mut self.classic[i];
                c.member = String::new();
                c.topics = TOPICS
                    .iter()
                    .enumerate()
                    .filter(|(t, _)| topics & (1 << t) != 0)
                    .map(|(_, n)| *n)
                    .collect();
                c.joined = true;
                self.classic_rejoin(i);
            }
            Op::ClassicBeat { client } => self.classic_beat(*client),
            Op::ClassicLeave { client } => {
                let c = self.classic[*client].clone();
                if !c.joined {
                    return;
                }
                if self.h.state.consumer_group(&GROUP.into()).is_some() {
                    self.h.leave(&[(c.member.as_str(), None)]);
                }
                self.classic[*client] = ClassicClient::default();
            }
            Op::ClassicCommit { client, stale } => {
                let c = self.classic[*client].clone();
                if !c.joined || self.h.state.consumer_group(&GROUP.into()).is_none() {
                    return;
                }
                let generation = if *stale {
                    c.generation + 1
                } else {
                    c.generation
                };
                let error = self.h.commit_with(
                    CommitReq::new(&c.member, generation)
                        .version(8)
                        .topic("t0")
                        .offset(0, 7),
                )[0]
                .1;
                let current = self.h.state.consumer_group(&GROUP.into()).and_then(|g| {
                    let id = MemberId::from(c.member.as_str());
                    g.members
                        .contains_key(&id)
                        .then(|| g.current_of(&id).member_epoch)
                });
                // The client's generation may be older than its member's epoch (the group
                // was converted behind its back): what counts is the epoch the state holds.
                if current != Some(generation) {
                    assert!(
                        error.is_some(),
                        "a generation other than the member's committed"
                    );
                } else if self.h.state.topic("t0").is_some() {
                    assert_eq!(error, None, "a classic member's commit with its generation");
                }
            }
            Op::Advance { ms } => {
                self.h.advance(*ms);
                // A client whose member the coordinator expired has stopped too.
                for c in &mut self.clients {
                    let alive = self.h.state.consumer_group(&GROUP.into()).is_some_and(|g| {
                        g.members.contains_key(&MemberId::from(c.member.as_str()))
                    });
                    if c.joined && !alive {
                        c.joined = false;
                        c.owned = Assignment::new();
                    }
                }
                for i in 0..CLASSIC_CLIENTS {
                    self.classic_beat(i);
                }
            }
        }
        self.check_clients();
    }

    fn check_clients(&self) {
        let mut seen: BTreeMap<(TopicId, PartitionIndex), &str> = BTreeMap::new();
        let consumer = self
            .clients
            .iter()
            .filter(|c| c.joined)
            .map(|c| (&c.member, &c.owned));
        let classic = self
            .classic
            .iter()
            .filter(|c| c.joined)
            .map(|c| (&c.member, &c.owned));
        for (member, owned) in consumer.chain(classic) {
            for key in owned.iter() {
                if let Some(other) = seen.insert(key, member) {
                    panic!("{key:?} owned by clients {other} and {member} at once");
                }
            }
        }
    }

    /// A classic client's heartbeat; when told, it rejoins (giving up everything first, as
    /// an eager client does) and syncs. A group that is no longer a consumer group (it was
    /// downgraded) stops it: its classic rebalances are another test's.
    fn classic_beat(&mut self, i: usize) {
        let c = self.classic[i].clone();
        if !c.joined {
            return;
        }
        if self.h.state.consumer_group(&GROUP.into()).is_none() {
            self.classic[i] = ClassicClient::default();
            return;
        }
        match self.h.heartbeat(&c.member, c.generation) {
            Ok(()) => {}
            Err(ErrorKind::RebalanceInProgress | ErrorKind::IllegalGeneration) => {
                self.classic_rejoin(i)
            }
            Err(_) => self.classic[i] = ClassicClient::default(),
        }
    }

    fn classic_rejoin(&mut self, i: usize) {
        self.classic[i].owned = Assignment::new();
        let c = self.classic[i].clone();
        let out = self.h.join(
            JoinReq::new(&c.member)
                .version(3)
                .protocols(&[("range", subscription(&c.topics))]),
        );
        let Reply::Join(join) = out.reply else {
            panic!(
                "a classic member of a consumer group is answered at once: {:?}",
                out.reply
            )
        };
        if join.error.is_some() {
            self.classic[i] = ClassicClient::default();
            return;
        }
        let member = join.member_id.as_str().to_owned();
        let generation = join.generation.0;
        self.classic[i].member = member.clone();
        self.classic[i].generation = generation;
        let out = self.h.sync_full(
            GROUP,
            &member,
            None,
            generation,
            Some("consumer"),
            Some("range"),
            &[],
        );
        let Reply::Sync(sync) = out.reply else {
            panic!(
                "a classic member's sync is answered at once: {:?}",
                out.reply
            )
        };
        if sync.error.is_none() {
            CLASSIC_SYNCS.fetch_add(1, Ordering::Relaxed);
            let named = subscription::decode_assignment(&sync.assignment).unwrap();
            let state = &self.h.state;
            self.classic[i].owned = Assignment::from_pairs(named.iter().flat_map(|(t, ps)| {
                let id = state.topic(t).map(|(id, _)| id);
                ps.iter()
                    .filter_map(move |p| id.map(|id| (id, PartitionIndex(*p))))
            }));
        }
    }

    /// Everyone alive keeps heartbeating: the group must become Stable with every
    /// subscribed partition owned exactly once.
    fn converge(&mut self) {
        for _ in 0..12 {
            for i in 0..CLIENTS {
                self.beat(i);
                self.check_clients();
            }
            for i in 0..CLASSIC_CLIENTS {
                self.classic_beat(i);
                self.check_clients();
            }
        }
        let Some(group) = self.h.state.consumer_group(&GROUP.into()) else {
            return;
        };
        if group.members.is_empty() {
            assert_eq!(group::consumer::state(group), ConsumerGroupState::Empty);
            return;
        }
        let live = self.clients.iter().filter(|c| c.joined).count()
            + self.classic.iter().filter(|c| c.joined).count();
        if group.members.len() != live {
            // Members that left with −2 hold their partitions until their session expires.
            return;
        }
        assert_eq!(
            group::consumer::state(group),
            ConsumerGroupState::Stable,
            "did not converge: {group:?}"
        );
        let owned: usize = self
            .clients
            .iter()
            .filter(|c| c.joined)
            .map(|c| c.owned.len())
            .chain(
                self.classic
                    .iter()
                    .filter(|c| c.joined)
                    .map(|c| c.owned.len()),
            )
            .sum();
        let targets: usize = group.targets.values().map(Assignment::len).sum();
        assert_eq!(owned, targets, "clients own what the target gives");
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
fn consumer_traces_replay_equal_and_never_own_a_partition_twice() {
    let seed = seed();
    println!("consumer_replay_property seed = {seed} (COORDINATOR_SEED={seed} reproduces)");
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        ProptestConfig {
            cases: 192,
            failure_persistence: None,
            ..ProptestConfig::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let strategy = (proptest::collection::vec(op(), 1..70), any::<bool>());
    let result = runner.run(&strategy, |(ops, off_path)| {
        let config = Config {
            consumer_inline_assignment_max_cost: if off_path { 0 } else { 100_000 },
            ..Config::default()
        };
        let mut w = World {
            h: Harness::with_config(config),
            clients: vec![Client::default(); CLIENTS],
            classic: vec![ClassicClient::default(); CLASSIC_CLIENTS],
            topic_ids: BTreeMap::new(),
            next_topic_id: 100,
        };
        w.h.topics_changed(&[("t0", 1, 3)], &[]);
        w.topic_ids.insert(0, 1);
        let fork_at = ops.len() / 2;
        for (i, op) in ops.iter().enumerate() {
            if i == fork_at {
                w.h.add_follower_from_snapshot();
            }
            let before = w.h.state.consumer_group(&GROUP.into()).is_some();
            w.run(op);
            let after = w.h.state.consumer_group(&GROUP.into()).is_some();
            // A group that is consumer before and classic after, or the reverse, with
            // members on both sides: an online conversion.
            if before != after
                && w.h
                    .state
                    .group(&GROUP.into())
                    .is_some_and(|g| !g.members.is_empty())
            {
                CONVERSIONS.fetch_add(1, Ordering::Relaxed);
            }
            if before != after
                && w.h
                    .state
                    .consumer_group(&GROUP.into())
                    .is_some_and(|g| g.classic_member_count() > 0)
            {
                CONVERSIONS.fetch_add(1, Ordering::Relaxed);
            }
        }
        w.converge();
        w.h.check_replay();
        Ok(())
    });
    if let Err(e) = result {
        panic!("seed {seed}: {e}");
    }
    let (syncs, conversions) = (
        CLASSIC_SYNCS.load(Ordering::Relaxed),
        CONVERSIONS.load(Ordering::Relaxed),
    );
    println!("classic members synced {syncs} times; {conversions} online conversions");
    assert!(
        syncs > 0,
        "seed {seed}: no classic member ever joined a consumer group"
    );
}
