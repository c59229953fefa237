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

/// The members' subscriptions as spec topic indexes (unknown ids dropped, sorted), each
/// distinct one converted once: members mostly subscribe alike (one list in a homogeneous
/// group, a few in most others), and converting or comparing each member's list would
/// dominate a large group.
pub(crate) struct Subscriptions {
    /// The distinct converted lists.
    pub(crate) distinct: Vec<Vec<usize>>,
    /// Per member (in spec order), its index in `distinct`.
    pub(crate) of_member: Vec<usize>,
}

impl Subscriptions {
    /// Member `i`'s subscribed topic indexes.
    pub(crate) fn of(&self, member: usize) -> &[usize] {
        self.of_member
            .get(member)
            .and_then(|d| self.distinct.get(*d))
            .map_or(&[], Vec::as_slice)
    }

    /// Every member with its subscribed topic indexes, in spec order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[usize]> + '_ {
        (0..self.of_member.len()).map(|i| self.of(i))
    }
}

pub(crate) fn subscribed_indexes(spec: &GroupSpec) -> Subscriptions {
    let convert = |subscribed: &[TopicId]| {
        let mut v: Vec<usize> = subscribed
            .iter()
            .filter_map(|t| Flat::topic_index(spec, *t))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut by_ids: BTreeMap<&[TopicId], usize> = BTreeMap::new();
    let mut by_indexes: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
    let mut distinct: Vec<Vec<usize>> = Vec::new();
    let mut of_member = Vec::with_capacity(spec.members.len());
    for m in &spec.members {
        let at = match by_ids.get(m.subscribed.as_slice()) {
            Some(at) => *at,
            None => {
                // Two id lists may name the same known topics (unknown ids are dropped).
                let converted = convert(&m.subscribed);
                let at = match by_indexes.get(&converted) {
                    Some(at) => *at,
                    None => {
                        distinct.push(converted.clone());
                        by_indexes.insert(converted, distinct.len() - 1);
                        distinct.len() - 1
                    }
                };
                by_ids.insert(m.subscribed.as_slice(), at);
                at
            }
        };
        of_member.push(at);
    }
    Subscriptions {
        distinct,
        of_member,
    }
}

/// Turns an owner per flat partition into one assignment per member. Partitions are visited
/// in (topic id, partition) order, so each member's are already sorted.
pub(crate) fn collect(spec: &GroupSpec, flat: &Flat, owner: &[u32]) -> GroupAssignment {
    let mut topics: Vec<Vec<(TopicId, Vec<PartitionIndex>)>> = vec![Vec::new(); spec.members.len()];
    for (t, topic) in spec.topics.iter().enumerate() {
        let start = flat.start.get(t).copied().unwrap_or(0);
        let owners = owner
            .get(start..start + topic.partitions as usize)
            .unwrap_or_default();
        for (p, o) in owners.iter().enumerate() {
            if let Some(member) = topics.get_mut(*o as usize) {
                let partition = PartitionIndex(i32::try_from(p).unwrap_or(i32::MAX));
                match member.last_mut() {
                    Some((id, partitions)) if *id == topic.id => partitions.push(partition),
                    _ => member.push((topic.id, vec![partition])),
                }
            }
        }
    }
    GroupAssignment {
        members: topics
            .into_iter()
            .map(|t| Assignment::from_sorted_topics(t.into_iter().collect::<BTreeMap<_, _>>()))
            .collect(),
    }
}

/// No owner, in an owner-per-partition array.
pub(crate) const NONE: u32 = u32::MAX;
