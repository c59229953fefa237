//! Every topic config name Cohort accepts, as DescribeConfigs reports it: Kafka's type, Kafka's
//! default, the broker configs Kafka names as its synonyms, and whether Cohort acts on it.
//!
//! ```text
//!  DescribeConfigs TOPIC t ──► for each key (by name): value = t's override or the default
//!                                 source   DYNAMIC_TOPIC_CONFIG if overridden, else DEFAULT_CONFIG
//!                                 synonyms the override, then the broker default Kafka names
//! ```
//!
//! No broker flag of Cohort sets a topic default, so an unset topic config always reports
//! Kafka's default as `DEFAULT_CONFIG` under the broker synonym that carries it
//! (`retention.ms` → `log.retention.hours=168`), as a Kafka broker with an empty
//! `server.properties` does.

/// Kafka's `ConfigEntry.ConfigType` (DescribeConfigs v3+ `config_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigType {
    /// `BOOLEAN`.
    Boolean,
    /// `STRING`.
    String,
    /// `INT`.
    Int,
    /// `LONG`.
    Long,
    /// `DOUBLE`.
    Double,
    /// `LIST` (comma-separated): the only type APPEND and SUBTRACT apply to.
    List,
}

impl ConfigType {
    /// The wire value.
    pub fn code(self) -> i8 {
        match self {
            ConfigType::Boolean => 1,
            ConfigType::String => 2,
            ConfigType::Int => 3,
            ConfigType::Long => 5,
            ConfigType::Double => 6,
            ConfigType::List => 7,
        }
    }
}

/// One topic config key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicKey {
    /// The topic config name.
    pub name: &'static str,
    /// Kafka's type.
    pub kind: ConfigType,
    /// Kafka's default value (`None`: Kafka has none, reported as null).
    pub default: Option<&'static str>,
    /// The broker config (and its value) Kafka reports as the source of the default.
    pub default_synonym: Option<(&'static str, &'static str)>,
    /// Whether Cohort acts on the value (the others are kept and reported, without effect).
    pub enforced: bool,
    /// What it does, in Cohort.
    pub doc: &'static str,
}

const LONG_MAX: &str = "9223372036854775807";

const fn key(
    name: &'static str,
    kind: ConfigType,
    default: &'static str,
    default_synonym: Option<(&'static str, &'static str)>,
    enforced: bool,
    doc: &'static str,
) -> TopicKey {
    TopicKey {
        name,
        kind,
        default: Some(default),
        default_synonym,
        enforced,
        doc,
    }
}

const NO_EFFECT: &str = "Accepted and kept for compatibility; Cohort does not act on it.";

/// Every accepted topic config, by name.
pub const TOPIC_KEYS: &[TopicKey] = &[
    key(
        "cleanup.policy",
        ConfigType::List,
        "delete",
        Some(("log.cleanup.policy", "delete")),
        true,
        "delete: old segments are deleted by retention.ms and retention.bytes; compact: \
         Cohort keeps every record (it does not yet rewrite segments by key) and deletes none \
         by age or size.",
    ),
    key(
        "compression.type",
        ConfigType::String,
        "producer",
        Some(("compression.type", "producer")),
        false,
        NO_EFFECT,
    ),
    key(
        "delete.retention.ms",
        ConfigType::Long,
        "86400000",
        Some(("log.cleaner.delete.retention.ms", "86400000")),
        false,
        NO_EFFECT,
    ),
    key(
        "file.delete.delay.ms",
        ConfigType::Long,
        "60000",
        Some(("log.segment.delete.delay.ms", "60000")),
        false,
        NO_EFFECT,
    ),
    key(
        "flush.messages",
        ConfigType::Long,
        LONG_MAX,
        Some(("log.flush.interval.messages", LONG_MAX)),
        false,
        "Accepted for compatibility; Cohort fsyncs every acknowledged write, or every \
         --flush-ms.",
    ),
    key(
        "flush.ms",
        ConfigType::Long,
        LONG_MAX,
        None,
        false,
        "Accepted for compatibility; Cohort fsyncs every acknowledged write, or every \
         --flush-ms.",
    ),
    key(
        "follower.replication.throttled.replicas",
        ConfigType::List,
        "",
        None,
        false,
        NO_EFFECT,
    ),
    key(
        "index.interval.bytes",
        ConfigType::Int,
        "4096",
        Some(("log.index.interval.bytes", "4096")),
        false,
        NO_EFFECT,
    ),
    key(
        "leader.replication.throttled.replicas",
        ConfigType::List,
        "",
        None,
        false,
        NO_EFFECT,
    ),
    key(
        "local.retention.bytes",
        ConfigType::Long,
        "-2",
        Some(("log.local.retention.bytes", "-2")),
        false,
        NO_EFFECT,
    ),
    key(
        "local.retention.ms",
        ConfigType::Long,
        "-2",
        Some(("log.local.retention.ms", "-2")),
        false,
        NO_EFFECT,
    ),
    key(
        "max.compaction.lag.ms",
        ConfigType::Long,
        LONG_MAX,
        Some(("log.cleaner.max.compaction.lag.ms", LONG_MAX)),
        false,
        NO_EFFECT,
    ),
    key(
        "max.message.bytes",
        ConfigType::Int,
        "1048588",
        Some(("message.max.bytes", "1048588")),
        true,
        "The largest record batch a Produce may append to the topic (at most 67108864 in \
         Cohort).",
    ),
    key(
        "message.downconversion.enable",
        ConfigType::Boolean,
        "true",
        None,
        false,
        NO_EFFECT,
    ),
    key(
        "message.format.version",
        ConfigType::String,
        "3.0-IV1",
        None,
        false,
        NO_EFFECT,
    ),
    key(
        "message.timestamp.after.max.ms",
        ConfigType::Long,
        LONG_MAX,
        Some(("log.message.timestamp.after.max.ms", LONG_MAX)),
        false,
        NO_EFFECT,
    ),
    key(
        "message.timestamp.before.max.ms",
        ConfigType::Long,
        LONG_MAX,
        Some(("log.message.timestamp.before.max.ms", LONG_MAX)),
        false,
        NO_EFFECT,
    ),
    key(
        "message.timestamp.difference.max.ms",
        ConfigType::Long,
        LONG_MAX,
        None,
        false,
        NO_EFFECT,
    ),
    key(
        "message.timestamp.type",
        ConfigType::String,
        "CreateTime",
        Some(("log.message.timestamp.type", "CreateTime")),
        true,
        "Which timestamp the log keeps: CreateTime (the producer's). LogAppendTime is refused \
         by Cohort.",
    ),
    key(
        "min.cleanable.dirty.ratio",
        ConfigType::Double,
        "0.5",
        Some(("log.cleaner.min.cleanable.ratio", "0.5")),
        false,
        NO_EFFECT,
    ),
    key(
        "min.compaction.lag.ms",
        ConfigType::Long,
        "0",
        Some(("log.cleaner.min.compaction.lag.ms", "0")),
        false,
        NO_EFFECT,
    ),
    key(
        "min.insync.replicas",
        ConfigType::Int,
        "1",
        Some(("min.insync.replicas", "1")),
        false,
        "Accepted for compatibility; every Cohort partition has one replica.",
    ),
    key(
        "preallocate",
        ConfigType::Boolean,
        "false",
        Some(("log.preallocate", "false")),
        false,
        NO_EFFECT,
    ),
    key(
        "remote.storage.enable",
        ConfigType::Boolean,
        "false",
        None,
        false,
        NO_EFFECT,
    ),
    key(
        "retention.bytes",
        ConfigType::Long,
        "-1",
        Some(("log.retention.bytes", "-1")),
        true,
        "The most bytes a partition keeps before its oldest segments are deleted (delete \
         policy); -1: no limit. Applied on the next retention pass.",
    ),
    key(
        "retention.ms",
        ConfigType::Long,
        "604800000",
        Some(("log.retention.hours", "168")),
        true,
        "How long a segment is kept after its newest record (delete policy); -1: forever. \
         Applied on the next retention pass.",
    ),
    key(
        "segment.bytes",
        ConfigType::Int,
        "1073741824",
        Some(("log.segment.bytes", "1073741824")),
        true,
        "The size at which a partition's active segment is rolled; applies from the next \
         append.",
    ),
    key(
        "segment.index.bytes",
        ConfigType::Int,
        "10485760",
        Some(("log.index.size.max.bytes", "10485760")),
        false,
        NO_EFFECT,
    ),
    key(
        "segment.jitter.ms",
        ConfigType::Long,
        "0",
        Some(("log.roll.jitter.hours", "0")),
        false,
        NO_EFFECT,
    ),
    key(
        "segment.ms",
        ConfigType::Long,
        "604800000",
        Some(("log.roll.hours", "168")),
        true,
        "The age at which a partition's active segment is rolled; applies from the next \
         append.",
    ),
    key(
        "unclean.leader.election.enable",
        ConfigType::Boolean,
        "false",
        Some(("unclean.leader.election.enable", "false")),
        false,
        NO_EFFECT,
    ),
];

/// The key named `name`, if Cohort accepts it.
pub fn topic_key(name: &str) -> Option<&'static TopicKey> {
    TOPIC_KEYS.iter().find(|k| k.name == name)
}

#[cfg(test)]
mod tests {
    use super::super::configs::{ACCEPTED_WITHOUT_EFFECT, ENFORCED};
    use super::*;

    #[test]
    fn the_table_lists_exactly_the_accepted_names_in_order() {
        let mut accepted: Vec<&str> = ENFORCED
            .iter()
            .chain(ACCEPTED_WITHOUT_EFFECT)
            .copied()
            .collect();
        accepted.sort_unstable();
        let names: Vec<&str> = TOPIC_KEYS.iter().map(|k| k.name).collect();
        assert_eq!(names, accepted);
        for k in TOPIC_KEYS {
            assert_eq!(k.enforced, ENFORCED.contains(&k.name), "{}", k.name);
        }
    }

    #[test]
    fn defaults_are_what_the_typed_accessors_use() {
        let defaults = super::super::TopicConfigs::default();
        for (name, value, set) in defaults.effective() {
            assert!(!set);
            assert_eq!(
                topic_key(name).and_then(|k| k.default),
                Some(value.as_str())
            );
        }
    }
}
