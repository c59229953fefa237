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
use std::collections::BTreeMap;

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
    let mut is_subscribed = vec![false; spec.topics.len()];
    for t in subscribed {
        if let Some(s) = is_subscribed.get_mut(*t) {
            *s = true;
        }
    }
    let total: usize = subscribed
        .iter()
        .filter_map(|t| spec.topics.get(*t))
        .map(|t| t.partitions as usize)
        .sum();
    let base = total / members;
    let mut extras = total % members;
    let mut load = vec![0usize; members];

    // Keep what each member had, up to its quota. Topics are looked up once per topic of a
    // previous assignment, not once per partition.
    for (i, member) in spec.members.iter().enumerate() {
        let index = i as u32;
        for (topic_id, partitions) in member.previous.topics() {
            let Some(topic) = Flat::topic_index(spec, topic_id) else {
                continue;
            };
            if !is_subscribed[topic] {
                continue;
            }
            for partition in partitions {
                let Some(f) = flat.flat(spec, topic, *partition) else {
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

/// Who subscribes to what, by topic, without one member list per topic: topics that the
/// same distinct subscriptions cover share one list of subscribers (a group with a few
/// distinct subscriptions has a few lists, whatever its topic count).
struct Subscribers {
    /// Per topic index, its list in `lists`, if anyone subscribes to it.
    list_of_topic: Vec<Option<usize>>,
    /// Member indexes in spec order.
    lists: Vec<Vec<u32>>,
    /// Per distinct subscription, the lists its members are in.
    lists_of_distinct: Vec<Vec<usize>>,
}

impl Subscribers {
    fn new(spec: &GroupSpec, subs: &Subscriptions) -> Subscribers {
        // The distinct subscriptions covering each topic, ascending.
        let mut covering: Vec<Vec<u32>> = vec![Vec::new(); spec.topics.len()];
        for (d, topics) in subs.distinct.iter().enumerate() {
            for t in topics {
                if let Some(c) = covering.get_mut(*t) {
                    c.push(d as u32);
                }
            }
        }
        let mut list_by_covering: BTreeMap<&[u32], usize> = BTreeMap::new();
        let mut lists_of_distinct: Vec<Vec<usize>> = vec![Vec::new(); subs.distinct.len()];
        let mut list_of_topic = Vec::with_capacity(covering.len());
        for c in &covering {
            if c.is_empty() {
                list_of_topic.push(None);
                continue;
            }
            let next = list_by_covering.len();
            let list = *list_by_covering.entry(c.as_slice()).or_insert_with(|| {
                for d in c {
                    if let Some(l) = lists_of_distinct.get_mut(*d as usize) {
                        l.push(next);
                    }
                }
                next
            });
            list_of_topic.push(Some(list));
        }
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); list_by_covering.len()];
        for (i, d) in subs.of_member.iter().enumerate() {
            for l in lists_of_distinct.get(*d).map_or(&[][..], Vec::as_slice) {
                if let Some(list) = lists.get_mut(*l) {
                    list.push(i as u32);
                }
            }
        }
        Subscribers {
            list_of_topic,
            lists,
            lists_of_distinct,
        }
    }

    /// Topic index `topic`'s subscribers, in spec order.
    fn of(&self, topic: usize) -> &[u32] {
        self.list_of_topic
            .get(topic)
            .copied()
            .flatten()
            .and_then(|l| self.lists.get(l))
            .map_or(&[], Vec::as_slice)
    }
}

/// The members' loads, with a histogram of them per subscriber list kept up to date as
/// loads change, so that filling a topic need not look at each of its subscribers' loads
/// to find the lowest and how many sit at each level.
struct Loads<'a> {
    load: Vec<usize>,
    subscribers: &'a Subscribers,
    /// Per member, its distinct subscription.
    distinct_of: &'a [usize],
    /// Per list: how many of its members have each load.
    histograms: Vec<Vec<usize>>,
    /// Per list: its lowest load (loads only grow while filling).
    lowest: Vec<usize>,
}

impl<'a> Loads<'a> {
    fn new(load: Vec<usize>, subscribers: &'a Subscribers, distinct_of: &'a [usize]) -> Self {
        let mut histograms = Vec::with_capacity(subscribers.lists.len());
        let mut lowest = Vec::with_capacity(subscribers.lists.len());
        for list in &subscribers.lists {
            let mut h: Vec<usize> = Vec::new();
            for i in list {
                let l = load[*i as usize];
                if h.len() <= l {
                    h.resize(l + 1, 0);
                }
                h[l] += 1;
            }
            lowest.push(h.iter().position(|c| *c > 0).unwrap_or(0));
            histograms.push(h);
        }
        Loads {
            load,
            subscribers,
            distinct_of,
            histograms,
            lowest,
        }
    }

    /// Member `member`'s load becomes `to` (higher than now).
    fn raise(&mut self, member: usize, to: usize) {
        let from = self.load[member];
        self.load[member] = to;
        let lists = self
            .distinct_of
            .get(member)
            .and_then(|d| self.subscribers.lists_of_distinct.get(*d))
            .map_or(&[][..], Vec::as_slice);
        for l in lists {
            let h = &mut self.histograms[*l];
            if h.len() <= to {
                h.resize(to + 1, 0);
            }
            h[from] -= 1;
            h[to] += 1;
            let lowest = &mut self.lowest[*l];
            while h.get(*lowest) == Some(&0) {
                *lowest += 1;
            }
        }
    }
}

fn heterogeneous(spec: &GroupSpec, flat: &Flat, subs: &Subscriptions) -> Vec<u32> {
    let members = spec.members.len();
    let mut owner = vec![NONE; flat.total];
    let subscribers = Subscribers::new(spec, subs);
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
                    let n = subscribers.of(*t).len().max(1) as f64;
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
        'topics: for (topic_id, partitions) in member.previous.topics() {
            if load[i] >= share[i] {
                break;
            }
            let Some(topic) = Flat::topic_index(spec, topic_id) else {
                continue;
            };
            if !subscribes(subs.of(i), topic) {
                continue;
            }
            for partition in partitions {
                if load[i] >= share[i] {
                    break 'topics;
                }
                let Some(f) = flat.flat(spec, topic, *partition) else {
                    continue;
                };
                if owner[f] == NONE {
                    owner[f] = i as u32;
                    load[i] += 1;
                }
            }
        }
    }

    let mut order: Vec<(usize, usize)> = (0..spec.topics.len())
        .map(|t| (subscribers.of(t).len(), t))
        .filter(|(n, _)| *n > 0)
        .collect();
    order.sort_unstable();
    let mut loads = Loads::new(load, &subscribers, &subs.of_member);
    let mut free: Vec<usize> = Vec::new();
    for (_, topic) in order {
        let start = flat.start.get(topic).copied().unwrap_or(0);
        let count = spec.topics.get(topic).map_or(0, |t| t.partitions as usize);
        free.clear();
        free.extend((start..start + count).filter(|f| owner[*f] == NONE));
        if free.is_empty() {
            continue;
        }
        let Some(list) = subscribers.list_of_topic.get(topic).copied().flatten() else {
            continue;
        };
        water_fill(list, &mut loads, &free, &mut owner);
    }
    owner
}

/// Gives the partitions `free` to the members of subscriber list `list`, raising the
/// lowest loads to one level (ties in subscriber order): the members below the level are
/// raised to it, then members at the level get one more each, in subscriber order, while
/// partitions remain.
///
/// The level is the highest whose filling needs at most `free.len()` partitions; the list's
/// load histogram gives it without a pass over the subscribers. The raising and the extras
/// are handed out in one pass that stops once every partition is given (the extras take the
/// partitions after the ones the raising needs, as a second pass would).
fn water_fill(list: usize, loads: &mut Loads<'_>, free: &[usize], owner: &mut [u32]) {
    let k = free.len();
    let lowest = loads.lowest[list];
    let histogram = &loads.histograms[list];
    // need(lowest + j + 1) = need(lowest + j) + (subscribers at or below lowest + j).
    let (mut j, mut need, mut below) = (0usize, 0usize, 0usize);
    while j < k {
        below += histogram.get(lowest + j).copied().unwrap_or(0);
        if need + below > k {
            break;
        }
        need += below;
        j += 1;
    }
    let level = lowest + j;
    let subscribers = loads.subscribers;
    let members = subscribers.lists.get(list).map_or(&[][..], Vec::as_slice);
    let (mut raise, mut extra) = (0usize, need);
    for i in members {
        if raise == need && extra == k {
            break;
        }
        let member = *i as usize;
        let mut to = loads.load[member];
        while to < level {
            owner[free[raise]] = *i;
            raise += 1;
            to += 1;
        }
        if to == level && extra < k {
            owner[free[extra]] = *i;
            extra += 1;
            to += 1;
        }
        if to != loads.load[member] {
            loads.raise(member, to);
        }
    }
}
