//! The one table from Cohort's typed errors to Kafka error codes.
//!
//! Every part keeps its own error enum (thiserror); at the wire edge they become a
//! [`BrokerError`] and [`to_kafka_error`] picks the code. Nowhere else in the crate turns an
//! error into a code, so a client always sees the same code for the same failure.

use compaction::LogError;
use protocol::ErrorCode;

use crate::data::producers::SequenceError;
use crate::data::{AppendError, LookupError, ReadError};
use crate::group_coordinator::GroupError;
use crate::topics::{CatalogError, ConfigError, CreateTopicError};

/// Any failure a handler reports to a client.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// Topic catalog.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// CreateTopics validation.
    #[error(transparent)]
    CreateTopic(#[from] CreateTopicError),
    /// A topic config refused (IncrementalAlterConfigs, AlterConfigs).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Finding a partition.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// Appending a produced batch.
    #[error(transparent)]
    Append(#[from] AppendError),
    /// Reading a partition.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The log engine, directly.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The client knows a newer leader epoch than ours.
    #[error("leader epoch {client} is newer than the current {current}")]
    UnknownLeaderEpoch {
        /// What the client sent.
        client: i32,
        /// Ours.
        current: i32,
    },
    /// The client knows an older leader epoch than ours.
    #[error("leader epoch {client} is older than the current {current}")]
    FencedLeaderEpoch {
        /// What the client sent.
        client: i32,
        /// Ours.
        current: i32,
    },
    /// A request that contradicts itself.
    #[error("{0}")]
    InvalidRequest(String),
    /// A feature Cohort does not serve (transactions).
    #[error("{0}")]
    Unsupported(String),
    /// The group coordinator could not serve the request on this node.
    #[error(transparent)]
    Group(#[from] GroupError),
    /// A transactional batch the transaction coordinator did not register (KIP-890 part 1).
    #[error(transparent)]
    TxnVerify(#[from] crate::group_coordinator::txn_verify::TxnVerifyError),
}

/// The Kafka error code and message a client gets for a failure the broker maps, e.g. a
/// replicated write that did not commit.
pub fn code_and_message(err: impl Into<BrokerError>) -> (ErrorCode, String) {
    let err = err.into();
    (to_kafka_error(&err), err.to_string())
}

/// The Kafka error code a client gets for `err`.
pub fn to_kafka_error(err: &BrokerError) -> ErrorCode {
    match err {
        BrokerError::Catalog(e) => match e {
            CatalogError::TopicExists(_) => ErrorCode::TopicAlreadyExists,
            CatalogError::UnknownTopic(_) => ErrorCode::UnknownTopicOrPartition,
            CatalogError::UnknownTopicId(_) => ErrorCode::UnknownTopicId,
            CatalogError::LimitReached(_) => ErrorCode::PolicyViolation,
            CatalogError::Storage(_) => ErrorCode::KafkaStorageError,
            CatalogError::NotController => ErrorCode::NotController,
            CatalogError::Timeout(_) => ErrorCode::RequestTimedOut,
            // Only after the broker's retries of a compare-and-set all lost the race.
            CatalogError::Conflict(_) => ErrorCode::RequestTimedOut,
        },
        BrokerError::CreateTopic(e) => match e {
            CreateTopicError::InvalidName(_) => ErrorCode::InvalidTopicException,
            CreateTopicError::InvalidPartitions(_) => ErrorCode::InvalidPartitions,
            CreateTopicError::InvalidReplicationFactor(_) => ErrorCode::InvalidReplicationFactor,
            CreateTopicError::InvalidReplicaAssignment(_) => ErrorCode::InvalidReplicaAssignment,
            CreateTopicError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            CreateTopicError::InvalidConfig(_) => ErrorCode::InvalidConfig,
        },
        BrokerError::Config(_) => ErrorCode::InvalidConfig,
        BrokerError::Lookup(e) => match e {
            LookupError::UnknownTopicOrPartition => ErrorCode::UnknownTopicOrPartition,
            LookupError::NotLeader { .. } => ErrorCode::NotLeaderOrFollower,
            // This replica has not become the partition's leader yet, as a Kafka broker that
            // is still loading answers: clients refresh metadata and retry.
            LookupError::NotReconciled => ErrorCode::NotLeaderOrFollower,
            LookupError::Storage(e) => log_error(e),
        },
        BrokerError::Append(e) => match e {
            AppendError::Batch(b) if b.is_corrupt() => ErrorCode::CorruptMessage,
            AppendError::Batch(_) => ErrorCode::InvalidRecord,
            AppendError::TooLarge { .. } => ErrorCode::MessageTooLarge,
            AppendError::Sequence(SequenceError::InvalidProducerEpoch { .. }) => {
                ErrorCode::InvalidProducerEpoch
            }
            AppendError::Sequence(SequenceError::OutOfOrder { .. }) => {
                ErrorCode::OutOfOrderSequenceNumber
            }
            AppendError::Sequence(SequenceError::CoordinatorFenced { .. }) => {
                ErrorCode::TransactionCoordinatorFenced
            }
            AppendError::OpenTransaction { .. } => ErrorCode::InvalidTxnState,
            AppendError::UnverifiedTransaction { .. } => ErrorCode::InvalidTxnState,
            AppendError::NotAMarker(_) => ErrorCode::InvalidRecord,
            AppendError::Log(e) => log_error(e),
        },
        BrokerError::Read(e) => match e {
            ReadError::OffsetOutOfRange { .. } => ErrorCode::OffsetOutOfRange,
            ReadError::Log(e) => log_error(e),
            // A batch too large to look into within the ListOffsets budget: it is stored
            // fine, the broker declines the work (a non-retriable answer; see the decision
            // record on resource limits).
            ReadError::Batch(protocol::batch::BatchError::OverBudget { .. }) => {
                ErrorCode::MessageTooLarge
            }
            ReadError::Batch(_) => ErrorCode::CorruptMessage,
        },
        BrokerError::Log(e) => log_error(e),
        BrokerError::UnknownLeaderEpoch { .. } => ErrorCode::UnknownLeaderEpoch,
        BrokerError::FencedLeaderEpoch { .. } => ErrorCode::FencedLeaderEpoch,
        BrokerError::InvalidRequest(_) => ErrorCode::InvalidRequest,
        BrokerError::Unsupported(_) => ErrorCode::UnsupportedVersion,
        BrokerError::Group(e) => match e {
            GroupError::NotCoordinator => ErrorCode::NotCoordinator,
            GroupError::LoadInProgress => ErrorCode::CoordinatorLoadInProgress,
            GroupError::NotAvailable(_) => ErrorCode::CoordinatorNotAvailable,
        },
        BrokerError::TxnVerify(e) => {
            use crate::group_coordinator::txn_verify::TxnVerifyError as V;
            match e {
                V::ProducerIdMapping(_) => ErrorCode::InvalidProducerIdMapping,
                V::EpochMismatch { .. } => ErrorCode::InvalidProducerEpoch,
                V::Completing => ErrorCode::ConcurrentTransactions,
                V::NotInTransaction { abortable: true } => ErrorCode::TransactionAbortable,
                V::NotInTransaction { abortable: false } => ErrorCode::InvalidTxnState,
                V::Unavailable(_) => ErrorCode::CoordinatorNotAvailable,
            }
        }
    }
}

/// The Kafka error code of a coordinator domain answer (each `ErrorKind` documents its code).
pub fn coordinator_error_code(kind: coordinator::ErrorKind) -> ErrorCode {
    use coordinator::ErrorKind as K;
    match kind {
        K::CoordinatorNotAvailable => ErrorCode::CoordinatorNotAvailable,
        K::IllegalGeneration => ErrorCode::IllegalGeneration,
        K::InconsistentGroupProtocol => ErrorCode::InconsistentGroupProtocol,
        K::InvalidGroupId => ErrorCode::InvalidGroupId,
        K::UnknownMemberId => ErrorCode::UnknownMemberId,
        K::InvalidSessionTimeout => ErrorCode::InvalidSessionTimeout,
        K::RebalanceInProgress => ErrorCode::RebalanceInProgress,
        K::OffsetMetadataTooLarge => ErrorCode::OffsetMetadataTooLarge,
        K::UnknownTopicOrPartition => ErrorCode::UnknownTopicOrPartition,
        K::InvalidRequest => ErrorCode::InvalidRequest,
        K::NonEmptyGroup => ErrorCode::NonEmptyGroup,
        K::GroupIdNotFound => ErrorCode::GroupIdNotFound,
        K::MemberIdRequired => ErrorCode::MemberIdRequired,
        K::FencedInstanceId => ErrorCode::FencedInstanceId,
        K::GroupMaxSizeReached => ErrorCode::GroupMaxSizeReached,
        K::GroupSubscribedToTopic => ErrorCode::GroupSubscribedToTopic,
        K::UnsupportedVersion => ErrorCode::UnsupportedVersion,
        K::FencedMemberEpoch => ErrorCode::FencedMemberEpoch,
        K::UnreleasedInstanceId => ErrorCode::UnreleasedInstanceId,
        K::UnsupportedAssignor => ErrorCode::UnsupportedAssignor,
        K::StaleMemberEpoch => ErrorCode::StaleMemberEpoch,
        K::InvalidRegularExpression => ErrorCode::InvalidRegularExpression,
        // Cohort's count limits: non-retriable, so clients surface them (decision 0113).
        K::GroupsMaxReached
        | K::OffsetsPerGroupMaxReached
        | K::TransactionsMaxReached
        | K::TransactionPartitionsMaxReached => ErrorCode::PolicyViolation,
        K::InvalidProducerEpoch => ErrorCode::InvalidProducerEpoch,
        K::InvalidTxnState => ErrorCode::InvalidTxnState,
        K::InvalidProducerIdMapping => ErrorCode::InvalidProducerIdMapping,
        K::InvalidTransactionTimeout => ErrorCode::InvalidTransactionTimeout,
        K::ConcurrentTransactions => ErrorCode::ConcurrentTransactions,
        K::OperationNotAttempted => ErrorCode::OperationNotAttempted,
        K::UnstableOffsetCommit => ErrorCode::UnstableOffsetCommit,
        K::ProducerFenced => ErrorCode::ProducerFenced,
    }
}

/// The log engine's failures: size limits are the client's, ranges are the client's, the rest
/// is the disk's (KAFKA_STORAGE_ERROR, retriable: the client tries again, maybe elsewhere).
fn log_error(e: &LogError) -> ErrorCode {
    match e {
        LogError::EntryTooLarge { .. } | LogError::KeyTooLarge { .. } => ErrorCode::MessageTooLarge,
        LogError::OffsetOutOfRange { .. } => ErrorCode::OffsetOutOfRange,
        _ => ErrorCode::KafkaStorageError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topics::names::InvalidTopicName;
    use crate::topics::ConfigError;
    use protocol::batch::BatchError;

    #[test]
    fn the_table() {
        let cases: Vec<(BrokerError, ErrorCode)> = vec![
            (
                CatalogError::TopicExists("t".into()).into(),
                ErrorCode::TopicAlreadyExists,
            ),
            (
                CatalogError::UnknownTopic("t".into()).into(),
                ErrorCode::UnknownTopicOrPartition,
            ),
            (
                CatalogError::UnknownTopicId(uuid::Uuid::nil()).into(),
                ErrorCode::UnknownTopicId,
            ),
            (
                CatalogError::LimitReached("x".into()).into(),
                ErrorCode::PolicyViolation,
            ),
            (
                CatalogError::Storage("disk".into()).into(),
                ErrorCode::KafkaStorageError,
            ),
            (
                CreateTopicError::InvalidName(InvalidTopicName::Empty).into(),
                ErrorCode::InvalidTopicException,
            ),
            (
                CreateTopicError::InvalidPartitions("x".into()).into(),
                ErrorCode::InvalidPartitions,
            ),
            (
                CreateTopicError::InvalidReplicationFactor("x".into()).into(),
                ErrorCode::InvalidReplicationFactor,
            ),
            (
                CreateTopicError::InvalidReplicaAssignment("x".into()).into(),
                ErrorCode::InvalidReplicaAssignment,
            ),
            (
                CreateTopicError::InvalidRequest("x".into()).into(),
                ErrorCode::InvalidRequest,
            ),
            (
                CreateTopicError::InvalidConfig(ConfigError::Unknown("x".into())).into(),
                ErrorCode::InvalidConfig,
            ),
            (
                LookupError::UnknownTopicOrPartition.into(),
                ErrorCode::UnknownTopicOrPartition,
            ),
            (
                LookupError::NotLeader { leader: 2 }.into(),
                ErrorCode::NotLeaderOrFollower,
            ),
            (
                LookupError::NotReconciled.into(),
                ErrorCode::NotLeaderOrFollower,
            ),
            (
                AppendError::Batch(BatchError::Crc {
                    stored: 1,
                    computed: 2,
                })
                .into(),
                ErrorCode::CorruptMessage,
            ),
            (
                AppendError::Batch(BatchError::Truncated { have: 1, need: 61 }).into(),
                ErrorCode::CorruptMessage,
            ),
            (
                AppendError::Batch(BatchError::BatchCount(2)).into(),
                ErrorCode::InvalidRecord,
            ),
            (
                AppendError::Batch(BatchError::ControlBatch).into(),
                ErrorCode::InvalidRecord,
            ),
            (
                AppendError::TooLarge { size: 2, max: 1 }.into(),
                ErrorCode::MessageTooLarge,
            ),
            (
                AppendError::Sequence(SequenceError::InvalidProducerEpoch {
                    producer_id: 1,
                    epoch: 0,
                    current: 1,
                })
                .into(),
                ErrorCode::InvalidProducerEpoch,
            ),
            (
                AppendError::Sequence(SequenceError::CoordinatorFenced {
                    producer_id: 1,
                    coordinator_epoch: 1,
                    current: 2,
                })
                .into(),
                ErrorCode::TransactionCoordinatorFenced,
            ),
            (
                AppendError::Sequence(SequenceError::OutOfOrder {
                    producer_id: 1,
                    first_seq: 5,
                    expected_after: 2,
                })
                .into(),
                ErrorCode::OutOfOrderSequenceNumber,
            ),
            (
                AppendError::OpenTransaction { producer_id: 1 }.into(),
                ErrorCode::InvalidTxnState,
            ),
            (
                AppendError::UnverifiedTransaction {
                    producer_id: 1,
                    producer_epoch: 0,
                }
                .into(),
                ErrorCode::InvalidTxnState,
            ),
            (
                crate::group_coordinator::txn_verify::TxnVerifyError::NotInTransaction {
                    abortable: false,
                }
                .into(),
                ErrorCode::InvalidTxnState,
            ),
            (
                crate::group_coordinator::txn_verify::TxnVerifyError::NotInTransaction {
                    abortable: true,
                }
                .into(),
                ErrorCode::TransactionAbortable,
            ),
            (
                crate::group_coordinator::txn_verify::TxnVerifyError::EpochMismatch {
                    batch: 0,
                    registered: 1,
                }
                .into(),
                ErrorCode::InvalidProducerEpoch,
            ),
            (
                crate::group_coordinator::txn_verify::TxnVerifyError::ProducerIdMapping("t".into())
                    .into(),
                ErrorCode::InvalidProducerIdMapping,
            ),
            (
                crate::group_coordinator::txn_verify::TxnVerifyError::Completing.into(),
                ErrorCode::ConcurrentTransactions,
            ),
            (
                crate::group_coordinator::txn_verify::TxnVerifyError::Unavailable("x".into())
                    .into(),
                ErrorCode::CoordinatorNotAvailable,
            ),
            (
                AppendError::NotAMarker(BatchError::ControlBatch).into(),
                ErrorCode::InvalidRecord,
            ),
            (
                ReadError::OffsetOutOfRange {
                    offset: 9,
                    start: 0,
                    end: 1,
                }
                .into(),
                ErrorCode::OffsetOutOfRange,
            ),
            (
                LogError::EntryTooLarge { size: 2, max: 1 }.into(),
                ErrorCode::MessageTooLarge,
            ),
            (
                LogError::Poisoned("fsync".into()).into(),
                ErrorCode::KafkaStorageError,
            ),
            // A full disk (decision 0112): the guard's refusal and the raw ENOSPC alike.
            (
                LogError::StorageFull(compaction::SpaceRefused {
                    kind: "partition-log",
                    path: "/data/topics".into(),
                })
                .into(),
                ErrorCode::KafkaStorageError,
            ),
            (
                LogError::Io {
                    op: "write",
                    path: "/data/topics/t-0/log/0.log".into(),
                    source: std::io::Error::from_raw_os_error(28),
                }
                .into(),
                ErrorCode::KafkaStorageError,
            ),
            (
                GroupError::from(raft_meta::WriteError::DiskFull("disk full".into())).into(),
                ErrorCode::CoordinatorNotAvailable,
            ),
            (
                BrokerError::UnknownLeaderEpoch {
                    client: 3,
                    current: 0,
                },
                ErrorCode::UnknownLeaderEpoch,
            ),
            (
                BrokerError::FencedLeaderEpoch {
                    client: 1,
                    current: 2,
                },
                ErrorCode::FencedLeaderEpoch,
            ),
            (
                BrokerError::InvalidRequest("x".into()),
                ErrorCode::InvalidRequest,
            ),
            (
                BrokerError::Unsupported("x".into()),
                ErrorCode::UnsupportedVersion,
            ),
            (CatalogError::NotController.into(), ErrorCode::NotController),
            (
                CatalogError::Timeout("x".into()).into(),
                ErrorCode::RequestTimedOut,
            ),
            (GroupError::NotCoordinator.into(), ErrorCode::NotCoordinator),
            (
                GroupError::LoadInProgress.into(),
                ErrorCode::CoordinatorLoadInProgress,
            ),
            (
                GroupError::NotAvailable("x".into()).into(),
                ErrorCode::CoordinatorNotAvailable,
            ),
        ];
        for (err, code) in cases {
            assert_eq!(to_kafka_error(&err), code, "{err:?}");
        }
    }

    #[test]
    fn coordinator_codes_are_kafkas() {
        use coordinator::ErrorKind as K;
        let cases = [
            (K::CoordinatorNotAvailable, 15),
            (K::IllegalGeneration, 22),
            (K::InconsistentGroupProtocol, 23),
            (K::InvalidGroupId, 24),
            (K::UnknownMemberId, 25),
            (K::InvalidSessionTimeout, 26),
            (K::RebalanceInProgress, 27),
            (K::OffsetMetadataTooLarge, 12),
            (K::UnknownTopicOrPartition, 3),
            (K::InvalidRequest, 42),
            (K::NonEmptyGroup, 68),
            (K::GroupIdNotFound, 69),
            (K::MemberIdRequired, 79),
            (K::FencedInstanceId, 82),
            (K::GroupMaxSizeReached, 81),
            (K::GroupSubscribedToTopic, 86),
            (K::GroupsMaxReached, 44),
            (K::OffsetsPerGroupMaxReached, 44),
        ];
        for (kind, code) in cases {
            assert_eq!(coordinator_error_code(kind).code(), code, "{kind:?}");
        }
    }

    /// Every error code the broker's code can send (a variant of `ErrorCode` named anywhere in `src/`,
    /// and the bare codes given to `with_error_code`) is a row of protocol's one table, with
    /// the Java exception and message the operator tools print for it.
    #[test]
    fn every_code_the_broker_sends_is_in_the_one_table() {
        let mut sources = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src"
        ))];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    sources.push(std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        let known: Vec<String> = ErrorCode::all().map(|e| format!("{e:?}")).collect();
        let mut seen = 0;
        for source in &sources {
            for (at, _) in source.match_indices("ErrorCode::") {
                let name: String = source[at + "ErrorCode::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
                    continue; // a method (`ErrorCode::from_code`), not a code
                }
                assert!(
                    known.contains(&name),
                    "ErrorCode::{name} is not in the table"
                );
                seen += 1;
            }
            for (at, _) in source.match_indices("with_error_code(") {
                let digits: String = source[at + "with_error_code(".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '-')
                    .collect();
                if let Ok(code) = digits.parse::<i16>() {
                    assert!(
                        ErrorCode::from_code(code).is_some(),
                        "code {code} is not in the table"
                    );
                }
            }
        }
        assert!(
            seen > 100,
            "only {seen} codes found: is the scan reading src/?"
        );
        for code in ErrorCode::all().filter(|c| !c.is_none()) {
            assert!(!code.java_exception().is_empty(), "{code}");
            assert!(!code.default_message().is_empty(), "{code}");
        }
    }
}
