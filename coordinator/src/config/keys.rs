//! The settings `decide` reads, by their Kafka names: what the cluster replicates so that
//! every replica decides with the same values (docs/decisions/0115-replicated-cluster-config.md).
//!
//! ```text
//!   Config::default()  ◄─ static layer (the first leader's flags, InitClusterConfig)
//!                      ◄─ dynamic layer (IncrementalAlterConfigs on BROKER "", AlterClusterConfig)
//!                      = the effective Config every replica decides with
//! ```
//!
//! Values are integers (every key here is one); a key's unit is the one its Kafka name says
//! (`offsets.retention.minutes` is stored in minutes, as an operator types it).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Config, MigrationPolicy};

/// Longest offset retention: a hundred years (Kafka has no bound; the coordinator adds it to
/// commit timestamps, which must not overflow).
pub const OFFSETS_RETENTION_MINUTES_MAX: i64 = 100 * 365 * 24 * 60;
/// Largest `offset.metadata.max.bytes`: each committed offset may carry this much, in the
/// replicated state and every snapshot.
pub const OFFSET_METADATA_MAX_BYTES_MAX: i64 = 1024 * 1024;
/// Largest groups count: a hundred times the default, ~10 GB of index on every replica.
pub const GROUPS_MAX_MAX: i64 = 100_000_000;
/// Largest offsets-per-group count: a hundred times the default (one group's offsets are read
/// whole by an all-topics OffsetFetch and a DeleteGroups).
pub const OFFSETS_PER_GROUP_MAX_MAX: i64 = 10_000_000;
/// Largest transactional-id count: a hundred times the default.
pub const TRANSACTIONS_MAX_MAX: i64 = 10_000_000;
/// Largest partitions-per-transaction count: ten times the default.
pub const TRANSACTION_PARTITIONS_MAX_MAX: i64 = 100_000;
/// Longest initial rebalance delay: five minutes (Kafka's default is 3 s).
pub const INITIAL_REBALANCE_DELAY_MS_MAX: i64 = 300_000;
/// A week, in milliseconds: the longest period a periodic check may be given.
pub const PERIOD_MS_MAX: i64 = 7 * 24 * 3_600_000;

/// One replicated setting.
pub struct Key {
    /// Kafka's name (Cohort's own keys start with `cohort.`).
    pub name: &'static str,
    /// Smallest and largest accepted value.
    pub min: i64,
    pub max: i64,
    /// One line for DescribeConfigs' documentation.
    pub doc: &'static str,
    /// For a key whose Kafka value is a name (`group.consumer.migration.policy`), the names
    /// by value (`names[v]` is value `v`): DescribeConfigs shows the name, IncrementalAlterConfigs
    /// takes it. Empty for an integer key.
    pub names: &'static [&'static str],
    get: fn(&Config) -> i64,
    set: fn(&mut Config, i64),
}

impl Key {
    /// The key's value in `config`.
    pub fn get(&self, config: &Config) -> i64 {
        (self.get)(config)
    }

    /// The value as Kafka spells it: the name of a named key, the integer otherwise.
    pub fn render(&self, value: i64) -> String {
        usize::try_from(value)
            .ok()
            .and_then(|i| self.names.get(i))
            .map_or_else(|| value.to_string(), |name| (*name).to_owned())
    }

    /// Parses a value as an operator types it: a named key takes its names, case-insensitive
    /// as Kafka's validator; an integer key takes an integer. `None` when it is neither.
    pub fn parse(&self, text: &str) -> Option<i64> {
        let text = text.trim();
        if self.names.is_empty() {
            return text.parse::<i64>().ok();
        }
        self.names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(text))
            .and_then(|i| i64::try_from(i).ok())
    }

    fn check(&self, value: i64) -> Result<(), ConfigError> {
        if (self.min..=self.max).contains(&value) {
            Ok(())
        } else {
            Err(ConfigError::OutOfRange {
                key: self.name.to_owned(),
                value,
                min: self.min,
                max: self.max,
            })
        }
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key").field("name", &self.name).finish()
    }
}

fn to_usize(v: i64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

fn to_i32(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

fn from_usize(v: usize) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

const I32_MAX: i64 = i32::MAX as i64;

/// An integer key's `names`.
const NO_NAMES: &[&str] = &[];

/// Every replicated setting, in the order DescribeConfigs lists them.
pub const KEYS: &[Key] = &[
    Key {
        name: "group.min.session.timeout.ms",
        min: 1,
        max: I32_MAX,
        doc: "The minimum allowed session timeout for registered consumers.",
        names: NO_NAMES,
        get: |c| i64::from(c.session_timeout_min_ms),
        set: |c, v| c.session_timeout_min_ms = to_i32(v),
    },
    Key {
        name: "group.max.session.timeout.ms",
        min: 1,
        max: I32_MAX,
        doc: "The maximum allowed session timeout for registered consumers.",
        names: NO_NAMES,
        get: |c| i64::from(c.session_timeout_max_ms),
        set: |c, v| c.session_timeout_max_ms = to_i32(v),
    },
    Key {
        name: "group.initial.rebalance.delay.ms",
        min: 0,
        max: INITIAL_REBALANCE_DELAY_MS_MAX,
        doc: "How long the coordinator waits for more consumers to join a new group before the first rebalance.",
        names: NO_NAMES,
        get: |c| i64::from(c.initial_rebalance_delay_ms),
        set: |c, v| c.initial_rebalance_delay_ms = to_i32(v),
    },
    Key {
        name: "group.max.size",
        min: 1,
        max: I32_MAX,
        doc: "The maximum number of consumers that a single classic group can accommodate.",
        names: NO_NAMES,
        get: |c| i64::from(c.group_max_size),
        set: |c, v| c.group_max_size = to_i32(v),
    },
    Key {
        name: "offsets.retention.minutes",
        min: 1,
        max: OFFSETS_RETENTION_MINUTES_MAX,
        doc: "For subscribed consumers, committed offsets are deleted this long after the group becomes empty; for standalone consumers, this long after the last commit.",
        names: NO_NAMES,
        get: |c| c.offsets_retention_ms / 60_000,
        set: |c, v| c.offsets_retention_ms = v.saturating_mul(60_000),
    },
    Key {
        name: "offsets.retention.check.interval.ms",
        min: 1,
        max: PERIOD_MS_MAX,
        doc: "Frequency at which to check for stale offsets.",
        names: NO_NAMES,
        get: |c| c.offsets_retention_check_interval_ms,
        set: |c, v| c.offsets_retention_check_interval_ms = v,
    },
    Key {
        name: "offset.metadata.max.bytes",
        min: 0,
        max: OFFSET_METADATA_MAX_BYTES_MAX,
        doc: "The maximum size for a metadata entry associated with an offset commit.",
        names: NO_NAMES,
        get: |c| from_usize(c.offset_metadata_max_bytes),
        set: |c, v| c.offset_metadata_max_bytes = to_usize(v),
    },
    Key {
        name: "group.consumer.session.timeout.ms",
        min: 1,
        max: I32_MAX,
        doc: "The timeout to detect client failures when using the consumer group protocol.",
        names: NO_NAMES,
        get: |c| i64::from(c.consumer_session_timeout_ms),
        set: |c, v| c.consumer_session_timeout_ms = to_i32(v),
    },
    Key {
        name: "group.consumer.min.session.timeout.ms",
        min: 1,
        max: I32_MAX,
        doc: "The minimum allowed session timeout for registered consumers.",
        names: NO_NAMES,
        get: |c| i64::from(c.consumer_session_timeout_min_ms),
        set: |c, v| c.consumer_session_timeout_min_ms = to_i32(v),
    },
    Key {
        name: "group.consumer.max.session.timeout.ms",
        min: 1,
        max: I32_MAX,
        doc: "The maximum allowed session timeout for registered consumers.",
        names: NO_NAMES,
        get: |c| i64::from(c.consumer_session_timeout_max_ms),
        set: |c, v| c.consumer_session_timeout_max_ms = to_i32(v),
    },
    Key {
        name: "group.consumer.heartbeat.interval.ms",
        min: 1,
        max: I32_MAX,
        doc: "The heartbeat interval given to the members of a consumer group.",
        names: NO_NAMES,
        get: |c| i64::from(c.consumer_heartbeat_interval_ms),
        set: |c, v| c.consumer_heartbeat_interval_ms = to_i32(v),
    },
    Key {
        name: "group.consumer.min.heartbeat.interval.ms",
        min: 1,
        max: I32_MAX,
        doc: "The minimum heartbeat interval for registered consumers.",
        names: NO_NAMES,
        get: |c| i64::from(c.consumer_heartbeat_interval_min_ms),
        set: |c, v| c.consumer_heartbeat_interval_min_ms = to_i32(v),
    },
    Key {
        name: "group.consumer.max.heartbeat.interval.ms",
        min: 1,
        max: I32_MAX,
        doc: "The maximum heartbeat interval for registered consumers.",
        names: NO_NAMES,
        get: |c| i64::from(c.consumer_heartbeat_interval_max_ms),
        set: |c, v| c.consumer_heartbeat_interval_max_ms = to_i32(v),
    },
    Key {
        name: "group.consumer.max.size",
        min: 1,
        max: I32_MAX,
        doc: "The maximum number of consumers that a single consumer group can accommodate.",
        names: NO_NAMES,
        get: |c| i64::from(c.consumer_group_max_size),
        set: |c, v| c.consumer_group_max_size = to_i32(v),
    },
    Key {
        name: "group.consumer.migration.policy",
        min: 0,
        max: MigrationPolicy::NAMES.len() as i64 - 1,
        doc: "Whether a non-empty classic group using the consumer embedded protocol is converted to a consumer group and back (bidirectional, upgrade, downgrade, disabled); empty groups convert whatever this says.",
        names: MigrationPolicy::NAMES,
        get: |c| c.consumer_migration_policy.index(),
        set: |c, v| c.consumer_migration_policy = MigrationPolicy::from_index(v),
    },
    Key {
        name: "cohort.groups.max",
        min: 1,
        max: GROUPS_MAX_MAX,
        doc: "The most groups the replicated state holds; a request that would create one more gets POLICY_VIOLATION.",
        names: NO_NAMES,
        get: |c| from_usize(c.groups_max),
        set: |c, v| c.groups_max = to_usize(v),
    },
    Key {
        name: "cohort.offsets.per.group.max",
        min: 1,
        max: OFFSETS_PER_GROUP_MAX_MAX,
        doc: "The most committed offsets one group holds; a commit adding one more gets POLICY_VIOLATION.",
        names: NO_NAMES,
        get: |c| from_usize(c.offsets_per_group_max),
        set: |c, v| c.offsets_per_group_max = to_usize(v),
    },
    Key {
        name: "transaction.max.timeout.ms",
        min: 1,
        max: I32_MAX,
        doc: "The maximum allowed timeout for transactions; a producer asking for more gets INVALID_TRANSACTION_TIMEOUT.",
        names: NO_NAMES,
        get: |c| i64::from(c.transaction_max_timeout_ms),
        set: |c, v| c.transaction_max_timeout_ms = to_i32(v),
    },
    Key {
        name: "transactional.id.expiration.ms",
        min: 1,
        max: I32_MAX,
        doc: "How long a transactional id is kept without a transaction status update.",
        names: NO_NAMES,
        get: |c| i64::from(c.transactional_id_expiration_ms),
        set: |c, v| c.transactional_id_expiration_ms = to_i32(v),
    },
    Key {
        name: "cohort.transactions.max",
        min: 1,
        max: TRANSACTIONS_MAX_MAX,
        doc: "The most transactional ids the replicated state holds; an InitProducerId that would add one more gets POLICY_VIOLATION.",
        names: NO_NAMES,
        get: |c| from_usize(c.transactions_max),
        set: |c, v| c.transactions_max = to_usize(v),
    },
    Key {
        name: "cohort.transaction.partitions.max",
        min: 1,
        max: TRANSACTION_PARTITIONS_MAX_MAX,
        doc: "The most partitions and groups one transaction holds; adding one more gets POLICY_VIOLATION.",
        names: NO_NAMES,
        get: |c| from_usize(c.transaction_partitions_max),
        set: |c, v| c.transaction_partitions_max = to_usize(v),
    },
];

/// The replicated setting named `name`.
pub fn key(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

/// Why a configuration was refused; the message names the key, as INVALID_CONFIG's does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum ConfigError {
    #[error("unknown configuration key {0}")]
    UnknownKey(String),
    #[error("{key} must be between {min} and {max}, got {value}")]
    OutOfRange {
        key: String,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("{key}: {reason}")]
    Relation { key: String, reason: String },
}

/// Where a key's effective value comes from (DescribeConfigs' `config_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Set cluster-wide through IncrementalAlterConfigs (DYNAMIC_DEFAULT_BROKER_CONFIG).
    Dynamic,
    /// From the flags the cluster was bootstrapped with (STATIC_BROKER_CONFIG).
    Static,
    /// Kafka's default (DEFAULT_CONFIG).
    Default,
}

/// One change of the dynamic layer: a value, or `None` to remove the override.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigChange {
    pub key: String,
    pub value: Option<i64>,
}

/// The replicated configuration: the two layers over Kafka's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterConfig {
    /// Every key's value in the flags the cluster was bootstrapped with.
    pub static_values: BTreeMap<String, i64>,
    /// Cluster-wide overrides set after bootstrap.
    pub dynamic_values: BTreeMap<String, i64>,
}

impl ClusterConfig {
    /// The static layer of a node whose flags give `config`.
    pub fn from_flags(config: &Config) -> ClusterConfig {
        ClusterConfig {
            static_values: KEYS
                .iter()
                .map(|k| (k.name.to_owned(), k.get(config)))
                .collect(),
            dynamic_values: BTreeMap::new(),
        }
    }

    /// `base` (whose fields outside [`KEYS`] are kept) with both layers applied, checked.
    pub fn effective(&self, base: &Config) -> Result<Config, ConfigError> {
        let mut config = base.clone();
        for (name, value) in self.static_values.iter().chain(&self.dynamic_values) {
            let key = key(name).ok_or_else(|| ConfigError::UnknownKey(name.clone()))?;
            key.check(*value)?;
            (key.set)(&mut config, *value);
        }
        check_relations(&config)?;
        Ok(config)
    }

    /// This configuration with `changes` made to its dynamic layer, if the result is valid.
    pub fn altered(
        &self,
        changes: &[ConfigChange],
        base: &Config,
    ) -> Result<ClusterConfig, ConfigError> {
        let mut next = self.clone();
        for change in changes {
            let key =
                key(&change.key).ok_or_else(|| ConfigError::UnknownKey(change.key.clone()))?;
            match change.value {
                Some(value) => {
                    key.check(value)?;
                    next.dynamic_values.insert(change.key.clone(), value);
                }
                None => {
                    next.dynamic_values.remove(&change.key);
                }
            }
        }
        next.effective(base)?;
        Ok(next)
    }

    /// Where `key`'s effective value comes from.
    pub fn source(&self, key: &str) -> Source {
        if self.dynamic_values.contains_key(key) {
            Source::Dynamic
        } else if self
            .static_values
            .get(key)
            .is_some_and(|v| Some(*v) != self::key(key).map(|k| k.get(&Config::default())))
        {
            Source::Static
        } else {
            Source::Default
        }
    }

    /// The keys whose static value differs from what `flags` say, as `(key, flag, cluster)`.
    pub fn disagreements(&self, flags: &Config) -> Vec<(&'static str, i64, i64)> {
        KEYS.iter()
            .filter_map(|k| {
                let ours = k.get(flags);
                let theirs = *self.static_values.get(k.name)?;
                (ours != theirs).then_some((k.name, ours, theirs))
            })
            .collect()
    }
}

/// The rules between keys (Kafka's GroupCoordinatorConfig checks the same relations).
pub fn check_relations(c: &Config) -> Result<(), ConfigError> {
    let relation = |key: &str, reason: String| {
        Err(ConfigError::Relation {
            key: key.to_owned(),
            reason,
        })
    };
    if c.session_timeout_max_ms < c.session_timeout_min_ms {
        return relation(
            "group.max.session.timeout.ms",
            format!(
                "must be at least group.min.session.timeout.ms ({})",
                c.session_timeout_min_ms
            ),
        );
    }
    if c.consumer_session_timeout_max_ms < c.consumer_session_timeout_min_ms {
        return relation(
            "group.consumer.max.session.timeout.ms",
            format!(
                "must be at least group.consumer.min.session.timeout.ms ({})",
                c.consumer_session_timeout_min_ms
            ),
        );
    }
    if !(c.consumer_session_timeout_min_ms..=c.consumer_session_timeout_max_ms)
        .contains(&c.consumer_session_timeout_ms)
    {
        return relation(
            "group.consumer.session.timeout.ms",
            format!(
                "must be between group.consumer.min.session.timeout.ms ({}) and group.consumer.max.session.timeout.ms ({})",
                c.consumer_session_timeout_min_ms, c.consumer_session_timeout_max_ms
            ),
        );
    }
    if c.consumer_heartbeat_interval_max_ms < c.consumer_heartbeat_interval_min_ms {
        return relation(
            "group.consumer.max.heartbeat.interval.ms",
            format!(
                "must be at least group.consumer.min.heartbeat.interval.ms ({})",
                c.consumer_heartbeat_interval_min_ms
            ),
        );
    }
    if !(c.consumer_heartbeat_interval_min_ms..=c.consumer_heartbeat_interval_max_ms)
        .contains(&c.consumer_heartbeat_interval_ms)
    {
        return relation(
            "group.consumer.heartbeat.interval.ms",
            format!(
                "must be between group.consumer.min.heartbeat.interval.ms ({}) and group.consumer.max.heartbeat.interval.ms ({})",
                c.consumer_heartbeat_interval_min_ms, c.consumer_heartbeat_interval_max_ms
            ),
        );
    }
    if c.consumer_heartbeat_interval_ms >= c.consumer_session_timeout_ms {
        return relation(
            "group.consumer.heartbeat.interval.ms",
            format!(
                "must be less than group.consumer.session.timeout.ms ({})",
                c.consumer_session_timeout_ms
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_reads_back_what_it_sets() {
        for (i, k) in KEYS.iter().enumerate() {
            let mut c = Config::default();
            let value = k.min.saturating_add(i as i64 + 1).min(k.max);
            (k.set)(&mut c, value);
            assert_eq!(k.get(&c), value, "{}", k.name);
        }
        let mut names: Vec<_> = KEYS.iter().map(|k| k.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KEYS.len(), "a key is listed twice");
    }

    #[test]
    fn the_defaults_are_a_valid_static_layer_with_every_key_at_its_default() {
        let c = ClusterConfig::from_flags(&Config::default());
        assert_eq!(c.static_values.len(), KEYS.len());
        assert_eq!(c.effective(&Config::default()), Ok(Config::default()));
        for k in KEYS {
            assert_eq!(c.source(k.name), Source::Default, "{}", k.name);
        }
    }

    #[test]
    fn the_dynamic_layer_wins_over_the_static_one_and_deleting_reverts() {
        let flags = Config {
            group_max_size: 50,
            ..Config::default()
        };
        let c = ClusterConfig::from_flags(&flags);
        assert_eq!(c.source("group.max.size"), Source::Static);
        let set = [ConfigChange {
            key: "group.max.size".to_owned(),
            value: Some(7),
        }];
        let altered = c.altered(&set, &Config::default()).unwrap();
        assert_eq!(altered.source("group.max.size"), Source::Dynamic);
        assert_eq!(
            altered
                .effective(&Config::default())
                .unwrap()
                .group_max_size,
            7
        );
        let delete = [ConfigChange {
            key: "group.max.size".to_owned(),
            value: None,
        }];
        let reverted = altered.altered(&delete, &Config::default()).unwrap();
        assert_eq!(
            reverted
                .effective(&Config::default())
                .unwrap()
                .group_max_size,
            50
        );
        assert_eq!(reverted, c);
    }

    #[test]
    fn minutes_are_stored_as_typed() {
        let c = ClusterConfig::default()
            .altered(
                &[ConfigChange {
                    key: "offsets.retention.minutes".to_owned(),
                    value: Some(3),
                }],
                &Config::default(),
            )
            .unwrap();
        assert_eq!(
            c.effective(&Config::default())
                .unwrap()
                .offsets_retention_ms,
            180_000
        );
    }

    #[test]
    fn refusals_name_the_key() {
        let base = Config::default();
        let c = ClusterConfig::from_flags(&base);
        let change = |key: &str, value| {
            c.altered(
                &[ConfigChange {
                    key: key.to_owned(),
                    value: Some(value),
                }],
                &base,
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            change("group.max.size", 0),
            "group.max.size must be between 1 and 2147483647, got 0"
        );
        assert_eq!(
            change("no.such.key", 1),
            "unknown configuration key no.such.key"
        );
        assert_eq!(
            change("group.min.session.timeout.ms", 2_000_000),
            "group.max.session.timeout.ms: must be at least group.min.session.timeout.ms (2000000)"
        );
        assert!(change("group.consumer.heartbeat.interval.ms", 50_000)
            .starts_with("group.consumer.heartbeat.interval.ms: must be between"));
        // A refused change leaves nothing behind.
        assert_eq!(c.effective(&base), Ok(base.clone()));
    }

    #[test]
    fn a_layer_naming_a_key_this_binary_does_not_know_is_refused() {
        let mut c = ClusterConfig::default();
        c.dynamic_values
            .insert("group.from.the.future".to_owned(), 1);
        assert_eq!(
            c.effective(&Config::default()),
            Err(ConfigError::UnknownKey("group.from.the.future".to_owned()))
        );
    }

    #[test]
    fn disagreements_list_the_keys_whose_flags_differ() {
        let bootstrap = ClusterConfig::from_flags(&Config::default());
        let flags = Config {
            group_max_size: 9,
            ..Config::default()
        };
        assert_eq!(
            bootstrap.disagreements(&flags),
            vec![("group.max.size", 9, i64::from(i32::MAX))]
        );
        assert!(bootstrap.disagreements(&Config::default()).is_empty());
    }
}
