//! Elections gated by a pre-vote round, driven by this task instead of openraft's own timer.
//!
//! openraft 0.9 has no pre-vote: a follower that merely lost touch (SIGSTOPped, cut off, just
//! restarted) campaigns on its own timer and bumps the term; the healthy leader steps down the
//! moment its next AppendEntries meets that higher term, and the cluster pays an election for
//! one node's hiccup. Its timer also waits a leader lease plus a whole election timeout before
//! a follower campaigns, and two survivors with different logs can waste a round on each other.
//! So openraft's timer is off (`Config::enable_elect = false`) and this task decides:
//!
//! ```text
//!  every poll ─► leader, learner, or heard a leader / granted a vote within lease + jitter? ─► wait
//!           └─► pre-vote: ask every voter "would you vote for me now?"; each says yes only if it
//!               is not leading, has heard no leader for a lease, and my log is at least its own
//!               └─ a majority of every voter set (myself included) ─► raft.trigger().elect()
//!           ─► next look after a random retry delay (a split vote resolves on the next round)
//! ```
//!
//! The lease is openraft's `election_timeout_max`, the same lease its vote handling enforces, and
//! contact is recorded after openraft handled the AppendEntries, so a granted pre-vote means the
//! real vote passes that check too. Nothing here changes safety: only openraft's vote decides who
//! leads; this task only chooses when to ask.

use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use openraft::storage::RaftLogStorage;
use openraft::ServerState;

use crate::network::rpc::{PreVoteRequest, PreVoteResponse, RpcRequest, RpcResponse};
use crate::network::NetworkFactory;
use crate::store::LogStore;
use crate::types::{LogId, NodeId, NodeInfo, Raft, RaftMetrics};

/// When this node last heard from a leader it accepted (an AppendEntries or snapshot that was
/// not refused for its term) or granted another node its vote. Starts as "now": a node that
/// just started gives the cluster a lease to reach it before it asks for anything.
#[derive(Debug)]
pub(crate) struct LeaderContact {
    epoch: Instant,
    last_ms: AtomicU64,
    /// Until when this node holds back its own campaign: it just granted a pre-vote, and the
    /// candidate should get the round to itself.
    defer_until_ms: AtomicU64,
}

impl Default for LeaderContact {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            last_ms: AtomicU64::new(0),
            defer_until_ms: AtomicU64::new(0),
        }
    }
}

impl LeaderContact {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub fn touch(&self) {
        self.last_ms.fetch_max(self.now_ms(), Ordering::Relaxed);
    }

    /// Holds back this node's own campaign for `d`.
    pub fn defer(&self, d: Duration) {
        let until = self
            .now_ms()
            .saturating_add(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.defer_until_ms.fetch_max(until, Ordering::Relaxed);
    }

    fn deferred(&self) -> bool {
        self.now_ms() < self.defer_until_ms.load(Ordering::Relaxed)
    }

    /// Time since the last contact.
    pub fn silence(&self) -> Duration {
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(last)
    }
}

/// When to look, ask and retry; derived from the Raft timing (`Tuning`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ElectionTiming {
    /// Silence before a node may campaign, and what a voter requires before it grants a
    /// pre-vote: openraft's leader lease (`election_timeout_max`).
    pub lease: Duration,
    /// Random extra silence per attempt, drawn from `[0, jitter)`, so survivors rarely
    /// campaign at the same moment.
    pub jitter: Duration,
    /// After an attempt that did not make this node leader, the next one waits a random delay
    /// in `[retry, 2 * retry)`.
    pub retry: Duration,
    /// How often the task looks at the node's state.
    pub poll: Duration,
    /// Deadline of one pre-vote call.
    pub rpc_timeout: Duration,
}

/// What a voter answers to a pre-vote: yes only if it would grant the real vote now.
pub(crate) fn grant_pre_vote(
    state: ServerState,
    silence: Duration,
    lease: Duration,
    own_last_log: Option<&LogId>,
    request: &PreVoteRequest,
) -> bool {
    state != ServerState::Leader && silence >= lease && request.last_log_id.as_ref() >= own_last_log
}

/// Whether the granted voters (this node included) form a majority of every voter set (two
/// during a membership change, as openraft's joint consensus requires).
pub(crate) fn is_quorum(voter_sets: &[BTreeSet<NodeId>], granted: &BTreeSet<NodeId>) -> bool {
    !voter_sets.is_empty()
        && voter_sets
            .iter()
            .all(|set| set.iter().filter(|id| granted.contains(id)).count() * 2 > set.len())
}

/// A small xorshift generator: jitter needs no cryptography, only different draws per node.
struct Jitter(u64);

impl Jitter {
    fn seeded(node_id: NodeId) -> Self {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(node_id);
        Jitter(h.finish() | 1)
    }

    fn below(&mut self, limit: Duration) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX).max(1);
        Duration::from_millis(self.0 % ms)
    }
}

pub(crate) struct Elector {
    pub raft: Raft,
    pub node_id: NodeId,
    pub contact: Arc<LeaderContact>,
    pub network: NetworkFactory,
    pub log: LogStore,
    pub timing: ElectionTiming,
}

impl Elector {
    pub(crate) async fn run(mut self) {
        let mut jitter = Jitter::seeded(self.node_id);
        let mut needed_silence = self.timing.lease + jitter.below(self.timing.jitter);
        let mut next_attempt = Instant::now();
        let mut seen_vote = None;
        let mut poll = tokio::time::interval(self.timing.poll);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            poll.tick().await;
            let m: RaftMetrics = self.raft.metrics().borrow().clone();
            if m.running_state.is_err() || m.state == ServerState::Shutdown {
                return;
            }
            if seen_vote.as_ref() != Some(&m.vote) {
                // Granting another node our vote gives it the time to win before we compete.
                if m.vote.leader_id().voted_for() != Some(self.node_id) {
                    self.contact.touch();
                }
                seen_vote = Some(m.vote);
            }
            let membership = m.membership_config.membership();
            if m.state == ServerState::Leader || !membership.voter_ids().any(|v| v == self.node_id)
            {
                continue;
            }
            if self.contact.silence() < needed_silence
                || Instant::now() < next_attempt
                || self.contact.deferred()
            {
                continue;
            }
            let voter_sets = membership.get_joint_config().clone();
            let peers: Vec<(NodeId, NodeInfo)> = membership
                .nodes()
                .filter(|(id, _)| **id != self.node_id && voter_sets.iter().any(|s| s.contains(id)))
                .map(|(id, info)| (*id, info.clone()))
                .collect();
            let granted = self.pre_vote(&voter_sets, peers).await;
            if granted {
                tracing::info!(
                    node = self.node_id,
                    term = m.current_term,
                    silence_ms = self.contact.silence().as_millis() as u64,
                    "pre-vote granted by a quorum: campaigning"
                );
                if self.raft.trigger().elect().await.is_err() {
                    return;
                }
            }
            next_attempt = Instant::now() + self.timing.retry + jitter.below(self.timing.retry);
            needed_silence = self.timing.lease + jitter.below(self.timing.jitter);
        }
    }

    async fn pre_vote(
        &mut self,
        voter_sets: &[BTreeSet<NodeId>],
        peers: Vec<(NodeId, NodeInfo)>,
    ) -> bool {
        let last_log_id = match self.log.get_log_state().await {
            Ok(state) => state.last_log_id,
            Err(e) => {
                tracing::warn!(error = %e, "pre-vote: cannot read the log state");
                return false;
            }
        };
        let request = PreVoteRequest {
            candidate: self.node_id,
            last_log_id,
        };
        let mut granted = BTreeSet::from([self.node_id]);
        let calls = peers.into_iter().map(|(id, info)| {
            let network = self.network.clone();
            let request = RpcRequest::PreVote(request.clone());
            let timeout = self.timing.rpc_timeout;
            async move {
                let answer = network.call(id, &info, &request, timeout).await;
                (id, answer)
            }
        });
        let mut pending: tokio::task::JoinSet<_> = calls.collect();
        while let Some(done) = pending.join_next().await {
            if let Ok((id, Ok(RpcResponse::PreVote(PreVoteResponse { granted: true })))) = done {
                granted.insert(id);
                if is_quorum(voter_sets, &granted) {
                    return true;
                }
            }
        }
        is_quorum(voter_sets, &granted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::CommittedLeaderId;

    fn log_id(term: u64, index: u64) -> LogId {
        LogId::new(CommittedLeaderId::new(term, 1), index)
    }

    fn ask(last: Option<LogId>) -> PreVoteRequest {
        PreVoteRequest {
            candidate: 2,
            last_log_id: last,
        }
    }

    const LEASE: Duration = Duration::from_millis(500);

    #[test]
    fn a_voter_that_hears_a_leader_or_leads_refuses() {
        let own = Some(log_id(3, 10));
        let req = ask(Some(log_id(3, 10)));
        assert!(!grant_pre_vote(
            ServerState::Follower,
            Duration::from_millis(499),
            LEASE,
            own.as_ref(),
            &req
        ));
        assert!(!grant_pre_vote(
            ServerState::Leader,
            Duration::from_secs(9),
            LEASE,
            own.as_ref(),
            &req
        ));
        assert!(grant_pre_vote(
            ServerState::Follower,
            LEASE,
            LEASE,
            own.as_ref(),
            &req
        ));
        assert!(grant_pre_vote(
            ServerState::Candidate,
            LEASE,
            LEASE,
            own.as_ref(),
            &req
        ));
    }

    #[test]
    fn a_candidate_behind_in_term_or_index_is_refused() {
        let silent = Duration::from_secs(1);
        let own = Some(log_id(3, 10));
        let grant = |last| {
            grant_pre_vote(
                ServerState::Follower,
                silent,
                LEASE,
                own.as_ref(),
                &ask(last),
            )
        };
        assert!(!grant(Some(log_id(3, 9))));
        assert!(!grant(Some(log_id(2, 50))), "a lower last term loses");
        assert!(!grant(None));
        assert!(grant(Some(log_id(3, 10))));
        assert!(grant(Some(log_id(4, 2))), "a higher last term wins");
        assert!(grant_pre_vote(
            ServerState::Follower,
            silent,
            LEASE,
            None,
            &ask(None)
        ));
    }

    #[test]
    fn quorum_counts_every_voter_set_of_a_joint_config() {
        let set = |ids: &[u64]| ids.iter().copied().collect::<BTreeSet<_>>();
        assert!(is_quorum(&[set(&[1])], &set(&[1])));
        assert!(!is_quorum(&[set(&[1, 2, 3])], &set(&[1])));
        assert!(is_quorum(&[set(&[1, 2, 3])], &set(&[1, 3])));
        assert!(!is_quorum(&[set(&[1, 2, 3, 4])], &set(&[1, 3])));
        let joint = [set(&[1, 2, 3]), set(&[3, 4, 5])];
        assert!(!is_quorum(&joint, &set(&[1, 2, 3])));
        assert!(is_quorum(&joint, &set(&[1, 3, 4])));
        assert!(!is_quorum(&[], &set(&[1])));
    }

    #[test]
    fn contact_starts_now_and_touch_resets_the_silence() {
        let c = LeaderContact::default();
        assert!(c.silence() < Duration::from_millis(100));
        std::thread::sleep(Duration::from_millis(30));
        assert!(c.silence() >= Duration::from_millis(30));
        c.touch();
        assert!(c.silence() < Duration::from_millis(30));
        assert!(!c.deferred());
        c.defer(Duration::from_millis(200));
        assert!(c.deferred());
    }

    #[test]
    fn jitter_stays_below_its_limit_and_varies() {
        let mut j = Jitter::seeded(7);
        let draws: BTreeSet<Duration> = (0..100)
            .map(|_| j.below(Duration::from_millis(200)))
            .collect();
        assert!(draws.iter().all(|d| *d < Duration::from_millis(200)));
        assert!(draws.len() > 20, "{draws:?}");
    }
}
