//! The leader's timer wheel: the coordinator's `TimerOp::Set/Cancel/SetIfAbsent` applied to an ordered set,
//! so the runtime sleeps until the earliest deadline and fires what is due.

use std::collections::BTreeSet;

use crate::group_coordinator::maps::Map;

use coordinator::{TimerKey, TimerOp, TimestampMs};

/// Armed timers; a key is armed at most once (a `Set` of an armed key moves it).
///
/// A `Set` that moves an armed key later — every heartbeat and every classic member's commit
/// re-arms its session this way — only updates the key's deadline: the ordered set keeps the
/// earlier position, and when that comes due the key is put back at its real deadline. So the
/// common re-arm costs one hash lookup, no ordered-set removal and insertion, and no key clone.
#[derive(Debug, Default)]
pub struct TimerWheel {
    /// Where each armed key sits in time order: at or before its deadline.
    by_deadline: BTreeSet<(TimestampMs, TimerKey)>,
    deadlines: Map<TimerKey, Armed>,
}

#[derive(Debug, Clone, Copy)]
struct Armed {
    /// When the timer fires.
    at: TimestampMs,
    /// Its position in `by_deadline`; `queued <= at`.
    queued: TimestampMs,
}

impl TimerWheel {
    pub fn apply(&mut self, op: TimerOp) {
        match op {
            TimerOp::Set { key, at_ms } => match self.deadlines.get_mut(&key) {
                Some(armed) if at_ms >= armed.queued => armed.at = at_ms,
                Some(armed) => {
                    let queued = std::mem::replace(
                        armed,
                        Armed {
                            at: at_ms,
                            queued: at_ms,
                        },
                    )
                    .queued;
                    self.by_deadline.remove(&(queued, key.clone()));
                    self.by_deadline.insert((at_ms, key));
                }
                None => self.arm(key, at_ms),
            },
            TimerOp::Cancel { key } => {
                if let Some(armed) = self.deadlines.remove(&key) {
                    self.by_deadline.remove(&(armed.queued, key));
                }
            }
            TimerOp::SetIfAbsent { key, at_ms } => {
                if !self.deadlines.contains_key(&key) {
                    self.arm(key, at_ms);
                }
            }
        }
    }

    fn arm(&mut self, key: TimerKey, at: TimestampMs) {
        self.deadlines.insert(key.clone(), Armed { at, queued: at });
        self.by_deadline.insert((at, key));
    }

    /// When the runtime should look next: at or before the earliest deadline (a timer moved
    /// later is found then and put back at its deadline).
    pub fn next_deadline(&self) -> Option<TimestampMs> {
        self.by_deadline.first().map(|(at, _)| *at)
    }

    /// Removes and returns every timer due at `now_ms`, earliest deadline first.
    pub fn take_due(&mut self, now_ms: TimestampMs) -> Vec<TimerKey> {
        let mut due = Vec::new();
        while let Some((queued, _)) = self.by_deadline.first() {
            if *queued > now_ms {
                break;
            }
            let Some((_, key)) = self.by_deadline.pop_first() else {
                break;
            };
            match self.deadlines.get_mut(&key) {
                Some(armed) if armed.at > now_ms => {
                    armed.queued = armed.at;
                    self.by_deadline.insert((armed.at, key));
                }
                Some(_) => {
                    if let Some(armed) = self.deadlines.remove(&key) {
                        due.push((armed.at, key));
                    }
                }
                None => {}
            }
        }
        due.sort();
        due.into_iter().map(|(_, key)| key).collect()
    }

    /// Whether `key` is armed (some later command moved it since it last fired).
    pub fn is_armed(&self, key: &TimerKey) -> bool {
        self.deadlines.contains_key(key)
    }

    pub fn clear(&mut self) {
        self.by_deadline.clear();
        self.deadlines.clear();
    }

    pub fn len(&self) -> usize {
        self.deadlines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.deadlines.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordinator::{GroupId, MemberId};

    fn session(member: &str) -> TimerKey {
        TimerKey::MemberHeartbeat {
            group_id: GroupId::new("g"),
            member_id: MemberId::new(member),
        }
    }

    #[test]
    fn set_moves_cancel_disarms_and_due_timers_fire_in_order() {
        let mut w = TimerWheel::default();
        w.apply(TimerOp::Set {
            key: session("a"),
            at_ms: TimestampMs(100),
        });
        w.apply(TimerOp::Set {
            key: session("b"),
            at_ms: TimestampMs(50),
        });
        w.apply(TimerOp::Set {
            key: session("a"),
            at_ms: TimestampMs(30),
        });
        w.apply(TimerOp::Set {
            key: TimerKey::OffsetsRetention,
            at_ms: TimestampMs(500),
        });
        w.apply(TimerOp::Cancel {
            key: TimerKey::OffsetsRetention,
        });
        assert_eq!(w.len(), 2);
        assert!(w.is_armed(&session("a")));
        assert!(!w.is_armed(&TimerKey::OffsetsRetention));
        assert_eq!(w.next_deadline(), Some(TimestampMs(30)));
        assert_eq!(w.take_due(TimestampMs(29)), Vec::<TimerKey>::new());
        assert_eq!(
            w.take_due(TimestampMs(60)),
            vec![session("a"), session("b")]
        );
        assert!(w.is_empty());
        assert_eq!(w.next_deadline(), None);
    }

    #[test]
    fn a_timer_moved_later_fires_at_its_new_deadline_in_deadline_order() {
        let mut w = TimerWheel::default();
        let set = |w: &mut TimerWheel, key: TimerKey, at: i64| {
            w.apply(TimerOp::Set {
                key,
                at_ms: TimestampMs(at),
            })
        };
        set(&mut w, session("a"), 10);
        set(&mut w, session("b"), 20);
        set(&mut w, session("a"), 40);
        // The runtime may look at 10; nothing is due then.
        assert!(w.next_deadline() <= Some(TimestampMs(20)));
        assert_eq!(w.take_due(TimestampMs(15)), Vec::<TimerKey>::new());
        assert_eq!(w.len(), 2);
        assert_eq!(w.take_due(TimestampMs(25)), vec![session("b")]);
        assert_eq!(w.next_deadline(), Some(TimestampMs(40)));
        // Moved later again, then earlier than its queued position: it fires at the earliest.
        set(&mut w, session("a"), 90);
        set(&mut w, session("a"), 30);
        assert_eq!(w.next_deadline(), Some(TimestampMs(30)));
        set(&mut w, session("c"), 35);
        set(&mut w, session("a"), 38);
        // Both due at 50: `c` (35) before `a` (38), whatever their queued positions.
        assert_eq!(
            w.take_due(TimestampMs(50)),
            vec![session("c"), session("a")]
        );
        // A cancelled key, moved later first, never fires.
        set(&mut w, session("d"), 60);
        set(&mut w, session("d"), 80);
        w.apply(TimerOp::Cancel { key: session("d") });
        assert!(w.is_empty());
        assert_eq!(w.take_due(TimestampMs(100)), Vec::<TimerKey>::new());
        assert_eq!(w.next_deadline(), None);
    }
}
