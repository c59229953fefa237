//! When this node may coordinate: the runtime's role as a pure function of what Raft reports.
//!
//! ```text
//!   Follower ──leads in term T──► Loading{T, target = last log index} ──applied ≥ target──► Active{T}
//!      ▲                                   │                                                  │
//!      └──── not leading, or leading in another term (soft state of term T is stale) ─────────┘
//! ```
//!
//! Leadership is tracked with its term, not only "the leader is me": a node that loses and
//! regains leadership between two observations (Raft's metrics coalesce) leads in a new term,
//! and another leader may have committed entries in between that this node has not applied
//! yet. Serving straight on would answer from stale applied state and keep parked requests and
//! timers of the old term; so a term change is a step down followed by a fresh load.

/// What Raft says right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Observed {
    /// This node is the Raft leader.
    pub leads: bool,
    pub term: u64,
    pub last_log_index: u64,
    pub applied_index: u64,
}

/// The runtime's role, with the term it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leadership {
    Follower,
    /// Leader in `term`, applying what was in its log when it took office (up to `target`):
    /// group APIs answer COORDINATOR_LOAD_IN_PROGRESS.
    Loading {
        term: u64,
        target: u64,
    },
    /// Leader in `term`, caught up: serving.
    Active {
        term: u64,
    },
}

/// What the runtime must do to move from one role to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// Drop the soft state (answer everything waiting NOT_COORDINATOR, clear timers).
    pub step_down: bool,
    /// The role after this observation.
    pub next: Leadership,
}

impl Leadership {
    pub(crate) fn observe(self, o: Observed) -> Step {
        let stale_term = match self {
            Leadership::Follower => None,
            Leadership::Loading { term, .. } | Leadership::Active { term } => {
                (!o.leads || term != o.term).then_some(term)
            }
        };
        let from = if stale_term.is_some() {
            Leadership::Follower
        } else {
            self
        };
        let next = match from {
            Leadership::Follower if o.leads => Self::loading(o),
            Leadership::Loading { term, target } if o.applied_index >= target => {
                Leadership::Active { term }
            }
            other => other,
        };
        Step {
            step_down: stale_term.is_some(),
            next,
        }
    }

    fn loading(o: Observed) -> Leadership {
        let target = o.last_log_index;
        if o.applied_index >= target {
            Leadership::Active { term: o.term }
        } else {
            Leadership::Loading {
                term: o.term,
                target,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(leads: bool, term: u64, last_log_index: u64, applied_index: u64) -> Observed {
        Observed {
            leads,
            term,
            last_log_index,
            applied_index,
        }
    }

    #[test]
    fn a_new_leader_loads_until_it_has_applied_its_log_then_serves() {
        let step = Leadership::Follower.observe(seen(true, 2, 10, 7));
        assert_eq!(
            step,
            Step {
                step_down: false,
                next: Leadership::Loading {
                    term: 2,
                    target: 10
                }
            }
        );
        // Entries appended after election (its own writes) do not hold the load back.
        let step = step.next.observe(seen(true, 2, 12, 9));
        assert_eq!(
            step.next,
            Leadership::Loading {
                term: 2,
                target: 10
            }
        );
        let step = step.next.observe(seen(true, 2, 14, 10));
        assert_eq!(
            step,
            Step {
                step_down: false,
                next: Leadership::Active { term: 2 }
            }
        );
        // Once loaded it never loads again in the same term, whatever the log does.
        let step = step.next.observe(seen(true, 2, 100, 20));
        assert_eq!(step.next, Leadership::Active { term: 2 });
    }

    #[test]
    fn a_leader_that_applied_everything_serves_at_once() {
        assert_eq!(
            Leadership::Follower.observe(seen(true, 1, 5, 5)).next,
            Leadership::Active { term: 1 }
        );
    }

    #[test]
    fn losing_leadership_steps_down_from_loading_and_active() {
        for role in [
            Leadership::Loading { term: 3, target: 9 },
            Leadership::Active { term: 3 },
        ] {
            assert_eq!(
                role.observe(seen(false, 3, 9, 9)),
                Step {
                    step_down: true,
                    next: Leadership::Follower
                }
            );
        }
        assert_eq!(
            Leadership::Follower.observe(seen(false, 4, 9, 9)),
            Step {
                step_down: false,
                next: Leadership::Follower
            }
        );
    }

    #[test]
    fn regaining_leadership_in_a_new_term_unseen_steps_down_and_loads_again() {
        // Term 3 active; the node lost and regained leadership in term 5 between two
        // observations, and term 4's leader committed entries up to 20 it has not applied.
        let step = Leadership::Active { term: 3 }.observe(seen(true, 5, 20, 12));
        assert_eq!(
            step,
            Step {
                step_down: true,
                next: Leadership::Loading {
                    term: 5,
                    target: 20
                }
            }
        );
        let step = step.next.observe(seen(true, 5, 21, 20));
        assert_eq!(
            step,
            Step {
                step_down: false,
                next: Leadership::Active { term: 5 }
            }
        );
    }
}
