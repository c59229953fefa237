//! The administrative group APIs: DeleteGroups (write), DescribeGroups and ListGroups (read).

use crate::command::{DeleteGroups, DescribeGroups, ListGroups};
use crate::config::Config;
use crate::group::consumer;
use crate::group::GroupState;
use crate::index::GroupIndex;
use crate::outcome::{Outcome, ReadOutcome};
use crate::record::Record;
use crate::reply::{DescribedGroup, DescribedMember, ErrorKind, ListedGroup, Reply};
use bytes::Bytes;

/// From v6 DescribeGroups reports an unknown group as GROUP_ID_NOT_FOUND (KIP-1043).
const DESCRIBE_NOT_FOUND_MIN_VERSION: i16 = 6;
/// ListGroups v5 group types.
const CLASSIC_GROUP_TYPE: &str = "classic";
const CONSUMER_GROUP_TYPE: &str = "consumer";

/// DeleteGroups v0–v2: only Empty groups; their offsets go with them.
pub(crate) fn delete_groups(config: &Config, groups: &GroupIndex, c: &DeleteGroups) -> Outcome {
    let mut records = Vec::new();
    let mut results = Vec::with_capacity(c.group_ids.len());
    for group_id in &c.group_ids {
        let result = if group_id.as_str().len() > config.group_id_max_bytes {
            Err(ErrorKind::InvalidGroupId)
        } else {
            match groups.table.get(group_id.as_str()) {
                None => Err(ErrorKind::GroupIdNotFound),
                Some(entry) => {
                    let group_state = groups.store.state(entry.group);
                    let consumer = groups.store.consumer_group(entry.group);
                    if group_state != GroupState::Empty {
                        Err(ErrorKind::NonEmptyGroup)
                    } else {
                        for (topic, partition, _) in entry.offsets.iter(&groups.topics) {
                            records.push(Record::OffsetCommit {
                                group_id: group_id.clone(),
                                topic: topic.into(),
                                partition,
                                value: None,
                            });
                        }
                        if let Some(consumer) = consumer {
                            records.extend(consumer::tombstones(group_id, consumer));
                        } else if entry.group.is_some() {
                            records.push(Record::GroupMetadata {
                                group_id: group_id.clone(),
                                value: None,
                            });
                        }
                        records.extend(groups.group_config_tombstone(group_id));
                        Ok(())
                    }
                }
            }
        };
        results.push((group_id.clone(), result));
    }
    Outcome {
        records,
        reply: Reply::DeleteGroups(results),
        member_replies: Vec::new(),
        timers: Vec::new(),
        assignments: Vec::new(),
        txn_markers: Vec::new(),
    }
}

/// DescribeGroups v0–v6: members' metadata and assignment, and the selected protocol, only
/// when Stable; an unknown group is Dead (no error before v6).
pub(crate) fn describe_groups(
    config: &Config,
    groups: &GroupIndex,
    c: &DescribeGroups,
) -> ReadOutcome {
    let groups = c
        .group_ids
        .iter()
        .map(|group_id| {
            let dead = |error| DescribedGroup {
                group_id: group_id.clone(),
                error,
                state: GroupState::Dead,
                protocol_type: String::new(),
                protocol_data: String::new(),
                members: Vec::new(),
            };
            if group_id.as_str().len() > config.group_id_max_bytes {
                return dead(Some(ErrorKind::InvalidGroupId));
            }
            let Some(group) = groups.classic_group(group_id) else {
                return dead(
                    (c.api_version.0 >= DESCRIBE_NOT_FOUND_MIN_VERSION)
                        .then_some(ErrorKind::GroupIdNotFound),
                );
            };
            let stable = group.state == GroupState::Stable;
            let protocol = group.protocol_name.clone().unwrap_or_default();
            DescribedGroup {
                group_id: group_id.clone(),
                error: None,
                state: group.state,
                protocol_type: group.protocol_type.clone().unwrap_or_default(),
                protocol_data: if stable {
                    protocol.clone()
                } else {
                    String::new()
                },
                members: group
                    .members
                    .iter()
                    .map(|(id, m)| DescribedMember {
                        member_id: id.clone(),
                        group_instance_id: m.group_instance_id.clone(),
                        client_id: m.client_id.clone(),
                        client_host: m.client_host.clone(),
                        metadata: if stable {
                            m.metadata_for(&protocol).cloned().unwrap_or_default()
                        } else {
                            Bytes::new()
                        },
                        assignment: if stable {
                            m.assignment.clone()
                        } else {
                            Bytes::new()
                        },
                    })
                    .collect(),
            }
        })
        .collect();
    ReadOutcome {
        reply: Reply::DescribeGroups(groups),
        timers: Vec::new(),
    }
}

/// ListGroups v0–v5, with the v4 state filter and the v5 type filter (case-insensitive).
pub(crate) fn list_groups(groups: &GroupIndex, c: &ListGroups) -> ReadOutcome {
    let states: Vec<String> = c.states_filter.iter().map(|s| s.to_lowercase()).collect();
    let type_wanted = |t: &str| {
        c.types_filter.is_empty() || c.types_filter.iter().any(|f| f.eq_ignore_ascii_case(t))
    };
    let listed = groups
        .table
        .iter()
        .filter_map(|(group_id, entry)| {
            let group_state = groups.store.state(entry.group);
            let protocol_type = groups.store.protocol_type(entry.group).to_owned();
            let (group_type, state_name) = match groups.store.consumer_group(entry.group) {
                Some(g) => (CONSUMER_GROUP_TYPE, consumer::state(g).as_str()),
                None => (CLASSIC_GROUP_TYPE, group_state.as_str()),
            };
            let wanted = type_wanted(group_type)
                && (states.is_empty() || states.iter().any(|s| *s == state_name.to_lowercase()));
            wanted.then(|| ListedGroup {
                group_id: group_id.into(),
                protocol_type,
                state: group_state,
                state_name: state_name.to_owned(),
                group_type: group_type.to_owned(),
            })
        })
        .collect();
    ReadOutcome {
        reply: Reply::ListGroups(listed),
        timers: Vec::new(),
    }
}
