//! A consumer group's pending changes inside one `decide`: an overlay over the group's
//! records (decide is `&self`, and cloning a group of thousands of members per heartbeat
//! would cost more than the heartbeat). `records()` turns it into the records that replay
//! it, only for what differs from the recorded group.

use crate::assignor;
use crate::ids::{GroupId, MemberId};
use crate::record::assignment::Assignment;
use crate::record::consumer_group::{
    ConsumerGroup, ConsumerGroupValue, ConsumerMemberValue, CurrentAssignment,
};
use crate::record::Record;
use std::collections::BTreeMap;

static EMPTY_GROUP: std::sync::OnceLock<ConsumerGroup> = std::sync::OnceLock::new();
static NO_ASSIGNMENT: Assignment = Assignment::EMPTY;

pub(crate) struct Plan<'a> {
    pub(crate) group_id: &'a GroupId,
    pub(crate) base: &'a ConsumerGroup,
    /// Whether the group had records before (a new group writes its epoch record even at 0).
    pub(crate) existed: bool,
    pub(crate) epochs: ConsumerGroupValue,
    members: BTreeMap<MemberId, Option<ConsumerMemberValue>>,
    targets: BTreeMap<MemberId, Option<Assignment>>,
    current: BTreeMap<MemberId, Option<CurrentAssignment>>,
    /// Records that go first (the tombstone of a classic group this one replaces).
    pub(crate) prefix: Vec<Record>,
    /// The target is too large to compute here: the runtime must.
    pub(crate) assignment_needed: bool,
}

impl<'a> Plan<'a> {
    pub(crate) fn new(group_id: &'a GroupId, base: Option<&'a ConsumerGroup>) -> Plan<'a> {
        let existed = base.is_some();
        let base = base.unwrap_or_else(|| EMPTY_GROUP.get_or_init(ConsumerGroup::default));
        Plan {
            group_id,
            base,
            existed,
            epochs: base.epochs,
            members: BTreeMap::new(),
            targets: BTreeMap::new(),
            current: BTreeMap::new(),
            prefix: Vec::new(),
            assignment_needed: false,
        }
    }

    pub(crate) fn member(&self, id: &MemberId) -> Option<&ConsumerMemberValue> {
        match self.members.get(id) {
            Some(over) => over.as_ref(),
            None => self.base.members.get(id),
        }
    }

    /// Every member after the changes, in id order.
    pub(crate) fn members(&self) -> impl Iterator<Item = (&MemberId, &ConsumerMemberValue)> + '_ {
        let base = self
            .base
            .members
            .iter()
            .filter(|(id, _)| !self.members.contains_key(*id));
        let added = self
            .members
            .iter()
            .filter_map(|(id, m)| m.as_ref().map(|m| (id, m)));
        let mut all: Vec<(&MemberId, &ConsumerMemberValue)> = base.chain(added).collect();
        all.sort_by(|a, b| a.0.cmp(b.0));
        all.into_iter()
    }

    pub(crate) fn member_count(&self) -> usize {
        let removed = self
            .members
            .iter()
            .filter(|(id, m)| m.is_none() && self.base.members.contains_key(*id))
            .count();
        let added = self
            .members
            .iter()
            .filter(|(id, m)| m.is_some() && !self.base.members.contains_key(*id))
            .count();
        self.base.members.len() + added - removed
    }

    pub(crate) fn target(&self, id: &MemberId) -> &Assignment {
        match self.targets.get(id) {
            Some(Some(t)) => t,
            Some(None) => &NO_ASSIGNMENT,
            None => self.base.target_of(id),
        }
    }

    pub(crate) fn current(&self, id: &MemberId) -> CurrentAssignment {
        match self.current.get(id) {
            Some(Some(c)) => c.clone(),
            Some(None) => CurrentAssignment::default(),
            None => self.base.current_of(id).clone(),
        }
    }

    pub(crate) fn set_member(&mut self, id: &MemberId, value: Option<ConsumerMemberValue>) {
        self.members.insert(id.clone(), value);
    }

    pub(crate) fn set_target(&mut self, id: &MemberId, value: Option<Assignment>) {
        self.targets.insert(id.clone(), value);
    }

    pub(crate) fn set_current(&mut self, id: &MemberId, value: Option<CurrentAssignment>) {
        self.current.insert(id.clone(), value);
    }

    /// Removes a member: its three records become tombstones.
    pub(crate) fn remove_member(&mut self, id: &MemberId) {
        self.set_current(id, None);
        self.set_target(id, None);
        self.set_member(id, None);
    }

    /// Whether the member `id` was removed by this plan.
    pub(crate) fn removed(&self, id: &MemberId) -> bool {
        matches!(self.members.get(id), Some(None))
    }

    pub(crate) fn bump_group_epoch(&mut self) {
        self.epochs.group_epoch = self.epochs.group_epoch.saturating_add(1);
    }

    /// The server assignor the members name most (ties to the smaller name), else the default.
    pub(crate) fn assignor(&self) -> &str {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, m) in self.members() {
            if let Some(a) = &m.server_assignor {
                *counts.entry(a.as_str()).or_default() += 1;
            }
        }
        let mut best: Option<(&str, usize)> = None;
        for (name, count) in counts {
            if best.is_none_or(|(_, c)| count > c) {
                best = Some((name, count));
            }
        }
        best.map_or(assignor::ASSIGNOR_NAMES[0], |(n, _)| n)
    }

    /// The records that replay this plan: what differs from the recorded group, members'
    /// removals as (current, target, member) tombstones, additions as (member, target,
    /// current), the group record last.
    pub(crate) fn records(self) -> Vec<Record> {
        let mut out = self.prefix;
        let group_id = self.group_id;
        let base = self.base;
        let mut ids: Vec<&MemberId> = self
            .members
            .keys()
            .chain(self.targets.keys())
            .chain(self.current.keys())
            .collect();
        ids.sort();
        ids.dedup();
        for id in ids {
            let member = self.members.get(id);
            let target = self.targets.get(id);
            let current = self.current.get(id);
            let member_changed = member.filter(|m| m.as_ref() != base.members.get(id));
            let target_changed = target.filter(|t| t.as_ref() != base.targets.get(id));
            let current_changed = current.filter(|c| c.as_ref() != base.current.get(id));
            let removed = matches!(member, Some(None));
            let member_record = member_changed.map(|m| Record::ConsumerMember {
                group_id: group_id.clone(),
                member_id: id.clone(),
                value: m.clone().map(Box::new),
            });
            let target_record = target_changed.map(|t| Record::ConsumerTarget {
                group_id: group_id.clone(),
                member_id: id.clone(),
                value: t.clone(),
            });
            let current_record = current_changed.map(|c| Record::ConsumerCurrent {
                group_id: group_id.clone(),
                member_id: id.clone(),
                value: c.clone().map(Box::new),
            });
            if removed {
                out.extend(current_record);
                out.extend(target_record);
                out.extend(member_record);
            } else {
                out.extend(member_record);
                out.extend(target_record);
                out.extend(current_record);
            }
        }
        if !self.existed || !base.has_epochs || self.epochs != base.epochs {
            out.push(Record::ConsumerGroup {
                group_id: group_id.clone(),
                value: Some(self.epochs),
            });
        }
        out
    }
}
