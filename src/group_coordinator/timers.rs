//! The leader's timer wheel: the coordinator's `TimerOp::Set/Cancel/SetIfAbsent` applied to an ordered set,
//! so the runtime sleeps until the earliest deadline and fires what is due.

use std::collections::{BTreeSet, HashMap};

use coordinator::{TimerKey, TimerOp, TimestampMs};

/// Armed timers; a key is armed at most once (a `Set` of an armed key moves it).
#[derive(Debug, Default)]
pub struct TimerWheel {
    by_deadline: BTreeSet<(TimestampMs, TimerKey)>,
    deadlines: HashMap<TimerKey, TimestampMs>,
}

impl TimerWheel {
    pub fn apply(&mut self, op: TimerOp) {
        match op {
            TimerOp::Set { key, at_ms } => {
                if let Some(old) = self.deadlines.insert(key.clone(), at_ms) {
                    self.by_deadline.remove(&(old, key.clone()));
                }
                self.by_deadline.insert((at_ms, key));
            }
            TimerOp::Cancel { key } => {
                if let Some(old) = self.deadlines.remove(&key) {
                    self.by_deadline.remove(&(old, key));
                }
            }
            TimerOp::SetIfAbsent { key, at_ms } => {
                if !self.deadlines.contains_key(&key) {
                    self.deadlines.insert(key.clone(), at_ms);
                    self.by_deadline.insert((at_ms, key));
                }
            }
        }
    }

    /// The earliest deadline, if any timer is armed.
    pub fn next_deadline(&self) -> Option<TimestampMs> {
        self.by_deadline.first().map(|(at, _)| *at)
    }

    /// Removes and returns every timer due at `now_ms`, earliest first.
    pub fn take_due(&mut self, now_ms: TimestampMs) -> Vec<TimerKey> {
        let mut due = Vec::new();
        while let Some((at, _)) = self.by_deadline.first() {
            if *at > now_ms {
                break;
            }
            if let Some((_, key)) = self.by_deadline.pop_first() {
                self.deadlines.remove(&key);
                due.push(key);
            }
        }
        due
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
}
