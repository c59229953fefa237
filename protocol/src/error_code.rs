//! Kafka's error codes as one typed enum and one table, broker and client alike.
//!
//! The values are part of the wire protocol (Kafka's `Errors.java`); the names follow Kafka's
//! constants in CamelCase. Handlers never write a bare `i16`: they pick a variant, so a typo
//! cannot send a client an error it does not know. The enum and its table are generated from
//! one list below, so a code cannot exist without its name, retriability, Java exception and
//! default message (what `cohort groups` prints, the way Kafka's tools print the exception).

/// One error as Kafka defines it.
struct Row {
    code: ErrorCode,
    /// The constant's name in Kafka's `Errors.java`.
    name: &'static str,
    /// Kafka marks it retriable (a `RetriableException`).
    retriable: bool,
    /// The fully qualified Java exception Kafka's clients raise for it; empty for `NONE`.
    exception: &'static str,
    /// That exception's default message; empty for `NONE`.
    message: &'static str,
}

macro_rules! error_codes {
    ($($variant:ident = $code:literal, $name:literal, $retriable:literal, $exception:literal, $message:literal;)*) => {
        /// A Kafka protocol error code. `None` (0) is success, as on the wire.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(i16)]
        pub enum ErrorCode {
            $(
                #[doc = concat!("`", $name, "` (", stringify!($code), ").")]
                #[doc = ""]
                #[doc = $message]
                $variant = $code,
            )*
        }

        /// Every code, in code order: what every lookup reads.
        const TABLE: &[Row] = &[
            $(Row {
                code: ErrorCode::$variant,
                name: $name,
                retriable: $retriable,
                exception: $exception,
                message: $message,
            },)*
        ];
    };
}

// Kafka 4.0's `Errors.java`: variant = code, constant name, retriable, exception, message.
error_codes! {
    None = 0, "NONE", false,
        "",
        "";
    UnknownServerError = -1, "UNKNOWN_SERVER_ERROR", false,
        "org.apache.kafka.common.errors.UnknownServerException",
        "The server experienced an unexpected error when processing the request.";
    OffsetOutOfRange = 1, "OFFSET_OUT_OF_RANGE", false,
        "org.apache.kafka.common.errors.OffsetOutOfRangeException",
        "The requested offset is not within the range of offsets maintained by the server.";
    CorruptMessage = 2, "CORRUPT_MESSAGE", true,
        "org.apache.kafka.common.errors.CorruptRecordException",
        "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt.";
    UnknownTopicOrPartition = 3, "UNKNOWN_TOPIC_OR_PARTITION", true,
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException",
        "This server does not host this topic-partition.";
    InvalidFetchSize = 4, "INVALID_FETCH_SIZE", false,
        "org.apache.kafka.common.errors.InvalidFetchSizeException",
        "The requested fetch size is invalid.";
    LeaderNotAvailable = 5, "LEADER_NOT_AVAILABLE", true,
        "org.apache.kafka.common.errors.LeaderNotAvailableException",
        "There is no leader for this topic-partition as we are in the middle of a leadership election.";
    NotLeaderOrFollower = 6, "NOT_LEADER_OR_FOLLOWER", true,
        "org.apache.kafka.common.errors.NotLeaderOrFollowerException",
        "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.";
    RequestTimedOut = 7, "REQUEST_TIMED_OUT", true,
        "org.apache.kafka.common.errors.TimeoutException",
        "The request timed out.";
    BrokerNotAvailable = 8, "BROKER_NOT_AVAILABLE", false,
        "org.apache.kafka.common.errors.BrokerNotAvailableException",
        "The broker is not available.";
    ReplicaNotAvailable = 9, "REPLICA_NOT_AVAILABLE", true,
        "org.apache.kafka.common.errors.ReplicaNotAvailableException",
        "The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition.";
    MessageTooLarge = 10, "MESSAGE_TOO_LARGE", false,
        "org.apache.kafka.common.errors.RecordTooLargeException",
        "The request included a message larger than the max message size the server will accept.";
    StaleControllerEpoch = 11, "STALE_CONTROLLER_EPOCH", false,
        "org.apache.kafka.common.errors.ControllerMovedException",
        "The controller moved to another broker.";
    OffsetMetadataTooLarge = 12, "OFFSET_METADATA_TOO_LARGE", false,
        "org.apache.kafka.common.errors.OffsetMetadataTooLarge",
        "The metadata field of the offset request was too large.";
    NetworkException = 13, "NETWORK_EXCEPTION", true,
        "org.apache.kafka.common.errors.NetworkException",
        "The server disconnected before a response was received.";
    CoordinatorLoadInProgress = 14, "COORDINATOR_LOAD_IN_PROGRESS", true,
        "org.apache.kafka.common.errors.CoordinatorLoadInProgressException",
        "The coordinator is loading and hence can't process requests.";
    CoordinatorNotAvailable = 15, "COORDINATOR_NOT_AVAILABLE", true,
        "org.apache.kafka.common.errors.CoordinatorNotAvailableException",
        "The coordinator is not available.";
    NotCoordinator = 16, "NOT_COORDINATOR", true,
        "org.apache.kafka.common.errors.NotCoordinatorException",
        "This is not the correct coordinator.";
    InvalidTopicException = 17, "INVALID_TOPIC_EXCEPTION", false,
        "org.apache.kafka.common.errors.InvalidTopicException",
        "The request attempted to perform an operation on an invalid topic.";
    RecordListTooLarge = 18, "RECORD_LIST_TOO_LARGE", false,
        "org.apache.kafka.common.errors.RecordBatchTooLargeException",
        "The request included message batch larger than the configured segment size on the server.";
    NotEnoughReplicas = 19, "NOT_ENOUGH_REPLICAS", true,
        "org.apache.kafka.common.errors.NotEnoughReplicasException",
        "Messages are rejected since there are fewer in-sync replicas than required.";
    NotEnoughReplicasAfterAppend = 20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true,
        "org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException",
        "Messages are written to the log, but to fewer in-sync replicas than required.";
    InvalidRequiredAcks = 21, "INVALID_REQUIRED_ACKS", false,
        "org.apache.kafka.common.errors.InvalidRequiredAcksException",
        "Produce request specified an invalid value for required acks.";
    IllegalGeneration = 22, "ILLEGAL_GENERATION", false,
        "org.apache.kafka.common.errors.IllegalGenerationException",
        "Specified group generation id is not valid.";
    InconsistentGroupProtocol = 23, "INCONSISTENT_GROUP_PROTOCOL", false,
        "org.apache.kafka.common.errors.InconsistentGroupProtocolException",
        "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list.";
    InvalidGroupId = 24, "INVALID_GROUP_ID", false,
        "org.apache.kafka.common.errors.InvalidGroupIdException",
        "The configured groupId is invalid.";
    UnknownMemberId = 25, "UNKNOWN_MEMBER_ID", false,
        "org.apache.kafka.common.errors.UnknownMemberIdException",
        "The coordinator is not aware of this member.";
    InvalidSessionTimeout = 26, "INVALID_SESSION_TIMEOUT", false,
        "org.apache.kafka.common.errors.InvalidSessionTimeoutException",
        "The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms).";
    RebalanceInProgress = 27, "REBALANCE_IN_PROGRESS", false,
        "org.apache.kafka.common.errors.RebalanceInProgressException",
        "The group is rebalancing, so a rejoin is needed.";
    InvalidCommitOffsetSize = 28, "INVALID_COMMIT_OFFSET_SIZE", false,
        "org.apache.kafka.common.errors.InvalidCommitOffsetSizeException",
        "The committing offset data size is not valid.";
    TopicAuthorizationFailed = 29, "TOPIC_AUTHORIZATION_FAILED", false,
        "org.apache.kafka.common.errors.TopicAuthorizationException",
        "Topic authorization failed.";
    GroupAuthorizationFailed = 30, "GROUP_AUTHORIZATION_FAILED", false,
        "org.apache.kafka.common.errors.GroupAuthorizationException",
        "Group authorization failed.";
    ClusterAuthorizationFailed = 31, "CLUSTER_AUTHORIZATION_FAILED", false,
        "org.apache.kafka.common.errors.ClusterAuthorizationException",
        "Cluster authorization failed.";
    InvalidTimestamp = 32, "INVALID_TIMESTAMP", false,
        "org.apache.kafka.common.errors.InvalidTimestampException",
        "The timestamp of the message is out of acceptable range.";
    UnsupportedSaslMechanism = 33, "UNSUPPORTED_SASL_MECHANISM", false,
        "org.apache.kafka.common.errors.UnsupportedSaslMechanismException",
        "The broker does not support the requested SASL mechanism.";
    IllegalSaslState = 34, "ILLEGAL_SASL_STATE", false,
        "org.apache.kafka.common.errors.IllegalSaslStateException",
        "Request is not valid given the current SASL state.";
    UnsupportedVersion = 35, "UNSUPPORTED_VERSION", false,
        "org.apache.kafka.common.errors.UnsupportedVersionException",
        "The version of API is not supported.";
    TopicAlreadyExists = 36, "TOPIC_ALREADY_EXISTS", false,
        "org.apache.kafka.common.errors.TopicExistsException",
        "Topic with this name already exists.";
    InvalidPartitions = 37, "INVALID_PARTITIONS", false,
        "org.apache.kafka.common.errors.InvalidPartitionsException",
        "Number of partitions is below 1.";
    InvalidReplicationFactor = 38, "INVALID_REPLICATION_FACTOR", false,
        "org.apache.kafka.common.errors.InvalidReplicationFactorException",
        "Replication factor is below 1 or larger than the number of available brokers.";
    InvalidReplicaAssignment = 39, "INVALID_REPLICA_ASSIGNMENT", false,
        "org.apache.kafka.common.errors.InvalidReplicaAssignmentException",
        "Replica assignment is invalid.";
    InvalidConfig = 40, "INVALID_CONFIG", false,
        "org.apache.kafka.common.errors.InvalidConfigurationException",
        "Configuration is invalid.";
    NotController = 41, "NOT_CONTROLLER", true,
        "org.apache.kafka.common.errors.NotControllerException",
        "This is not the correct controller for this cluster.";
    InvalidRequest = 42, "INVALID_REQUEST", false,
        "org.apache.kafka.common.errors.InvalidRequestException",
        "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.";
    UnsupportedForMessageFormat = 43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", false,
        "org.apache.kafka.common.errors.UnsupportedForMessageFormatException",
        "The message format version on the broker does not support the request.";
    PolicyViolation = 44, "POLICY_VIOLATION", false,
        "org.apache.kafka.common.errors.PolicyViolationException",
        "Request parameters do not satisfy the configured policy.";
    OutOfOrderSequenceNumber = 45, "OUT_OF_ORDER_SEQUENCE_NUMBER", false,
        "org.apache.kafka.common.errors.OutOfOrderSequenceException",
        "The broker received an out of order sequence number.";
    DuplicateSequenceNumber = 46, "DUPLICATE_SEQUENCE_NUMBER", false,
        "org.apache.kafka.common.errors.DuplicateSequenceException",
        "The broker received a duplicate sequence number.";
    InvalidProducerEpoch = 47, "INVALID_PRODUCER_EPOCH", false,
        "org.apache.kafka.common.errors.InvalidProducerEpochException",
        "Producer attempted to produce with an old epoch.";
    InvalidTxnState = 48, "INVALID_TXN_STATE", false,
        "org.apache.kafka.common.errors.InvalidTxnStateException",
        "The producer attempted a transactional operation in an invalid state.";
    InvalidProducerIdMapping = 49, "INVALID_PRODUCER_ID_MAPPING", false,
        "org.apache.kafka.common.errors.InvalidPidMappingException",
        "The producer attempted to use a producer id which is not currently assigned to its transactional id.";
    InvalidTransactionTimeout = 50, "INVALID_TRANSACTION_TIMEOUT", false,
        "org.apache.kafka.common.errors.InvalidTxnTimeoutException",
        "The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms).";
    ConcurrentTransactions = 51, "CONCURRENT_TRANSACTIONS", false,
        "org.apache.kafka.common.errors.ConcurrentTransactionsException",
        "The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing.";
    TransactionCoordinatorFenced = 52, "TRANSACTION_COORDINATOR_FENCED", false,
        "org.apache.kafka.common.errors.TransactionCoordinatorFencedException",
        "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer.";
    TransactionalIdAuthorizationFailed = 53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", false,
        "org.apache.kafka.common.errors.TransactionalIdAuthorizationException",
        "Transactional Id authorization failed.";
    SecurityDisabled = 54, "SECURITY_DISABLED", false,
        "org.apache.kafka.common.errors.SecurityDisabledException",
        "Security features are disabled.";
    OperationNotAttempted = 55, "OPERATION_NOT_ATTEMPTED", false,
        "org.apache.kafka.common.errors.OperationNotAttemptedException",
        "The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest.";
    KafkaStorageError = 56, "KAFKA_STORAGE_ERROR", true,
        "org.apache.kafka.common.errors.KafkaStorageException",
        "Disk error when trying to access log file on the disk.";
    LogDirNotFound = 57, "LOG_DIR_NOT_FOUND", false,
        "org.apache.kafka.common.errors.LogDirNotFoundException",
        "The user-specified log directory is not found in the broker config.";
    SaslAuthenticationFailed = 58, "SASL_AUTHENTICATION_FAILED", false,
        "org.apache.kafka.common.errors.SaslAuthenticationException",
        "SASL Authentication failed.";
    UnknownProducerId = 59, "UNKNOWN_PRODUCER_ID", false,
        "org.apache.kafka.common.errors.UnknownProducerIdException",
        "This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception.";
    ReassignmentInProgress = 60, "REASSIGNMENT_IN_PROGRESS", false,
        "org.apache.kafka.common.errors.ReassignmentInProgressException",
        "A partition reassignment is in progress.";
    DelegationTokenAuthDisabled = 61, "DELEGATION_TOKEN_AUTH_DISABLED", false,
        "org.apache.kafka.common.errors.DelegationTokenDisabledException",
        "Delegation Token feature is not enabled.";
    DelegationTokenNotFound = 62, "DELEGATION_TOKEN_NOT_FOUND", false,
        "org.apache.kafka.common.errors.DelegationTokenNotFoundException",
        "Delegation Token is not found on server.";
    DelegationTokenOwnerMismatch = 63, "DELEGATION_TOKEN_OWNER_MISMATCH", false,
        "org.apache.kafka.common.errors.DelegationTokenOwnerMismatchException",
        "Specified Principal is not valid Owner/Renewer.";
    DelegationTokenRequestNotAllowed = 64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", false,
        "org.apache.kafka.common.errors.UnsupportedByAuthenticationException",
        "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.";
    DelegationTokenAuthorizationFailed = 65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", false,
        "org.apache.kafka.common.errors.DelegationTokenAuthorizationException",
        "Delegation Token authorization failed.";
    DelegationTokenExpired = 66, "DELEGATION_TOKEN_EXPIRED", false,
        "org.apache.kafka.common.errors.DelegationTokenExpiredException",
        "Delegation Token is expired.";
    InvalidPrincipalType = 67, "INVALID_PRINCIPAL_TYPE", false,
        "org.apache.kafka.common.errors.InvalidPrincipalTypeException",
        "Supplied principalType is not supported.";
    NonEmptyGroup = 68, "NON_EMPTY_GROUP", false,
        "org.apache.kafka.common.errors.GroupNotEmptyException",
        "The group is not empty.";
    GroupIdNotFound = 69, "GROUP_ID_NOT_FOUND", false,
        "org.apache.kafka.common.errors.GroupIdNotFoundException",
        "The group id does not exist.";
    FetchSessionIdNotFound = 70, "FETCH_SESSION_ID_NOT_FOUND", true,
        "org.apache.kafka.common.errors.FetchSessionIdNotFoundException",
        "The fetch session ID was not found.";
    InvalidFetchSessionEpoch = 71, "INVALID_FETCH_SESSION_EPOCH", true,
        "org.apache.kafka.common.errors.InvalidFetchSessionEpochException",
        "The fetch session epoch is invalid.";
    ListenerNotFound = 72, "LISTENER_NOT_FOUND", true,
        "org.apache.kafka.common.errors.ListenerNotFoundException",
        "There is no listener on the leader broker that matches the listener on which metadata request was processed.";
    TopicDeletionDisabled = 73, "TOPIC_DELETION_DISABLED", false,
        "org.apache.kafka.common.errors.TopicDeletionDisabledException",
        "Topic deletion is disabled.";
    FencedLeaderEpoch = 74, "FENCED_LEADER_EPOCH", true,
        "org.apache.kafka.common.errors.FencedLeaderEpochException",
        "The leader epoch in the request is older than the epoch on the broker.";
    UnknownLeaderEpoch = 75, "UNKNOWN_LEADER_EPOCH", true,
        "org.apache.kafka.common.errors.UnknownLeaderEpochException",
        "The leader epoch in the request is newer than the epoch on the broker.";
    UnsupportedCompressionType = 76, "UNSUPPORTED_COMPRESSION_TYPE", false,
        "org.apache.kafka.common.errors.UnsupportedCompressionTypeException",
        "The requesting client does not support the compression type of given partition.";
    StaleBrokerEpoch = 77, "STALE_BROKER_EPOCH", false,
        "org.apache.kafka.common.errors.StaleBrokerEpochException",
        "Broker epoch has changed.";
    OffsetNotAvailable = 78, "OFFSET_NOT_AVAILABLE", true,
        "org.apache.kafka.common.errors.OffsetNotAvailableException",
        "The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing.";
    MemberIdRequired = 79, "MEMBER_ID_REQUIRED", false,
        "org.apache.kafka.common.errors.MemberIdRequiredException",
        "The group member needs to have a valid member id before actually entering a consumer group.";
    PreferredLeaderNotAvailable = 80, "PREFERRED_LEADER_NOT_AVAILABLE", true,
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException",
        "The preferred leader was not available.";
    GroupMaxSizeReached = 81, "GROUP_MAX_SIZE_REACHED", false,
        "org.apache.kafka.common.errors.GroupMaxSizeReachedException",
        "The consumer group has reached its max size.";
    FencedInstanceId = 82, "FENCED_INSTANCE_ID", false,
        "org.apache.kafka.common.errors.FencedInstanceIdException",
        "The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id.";
    EligibleLeadersNotAvailable = 83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", true,
        "org.apache.kafka.common.errors.EligibleLeadersNotAvailableException",
        "Eligible topic partition leaders are not available.";
    ElectionNotNeeded = 84, "ELECTION_NOT_NEEDED", true,
        "org.apache.kafka.common.errors.ElectionNotNeededException",
        "Leader election not needed for topic partition.";
    NoReassignmentInProgress = 85, "NO_REASSIGNMENT_IN_PROGRESS", false,
        "org.apache.kafka.common.errors.NoReassignmentInProgressException",
        "No partition reassignment is in progress.";
    GroupSubscribedToTopic = 86, "GROUP_SUBSCRIBED_TO_TOPIC", false,
        "org.apache.kafka.common.errors.GroupSubscribedToTopicException",
        "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.";
    InvalidRecord = 87, "INVALID_RECORD", false,
        "org.apache.kafka.common.InvalidRecordException",
        "This record has failed the validation on broker and hence will be rejected.";
    UnstableOffsetCommit = 88, "UNSTABLE_OFFSET_COMMIT", true,
        "org.apache.kafka.common.errors.UnstableOffsetCommitException",
        "There are unstable offsets that need to be cleared.";
    ThrottlingQuotaExceeded = 89, "THROTTLING_QUOTA_EXCEEDED", true,
        "org.apache.kafka.common.errors.ThrottlingQuotaExceededException",
        "The throttling quota has been exceeded.";
    ProducerFenced = 90, "PRODUCER_FENCED", false,
        "org.apache.kafka.common.errors.ProducerFencedException",
        "There is a newer producer with the same transactionalId which fences the current one.";
    ResourceNotFound = 91, "RESOURCE_NOT_FOUND", false,
        "org.apache.kafka.common.errors.ResourceNotFoundException",
        "A request illegally referred to a resource that does not exist.";
    DuplicateResource = 92, "DUPLICATE_RESOURCE", false,
        "org.apache.kafka.common.errors.DuplicateResourceException",
        "A request illegally referred to the same resource twice.";
    UnacceptableCredential = 93, "UNACCEPTABLE_CREDENTIAL", false,
        "org.apache.kafka.common.errors.UnacceptableCredentialException",
        "Requested credential would not meet criteria for acceptability.";
    InconsistentVoterSet = 94, "INCONSISTENT_VOTER_SET", false,
        "org.apache.kafka.common.errors.InconsistentVoterSetException",
        "Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters.";
    InvalidUpdateVersion = 95, "INVALID_UPDATE_VERSION", false,
        "org.apache.kafka.common.errors.InvalidUpdateVersionException",
        "The given update version was invalid.";
    FeatureUpdateFailed = 96, "FEATURE_UPDATE_FAILED", false,
        "org.apache.kafka.common.errors.FeatureUpdateFailedException",
        "Unable to update finalized features due to an unexpected server error.";
    PrincipalDeserializationFailure = 97, "PRINCIPAL_DESERIALIZATION_FAILURE", false,
        "org.apache.kafka.common.errors.PrincipalDeserializationException",
        "Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup.";
    SnapshotNotFound = 98, "SNAPSHOT_NOT_FOUND", false,
        "org.apache.kafka.common.errors.SnapshotNotFoundException",
        "Requested snapshot was not found.";
    PositionOutOfRange = 99, "POSITION_OUT_OF_RANGE", false,
        "org.apache.kafka.common.errors.PositionOutOfRangeException",
        "Requested position is not greater than or equal to zero, and less than the size of the snapshot.";
    UnknownTopicId = 100, "UNKNOWN_TOPIC_ID", true,
        "org.apache.kafka.common.errors.UnknownTopicIdException",
        "This server does not host this topic ID.";
    DuplicateBrokerRegistration = 101, "DUPLICATE_BROKER_REGISTRATION", false,
        "org.apache.kafka.common.errors.DuplicateBrokerRegistrationException",
        "This broker ID is already in use.";
    BrokerIdNotRegistered = 102, "BROKER_ID_NOT_REGISTERED", false,
        "org.apache.kafka.common.errors.BrokerIdNotRegisteredException",
        "The given broker ID was not registered.";
    InconsistentTopicId = 103, "INCONSISTENT_TOPIC_ID", true,
        "org.apache.kafka.common.errors.InconsistentTopicIdException",
        "The log's topic ID did not match the topic ID in the request.";
    InconsistentClusterId = 104, "INCONSISTENT_CLUSTER_ID", false,
        "org.apache.kafka.common.errors.InconsistentClusterIdException",
        "The clusterId in the request does not match that found on the server.";
    TransactionalIdNotFound = 105, "TRANSACTIONAL_ID_NOT_FOUND", false,
        "org.apache.kafka.common.errors.TransactionalIdNotFoundException",
        "The transactionalId could not be found.";
    FetchSessionTopicIdError = 106, "FETCH_SESSION_TOPIC_ID_ERROR", true,
        "org.apache.kafka.common.errors.FetchSessionTopicIdException",
        "The fetch session encountered inconsistent topic ID usage.";
    IneligibleReplica = 107, "INELIGIBLE_REPLICA", false,
        "org.apache.kafka.common.errors.IneligibleReplicaException",
        "The new ISR contains at least one ineligible replica.";
    NewLeaderElected = 108, "NEW_LEADER_ELECTED", false,
        "org.apache.kafka.common.errors.NewLeaderElectedException",
        "The AlterPartition request successfully updated the partition state but the leader has changed.";
    OffsetMovedToTieredStorage = 109, "OFFSET_MOVED_TO_TIERED_STORAGE", false,
        "org.apache.kafka.common.errors.OffsetMovedToTieredStorageException",
        "The requested offset is moved to tiered storage.";
    FencedMemberEpoch = 110, "FENCED_MEMBER_EPOCH", false,
        "org.apache.kafka.common.errors.FencedMemberEpochException",
        "The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin.";
    UnreleasedInstanceId = 111, "UNRELEASED_INSTANCE_ID", false,
        "org.apache.kafka.common.errors.UnreleasedInstanceIdException",
        "The instance ID is still used by another member in the consumer group. That member must leave first.";
    UnsupportedAssignor = 112, "UNSUPPORTED_ASSIGNOR", false,
        "org.apache.kafka.common.errors.UnsupportedAssignorException",
        "The assignor or its version range is not supported by the consumer group.";
    StaleMemberEpoch = 113, "STALE_MEMBER_EPOCH", false,
        "org.apache.kafka.common.errors.StaleMemberEpochException",
        "The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API.";
    MismatchedEndpointType = 114, "MISMATCHED_ENDPOINT_TYPE", false,
        "org.apache.kafka.common.errors.MismatchedEndpointTypeException",
        "The request was sent to an endpoint of the wrong type.";
    UnsupportedEndpointType = 115, "UNSUPPORTED_ENDPOINT_TYPE", false,
        "org.apache.kafka.common.errors.UnsupportedEndpointTypeException",
        "This endpoint type is not supported yet.";
    UnknownControllerId = 116, "UNKNOWN_CONTROLLER_ID", false,
        "org.apache.kafka.common.errors.UnknownControllerIdException",
        "This controller ID is not known.";
    UnknownSubscriptionId = 117, "UNKNOWN_SUBSCRIPTION_ID", false,
        "org.apache.kafka.common.errors.UnknownSubscriptionIdException",
        "Client sent a push telemetry request with an invalid or outdated subscription ID.";
    TelemetryTooLarge = 118, "TELEMETRY_TOO_LARGE", false,
        "org.apache.kafka.common.errors.TelemetryTooLargeException",
        "Client sent a push telemetry request larger than the maximum size the broker will accept.";
    InvalidRegistration = 119, "INVALID_REGISTRATION", false,
        "org.apache.kafka.common.errors.InvalidRegistrationException",
        "The controller has considered the broker registration to be invalid.";
    TransactionAbortable = 120, "TRANSACTION_ABORTABLE", false,
        "org.apache.kafka.common.errors.TransactionAbortableException",
        "The server encountered an error with the transaction. The client can abort the transaction to continue using this transactional ID.";
    InvalidRecordState = 121, "INVALID_RECORD_STATE", false,
        "org.apache.kafka.common.errors.InvalidRecordStateException",
        "The record state is invalid. The acknowledgement of delivery could not be completed.";
    ShareSessionNotFound = 122, "SHARE_SESSION_NOT_FOUND", true,
        "org.apache.kafka.common.errors.ShareSessionNotFoundException",
        "The share session was not found.";
    InvalidShareSessionEpoch = 123, "INVALID_SHARE_SESSION_EPOCH", true,
        "org.apache.kafka.common.errors.InvalidShareSessionEpochException",
        "The share session epoch is invalid.";
    FencedStateEpoch = 124, "FENCED_STATE_EPOCH", false,
        "org.apache.kafka.common.errors.FencedStateEpochException",
        "The share coordinator rejected the request because the share-group state epoch did not match.";
    InvalidVoterKey = 125, "INVALID_VOTER_KEY", false,
        "org.apache.kafka.common.errors.InvalidVoterKeyException",
        "The voter key doesn't match the receiving replica's key.";
    DuplicateVoter = 126, "DUPLICATE_VOTER", false,
        "org.apache.kafka.common.errors.DuplicateVoterException",
        "The voter is already part of the set of voters.";
    VoterNotFound = 127, "VOTER_NOT_FOUND", false,
        "org.apache.kafka.common.errors.VoterNotFoundException",
        "The voter is not part of the set of voters.";
    InvalidRegularExpression = 128, "INVALID_REGULAR_EXPRESSION", false,
        "org.apache.kafka.common.errors.InvalidRegularExpression",
        "The regular expression is not valid.";
    RebootstrapRequired = 129, "REBOOTSTRAP_REQUIRED", false,
        "org.apache.kafka.common.errors.RebootstrapRequiredException",
        "Client metadata is stale. The client should rebootstrap to obtain new metadata.";
    StreamsInvalidTopology = 130, "STREAMS_INVALID_TOPOLOGY", false,
        "org.apache.kafka.common.errors.StreamsInvalidTopologyException",
        "The supplied topology is invalid.";
    StreamsInvalidTopologyEpoch = 131, "STREAMS_INVALID_TOPOLOGY_EPOCH", false,
        "org.apache.kafka.common.errors.StreamsInvalidTopologyEpochException",
        "The supplied topology epoch is invalid.";
    StreamsTopologyFenced = 132, "STREAMS_TOPOLOGY_FENCED", false,
        "org.apache.kafka.common.errors.StreamsTopologyFencedException",
        "The supplied topology epoch is outdated.";
    ShareSessionLimitReached = 133, "SHARE_SESSION_LIMIT_REACHED", true,
        "org.apache.kafka.common.errors.ShareSessionLimitReachedException",
        "The limit of share sessions has been reached.";
}

impl ErrorCode {
    /// The value sent on the wire.
    pub const fn code(self) -> i16 {
        self as i16
    }

    /// The variant for a wire value, or `None` for a code this table does not know.
    pub fn from_code(code: i16) -> Option<ErrorCode> {
        TABLE.iter().find(|r| r.code.code() == code).map(|r| r.code)
    }

    /// Every code Kafka defines, in the table's order.
    pub fn all() -> impl Iterator<Item = ErrorCode> {
        TABLE.iter().map(|r| r.code)
    }

    fn row(self) -> Option<&'static Row> {
        TABLE.iter().find(|r| r.code == self)
    }

    /// Kafka's constant name (`UNKNOWN_TOPIC_OR_PARTITION`), for log lines.
    pub fn name(self) -> &'static str {
        self.row().map_or("UNKNOWN", |r| r.name)
    }

    /// Whether Kafka marks the error retriable (clients retry these on their own).
    pub fn is_retriable(self) -> bool {
        self.row().is_some_and(|r| r.retriable)
    }

    /// The Java exception class Kafka's clients raise for it (`org.apache.kafka.common.errors.
    /// NotCoordinatorException`); empty for `None`.
    pub fn java_exception(self) -> &'static str {
        self.row().map_or("", |r| r.exception)
    }

    /// The exception's default message, what a Java tool prints when the broker sent none.
    pub fn default_message(self) -> &'static str {
        self.row().map_or("", |r| r.message)
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
        for row in TABLE {
            assert_eq!(ErrorCode::from_code(row.code.code()), Some(row.code));
        }
        assert_eq!(ErrorCode::from_code(12345), None);
    }

    #[test]
    fn the_table_holds_every_code_kafka_4_0_defines_in_order_with_its_exception() {
        let codes: Vec<i16> = TABLE.iter().map(|r| r.code.code()).collect();
        let mut expected: Vec<i16> = (-1..=133).collect();
        expected.swap(0, 1); // NONE (0) is listed first, then UNKNOWN_SERVER_ERROR (-1).
        assert_eq!(codes, expected);
        for row in TABLE.iter().filter(|r| !r.code.is_none()) {
            // Kafka keeps all but one in `common.errors` (InvalidRecordException lives in
            // `org.apache.kafka.common`), and not every class ends in Exception
            // (OffsetMetadataTooLarge).
            assert!(
                row.exception.starts_with("org.apache.kafka.common."),
                "{}",
                row.name
            );
            assert!(!row.message.is_empty(), "{}", row.name);
        }
        assert_eq!(
            ErrorCode::NotCoordinator.java_exception(),
            "org.apache.kafka.common.errors.NotCoordinatorException"
        );
        assert_eq!(
            ErrorCode::NotCoordinator.default_message(),
            "This is not the correct coordinator."
        );
    }

    #[test]
    fn values_match_the_kafka_protocol_crate() {
        use kafka_protocol::error::ResponseError;
        for row in TABLE.iter().skip(1) {
            let e = row.code;
            let theirs = ResponseError::try_from_code(e.code());
            assert!(matches!(theirs, Some(r) if r.code() == e.code()), "{e:?}");
            assert_eq!(
                theirs.map(|r| r.is_retriable()),
                Some(row.retriable),
                "{e:?}"
            );
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
