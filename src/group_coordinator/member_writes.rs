//! A member's writes in flight, and the session expiries deferred behind them.
//!
//! ```text
//!  Register(token, member) ─► registered ─┐
//!                                          ├─ member's session due ─► defer: writes in flight? ─ no ─► fire now
//!                                          │                                 │ yes
//!  effect(token) / Forget / dropped ─► done ┴─ last write in flight at the deferral done ─► resolve:
//!                                               timer armed again by an outcome → nothing fires, else fire
//! ```
//!
//! Why: Kafka checks a member's session and applies its OffsetCommit (or join, sync, leave)
//! under the group's lock, so a commit that arrived before the session expired refreshes it
//! and the member stays. Here the commit is in the Raft log when the timer fires; a
//! `TimerFired` submitted then would be applied after it and remove the member its outcome
//! had just refreshed. So the firing waits for the writes the member had in flight at that
//! moment. Writes registered after the deferral began do not extend it: a member that keeps
//! sending fenced commits cannot postpone its expiry for ever.

use std::collections::HashMap;

use coordinator::{GroupId, MemberId};
use raft_meta::cohort_app::RequestToken;

pub(crate) type Member = (GroupId, MemberId);

/// One member's writes in flight.
#[derive(Debug, Default)]
struct Writes {
    in_flight: u32,
    /// Bumped at each deferral: a write registered with an older epoch was in flight when the
    /// session was last found due.
    epoch: u64,
    /// Writes of an older epoch still in flight while the expiry is deferred; `None` when no
    /// expiry is deferred.
    deferred_behind: Option<u32>,
}

/// What the runtime does with a member's session that is due.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// No write of the member is in flight: submit the expiry now.
    FireNow,
    /// Deferred until the member's writes in flight have been applied.
    Deferred,
}

/// See the module doc. Every entry belongs to a registered token, and every token is
/// released by its effect, its `Forget` or the step-down's [`MemberWrites::clear`].
#[derive(Debug, Default)]
pub(crate) struct MemberWrites {
    by_token: HashMap<RequestToken, (Member, u64)>,
    members: HashMap<Member, Writes>,
}

impl MemberWrites {
    /// The write tagged `token`, of `member`, is about to be submitted.
    pub fn registered(&mut self, token: RequestToken, member: Member) {
        let writes = self.members.entry(member.clone()).or_default();
        writes.in_flight = writes.in_flight.saturating_add(1);
        let epoch = writes.epoch;
        self.by_token.insert(token, (member, epoch));
    }

    /// The member's session timer is due.
    pub fn due(&mut self, member: &Member) -> Due {
        match self.members.get_mut(member) {
            Some(writes) if writes.in_flight > 0 => {
                writes.epoch = writes.epoch.wrapping_add(1);
                writes.deferred_behind = Some(writes.in_flight);
                Due::Deferred
            }
            _ => Due::FireNow,
        }
    }

    /// Whether the member's expiry is deferred.
    #[cfg(test)]
    pub fn is_deferred(&self, member: &Member) -> bool {
        self.members
            .get(member)
            .is_some_and(|w| w.deferred_behind.is_some())
    }

    /// The write tagged `token` was applied, or will never be seen: returns the member whose
    /// deferred expiry is to be resolved now (the last write it waited for is done).
    pub fn done(&mut self, token: &RequestToken) -> Option<Member> {
        let (member, epoch) = self.by_token.remove(token)?;
        let writes = self.members.get_mut(&member)?;
        writes.in_flight = writes.in_flight.saturating_sub(1);
        let mut resolve = false;
        if let Some(behind) = writes.deferred_behind.as_mut() {
            if epoch != writes.epoch {
                *behind = behind.saturating_sub(1);
            }
            if *behind == 0 {
                writes.deferred_behind = None;
                resolve = true;
            }
        }
        if writes.in_flight == 0 && writes.deferred_behind.is_none() {
            self.members.remove(&member);
        }
        resolve.then_some(member)
    }

    /// Writes in flight, all members together.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_token.len()
    }

    /// Leadership lost: no effect will come for the writes in flight.
    pub fn clear(&mut self) {
        self.by_token.clear();
        self.members.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group_coordinator::fired::tests::token;

    fn member(m: &str) -> Member {
        (GroupId::new("g"), MemberId::new(m))
    }

    #[test]
    fn a_session_due_with_no_write_in_flight_fires_now() {
        let mut w = MemberWrites::default();
        assert_eq!(w.due(&member("a")), Due::FireNow);
        w.registered(token(1), member("b"));
        assert_eq!(w.due(&member("a")), Due::FireNow, "another member's write");
        assert_eq!(w.done(&token(1)), None);
        assert_eq!(w.due(&member("b")), Due::FireNow, "its write is done");
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn a_deferred_expiry_is_resolved_when_the_last_write_in_flight_at_the_deferral_is_done() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        w.registered(token(2), member("a"));
        assert_eq!(w.due(&member("a")), Due::Deferred);
        assert!(w.is_deferred(&member("a")));
        assert_eq!(w.done(&token(2)), None);
        assert!(w.is_deferred(&member("a")));
        assert_eq!(w.done(&token(1)), Some(member("a")));
        assert!(!w.is_deferred(&member("a")));
        assert_eq!(w.done(&token(1)), None, "done twice: nothing");
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn writes_registered_after_the_deferral_do_not_extend_it() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        assert_eq!(w.due(&member("a")), Due::Deferred);
        w.registered(token(2), member("a"));
        w.registered(token(3), member("a"));
        assert_eq!(w.done(&token(3)), None);
        assert_eq!(w.done(&token(1)), Some(member("a")));
        // Token 2 is still in flight: the next time the session is due it defers again.
        assert_eq!(w.due(&member("a")), Due::Deferred);
        assert_eq!(w.done(&token(2)), Some(member("a")));
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn a_second_deferral_waits_for_every_write_then_in_flight() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        assert_eq!(w.due(&member("a")), Due::Deferred);
        w.registered(token(2), member("a"));
        // An outcome re-armed the session and it came due again before token 1 applied.
        assert_eq!(w.due(&member("a")), Due::Deferred);
        assert_eq!(w.done(&token(1)), None);
        assert_eq!(w.done(&token(2)), Some(member("a")));
    }

    #[test]
    fn leadership_lost_forgets_every_write() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        w.registered(token(2), member("b"));
        assert_eq!(w.due(&member("a")), Due::Deferred);
        w.clear();
        assert_eq!(w.len(), 0);
        assert!(!w.is_deferred(&member("a")));
        assert_eq!(w.done(&token(1)), None);
        assert_eq!(w.due(&member("b")), Due::FireNow);
    }
}
