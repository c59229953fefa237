//! Consumer-protocol (KIP-848) helpers for the scenario harness: heartbeats served the way the
//! leader serves them (answered from state when they change nothing, written otherwise),
//! topic changes, off-path assignment runs, and the ownership checks.

use super::Harness;
use coordinator::*;
use std::collections::BTreeMap;

/// A ConsumerGroupHeartbeat with a client's usual fields.
#[derive(Clone, Debug)]
pub struct Hb {
    pub version: i16,
    pub group: String,
    pub member: String,
    pub epoch: i32,
    pub instance: Option<String>,
    pub rack: Option<String>,
    pub rebalance_ms: i32,
    pub names: Option<Vec<String>>,
    pub regex: Option<String>,
    pub assignor: Option<String>,
    pub owned: Option<Vec<(u128, Vec<i32>)>>,
}

impl Hb {
    /// A first heartbeat (epoch 0) subscribing to `topics`.
    pub fn join(member: &str, topics: &[&str]) -> Hb {
        Hb {
            version: 1,
            group: super::GROUP.to_owned(),
            member: member.to_owned(),
            epoch: 0,
            instance: None,
            rack: None,
            rebalance_ms: 30_000,
            names: Some(topics.iter().map(|t| (*t).to_owned()).collect()),
            regex: None,
            assignor: None,
            owned: Some(Vec::new()),
        }
    }

    /// A later heartbeat that changes nothing but reports `owned`.
    pub fn beat(member: &str, epoch: i32, owned: &Assignment) -> Hb {
        Hb {
            version: 1,
            group: super::GROUP.to_owned(),
            member: member.to_owned(),
            epoch,
            instance: None,
            rack: None,
            rebalance_ms: -1,
            names: None,
            regex: None,
            assignor: None,
            owned: Some(owned_of(owned)),
        }
    }

    pub fn instance(mut self, i: &str) -> Hb {
        self.instance = Some(i.to_owned());
        self
    }
    pub fn epoch(mut self, e: i32) -> Hb {
        self.epoch = e;
        self
    }
    pub fn version(mut self, v: i16) -> Hb {
        self.version = v;
        self
    }
    pub fn group(mut self, g: &str) -> Hb {
        self.group = g.to_owned();
        self
    }
    pub fn regex(mut self, r: &str) -> Hb {
        self.regex = Some(r.to_owned());
        self
    }
    pub fn assignor(mut self, a: &str) -> Hb {
        self.assignor = Some(a.to_owned());
        self
    }
}

pub fn owned_of(a: &Assignment) -> Vec<(u128, Vec<i32>)> {
    a.topics()
        .map(|(t, p)| (t.0, p.iter().map(|p| p.0).collect()))
        .collect()
}

impl Harness {
    pub fn command_of(&mut self, hb: &Hb) -> ConsumerGroupHeartbeat {
        self.nonce_bump();
        ConsumerGroupHeartbeat {
            api_version: ApiVersion(hb.version),
            now_ms: self.now_ms(),
            nonce: self.nonce(),
            group_id: hb.group.as_str().into(),
            member_id: hb.member.as_str().into(),
            member_epoch: hb.epoch,
            instance_id: hb.instance.as_deref().map(GroupInstanceId::from),
            rack_id: hb.rack.clone(),
            rebalance_timeout_ms: hb.rebalance_ms,
            subscribed_topic_names: hb
                .names
                .as_ref()
                .map(|n| n.iter().map(|t| TopicName::from(t.as_str())).collect()),
            subscribed_topic_regex: hb.regex.clone(),
            server_assignor: hb.assignor.clone(),
            owned_partitions: hb.owned.as_ref().map(|o| {
                o.iter()
                    .map(|(t, p)| OwnedTopicPartitions {
                        topic_id: TopicId(*t),
                        partitions: p.iter().map(|p| PartitionIndex(*p)).collect(),
                    })
                    .collect()
            }),
            client_id: "client".to_owned(),
            client_host: "/127.0.0.1".to_owned(),
        }
    }

    /// Serves a heartbeat as the leader does; `wrote` tells whether it was replicated.
    pub fn cg_heartbeat_path(&mut self, hb: &Hb) -> (ConsumerHeartbeatResponse, bool) {
        let command = self.command_of(hb);
        let (reply, wrote) = match self.state.consumer_heartbeat(command) {
            HeartbeatPath::Answered(read) => {
                self.arm_ops(&read.timers);
                (read.reply, false)
            }
            HeartbeatPath::Write(command) => {
                let out = self.write(command);
                self.run_assignments(&out.assignments);
                (out.reply, true)
            }
        };
        match reply {
            Reply::ConsumerGroupHeartbeat(r) => (r, wrote),
            other => panic!("expected a consumer heartbeat reply, got {other:?}"),
        }
    }

    pub fn cg_heartbeat(&mut self, hb: &Hb) -> ConsumerHeartbeatResponse {
        self.cg_heartbeat_path(hb).0
    }

    /// The leader's part of an off-path assignment: run each job and install its result.
    pub fn run_assignments(&mut self, needed: &[AssignmentNeeded]) {
        for n in needed {
            if let Some(job) = self.state.assignment_job(&n.group_id) {
                let install = job.run(self.now_ms());
                let out = self.write(WriteCommand::InstallTargetAssignment(install));
                assert_eq!(out.reply, Reply::Done);
            }
        }
    }

    /// Applies a topic change as raft-meta's app does for CreateTopics/DeleteTopics.
    pub fn topics_changed(&mut self, upserted: &[(&str, u128, i32)], deleted: &[&str]) -> Outcome {
        let out = self.write(WriteCommand::TopicsChanged(TopicsChanged {
            now_ms: self.now_ms(),
            upserted: upserted
                .iter()
                .map(|(name, id, partitions)| TopicMetadata {
                    name: (*name).into(),
                    id: TopicId(*id),
                    partitions: *partitions,
                })
                .collect(),
            deleted: deleted.iter().map(|t| TopicName::from(*t)).collect(),
        }));
        self.run_assignments(&out.assignments.clone());
        out
    }

    pub fn cg(&self, group: &str) -> &ConsumerGroup {
        self.state
            .consumer_group(&group.into())
            .expect("a consumer group")
    }

    /// No partition is held (assigned or being revoked) by two members of any group, and
    /// the owner index the state keeps is the one its records imply.
    pub fn check_ownership(&self) {
        for (group_id, group) in self.state.consumer_groups() {
            let mut seen: BTreeMap<(TopicId, PartitionIndex), &MemberId> = BTreeMap::new();
            for (member, c) in &group.current {
                for key in c.assigned.iter().chain(c.pending_revocation.iter()) {
                    if let Some(other) = seen.insert(key, member) {
                        panic!("{group_id}: {key:?} held by {other} and {member}");
                    }
                }
            }
            assert_eq!(
                group.owners(),
                &group.owners_from_scratch(),
                "{group_id}: the owner index drifted"
            );
        }
    }
}

pub fn error_of(r: &ConsumerHeartbeatResponse) -> Option<ErrorKind> {
    r.error
}

pub fn assignment(pairs: &[(u128, i32)]) -> Assignment {
    Assignment::from_pairs(pairs.iter().map(|(t, p)| (TopicId(*t), PartitionIndex(*p))))
}
