//! Topic configs: the ones Cohort enforces, typed; the rest of Kafka's topic config names
//! accepted and kept so that tools passing them work; anything else refused, as Kafka does.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `retention.ms` default (Kafka: 7 days).
pub const DEFAULT_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// `segment.bytes` default (Kafka: 1 GiB).
pub const DEFAULT_SEGMENT_BYTES: i64 = 1 << 30;
/// `segment.bytes` floor (Kafka 4.0: 1 MiB).
pub const MIN_SEGMENT_BYTES: i64 = 1 << 20;
/// `segment.ms` default (Kafka: 7 days).
pub const DEFAULT_SEGMENT_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// `max.message.bytes` default (Kafka: 1 MiB + 12).
pub const DEFAULT_MAX_MESSAGE_BYTES: i64 = 1_048_588;
/// Largest `max.message.bytes` Cohort takes: a record batch is one log entry, and the log
/// engine caps entries well below its 1 GiB format limit.
pub const MAX_MAX_MESSAGE_BYTES: i64 = 64 << 20;
/// Longest config value kept.
pub const MAX_CONFIG_VALUE_CHARS: usize = 4096;

/// Configs Cohort reads and enforces.
pub const ENFORCED: &[&str] = &[
    "cleanup.policy",
    "max.message.bytes",
    "retention.bytes",
    "retention.ms",
    "segment.bytes",
    "segment.ms",
    "message.timestamp.type",
];

/// Kafka topic configs accepted and stored without effect: replication and tiered-storage knobs
/// mean nothing on one replica, flush knobs are replaced by `--flush-ms`, and the compaction
/// tuning knobs have nothing to tune (see `CleanupPolicy::Compact`).
pub const ACCEPTED_WITHOUT_EFFECT: &[&str] = &[
    "compression.type",
    "delete.retention.ms",
    "file.delete.delay.ms",
    "flush.messages",
    "flush.ms",
    "follower.replication.throttled.replicas",
    "index.interval.bytes",
    "leader.replication.throttled.replicas",
    "local.retention.bytes",
    "local.retention.ms",
    "max.compaction.lag.ms",
    "message.downconversion.enable",
    "message.format.version",
    "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms",
    "message.timestamp.difference.max.ms",
    "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms",
    "min.insync.replicas",
    "preallocate",
    "remote.storage.enable",
    "segment.index.bytes",
    "segment.jitter.ms",
    "unclean.leader.election.enable",
];

/// `cleanup.policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanupPolicy {
    /// Segments are deleted by `retention.ms` / `retention.bytes`.
    Delete,
    /// Kafka keeps at least the latest record per key and never deletes by age or size.
    /// Cohort stores batches whole and does not yet rewrite them by key, so it keeps every
    /// record: a superset of what Kafka guarantees, at the cost of space.
    Compact,
    /// Both: retention deletes, compaction (as above) keeps.
    CompactDelete,
}

impl CleanupPolicy {
    /// Whether retention deletes segments.
    pub fn deletes(self) -> bool {
        matches!(self, CleanupPolicy::Delete | CleanupPolicy::CompactDelete)
    }
}

/// A config Kafka would refuse; the message is what the client sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not a Kafka topic config.
    #[error("Unknown topic config name: {0}")]
    Unknown(String),
    /// A value that does not parse or is out of range.
    #[error("Invalid value {value} for configuration {name}: {rule}")]
    InvalidValue {
        /// The config.
        name: String,
        /// Its value.
        value: String,
        /// What it must be.
        rule: &'static str,
    },
    /// A config given without a value (null).
    #[error("Null value not supported for topic configs: {0}")]
    NullValue(String),
    /// APPEND or SUBTRACT on a config that is not a list.
    #[error("Can't {op} to key {name} because its type is not LIST.")]
    NotAList {
        /// The operation.
        op: &'static str,
        /// The config.
        name: String,
    },
}

/// One change of IncrementalAlterConfigs to a topic config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlterOp {
    /// Sets the value.
    Set(String),
    /// Removes the override: the default applies again.
    Delete,
    /// Adds the comma-separated items not already in a list config's value.
    Append(String),
    /// Removes the comma-separated items from a list config's value.
    Subtract(String),
}

impl AlterOp {
    /// Kafka's name of the operation, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            AlterOp::Set(_) => "SET",
            AlterOp::Delete => "DELETE",
            AlterOp::Append(_) => "APPEND",
            AlterOp::Subtract(_) => "SUBTRACT",
        }
    }
}

/// The configs a topic was created with (only the ones set; defaults are applied on read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TopicConfigs {
    set: BTreeMap<String, String>,
}

impl TopicConfigs {
    /// Validates `(name, value)` pairs as Kafka's `LogConfig.validate` would.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> Result<TopicConfigs, ConfigError> {
        let mut set = BTreeMap::new();
        for (name, value) in pairs {
            let value = value.ok_or_else(|| ConfigError::NullValue(name.to_string()))?;
            if !ENFORCED.contains(&name) && !ACCEPTED_WITHOUT_EFFECT.contains(&name) {
                return Err(ConfigError::Unknown(name.to_string()));
            }
            if value.len() > MAX_CONFIG_VALUE_CHARS {
                return Err(invalid(name, value, "at most 4096 characters"));
            }
            set.insert(name.to_string(), value.trim().to_string());
        }
        let configs = TopicConfigs { set };
        configs.check()?;
        Ok(configs)
    }

    fn check(&self) -> Result<(), ConfigError> {
        self.cleanup_policy()?;
        self.long("retention.ms", DEFAULT_RETENTION_MS, -1, i64::MAX)?;
        self.long("retention.bytes", -1, -1, i64::MAX)?;
        self.long(
            "segment.bytes",
            DEFAULT_SEGMENT_BYTES,
            MIN_SEGMENT_BYTES,
            i64::from(i32::MAX),
        )?;
        self.long("segment.ms", DEFAULT_SEGMENT_MS, 1, i64::MAX)?;
        self.long(
            "max.message.bytes",
            DEFAULT_MAX_MESSAGE_BYTES,
            0,
            MAX_MAX_MESSAGE_BYTES,
        )?;
        if let Some(v) = self.set.get("message.timestamp.type") {
            if v != "CreateTime" {
                return Err(invalid(
                    "message.timestamp.type",
                    v,
                    "CreateTime (LogAppendTime is not supported by Cohort)",
                ));
            }
        }
        Ok(())
    }

    fn long(&self, name: &str, default: i64, min: i64, max: i64) -> Result<i64, ConfigError> {
        match self.set.get(name) {
            None => Ok(default),
            Some(v) => match v.parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(n),
                _ => Err(invalid(name, v, range_rule(name))),
            },
        }
    }

    /// These configs after IncrementalAlterConfigs' `ops` (in order), validated as a whole
    /// as Kafka validates the resulting topic config.
    pub fn altered(&self, ops: &[(String, AlterOp)]) -> Result<TopicConfigs, ConfigError> {
        let mut set = self.set.clone();
        for (name, op) in ops {
            let Some(key) = super::config_keys::topic_key(name) else {
                return Err(ConfigError::Unknown(name.clone()));
            };
            match op {
                AlterOp::Set(v) => {
                    set.insert(name.clone(), v.clone());
                }
                AlterOp::Delete => {
                    set.remove(name);
                }
                AlterOp::Append(v) | AlterOp::Subtract(v) => {
                    if key.kind != super::config_keys::ConfigType::List {
                        return Err(ConfigError::NotAList {
                            op: op.name(),
                            name: name.clone(),
                        });
                    }
                    let current = set
                        .get(name)
                        .map(String::as_str)
                        .or(key.default)
                        .unwrap_or("");
                    let mut items = list_items(current);
                    let given = list_items(v);
                    if matches!(op, AlterOp::Append(_)) {
                        for item in given {
                            if !items.contains(&item) {
                                items.push(item);
                            }
                        }
                    } else {
                        items.retain(|i| !given.contains(i));
                    }
                    set.insert(name.clone(), items.join(","));
                }
            }
        }
        TopicConfigs::from_pairs(set.iter().map(|(k, v)| (k.as_str(), Some(v.as_str()))))
    }

    /// The explicitly set configs, by name.
    pub fn set_values(&self) -> &BTreeMap<String, String> {
        &self.set
    }

    /// Every enforced config with its effective value and whether it was set on the topic.
    pub fn effective(&self) -> Vec<(&'static str, String, bool)> {
        ENFORCED
            .iter()
            .map(|name| {
                let set = self.set.get(*name);
                let value = set
                    .cloned()
                    .unwrap_or_else(|| default_value(name).to_string());
                (*name, value, set.is_some())
            })
            .collect()
    }

    /// `cleanup.policy`.
    pub fn cleanup_policy(&self) -> Result<CleanupPolicy, ConfigError> {
        let Some(v) = self.set.get("cleanup.policy") else {
            return Ok(CleanupPolicy::Delete);
        };
        let mut parts: Vec<&str> = v.split(',').map(str::trim).collect();
        parts.sort_unstable();
        parts.dedup();
        match parts.as_slice() {
            ["delete"] => Ok(CleanupPolicy::Delete),
            ["compact"] => Ok(CleanupPolicy::Compact),
            ["compact", "delete"] => Ok(CleanupPolicy::CompactDelete),
            _ => Err(invalid("cleanup.policy", v, "a list of delete and compact")),
        }
    }

    /// `retention.ms`; `None` for unlimited (-1).
    pub fn retention_ms(&self) -> Option<i64> {
        let v = self
            .long("retention.ms", DEFAULT_RETENTION_MS, -1, i64::MAX)
            .unwrap_or(DEFAULT_RETENTION_MS);
        (v >= 0).then_some(v)
    }

    /// `retention.bytes`; `None` for unlimited (-1).
    pub fn retention_bytes(&self) -> Option<u64> {
        let v = self.long("retention.bytes", -1, -1, i64::MAX).unwrap_or(-1);
        u64::try_from(v).ok()
    }

    /// `segment.bytes`.
    pub fn segment_bytes(&self) -> u64 {
        let v = self
            .long(
                "segment.bytes",
                DEFAULT_SEGMENT_BYTES,
                MIN_SEGMENT_BYTES,
                i64::from(i32::MAX),
            )
            .unwrap_or(DEFAULT_SEGMENT_BYTES);
        u64::try_from(v).unwrap_or(1 << 30)
    }

    /// `segment.ms`.
    pub fn segment_ms(&self) -> i64 {
        self.long("segment.ms", DEFAULT_SEGMENT_MS, 1, i64::MAX)
            .unwrap_or(DEFAULT_SEGMENT_MS)
    }

    /// `max.message.bytes`: the largest record batch a Produce may carry.
    pub fn max_message_bytes(&self) -> usize {
        let v = self
            .long(
                "max.message.bytes",
                DEFAULT_MAX_MESSAGE_BYTES,
                0,
                MAX_MAX_MESSAGE_BYTES,
            )
            .unwrap_or(DEFAULT_MAX_MESSAGE_BYTES);
        usize::try_from(v).unwrap_or(1 << 20)
    }
}

fn list_items(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .map(str::to_owned)
        .collect()
}

fn invalid(name: &str, value: &str, rule: &'static str) -> ConfigError {
    ConfigError::InvalidValue {
        name: name.to_string(),
        value: value.to_string(),
        rule,
    }
}

fn range_rule(name: &str) -> &'static str {
    match name {
        "retention.ms" | "retention.bytes" => "a number of at least -1",
        "segment.bytes" => "a number between 1048576 and 2147483647",
        "segment.ms" => "a number of at least 1",
        "max.message.bytes" => "a number between 0 and 67108864",
        _ => "a number in range",
    }
}

fn default_value(name: &str) -> String {
    match name {
        "cleanup.policy" => "delete".into(),
        "retention.ms" => DEFAULT_RETENTION_MS.to_string(),
        "retention.bytes" => "-1".into(),
        "segment.bytes" => DEFAULT_SEGMENT_BYTES.to_string(),
        "segment.ms" => DEFAULT_SEGMENT_MS.to_string(),
        "max.message.bytes" => DEFAULT_MAX_MESSAGE_BYTES.to_string(),
        "message.timestamp.type" => "CreateTime".into(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<TopicConfigs, ConfigError> {
        TopicConfigs::from_pairs(pairs.iter().map(|(k, v)| (*k, Some(*v))))
    }

    #[test]
    fn defaults_apply_when_nothing_is_set() {
        let c = TopicConfigs::default();
        assert_eq!(c.retention_ms(), Some(DEFAULT_RETENTION_MS));
        assert_eq!(c.retention_bytes(), None);
        assert_eq!(c.segment_bytes(), 1 << 30);
        assert_eq!(c.cleanup_policy(), Ok(CleanupPolicy::Delete));
        assert_eq!(c.max_message_bytes(), 1_048_588);
    }

    #[test]
    fn enforced_values_are_parsed_and_checked() {
        let c = parse(&[
            ("retention.ms", "-1"),
            ("retention.bytes", "5000000"),
            ("segment.bytes", "2097152"),
            ("cleanup.policy", "delete,compact"),
        ])
        .unwrap();
        assert_eq!(c.retention_ms(), None);
        assert_eq!(c.retention_bytes(), Some(5_000_000));
        assert_eq!(c.segment_bytes(), 2_097_152);
        assert_eq!(c.cleanup_policy(), Ok(CleanupPolicy::CompactDelete));
        for (k, v) in [
            ("retention.ms", "soon"),
            ("retention.ms", "-2"),
            ("segment.bytes", "100"),
            ("cleanup.policy", "shred"),
            ("message.timestamp.type", "LogAppendTime"),
        ] {
            assert!(
                matches!(parse(&[(k, v)]), Err(ConfigError::InvalidValue { .. })),
                "{k}={v}"
            );
        }
    }

    #[test]
    fn unknown_names_and_null_values_are_refused_like_kafka() {
        assert_eq!(
            parse(&[("retention.forever", "1")]),
            Err(ConfigError::Unknown("retention.forever".into()))
        );
        assert!(matches!(
            TopicConfigs::from_pairs([("retention.ms", None)]),
            Err(ConfigError::NullValue(_))
        ));
        assert!(parse(&[("min.insync.replicas", "2")]).is_ok());
    }

    #[test]
    fn incremental_operations_follow_kafka() {
        let c = parse(&[("retention.ms", "1000"), ("cleanup.policy", "delete")]).unwrap();
        let op = |n: &str, o: AlterOp| (n.to_string(), o);
        let after = c
            .altered(&[
                op("retention.ms", AlterOp::Delete),
                op("segment.bytes", AlterOp::Set("2097152".into())),
                op("cleanup.policy", AlterOp::Append("compact,delete".into())),
            ])
            .unwrap();
        assert_eq!(after.retention_ms(), Some(DEFAULT_RETENTION_MS));
        assert_eq!(after.segment_bytes(), 2_097_152);
        assert_eq!(
            after.set_values().get("cleanup.policy").map(String::as_str),
            Some("delete,compact")
        );
        let after = after
            .altered(&[op("cleanup.policy", AlterOp::Subtract("delete".into()))])
            .unwrap();
        assert_eq!(after.cleanup_policy(), Ok(CleanupPolicy::Compact));
        // APPEND to an unset list starts from the default.
        let fresh = TopicConfigs::default()
            .altered(&[op("cleanup.policy", AlterOp::Append("compact".into()))])
            .unwrap();
        assert_eq!(fresh.cleanup_policy(), Ok(CleanupPolicy::CompactDelete));
        assert_eq!(
            c.altered(&[op("retention.ms", AlterOp::Append("1".into()))]),
            Err(ConfigError::NotAList {
                op: "APPEND",
                name: "retention.ms".into()
            })
        );
        assert_eq!(
            c.altered(&[op("no.such", AlterOp::Delete)]),
            Err(ConfigError::Unknown("no.such".into()))
        );
        // Subtracting every policy leaves an empty list, which no topic may have.
        assert!(matches!(
            c.altered(&[op("cleanup.policy", AlterOp::Subtract("delete".into()))]),
            Err(ConfigError::InvalidValue { .. })
        ));
        assert!(matches!(
            c.altered(&[op("segment.bytes", AlterOp::Set("12".into()))]),
            Err(ConfigError::InvalidValue { .. })
        ));
    }
}
