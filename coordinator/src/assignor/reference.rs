//! The `uniform` assignor and the shared helpers exactly as decision 0147 left them (commit
//! b039ac4), kept for tests only: the optimised assignor (decision 0176) must compute the
//! same assignment for every spec, so replicas on either version agree and the scenario tests'
//! expectations stand.

use super::{GroupAssignment, GroupSpec};
use crate::ids::{PartitionIndex, TopicId};
use crate::record::assignment::Assignment;
use std::collections::BTreeMap;

/// The uniform assignor as decision 0147 left it.
pub(crate) fn uniform(spec: &GroupSpec) -> GroupAssignment {
    let flat = Flat::new(spec);
    let subs = subscribed_indexes(spec);
    let owner = match subs.distinct.as_slice() {
        _ if spec.members.is_empty() => Vec::new(),
        [only] => homogeneous(spec, &flat, only),
        _ => heterogeneous(spec, &flat, &subs),
    };
    collect(spec, &flat, &owner)
}

/// The range assignor's algorithm (unchanged by decision 0176) on the helpers as they were.
pub(crate) fn range(spec: &GroupSpec) -> GroupAssignment {
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

/// Whether topic index `topic` is in the sorted `subscribed`.
fn subscribes(subscribed: &[usize], topic: usize) -> bool {
    subscribed.binary_search(&topic).is_ok()
}

fn homogeneous(spec: &GroupSpec, flat: &Flat, subscribed: &[usize]) -> Vec<u32> {
    let members = spec.members.len();
    let mut owner = vec![NONE; flat.total];
    let total: usize = subscribed
        .iter()
        .filter_map(|t| spec.topics.get(*t))
        .map(|t| t.partitions as usize)
        .sum();
    let base = total / members;
    let mut extras = total % members;
    let mut load = vec![0usize; members];

    // Keep what each member had, up to its quota.
    for (i, member) in spec.members.iter().enumerate() {
        let index = i as u32;
        for (topic_id, partition) in member.previous.iter() {
            let Some(topic) = Flat::topic_index(spec, topic_id) else {
                continue;
            };
            if !subscribes(subscribed, topic) {
                continue;
            }
            let Some(f) = flat.flat(spec, topic, partition) else {
                continue;
            };
            if owner[f] != NONE {
                continue;
            }
            if load[i] < base {
                owner[f] = index;
                load[i] += 1;
            } else if load[i] == base && extras > 0 {
                owner[f] = index;
                load[i] += 1;
                extras -= 1;
            }
        }
    }

    // Hand out the rest in partition order: everyone to the base quota, then the extras.
    let kept: usize = load.iter().sum();
    let mut pending: Vec<usize> = Vec::with_capacity(total.saturating_sub(kept));
    for t in subscribed {
        let start = flat.start.get(*t).copied().unwrap_or(0);
        let count = spec.topics.get(*t).map_or(0, |t| t.partitions as usize);
        pending.extend((start..start + count).filter(|f| owner[*f] == NONE));
    }
    let mut pending = pending.into_iter();
    for (i, l) in load.iter_mut().enumerate() {
        while *l < base {
            let Some(f) = pending.next() else { break };
            owner[f] = i as u32;
            *l += 1;
        }
    }
    for (i, l) in load.iter_mut().enumerate() {
        if *l != base {
            continue;
        }
        let Some(f) = pending.next() else { break };
        owner[f] = i as u32;
        *l += 1;
    }
    owner
}

fn heterogeneous(spec: &GroupSpec, flat: &Flat, subs: &Subscriptions) -> Vec<u32> {
    let members = spec.members.len();
    let mut owner = vec![NONE; flat.total];
    let mut subscribers: Vec<Vec<u32>> = vec![Vec::new(); spec.topics.len()];
    for (i, topics) in subs.iter().enumerate() {
        for t in topics {
            if let Some(s) = subscribers.get_mut(*t) {
                s.push(i as u32);
            }
        }
    }
    // Fair share: each topic split evenly among its subscribers (once per distinct
    // subscription).
    let distinct_share: Vec<usize> = subs
        .distinct
        .iter()
        .map(|topics| {
            let exact: f64 = topics
                .iter()
                .map(|t| {
                    let partitions = spec.topics.get(*t).map_or(0, |t| t.partitions) as f64;
                    let n = subscribers.get(*t).map_or(1, Vec::len).max(1) as f64;
                    partitions / n
                })
                .sum();
            exact.ceil() as usize
        })
        .collect();
    let share: Vec<usize> = subs
        .of_member
        .iter()
        .map(|d| distinct_share.get(*d).copied().unwrap_or(0))
        .collect();
    let mut load = vec![0usize; members];

    for (i, member) in spec.members.iter().enumerate() {
        for (topic_id, partition) in member.previous.iter() {
            if load[i] >= share[i] {
                break;
            }
            let Some(topic) = Flat::topic_index(spec, topic_id) else {
                continue;
            };
            if !subscribes(subs.of(i), topic) {
                continue;
            }
            let Some(f) = flat.flat(spec, topic, partition) else {
                continue;
            };
            if owner[f] == NONE {
                owner[f] = i as u32;
                load[i] += 1;
            }
        }
    }

    let mut order: Vec<usize> = (0..spec.topics.len())
        .filter(|t| subscribers.get(*t).is_some_and(|s| !s.is_empty()))
        .collect();
    order.sort_by_key(|t| (subscribers.get(*t).map_or(0, Vec::len), *t));
    let mut free: Vec<usize> = Vec::new();
    for topic in order {
        let start = flat.start.get(topic).copied().unwrap_or(0);
        let count = spec.topics.get(topic).map_or(0, |t| t.partitions as usize);
        free.clear();
        free.extend((start..start + count).filter(|f| owner[*f] == NONE));
        if free.is_empty() {
            continue;
        }
        let Some(s) = subscribers.get(topic) else {
            continue;
        };
        water_fill(s, &mut load, &free, &mut owner);
    }
    owner
}

/// Gives the partitions `free` to `subscribers`, raising the lowest loads to one level
/// (ties in subscriber order).
fn water_fill(subscribers: &[u32], load: &mut [usize], free: &[usize], owner: &mut [u32]) {
    let k = free.len();
    let need = |level: usize, load: &[usize]| -> usize {
        subscribers
            .iter()
            .map(|i| level.saturating_sub(load[*i as usize]))
            .sum()
    };
    let lowest = subscribers
        .iter()
        .map(|i| load[*i as usize])
        .min()
        .unwrap_or(0);
    // The highest level whose filling needs at most k partitions.
    let (mut lo, mut hi) = (lowest, lowest + k);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if need(mid, load) <= k {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let level = lo;
    let mut next = free.iter();
    for i in subscribers {
        let i = *i as usize;
        while load[i] < level {
            let Some(f) = next.next() else { return };
            owner[*f] = i as u32;
            load[i] += 1;
        }
    }
    for i in subscribers {
        let i = *i as usize;
        if load[i] != level {
            continue;
        }
        let Some(f) = next.next() else { return };
        owner[*f] = i as u32;
        load[i] += 1;
    }
}

/// Dense indexes over a spec, shared by the assignors: topic `i` of the spec owns the flat
/// partition numbers `start[i] .. start[i] + partitions`.
struct Flat {
    start: Vec<usize>,
    total: usize,
}

impl Flat {
    fn new(spec: &GroupSpec) -> Flat {
        let mut start = Vec::with_capacity(spec.topics.len());
        let mut total = 0usize;
        for t in &spec.topics {
            start.push(total);
            total += t.partitions as usize;
        }
        Flat { start, total }
    }

    /// The spec's index of topic `id`.
    fn topic_index(spec: &GroupSpec, id: TopicId) -> Option<usize> {
        spec.topics.binary_search_by(|t| t.id.cmp(&id)).ok()
    }

    /// The flat number of `(topic index, partition)`, if the partition exists.
    fn flat(&self, spec: &GroupSpec, topic: usize, partition: PartitionIndex) -> Option<usize> {
        let count = spec.topics.get(topic)?.partitions;
        let p = u32::try_from(partition.0).ok().filter(|p| *p < count)?;
        Some(self.start.get(topic)? + p as usize)
    }
}

/// The members' subscriptions as spec topic indexes (unknown ids dropped, sorted), each
/// distinct one converted once: members mostly subscribe alike (one list in a homogeneous
/// group, a few in most others), and converting or comparing each member's list would
/// dominate a large group.
struct Subscriptions {
    /// The distinct converted lists.
    distinct: Vec<Vec<usize>>,
    /// Per member (in spec order), its index in `distinct`.
    of_member: Vec<usize>,
}

impl Subscriptions {
    /// Member `i`'s subscribed topic indexes.
    fn of(&self, member: usize) -> &[usize] {
        self.of_member
            .get(member)
            .and_then(|d| self.distinct.get(*d))
            .map_or(&[], Vec::as_slice)
    }

    /// Every member with its subscribed topic indexes, in spec order.
    fn iter(&self) -> impl Iterator<Item = &[usize]> + '_ {
        (0..self.of_member.len()).map(|i| self.of(i))
    }
}

fn subscribed_indexes(spec: &GroupSpec) -> Subscriptions {
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
fn collect(spec: &GroupSpec, flat: &Flat, owner: &[u32]) -> GroupAssignment {
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
const NONE: u32 = u32::MAX;
