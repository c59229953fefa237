//! The `uniform` assignor (Kafka's default server-side assignor): balanced and sticky.
//!
//! Homogeneous subscriptions (every member subscribes to the same topics, the common case):
//! with P partitions and M members each member gets ⌊P/M⌋ or ⌈P/M⌉. A member first keeps what
//! it was targeted before, up to its quota (the extra one while extras remain, in member-id
//! order); what is left is handed out in partition order to members below quota, then one
//! each to members at ⌊P/M⌋ until none is left. So every member keeps at least
//! min(⌊P/M⌋, what it had), and the result is within one partition of perfect balance.
//!
//! Heterogeneous subscriptions: each member's fair share is Σ over its topics of
//! partitions/subscribers (rounded up); it keeps what it had up to that share, then the
//! topics with the fewest subscribers first hand their free partitions to their least-loaded
//! subscribers (water filling: the lowest loads are raised to one level, ties in member
//! order). One pass over the topics, O(subscribers · log partitions) each: no search, no
//! iteration to a fixed point.

use super::{
    collect, subscribed_indexes, Assignor, Flat, GroupAssignment, GroupSpec, Subscriptions, NONE,
};

/// See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformAssignor;

impl UniformAssignor {
    pub const NAME: &'static str = "uniform";
}

impl Assignor for UniformAssignor {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn assign(&self, spec: &GroupSpec) -> GroupAssignment {
        let flat = Flat::new(spec);
        let subs = subscribed_indexes(spec);
        let owner = match subs.distinct.as_slice() {
            _ if spec.members.is_empty() => Vec::new(),
            [only] => homogeneous(spec, &flat, only),
            _ => heterogeneous(spec, &flat, &subs),
        };
        collect(spec, &flat, &owner)
    }
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
