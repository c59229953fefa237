//! The GROUP config resource (type 32) of DescribeConfigs, IncrementalAlterConfigs and
//! AlterConfigs, as Kafka 4.x serves it (decision 0146): `consumer.session.timeout.ms` and
//! `consumer.heartbeat.interval.ms`, each the group's override (GROUP_CONFIG) or the broker's
//! `group.consumer.*` value (DEFAULT_CONFIG), never read-only; a change is validated by the
//! coordinator against the broker's bounds and replicated.

use coordinator::group_config::{
    self, AlterGroupConfigs, GroupConfigError, GroupConfigOp, GROUP_CONFIG_KEYS,
};
use coordinator::GroupId;
use protocol::ErrorCode;

use super::config_entries::{Entry, SOURCE_DEFAULT_CONFIG};
use super::group_common::groups;
use super::RequestContext;

/// Kafka's `ConfigSource.GROUP_CONFIG`.
pub const SOURCE_GROUP_CONFIG: i8 = 8;
/// Kafka's `ConfigType.INT`.
const TYPE_INT: i8 = 3;

/// Every group config of `name`, by name (DescribeConfigs).
pub fn describe(ctx: &RequestContext, name: &str) -> Result<Vec<Entry>, (ErrorCode, String)> {
    if name.is_empty() {
        return Err((
            ErrorCode::InvalidRequest,
            "Group name must not be empty".to_owned(),
        ));
    }
    let g = groups(ctx).map_err(|e| (ErrorCode::CoordinatorNotAvailable, e.to_string()))?;
    let (config, overrides) = g.group_configs(&GroupId::new(name));
    Ok(GROUP_CONFIG_KEYS
        .iter()
        .map(|key| {
            let own = overrides.as_ref().and_then(|o| o.get(key.name)).cloned();
            let source = if own.is_some() {
                SOURCE_GROUP_CONFIG
            } else {
                SOURCE_DEFAULT_CONFIG
            };
            let value = group_config::effective(&config, overrides.as_ref(), key.name)
                .map(|v| v.to_string());
            Entry {
                name: key.name.to_owned(),
                value: value.clone(),
                source,
                read_only: false,
                kind: TYPE_INT,
                synonyms: vec![(key.name.to_owned(), value, source)],
                doc: key.doc,
            }
        })
        .collect())
}

/// One requested change of a key: IncrementalAlterConfigs' operations, AlterConfigs' values.
pub enum Change {
    Set(String),
    Delete,
    Append(String),
    Subtract(String),
}

/// Alters `name`'s overrides: `replace` (AlterConfigs) makes them exactly the `Set` values.
pub async fn alter(
    ctx: &RequestContext,
    name: &str,
    changes: Vec<(String, Change)>,
    replace: bool,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    let change = AlterGroupConfigs {
        group_id: GroupId::new(name),
        ops: changes
            .into_iter()
            .map(|(k, c)| {
                let op = match c {
                    Change::Set(v) => GroupConfigOp::Set(v),
                    Change::Delete => GroupConfigOp::Delete,
                    Change::Append(v) => GroupConfigOp::Append(v),
                    Change::Subtract(v) => GroupConfigOp::Subtract(v),
                };
                (k, op)
            })
            .collect(),
        replace,
    };
    let g = groups(ctx).map_err(|e| (ErrorCode::CoordinatorNotAvailable, e.to_string()))?;
    // Checked here first (validate_only stops there); the leader checks again where the
    // command applies, against the state of that moment.
    g.check_group_configs(&change).map_err(refusal)?;
    if validate_only {
        return Ok(());
    }
    let altered = g.alter_group_configs(change).await?.map_err(refusal)?;
    tracing::info!(group = %name, configs = ?altered, "altered group configs");
    Ok(())
}

fn refusal(e: GroupConfigError) -> (ErrorCode, String) {
    match e {
        GroupConfigError::InvalidConfig(m) => (ErrorCode::InvalidConfig, m),
        GroupConfigError::InvalidRequest(m) => (ErrorCode::InvalidRequest, m),
    }
}
