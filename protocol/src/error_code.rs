//! Kafka's error codes as one typed enum.
//!
//! The values are part of the wire protocol (Kafka's `Errors.java`); the names follow Kafka's
//! constants in CamelCase. Handlers never write a bare `i16`: they pick a variant, so a typo
//! cannot send a client an error it does not know.

/// A Kafka protocol error code. `None` (0) is success, as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum ErrorCode {
    /// Success.
    None = 0,
    /// `UNKNOWN_SERVER_ERROR` (-1).
    UnknownServerError = -1,
    /// `OFFSET_OUT_OF_RANGE` (1).
    OffsetOutOfRange = 1,
    /// `CORRUPT_MESSAGE` (2), retriable.
    CorruptMessage = 2,
    /// `UNKNOWN_TOPIC_OR_PARTITION` (3), retriable.
    UnknownTopicOrPartition = 3,
    /// `INVALID_FETCH_SIZE` (4).
    InvalidFetchSize = 4,
    /// `LEADER_NOT_AVAILABLE` (5), retriable.
    LeaderNotAvailable = 5,
    /// `NOT_LEADER_OR_FOLLOWER` (6), retriable.
    NotLeaderOrFollower = 6,
    /// `REQUEST_TIMED_OUT` (7), retriable.
    RequestTimedOut = 7,
    /// `BROKER_NOT_AVAILABLE` (8).
    BrokerNotAvailable = 8,
    /// `REPLICA_NOT_AVAILABLE` (9), retriable.
    ReplicaNotAvailable = 9,
    /// `MESSAGE_TOO_LARGE` (10).
    MessageTooLarge = 10,
    /// `STALE_CONTROLLER_EPOCH` (11).
    StaleControllerEpoch = 11,
    /// `OFFSET_METADATA_TOO_LARGE` (12).
    OffsetMetadataTooLarge = 12,
    /// `NETWORK_EXCEPTION` (13), retriable.
    NetworkException = 13,
    /// `COORDINATOR_LOAD_IN_PROGRESS` (14), retriable.
    CoordinatorLoadInProgress = 14,
    /// `COORDINATOR_NOT_AVAILABLE` (15), retriable.
    CoordinatorNotAvailable = 15,
    /// `NOT_COORDINATOR` (16), retriable.
    NotCoordinator = 16,
    /// `INVALID_TOPIC_EXCEPTION` (17).
    InvalidTopicException = 17,
    /// `RECORD_LIST_TOO_LARGE` (18).
    RecordListTooLarge = 18,
    /// `NOT_ENOUGH_REPLICAS` (19), retriable.
    NotEnoughReplicas = 19,
    /// `NOT_ENOUGH_REPLICAS_AFTER_APPEND` (20), retriable.
    NotEnoughReplicasAfterAppend = 20,
    /// `INVALID_REQUIRED_ACKS` (21).
    InvalidRequiredAcks = 21,
    /// `ILLEGAL_GENERATION` (22).
    IllegalGeneration = 22,
    /// `INCONSISTENT_GROUP_PROTOCOL` (23).
    InconsistentGroupProtocol = 23,
    /// `INVALID_GROUP_ID` (24).
    InvalidGroupId = 24,
    /// `UNKNOWN_MEMBER_ID` (25).
    UnknownMemberId = 25,
    /// `INVALID_SESSION_TIMEOUT` (26).
    InvalidSessionTimeout = 26,
    /// `REBALANCE_IN_PROGRESS` (27).
    RebalanceInProgress = 27,
    /// `INVALID_COMMIT_OFFSET_SIZE` (28).
    InvalidCommitOffsetSize = 28,
    /// `TOPIC_AUTHORIZATION_FAILED` (29).
    TopicAuthorizationFailed = 29,
    /// `GROUP_AUTHORIZATION_FAILED` (30).
    GroupAuthorizationFailed = 30,
    /// `CLUSTER_AUTHORIZATION_FAILED` (31).
    ClusterAuthorizationFailed = 31,
    /// `INVALID_TIMESTAMP` (32).
    InvalidTimestamp = 32,
    /// `UNSUPPORTED_SASL_MECHANISM` (33).
    UnsupportedSaslMechanism = 33,
    /// `ILLEGAL_SASL_STATE` (34).
    IllegalSaslState = 34,
    /// `UNSUPPORTED_VERSION` (35).
    UnsupportedVersion = 35,
    /// `TOPIC_ALREADY_EXISTS` (36).
    TopicAlreadyExists = 36,
    /// `INVALID_PARTITIONS` (37).
    InvalidPartitions = 37,
    /// `INVALID_REPLICATION_FACTOR` (38).
    InvalidReplicationFactor = 38,
    /// `INVALID_REPLICA_ASSIGNMENT` (39).
    InvalidReplicaAssignment = 39,
    /// `INVALID_CONFIG` (40).
    InvalidConfig = 40,
    /// `NOT_CONTROLLER` (41), retriable.
    NotController = 41,
    /// `INVALID_REQUEST` (42).
    InvalidRequest = 42,
    /// `UNSUPPORTED_FOR_MESSAGE_FORMAT` (43).
    UnsupportedForMessageFormat = 43,
    /// `POLICY_VIOLATION` (44).
    PolicyViolation = 44,
    /// `OUT_OF_ORDER_SEQUENCE_NUMBER` (45).
    OutOfOrderSequenceNumber = 45,
    /// `DUPLICATE_SEQUENCE_NUMBER` (46).
    DuplicateSequenceNumber = 46,
    /// `INVALID_PRODUCER_EPOCH` (47).
    InvalidProducerEpoch = 47,
    /// `INVALID_TXN_STATE` (48).
    InvalidTxnState = 48,
    /// `INVALID_PRODUCER_ID_MAPPING` (49).
    InvalidProducerIdMapping = 49,
    /// `INVALID_TRANSACTION_TIMEOUT` (50).
    InvalidTransactionTimeout = 50,
    /// `CONCURRENT_TRANSACTIONS` (51).
    ConcurrentTransactions = 51,
    /// `TRANSACTION_COORDINATOR_FENCED` (52).
    TransactionCoordinatorFenced = 52,
    /// `TRANSACTIONAL_ID_AUTHORIZATION_FAILED` (53).
    TransactionalIdAuthorizationFailed = 53,
    /// `SECURITY_DISABLED` (54).
    SecurityDisabled = 54,
    /// `OPERATION_NOT_ATTEMPTED` (55).
    OperationNotAttempted = 55,
    /// `KAFKA_STORAGE_ERROR` (56), retriable.
    KafkaStorageError = 56,
    /// `LOG_DIR_NOT_FOUND` (57).
    LogDirNotFound = 57,
    /// `SASL_AUTHENTICATION_FAILED` (58).
    SaslAuthenticationFailed = 58,
    /// `UNKNOWN_PRODUCER_ID` (59).
    UnknownProducerId = 59,
    /// `REASSIGNMENT_IN_PROGRESS` (60).
    ReassignmentInProgress = 60,
    /// `DELEGATION_TOKEN_AUTH_DISABLED` (61).
    DelegationTokenAuthDisabled = 61,
    /// `DELEGATION_TOKEN_NOT_FOUND` (62).
    DelegationTokenNotFound = 62,
    /// `DELEGATION_TOKEN_OWNER_MISMATCH` (63).
    DelegationTokenOwnerMismatch = 63,
    /// `DELEGATION_TOKEN_REQUEST_NOT_ALLOWED` (64).
    DelegationTokenRequestNotAllowed = 64,
    /// `DELEGATION_TOKEN_AUTHORIZATION_FAILED` (65).
    DelegationTokenAuthorizationFailed = 65,
    /// `DELEGATION_TOKEN_EXPIRED` (66).
    DelegationTokenExpired = 66,
    /// `INVALID_PRINCIPAL_TYPE` (67).
    InvalidPrincipalType = 67,
    /// `NON_EMPTY_GROUP` (68).
    NonEmptyGroup = 68,
    /// `GROUP_ID_NOT_FOUND` (69).
    GroupIdNotFound = 69,
    /// `FETCH_SESSION_ID_NOT_FOUND` (70), retriable.
    FetchSessionIdNotFound = 70,
    /// `INVALID_FETCH_SESSION_EPOCH` (71), retriable.
    InvalidFetchSessionEpoch = 71,
    /// `LISTENER_NOT_FOUND` (72), retriable.
    ListenerNotFound = 72,
    /// `TOPIC_DELETION_DISABLED` (73).
    TopicDeletionDisabled = 73,
    /// `FENCED_LEADER_EPOCH` (74), retriable.
    FencedLeaderEpoch = 74,
    /// `UNKNOWN_LEADER_EPOCH` (75), retriable.
    UnknownLeaderEpoch = 75,
    /// `UNSUPPORTED_COMPRESSION_TYPE` (76).
    UnsupportedCompressionType = 76,
    /// `STALE_BROKER_EPOCH` (77).
    StaleBrokerEpoch = 77,
    /// `OFFSET_NOT_AVAILABLE` (78), retriable.
    OffsetNotAvailable = 78,
    /// `MEMBER_ID_REQUIRED` (79).
    MemberIdRequired = 79,
    /// `PREFERRED_LEADER_NOT_AVAILABLE` (80), retriable.
    PreferredLeaderNotAvailable = 80,
    /// `GROUP_MAX_SIZE_REACHED` (81).
    GroupMaxSizeReached = 81,
    /// `FENCED_INSTANCE_ID` (82).
    FencedInstanceId = 82,
    /// `ELIGIBLE_LEADERS_NOT_AVAILABLE` (83), retriable.
    EligibleLeadersNotAvailable = 83,
    /// `ELECTION_NOT_NEEDED` (84), retriable.
    ElectionNotNeeded = 84,
    /// `NO_REASSIGNMENT_IN_PROGRESS` (85).
    NoReassignmentInProgress = 85,
    /// `GROUP_SUBSCRIBED_TO_TOPIC` (86).
    GroupSubscribedToTopic = 86,
    /// `INVALID_RECORD` (87).
    InvalidRecord = 87,
    /// `UNSTABLE_OFFSET_COMMIT` (88), retriable.
    UnstableOffsetCommit = 88,
    /// `THROTTLING_QUOTA_EXCEEDED` (89), retriable.
    ThrottlingQuotaExceeded = 89,
    /// `PRODUCER_FENCED` (90).
    ProducerFenced = 90,
    /// `RESOURCE_NOT_FOUND` (91).
    ResourceNotFound = 91,
    /// `DUPLICATE_RESOURCE` (92).
    DuplicateResource = 92,
    /// `UNACCEPTABLE_CREDENTIAL` (93).
    UnacceptableCredential = 93,
    /// `INCONSISTENT_VOTER_SET` (94).
    InconsistentVoterSet = 94,
    /// `INVALID_UPDATE_VERSION` (95).
    InvalidUpdateVersion = 95,
    /// `FEATURE_UPDATE_FAILED` (96).
    FeatureUpdateFailed = 96,
    /// `PRINCIPAL_DESERIALIZATION_FAILURE` (97).
    PrincipalDeserializationFailure = 97,
    /// `SNAPSHOT_NOT_FOUND` (98).
    SnapshotNotFound = 98,
    /// `POSITION_OUT_OF_RANGE` (99).
    PositionOutOfRange = 99,
    /// `UNKNOWN_TOPIC_ID` (100), retriable.
    UnknownTopicId = 100,
    /// `DUPLICATE_BROKER_REGISTRATION` (101).
    DuplicateBrokerRegistration = 101,
    /// `BROKER_ID_NOT_REGISTERED` (102).
    BrokerIdNotRegistered = 102,
    /// `INCONSISTENT_TOPIC_ID` (103), retriable.
    InconsistentTopicId = 103,
    /// `INCONSISTENT_CLUSTER_ID` (104).
    InconsistentClusterId = 104,
    /// `TRANSACTIONAL_ID_NOT_FOUND` (105).
    TransactionalIdNotFound = 105,
    /// `FETCH_SESSION_TOPIC_ID_ERROR` (106), retriable.
    FetchSessionTopicIdError = 106,
    /// `INELIGIBLE_REPLICA` (107).
    IneligibleReplica = 107,
    /// `NEW_LEADER_ELECTED` (108).
    NewLeaderElected = 108,
    /// `OFFSET_MOVED_TO_TIERED_STORAGE` (109).
    OffsetMovedToTieredStorage = 109,
    /// `FENCED_MEMBER_EPOCH` (110).
    FencedMemberEpoch = 110,
    /// `UNRELEASED_INSTANCE_ID` (111).
    UnreleasedInstanceId = 111,
    /// `UNSUPPORTED_ASSIGNOR` (112).
    UnsupportedAssignor = 112,
    /// `STALE_MEMBER_EPOCH` (113).
    StaleMemberEpoch = 113,
    /// `MISMATCHED_ENDPOINT_TYPE` (114).
    MismatchedEndpointType = 114,
    /// `UNSUPPORTED_ENDPOINT_TYPE` (115).
    UnsupportedEndpointType = 115,
    /// `UNKNOWN_CONTROLLER_ID` (116).
    UnknownControllerId = 116,
    /// `UNKNOWN_SUBSCRIPTION_ID` (117).
    UnknownSubscriptionId = 117,
    /// `TELEMETRY_TOO_LARGE` (118).
    TelemetryTooLarge = 118,
    /// `INVALID_REGISTRATION` (119).
    InvalidRegistration = 119,
    /// `TRANSACTION_ABORTABLE` (120).
    TransactionAbortable = 120,
    /// `INVALID_RECORD_STATE` (121).
    InvalidRecordState = 121,
    /// `SHARE_SESSION_NOT_FOUND` (122), retriable.
    ShareSessionNotFound = 122,
    /// `INVALID_SHARE_SESSION_EPOCH` (123), retriable.
    InvalidShareSessionEpoch = 123,
    /// `FENCED_STATE_EPOCH` (124).
    FencedStateEpoch = 124,
    /// `INVALID_VOTER_KEY` (125).
    InvalidVoterKey = 125,
    /// `DUPLICATE_VOTER` (126).
    DuplicateVoter = 126,
    /// `VOTER_NOT_FOUND` (127).
    VoterNotFound = 127,
    /// `INVALID_REGULAR_EXPRESSION` (128).
    InvalidRegularExpression = 128,
    /// `REBOOTSTRAP_REQUIRED` (129).
    RebootstrapRequired = 129,
    /// `STREAMS_INVALID_TOPOLOGY` (130).
    StreamsInvalidTopology = 130,
    /// `STREAMS_INVALID_TOPOLOGY_EPOCH` (131).
    StreamsInvalidTopologyEpoch = 131,
    /// `STREAMS_TOPOLOGY_FENCED` (132).
    StreamsTopologyFenced = 132,
    /// `SHARE_SESSION_LIMIT_REACHED` (133), retriable.
    ShareSessionLimitReached = 133,
}

/// `(variant, Kafka constant name, retriable)`: the one table every lookup reads.
const TABLE: &[(ErrorCode, &str, bool)] = &[
    (ErrorCode::None, "NONE", false),
    (ErrorCode::UnknownServerError, "UNKNOWN_SERVER_ERROR", false),
    (ErrorCode::OffsetOutOfRange, "OFFSET_OUT_OF_RANGE", false),
    (ErrorCode::CorruptMessage, "CORRUPT_MESSAGE", true),
    (
        ErrorCode::UnknownTopicOrPartition,
        "UNKNOWN_TOPIC_OR_PARTITION",
        true,
    ),
    (ErrorCode::InvalidFetchSize, "INVALID_FETCH_SIZE", false),
    (ErrorCode::LeaderNotAvailable, "LEADER_NOT_AVAILABLE", true),
    (
        ErrorCode::NotLeaderOrFollower,
        "NOT_LEADER_OR_FOLLOWER",
        true,
    ),
    (ErrorCode::RequestTimedOut, "REQUEST_TIMED_OUT", true),
    (ErrorCode::BrokerNotAvailable, "BROKER_NOT_AVAILABLE", false),
    (
        ErrorCode::ReplicaNotAvailable,
        "REPLICA_NOT_AVAILABLE",
        true,
    ),
    (ErrorCode::MessageTooLarge, "MESSAGE_TOO_LARGE", false),
    (
        ErrorCode::StaleControllerEpoch,
        "STALE_CONTROLLER_EPOCH",
        false,
    ),
    (
        ErrorCode::OffsetMetadataTooLarge,
        "OFFSET_METADATA_TOO_LARGE",
        false,
    ),
    (ErrorCode::NetworkException, "NETWORK_EXCEPTION", true),
    (
        ErrorCode::CoordinatorLoadInProgress,
        "COORDINATOR_LOAD_IN_PROGRESS",
        true,
    ),
    (
        ErrorCode::CoordinatorNotAvailable,
        "COORDINATOR_NOT_AVAILABLE",
        true,
    ),
    (ErrorCode::NotCoordinator, "NOT_COORDINATOR", true),
    (
        ErrorCode::InvalidTopicException,
        "INVALID_TOPIC_EXCEPTION",
        false,
    ),
    (
        ErrorCode::RecordListTooLarge,
        "RECORD_LIST_TOO_LARGE",
        false,
    ),
    (ErrorCode::NotEnoughReplicas, "NOT_ENOUGH_REPLICAS", true),
    (
        ErrorCode::NotEnoughReplicasAfterAppend,
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        true,
    ),
    (
        ErrorCode::InvalidRequiredAcks,
        "INVALID_REQUIRED_ACKS",
        false,
    ),
    (ErrorCode::IllegalGeneration, "ILLEGAL_GENERATION", false),
    (
        ErrorCode::InconsistentGroupProtocol,
        "INCONSISTENT_GROUP_PROTOCOL",
        false,
    ),
    (ErrorCode::InvalidGroupId, "INVALID_GROUP_ID", false),
    (ErrorCode::UnknownMemberId, "UNKNOWN_MEMBER_ID", false),
    (
        ErrorCode::InvalidSessionTimeout,
        "INVALID_SESSION_TIMEOUT",
        false,
    ),
    (
        ErrorCode::RebalanceInProgress,
        "REBALANCE_IN_PROGRESS",
        false,
    ),
    (
        ErrorCode::InvalidCommitOffsetSize,
        "INVALID_COMMIT_OFFSET_SIZE",
        false,
    ),
    (
        ErrorCode::TopicAuthorizationFailed,
        "TOPIC_AUTHORIZATION_FAILED",
        false,
    ),
    (
        ErrorCode::GroupAuthorizationFailed,
        "GROUP_AUTHORIZATION_FAILED",
        false,
    ),
    (
        ErrorCode::ClusterAuthorizationFailed,
        "CLUSTER_AUTHORIZATION_FAILED",
        false,
    ),
    (ErrorCode::InvalidTimestamp, "INVALID_TIMESTAMP", false),
    (
        ErrorCode::UnsupportedSaslMechanism,
        "UNSUPPORTED_SASL_MECHANISM",
        false,
    ),
    (ErrorCode::IllegalSaslState, "ILLEGAL_SASL_STATE", false),
    (ErrorCode::UnsupportedVersion, "UNSUPPORTED_VERSION", false),
    (ErrorCode::TopicAlreadyExists, "TOPIC_ALREADY_EXISTS", false),
    (ErrorCode::InvalidPartitions, "INVALID_PARTITIONS", false),
    (
        ErrorCode::InvalidReplicationFactor,
        "INVALID_REPLICATION_FACTOR",
        false,
    ),
    (
        ErrorCode::InvalidReplicaAssignment,
        "INVALID_REPLICA_ASSIGNMENT",
        false,
    ),
    (ErrorCode::InvalidConfig, "INVALID_CONFIG", false),
    (ErrorCode::NotController, "NOT_CONTROLLER", true),
    (ErrorCode::InvalidRequest, "INVALID_REQUEST", false),
    (
        ErrorCode::UnsupportedForMessageFormat,
        "UNSUPPORTED_FOR_MESSAGE_FORMAT",
        false,
    ),
    (ErrorCode::PolicyViolation, "POLICY_VIOLATION", false),
    (
        ErrorCode::OutOfOrderSequenceNumber,
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
        false,
    ),
    (
        ErrorCode::DuplicateSequenceNumber,
        "DUPLICATE_SEQUENCE_NUMBER",
        false,
    ),
    (
        ErrorCode::InvalidProducerEpoch,
        "INVALID_PRODUCER_EPOCH",
        false,
    ),
    (ErrorCode::InvalidTxnState, "INVALID_TXN_STATE", false),
    (
        ErrorCode::InvalidProducerIdMapping,
        "INVALID_PRODUCER_ID_MAPPING",
        false,
    ),
    (
        ErrorCode::InvalidTransactionTimeout,
        "INVALID_TRANSACTION_TIMEOUT",
        false,
    ),
    (
        ErrorCode::ConcurrentTransactions,
        "CONCURRENT_TRANSACTIONS",
        false,
    ),
    (
        ErrorCode::TransactionCoordinatorFenced,
        "TRANSACTION_COORDINATOR_FENCED",
        false,
    ),
    (
        ErrorCode::TransactionalIdAuthorizationFailed,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        false,
    ),
    (ErrorCode::SecurityDisabled, "SECURITY_DISABLED", false),
    (
        ErrorCode::OperationNotAttempted,
        "OPERATION_NOT_ATTEMPTED",
        false,
    ),
    (ErrorCode::KafkaStorageError, "KAFKA_STORAGE_ERROR", true),
    (ErrorCode::LogDirNotFound, "LOG_DIR_NOT_FOUND", false),
    (
        ErrorCode::SaslAuthenticationFailed,
        "SASL_AUTHENTICATION_FAILED",
        false,
    ),
    (ErrorCode::UnknownProducerId, "UNKNOWN_PRODUCER_ID", false),
    (
        ErrorCode::ReassignmentInProgress,
        "REASSIGNMENT_IN_PROGRESS",
        false,
    ),
    (
        ErrorCode::DelegationTokenAuthDisabled,
        "DELEGATION_TOKEN_AUTH_DISABLED",
        false,
    ),
    (
        ErrorCode::DelegationTokenNotFound,
        "DELEGATION_TOKEN_NOT_FOUND",
        false,
    ),
    (
        ErrorCode::DelegationTokenOwnerMismatch,
        "DELEGATION_TOKEN_OWNER_MISMATCH",
        false,
    ),
    (
        ErrorCode::DelegationTokenRequestNotAllowed,
        "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
        false,
    ),
    (
        ErrorCode::DelegationTokenAuthorizationFailed,
        "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
        false,
    ),
    (
        ErrorCode::DelegationTokenExpired,
        "DELEGATION_TOKEN_EXPIRED",
        false,
    ),
    (
        ErrorCode::InvalidPrincipalType,
        "INVALID_PRINCIPAL_TYPE",
        false,
    ),
    (ErrorCode::NonEmptyGroup, "NON_EMPTY_GROUP", false),
    (ErrorCode::GroupIdNotFound, "GROUP_ID_NOT_FOUND", false),
    (
        ErrorCode::FetchSessionIdNotFound,
        "FETCH_SESSION_ID_NOT_FOUND",
        true,
    ),
    (
        ErrorCode::InvalidFetchSessionEpoch,
        "INVALID_FETCH_SESSION_EPOCH",
        true,
    ),
    (ErrorCode::ListenerNotFound, "LISTENER_NOT_FOUND", true),
    (
        ErrorCode::TopicDeletionDisabled,
        "TOPIC_DELETION_DISABLED",
        false,
    ),
    (ErrorCode::FencedLeaderEpoch, "FENCED_LEADER_EPOCH", true),
    (ErrorCode::UnknownLeaderEpoch, "UNKNOWN_LEADER_EPOCH", true),
    (
        ErrorCode::UnsupportedCompressionType,
        "UNSUPPORTED_COMPRESSION_TYPE",
        false,
    ),
    (ErrorCode::StaleBrokerEpoch, "STALE_BROKER_EPOCH", false),
    (ErrorCode::OffsetNotAvailable, "OFFSET_NOT_AVAILABLE", true),
    (ErrorCode::MemberIdRequired, "MEMBER_ID_REQUIRED", false),
    (
        ErrorCode::PreferredLeaderNotAvailable,
        "PREFERRED_LEADER_NOT_AVAILABLE",
        true,
    ),
    (
        ErrorCode::GroupMaxSizeReached,
        "GROUP_MAX_SIZE_REACHED",
        false,
    ),
    (ErrorCode::FencedInstanceId, "FENCED_INSTANCE_ID", false),
    (
        ErrorCode::EligibleLeadersNotAvailable,
        "ELIGIBLE_LEADERS_NOT_AVAILABLE",
        true,
    ),
    (ErrorCode::ElectionNotNeeded, "ELECTION_NOT_NEEDED", true),
    (
        ErrorCode::NoReassignmentInProgress,
        "NO_REASSIGNMENT_IN_PROGRESS",
        false,
    ),
    (
        ErrorCode::GroupSubscribedToTopic,
        "GROUP_SUBSCRIBED_TO_TOPIC",
        false,
    ),
    (ErrorCode::InvalidRecord, "INVALID_RECORD", false),
    (
        ErrorCode::UnstableOffsetCommit,
        "UNSTABLE_OFFSET_COMMIT",
        true,
    ),
    (
        ErrorCode::ThrottlingQuotaExceeded,
        "THROTTLING_QUOTA_EXCEEDED",
        true,
    ),
    (ErrorCode::ProducerFenced, "PRODUCER_FENCED", false),
    (ErrorCode::ResourceNotFound, "RESOURCE_NOT_FOUND", false),
    (ErrorCode::DuplicateResource, "DUPLICATE_RESOURCE", false),
    (
        ErrorCode::UnacceptableCredential,
        "UNACCEPTABLE_CREDENTIAL",
        false,
    ),
    (
        ErrorCode::InconsistentVoterSet,
        "INCONSISTENT_VOTER_SET",
        false,
    ),
    (
        ErrorCode::InvalidUpdateVersion,
        "INVALID_UPDATE_VERSION",
        false,
    ),
    (
        ErrorCode::FeatureUpdateFailed,
        "FEATURE_UPDATE_FAILED",
        false,
    ),
    (
        ErrorCode::PrincipalDeserializationFailure,
        "PRINCIPAL_DESERIALIZATION_FAILURE",
        false,
    ),
    (ErrorCode::SnapshotNotFound, "SNAPSHOT_NOT_FOUND", false),
    (
        ErrorCode::PositionOutOfRange,
        "POSITION_OUT_OF_RANGE",
        false,
    ),
    (ErrorCode::UnknownTopicId, "UNKNOWN_TOPIC_ID", true),
    (
        ErrorCode::DuplicateBrokerRegistration,
        "DUPLICATE_BROKER_REGISTRATION",
        false,
    ),
    (
        ErrorCode::BrokerIdNotRegistered,
        "BROKER_ID_NOT_REGISTERED",
        false,
    ),
    (
        ErrorCode::InconsistentTopicId,
        "INCONSISTENT_TOPIC_ID",
        true,
    ),
    (
        ErrorCode::InconsistentClusterId,
        "INCONSISTENT_CLUSTER_ID",
        false,
    ),
    (
        ErrorCode::TransactionalIdNotFound,
        "TRANSACTIONAL_ID_NOT_FOUND",
        false,
    ),
    (
        ErrorCode::FetchSessionTopicIdError,
        "FETCH_SESSION_TOPIC_ID_ERROR",
        true,
    ),
    (ErrorCode::IneligibleReplica, "INELIGIBLE_REPLICA", false),
    (ErrorCode::NewLeaderElected, "NEW_LEADER_ELECTED", false),
    (
        ErrorCode::OffsetMovedToTieredStorage,
        "OFFSET_MOVED_TO_TIERED_STORAGE",
        false,
    ),
    (ErrorCode::FencedMemberEpoch, "FENCED_MEMBER_EPOCH", false),
    (
        ErrorCode::UnreleasedInstanceId,
        "UNRELEASED_INSTANCE_ID",
        false,
    ),
    (
        ErrorCode::UnsupportedAssignor,
        "UNSUPPORTED_ASSIGNOR",
        false,
    ),
    (ErrorCode::StaleMemberEpoch, "STALE_MEMBER_EPOCH", false),
    (
        ErrorCode::MismatchedEndpointType,
        "MISMATCHED_ENDPOINT_TYPE",
        false,
    ),
    (
        ErrorCode::UnsupportedEndpointType,
        "UNSUPPORTED_ENDPOINT_TYPE",
        false,
    ),
    (
        ErrorCode::UnknownControllerId,
        "UNKNOWN_CONTROLLER_ID",
        false,
    ),
    (
        ErrorCode::UnknownSubscriptionId,
        "UNKNOWN_SUBSCRIPTION_ID",
        false,
    ),
    (ErrorCode::TelemetryTooLarge, "TELEMETRY_TOO_LARGE", false),
    (
        ErrorCode::InvalidRegistration,
        "INVALID_REGISTRATION",
        false,
    ),
    (
        ErrorCode::TransactionAbortable,
        "TRANSACTION_ABORTABLE",
        false,
    ),
    (ErrorCode::InvalidRecordState, "INVALID_RECORD_STATE", false),
    (
        ErrorCode::ShareSessionNotFound,
        "SHARE_SESSION_NOT_FOUND",
        true,
    ),
    (
        ErrorCode::InvalidShareSessionEpoch,
        "INVALID_SHARE_SESSION_EPOCH",
        true,
    ),
    (ErrorCode::FencedStateEpoch, "FENCED_STATE_EPOCH", false),
    (ErrorCode::InvalidVoterKey, "INVALID_VOTER_KEY", false),
    (ErrorCode::DuplicateVoter, "DUPLICATE_VOTER", false),
    (ErrorCode::VoterNotFound, "VOTER_NOT_FOUND", false),
    (
        ErrorCode::InvalidRegularExpression,
        "INVALID_REGULAR_EXPRESSION",
        false,
    ),
    (
        ErrorCode::RebootstrapRequired,
        "REBOOTSTRAP_REQUIRED",
        false,
    ),
    (
        ErrorCode::StreamsInvalidTopology,
        "STREAMS_INVALID_TOPOLOGY",
        false,
    ),
    (
        ErrorCode::StreamsInvalidTopologyEpoch,
        "STREAMS_INVALID_TOPOLOGY_EPOCH",
        false,
    ),
    (
        ErrorCode::StreamsTopologyFenced,
        "STREAMS_TOPOLOGY_FENCED",
        false,
    ),
    (
        ErrorCode::ShareSessionLimitReached,
        "SHARE_SESSION_LIMIT_REACHED",
        true,
    ),
];

impl ErrorCode {
    /// The value sent on the wire.
    pub const fn code(self) -> i16 {
        self as i16
    }

    /// The variant for a wire value, or `None` for a code this table does not know.
    pub fn from_code(code: i16) -> Option<ErrorCode> {
        TABLE
            .iter()
            .find(|(e, _, _)| e.code() == code)
            .map(|(e, _, _)| *e)
    }

    /// Kafka's constant name (`UNKNOWN_TOPIC_OR_PARTITION`), for log lines.
    pub fn name(self) -> &'static str {
        TABLE
            .iter()
            .find(|(e, _, _)| *e == self)
            .map_or("UNKNOWN", |(_, n, _)| n)
    }

    /// Whether Kafka marks the error retriable (clients retry these on their own).
    pub fn is_retriable(self) -> bool {
        TABLE.iter().any(|(e, _, r)| *e == self && *r)
    }

    /// True for success.
    pub const fn is_none(self) -> bool {
        matches!(self, ErrorCode::None)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_wire_value() {
        for (e, _, _) in TABLE {
            assert_eq!(ErrorCode::from_code(e.code()), Some(*e));
        }
        assert_eq!(ErrorCode::from_code(12345), None);
    }

    #[test]
    fn values_match_the_kafka_protocol_crate() {
        use kafka_protocol::error::ResponseError;
        for (e, _, retriable) in TABLE.iter().skip(1) {
            let theirs = ResponseError::try_from_code(e.code());
            assert!(matches!(theirs, Some(r) if r.code() == e.code()), "{e:?}");
            assert_eq!(theirs.map(|r| r.is_retriable()), Some(*retriable), "{e:?}");
        }
    }

    #[test]
    fn codes_the_front_end_relies_on_have_kafkas_values() {
        assert_eq!(ErrorCode::OffsetOutOfRange.code(), 1);
        assert_eq!(ErrorCode::CorruptMessage.code(), 2);
        assert_eq!(ErrorCode::UnknownTopicOrPartition.code(), 3);
        assert_eq!(ErrorCode::UnsupportedVersion.code(), 35);
        assert_eq!(ErrorCode::TopicAlreadyExists.code(), 36);
        assert_eq!(ErrorCode::InvalidReplicationFactor.code(), 38);
        assert_eq!(ErrorCode::OutOfOrderSequenceNumber.code(), 45);
        assert_eq!(ErrorCode::DuplicateSequenceNumber.code(), 46);
        assert_eq!(ErrorCode::UnknownServerError.code(), -1);
        assert_eq!(ErrorCode::UnsupportedVersion.name(), "UNSUPPORTED_VERSION");
        assert!(ErrorCode::NotCoordinator.is_retriable());
    }
}
