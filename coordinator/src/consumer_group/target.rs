//! Target assignments: the assignor's input built from the group and the topic image, inline
//! computation for small groups, the job the runtime runs off the request path for large
//! ones, and the validation of a result it installs.

use super::plan::Plan;
use crate::assignor::{self, GroupSpec, MemberSpec, TopicSpec};
use crate::command::InstallTargetAssignment;
use crate::config::Config;
use crate::group::topic_regex::TopicRegex;
use crate::ids::{GroupId, MemberId, TopicId};
use crate::index::topics::TopicImage;
use crate::record::assignment::Assignment;
use crate::record::consumer_group::{ConsumerGroup, ConsumerMemberValue};
use std::collections::{BTreeMap, BTreeSet};

/// The topic ids a member subscribes to, by name or by pattern, among the topics that exist.
/// `regexes` caches compiled patterns across the members of one computation.
pub(crate) fn subscribed_ids(
    member: &ConsumerMemberValue,
    image: &TopicImage,
    regexes: &mut BTreeMap<String, Option<TopicRegex>>,
) -> BTreeSet<TopicId> {
    let mut ids: BTreeSet<TopicId> = member
        .subscribed_topic_names
        .iter()
        .filter_map(|n| image.get(n.as_str()).map(|t| t.id))
        .collect();
    if let Some(pattern) = &member.subscribed_topic_regex {
        let regex = regexes
            .entry(pattern.clone())
            .or_insert_with(|| TopicRegex::new(pattern).ok());
        if let Some(regex) = regex {
            ids.extend(
                image
                    .iter()
                    .filter(|(name, _)| regex.matches(name.as_str()))
                    .map(|(_, t)| t.id),
            );
        }
    }
    ids
}

/// An assignor run for one group: what the runtime computes off the request path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignmentJob {
    pub group_id: GroupId,
    pub epoch: i32,
    pub assignor: String,
    pub spec: GroupSpec,
}

impl AssignmentJob {
    /// Runs the assignor (pure; any thread) and returns the command that installs the result.
    pub fn run(&self, now_ms: crate::ids::TimestampMs) -> InstallTargetAssignment {
        let result = assignor::by_name(&self.assignor)
            .or_else(|| assignor::by_name(assignor::ASSIGNOR_NAMES[0]))
            .map(|a| a.assign(&self.spec))
            .unwrap_or_default();
        InstallTargetAssignment {
            now_ms,
            group_id: self.group_id.clone(),
            epoch: self.epoch,
            members: self
                .spec
                .members
                .iter()
                .map(|m| m.member_id.clone())
                .zip(result.members)
                .collect(),
        }
    }

    /// members × partitions of the subscribed topics: what decides inline or off the path.
    pub fn cost(&self) -> usize {
        let partitions: usize = self.spec.topics.iter().map(|t| t.partitions as usize).sum();
        partitions.saturating_mul(self.spec.members.len().max(1))
    }
}

/// The assignor input for the plan's group at its group epoch.
pub(crate) fn job(plan: &Plan<'_>, image: &TopicImage) -> AssignmentJob {
    let mut regexes = BTreeMap::new();
    let mut topics: BTreeSet<TopicId> = BTreeSet::new();
    let mut members = Vec::new();
    for (member_id, member) in plan.members() {
        let subscribed = subscribed_ids(member, image, &mut regexes);
        topics.extend(subscribed.iter().copied());
        members.push(MemberSpec {
            member_id: member_id.clone(),
            subscribed: subscribed.into_iter().collect(),
            previous: plan.target(member_id).clone(),
        });
    }
    let topics = topics
        .into_iter()
        .filter_map(|id| {
            let partitions = image.partitions_of(id)?;
            Some(TopicSpec {
                id,
                partitions: u32::try_from(partitions).unwrap_or(0),
            })
        })
        .collect();
    AssignmentJob {
        group_id: plan.group_id.clone(),
        epoch: plan.epochs.group_epoch,
        assignor: plan.assignor().to_owned(),
        spec: GroupSpec { topics, members },
    }
}

/// If the plan's group epoch is ahead of its assignment, computes the target inline when
/// the group is small enough, or records that the runtime must compute it.
pub(crate) fn maybe_assign(plan: &mut Plan<'_>, image: &TopicImage, config: &Config) {
    if plan.epochs.group_epoch <= plan.epochs.assignment_epoch {
        return;
    }
    let job = job(plan, image);
    // A group's first assignment is always computed here: until it has one its members
    // would stay at epoch 0, which means "joining" on the wire. A new group has one member.
    if job.cost() > config.consumer_inline_assignment_max_cost && plan.epochs.assignment_epoch > 0 {
        plan.assignment_needed = true;
        return;
    }
    let install = job.run(crate::ids::TimestampMs(0));
    apply(plan, install.members);
}

/// Sets every member's target (members absent from `members` get an empty one) and moves
/// the assignment epoch to the group epoch.
fn apply(plan: &mut Plan<'_>, members: Vec<(MemberId, Assignment)>) {
    let mut given: BTreeMap<MemberId, Assignment> = members.into_iter().collect();
    let ids: Vec<MemberId> = plan.members().map(|(id, _)| id.clone()).collect();
    for id in ids {
        let target = given.remove(&id).unwrap_or_default();
        plan.set_target(&id, Some(target));
    }
    plan.epochs.assignment_epoch = plan.epochs.group_epoch;
}

/// Validates an assignment computed off the request path and installs it: the group must
/// still be at that epoch (a later change started another run), and the result must give
/// each existing partition of a subscribed topic to at most one member that subscribes to it.
pub(crate) fn install(
    plan: &mut Plan<'_>,
    image: &TopicImage,
    c: &InstallTargetAssignment,
) -> bool {
    if c.epoch != plan.epochs.group_epoch || c.epoch <= plan.epochs.assignment_epoch {
        return false;
    }
    let mut regexes = BTreeMap::new();
    let mut seen: BTreeSet<(TopicId, crate::ids::PartitionIndex)> = BTreeSet::new();
    for (member_id, assignment) in &c.members {
        let Some(member) = plan.member(member_id) else {
            return false;
        };
        let subscribed = subscribed_ids(member, image, &mut regexes);
        for (topic, partition) in assignment.iter() {
            let exists = image
                .partitions_of(topic)
                .is_some_and(|n| partition.0 >= 0 && partition.0 < n);
            if !exists || !subscribed.contains(&topic) || !seen.insert((topic, partition)) {
                return false;
            }
        }
    }
    apply(plan, c.members.clone());
    true
}

/// The job for a group as it stands (for a leader that takes over a group left assigning).
pub(crate) fn job_for(
    group_id: &GroupId,
    group: &ConsumerGroup,
    image: &TopicImage,
) -> Option<AssignmentJob> {
    let plan = Plan::new(group_id, Some(group));
    (plan.epochs.group_epoch > plan.epochs.assignment_epoch).then(|| job(&plan, image))
}
