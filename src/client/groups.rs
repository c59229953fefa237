//! Group operations of the Admin client, as `kafka-consumer-groups.sh` uses them: list groups on
//! every broker, describe groups, read a group's committed offsets, commit offsets as an
//! administrator (generation −1, no member), delete offsets, delete groups.

use std::collections::BTreeMap;

use bytes::Bytes;
use kafka_protocol::messages::{
    consumer_group_describe_request::ConsumerGroupDescribeRequest,
    consumer_group_describe_response,
    delete_groups_request::DeleteGroupsRequest,
    describe_groups_request::DescribeGroupsRequest,
    list_groups_request::ListGroupsRequest,
    offset_commit_request::{
        OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    },
    offset_delete_request::{
        OffsetDeleteRequest, OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
    },
    offset_fetch_request::{OffsetFetchRequest, OffsetFetchRequestGroup},
    ApiKey, ConsumerGroupDescribeResponse, DeleteGroupsResponse, DescribeGroupsResponse, GroupId,
    OffsetCommitResponse, OffsetDeleteResponse, OffsetFetchResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::{classify_group_error, Admin, GroupOutcome, GroupRequest};
use super::consumer_protocol::{decode_assignment, decode_subscription};
use super::error::{
    ClientError, ClientResult, KafkaError, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
    GROUP_ID_NOT_FOUND, NONE, NOT_COORDINATOR, REBALANCE_IN_PROGRESS,
};
use super::types::{LeaderEpoch, Node, Offset, TopicPartition};

/// The protocol type of consumer groups; groups with another type (Connect, ...) are not shown.
pub const CONSUMER_PROTOCOL_TYPE: &str = "consumer";

/// One group from ListGroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    /// The group id.
    pub group_id: String,
    /// True for groups with an empty protocol type (offsets committed without a group protocol).
    pub is_simple: bool,
    /// The state the broker reported (ListGroups v4+), as the broker spelled it.
    pub state: Option<String>,
    /// The group type the broker reported (ListGroups v5+).
    pub group_type: Option<String>,
}

/// Filters for ListGroups; empty means "all".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListGroupsFilter {
    /// States to keep (sent as Kafka spells them, `Stable`, `Empty`, ...). Needs ListGroups v4.
    pub states: Vec<String>,
    /// Types to keep (`Classic`, `Consumer`). Needs ListGroups v5.
    pub types: Vec<String>,
}

/// A member of a described group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberDescription {
    /// The member id the coordinator gave it.
    pub member_id: String,
    /// The static instance id, if the member set one.
    pub group_instance_id: Option<String>,
    /// The member's client id.
    pub client_id: String,
    /// The member's host as the coordinator recorded it (Kafka: `/10.0.0.5`).
    pub host: String,
    /// Assigned partitions, in the order of the assignment bytes (empty unless Stable).
    pub assignment: Vec<TopicPartition>,
    /// Subscribed topics, when the member's metadata was present and readable.
    pub subscription: Option<Vec<String>>,
    /// The member epoch (consumer-protocol groups only).
    pub member_epoch: Option<i32>,
    /// The partitions the group's target assignment gives the member (consumer-protocol
    /// groups only).
    pub target_assignment: Option<Vec<TopicPartition>>,
    /// Whether the member speaks the consumer protocol, when the broker says (KIP-1099:
    /// ConsumerGroupDescribe v1's member type; a classic member of a mixed group is `false`).
    pub upgraded: Option<bool>,
}

/// A described consumer group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDescription {
    /// The group id.
    pub group_id: String,
    /// True when the protocol type is empty.
    pub is_simple: bool,
    /// Members in the order the coordinator listed them.
    pub members: Vec<MemberDescription>,
    /// The selected assignor (`range`, ...), empty unless the group is Stable.
    pub partition_assignor: String,
    /// The group type; DescribeGroups only describes classic groups.
    pub group_type: String,
    /// The state as the broker spelled it (`Stable`, `Empty`, `Dead`, ...).
    pub state: String,
    /// The coordinator that answered.
    pub coordinator: Node,
    /// The group epoch (consumer-protocol groups only).
    pub group_epoch: Option<i32>,
    /// The epoch of the group's target assignment (consumer-protocol groups only).
    pub target_assignment_epoch: Option<i32>,
}

/// A committed offset as OffsetFetch returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedOffset {
    /// The committed offset.
    pub offset: Offset,
    /// The leader epoch committed with it, if any.
    pub leader_epoch: Option<LeaderEpoch>,
    /// The metadata string committed with it.
    pub metadata: String,
}

/// A group's committed offsets. A partition listed without an offset (`None`) is one the broker
/// returned with offset −1, which Kafka's Admin keeps as "no committed offset".
pub type GroupOffsets = BTreeMap<TopicPartition, Option<CommittedOffset>>;

/// Outcome of OffsetDelete: the group-level error, and each partition's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteOffsetsResult {
    /// Top-level error code of the response.
    pub group_error: Option<KafkaError>,
    /// Per-partition outcome.
    pub partitions: BTreeMap<TopicPartition, Result<(), KafkaError>>,
}

impl Admin {
    /// ListGroups on every broker of the cluster, merged. Only consumer (and simple) groups are
    /// kept. Listings come in the order the brokers returned them; a group reported twice keeps
    /// the last report.
    pub async fn list_consumer_groups(
        &mut self,
        filter: &ListGroupsFilter,
    ) -> ClientResult<Vec<GroupListing>> {
        let timeout = self.call_timeout();
        Admin::deadline(
            timeout,
            "listConsumerGroups",
            self.list_groups_inner(filter),
        )
        .await
    }

    async fn list_groups_inner(
        &mut self,
        filter: &ListGroupsFilter,
    ) -> ClientResult<Vec<GroupListing>> {
        self.metadata(Some(&[])).await?;
        let nodes: Vec<Node> = self.brokers().values().cloned().collect();
        if nodes.is_empty() {
            return Err(ClientError::Config(
                "Metadata fetch failed due to missing broker list".to_string(),
            ));
        }
        let mut listings: Vec<GroupListing> = Vec::new();
        for node in nodes {
            let addr = node.address();
            let mut attempt = 0;
            let groups = loop {
                match self.list_groups_on(&addr, filter).await {
                    Ok(Ok(groups)) => break groups,
                    Ok(Err(code))
                        if code == COORDINATOR_LOAD_IN_PROGRESS
                            || code == COORDINATOR_NOT_AVAILABLE => {}
                    Ok(Err(code)) => {
                        return Err(KafkaError::with_message(
                            code,
                            Some(format!("Error listing groups on {node}")),
                        )
                        .into())
                    }
                    Err(e @ ClientError::UnsupportedVersion(_)) => return Err(e),
                    Err(e) => tracing::debug!(error = %e, %addr, "ListGroups failed; retrying"),
                }
                self.backoff(attempt).await;
                attempt += 1;
            };
            for g in groups {
                listings.retain(|l| l.group_id != g.group_id);
                listings.push(g);
            }
        }
        Ok(listings)
    }

    async fn list_groups_on(
        &mut self,
        addr: &str,
        filter: &ListGroupsFilter,
    ) -> ClientResult<Result<Vec<GroupListing>, i16>> {
        let version = self.broker_versions(addr).await?.pick(ApiKey::ListGroups)?;
        if !filter.states.is_empty() && version < 4 {
            return Err(ClientError::UnsupportedVersion(format!(
                "The broker only supports ListGroups v{version}, but we need v4 or newer to request groups by states."
            )));
        }
        if !filter.types.is_empty() && version < 5 {
            return Err(ClientError::UnsupportedVersion(format!(
                "The broker only supports ListGroups v{version}, but we need v5 or newer to request groups by type."
            )));
        }
        let mut request = ListGroupsRequest::default();
        if version >= 4 {
            request = request.with_states_filter(to_str_bytes(&filter.states));
        }
        if version >= 5 {
            request = request.with_types_filter(to_str_bytes(&filter.types));
        }
        let response = self.send_at(addr, &request, version).await?;
        if response.error_code != NONE {
            return Ok(Err(response.error_code));
        }
        Ok(Ok(response
            .groups
            .into_iter()
            .filter(|g| g.protocol_type.is_empty() || &*g.protocol_type == CONSUMER_PROTOCOL_TYPE)
            .map(|g| GroupListing {
                group_id: g.group_id.0.to_string(),
                is_simple: g.protocol_type.is_empty(),
                state: Some(g.group_state.to_string()).filter(|s| !s.is_empty()),
                group_type: Some(g.group_type.to_string()).filter(|s| !s.is_empty()),
            })
            .collect()))
    }

    /// Describes each group at its coordinator as Kafka 4.x's Admin does: ConsumerGroupDescribe
    /// first; the groups it does not know as consumer-protocol groups (GROUP_ID_NOT_FOUND, or a
    /// broker without the API) again with DescribeGroups, which describes classic groups (and
    /// unknown ones as Dead).
    pub async fn describe_consumer_groups(
        &mut self,
        groups: &[String],
    ) -> ClientResult<BTreeMap<String, ClientResult<GroupDescription>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeConsumerGroups", async {
            let mut results = self.drive_groups(&ConsumerGroupDescribeCall, groups).await;
            let classic: Vec<String> = results
                .iter()
                .filter(|(_, r)| match r {
                    Err(ClientError::Kafka(e)) => e.code == GROUP_ID_NOT_FOUND,
                    Err(ClientError::UnsupportedVersion(_)) => true,
                    _ => false,
                })
                .map(|(g, _)| g.clone())
                .collect();
            if !classic.is_empty() {
                results.extend(self.drive_groups(&DescribeGroupsCall, &classic).await);
            }
            Ok(results)
        })
        .await
    }

    /// The committed offsets of `group` (OffsetFetch for all topics).
    pub async fn list_consumer_group_offsets(&mut self, group: &str) -> ClientResult<GroupOffsets> {
        let timeout = self.call_timeout();
        let groups = [group.to_string()];
        let mut results = Admin::deadline(timeout, "listConsumerGroupOffsets", async {
            Ok(self.drive_groups(&OffsetFetchCall, &groups).await)
        })
        .await?;
        results
            .remove(group)
            .unwrap_or_else(|| Err(ClientError::Config(format!("no answer for group {group}"))))
    }

    /// Commits `offsets` for `group` as an administrator: generation −1, empty member id, which a
    /// broker accepts only while the group has no members. Returns each partition's outcome.
    pub async fn alter_consumer_group_offsets(
        &mut self,
        group: &str,
        offsets: &BTreeMap<TopicPartition, Offset>,
    ) -> ClientResult<BTreeMap<TopicPartition, Result<(), KafkaError>>> {
        let timeout = self.call_timeout();
        let call = OffsetCommitCall { offsets };
        let groups = [group.to_string()];
        let mut results = Admin::deadline(timeout, "alterConsumerGroupOffsets", async {
            Ok(self.drive_groups(&call, &groups).await)
        })
        .await?;
        results
            .remove(group)
            .unwrap_or_else(|| Err(ClientError::Config(format!("no answer for group {group}"))))
    }

    /// Deletes the committed offsets of `partitions` in `group` (OffsetDelete).
    pub async fn delete_consumer_group_offsets(
        &mut self,
        group: &str,
        partitions: &[TopicPartition],
    ) -> ClientResult<DeleteOffsetsResult> {
        let timeout = self.call_timeout();
        let call = OffsetDeleteCall { partitions };
        let groups = [group.to_string()];
        let mut results = Admin::deadline(timeout, "deleteConsumerGroupOffsets", async {
            Ok(self.drive_groups(&call, &groups).await)
        })
        .await?;
        results
            .remove(group)
            .unwrap_or_else(|| Err(ClientError::Config(format!("no answer for group {group}"))))
    }

    /// DeleteGroups for each group, at its coordinator.
    pub async fn delete_consumer_groups(
        &mut self,
        groups: &[String],
    ) -> ClientResult<BTreeMap<String, ClientResult<()>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "deleteConsumerGroups", async {
            Ok(self.drive_groups(&DeleteGroupsCall, groups).await)
        })
        .await
    }
}

fn to_str_bytes(v: &[String]) -> Vec<StrBytes> {
    v.iter().map(|s| StrBytes::from_string(s.clone())).collect()
}

fn group_ids(groups: &[String]) -> Vec<GroupId> {
    groups
        .iter()
        .map(|g| GroupId(StrBytes::from_string(g.clone())))
        .collect()
}

struct DescribeGroupsCall;

impl GroupRequest for DescribeGroupsCall {
    type Output = GroupDescription;
    type Req = DescribeGroupsRequest;
    const API: ApiKey = ApiKey::DescribeGroups;

    fn batches(&self, _version: i16) -> bool {
        true
    }

    fn build(&self, groups: &[String], _version: i16) -> ClientResult<DescribeGroupsRequest> {
        Ok(DescribeGroupsRequest::default().with_groups(group_ids(groups)))
    }

    fn handle(
        &self,
        coordinator: &Node,
        groups: &[String],
        _version: i16,
        response: DescribeGroupsResponse,
    ) -> Vec<(String, GroupOutcome<GroupDescription>)> {
        let _ = groups;
        response
            .groups
            .into_iter()
            .map(|g| {
                let id = g.group_id.0.to_string();
                if g.error_code != NONE {
                    // Kafka's Admin raises the code's default exception here, ignoring the
                    // broker's v6 error message.
                    return (id, classify_group_error(g.error_code, None));
                }
                let protocol_type = g.protocol_type.to_string();
                if !protocol_type.is_empty() && protocol_type != CONSUMER_PROTOCOL_TYPE {
                    return (
                        id.clone(),
                        GroupOutcome::Failed(ClientError::NotConsumerGroup {
                            group: id,
                            protocol_type,
                        }),
                    );
                }
                let mut members = Vec::with_capacity(g.members.len());
                for m in g.members {
                    let assignment = if m.member_assignment.is_empty() {
                        Vec::new()
                    } else {
                        match decode_assignment(&m.member_assignment) {
                            Ok(a) => a,
                            Err(e) => {
                                return (
                                    id,
                                    GroupOutcome::Failed(ClientError::Protocol {
                                        addr: String::new(),
                                        detail: format!(
                                            "assignment of member {}: {e}",
                                            m.member_id.as_str()
                                        ),
                                    }),
                                )
                            }
                        }
                    };
                    members.push(MemberDescription {
                        member_id: m.member_id.to_string(),
                        group_instance_id: m.group_instance_id.map(|s| s.to_string()),
                        client_id: m.client_id.to_string(),
                        host: m.client_host.to_string(),
                        assignment,
                        subscription: subscription_of(&m.member_metadata),
                        member_epoch: None,
                        target_assignment: None,
                        upgraded: None,
                    });
                }
                (
                    id.clone(),
                    GroupOutcome::Done(GroupDescription {
                        group_id: id,
                        is_simple: protocol_type.is_empty(),
                        members,
                        partition_assignor: g.protocol_data.to_string(),
                        group_type: "Classic".to_string(),
                        state: g.group_state.to_string(),
                        coordinator: coordinator.clone(),
                        group_epoch: None,
                        target_assignment_epoch: None,
                    }),
                )
            })
            .collect()
    }
}

struct ConsumerGroupDescribeCall;

impl GroupRequest for ConsumerGroupDescribeCall {
    type Output = GroupDescription;
    type Req = ConsumerGroupDescribeRequest;
    const API: ApiKey = ApiKey::ConsumerGroupDescribe;

    fn batches(&self, _version: i16) -> bool {
        true
    }

    fn build(
        &self,
        groups: &[String],
        _version: i16,
    ) -> ClientResult<ConsumerGroupDescribeRequest> {
        Ok(ConsumerGroupDescribeRequest::default().with_group_ids(group_ids(groups)))
    }

    fn handle(
        &self,
        coordinator: &Node,
        _groups: &[String],
        version: i16,
        response: ConsumerGroupDescribeResponse,
    ) -> Vec<(String, GroupOutcome<GroupDescription>)> {
        response
            .groups
            .into_iter()
            .map(|g| {
                let id = g.group_id.0.to_string();
                if g.error_code != NONE {
                    let message = g.error_message.map(|m| m.to_string());
                    return (id, classify_group_error(g.error_code, message));
                }
                let members = g
                    .members
                    .into_iter()
                    .map(|m| MemberDescription {
                        member_id: m.member_id.to_string(),
                        group_instance_id: m.instance_id.map(|s| s.to_string()),
                        client_id: m.client_id.to_string(),
                        host: m.client_host.to_string(),
                        assignment: partitions_of(&m.assignment),
                        subscription: Some(
                            m.subscribed_topic_names
                                .iter()
                                .map(|t| t.0.to_string())
                                .collect(),
                        ),
                        member_epoch: Some(m.member_epoch),
                        target_assignment: Some(partitions_of(&m.target_assignment)),
                        // v0 has no member type; v1's -1 means the broker does not say.
                        upgraded: match (version, m.member_type) {
                            (1.., 0) => Some(false),
                            (1.., 1) => Some(true),
                            _ => None,
                        },
                    })
                    .collect();
                (
                    id.clone(),
                    GroupOutcome::Done(GroupDescription {
                        group_id: id,
                        is_simple: false,
                        members,
                        partition_assignor: g.assignor_name.to_string(),
                        group_type: "Consumer".to_string(),
                        state: g.group_state.to_string(),
                        coordinator: coordinator.clone(),
                        group_epoch: Some(g.group_epoch),
                        target_assignment_epoch: Some(g.assignment_epoch),
                    }),
                )
            })
            .collect()
    }
}

/// A ConsumerGroupDescribe assignment as partitions, topic by topic in the broker's order.
fn partitions_of(a: &consumer_group_describe_response::Assignment) -> Vec<TopicPartition> {
    a.topic_partitions
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| TopicPartition::new(t.topic_name.0.to_string(), *p))
        })
        .collect()
}

fn subscription_of(metadata: &Bytes) -> Option<Vec<String>> {
    if metadata.is_empty() {
        None
    } else {
        decode_subscription(metadata).ok()
    }
}

struct OffsetFetchCall;

impl GroupRequest for OffsetFetchCall {
    type Output = GroupOffsets;
    type Req = OffsetFetchRequest;
    const API: ApiKey = ApiKey::OffsetFetch;

    fn batches(&self, version: i16) -> bool {
        version >= 8
    }

    fn build(&self, groups: &[String], version: i16) -> ClientResult<OffsetFetchRequest> {
        if version >= 8 {
            Ok(OffsetFetchRequest::default().with_groups(
                groups
                    .iter()
                    .map(|g| {
                        OffsetFetchRequestGroup::default()
                            .with_group_id(GroupId(StrBytes::from_string(g.clone())))
                            .with_topics(None)
                    })
                    .collect(),
            ))
        } else {
            let group = groups.first().cloned().unwrap_or_default();
            Ok(OffsetFetchRequest::default()
                .with_group_id(GroupId(StrBytes::from_string(group)))
                .with_topics(None))
        }
    }

    fn handle(
        &self,
        _coordinator: &Node,
        groups: &[String],
        version: i16,
        response: OffsetFetchResponse,
    ) -> Vec<(String, GroupOutcome<GroupOffsets>)> {
        let mut out = Vec::new();
        if version >= 8 {
            for g in response.groups {
                let id = g.group_id.0.to_string();
                if g.error_code != NONE {
                    out.push((id, classify_group_error(g.error_code, None)));
                    continue;
                }
                let mut offsets = GroupOffsets::new();
                for t in g.topics {
                    for p in t.partitions {
                        push_committed(
                            &mut offsets,
                            &t.name.0,
                            p.partition_index,
                            p.committed_offset,
                            p.committed_leader_epoch,
                            p.metadata.as_deref(),
                            p.error_code,
                        );
                    }
                }
                out.push((id, GroupOutcome::Done(offsets)));
            }
        } else if let Some(group) = groups.first() {
            if response.error_code != NONE {
                out.push((
                    group.clone(),
                    classify_group_error(response.error_code, None),
                ));
                return out;
            }
            let mut offsets = GroupOffsets::new();
            for t in response.topics {
                for p in t.partitions {
                    push_committed(
                        &mut offsets,
                        &t.name.0,
                        p.partition_index,
                        p.committed_offset,
                        p.committed_leader_epoch,
                        p.metadata.as_deref(),
                        p.error_code,
                    );
                }
            }
            out.push((group.clone(), GroupOutcome::Done(offsets)));
        }
        out
    }
}

/// Adds one OffsetFetch partition entry. Partition-level errors are skipped (Kafka's Admin logs
/// and drops them); an offset of −1 means "no committed offset".
fn push_committed(
    offsets: &mut GroupOffsets,
    topic: &str,
    partition: i32,
    offset: i64,
    leader_epoch: i32,
    metadata: Option<&str>,
    error_code: i16,
) {
    let tp = TopicPartition::new(topic, partition);
    if error_code != NONE {
        tracing::warn!(%tp, error_code, "skipping partition with an OffsetFetch error");
        return;
    }
    let value = (offset >= 0).then(|| CommittedOffset {
        offset: Offset(offset),
        leader_epoch: (leader_epoch >= 0).then_some(LeaderEpoch(leader_epoch)),
        metadata: metadata.unwrap_or_default().to_string(),
    });
    offsets.insert(tp, value);
}

struct OffsetCommitCall<'a> {
    offsets: &'a BTreeMap<TopicPartition, Offset>,
}

impl GroupRequest for OffsetCommitCall<'_> {
    type Output = BTreeMap<TopicPartition, Result<(), KafkaError>>;
    type Req = OffsetCommitRequest;
    const API: ApiKey = ApiKey::OffsetCommit;

    fn batches(&self, _version: i16) -> bool {
        false
    }

    fn build(&self, groups: &[String], version: i16) -> ClientResult<OffsetCommitRequest> {
        let group = groups.first().cloned().unwrap_or_default();
        let mut topics: Vec<OffsetCommitRequestTopic> = Vec::new();
        for (tp, offset) in self.offsets {
            let mut partition = OffsetCommitRequestPartition::default()
                .with_partition_index(tp.partition)
                .with_committed_offset(offset.0)
                .with_committed_metadata(Some(StrBytes::from_static_str("")));
            if version >= 6 {
                partition = partition.with_committed_leader_epoch(-1);
            }
            match topics.last_mut() {
                Some(t) if t.name.0.as_str() == tp.topic => t.partitions.push(partition),
                _ => topics.push(
                    OffsetCommitRequestTopic::default()
                        .with_name(TopicName(StrBytes::from_string(tp.topic.clone())))
                        .with_partitions(vec![partition]),
                ),
            }
        }
        Ok(OffsetCommitRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group)))
            .with_generation_id_or_member_epoch(-1)
            .with_member_id(StrBytes::from_static_str(""))
            .with_topics(topics))
    }

    fn handle(
        &self,
        _coordinator: &Node,
        groups: &[String],
        _version: i16,
        response: OffsetCommitResponse,
    ) -> Vec<(String, GroupOutcome<Self::Output>)> {
        let Some(group) = groups.first() else {
            return Vec::new();
        };
        let mut results = BTreeMap::new();
        let mut retry = false;
        let mut unmap = false;
        for t in response.topics {
            for p in t.partitions {
                let tp = TopicPartition::new(t.name.0.to_string(), p.partition_index);
                match p.error_code {
                    NONE => {
                        results.insert(tp, Ok(()));
                    }
                    COORDINATOR_LOAD_IN_PROGRESS | REBALANCE_IN_PROGRESS => retry = true,
                    COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR => unmap = true,
                    code => {
                        results.insert(tp, Err(KafkaError::new(code)));
                    }
                }
            }
        }
        let outcome = if unmap {
            GroupOutcome::Unmap
        } else if retry {
            GroupOutcome::Retry
        } else {
            GroupOutcome::Done(results)
        };
        vec![(group.clone(), outcome)]
    }
}

struct OffsetDeleteCall<'a> {
    partitions: &'a [TopicPartition],
}

impl GroupRequest for OffsetDeleteCall<'_> {
    type Output = DeleteOffsetsResult;
    type Req = OffsetDeleteRequest;
    const API: ApiKey = ApiKey::OffsetDelete;

    fn batches(&self, _version: i16) -> bool {
        false
    }

    fn build(&self, groups: &[String], _version: i16) -> ClientResult<OffsetDeleteRequest> {
        let group = groups.first().cloned().unwrap_or_default();
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for tp in self.partitions {
            by_topic.entry(&tp.topic).or_default().push(tp.partition);
        }
        Ok(OffsetDeleteRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group)))
            .with_topics(
                by_topic
                    .into_iter()
                    .map(|(topic, partitions)| {
                        OffsetDeleteRequestTopic::default()
                            .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                            .with_partitions(
                                partitions
                                    .into_iter()
                                    .map(|p| {
                                        OffsetDeleteRequestPartition::default()
                                            .with_partition_index(p)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            ))
    }

    fn handle(
        &self,
        _coordinator: &Node,
        groups: &[String],
        _version: i16,
        response: OffsetDeleteResponse,
    ) -> Vec<(String, GroupOutcome<DeleteOffsetsResult>)> {
        let Some(group) = groups.first() else {
            return Vec::new();
        };
        let outcome = match response.error_code {
            COORDINATOR_LOAD_IN_PROGRESS => GroupOutcome::Retry,
            COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR => GroupOutcome::Unmap,
            code => {
                let mut partitions = BTreeMap::new();
                for t in response.topics {
                    for p in t.partitions {
                        let tp = TopicPartition::new(t.name.0.to_string(), p.partition_index);
                        let r = if p.error_code == NONE {
                            Ok(())
                        } else {
                            Err(KafkaError::new(p.error_code))
                        };
                        partitions.insert(tp, r);
                    }
                }
                GroupOutcome::Done(DeleteOffsetsResult {
                    group_error: (code != NONE).then(|| KafkaError::new(code)),
                    partitions,
                })
            }
        };
        vec![(group.clone(), outcome)]
    }
}

struct DeleteGroupsCall;

impl GroupRequest for DeleteGroupsCall {
    type Output = ();
    type Req = DeleteGroupsRequest;
    const API: ApiKey = ApiKey::DeleteGroups;

    fn batches(&self, _version: i16) -> bool {
        true
    }

    fn build(&self, groups: &[String], _version: i16) -> ClientResult<DeleteGroupsRequest> {
        Ok(DeleteGroupsRequest::default().with_groups_names(group_ids(groups)))
    }

    fn handle(
        &self,
        _coordinator: &Node,
        _groups: &[String],
        _version: i16,
        response: DeleteGroupsResponse,
    ) -> Vec<(String, GroupOutcome<()>)> {
        response
            .results
            .into_iter()
            .map(|r| {
                let id = r.group_id.0.to_string();
                if r.error_code == NONE {
                    (id, GroupOutcome::Done(()))
                } else {
                    (id, classify_group_error(r.error_code, None))
                }
            })
            .collect()
    }
}
