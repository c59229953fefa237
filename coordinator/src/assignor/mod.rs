//! Server-side assignors of the consumer protocol (KIP-848): given the members of a group,
//! what each subscribes to and what each was targeted before, decide who gets which partition.
//!
//! ```text
//!   GroupSpec { topics: [TopicSpec{id, partitions}], members: [MemberSpec{id, subscribed, previous}] }
//!        │  Assignor::assign (pure: no state, no clock, deterministic for a given spec)
//!        ▼
//!   GroupAssignment { members: [Assignment] }     one per member, in the spec's member order
//! ```
//!
//! Assignors are pure functions of their spec, so the runtime may run them on any thread (the
//! heavy ones off the request path) and the result enters the replicated state only through a
//! command that `decide` validates. Every assignor must assign each partition of a subscribed
//! topic to exactly one of its subscribers, and nothing else.

mod range;
mod uniform;

use crate::ids::{MemberId, PartitionIndex, TopicId};
use crate::record::assignment::Assignment;
pub use range::RangeAssignor;
use std::collections::BTreeMap;
pub use uniform::UniformAssignor;

/// One topic the group's members subscribe to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicSpec {
    pub id: TopicId,
    pub partitions: u32,
}

/// One member as an assignor sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberSpec {
    pub member_id: MemberId,
    /// Sorted, unique; ids absent from `GroupSpec::topics` are ignored.
    pub subscribed: Vec<TopicId>,
    /// Its target assignment before this run: what a sticky assignor tries to keep.
    pub previous: Assignment,
}

/// Everything an assignor needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupSpec {
    /// Sorted by id, unique.
    pub topics: Vec<TopicSpec>,
    /// Sorted by member id, unique.
    pub members: Vec<MemberSpec>,
}

/// One assignment per member of the spec, in the same order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupAssignment {
    pub members: Vec<Assignment>,
}

/// A server-side assignor. `name` is what `ServerAssignor` in a heartbeat selects.
pub trait Assignor: Send + Sync {
    fn name(&self) -> &'static str;
    fn assign(&self, spec: &GroupSpec) -> GroupAssignment;
}

/// The assignors Cohort serves, the default first (Kafka's `group.consumer.assignors`).
pub const ASSIGNOR_NAMES: [&str; 2] = [UniformAssignor::NAME, RangeAssignor::NAME];

/// The assignor named `name`, if Cohort has it.
pub fn by_name(name: &str) -> Option<&'static dyn Assignor> {
    static UNIFORM: UniformAssignor = UniformAssignor;
    static RANGE: RangeAssignor = RangeAssignor;
    match name {
        UniformAssignor::NAME => Some(&UNIFORM),
        RangeAssignor::NAME => Some(&RANGE),
        _ => None,
    }
}

/// Dense indexes over a spec, shared by the assignors: topic `i` of the spec owns the flat
/// partition numbers `start[i] .. start[i] + partitions`.
pub(crate) struct Flat {
    pub(crate) start: Vec<usize>,
    pub(crate) total: usize,
}

impl Flat {
    pub(crate) fn new(spec: &GroupSpec) -> Flat {
        let mut start = Vec::with_capacity(spec.topics.len());
        let mut total = 0usize;
        for t in &spec.topics {
            start.push(total);
            total += t.partitions as usize;
        }
        Flat { start, total }
    }

    /// The spec's index of topic `id`.
    pub(crate) fn topic_index(spec: &GroupSpec, id: TopicId) -> Option<usize> {
        spec.topics.binary_search_by(|t| t.id.cmp(&id)).ok()
    }

    /// The flat number of `(topic index, partition)`, if the partition exists.
    pub(crate) fn flat(
        &self,
        spec: &GroupSpec,
        topic: usize,
        partition: PartitionIndex,
    ) -> Option<usize> {
        let count = spec.topics.get(topic)?.partitions;
        let p = u32::try_from(partition.0).ok().filter(|p| *p < count)?;
        Some(self.start.get(topic)? + p as usize)
    }
}

/// Each member's subscribed topics as spec topic indexes (unknown ids dropped), sorted.
/// Members with the same subscription list share one conversion (the common case is that all
/// members subscribe alike, and converting each would dominate a large homogeneous group).
pub(crate) fn subscribed_indexes(spec: &GroupSpec) -> Vec<Vec<usize>> {
    let convert = |subscribed: &[TopicId]| {
        let mut v: Vec<usize> = subscribed
            .iter()
            .filter_map(|t| Flat::topic_index(spec, *t))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut out: Vec<Vec<usize>> = Vec::with_capacity(spec.members.len());
    let mut last: Option<(&[TopicId], usize)> = None;
    for m in &spec.members {
        match last {
            Some((subscribed, at)) if subscribed == m.subscribed.as_slice() => {
                let same = out[at].clone();
                out.push(same);
            }
            _ => {
                last = Some((m.subscribed.as_slice(), out.len()));
                out.push(convert(&m.subscribed));
            }
        }
    }
    out
}

/// Turns an owner per flat partition into one assignment per member. Partitions are visited
/// in (topic id, partition) order, so each member's are already sorted.
pub(crate) fn collect(spec: &GroupSpec, flat: &Flat, owner: &[u32]) -> GroupAssignment {
    let mut topics: Vec<BTreeMap<TopicId, Vec<PartitionIndex>>> =
        vec![BTreeMap::new(); spec.members.len()];
    for (t, topic) in spec.topics.iter().enumerate() {
        let start = flat.start.get(t).copied().unwrap_or(0);
        let owners = owner
            .get(start..start + topic.partitions as usize)
            .unwrap_or_default();
        for (p, o) in owners.iter().enumerate() {
            if let Some(member) = topics.get_mut(*o as usize) {
                member
                    .entry(topic.id)
                    .or_default()
                    .push(PartitionIndex(i32::try_from(p).unwrap_or(i32::MAX)));
            }
        }
    }
    GroupAssignment {
        members: topics
            .into_iter()
            .map(Assignment::from_sorted_topics)
            .collect(),
    }
}

/// No owner, in an owner-per-partition array.
pub(crate) const NONE: u32 = u32::MAX;
