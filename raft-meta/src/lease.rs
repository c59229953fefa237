//! The leader's lease: how long this node may still answer from its applied state as leader
//! without asking anyone (the leader-lease record in `docs/decisions/`).
//!
//! openraft 0.9 never steps a leader down on its own: one cut off from its peers keeps
//! `ServerState::Leader` until it hears a higher term, which it cannot while it is cut off. What
//! it reads locally (OffsetFetch, heartbeats, unchanged joins) is stale the moment the majority
//! elects someone else. A voter refuses to elect anyone for `election_timeout_max` after it last
//! accepted an AppendEntries of the leader (openraft's vote lease, and the pre-vote of
//! `election.rs`). So once a quorum accepted an AppendEntries this node *sent* at `t`, nobody
//! else can lead before `t + election_timeout_max`: until `t + lease` (lease shorter than that)
//! this node's applied state is the newest there is.
//!
//! ```text
//!  PeerClient::append_entries ── sent at t, answered (not HigherVote) ──► record_ack(peer, term, t)
//!  watch_metrics ── term, leading, voter sets ─────────────────────────► observe(...)
//!        └─► valid_until = (quorum-th newest t of this term, per voter set) + lease   (one atomic)
//!  holds() = now < valid_until                                    (the coordinator's per-request check)
//! ```
//!
//! The time kept is when the request was *sent* (taken before the bytes leave), never when the
//! answer came back, so a slow answer can only shorten the lease. A single-voter cluster holds
//! it while it leads: there is nobody to elect another leader.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::types::NodeId;

/// `valid_until` when no lease is held.
const NONE: u64 = 0;
/// `valid_until` of a leader that needs nobody's acknowledgement (one voter).
const FOREVER: u64 = u64::MAX;

/// The lease of this node; shared by the transport (acks), the metrics watch (role) and the
/// readers (the group coordinator).
#[derive(Debug)]
pub struct LeaderLease {
    node_id: NodeId,
    epoch: Instant,
    duration: Duration,
    /// Microseconds since `epoch` until which the lease holds; [`NONE`] or [`FOREVER`].
    valid_until_us: AtomicU64,
    book: Mutex<Book>,
}

/// What the lease is computed from.
#[derive(Debug, Default)]
struct Book {
    term: u64,
    leading: bool,
    /// One set normally, two during a joint membership change (each needs its own quorum).
    voter_sets: Vec<BTreeSet<NodeId>>,
    /// Per peer: the term and send time (µs since epoch) of its newest accepted AppendEntries.
    acked: BTreeMap<NodeId, (u64, u64)>,
}

impl LeaderLease {
    pub fn new(node_id: NodeId, duration: Duration) -> Self {
        Self {
            node_id,
            epoch: Instant::now(),
            duration,
            valid_until_us: AtomicU64::new(NONE),
            book: Mutex::new(Book::default()),
        }
    }

    /// The lease length: how long after a quorum's acknowledgement this node keeps answering.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.epoch).as_micros()).unwrap_or(FOREVER - 1)
    }

    /// Whether this node leads and a quorum acknowledged it within the lease: one atomic load.
    pub fn holds(&self) -> bool {
        self.holds_at(Instant::now())
    }

    fn holds_at(&self, now: Instant) -> bool {
        self.micros(now) < self.valid_until_us.load(Ordering::Acquire)
    }

    /// How much of the lease is left (`None`: not held).
    pub fn remaining(&self) -> Option<Duration> {
        let until = self.valid_until_us.load(Ordering::Acquire);
        if until == FOREVER {
            return Some(Duration::MAX);
        }
        let now = self.micros(Instant::now());
        (now < until).then(|| Duration::from_micros(until - now))
    }

    /// `peer` accepted (success or log conflict: either way it took this leader's vote and
    /// restarted its election lease) an AppendEntries of `term` this node sent at `sent`.
    pub(crate) fn record_ack(&self, peer: NodeId, term: u64, sent: Instant) {
        let sent = self.micros(sent);
        let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
        let entry = book.acked.entry(peer).or_insert((term, sent));
        if (term, sent) > *entry {
            *entry = (term, sent);
        }
        self.recompute(&book);
    }

    /// What Raft reports: this node's term, whether it leads, and the voter sets.
    pub(crate) fn observe(&self, term: u64, leading: bool, voter_sets: Vec<BTreeSet<NodeId>>) {
        let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
        if book.term != term || book.leading != leading || book.voter_sets != voter_sets {
            book.term = term;
            book.leading = leading;
            book.voter_sets = voter_sets;
            self.recompute(&book);
        }
    }

    fn recompute(&self, book: &Book) {
        let until = if !book.leading || book.voter_sets.is_empty() {
            NONE
        } else {
            book.voter_sets
                .iter()
                .map(|set| self.quorum_acked(book, set))
                .min()
                .map_or(NONE, |acked| match acked {
                    FOREVER => FOREVER,
                    NONE => NONE,
                    t => t.saturating_add(
                        u64::try_from(self.duration.as_micros()).unwrap_or(FOREVER - 1),
                    ),
                })
        };
        self.valid_until_us.store(until, Ordering::Release);
    }

    /// The newest send time a majority of `set` acknowledged in the current term (this node
    /// counts as acknowledging always): [`FOREVER`] if this node alone is a majority, [`NONE`]
    /// if no majority acknowledged anything yet.
    fn quorum_acked(&self, book: &Book, set: &BTreeSet<NodeId>) -> u64 {
        let majority = set.len() / 2 + 1;
        let needed = majority - usize::from(set.contains(&self.node_id));
        if needed == 0 {
            return FOREVER;
        }
        let mut times: Vec<u64> = set
            .iter()
            .filter(|id| **id != self.node_id)
            .filter_map(|id| book.acked.get(id))
            .filter(|(term, _)| *term == book.term)
            .map(|(_, sent)| *sent)
            .collect();
        times.sort_unstable_by(|a, b| b.cmp(a));
        // The lease epoch starts at 1 µs at the earliest, so a real ack is never NONE.
        times.get(needed - 1).map_or(NONE, |t| (*t).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ids: &[NodeId]) -> BTreeSet<NodeId> {
        ids.iter().copied().collect()
    }

    const LEASE: Duration = Duration::from_millis(400);

    #[test]
    fn a_follower_holds_no_lease() {
        let lease = LeaderLease::new(1, LEASE);
        lease.observe(3, false, vec![set(&[1, 2, 3])]);
        lease.record_ack(2, 3, Instant::now());
        assert!(!lease.holds());
        assert_eq!(lease.remaining(), None);
    }

    #[test]
    fn a_single_voter_leader_holds_it_while_it_leads() {
        let lease = LeaderLease::new(1, LEASE);
        lease.observe(1, true, vec![set(&[1])]);
        assert!(lease.holds_at(Instant::now() + Duration::from_secs(3600)));
        lease.observe(2, false, vec![set(&[1])]);
        assert!(!lease.holds());
    }

    #[test]
    fn a_leader_holds_it_for_the_lease_after_a_quorum_acknowledged() {
        let lease = LeaderLease::new(1, LEASE);
        lease.observe(5, true, vec![set(&[1, 2, 3])]);
        assert!(!lease.holds(), "elected, nobody acknowledged yet");
        let sent = Instant::now();
        lease.record_ack(3, 5, sent);
        assert!(lease.holds_at(sent + LEASE - Duration::from_millis(1)));
        assert!(!lease.holds_at(sent + LEASE + Duration::from_millis(1)));
        // An older acknowledgement of another peer does not move it back.
        lease.record_ack(2, 5, sent - Duration::from_millis(100));
        assert!(lease.holds_at(sent + LEASE - Duration::from_millis(1)));
    }

    #[test]
    fn five_voters_need_two_peers_and_the_older_of_the_two_counts() {
        let lease = LeaderLease::new(1, LEASE);
        lease.observe(2, true, vec![set(&[1, 2, 3, 4, 5])]);
        let t0 = Instant::now();
        lease.record_ack(2, 2, t0 + Duration::from_millis(50));
        assert!(!lease.holds_at(t0), "one peer is no quorum of five");
        lease.record_ack(4, 2, t0);
        assert!(lease.holds_at(t0 + LEASE - Duration::from_millis(1)));
        assert!(!lease.holds_at(t0 + LEASE + Duration::from_millis(1)));
    }

    #[test]
    fn acknowledgements_of_an_earlier_term_do_not_count() {
        let lease = LeaderLease::new(1, LEASE);
        lease.observe(4, true, vec![set(&[1, 2, 3])]);
        let t0 = Instant::now();
        lease.record_ack(2, 4, t0);
        assert!(lease.holds_at(t0));
        // Deposed and re-elected in term 6: term 4's acknowledgements say nothing of term 6.
        lease.observe(6, true, vec![set(&[1, 2, 3])]);
        assert!(!lease.holds_at(t0));
        lease.record_ack(3, 6, t0 + Duration::from_millis(10));
        assert!(lease.holds_at(t0 + Duration::from_millis(10)));
    }

    #[test]
    fn a_joint_membership_needs_a_quorum_of_each_set() {
        let lease = LeaderLease::new(1, LEASE);
        lease.observe(3, true, vec![set(&[1, 2, 3]), set(&[1, 4, 5])]);
        let t0 = Instant::now();
        lease.record_ack(2, 3, t0);
        assert!(!lease.holds_at(t0), "the new set has no quorum yet");
        lease.record_ack(5, 3, t0 + Duration::from_millis(20));
        assert!(lease.holds_at(t0 + LEASE - Duration::from_millis(1)));
        assert!(!lease.holds_at(t0 + LEASE + Duration::from_millis(1)));
    }
}
