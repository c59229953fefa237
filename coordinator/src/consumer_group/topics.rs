//! `TopicsChanged`: the coordinator's topic image follows the replicated topic table, and
//! every consumer group that uses a created, grown or deleted topic (by name or by pattern)
//! gets a new group epoch, so its target assignment is computed again (Kafka bumps the epoch
//! when a group's subscription metadata changes).

use super::finish;
use super::plan::Plan;
use super::target::{maybe_assign, subscribed_ids};
use crate::command::TopicsChanged;
use crate::config::Config;
use crate::ids::{GroupId, TopicId};
use crate::index::topics::TopicImage;
use crate::index::GroupIndex;
use crate::outcome::Outcome;
use crate::record::consumer_group::TopicValue;
use crate::record::Record;
use crate::reply::Reply;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) fn decide(config: &Config, groups: &GroupIndex, c: &TopicsChanged) -> Outcome {
    let before = &groups.topic_image;
    let mut after = before.clone();
    let mut records = Vec::new();
    let mut changed_ids: BTreeSet<TopicId> = BTreeSet::new();
    // Compared with `after`, not `before`: one command may name a topic twice.
    for name in &c.deleted {
        if let Some(old) = after.get(name.as_str()).copied() {
            changed_ids.insert(old.id);
            after.put(name, None);
            records.push(Record::Topic {
                name: name.clone(),
                value: None,
            });
        }
    }
    for t in &c.upserted {
        let value = TopicValue {
            id: t.id,
            partitions: t.partitions.max(0),
        };
        if after.get(t.name.as_str()) == Some(&value) {
            continue;
        }
        if let Some(old) = after.get(t.name.as_str()) {
            changed_ids.insert(old.id);
        }
        changed_ids.insert(t.id);
        after.put(&t.name, Some(&value));
        records.push(Record::Topic {
            name: t.name.clone(),
            value: Some(value),
        });
    }
    let mut assignments = Vec::new();
    let mut timers = Vec::new();
    if !changed_ids.is_empty() {
        for (group_id, group) in groups.consumer_groups() {
            if !uses_any(group, before, &after, &changed_ids) {
                continue;
            }
            let group_id = GroupId::from(group_id);
            let mut plan = Plan::new(&group_id, Some(group));
            plan.bump_group_epoch();
            maybe_assign(&mut plan, &after, config);
            let outcome = finish(plan, Reply::Done, Vec::new());
            records.extend(outcome.records);
            assignments.extend(outcome.assignments);
            timers.extend(outcome.timers);
        }
    }
    Outcome {
        records,
        reply: Reply::Done,
        member_replies: Vec::new(),
        timers,
        assignments,
        txn_markers: Vec::new(),
    }
}

/// Whether a member of `group` subscribes to one of the changed topics, before or after.
fn uses_any(
    group: &crate::record::consumer_group::ConsumerGroup,
    before: &TopicImage,
    after: &TopicImage,
    changed: &BTreeSet<TopicId>,
) -> bool {
    let mut regexes = BTreeMap::new();
    group.members.values().any(|m| {
        let old = subscribed_ids(m, before, &mut regexes);
        let new = subscribed_ids(m, after, &mut regexes);
        old.iter().chain(new.iter()).any(|id| changed.contains(id))
    })
}
