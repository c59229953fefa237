//! Typed errors of the client. Broker error codes stay codes (`KafkaError`) until something has to
//! print them; `java_string` renders any error the way Kafka's Java tools show the exception they
//! would have raised (`Throwable.toString()`), because `cohort groups` prints those texts.

use std::io;

use protocol::ErrorCode;

/// Kafka error code for "no error".
pub const NONE: i16 = ErrorCode::None.code();
/// The broker's partition metadata lags behind; retry.
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = ErrorCode::UnknownTopicOrPartition.code();
/// The partition has no leader right now; retry.
pub const LEADER_NOT_AVAILABLE: i16 = ErrorCode::LeaderNotAvailable.code();
/// The broker we asked is not the partition's leader; refresh metadata and retry.
pub const NOT_LEADER_OR_FOLLOWER: i16 = ErrorCode::NotLeaderOrFollower.code();
/// The coordinator is still loading its state; retry the same node.
pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = ErrorCode::CoordinatorLoadInProgress.code();
/// The coordinator is not available; look it up again.
pub const COORDINATOR_NOT_AVAILABLE: i16 = ErrorCode::CoordinatorNotAvailable.code();
/// The node is not the group's coordinator; look it up again.
pub const NOT_COORDINATOR: i16 = ErrorCode::NotCoordinator.code();
/// The group id is empty or otherwise invalid.
pub const INVALID_GROUP_ID: i16 = ErrorCode::InvalidGroupId.code();
/// The group is rebalancing; an admin commit retries.
pub const REBALANCE_IN_PROGRESS: i16 = ErrorCode::RebalanceInProgress.code();
/// Group authorization failed.
pub const GROUP_AUTHORIZATION_FAILED: i16 = ErrorCode::GroupAuthorizationFailed.code();
/// The broker does not support the version we sent.
pub const UNSUPPORTED_VERSION: i16 = ErrorCode::UnsupportedVersion.code();
/// The group does not exist.
pub const GROUP_ID_NOT_FOUND: i16 = ErrorCode::GroupIdNotFound.code();
/// The group still has members.
pub const NON_EMPTY_GROUP: i16 = ErrorCode::NonEmptyGroup.code();
/// A member of the group subscribes to the topic.
pub const GROUP_SUBSCRIBED_TO_TOPIC: i16 = ErrorCode::GroupSubscribedToTopic.code();
/// Topic authorization failed.
pub const TOPIC_AUTHORIZATION_FAILED: i16 = ErrorCode::TopicAuthorizationFailed.code();

/// An error code a broker returned, with the message it sent along (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaError {
    /// The wire error code.
    pub code: i16,
    /// The broker's error message; `None` means Kafka's default text for the code.
    pub message: Option<String>,
}

impl KafkaError {
    /// An error with the code's default message.
    pub fn new(code: i16) -> Self {
        KafkaError {
            code,
            message: None,
        }
    }

    /// An error with a specific message (an empty message counts as none, as in Java).
    pub fn with_message(code: i16, message: Option<String>) -> Self {
        KafkaError {
            code,
            message: message.filter(|m| !m.is_empty()),
        }
    }

    /// The constant's name (`NOT_COORDINATOR`), or `UNKNOWN(<code>)` for a code Kafka lacks.
    pub fn name(&self) -> String {
        match ErrorCode::from_code(self.code) {
            Some(known) => known.name().to_string(),
            None => format!("UNKNOWN({})", self.code),
        }
    }

    /// The message Java would put in the exception: the broker's, else the default one.
    pub fn message(&self) -> String {
        match (&self.message, ErrorCode::from_code(self.code)) {
            (Some(m), _) => m.clone(),
            (None, Some(known)) => known.default_message().to_string(),
            (None, None) => ErrorCode::UnknownServerError.default_message().to_string(),
        }
    }

    /// `Throwable.toString()` of the exception Kafka's client raises for this error.
    pub fn java_string(&self) -> String {
        let class = ErrorCode::from_code(self.code)
            .unwrap_or(ErrorCode::UnknownServerError)
            .java_exception();
        format!("{class}: {}", self.message())
    }
}

impl std::fmt::Display for KafkaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.name(), self.code, self.message())
    }
}

/// Everything that can go wrong in a client call.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A setting (bootstrap list, properties file, option) is unusable.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The call's deadline (`--timeout`) passed before it completed.
    #[error("timed out waiting for {call}")]
    Timeout {
        /// The Admin call that timed out, named as Kafka names it (`listConsumerGroups`).
        call: String,
    },
    /// A socket operation failed.
    #[error("i/o error talking to {addr}: {source}")]
    Io {
        /// The broker address.
        addr: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The broker sent bytes we could not make sense of.
    #[error("protocol error from {addr}: {detail}")]
    Protocol {
        /// The broker address.
        addr: String,
        /// What was wrong.
        detail: String,
    },
    /// No version of an API is shared with the broker, or a feature needs a newer version.
    #[error("{0}")]
    UnsupportedVersion(String),
    /// The broker answered with an error code.
    #[error("{0}")]
    Kafka(KafkaError),
    /// The TLS handshake failed: an untrusted or misnamed server certificate, or the broker
    /// refused ours.
    #[error("SSL handshake with {addr} failed: {detail}")]
    SslHandshake {
        /// The broker address.
        addr: String,
        /// What TLS said.
        detail: String,
    },
    /// The SASL exchange failed on our side (the broker's own refusals are `Kafka` errors).
    #[error("{0}")]
    Sasl(String),
    /// DescribeGroups returned a group whose protocol type is not `consumer`.
    #[error("GroupId {group} is not a consumer group ({protocol_type}).")]
    NotConsumerGroup {
        /// The group id.
        group: String,
        /// Its protocol type.
        protocol_type: String,
    },
}

impl ClientError {
    /// The broker error code, if this error is one.
    pub fn kafka_code(&self) -> Option<i16> {
        match self {
            ClientError::Kafka(e) => Some(e.code),
            _ => None,
        }
    }

    /// `Throwable.toString()` of the exception Kafka's Admin client would raise.
    pub fn java_string(&self) -> String {
        match self {
            ClientError::Kafka(e) => e.java_string(),
            ClientError::Timeout { call } => format!(
                "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. Call: {call}"
            ),
            ClientError::UnsupportedVersion(detail) => {
                format!("org.apache.kafka.common.errors.UnsupportedVersionException: {detail}")
            }
            ClientError::NotConsumerGroup { .. } => {
                format!("java.lang.IllegalArgumentException: {self}")
            }
            ClientError::Config(detail) => {
                format!("org.apache.kafka.common.config.ConfigException: {detail}")
            }
            ClientError::SslHandshake { .. } => {
                "org.apache.kafka.common.errors.SslAuthenticationException: SSL handshake failed"
                    .to_string()
            }
            ClientError::Sasl(detail) => {
                format!("org.apache.kafka.common.errors.SaslAuthenticationException: {detail}")
            }
            ClientError::Io { addr, source } => format!(
                "org.apache.kafka.common.errors.NetworkException: Connection to {addr} failed: {source}"
            ),
            ClientError::Protocol { addr, detail } => format!(
                "org.apache.kafka.common.protocol.types.SchemaException: Error reading response from {addr}: {detail}"
            ),
        }
    }

    /// The message part of `java_string` (Java's `getMessage()`).
    pub fn java_message(&self) -> String {
        let full = self.java_string();
        match full.split_once(": ") {
            Some((_, message)) => message.to_string(),
            None => full,
        }
    }
}

impl From<KafkaError> for ClientError {
    fn from(e: KafkaError) -> Self {
        ClientError::Kafka(e)
    }
}

/// Result of a client call.
pub type ClientResult<T> = Result<T, ClientError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_error_renders_like_java() {
        assert_eq!(
            KafkaError::new(NON_EMPTY_GROUP).java_string(),
            "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty."
        );
        assert_eq!(
            KafkaError::with_message(GROUP_ID_NOT_FOUND, Some("Group g not found.".into()))
                .java_string(),
            "org.apache.kafka.common.errors.GroupIdNotFoundException: Group g not found."
        );
    }

    #[test]
    fn empty_broker_message_means_default() {
        assert_eq!(
            KafkaError::with_message(NOT_COORDINATOR, Some(String::new())).message(),
            "This is not the correct coordinator."
        );
    }

    #[test]
    fn unknown_codes_fall_back_to_unknown_server_error() {
        let e = KafkaError::new(9999);
        assert_eq!(e.name(), "UNKNOWN(9999)");
        assert!(e
            .java_string()
            .starts_with("org.apache.kafka.common.errors.UnknownServerException: "));
    }

    #[test]
    fn every_code_of_the_one_table_renders_as_java_names_it() {
        for code in -1..=133 {
            let known = ErrorCode::from_code(code).expect("protocol's table covers -1..=133");
            let e = KafkaError::new(code);
            assert_eq!(e.name(), known.name());
            assert_eq!(e.message(), known.default_message());
            if code != 0 {
                assert!(!known.java_exception().is_empty(), "{known}");
                assert_eq!(
                    e.java_string(),
                    format!("{}: {}", known.java_exception(), known.default_message())
                );
            }
        }
        assert_eq!(
            KafkaError::new(GROUP_SUBSCRIBED_TO_TOPIC).name(),
            "GROUP_SUBSCRIBED_TO_TOPIC"
        );
    }
}
