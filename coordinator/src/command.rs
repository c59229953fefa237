//! Commands: what the binary translates Kafka requests into.
//!
//! [`WriteCommand`]s change hard state: the leader stamps them (`now_ms`, and the `nonce` a
//! JoinGroup may need to mint a member id), replicates them through Raft, and every replica
//! applies them with `decide` then `replay`. [`ReadCommand`]s are answered by the leader
//! alone from applied state and are never replicated. The split is in the types, so a read
//! cannot be replicated by mistake nor a write answered without replication.

use crate::ids::{
    ApiVersion, Generation, GroupId, GroupInstanceId, LeaderEpoch, MemberId, Offset,
    PartitionIndex, ProducerEpoch, ProducerId, TimestampMs, TopicId, TopicName, TransactionalId,
};
use crate::record::assignment::Assignment;
use crate::timer::TimerKey;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// A command that mutates replicated state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteCommand {
    JoinGroup(JoinGroup),
    SyncGroup(SyncGroup),
    LeaveGroup(LeaveGroup),
    CommitOffsets(CommitOffsets),
    DeleteOffsets(DeleteOffsets),
    DeleteGroups(DeleteGroups),
    /// A timer the leader armed (from a `TimerOp::Set`) has fired. `decide` re-checks it
    /// against state: a stale or irrelevant firing is a no-op.
    TimerFired {
        key: TimerKey,
        now_ms: TimestampMs,
    },
    /// KIP-211 offset retention: tombstone expired offsets, delete Empty groups left without
    /// offsets. Same effect as `TimerFired { key: TimerKey::OffsetsRetention }`.
    ExpireOffsets {
        now_ms: TimestampMs,
    },
    /// Topics were deleted: drop every group's offsets for them (Kafka's
    /// `onPartitionsDeleted`).
    TopicsDeleted {
        topics: Vec<TopicName>,
        now_ms: TimestampMs,
    },
    // Variants below are appended, never inserted: logged commands name variants by index.
    /// ConsumerGroupHeartbeat v0–v1 (KIP-848) that changes state. A heartbeat that changes
    /// nothing is answered by `CoordinatorState::consumer_heartbeat` without replication.
    ConsumerGroupHeartbeat(ConsumerGroupHeartbeat),
    /// A target assignment computed off the request path for `epoch`; applied only if the
    /// group is still at that epoch and the assignment fits the group and the topics.
    InstallTargetAssignment(InstallTargetAssignment),
    /// Topics were created, grew or were deleted, as the replicated topic table applied it:
    /// the coordinator's topic image follows, offsets of deleted topics go, and every consumer
    /// group subscribed to a changed topic gets a new group epoch.
    TopicsChanged(TopicsChanged),
    /// InitProducerId with a transactional id (KIP-98, KIP-360).
    InitTransactionalProducer(InitTransactionalProducer),
    /// AddPartitionsToTxn v0–v3 (the client's form).
    AddPartitionsToTxn(AddPartitionsToTxn),
    /// AddOffsetsToTxn v0–v4.
    AddOffsetsToTxn(AddOffsetsToTxn),
    /// EndTxn v0–v3 (transactions v1).
    EndTxn(EndTxn),
    /// The leader wrote every data-partition marker of a prepared transaction: complete it
    /// (pending offsets applied on commit, dropped on abort). A stale one is a no-op.
    TxnMarkersWritten(TxnMarkersWritten),
    /// TxnOffsetCommit v0–v4.
    TxnOffsetCommit(TxnOffsetCommit),
}

impl WriteCommand {
    /// The leader's time stamped on the command.
    pub fn now_ms(&self) -> TimestampMs {
        match self {
            WriteCommand::JoinGroup(c) => c.now_ms,
            WriteCommand::SyncGroup(c) => c.now_ms,
            WriteCommand::LeaveGroup(c) => c.now_ms,
            WriteCommand::CommitOffsets(c) => c.now_ms,
            WriteCommand::DeleteOffsets(c) => c.now_ms,
            WriteCommand::DeleteGroups(c) => c.now_ms,
            WriteCommand::TimerFired { now_ms, .. }
            | WriteCommand::ExpireOffsets { now_ms }
            | WriteCommand::TopicsDeleted { now_ms, .. } => *now_ms,
            WriteCommand::ConsumerGroupHeartbeat(c) => c.now_ms,
            WriteCommand::InstallTargetAssignment(c) => c.now_ms,
            WriteCommand::TopicsChanged(c) => c.now_ms,
            WriteCommand::InitTransactionalProducer(c) => c.now_ms,
            WriteCommand::AddPartitionsToTxn(c) => c.producer.now_ms,
            WriteCommand::AddOffsetsToTxn(c) => c.producer.now_ms,
            WriteCommand::EndTxn(c) => c.producer.now_ms,
            WriteCommand::TxnMarkersWritten(c) => c.producer.now_ms,
            WriteCommand::TxnOffsetCommit(c) => c.producer.now_ms,
        }
    }
}

impl WriteCommand {
    /// The one group this command is about, for routing it to the group's shard; `None` for
    /// commands that span groups (DeleteGroups with several ids, expiry, topic deletion, the
    /// retention timer), which go to every shard (DeleteGroups: split by group).
    pub fn group_id(&self) -> Option<&GroupId> {
        match self {
            WriteCommand::JoinGroup(c) => Some(&c.group_id),
            WriteCommand::SyncGroup(c) => Some(&c.group_id),
            WriteCommand::LeaveGroup(c) => Some(&c.group_id),
            WriteCommand::CommitOffsets(c) => Some(&c.group_id),
            WriteCommand::DeleteOffsets(c) => Some(&c.group_id),
            WriteCommand::DeleteGroups(c) => match c.group_ids.as_slice() {
                [one] => Some(one),
                _ => None,
            },
            WriteCommand::TimerFired { key, .. } => key.group_id(),
            WriteCommand::ExpireOffsets { .. } | WriteCommand::TopicsDeleted { .. } => None,
            WriteCommand::ConsumerGroupHeartbeat(c) => Some(&c.group_id),
            WriteCommand::InstallTargetAssignment(c) => Some(&c.group_id),
            WriteCommand::TopicsChanged(_) => None,
            WriteCommand::TxnOffsetCommit(c) => Some(&c.group_id),
            // Transaction state is keyed by transactional id, not by group.
            WriteCommand::InitTransactionalProducer(_)
            | WriteCommand::AddPartitionsToTxn(_)
            | WriteCommand::AddOffsetsToTxn(_)
            | WriteCommand::EndTxn(_)
            | WriteCommand::TxnMarkersWritten(_) => None,
        }
    }
}

/// A command answered from applied state by the leader alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReadCommand {
    Heartbeat(Heartbeat),
    FetchOffsets(FetchOffsets),
    DescribeGroups(DescribeGroups),
    ListGroups(ListGroups),
    /// ConsumerGroupDescribe v0–v1.
    DescribeConsumerGroups(DescribeConsumerGroups),
}

/// One protocol a joining member supports (for consumers: an assignor name and the
/// ConsumerProtocol subscription bytes), in the member's order of preference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinProtocol {
    pub name: String,
    pub metadata: Bytes,
}

/// JoinGroup v0–v9.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinGroup {
    pub api_version: ApiVersion,
    pub now_ms: TimestampMs,
    /// Randomness drawn by the leader, used to mint a member id (`<client id>-<uuid>`), so
    /// that every replica mints the same one.
    pub nonce: u128,
    pub group_id: GroupId,
    /// Empty for a member that does not have an id yet.
    pub member_id: MemberId,
    /// v5+ static membership.
    pub group_instance_id: Option<GroupInstanceId>,
    pub session_timeout_ms: i32,
    /// v1+; the binary passes `session_timeout_ms` for v0, as Kafka does.
    pub rebalance_timeout_ms: i32,
    pub protocol_type: String,
    pub protocols: Vec<JoinProtocol>,
    /// From the request header.
    pub client_id: String,
    /// The client's address as the connection saw it (Kafka shows `/10.0.0.5`).
    pub client_host: String,
    /// v8+ reason, kept for logs only.
    pub reason: Option<String>,
}

/// One member's assignment in the leader's SyncGroup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncAssignment {
    pub member_id: MemberId,
    pub assignment: Bytes,
}

/// SyncGroup v0–v5.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncGroup {
    pub api_version: ApiVersion,
    pub now_ms: TimestampMs,
    pub group_id: GroupId,
    pub generation: Generation,
    pub member_id: MemberId,
    pub group_instance_id: Option<GroupInstanceId>,
    /// v5+: checked against the group's.
    pub protocol_type: Option<String>,
    /// v5+: checked against the group's.
    pub protocol_name: Option<String>,
    /// Non-empty only from the leader.
    pub assignments: Vec<SyncAssignment>,
}

/// Heartbeat v0–v4 (read-only: re-arms the member's session timer, writes nothing).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    pub api_version: ApiVersion,
    pub now_ms: TimestampMs,
    pub group_id: GroupId,
    pub generation: Generation,
    pub member_id: MemberId,
    pub group_instance_id: Option<GroupInstanceId>,
}

/// One member leaving (v3+ batches them; v0–v2 carry exactly one, with no instance id).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeavingMember {
    /// Empty with an instance id: an admin removing a static member by instance id.
    pub member_id: MemberId,
    pub group_instance_id: Option<GroupInstanceId>,
    /// v5+, kept for logs only.
    pub reason: Option<String>,
}

/// LeaveGroup v0–v5.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaveGroup {
    pub api_version: ApiVersion,
    pub now_ms: TimestampMs,
    pub group_id: GroupId,
    pub members: Vec<LeavingMember>,
}

/// One partition of an OffsetCommit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitPartition {
    pub partition: PartitionIndex,
    pub offset: Offset,
    /// v6+; −1 otherwise.
    pub leader_epoch: LeaderEpoch,
    /// Null on the wire is `None` and is stored as "".
    pub metadata: Option<String>,
    /// Whether the binary's topic catalog knows this topic and partition. `false` answers
    /// UNKNOWN_TOPIC_OR_PARTITION and stores nothing, whatever the group checks say (Kafka
    /// checks this in KafkaApis before the coordinator).
    pub partition_known: bool,
}

/// One topic of an OffsetCommit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitTopic {
    pub name: TopicName,
    pub partitions: Vec<CommitPartition>,
}

/// OffsetCommit v2–v9.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitOffsets {
    pub api_version: ApiVersion,
    pub now_ms: TimestampMs,
    pub group_id: GroupId,
    /// −1 for admin / simple-consumer commits.
    pub generation: Generation,
    /// Empty for admin / simple-consumer commits.
    pub member_id: MemberId,
    /// v7+.
    pub group_instance_id: Option<GroupInstanceId>,
    /// v2–v4 `RetentionTimeMs`; −1 (the default) means "use the broker's retention".
    pub retention_time_ms: i64,
    pub topics: Vec<CommitTopic>,
}

/// One topic of an OffsetFetch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchTopic {
    pub name: TopicName,
    pub partitions: Vec<PartitionIndex>,
}

/// One group of an OffsetFetch (v8+ batches groups; earlier versions carry one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchGroup {
    pub group_id: GroupId,
    /// `None`: every committed partition of the group (v2+).
    pub topics: Option<Vec<FetchTopic>>,
    /// v9 KIP-848 member fields; classic groups ignore them, as Kafka does.
    pub member_id: Option<MemberId>,
    pub member_epoch: i32,
}

/// OffsetFetch v1–v9.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchOffsets {
    pub api_version: ApiVersion,
    pub groups: Vec<FetchGroup>,
    /// v7+ KIP-447: a partition with a transaction's uncompleted offset answers
    /// UNSTABLE_OFFSET_COMMIT instead of its committed offset.
    pub require_stable: bool,
}

/// One topic of an OffsetDelete.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteTopic {
    pub name: TopicName,
    pub partitions: Vec<PartitionIndex>,
    /// Whether the binary's topic catalog knows this topic; `false` answers
    /// UNKNOWN_TOPIC_OR_PARTITION for each partition.
    pub topic_known: bool,
}

/// OffsetDelete v0.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteOffsets {
    pub api_version: ApiVersion,
    pub now_ms: TimestampMs,
    pub group_id: GroupId,
    pub topics: Vec<DeleteTopic>,
}

/// DeleteGroups v0–v2.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteGroups {
    pub api_version: ApiVersion,
    pub now_ms: TimestampMs,
    pub group_ids: Vec<GroupId>,
}

/// DescribeGroups v0–v6.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescribeGroups {
    pub api_version: ApiVersion,
    pub group_ids: Vec<GroupId>,
}

/// ListGroups v0–v5.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListGroups {
    pub api_version: ApiVersion,
    /// v4+; empty = no filter; compared case-insensitively.
    pub states_filter: Vec<String>,
    /// v5+; empty = no filter; compared case-insensitively (`classic`, `consumer`).
    pub types_filter: Vec<String>,
}

/// ConsumerGroupHeartbeat v0–v1 (KIP-848). Optional fields are deltas: `None` (null on the
/// wire, −1 for the rebalance timeout) means "unchanged since the last heartbeat".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerGroupHeartbeat {
    pub api_version: ApiVersion,
    pub now_ms: TimestampMs,
    /// Randomness drawn by the leader: a v0 member joining with an empty member id gets the
    /// UUID minted from it (v1+ members generate their own id, KIP-1082).
    pub nonce: u128,
    pub group_id: GroupId,
    pub member_id: MemberId,
    /// 0 to join, −1 to leave, −2 for a static member's temporary leave.
    pub member_epoch: i32,
    pub instance_id: Option<GroupInstanceId>,
    pub rack_id: Option<String>,
    /// −1: unchanged.
    pub rebalance_timeout_ms: i32,
    pub subscribed_topic_names: Option<Vec<TopicName>>,
    /// v1+.
    pub subscribed_topic_regex: Option<String>,
    pub server_assignor: Option<String>,
    /// The partitions the member owns, as it reports them.
    pub owned_partitions: Option<Vec<OwnedTopicPartitions>>,
    /// From the request header.
    pub client_id: String,
    /// The client's address as the connection saw it (Kafka shows `/10.0.0.5`).
    pub client_host: String,
}

/// One topic of a heartbeat's `TopicPartitions`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnedTopicPartitions {
    pub topic_id: TopicId,
    pub partitions: Vec<PartitionIndex>,
}

/// The result of an assignor run the runtime made off the request path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallTargetAssignment {
    pub now_ms: TimestampMs,
    pub group_id: GroupId,
    /// The group epoch the run was computed for.
    pub epoch: i32,
    pub members: Vec<(MemberId, Assignment)>,
}

/// A topic as the replicated topic table holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicMetadata {
    pub name: TopicName,
    pub id: TopicId,
    pub partitions: i32,
}

/// Topics created or grown (`upserted`: their full new metadata) and deleted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicsChanged {
    pub now_ms: TimestampMs,
    pub upserted: Vec<TopicMetadata>,
    pub deleted: Vec<TopicName>,
}

/// ConsumerGroupDescribe v0–v1.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescribeConsumerGroups {
    pub api_version: ApiVersion,
    pub group_ids: Vec<GroupId>,
}

/// InitProducerId with a transactional id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InitTransactionalProducer {
    pub now_ms: TimestampMs,
    pub transactional_id: TransactionalId,
    /// The producer's `transaction.timeout.ms`.
    pub timeout_ms: i32,
    /// v3+ (KIP-360): the id and epoch the producer had, to bump instead of fencing it;
    /// `None` when it sent −1/−1.
    pub expected: Option<(ProducerId, ProducerEpoch)>,
    /// A producer id the leader allocated before submitting, used if the transactional id is
    /// new or its epochs are exhausted (every replica then picks the same one).
    pub fresh_producer_id: ProducerId,
}

/// The producer identity every transactional request carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnProducer {
    pub api_version: ApiVersion,
    pub now_ms: TimestampMs,
    pub transactional_id: TransactionalId,
    pub producer_id: ProducerId,
    pub producer_epoch: ProducerEpoch,
}

/// One partition of an AddPartitionsToTxn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnPartition {
    pub partition: PartitionIndex,
    /// Whether the binary's topic catalog knows the topic and partition (Kafka checks it in
    /// KafkaApis before the coordinator).
    pub partition_known: bool,
}

/// One topic of an AddPartitionsToTxn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnTopic {
    pub name: TopicName,
    pub partitions: Vec<TxnPartition>,
}

/// AddPartitionsToTxn v0–v3.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddPartitionsToTxn {
    pub producer: TxnProducer,
    pub topics: Vec<TxnTopic>,
}

/// AddOffsetsToTxn v0–v4.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddOffsetsToTxn {
    pub producer: TxnProducer,
    pub group_id: GroupId,
}

/// EndTxn v0–v3.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndTxn {
    pub producer: TxnProducer,
    /// COMMIT (true) or ABORT.
    pub commit: bool,
}

/// Every marker of a prepared transaction is written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnMarkersWritten {
    pub producer: TxnProducer,
    pub commit: bool,
}

/// TxnOffsetCommit v0–v4: the group's offsets inside the producer's transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnOffsetCommit {
    pub producer: TxnProducer,
    pub group_id: GroupId,
    /// v3+ (KIP-447): the consumer's generation (or member epoch), member id and instance
    /// id, fencing a zombie's commits; −1 / "" / `None` below v3.
    pub generation: Generation,
    pub member_id: MemberId,
    pub group_instance_id: Option<GroupInstanceId>,
    pub topics: Vec<CommitTopic>,
}
