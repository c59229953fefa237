//! The one table from Cohort's typed errors to Kafka error codes.
//!
//! Every part keeps its own error enum (thiserror); at the wire edge they become a
//! [`BrokerError`] and [`to_kafka_error`] picks the code. Nowhere else in the crate turns an
//! error into a code, so a client always sees the same code for the same failure.

use protocol::ErrorCode;

use crate::topics::{CatalogError, CreateTopicError};

/// Any failure a handler reports to a client.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// Topic catalog.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// CreateTopics validation.
    #[error(transparent)]
    CreateTopic(#[from] CreateTopicError),
    /// A request that contradicts itself.
    #[error("{0}")]
    InvalidRequest(String),
    /// A feature Cohort does not serve (transactions).
    #[error("{0}")]
    Unsupported(String),
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
        },
        BrokerError::CreateTopic(e) => match e {
            CreateTopicError::InvalidName(_) => ErrorCode::InvalidTopicException,
            CreateTopicError::InvalidPartitions(_) => ErrorCode::InvalidPartitions,
            CreateTopicError::InvalidReplicationFactor(_) => ErrorCode::InvalidReplicationFactor,
            CreateTopicError::InvalidReplicaAssignment(_) => ErrorCode::InvalidReplicaAssignment,
            CreateTopicError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            CreateTopicError::InvalidConfig(_) => ErrorCode::InvalidConfig,
        },
        BrokerError::InvalidRequest(_) => ErrorCode::InvalidRequest,
        BrokerError::Unsupported(_) => ErrorCode::UnsupportedVersion,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topics::names::InvalidTopicName;
    use crate::topics::ConfigError;

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
                BrokerError::InvalidRequest("x".into()),
                ErrorCode::InvalidRequest,
            ),
            (
                BrokerError::Unsupported("x".into()),
                ErrorCode::UnsupportedVersion,
            ),
        ];
        for (err, code) in cases {
            assert_eq!(to_kafka_error(&err), code, "{err:?}");
        }
    }
}
