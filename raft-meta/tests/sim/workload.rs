//! A client: one command at a time to whoever leads (offset commits for its own group's
//! partitions, admin resets of them, topic creates and deletes), each acknowledged commit
//! reported to the checker's ledger with the log position and leader id the leader answered.
//! Several clients run at once, one group each, so entries interleave in the log.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use coordinator::{
    ApiVersion, CommitOffsets, CommitPartition, CommitTopic, Generation, GroupId, LeaderEpoch,
    MemberId, Offset, PartitionIndex, TimestampMs, TopicName, WriteCommand,
};
use raft_meta::cohort_app::{Body, Envelope, TopicMeta};
use raft_meta::types::Raft;
use raft_meta::CommandBatch;
use tokio::sync::oneshot;

use super::checker::{hash_of, Checker, LeaderId};
use super::recorder::ADMIN_RESET;
use super::rng::SimRng;

/// How long the client waits for one write before it gives up on it (its fate is then
/// unknown: it may still commit, and the checker treats it as never acknowledged).
const WRITE_TIMEOUT: Duration = Duration::from_millis(1_000);

/// Where a write's outcome arrives: its log index and leader id once committed, `None` if its
/// fate is unknown.
type Answer = oneshot::Receiver<Option<(u64, LeaderId)>>;

/// (topic, partition) of the client's group.
type Key = (u8, i32);

pub struct Client {
    group: GroupId,
    rng: SimRng,
    /// Highest offset ever proposed per (group, topic, partition): the next commit goes past
    /// it, so a commit whose fate is unknown can never make a later one look like a step back.
    proposed: BTreeMap<Key, i64>,
    in_flight: Option<(u64, Answer)>,
    pub sent: u64,
    pub acknowledged: u64,
}

impl Client {
    pub fn new(group: &str, rng: SimRng) -> Self {
        Self {
            group: GroupId::new(group),
            rng,
            proposed: BTreeMap::new(),
            in_flight: None,
            sent: 0,
            acknowledged: 0,
        }
    }

    pub fn idle(&self) -> bool {
        self.in_flight.is_none()
    }

    /// Collects the answer to the write in flight, if it came.
    pub fn poll(&mut self, checker: &Checker, verbose: bool) {
        let Some((hash, rx)) = &mut self.in_flight else {
            return;
        };
        match rx.try_recv() {
            Err(oneshot::error::TryRecvError::Empty) => {}
            Ok(Some((index, by))) => {
                if verbose {
                    eprintln!("ack {index} by {by:?}");
                }
                checker.acknowledged((index, 0), by, *hash);
                self.acknowledged += 1;
                self.in_flight = None;
            }
            Ok(None) | Err(oneshot::error::TryRecvError::Closed) => self.in_flight = None,
        }
    }

    /// Sends the next command to `leader`, unless one is in flight.
    pub fn send(&mut self, leader: &Raft, now_ms: u64) {
        if self.in_flight.is_some() {
            return;
        }
        let command = self.next_command(now_ms);
        let hash = hash_of(&command[..]);
        let raft = leader.clone();
        let (tx, rx) = oneshot::channel();
        tokio::spawn(async move {
            let write = raft.client_write(CommandBatch(vec![command]));
            let index = match tokio::time::timeout(WRITE_TIMEOUT, write).await {
                Ok(Ok(resp)) => Some((
                    resp.log_id.index,
                    (
                        resp.log_id.leader_id.get_term(),
                        resp.log_id.leader_id.voted_for().unwrap_or_default(),
                    ),
                )),
                _ => None,
            };
            let _ = tx.send(index);
        });
        self.in_flight = Some((hash, rx));
        self.sent += 1;
    }

    fn next_command(&mut self, now_ms: u64) -> Bytes {
        let topic = |i: u64| format!("t{i}");
        let body = match self.rng.below(100) {
            0..=74 => self.commit(now_ms, false),
            75..=84 => self.commit(now_ms, true),
            85..=94 => {
                let i = self.rng.below(3);
                Body::CreateTopics {
                    topics: vec![TopicMeta {
                        name: topic(i),
                        id: u128::from(self.rng.next_u64()),
                        partitions: vec![vec![1, 2, 3]; 3],
                        configs: BTreeMap::new(),
                    }],
                }
            }
            _ => Body::DeleteTopics {
                names: vec![topic(self.rng.below(3))],
                now_ms: TimestampMs(now_ms as i64),
            },
        };
        Envelope { origin: None, body }.encode()
    }

    fn commit(&mut self, now_ms: u64, reset: bool) -> Body {
        let key: Key = (self.rng.below(2) as u8, self.rng.below(3) as i32);
        let proposed = self.proposed.get(&key).copied().unwrap_or(0);
        let offset = if reset {
            self.rng.below(proposed as u64 + 1) as i64
        } else {
            let next = proposed + self.rng.range(1, 5) as i64;
            self.proposed.insert(key, next);
            next
        };
        Body::Group(WriteCommand::CommitOffsets(CommitOffsets {
            api_version: ApiVersion(8),
            now_ms: TimestampMs(now_ms as i64),
            group_id: self.group.clone(),
            generation: Generation::NONE,
            member_id: MemberId::default(),
            group_instance_id: None,
            retention_time_ms: -1,
            topics: vec![CommitTopic {
                name: TopicName::new(format!("t{}", key.0)),
                partitions: vec![CommitPartition {
                    partition: PartitionIndex(key.1),
                    offset: Offset(offset),
                    leader_epoch: LeaderEpoch(-1),
                    metadata: reset.then(|| ADMIN_RESET.to_owned()),
                    partition_known: true,
                }],
            }],
        }))
    }
}
