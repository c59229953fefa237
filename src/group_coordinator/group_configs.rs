//! The GROUP config resource (decision 0146): a group's overrides read from this node's
//! applied state (any node answers DescribeConfigs, as Kafka's brokers answer from their
//! metadata), and changed through the Raft leader from any node (as Kafka forwards to its
//! controller), validated by the coordinator where the command applies.

use bytes::Bytes;
use coordinator::group_config::{AlterGroupConfigs, GroupConfigError, GroupConfigs};
use coordinator::{Config, GroupId};
use protocol::ErrorCode;
use raft_meta::cohort_app::{AppReply, Body, Envelope};
use raft_meta::WriteError;

use super::GroupCoordinator;

impl GroupCoordinator {
    /// The coordinator settings in force here and `group_id`'s overrides, if any.
    pub fn group_configs(&self, group_id: &GroupId) -> (Config, Option<GroupConfigs>) {
        self.node.read_local(|a| {
            let c = a.app.coordinator();
            (c.config().clone(), c.group_configs(group_id).cloned())
        })
    }

    /// What `change` would leave, validated against this node's state (`validate_only`).
    pub fn check_group_configs(
        &self,
        change: &AlterGroupConfigs,
    ) -> Result<GroupConfigs, GroupConfigError> {
        self.node
            .read_local(|a| a.app.coordinator().check_group_configs(change))
    }

    /// Replicates `change` through the leader; the inner result is the coordinator's answer
    /// where it applied, the outer one why it could not be replicated (Kafka's code, message).
    pub async fn alter_group_configs(
        &self,
        change: AlterGroupConfigs,
    ) -> Result<Result<GroupConfigs, GroupConfigError>, (ErrorCode, String)> {
        let bytes: Bytes = Envelope {
            origin: None,
            body: Body::AlterGroupConfigs(change),
        }
        .encode();
        let reply = self
            .node
            .write_via_leader(bytes)
            .await
            .map_err(|e| (write_error_code(&e), e.to_string()))?;
        match AppReply::decode(&reply) {
            Ok(AppReply::GroupConfigs(result)) => Ok(result),
            Ok(other) => Err((
                ErrorCode::UnknownServerError,
                format!("unexpected reply to AlterGroupConfigs: {other:?}"),
            )),
            Err(e) => Err((ErrorCode::KafkaStorageError, e.to_string())),
        }
    }
}

/// Kafka's answer to a config change its controller could not take: retriable codes for a
/// leader change or an unknown outcome.
fn write_error_code(e: &WriteError) -> ErrorCode {
    match e {
        WriteError::NotLeader { .. } | WriteError::Unavailable(_) | WriteError::ShuttingDown => {
            ErrorCode::NotController
        }
        WriteError::Busy | WriteError::Indeterminate(_) => ErrorCode::RequestTimedOut,
        _ => ErrorCode::KafkaStorageError,
    }
}
