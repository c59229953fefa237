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
#[cfg(test)]
mod reference;
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

/// How many distinct id lists a member's list is compared with before the ordered map is
/// asked: groups have a handful of distinct subscriptions, and an equality test that stops
/// at the first differing chunk is cheaper than the map's element-by-element ordering.
const RECENT_LISTS: usize = 8;

/// Whether two id lists are equal. Compares chunks without a branch per id (the loop
/// vectorises), stopping at the first chunk that differs: a large group's lists are the
/// bulk of the bytes an assignor reads.
fn same_ids(a: &[TopicId], b: &[TopicId]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a_chunks, a_rest) = a.as_chunks::<8>();
    let (b_chunks, b_rest) = b.as_chunks::<8>();
    a_chunks
        .iter()
        .zip(b_chunks)
        .all(|(x, y)| x.iter().zip(y).fold(0u128, |acc, (p, q)| acc | (p.0 ^ q.0)) == 0)
        && a_rest == b_rest
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
    // The first id lists met, with their distinct list: looked at before `by_ids`.
    let mut recent: Vec<(&[TopicId], usize)> = Vec::with_capacity(RECENT_LISTS);
    let mut by_indexes: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
    let mut distinct: Vec<Vec<usize>> = Vec::new();
    let mut of_member = Vec::with_capacity(spec.members.len());
    // Consecutive members mostly subscribe alike: the last one's list is tried first.
    let mut last: Option<(&[TopicId], usize)> = None;
    for m in &spec.members {
        let ids = m.subscribed.as_slice();
        let known = last
            .filter(|(l, _)| same_ids(l, ids))
            .or_else(|| recent.iter().find(|(l, _)| same_ids(l, ids)).copied())
            .map(|(_, at)| at)
            .or_else(|| by_ids.get(ids).copied());
        let at = match known {
            Some(at) => at,
            None => {
                // Two id lists may name the same known topics (unknown ids are dropped).
                let converted = convert(ids);
                let at = match by_indexes.get(&converted) {
                    Some(at) => *at,
                    None => {
                        distinct.push(converted.clone());
                        by_indexes.insert(converted, distinct.len() - 1);
                        distinct.len() - 1
                    }
                };
                if recent.len() < RECENT_LISTS {
                    recent.push((ids, at));
                } else {
                    by_ids.insert(ids, at);
                }
                at
            }
        };
        last = Some((ids, at));
        of_member.push(at);
    }
    Subscriptions {
        distinct,
        of_member,
    }
}

/// Turns an owner per flat partition into one assignment per member. Partitions are visited
/// in (topic id, partition) order, so each member's are already sorted.
///
/// The owners are first sorted by member (a counting sort: one count per member, then one
/// slot per owned partition), so that each member's assignment is built once with vectors
/// of their final size: growing a vector per partition and a map per topic was most of the
/// assignor's time in a large group.
pub(crate) fn collect(spec: &GroupSpec, flat: &Flat, owner: &[u32]) -> GroupAssignment {
    let members = spec.members.len();
    // `first[m] .. first[m + 1]` will be member m's slots.
    let mut first = vec![0usize; members + 1];
    for o in owner {
        if let Some(c) = first.get_mut(*o as usize + 1) {
            *c += 1;
        }
    }
    for m in 1..first.len() {
        first[m] += first[m - 1];
    }
    let owned = first.last().copied().unwrap_or(0);
    // (topic index, partition) per slot, in (topic, partition) order within each member.
    let mut slots: Vec<(u32, u32)> = vec![(0, 0); owned];
    let mut next: Vec<usize> = first.clone();
    for (t, topic) in spec.topics.iter().enumerate() {
        let start = flat.start.get(t).copied().unwrap_or(0);
        let owners = owner
            .get(start..start + topic.partitions as usize)
            .unwrap_or_default();
        for (p, o) in owners.iter().enumerate() {
            if let Some(at) = next.get_mut(*o as usize) {
                slots[*at] = (t as u32, p as u32);
                *at += 1;
            }
        }
    }
    let mut out = Vec::with_capacity(members);
    for m in 0..members {
        let mine = slots.get(first[m]..first[m + 1]).unwrap_or_default();
        let runs = mine.chunk_by(|a, b| a.0 == b.0).filter_map(|run| {
            let topic = run
                .first()
                .and_then(|(t, _)| spec.topics.get(*t as usize))?;
            let partitions: Vec<PartitionIndex> = run
                .iter()
                .map(|(_, p)| PartitionIndex(i32::try_from(*p).unwrap_or(i32::MAX)))
                .collect();
            Some((topic.id, partitions))
        });
        // Built from a sorted vector, a map fills its nodes (inserting one topic at a time
        // leaves them half full, and searches from the root each time).
        let topics: BTreeMap<TopicId, Vec<PartitionIndex>> = match mine.first() {
            Some((t, _)) if mine.last().is_some_and(|(last, _)| last == t) => {
                let mut one = BTreeMap::new();
                one.extend(runs);
                one
            }
            _ => {
                let mut sorted = Vec::with_capacity(mine.chunk_by(|a, b| a.0 == b.0).count());
                sorted.extend(runs);
                sorted.into_iter().collect()
            }
        };
        out.push(Assignment::from_sorted_topics(topics));
    }
    GroupAssignment { members: out }
}

/// No owner, in an owner-per-partition array.
pub(crate) const NONE: u32 = u32::MAX;

#[cfg(test)]
mod same_as_reference {
    //! The assignors must compute exactly what they computed before decision 0176's rewrite
    //! (`reference`), on any spec: replicas running either version agree on a target, and no
    //! scenario test's expectation moves. Specs are random and deliberately untidy: unknown
    //! topic ids, unsorted or repeated ids, previous targets naming unknown topics,
    //! nonexistent partitions, unsubscribed topics, or partitions another member also had.

    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    struct Raw {
        partitions: Vec<u32>,
        /// Per member: subscribed topics (bit i = topic i; bit 12 = an unknown id; bit 13 =
        /// the list reversed; bit 14 = its first id repeated), and previous (topic, partition)
        /// pairs, topic indexes past the spec's being unknown ids.
        members: Vec<(u32, Vec<(u8, u8)>)>,
        homogeneous: bool,
    }

    fn raw() -> impl Strategy<Value = Raw> {
        (
            proptest::collection::vec(0u32..30, 0..9),
            proptest::collection::vec(
                (
                    any::<u32>(),
                    proptest::collection::vec((0u8..10, 0u8..34), 0..24),
                ),
                0..40,
            ),
            any::<bool>(),
        )
            .prop_map(|(partitions, members, homogeneous)| Raw {
                partitions,
                members,
                homogeneous,
            })
    }

    fn spec_of(raw: &Raw) -> GroupSpec {
        let id = |t: usize| TopicId(1_000 + t as u128);
        let topics: Vec<TopicSpec> = raw
            .partitions
            .iter()
            .enumerate()
            .map(|(t, p)| TopicSpec {
                id: id(t),
                partitions: *p,
            })
            .collect();
        let members = raw
            .members
            .iter()
            .enumerate()
            .map(|(m, (bits, previous))| {
                let bits = if raw.homogeneous {
                    raw.members.first().map_or(0, |f| f.0)
                } else {
                    *bits
                };
                let mut subscribed: Vec<TopicId> = (0..topics.len())
                    .filter(|t| bits & (1 << t) != 0)
                    .map(id)
                    .collect();
                if bits & (1 << 12) != 0 {
                    subscribed.push(TopicId(7));
                }
                if bits & (1 << 13) != 0 {
                    subscribed.reverse();
                }
                if bits & (1 << 14) != 0 {
                    if let Some(f) = subscribed.first().copied() {
                        subscribed.push(f);
                    }
                }
                MemberSpec {
                    member_id: MemberId::new(format!("m{m:03}")),
                    subscribed,
                    previous: Assignment::from_pairs(
                        previous
                            .iter()
                            .map(|(t, p)| (id(*t as usize), PartitionIndex(i32::from(*p)))),
                    ),
                }
            })
            .collect();
        GroupSpec { topics, members }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

        #[test]
        fn uniform_assigns_as_before(raw in raw()) {
            let spec = spec_of(&raw);
            let now = UniformAssignor.assign(&spec);
            prop_assert_eq!(&now, &reference::uniform(&spec));
            // And again from its own result, as a sticky rerun does.
            let mut again = spec.clone();
            for (m, a) in again.members.iter_mut().zip(&now.members) {
                m.previous = a.clone();
            }
            if !again.members.is_empty() {
                again.members.remove(again.members.len() / 2);
            }
            prop_assert_eq!(UniformAssignor.assign(&again), reference::uniform(&again));
        }

        #[test]
        fn range_assigns_as_before(raw in raw()) {
            let spec = spec_of(&raw);
            prop_assert_eq!(RangeAssignor.assign(&spec), reference::range(&spec));
        }
    }

    #[test]
    fn many_distinct_subscriptions_assign_as_before() {
        // More distinct lists than `RECENT_LISTS`, repeated out of order: the ordered map's
        // path, and lists naming the same known topics beside different unknown ids.
        let topics: Vec<TopicSpec> = (0..12)
            .map(|t| TopicSpec {
                id: TopicId(100 + t),
                partitions: 7 + t as u32,
            })
            .collect();
        let members: Vec<MemberSpec> = (0..200u32)
            .map(|m| {
                let pick = (m * 7919) % 31;
                let mut subscribed: Vec<TopicId> = (0..12u128)
                    .filter(|t| (pick >> (t % 5)) & 1 == 1 || *t == u128::from(pick % 12))
                    .map(|t| TopicId(100 + t))
                    .collect();
                subscribed.push(TopicId(1 + u128::from(m % 3)));
                MemberSpec {
                    member_id: MemberId::new(format!("m{m:04}")),
                    subscribed,
                    previous: Assignment::new(),
                }
            })
            .collect();
        let spec = GroupSpec { topics, members };
        assert!(subscribed_indexes(&spec).distinct.len() > RECENT_LISTS);
        let first = UniformAssignor.assign(&spec);
        assert_eq!(first, reference::uniform(&spec));
        assert_eq!(RangeAssignor.assign(&spec), reference::range(&spec));
        let mut again = spec.clone();
        for (m, a) in again.members.iter_mut().zip(&first.members) {
            m.previous = a.clone();
        }
        again
            .members
            .retain(|m| m.member_id.as_str().ends_with('3'));
        assert_eq!(UniformAssignor.assign(&again), reference::uniform(&again));
    }
}
