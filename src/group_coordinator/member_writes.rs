//! A member's writes in flight, and the member timers whose firing is deferred behind them.
//!
//! ```text
//!  Register(token, member) ─► registered ─┐
//!                                          ├─ a timer of the member due ─► defer: writes in flight? ─ no ─► fire now
//!                                          │  (session, revocation,              │ yes
//!                                          │   classic join/sync deadline)       ▼ key kept as deferred
//!  outcome's op on a deferred key ─► moved: Set/Cancel decide it (not fired), SetIfAbsent is a no-op
//!  effect(token) / Forget / dropped ─► done ┴─ last write in flight at the deferral done ─► resolve:
//!                                               each key still deferred: armed again → nothing, else fire
//! ```
//!
//! Why: Kafka checks a member's deadlines and applies its OffsetCommit, JoinGroup, SyncGroup,
//! heartbeat or leave under the group's lock, so a request that arrived before a deadline
//! settles it: a commit refreshes the session, a classic member's JoinGroup cancels its join
//! deadline, its SyncGroup its sync deadline. Here the request is in the Raft log when the
//! timer fires; a `TimerFired` submitted then would be applied after it and fence the member
//! its outcome had just kept. The state cannot always tell (a SyncGroup writes no record, a
//! JoinGroup may leave the member at the epoch it was told at), so the firing waits for the
//! writes the member had in flight at that moment, and the operations their outcomes make on
//! the key decide it. Writes registered after the deferral began do not extend it: a member
//! that keeps sending requests cannot postpone its deadline for ever.

use crate::group_coordinator::maps::Map;

use coordinator::{GroupId, MemberId, TimerKey, TimerOp};
use raft_meta::cohort_app::RequestToken;

pub(crate) type Member = (GroupId, MemberId);

/// The member a timer of one member belongs to; `None` for group- and shard-wide timers.
pub(crate) fn member_of(key: &TimerKey) -> Option<Member> {
    key.member()
        .map(|(group_id, member_id)| (group_id.clone(), member_id.clone()))
}

/// One member's writes in flight.
#[derive(Debug, Default)]
struct Writes {
    in_flight: u32,
    /// Bumped at each deferral: a write registered with an older epoch was in flight when a
    /// timer of the member was last found due.
    epoch: u64,
    /// Writes of an older epoch still in flight while a firing is deferred; `None` when
    /// nothing is deferred.
    deferred_behind: Option<u32>,
    /// The member's timers due while deferred and not decided since by an outcome.
    deferred_keys: Vec<TimerKey>,
}

/// What the runtime does with a member's timer that is due.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// Not a member's timer, or no write of the member is in flight: submit the firing now.
    FireNow,
    /// Deferred until the member's writes in flight have been applied.
    Deferred,
}

/// What the runtime does with an outcome's operation on a timer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// Apply it to the wheel.
    Apply,
    /// Drop it: a `SetIfAbsent` of a key whose firing is deferred (the key counts as armed).
    Ignore,
}

/// See the module doc. Every entry belongs to a registered token, and every token is
/// released by its effect, its `Forget` or the step-down's [`MemberWrites::clear`].
#[derive(Debug, Default)]
pub(crate) struct MemberWrites {
    by_token: Map<RequestToken, (Member, u64)>,
    members: Map<Member, Writes>,
}

impl MemberWrites {
    /// The write tagged `token`, of `member`, is about to be submitted.
    pub fn registered(&mut self, token: RequestToken, member: Member) {
        let writes = self.members.entry(member.clone()).or_default();
        writes.in_flight = writes.in_flight.saturating_add(1);
        let epoch = writes.epoch;
        self.by_token.insert(token, (member, epoch));
    }

    /// `key` is due.
    pub fn due(&mut self, key: &TimerKey) -> Due {
        let Some(member) = member_of(key) else {
            return Due::FireNow;
        };
        match self.members.get_mut(&member) {
            Some(writes) if writes.in_flight > 0 => {
                writes.epoch = writes.epoch.wrapping_add(1);
                writes.deferred_behind = Some(writes.in_flight);
                if !writes.deferred_keys.contains(key) {
                    writes.deferred_keys.push(key.clone());
                }
                Due::Deferred
            }
            _ => Due::FireNow,
        }
    }

    /// An applied outcome (or a heartbeat answered from applied state) operates on a timer.
    /// A `Set` or `Cancel` of a deferred key decides it: it is no longer fired when the
    /// deferral resolves (armed again, or cancelled as the write it waited for meant to).
    /// A `SetIfAbsent` of a deferred key is dropped: the key counts as armed, its firing is
    /// only waiting (Kafka's `scheduleIfAbsent` would find it scheduled).
    pub fn op(&mut self, op: &TimerOp) -> Op {
        let key = op.key();
        let Some(writes) = member_of(key).and_then(|m| self.members.get_mut(&m)) else {
            return Op::Apply;
        };
        let Some(at) = writes.deferred_keys.iter().position(|k| k == key) else {
            return Op::Apply;
        };
        match op {
            TimerOp::SetIfAbsent { .. } => Op::Ignore,
            TimerOp::Set { .. } | TimerOp::Cancel { .. } => {
                writes.deferred_keys.swap_remove(at);
                Op::Apply
            }
        }
    }

    /// Whether a firing of the member is deferred.
    #[cfg(test)]
    pub fn is_deferred(&self, member: &Member) -> bool {
        self.members
            .get(member)
            .is_some_and(|w| w.deferred_behind.is_some())
    }

    /// The write tagged `token` was applied, or will never be seen: returns the keys whose
    /// deferred firing is to be resolved now (the last write they waited for is done) and no
    /// outcome has decided since.
    pub fn done(&mut self, token: &RequestToken) -> Vec<TimerKey> {
        let Some((member, epoch)) = self.by_token.remove(token) else {
            return Vec::new();
        };
        let Some(writes) = self.members.get_mut(&member) else {
            return Vec::new();
        };
        writes.in_flight = writes.in_flight.saturating_sub(1);
        let mut resolved = Vec::new();
        if let Some(behind) = writes.deferred_behind.as_mut() {
            if epoch != writes.epoch {
                *behind = behind.saturating_sub(1);
            }
            if *behind == 0 {
                writes.deferred_behind = None;
                resolved = std::mem::take(&mut writes.deferred_keys);
            }
        }
        if writes.in_flight == 0 && writes.deferred_behind.is_none() {
            self.members.remove(&member);
        }
        resolved
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
    use coordinator::TimestampMs;

    fn member(m: &str) -> Member {
        (GroupId::new("g"), MemberId::new(m))
    }

    fn session(m: &str) -> TimerKey {
        TimerKey::MemberHeartbeat {
            group_id: GroupId::new("g"),
            member_id: MemberId::new(m),
        }
    }

    fn join_deadline(m: &str, member_epoch: i32) -> TimerKey {
        TimerKey::ClassicMemberJoin {
            group_id: GroupId::new("g"),
            member_id: MemberId::new(m),
            member_epoch,
        }
    }

    fn sync_deadline(m: &str, member_epoch: i32) -> TimerKey {
        TimerKey::ClassicMemberSync {
            group_id: GroupId::new("g"),
            member_id: MemberId::new(m),
            member_epoch,
        }
    }

    #[test]
    fn a_session_due_with_no_write_in_flight_fires_now() {
        let mut w = MemberWrites::default();
        assert_eq!(w.due(&session("a")), Due::FireNow);
        w.registered(token(1), member("b"));
        assert_eq!(w.due(&session("a")), Due::FireNow, "another member's write");
        assert_eq!(w.done(&token(1)), vec![]);
        assert_eq!(w.due(&session("b")), Due::FireNow, "its write is done");
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn group_and_shard_timers_are_never_deferred() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        for key in [
            TimerKey::JoinPhase {
                group_id: GroupId::new("g"),
                generation: coordinator::Generation(1),
            },
            TimerKey::OffsetsRetention,
        ] {
            assert_eq!(w.due(&key), Due::FireNow, "{key:?}");
        }
        assert!(!w.is_deferred(&member("a")));
    }

    #[test]
    fn a_deferred_expiry_is_resolved_when_the_last_write_in_flight_at_the_deferral_is_done() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        w.registered(token(2), member("a"));
        assert_eq!(w.due(&session("a")), Due::Deferred);
        assert!(w.is_deferred(&member("a")));
        assert_eq!(w.done(&token(2)), vec![]);
        assert!(w.is_deferred(&member("a")));
        assert_eq!(w.done(&token(1)), vec![session("a")]);
        assert!(!w.is_deferred(&member("a")));
        assert_eq!(w.done(&token(1)), vec![], "done twice: nothing");
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn writes_registered_after_the_deferral_do_not_extend_it() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        assert_eq!(w.due(&session("a")), Due::Deferred);
        w.registered(token(2), member("a"));
        w.registered(token(3), member("a"));
        assert_eq!(w.done(&token(3)), vec![]);
        assert_eq!(w.done(&token(1)), vec![session("a")]);
        // Token 2 is still in flight: the next time the session is due it defers again.
        assert_eq!(w.due(&session("a")), Due::Deferred);
        assert_eq!(w.done(&token(2)), vec![session("a")]);
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn a_second_deferral_waits_for_every_write_then_in_flight() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        assert_eq!(w.due(&session("a")), Due::Deferred);
        w.registered(token(2), member("a"));
        // An outcome re-armed the session and it came due again before token 1 applied.
        assert_eq!(w.due(&session("a")), Due::Deferred);
        assert_eq!(w.done(&token(1)), vec![]);
        assert_eq!(w.done(&token(2)), vec![session("a")]);
    }

    #[test]
    fn a_join_deadline_due_behind_the_members_join_is_decided_by_the_joins_cancel() {
        let mut w = MemberWrites::default();
        // The JoinGroup is in the Raft log when the deadline it answers comes due.
        w.registered(token(1), member("a"));
        assert_eq!(w.due(&join_deadline("a", 3)), Due::Deferred);
        // The join's outcome: its join deadline cancelled, a sync deadline armed.
        assert_eq!(
            w.op(&TimerOp::Cancel {
                key: join_deadline("a", 3)
            }),
            Op::Apply
        );
        assert_eq!(
            w.op(&TimerOp::Set {
                key: sync_deadline("a", 3),
                at_ms: TimestampMs(9)
            }),
            Op::Apply
        );
        assert_eq!(w.done(&token(1)), vec![], "nothing left to fire");
        assert!(!w.is_deferred(&member("a")));
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn a_sync_deadline_due_behind_an_unrelated_write_fires_once_it_is_applied() {
        let mut w = MemberWrites::default();
        // An OffsetCommit in flight: its outcome does not touch the sync deadline.
        w.registered(token(1), member("a"));
        assert_eq!(w.due(&sync_deadline("a", 3)), Due::Deferred);
        assert_eq!(
            w.op(&TimerOp::Set {
                key: session("a"),
                at_ms: TimestampMs(9)
            }),
            Op::Apply
        );
        assert_eq!(w.done(&token(1)), vec![sync_deadline("a", 3)]);
    }

    #[test]
    fn a_deferred_join_deadline_counts_as_armed_for_set_if_absent() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        assert_eq!(w.due(&join_deadline("a", 3)), Due::Deferred);
        // A heartbeat tells the member again: the deadline does not start over.
        let again = TimerOp::SetIfAbsent {
            key: join_deadline("a", 3),
            at_ms: TimestampMs(99),
        };
        assert_eq!(w.op(&again), Op::Ignore);
        assert_eq!(
            w.op(&TimerOp::SetIfAbsent {
                key: join_deadline("b", 3),
                at_ms: TimestampMs(99),
            }),
            Op::Apply,
            "another member's key"
        );
        assert_eq!(w.done(&token(1)), vec![join_deadline("a", 3)]);
        assert_eq!(w.op(&again), Op::Apply, "no longer deferred");
    }

    #[test]
    fn several_keys_of_a_member_wait_for_the_same_writes() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        assert_eq!(w.due(&session("a")), Due::Deferred);
        assert_eq!(w.due(&sync_deadline("a", 3)), Due::Deferred);
        assert_eq!(w.due(&sync_deadline("a", 3)), Due::Deferred, "kept once");
        assert_eq!(
            w.op(&TimerOp::Cancel {
                key: sync_deadline("a", 3)
            }),
            Op::Apply
        );
        assert_eq!(w.done(&token(1)), vec![session("a")]);
    }

    #[test]
    fn leadership_lost_forgets_every_write() {
        let mut w = MemberWrites::default();
        w.registered(token(1), member("a"));
        w.registered(token(2), member("b"));
        assert_eq!(w.due(&session("a")), Due::Deferred);
        w.clear();
        assert_eq!(w.len(), 0);
        assert!(!w.is_deferred(&member("a")));
        assert_eq!(w.done(&token(1)), vec![]);
        assert_eq!(w.due(&session("b")), Due::FireNow);
    }
}
