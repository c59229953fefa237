//! What DescribeConfigs lists and what the alter APIs may change, per resource type: shared by
//! `describe_configs`, `incremental_alter_configs` and `alter_configs`.
//!
//! ```text
//!  TOPIC  t      every accepted topic config: t's override (DYNAMIC_TOPIC_CONFIG) or Kafka's
//!                default (DEFAULT_CONFIG, under the broker synonym Kafka names); alterable
//!  BROKER <id>   this node's settings under Kafka's names: STATIC_BROKER_CONFIG when a flag
//!                changed it, else DEFAULT_CONFIG, read-only; and the replicated cluster
//!                configuration's keys (decision 0115), alterable through the empty name
//!  BROKER ""     the cluster-wide dynamic defaults, as Kafka lists them (DYNAMIC_DEFAULT_
//!                BROKER_CONFIG); IncrementalAlterConfigs/AlterConfigs change them
//!  GROUP  g      consumer.session.timeout.ms, consumer.heartbeat.interval.ms: g's override
//!                (GROUP_CONFIG) or the broker's value (DEFAULT_CONFIG); `group_configs.rs`
//!  other types   INVALID_REQUEST
//! ```

use coordinator::config::keys::{Source, KEYS};
use coordinator::ConfigChange;
use protocol::ErrorCode;

use crate::broker::Broker;
use crate::config::BrokerConfig;
use crate::errors::code_and_message;
use crate::replicated::cluster_config::{AlterError, ClusterConfigs};
use crate::topics::config_keys::{ConfigType, TOPIC_KEYS};
use crate::topics::TopicSpec;

/// Kafka's `ConfigResource.Type` codes.
pub const RESOURCE_TOPIC: i8 = 2;
/// `BROKER`.
pub const RESOURCE_BROKER: i8 = 4;
/// `BROKER_LOGGER`.
pub const RESOURCE_BROKER_LOGGER: i8 = 8;
/// `GROUP`.
pub const RESOURCE_GROUP: i8 = 32;

/// Kafka's `DescribeConfigsResponse.ConfigSource` codes.
pub const SOURCE_DYNAMIC_TOPIC_CONFIG: i8 = 1;
/// `DYNAMIC_DEFAULT_BROKER_CONFIG`.
pub const SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
/// `STATIC_BROKER_CONFIG`.
pub const SOURCE_STATIC_BROKER_CONFIG: i8 = 4;
/// `DEFAULT_CONFIG`.
pub const SOURCE_DEFAULT_CONFIG: i8 = 5;

/// One described config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Kafka's name.
    pub name: String,
    /// The effective value (`None`: no value, as Kafka reports a null default).
    pub value: Option<String>,
    /// Where the value comes from.
    pub source: i8,
    /// Whether it cannot be changed while running.
    pub read_only: bool,
    /// Kafka's type code.
    pub kind: i8,
    /// Every layer that sets it, most specific first: `(name, value, source)`.
    pub synonyms: Vec<(String, Option<String>, i8)>,
    /// What it does.
    pub doc: &'static str,
}

/// Every topic config of `spec`, by name.
pub fn topic_entries(spec: &TopicSpec) -> Vec<Entry> {
    let set = spec.configs.set_values();
    TOPIC_KEYS
        .iter()
        .map(|key| {
            let own = set.get(key.name);
            let mut synonyms = Vec::new();
            if let Some(v) = own {
                synonyms.push((
                    key.name.to_owned(),
                    Some(v.clone()),
                    SOURCE_DYNAMIC_TOPIC_CONFIG,
                ));
            }
            if let Some((broker_name, value)) = key.default_synonym {
                synonyms.push((
                    broker_name.to_owned(),
                    Some(value.to_owned()),
                    SOURCE_DEFAULT_CONFIG,
                ));
            }
            Entry {
                name: key.name.to_owned(),
                value: own.cloned().or_else(|| key.default.map(str::to_owned)),
                source: if own.is_some() {
                    SOURCE_DYNAMIC_TOPIC_CONFIG
                } else {
                    SOURCE_DEFAULT_CONFIG
                },
                read_only: false,
                kind: key.kind.code(),
                synonyms,
                doc: key.doc,
            }
        })
        .collect()
}

/// A BROKER resource name, resolved against this node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerTarget {
    /// This node's id.
    Node,
    /// The empty name: the cluster-wide default.
    ClusterDefault,
}

/// Resolves a BROKER resource name as Kafka does: the empty name or this node's id.
pub fn broker_target(name: &str, node_id: i32) -> Result<BrokerTarget, (ErrorCode, String)> {
    if name.is_empty() {
        return Ok(BrokerTarget::ClusterDefault);
    }
    match name.parse::<i32>() {
        Ok(id) if id == node_id => Ok(BrokerTarget::Node),
        Ok(_) => Err((
            ErrorCode::InvalidRequest,
            format!(
                "Unexpected broker id, expected {node_id} or empty string, but received {name}"
            ),
        )),
        Err(_) => Err((
            ErrorCode::InvalidRequest,
            format!("Broker id must be an integer, but it is: {name}"),
        )),
    }
}

/// The code and message for a resource type neither described nor altered here.
pub fn unserved_resource(resource_type: i8) -> (ErrorCode, String) {
    let what = match resource_type {
        RESOURCE_BROKER_LOGGER => "BROKER_LOGGER resources (log levels) are",
        _ => "this resource type is",
    };
    (
        ErrorCode::InvalidRequest,
        format!("{what} not served by this version of Cohort (resource type {resource_type})"),
    )
}

/// Why altering a BROKER resource is refused: no broker config is dynamically alterable in
/// this version (the flags are read at start).
pub fn broker_alter_refusal(keys: &[String]) -> (ErrorCode, String) {
    (
        ErrorCode::InvalidConfig,
        format!(
            "Cannot update these configs dynamically: [{}]; broker configs are not \
             dynamically alterable in this version of Cohort (set them as flags of \
             `cohort serve`)",
            keys.join(", ")
        ),
    )
}

/// The replicated cluster configuration's keys with their values in force (only the
/// dynamically set ones with `only_dynamic`, as Kafka lists the empty broker name); none on a
/// broker without the Raft meta service (handler unit tests).
pub fn cluster_entries(broker: &Broker, only_dynamic: bool) -> Vec<Entry> {
    let Some(groups) = &broker.groups else {
        return Vec::new();
    };
    ClusterConfigs::new(groups.node().clone())
        .entries()
        .into_iter()
        .filter(|e| !only_dynamic || e.source == Source::Dynamic)
        .map(|e| {
            let source = match e.source {
                Source::Dynamic => SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG,
                Source::Static => SOURCE_STATIC_BROKER_CONFIG,
                Source::Default => SOURCE_DEFAULT_CONFIG,
            };
            let value = Some(e.key.render(e.value));
            Entry {
                name: e.key.name.to_owned(),
                value: value.clone(),
                source,
                read_only: false,
                kind: if !e.key.names.is_empty() {
                    ConfigType::String.code()
                } else if e.key.name.ends_with("check.interval.ms") {
                    ConfigType::Long.code()
                } else {
                    ConfigType::Int.code()
                },
                synonyms: vec![(e.key.name.to_owned(), value, source)],
                doc: e.key.doc,
            }
        })
        .collect()
}

/// Alters BROKER resource `target`: `changes` are `(key, value)`, `None` removing the dynamic
/// value; `replace` (AlterConfigs) also removes every dynamic value not named. Only the
/// replicated cluster configuration's keys change, and only through the empty name (they
/// are cluster-wide); every other broker config is read from flags at start.
pub async fn alter_broker(
    broker: &Broker,
    target: BrokerTarget,
    changes: Vec<(String, Option<String>)>,
    replace: bool,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    let (cluster, other): (Vec<_>, Vec<_>) = changes
        .into_iter()
        .partition(|(k, _)| KEYS.iter().any(|key| key.name == k));
    if !other.is_empty() {
        return Err(broker_alter_refusal(
            &other.into_iter().map(|(k, _)| k).collect::<Vec<_>>(),
        ));
    }
    let Some(groups) = &broker.groups else {
        return Err(broker_alter_refusal(
            &cluster.into_iter().map(|(k, _)| k).collect::<Vec<_>>(),
        ));
    };
    if target == BrokerTarget::Node {
        return Err((
            ErrorCode::InvalidConfig,
            format!(
                "[{}] are cluster-wide only: alter them on the empty broker name (the \
                 cluster default)",
                cluster
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let mut parsed = Vec::with_capacity(cluster.len());
    for (key, value) in &cluster {
        let value = match value {
            None => None,
            Some(v) => {
                let parsed = KEYS.iter().find(|k| k.name == key).and_then(|k| k.parse(v));
                Some(parsed.ok_or_else(|| {
                    let expected = KEYS
                        .iter()
                        .find(|k| k.name == key)
                        .filter(|k| !k.names.is_empty())
                        .map_or_else(
                            || "not an integer".to_owned(),
                            |k| format!("String must be one of: {}", k.names.join(", ")),
                        );
                    (
                        ErrorCode::InvalidConfig,
                        format!("Invalid value {v} for configuration {key}: {expected}"),
                    )
                })?)
            }
        };
        parsed.push(ConfigChange {
            key: key.clone(),
            value,
        });
    }
    let configs = ClusterConfigs::new(groups.node().clone());
    if replace {
        for e in configs.entries() {
            if e.source == Source::Dynamic && !parsed.iter().any(|c| c.key == e.key.name) {
                parsed.push(ConfigChange {
                    key: e.key.name.to_owned(),
                    value: None,
                });
            }
        }
    }
    match configs.alter(parsed, validate_only).await {
        Ok(_) => Ok(()),
        Err(AlterError::Invalid(e)) => Err((ErrorCode::InvalidConfig, e.to_string())),
        Err(AlterError::Unavailable(e)) => Err(code_and_message(e)),
    }
}

struct BrokerKey {
    name: &'static str,
    kind: ConfigType,
    /// Cohort's default (`None`: unset by default).
    default: Option<String>,
    value: Option<String>,
    doc: &'static str,
}

/// This node's settings under Kafka's broker config names, by name.
pub fn broker_entries(config: &BrokerConfig) -> Vec<Entry> {
    let s = |v: &str| Some(v.to_owned());
    let n = |v: i64| Some(v.to_string());
    let limits = &config.connection_limits;
    let keys = [
        BrokerKey {
            name: "advertised.listeners",
            kind: ConfigType::String,
            default: None,
            value: Some(format!(
                "PLAINTEXT://{}:{}",
                config.advertised_host, config.advertised_port
            )),
            doc: "The address clients are given in Metadata (--advertise, or the listener).",
        },
        BrokerKey {
            name: "auto.create.topics.enable",
            kind: ConfigType::Boolean,
            default: s("true"),
            value: Some(config.auto_create_topics.to_string()),
            doc: "Whether Metadata for an unknown topic creates it (--auto-create-topics).",
        },
        BrokerKey {
            name: "broker.id",
            kind: ConfigType::Int,
            default: n(1),
            value: n(i64::from(config.node_id)),
            doc: "This node's id (--node-id).",
        },
        BrokerKey {
            name: "log.cleanup.policy",
            kind: ConfigType::List,
            default: s("delete"),
            value: s("delete"),
            doc: "The cleanup policy of topics that set none.",
        },
        BrokerKey {
            name: "log.dirs",
            kind: ConfigType::String,
            default: s("./data"),
            value: Some(config.data_dir.display().to_string()),
            doc: "Where topic data and metadata live (--data-dir).",
        },
        BrokerKey {
            name: "log.flush.interval.ms",
            kind: ConfigType::Long,
            default: None,
            value: config
                .flush_interval
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX).to_string()),
            doc: "Unset: every acknowledged write is fsynced. Set (--flush-ms): writes are \
                  acknowledged at once and fsynced this often.",
        },
        BrokerKey {
            name: "log.message.timestamp.type",
            kind: ConfigType::String,
            default: s("CreateTime"),
            value: s("CreateTime"),
            doc: "The timestamp type of topics that set none.",
        },
        BrokerKey {
            name: "log.retention.bytes",
            kind: ConfigType::Long,
            default: n(-1),
            value: n(-1),
            doc: "The retention.bytes of topics that set none.",
        },
        BrokerKey {
            name: "log.retention.check.interval.ms",
            kind: ConfigType::Long,
            default: n(300_000),
            value: n(i64::try_from(config.retention_check_interval.as_millis()).unwrap_or(i64::MAX)),
            doc: "How often retention runs (--retention-check-ms).",
        },
        BrokerKey {
            name: "log.retention.hours",
            kind: ConfigType::Int,
            default: n(168),
            value: n(168),
            doc: "The retention of topics that set no retention.ms.",
        },
        BrokerKey {
            name: "log.roll.hours",
            kind: ConfigType::Int,
            default: n(168),
            value: n(168),
            doc: "The segment.ms of topics that set none.",
        },
        BrokerKey {
            name: "log.segment.bytes",
            kind: ConfigType::Int,
            default: n(1 << 30),
            value: n(1 << 30),
            doc: "The segment.bytes of topics that set none.",
        },
        BrokerKey {
            name: "max.connections",
            kind: ConfigType::Int,
            default: n(1024),
            value: n(i64::try_from(limits.max_connections).unwrap_or(i64::MAX)),
            doc: "Most client connections open at once (--max-connections).",
        },
        BrokerKey {
            name: "message.max.bytes",
            kind: ConfigType::Int,
            default: n(1_048_588),
            value: n(1_048_588),
            doc: "The max.message.bytes of topics that set none.",
        },
        BrokerKey {
            name: "node.id",
            kind: ConfigType::Int,
            default: n(1),
            value: n(i64::from(config.node_id)),
            doc: "This node's id (--node-id).",
        },
        BrokerKey {
            name: "num.partitions",
            kind: ConfigType::Int,
            default: n(1),
            value: n(i64::from(config.default_num_partitions)),
            doc: "Partitions of auto-created topics and of CreateTopics asking for the default \
                  (--num-partitions).",
        },
        BrokerKey {
            name: "socket.request.max.bytes",
            kind: ConfigType::Int,
            default: n(i64::try_from(protocol::DEFAULT_MAX_FRAME_BYTES).unwrap_or(i64::MAX)),
            value: n(i64::try_from(limits.max_frame_bytes).unwrap_or(i64::MAX)),
            doc: "The largest request accepted (--max-frame-bytes).",
        },
        BrokerKey {
            name: "transaction.partition.verification.enable",
            kind: ConfigType::Boolean,
            default: s("true"),
            value: Some(config.txn_partition_verification.to_string()),
            doc: "Whether a transaction's first batch in a partition is verified against the \
                  transaction coordinator (--transaction-partition-verification-enable).",
        },
    ];
    keys.into_iter()
        .map(|k| {
            let is_default = k.value == k.default;
            let source = if is_default {
                SOURCE_DEFAULT_CONFIG
            } else {
                SOURCE_STATIC_BROKER_CONFIG
            };
            let mut synonyms = Vec::new();
            if !is_default {
                synonyms.push((
                    k.name.to_owned(),
                    k.value.clone(),
                    SOURCE_STATIC_BROKER_CONFIG,
                ));
            }
            if k.default.is_some() {
                synonyms.push((k.name.to_owned(), k.default.clone(), SOURCE_DEFAULT_CONFIG));
            }
            Entry {
                name: k.name.to_owned(),
                value: k.value,
                source,
                read_only: true,
                kind: k.kind.code(),
                synonyms,
                doc: k.doc,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_names_resolve_as_kafka_resolves_them() {
        assert_eq!(broker_target("", 3), Ok(BrokerTarget::ClusterDefault));
        assert_eq!(broker_target("3", 3), Ok(BrokerTarget::Node));
        assert_eq!(
            broker_target("4", 3).unwrap_err().0,
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            broker_target("x", 3).unwrap_err().0,
            ErrorCode::InvalidRequest
        );
    }
}
