//! Timer firings the leader has submitted to Raft and not seen applied yet, and the requests
//! that must wait for them.
//!
//! ```text
//!  wheel ─due─► fired(token, key) ─► TimerFired{key} through Raft ─┬─ applied(token) ─► waiters answered
//!                                                                  └─ failed(token) ─► re-armed after a backoff,
//!                                                                                      waiters keep waiting
//!  session due behind the member's writes in flight ─► deferred(member) ─► moved ─► waiters answered
//!                                                                      └─► fired (writes refreshed nothing)
//!  Heartbeat / unchanged Join, Sync of a member whose session fired ─► wait(member, waiter)
//! ```
//!
//! Why members wait: Kafka checks a session and removes the member under the group's lock, so
//! once a session has expired no request of that member succeeds. Here the expiry is decided
//! when its `TimerFired` is applied, a few milliseconds after the timer fired; a heartbeat
//! answered from applied state in between would be acknowledged (and re-arm the timer) just
//! before the member is removed anyway. So from the firing until an expiry of the member has
//! applied, the member's requests answered from applied state wait, then are answered from
//! the state as it is then (UNKNOWN_MEMBER_ID once expired).
//!
//! A failed write leaves the member expiring: the timer is re-armed after a backoff and its
//! next firing is what the waiters wait for. A write whose outcome is unknown may still be
//! applied later in the same term, before the retry (same log, same order), so answering the
//! waiters from the state at the failure could acknowledge a member about to be removed.

use crate::group_coordinator::maps::Map;
use std::time::Duration;

use coordinator::{GroupId, MemberId, TimerKey};
use raft_meta::cohort_app::RequestToken;

/// Requests one member may have waiting on its expiry; beyond it the member is answered as if
/// the expiry had applied (what Kafka answers a member whose session has expired).
pub(crate) const WAITERS_PER_MEMBER_MAX: usize = 16;

/// First retry delay of a timer whose write failed; doubled per consecutive failure.
const RETRY_BACKOFF_MIN: Duration = Duration::from_millis(100);
/// Longest retry delay.
const RETRY_BACKOFF_MAX: Duration = Duration::from_secs(5);

type Member = (GroupId, MemberId);

/// A firing whose write has not come back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Submitted {
    pub key: TimerKey,
    /// The Raft term of the leadership that fired it: a retry is armed only in the same one.
    pub term: u64,
}

/// A member whose session timer fired: the write in flight (none between a failure and the
/// retry) and what waits for it.
#[derive(Debug)]
struct Expiring<W> {
    in_flight: Option<RequestToken>,
    waiters: Vec<W>,
}

/// Why a request was not queued behind an expiry.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NotQueued<W> {
    /// No expiry of the member is on its way: answer from applied state now.
    NotExpiring(W),
    /// [`WAITERS_PER_MEMBER_MAX`] requests already wait.
    Full(W),
}

/// A failed firing, for the runtime to re-arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failed {
    pub submitted: Submitted,
    /// Consecutive failed writes of this key, this one included.
    pub attempts: u32,
}

impl Failed {
    /// How long to wait before firing the key again.
    pub fn backoff(&self) -> Duration {
        let doublings = self.attempts.saturating_sub(1).min(16);
        RETRY_BACKOFF_MIN
            .saturating_mul(1u32 << doublings)
            .min(RETRY_BACKOFF_MAX)
    }
}

/// Firings in flight (see the module doc). `W` is what a waiting request needs to be answered.
#[derive(Debug)]
pub(crate) struct FiredTimers<W> {
    submitted: Map<RequestToken, Submitted>,
    expiring: Map<Member, Expiring<W>>,
    /// Consecutive failed writes per key, for the backoff; forgotten once one applies.
    failures: Map<TimerKey, u32>,
}

impl<W> Default for FiredTimers<W> {
    fn default() -> Self {
        Self {
            submitted: Map::default(),
            expiring: Map::default(),
            failures: Map::default(),
        }
    }
}

fn member_of(key: &TimerKey) -> Option<Member> {
    match key {
        TimerKey::MemberHeartbeat {
            group_id,
            member_id,
        } => Some((group_id.clone(), member_id.clone())),
        _ => None,
    }
}

impl<W> FiredTimers<W> {
    /// `key` fired and its `TimerFired` is submitted tagged `token`.
    pub fn fired(&mut self, token: RequestToken, key: TimerKey, term: u64) {
        if let Some(member) = member_of(&key) {
            self.expiring
                .entry(member)
                .or_insert_with(|| Expiring {
                    in_flight: None,
                    waiters: Vec::new(),
                })
                .in_flight = Some(token);
        }
        self.submitted.insert(token, Submitted { key, term });
    }

    /// The member's session is due but its expiry is deferred behind its writes in flight
    /// (see [`super::member_writes`]): its requests wait as for a firing, and are released by
    /// an outcome that moves its session ([`Self::moved`]) or by the firing submitted once
    /// the deferral resolves.
    pub fn deferred(&mut self, group_id: &GroupId, member_id: &MemberId) {
        self.expiring
            .entry((group_id.clone(), member_id.clone()))
            .or_insert_with(|| Expiring {
                in_flight: None,
                waiters: Vec::new(),
            })
            .in_flight = None;
    }

    /// Whether requests of this member must wait (its session fired, no expiry applied yet).
    #[cfg(test)]
    pub fn is_expiring(&self, group_id: &GroupId, member_id: &MemberId) -> bool {
        self.expiring
            .contains_key(&(group_id.clone(), member_id.clone()))
    }

    /// Members whose requests currently wait or would.
    pub fn expiring_members(&self) -> usize {
        self.expiring.len()
    }

    /// Queues `waiter` behind the member's expiry.
    pub fn wait(
        &mut self,
        group_id: &GroupId,
        member_id: &MemberId,
        waiter: W,
    ) -> Result<(), NotQueued<W>> {
        match self
            .expiring
            .get_mut(&(group_id.clone(), member_id.clone()))
        {
            None => Err(NotQueued::NotExpiring(waiter)),
            Some(e) if e.waiters.len() >= WAITERS_PER_MEMBER_MAX => Err(NotQueued::Full(waiter)),
            Some(e) => {
                e.waiters.push(waiter);
                Ok(())
            }
        }
    }

    /// The command tagged `token` was applied: returns the requests to answer now (from the
    /// state it left), `None` if `token` is not a firing of ours.
    pub fn applied(&mut self, token: &RequestToken) -> Option<Vec<W>> {
        let submitted = self.submitted.remove(token)?;
        self.failures.remove(&submitted.key);
        let Some(member) = member_of(&submitted.key) else {
            return Some(Vec::new());
        };
        // An older firing of a member fired again meanwhile: the waiters wait for the newest.
        let current = self
            .expiring
            .get(&member)
            .is_some_and(|e| e.in_flight == Some(*token));
        if !current {
            return Some(Vec::new());
        }
        Some(
            self.expiring
                .remove(&member)
                .map(|e| e.waiters)
                .unwrap_or_default(),
        )
    }

    /// The write tagged `token` failed: the runtime re-arms the key (the member stays
    /// expiring until a retry applies). `None` if `token` is not a firing of ours.
    pub fn failed(&mut self, token: &RequestToken) -> Option<Failed> {
        let submitted = self.submitted.remove(token)?;
        if let Some(member) = member_of(&submitted.key) {
            if let Some(e) = self.expiring.get_mut(&member) {
                if e.in_flight == Some(*token) {
                    e.in_flight = None;
                }
            }
        }
        let attempts = self.failures.entry(submitted.key.clone()).or_insert(0);
        *attempts = attempts.saturating_add(1);
        Some(Failed {
            submitted,
            attempts: *attempts,
        })
    }

    /// An applied command moved or cancelled `key` (the member rejoined, committed, left or
    /// was removed) while no write of its expiry is in flight: nothing will expire it soon, so
    /// its waiters are answered from the state now. A firing still in flight keeps them: it
    /// is applied after that command and decides.
    pub fn moved(&mut self, key: &TimerKey) -> Vec<W> {
        let Some(member) = member_of(key) else {
            return Vec::new();
        };
        match self.expiring.get(&member) {
            Some(e) if e.in_flight.is_none() => {
                self.failures.remove(key);
                self.expiring
                    .remove(&member)
                    .map(|e| e.waiters)
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        }
    }

    /// Leadership lost: forgets every firing and returns every waiting request.
    pub fn drain(&mut self) -> Vec<W> {
        self.submitted.clear();
        self.failures.clear();
        self.expiring.drain().flat_map(|(_, e)| e.waiters).collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A token of node 1's incarnation 7 (the runtime's bookkeeping tests share it).
    pub(crate) fn token(seq: u64) -> RequestToken {
        RequestToken {
            node: 1,
            incarnation: 7,
            seq,
        }
    }

    fn session(member: &str) -> TimerKey {
        TimerKey::MemberHeartbeat {
            group_id: GroupId::new("g"),
            member_id: MemberId::new(member),
        }
    }

    fn g() -> GroupId {
        GroupId::new("g")
    }

    fn m(member: &str) -> MemberId {
        MemberId::new(member)
    }

    #[test]
    fn requests_of_a_member_whose_session_fired_wait_until_its_expiry_applies() {
        let mut f = FiredTimers::default();
        assert_eq!(
            f.wait(&g(), &m("a"), "hb0"),
            Err(NotQueued::NotExpiring("hb0"))
        );
        f.fired(token(1), session("a"), 3);
        assert!(f.is_expiring(&g(), &m("a")));
        assert!(!f.is_expiring(&g(), &m("b")));
        assert_eq!(f.wait(&g(), &m("a"), "hb1"), Ok(()));
        assert_eq!(f.wait(&g(), &m("a"), "join"), Ok(()));
        assert_eq!(
            f.wait(&g(), &m("b"), "other"),
            Err(NotQueued::NotExpiring("other"))
        );
        assert_eq!(f.expiring_members(), 1);
        assert_eq!(f.applied(&token(1)), Some(vec!["hb1", "join"]));
        assert!(!f.is_expiring(&g(), &m("a")));
        assert_eq!(f.expiring_members(), 0);
        // Applied twice (an effect seen again) or a command that is not a firing: nothing.
        assert_eq!(f.applied(&token(1)), None);
        assert_eq!(f.applied(&token(9)), None);
    }

    #[test]
    fn waiters_per_member_are_bounded() {
        let mut f = FiredTimers::default();
        f.fired(token(1), session("a"), 3);
        for i in 0..WAITERS_PER_MEMBER_MAX {
            assert_eq!(f.wait(&g(), &m("a"), i), Ok(()));
        }
        assert_eq!(
            f.wait(&g(), &m("a"), 99),
            Err(NotQueued::Full(99)),
            "the {}th waiter is refused",
            WAITERS_PER_MEMBER_MAX + 1
        );
        assert_eq!(
            f.applied(&token(1)).map(|w| w.len()),
            Some(WAITERS_PER_MEMBER_MAX)
        );
    }

    #[test]
    fn a_failed_expiry_keeps_its_waiters_for_the_retry_and_backs_off() {
        let mut f = FiredTimers::default();
        f.fired(token(1), session("a"), 3);
        f.wait(&g(), &m("a"), "hb").ok();
        let failed = f.failed(&token(1));
        assert_eq!(
            failed,
            Some(Failed {
                submitted: Submitted {
                    key: session("a"),
                    term: 3
                },
                attempts: 1
            })
        );
        assert_eq!(failed.map(|x| x.backoff()), Some(RETRY_BACKOFF_MIN));
        assert!(
            f.is_expiring(&g(), &m("a")),
            "still expiring until a retry applies"
        );
        f.wait(&g(), &m("a"), "hb2").ok();
        f.fired(token(2), session("a"), 3);
        let again = f.failed(&token(2));
        assert_eq!(again.as_ref().map(|x| x.attempts), Some(2));
        assert_eq!(again.map(|x| x.backoff()), Some(RETRY_BACKOFF_MIN * 2));
        f.fired(token(3), session("a"), 3);
        assert_eq!(f.applied(&token(3)), Some(vec!["hb", "hb2"]));
        // The count of failures starts over once one applied.
        f.fired(token(4), session("a"), 3);
        assert_eq!(f.failed(&token(4)).map(|x| x.attempts), Some(1));
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let failed = |attempts| Failed {
            submitted: Submitted {
                key: TimerKey::OffsetsRetention,
                term: 1,
            },
            attempts,
        };
        assert_eq!(failed(1).backoff(), Duration::from_millis(100));
        assert_eq!(failed(3).backoff(), Duration::from_millis(400));
        assert_eq!(failed(40).backoff(), RETRY_BACKOFF_MAX);
    }

    #[test]
    fn an_older_firing_applied_does_not_release_the_waiters_of_a_newer_one() {
        let mut f = FiredTimers::default();
        f.fired(token(1), session("a"), 3);
        // A command re-armed the session, it fired again before the first firing applied.
        f.fired(token(2), session("a"), 3);
        f.wait(&g(), &m("a"), "hb").ok();
        assert_eq!(f.applied(&token(1)), Some(vec![]));
        assert!(f.is_expiring(&g(), &m("a")));
        assert_eq!(f.applied(&token(2)), Some(vec!["hb"]));
    }

    #[test]
    fn a_session_moved_by_a_command_releases_waiters_only_when_nothing_is_in_flight() {
        let mut f = FiredTimers::default();
        f.fired(token(1), session("a"), 3);
        f.wait(&g(), &m("a"), "hb").ok();
        // In flight: the firing is applied after the command that moved the timer, it decides.
        assert_eq!(f.moved(&session("a")), Vec::<&str>::new());
        assert!(f.is_expiring(&g(), &m("a")));
        f.failed(&token(1));
        // Failed, waiting for the retry, and a command (a rejoin) moved the session: answer now.
        assert_eq!(f.moved(&session("a")), vec!["hb"]);
        assert!(!f.is_expiring(&g(), &m("a")));
        assert_eq!(f.moved(&TimerKey::OffsetsRetention), Vec::<&str>::new());
    }

    #[test]
    fn a_deferred_expiry_holds_waiters_until_the_session_moves_or_its_firing_applies() {
        let mut f = FiredTimers::default();
        f.deferred(&g(), &m("a"));
        assert!(f.is_expiring(&g(), &m("a")));
        assert_eq!(f.wait(&g(), &m("a"), "hb"), Ok(()));
        // A commit's outcome re-armed the session: answered from that state.
        assert_eq!(f.moved(&session("a")), vec!["hb"]);
        assert!(!f.is_expiring(&g(), &m("a")));
        // Deferred again; the writes refreshed nothing, so it fires: the waiters wait for it.
        f.deferred(&g(), &m("a"));
        assert_eq!(f.wait(&g(), &m("a"), "hb2"), Ok(()));
        f.fired(token(1), session("a"), 3);
        assert_eq!(f.moved(&session("a")), Vec::<&str>::new());
        assert_eq!(f.applied(&token(1)), Some(vec!["hb2"]));
    }

    #[test]
    fn other_timers_are_tracked_for_retries_without_waiters() {
        let mut f: FiredTimers<&str> = FiredTimers::default();
        f.fired(token(1), TimerKey::OffsetsRetention, 2);
        assert_eq!(f.expiring_members(), 0);
        assert_eq!(
            f.failed(&token(1)).map(|x| x.submitted.key),
            Some(TimerKey::OffsetsRetention)
        );
        f.fired(token(2), TimerKey::OffsetsRetention, 2);
        assert_eq!(f.applied(&token(2)), Some(vec![]));
    }

    #[test]
    fn losing_leadership_returns_every_waiter_and_forgets_every_firing() {
        let mut f = FiredTimers::default();
        f.fired(token(1), session("a"), 3);
        f.fired(token(2), session("b"), 3);
        f.wait(&g(), &m("a"), "a").ok();
        f.wait(&g(), &m("b"), "b").ok();
        let mut drained = f.drain();
        drained.sort_unstable();
        assert_eq!(drained, vec!["a", "b"]);
        assert_eq!(f.expiring_members(), 0);
        assert_eq!(f.applied(&token(1)), None);
        assert_eq!(f.failed(&token(2)), None);
    }
}
