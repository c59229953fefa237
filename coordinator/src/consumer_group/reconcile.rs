//! Reconciliation of one member towards its target (Kafka's `CurrentAssignmentBuilder`).
//!
//! ```text
//!            epoch < target epoch: keep assigned ∩ target
//!   STABLE ─────────────────────────────────┬──▶ UNREVOKED_PARTITIONS   something to revoke that it still owns
//!     ▲                                     │        │ owned ∩ revoking = ∅ (it let go)
//!     │ all of the target is free           ├──▶ UNRELEASED_PARTITIONS  target partitions still held by others
//!     └─────────────────────────────────────┴──◀─────┘
//! ```
//!
//! The one invariant: a partition goes to a member only when no other member holds it, as
//! assigned or as still being revoked. A member that is asked to revoke keeps its epoch until
//! its heartbeat no longer reports those partitions; the target's new ones wait. Partitions
//! of topics the member no longer subscribes to are revoked even when the target has not
//! caught up with its subscription yet (an assignment computed off the request path lags).

use crate::ids::{PartitionIndex, TopicId};
use crate::record::assignment::Assignment;
use crate::record::consumer_group::{CurrentAssignment, MemberState};
use std::collections::BTreeSet;

/// Inputs of one reconciliation step.
pub(crate) struct Step<'a> {
    pub(crate) current: &'a CurrentAssignment,
    pub(crate) target_epoch: i32,
    pub(crate) target: &'a Assignment,
    /// Topic ids the member subscribes to now.
    pub(crate) subscribed: &'a BTreeSet<TopicId>,
    /// What the member reported owning; `None`: not reported (assume it still owns all).
    pub(crate) owned: Option<&'a Assignment>,
}

/// The member must be fenced: it is in a state this version does not know.
pub(crate) struct Fenced;

impl Step<'_> {
    fn owns_any_of(&self, revoking: &Assignment) -> bool {
        match self.owned {
            None => true,
            Some(owned) => owned.intersects(revoking),
        }
    }

    /// The next state; `is_free(t, p)`: no other member holds the partition.
    pub(crate) fn run(
        &self,
        is_free: impl Fn(TopicId, PartitionIndex) -> bool,
    ) -> Result<CurrentAssignment, Fenced> {
        let c = self.current;
        Ok(match c.state {
            MemberState::Stable if c.member_epoch != self.target_epoch => {
                self.next(c.member_epoch, &is_free)
            }
            MemberState::Stable => self.drop_unsubscribed(),
            MemberState::UnrevokedPartitions if self.owns_any_of(&c.pending_revocation) => {
                self.drop_unsubscribed()
            }
            MemberState::UnrevokedPartitions | MemberState::UnreleasedPartitions => {
                self.next(c.member_epoch, &is_free)
            }
            MemberState::Unknown => {
                if self.owned.is_none_or(|o| !o.is_empty()) {
                    return Err(Fenced);
                }
                self.next(self.target_epoch, &is_free)
            }
        })
    }

    /// Moves assigned partitions of topics no longer subscribed to revocation (same epoch).
    fn drop_unsubscribed(&self) -> CurrentAssignment {
        let c = self.current;
        let gone = c.assigned.filter(|t, _| !self.subscribed.contains(&t));
        if gone.is_empty() {
            return c.clone();
        }
        let assigned = c.assigned.difference(&gone);
        let pending = c.pending_revocation.union(&gone);
        if self.owns_any_of(&pending) {
            CurrentAssignment {
                member_epoch: c.member_epoch,
                previous_member_epoch: c.member_epoch,
                state: MemberState::UnrevokedPartitions,
                assigned,
                pending_revocation: pending,
            }
        } else {
            CurrentAssignment {
                member_epoch: c.member_epoch,
                previous_member_epoch: c.member_epoch,
                state: c.state,
                assigned,
                pending_revocation: c.pending_revocation.clone(),
            }
        }
    }

    fn next(
        &self,
        member_epoch: i32,
        is_free: &impl Fn(TopicId, PartitionIndex) -> bool,
    ) -> CurrentAssignment {
        let c = self.current;
        let target = self.target.filter(|t, _| self.subscribed.contains(&t));
        let keep = c.assigned.intersection(&target);
        let revoke = c.assigned.difference(&keep);
        let wanted = target.difference(&keep);
        let mut unreleased = false;
        let gain = wanted.filter(|t, p| {
            // A partition this member itself is still revoking is its own to take back.
            let free = is_free(t, p) || c.pending_revocation.contains(t, p);
            unreleased |= !free;
            free
        });
        if !revoke.is_empty() && self.owns_any_of(&revoke) {
            return CurrentAssignment {
                member_epoch,
                previous_member_epoch: c.member_epoch,
                state: MemberState::UnrevokedPartitions,
                assigned: keep,
                pending_revocation: revoke,
            };
        }
        CurrentAssignment {
            member_epoch: self.target_epoch,
            previous_member_epoch: c.member_epoch,
            state: if unreleased {
                MemberState::UnreleasedPartitions
            } else {
                MemberState::Stable
            },
            assigned: keep.union(&gain),
            pending_revocation: Assignment::new(),
        }
    }
}
