//! The `range` assignor: co-partitioned. For each topic, its subscribers in member-id order
//! each get a contiguous range of its partitions, the first `P mod S` of them one more. Members
//! that subscribe to the same topics therefore get the same partition numbers of every topic
//! with the same partition count (co-partitioning, what joins across topics need).
//!
//! Unlike Kafka 4.x's server-side range assignor this one is not sticky: a membership change
//! moves the ranges. Stickiness is the `uniform` assignor's job; `range` is chosen for the
//! co-partitioning guarantee, which stickiness would have to give up when members change.

use super::{collect, subscribed_indexes, Assignor, Flat, GroupAssignment, GroupSpec, NONE};

/// See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RangeAssignor;

impl RangeAssignor {
    pub const NAME: &'static str = "range";
}

impl Assignor for RangeAssignor {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn assign(&self, spec: &GroupSpec) -> GroupAssignment {
        let flat = Flat::new(spec);
        let subs = subscribed_indexes(spec);
        let mut subscribers: Vec<Vec<u32>> = vec![Vec::new(); spec.topics.len()];
        for (i, topics) in subs.iter().enumerate() {
            for t in topics {
                if let Some(s) = subscribers.get_mut(*t) {
                    s.push(i as u32);
                }
            }
        }
        let mut owner = vec![NONE; flat.total];
        for (topic, members) in subscribers.iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            let start = flat.start.get(topic).copied().unwrap_or(0);
            let count = spec.topics.get(topic).map_or(0, |t| t.partitions as usize);
            let (base, extra) = (count / members.len(), count % members.len());
            let mut next = start;
            for (j, member) in members.iter().enumerate() {
                let len = base + usize::from(j < extra);
                for f in next..next + len {
                    if let Some(o) = owner.get_mut(f) {
                        *o = *member;
                    }
                }
                next += len;
            }
        }
        collect(spec, &flat, &owner)
    }
}
