//! Replies: domain answers, not Kafka wire types. The binary maps [`ErrorKind`] to Kafka error
//! codes in its one table (the Kafka name is on each variant) and fills wire fields the domain
//! does not own (throttle time, authorized operations...).

use crate::ids::{Generation, GroupId, GroupInstanceId, LeaderEpoch, MemberId, Offset};
use crate::ids::{PartitionIndex, ProducerEpoch, ProducerId, TopicId, TopicName};
use crate::record::assignment::Assignment;
use crate::record::group_metadata::GroupState;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// Every error the coordinator answers with. Each maps to exactly one Kafka error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ErrorKind {
    /// COORDINATOR_NOT_AVAILABLE (15): retriable; also our answer when a group's pending-member
    /// limit is reached or a minted member id collides.
    CoordinatorNotAvailable,
    /// ILLEGAL_GENERATION (22)
    IllegalGeneration,
    /// INCONSISTENT_GROUP_PROTOCOL (23)
    InconsistentGroupProtocol,
    /// INVALID_GROUP_ID (24)
    InvalidGroupId,
    /// UNKNOWN_MEMBER_ID (25)
    UnknownMemberId,
    /// INVALID_SESSION_TIMEOUT (26)
    InvalidSessionTimeout,
    /// REBALANCE_IN_PROGRESS (27)
    RebalanceInProgress,
    /// OFFSET_METADATA_TOO_LARGE (12)
    OffsetMetadataTooLarge,
    /// UNKNOWN_TOPIC_OR_PARTITION (3)
    UnknownTopicOrPartition,
    /// INVALID_REQUEST (42): an input over one of Cohort's limits.
    InvalidRequest,
    /// NON_EMPTY_GROUP (68)
    NonEmptyGroup,
    /// GROUP_ID_NOT_FOUND (69)
    GroupIdNotFound,
    /// MEMBER_ID_REQUIRED (79): the JoinGroup reply carries the minted member id.
    MemberIdRequired,
    /// FENCED_INSTANCE_ID (82)
    FencedInstanceId,
    /// GROUP_MAX_SIZE_REACHED (81)
    GroupMaxSizeReached,
    /// GROUP_SUBSCRIBED_TO_TOPIC (86)
    GroupSubscribedToTopic,
    /// UNSUPPORTED_VERSION (35): a consumer-protocol member committing with OffsetCommit < v9.
    UnsupportedVersion,
    /// FENCED_MEMBER_EPOCH (110)
    FencedMemberEpoch,
    /// UNRELEASED_INSTANCE_ID (111)
    UnreleasedInstanceId,
    /// UNSUPPORTED_ASSIGNOR (112)
    UnsupportedAssignor,
    /// STALE_MEMBER_EPOCH (113)
    StaleMemberEpoch,
    /// INVALID_REGULAR_EXPRESSION (128)
    InvalidRegularExpression,
    /// POLICY_VIOLATION (44): the request would create a group past `Config::groups_max`.
    /// Non-retriable in every client, so it reaches the application instead of being retried
    /// in silence (decision 0113).
    GroupsMaxReached,
    /// POLICY_VIOLATION (44): the commit would give the group an offset past
    /// `Config::offsets_per_group_max`.
    OffsetsPerGroupMaxReached,
    /// INVALID_PRODUCER_EPOCH (47): a transactional request from an epoch older than the
    /// current one, on API versions that predate PRODUCER_FENCED (the binary converts).
    InvalidProducerEpoch,
    /// INVALID_TXN_STATE (48): the request does not fit the transaction's state.
    InvalidTxnState,
    /// INVALID_PRODUCER_ID_MAPPING (49): no such transactional id, or another producer id.
    InvalidProducerIdMapping,
    /// INVALID_TRANSACTION_TIMEOUT (50): not in 1..=`transaction.max.timeout.ms`.
    InvalidTransactionTimeout,
    /// CONCURRENT_TRANSACTIONS (51): retriable; the previous transaction is completing.
    ConcurrentTransactions,
    /// OPERATION_NOT_ATTEMPTED (55): AddPartitionsToTxn's answer for the valid partitions of a
    /// request that also named an unknown one.
    OperationNotAttempted,
    /// UNSTABLE_OFFSET_COMMIT (88): OffsetFetch with `require_stable` while a transaction has
    /// an uncompleted offset for the partition.
    UnstableOffsetCommit,
    /// PRODUCER_FENCED (90): a newer producer with the same transactional id exists.
    ProducerFenced,
    /// POLICY_VIOLATION (44): a new transactional id past `Config::transactions_max`.
    TransactionsMaxReached,
    /// POLICY_VIOLATION (44): a transaction past `Config::transaction_partitions_max`
    /// partitions or groups.
    TransactionPartitionsMaxReached,
}

/// Which kind of parked request a member reply completes. A member has at most one parked
/// request of each kind; a newer one supersedes an older one (the runtime may answer the
/// superseded request or drop it: its client has given up on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ParkedKind {
    Join,
    Sync,
}

/// The answer to a request, or to a parked request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    /// The request waits; its answer will be a member reply for `(group, member, kind)`.
    Parked {
        group_id: GroupId,
        member_id: MemberId,
        kind: ParkedKind,
    },
    Join(JoinResponse),
    Sync(SyncResponse),
    Heartbeat(Result<(), ErrorKind>),
    Leave(LeaveResponse),
    Commit(CommitResponse),
    Fetch(FetchResponse),
    DeleteOffsets(DeleteOffsetsResponse),
    DeleteGroups(Vec<(GroupId, Result<(), ErrorKind>)>),
    DescribeGroups(Vec<DescribedGroup>),
    ListGroups(Vec<ListedGroup>),
    /// For commands no client waits on (timers, expiry).
    Done,
    ConsumerGroupHeartbeat(ConsumerHeartbeatResponse),
    DescribeConsumerGroups(Vec<DescribedConsumerGroup>),
    /// InitProducerId with a transactional id: the producer's id and epoch.
    InitProducer(Result<(ProducerId, ProducerEpoch), ErrorKind>),
    /// AddPartitionsToTxn: per partition, in request order.
    AddPartitionsToTxn(TopicResults),
    /// AddOffsetsToTxn, EndTxn and the marker completion.
    Txn(Result<(), ErrorKind>),
}

/// ConsumerGroupHeartbeat response. On error only `error`, `error_message` and, where Kafka
/// sets them, `member_id`/`member_epoch` are meaningful.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsumerHeartbeatResponse {
    pub error: Option<ErrorKind>,
    /// Kafka's message for the error (the wire's `ErrorMessage`).
    pub error_message: Option<String>,
    pub member_id: Option<MemberId>,
    pub member_epoch: i32,
    pub heartbeat_interval_ms: i32,
    /// `None`: unchanged since the last heartbeat (null on the wire).
    pub assignment: Option<Assignment>,
}

impl ConsumerHeartbeatResponse {
    pub(crate) fn error(error: ErrorKind, message: impl Into<String>) -> ConsumerHeartbeatResponse {
        ConsumerHeartbeatResponse {
            error: Some(error),
            error_message: Some(message.into()),
            member_id: None,
            member_epoch: 0,
            heartbeat_interval_ms: 0,
            assignment: None,
        }
    }
}

/// A consumer group's state, spelled as Kafka spells it (`ConsumerGroupState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ConsumerGroupState {
    Empty,
    /// The group epoch is ahead of the target assignment.
    Assigning,
    /// Some member has not reached the target assignment yet.
    Reconciling,
    Stable,
    /// Unknown group (ConsumerGroupDescribe answers GROUP_ID_NOT_FOUND).
    Dead,
}

impl ConsumerGroupState {
    pub fn as_str(self) -> &'static str {
        match self {
            ConsumerGroupState::Empty => "Empty",
            ConsumerGroupState::Assigning => "Assigning",
            ConsumerGroupState::Reconciling => "Reconciling",
            ConsumerGroupState::Stable => "Stable",
            ConsumerGroupState::Dead => "Dead",
        }
    }
}

/// One topic of an assignment with its name, for describing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DescribedTopicPartitions {
    pub topic_id: TopicId,
    /// "" when the topic no longer exists.
    pub topic_name: String,
    pub partitions: Vec<PartitionIndex>,
}

/// A member in ConsumerGroupDescribe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DescribedConsumerMember {
    pub member_id: MemberId,
    pub instance_id: Option<GroupInstanceId>,
    pub rack_id: Option<String>,
    pub member_epoch: i32,
    pub client_id: String,
    pub client_host: String,
    pub subscribed_topic_names: Vec<TopicName>,
    pub subscribed_topic_regex: Option<String>,
    pub assignment: Vec<DescribedTopicPartitions>,
    pub target_assignment: Vec<DescribedTopicPartitions>,
    /// v1 `MemberType`: whether it speaks the classic protocol (always false until online
    /// migration lands).
    pub uses_classic_protocol: bool,
}

/// One group in ConsumerGroupDescribe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DescribedConsumerGroup {
    pub group_id: GroupId,
    pub error: Option<ErrorKind>,
    pub error_message: Option<String>,
    pub state: ConsumerGroupState,
    pub group_epoch: i32,
    pub assignment_epoch: i32,
    pub assignor_name: String,
    pub members: Vec<DescribedConsumerMember>,
}

/// A member as the group leader sees it in its JoinGroup response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JoinResponseMember {
    pub member_id: MemberId,
    pub group_instance_id: Option<GroupInstanceId>,
    /// The member's metadata for the selected protocol.
    pub metadata: Bytes,
}

/// JoinGroup response. On error only `error` and `member_id` are meaningful (the minted id
/// for MEMBER_ID_REQUIRED, the request's or "" otherwise, as Kafka answers).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JoinResponse {
    pub error: Option<ErrorKind>,
    pub generation: Generation,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    /// The leader's member id; "" when none.
    pub leader: MemberId,
    pub member_id: MemberId,
    /// Non-empty only for the leader.
    pub members: Vec<JoinResponseMember>,
    /// v9: the leader of a Stable group that a static member rejoined need not assign.
    pub skip_assignment: bool,
}

impl JoinResponse {
    pub(crate) fn error(error: ErrorKind, member_id: MemberId) -> JoinResponse {
        JoinResponse {
            error: Some(error),
            generation: Generation::NONE,
            protocol_type: None,
            protocol_name: None,
            leader: MemberId::default(),
            member_id,
            members: Vec::new(),
            skip_assignment: false,
        }
    }
}

/// SyncGroup response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyncResponse {
    pub error: Option<ErrorKind>,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub assignment: Bytes,
}

impl SyncResponse {
    pub(crate) fn error(error: ErrorKind) -> SyncResponse {
        SyncResponse {
            error: Some(error),
            protocol_type: None,
            protocol_name: None,
            assignment: Bytes::new(),
        }
    }
}

/// LeaveGroup response. For v0–v2 (one member, no per-member array) the binary answers
/// [`LeaveResponse::single_error`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaveResponse {
    pub error: Option<ErrorKind>,
    pub members: Vec<LeaveMemberResult>,
}

impl LeaveResponse {
    /// The top-level error for v0–v2: the group error, else the only member's error.
    pub fn single_error(&self) -> Option<ErrorKind> {
        self.error
            .or_else(|| self.members.first().and_then(|m| m.error))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaveMemberResult {
    pub member_id: MemberId,
    pub group_instance_id: Option<GroupInstanceId>,
    pub error: Option<ErrorKind>,
}

/// Per-partition outcomes of one topic.
pub type PartitionResults = Vec<(PartitionIndex, Option<ErrorKind>)>;
/// Per-topic outcomes, in request order.
pub type TopicResults = Vec<(TopicName, PartitionResults)>;

/// OffsetCommit response: OffsetCommit has no top-level error, group errors are repeated in
/// every partition, as Kafka does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommitResponse {
    pub topics: TopicResults,
}

/// One partition of an OffsetFetch answer. Without a committed offset: offset −1,
/// leader epoch −1, metadata "".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchedPartition {
    pub partition: PartitionIndex,
    pub offset: Offset,
    pub leader_epoch: LeaderEpoch,
    pub metadata: String,
    pub error: Option<ErrorKind>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchedTopic {
    pub name: TopicName,
    pub partitions: Vec<FetchedPartition>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchedGroup {
    pub group_id: GroupId,
    pub error: Option<ErrorKind>,
    pub topics: Vec<FetchedTopic>,
}

/// OffsetFetch response: one entry per requested group (v0–v7 have exactly one; the binary
/// puts its error at top level).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchResponse {
    pub groups: Vec<FetchedGroup>,
}

/// OffsetDelete response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeleteOffsetsResponse {
    pub error: Option<ErrorKind>,
    pub topics: TopicResults,
}

/// A member in DescribeGroups. Metadata and assignment are filled only when the group is
/// Stable, as Kafka does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DescribedMember {
    pub member_id: MemberId,
    pub group_instance_id: Option<GroupInstanceId>,
    pub client_id: String,
    pub client_host: String,
    pub metadata: Bytes,
    pub assignment: Bytes,
}

/// One group in DescribeGroups. An unknown group is `Dead` with empty fields and no error up
/// to v5, GROUP_ID_NOT_FOUND from v6.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DescribedGroup {
    pub group_id: GroupId,
    pub error: Option<ErrorKind>,
    pub state: GroupState,
    pub protocol_type: String,
    /// The selected protocol, only when Stable.
    pub protocol_data: String,
    pub members: Vec<DescribedMember>,
}

/// One group in ListGroups.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListedGroup {
    pub group_id: GroupId,
    /// "" for simple (offset-only) groups.
    pub protocol_type: String,
    /// For a consumer-protocol group, the classic state closest to its own (`Empty` or
    /// `Stable`); `state_name` is what Kafka lists.
    pub state: GroupState,
    /// Kafka's state string: a classic state's, or a consumer group's (`Assigning`...).
    pub state_name: String,
    /// "classic" or "consumer" (ListGroups v5 `GroupType`).
    pub group_type: String,
}
