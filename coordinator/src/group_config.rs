//! Per-group configuration overrides (Kafka 4.x's `GroupConfig`, the GROUP resource of
//! DescribeConfigs / IncrementalAlterConfigs / AlterConfigs): what a group's consumer-protocol
//! members get instead of the broker-wide `group.consumer.session.timeout.ms` and
//! `group.consumer.heartbeat.interval.ms`.
//!
//! ```text
//!   AlterGroupConfigs { group, ops | replace } ─ decide_alter (pure) ─▶ GroupConfig record (key 10)
//!   replay ─▶ GroupIndex.group_configs ─▶ heartbeat / session timer of the group's members
//!   DeleteGroups, expiry of the group ─▶ tombstone of its GroupConfig record
//! ```
//!
//! Validation follows Kafka's `GroupConfig.validate` on the group's overrides combined with the
//! broker's values: names known, values INT and at least 1, each within the broker's
//! `group.consumer.{min,max}.*` bounds, the session timeout above the heartbeat interval, with
//! Kafka's INVALID_CONFIG messages. Only the keys Cohort acts on are accepted (no share groups).

use crate::config::Config;
use crate::ids::GroupId;
use crate::record::Record;
use serde::{Deserialize, Serialize};

/// `consumer.session.timeout.ms`.
pub const CONSUMER_SESSION_TIMEOUT_MS: &str = "consumer.session.timeout.ms";
/// `consumer.heartbeat.interval.ms`.
pub const CONSUMER_HEARTBEAT_INTERVAL_MS: &str = "consumer.heartbeat.interval.ms";

/// One group config key: its name and documentation (every key is INT, at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupConfigKey {
    pub name: &'static str,
    pub doc: &'static str,
}

/// The keys Cohort serves on the GROUP resource, in name order.
pub const GROUP_CONFIG_KEYS: [GroupConfigKey; 2] = [
    GroupConfigKey {
        name: CONSUMER_HEARTBEAT_INTERVAL_MS,
        doc: "The heartbeat interval given to the members of this consumer group.",
    },
    GroupConfigKey {
        name: CONSUMER_SESSION_TIMEOUT_MS,
        doc: "The timeout to detect client failures when using the consumer group protocol.",
    },
];

pub use crate::record::group_config::GroupConfigs;

/// An IncrementalAlterConfigs operation on one key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GroupConfigOp {
    Set(String),
    Delete,
    Append(String),
    Subtract(String),
}

/// IncrementalAlterConfigs (`ops`) or AlterConfigs (`replace`: the overrides become exactly
/// the `Set` values) on one GROUP resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlterGroupConfigs {
    pub group_id: GroupId,
    pub ops: Vec<(String, GroupConfigOp)>,
    pub replace: bool,
}

/// Why an alteration was refused: Kafka's error and message. Nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GroupConfigError {
    /// INVALID_CONFIG.
    InvalidConfig(String),
    /// INVALID_REQUEST.
    InvalidRequest(String),
}

impl GroupConfigError {
    pub fn message(&self) -> &str {
        match self {
            GroupConfigError::InvalidConfig(m) | GroupConfigError::InvalidRequest(m) => m,
        }
    }
}

/// A bound and Kafka's name for it.
type Bound = (i32, &'static str);

/// The broker-wide value a key falls back to, and its bounds (Kafka's names for both).
fn broker_value(config: &Config, name: &str) -> Option<(i32, Bound, Bound)> {
    match name {
        CONSUMER_SESSION_TIMEOUT_MS => Some((
            config.consumer_session_timeout_ms,
            (
                config.consumer_session_timeout_min_ms,
                "group.consumer.min.session.timeout.ms",
            ),
            (
                config.consumer_session_timeout_max_ms,
                "group.consumer.max.session.timeout.ms",
            ),
        )),
        CONSUMER_HEARTBEAT_INTERVAL_MS => Some((
            config.consumer_heartbeat_interval_ms,
            (
                config.consumer_heartbeat_interval_min_ms,
                "group.consumer.min.heartbeat.interval.ms",
            ),
            (
                config.consumer_heartbeat_interval_max_ms,
                "group.consumer.max.heartbeat.interval.ms",
            ),
        )),
        _ => None,
    }
}

/// The value of `name` for a group with `overrides`: its override, else the broker's.
pub fn effective(config: &Config, overrides: Option<&GroupConfigs>, name: &str) -> Option<i32> {
    let broker = broker_value(config, name)?.0;
    Some(
        overrides
            .and_then(|o| o.get(name))
            .and_then(|v| v.parse::<i32>().ok())
            .unwrap_or(broker),
    )
}

/// Kafka's `ConfigDef` parse of an INT with `atLeast(1)`: trimmed, decimal.
fn parse_int(name: &str, value: &str) -> Result<i32, GroupConfigError> {
    let invalid = |why: &str| {
        GroupConfigError::InvalidConfig(format!(
            "Invalid value {value} for configuration {name}: {why}"
        ))
    };
    let n: i32 = value
        .trim()
        .parse()
        .map_err(|_| invalid("Not a number of type INT"))?;
    if n < 1 {
        return Err(invalid("Value must be at least 1"));
    }
    Ok(n)
}

/// Validates a group's whole set of overrides against the broker's values and bounds, as
/// Kafka's `GroupConfig.validate` does, and returns it in canonical form.
pub fn validate(
    config: &Config,
    overrides: &GroupConfigs,
) -> Result<GroupConfigs, GroupConfigError> {
    let mut canonical = GroupConfigs::new();
    for (name, value) in overrides {
        if broker_value(config, name).is_none() {
            return Err(GroupConfigError::InvalidConfig(format!(
                "Unknown group config name: {name}"
            )));
        }
        canonical.insert(name.clone(), parse_int(name, value)?.to_string());
    }
    let value = |name| effective(config, Some(&canonical), name).unwrap_or(0);
    // Kafka's order: heartbeat bounds, session bounds, then session above heartbeat.
    for name in [CONSUMER_HEARTBEAT_INTERVAL_MS, CONSUMER_SESSION_TIMEOUT_MS] {
        let Some((_, (min, min_name), (max, max_name))) = broker_value(config, name) else {
            continue;
        };
        let v = value(name);
        if v < min {
            return Err(GroupConfigError::InvalidConfig(format!(
                "{name} must be greater than or equal to {min_name}"
            )));
        }
        if v > max {
            return Err(GroupConfigError::InvalidConfig(format!(
                "{name} must be less than or equal to {max_name}"
            )));
        }
    }
    if value(CONSUMER_SESSION_TIMEOUT_MS) <= value(CONSUMER_HEARTBEAT_INTERVAL_MS) {
        return Err(GroupConfigError::InvalidConfig(format!(
            "{CONSUMER_SESSION_TIMEOUT_MS} must be greater than {CONSUMER_HEARTBEAT_INTERVAL_MS}"
        )));
    }
    Ok(canonical)
}

/// The overrides `c` leaves the group with, validated; `current` is what it has now.
pub fn altered(
    config: &Config,
    current: Option<&GroupConfigs>,
    c: &AlterGroupConfigs,
) -> Result<GroupConfigs, GroupConfigError> {
    if c.group_id.is_empty() {
        return Err(GroupConfigError::InvalidRequest(
            "Default group resources are not allowed.".into(),
        ));
    }
    let mut next = if c.replace {
        GroupConfigs::new()
    } else {
        current.cloned().unwrap_or_default()
    };
    for (name, op) in &c.ops {
        match op {
            GroupConfigOp::Set(v) => {
                next.insert(name.clone(), v.clone());
            }
            GroupConfigOp::Delete => {
                next.remove(name);
            }
            GroupConfigOp::Append(_) | GroupConfigOp::Subtract(_) => {
                // Every group key is an INT (Kafka: "Can't APPEND to key … not LIST").
                let what = if matches!(op, GroupConfigOp::Append(_)) {
                    "APPEND"
                } else {
                    "SUBTRACT"
                };
                if broker_value(config, name).is_none() {
                    return Err(GroupConfigError::InvalidConfig(format!(
                        "Unknown group config name: {name}"
                    )));
                }
                return Err(GroupConfigError::InvalidConfig(format!(
                    "Can't {what} to key {name} because its type is not LIST."
                )));
            }
        }
    }
    validate(config, &next)
}

/// The record that makes `next` the group's overrides (a tombstone when empty), or none if
/// it already has exactly those.
pub fn record(
    current: Option<&GroupConfigs>,
    group_id: &GroupId,
    next: GroupConfigs,
) -> Option<Record> {
    let unchanged = match current {
        Some(c) => *c == next,
        None => next.is_empty(),
    };
    (!unchanged).then(|| Record::GroupConfig {
        group_id: group_id.clone(),
        value: (!next.is_empty()).then_some(next),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> AlterGroupConfigs {
        AlterGroupConfigs {
            group_id: GroupId::new("g"),
            ops: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), GroupConfigOp::Set((*v).to_owned())))
                .collect(),
            replace: false,
        }
    }

    fn err(c: &AlterGroupConfigs) -> String {
        altered(&Config::default(), None, c)
            .unwrap_err()
            .message()
            .to_owned()
    }

    #[test]
    fn kafka_messages_for_every_bad_value() {
        assert_eq!(
            err(&set(&[("consumer.session.timeout.ms", "abc")])),
            "Invalid value abc for configuration consumer.session.timeout.ms: Not a number of type INT"
        );
        assert_eq!(
            err(&set(&[("consumer.heartbeat.interval.ms", "0")])),
            "Invalid value 0 for configuration consumer.heartbeat.interval.ms: Value must be at least 1"
        );
        assert_eq!(
            err(&set(&[("consumer.session.timeout.ms", "1000")])),
            "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"
        );
        assert_eq!(
            err(&set(&[("consumer.session.timeout.ms", "60001")])),
            "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"
        );
        assert_eq!(
            err(&set(&[("consumer.heartbeat.interval.ms", "4999")])),
            "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"
        );
        assert_eq!(
            err(&set(&[("consumer.heartbeat.interval.ms", "15001")])),
            "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"
        );
        assert_eq!(
            err(&set(&[("share.session.timeout.ms", "45000")])),
            "Unknown group config name: share.session.timeout.ms"
        );
        let mut append = set(&[]);
        append.ops.push((
            CONSUMER_SESSION_TIMEOUT_MS.into(),
            GroupConfigOp::Append("1".into()),
        ));
        assert_eq!(
            err(&append),
            "Can't APPEND to key consumer.session.timeout.ms because its type is not LIST."
        );
        let mut empty = set(&[]);
        empty.group_id = GroupId::new("");
        assert!(matches!(
            altered(&Config::default(), None, &empty),
            Err(GroupConfigError::InvalidRequest(_))
        ));
    }

    #[test]
    fn session_must_exceed_heartbeat_with_widened_bounds() {
        let config = Config {
            consumer_session_timeout_min_ms: 1_000,
            consumer_heartbeat_interval_min_ms: 500,
            ..Config::default()
        };
        let c = set(&[
            ("consumer.session.timeout.ms", "6000"),
            ("consumer.heartbeat.interval.ms", "6000"),
        ]);
        assert_eq!(
            altered(&config, None, &c).unwrap_err().message(),
            "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"
        );
        let ok = altered(
            &config,
            None,
            &set(&[(" consumer.session.timeout.ms", "1")]),
        );
        assert!(ok.is_err(), "names are exact");
        let good = altered(
            &config,
            None,
            &set(&[
                ("consumer.session.timeout.ms", " 2000 "),
                ("consumer.heartbeat.interval.ms", "500"),
            ]),
        )
        .unwrap();
        assert_eq!(
            good.get(CONSUMER_SESSION_TIMEOUT_MS).map(String::as_str),
            Some("2000")
        );
        assert_eq!(
            effective(&config, Some(&good), CONSUMER_HEARTBEAT_INTERVAL_MS),
            Some(500)
        );
        assert_eq!(
            effective(&config, None, CONSUMER_HEARTBEAT_INTERVAL_MS),
            Some(5_000)
        );
    }

    #[test]
    fn delete_replace_and_unchanged() {
        let config = Config::default();
        let current: GroupConfigs =
            [(CONSUMER_SESSION_TIMEOUT_MS.to_owned(), "50000".to_owned())].into();
        let delete = AlterGroupConfigs {
            group_id: GroupId::new("g"),
            ops: vec![(CONSUMER_SESSION_TIMEOUT_MS.into(), GroupConfigOp::Delete)],
            replace: false,
        };
        let next = altered(&config, Some(&current), &delete).unwrap();
        assert!(next.is_empty());
        assert_eq!(
            record(Some(&current), &delete.group_id, next),
            Some(Record::GroupConfig {
                group_id: GroupId::new("g"),
                value: None
            })
        );
        let mut replace = set(&[(CONSUMER_HEARTBEAT_INTERVAL_MS, "6000")]);
        replace.replace = true;
        let next = altered(&config, Some(&current), &replace).unwrap();
        assert_eq!(next.len(), 1);
        assert!(next.contains_key(CONSUMER_HEARTBEAT_INTERVAL_MS));
        let same = altered(&config, Some(&current), &set(&[])).unwrap();
        assert_eq!(record(Some(&current), &delete.group_id, same), None);
        assert_eq!(record(None, &delete.group_id, GroupConfigs::new()), None);
    }
}
