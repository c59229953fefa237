//! `cohort configs`: Kafka 4.0's `kafka-configs.sh` for topics, brokers (one broker id, or the
//! cluster-wide default) and groups, over Cohort's pure Kafka client:
//!
//! ```text
//!   --describe [--all] ─► DescribeConfigs (synonyms) ─► "Dynamic configs for topic t are:"
//!                                                       "  k=v sensitive=false synonyms={...}"
//!   --alter topics/groups ─► DescribeConfigs (dynamic keys, to check deletions)
//!                         ─► IncrementalAlterConfigs SET/DELETE ─► "Completed updating config for topic t."
//!   --alter brokers       ─► DescribeConfigs ─► AlterConfigs of the whole dynamic set (as Kafka's tool)
//! ```
//!
//! Exit codes and messages follow `ConfigCommand.main`: an argument error prints its message on
//! stderr (with the usage text for the `printUsageAndExit` ones) and exits 1; a failed call
//! prints `Error while executing config command with args '…'` and the exception's first line
//! (Kafka's tool then prints the Java stack trace, which has no equivalent here). Entity types
//! other than topics, brokers and groups (clients, users, ips, broker-loggers, client-metrics:
//! quotas, SCRAM credentials, log levels) are accepted by the option checks, as Kafka's are, and
//! then refused with a message saying that this tool does not handle them.

pub mod options;

use std::collections::BTreeMap;
use std::io::Write;

use crate::client::config::read_properties_file;
use crate::client::configs::{source_name, AlterOp, ConfigEntry, ConfigResource, ResourceType};
use crate::client::groups::ListGroupsFilter;
use crate::client::{Admin, ClientConfig, ClientError, KafkaError};

use super::entry::warn_unused;
use super::groups::java_order::{self, Construction};
use options::{Action, ConfigsOptions};

/// How long each Admin call may take (the tool's `.get(30, SECONDS)` on describe).
const CALL_TIMEOUT_MS: u64 = 30_000;

/// DescribeConfigs source codes the tool filters on without `--all`.
const SOURCE_DYNAMIC_TOPIC: i8 = 1;
const SOURCE_DYNAMIC_BROKER: i8 = 2;
const SOURCE_DYNAMIC_DEFAULT_BROKER: i8 = 3;
const SOURCE_DYNAMIC_GROUP: i8 = 8;

/// How the command stops when it fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// `IllegalArgumentException`/`InvalidConfigurationException`: the message on stderr.
    Message(String),
    /// Any other exception: the "Error while executing" line, then the exception's first line.
    Unexpected(String),
}

impl Stop {
    /// A failed Admin call, as `KafkaFuture.get` raises it.
    fn call(e: &ClientError) -> Stop {
        Stop::Unexpected(format!(
            "java.util.concurrent.ExecutionException: {}",
            e.java_string()
        ))
    }

    /// A resource the broker answered with an error.
    fn kafka(e: &KafkaError) -> Stop {
        Stop::Unexpected(format!(
            "java.util.concurrent.ExecutionException: {}",
            e.java_string()
        ))
    }
}

/// Runs `cohort configs` with `args` on the process's stdout and stderr; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    super::entry::run_on_stdio(
        |mut out, mut err| async move { run(args, &mut out, &mut err).await },
    )
}

/// Runs `cohort configs` with `args`, writing to `out`/`err`; returns the exit code.
pub async fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let options = match options::check(args).or_exit(&options::help(), out, err) {
        Ok(o) => o,
        Err(code) => return code,
    };
    match execute(&options, out, err).await {
        Ok(()) => 0,
        Err(Stop::Message(m)) => {
            let _ = writeln!(err, "{m}");
            1
        }
        Err(Stop::Unexpected(exception)) => {
            let _ = writeln!(
                err,
                "Error while executing config command with args '{}'",
                args.join(" ")
            );
            let _ = writeln!(err, "{exception}");
            1
        }
    }
}

fn admin_for(options: &ConfigsOptions, err: &mut dyn Write) -> Result<Admin, Stop> {
    let bootstrap = options
        .value("bootstrap-server")
        .or_else(|| options.value("bootstrap-controller"))
        .unwrap_or_default();
    let (config, unused) = ClientConfig::for_tool(bootstrap, options.value("command-config"), &[])
        .map_err(|e| Stop::Unexpected(e.java_string()))?;
    warn_unused(err, &unused);
    let mut admin = Admin::new(config);
    admin.set_call_timeout(std::time::Duration::from_millis(CALL_TIMEOUT_MS));
    Ok(admin)
}

async fn execute(
    options: &ConfigsOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Stop> {
    let mut admin = admin_for(options, err)?;
    if options.action == Action::Alter && options.entity_types.len() != options.entity_names.len() {
        return Err(Stop::Message(
            "An entity name must be specified for every entity type".into(),
        ));
    }
    let head = options.entity_types[0].as_str();
    if !matches!(head, "topics" | "brokers" | "groups") {
        return Err(Stop::Message(format!(
            "cohort configs does not handle --entity-type {head} (Cohort has no quotas, SCRAM credentials through this tool, broker loggers or client metrics resources); topics, brokers and groups are handled"
        )));
    }
    match options.action {
        Action::Describe => {
            describe(
                &mut admin,
                head,
                options.entity_names.first().map(String::as_str),
                options.has("all"),
                out,
            )
            .await
        }
        Action::Alter => alter(&mut admin, options, head, out).await,
    }
}

/// The entity type's singular, as Kafka's `entityType.dropRight(1)`.
fn singular(entity_type: &str) -> &str {
    entity_type
        .char_indices()
        .last()
        .map(|(i, _)| &entity_type[..i])
        .unwrap_or(entity_type)
}

/// The header line of one described entity.
pub fn header(entity_type: &str, entity: &str, all: bool) -> String {
    if entity.is_empty() {
        format!("Default configs for {entity_type} in the cluster are:\n")
    } else {
        let source = if all { "All" } else { "Dynamic" };
        format!(
            "{source} configs for {} {entity} are:\n",
            singular(entity_type)
        )
    }
}

/// One entry line: `  k=v sensitive=false synonyms={SOURCE:k=v, ...}` (Java prints a null
/// value as `null`).
pub fn entry_line(entry: &ConfigEntry) -> String {
    let synonyms: Vec<String> = entry
        .synonyms
        .iter()
        .map(|s| {
            format!(
                "{}:{}={}",
                source_name(s.source),
                s.name,
                s.value.as_deref().unwrap_or("null")
            )
        })
        .collect();
    format!(
        "  {}={} sensitive={} synonyms={{{}}}\n",
        entry.name,
        entry.value.as_deref().unwrap_or("null"),
        entry.sensitive,
        synonyms.join(", ")
    )
}

/// Kafka's `Topic.validate`: the reason a topic name is invalid, if it is.
fn invalid_topic(name: &str) -> Option<String> {
    let reason = if name.is_empty() {
        "the empty string is not allowed".to_string()
    } else if name == "." {
        "'.' is not allowed".to_string()
    } else if name == ".." {
        "'..' is not allowed".to_string()
    } else if name.encode_utf16().count() > 249 {
        format!("the length of '{name}' is longer than the max allowed length 249")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
    {
        format!("'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")
    } else {
        return None;
    };
    Some(format!("Topic name is invalid: {reason}"))
}

/// Kafka's `getResourceConfig`: the entity's entries (only the dynamic ones unless
/// `describe_all`), sorted by name.
async fn resource_config(
    admin: &mut Admin,
    entity_type: &str,
    entity: &str,
    include_synonyms: bool,
    describe_all: bool,
) -> Result<Vec<ConfigEntry>, Stop> {
    let (kind, dynamic_source) = match entity_type {
        "topics" => {
            if !entity.is_empty() {
                if let Some(m) = invalid_topic(entity) {
                    return Err(Stop::Unexpected(format!(
                        "org.apache.kafka.common.errors.InvalidTopicException: {m}"
                    )));
                }
            }
            (ResourceType::Topic, SOURCE_DYNAMIC_TOPIC)
        }
        "brokers" if entity.is_empty() => (ResourceType::Broker, SOURCE_DYNAMIC_DEFAULT_BROKER),
        "brokers" => {
            if entity.parse::<i32>().is_err() {
                return Err(Stop::Message(format!(
                    "The entity name for {entity_type} must be a valid integer broker id, found: {entity}"
                )));
            }
            (ResourceType::Broker, SOURCE_DYNAMIC_BROKER)
        }
        "groups" => (ResourceType::Group, SOURCE_DYNAMIC_GROUP),
        other => return Err(Stop::Message(format!("Invalid entity type: {other}"))),
    };
    let resource = ConfigResource {
        kind,
        name: entity.to_string(),
    };
    let mut entries = match admin.describe_configs(&resource, include_synonyms).await {
        Ok(Ok(entries)) => entries,
        Ok(Err(e)) => return Err(Stop::kafka(&e)),
        Err(e) => return Err(Stop::call(&e)),
    };
    if !describe_all {
        entries.retain(|e| e.source == dynamic_source);
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// Kafka's `describeResourceConfig`.
async fn describe(
    admin: &mut Admin,
    entity_type: &str,
    entity: Option<&str>,
    describe_all: bool,
    out: &mut dyn Write,
) -> Result<(), Stop> {
    let entities: Vec<String> = match entity {
        Some(name) => vec![name.to_string()],
        None => match entity_type {
            // `listTopics(...).names()`: the key set of a default HashMap.
            "topics" => java_order::strings(
                Construction::Default,
                admin.list_topics(true).await.map_err(|e| Stop::call(&e))?,
            ),
            "brokers" => {
                let mut ids: Vec<String> = admin
                    .describe_cluster()
                    .await
                    .map_err(|e| Stop::call(&e))?
                    .nodes
                    .iter()
                    .map(|n| n.id.0.to_string())
                    .collect();
                ids.push(String::new());
                ids
            }
            _ => admin
                .list_consumer_groups(&ListGroupsFilter::default())
                .await
                .map_err(|e| Stop::call(&e))?
                .into_iter()
                .map(|g| g.group_id)
                .collect(),
        },
    };
    for name in &entities {
        let _ = out.write_all(header(entity_type, name, describe_all).as_bytes());
        for entry in resource_config(admin, entity_type, name, true, describe_all).await? {
            let _ = out.write_all(entry_line(&entry).as_bytes());
        }
    }
    Ok(())
}

/// `--add-config` (or `--add-config-file`) as key/value pairs, a later key replacing an
/// earlier one (`Properties.setProperty`).
fn configs_to_add(options: &ConfigsOptions) -> Result<Vec<(String, String)>, Stop> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    if let Some(path) = options.value("add-config-file") {
        let props: BTreeMap<String, String> = read_properties_file(path)
            .map_err(|e| Stop::Unexpected(format!("java.io.IOException: {}", e.java_message())))?;
        pairs.extend(props);
    }
    if let Some(text) = options.value("add-config") {
        for (k, v) in options::parse_add_config(text).map_err(Stop::Message)? {
            pairs.retain(|(old, _)| *old != k);
            pairs.push((k, v));
        }
    }
    options::check_keys(&pairs).map_err(Stop::Message)?;
    Ok(pairs)
}

/// Kafka's `alterConfig` for topics, brokers and groups.
async fn alter(
    admin: &mut Admin,
    options: &ConfigsOptions,
    entity_type: &str,
    out: &mut dyn Write,
) -> Result<(), Stop> {
    let name = options.entity_names[0].clone();
    let added = configs_to_add(options)?;
    let deleted = options.keys_to_delete();
    let old = resource_config(admin, entity_type, &name, false, false).await?;
    let invalid: Vec<&str> = deleted
        .iter()
        .filter(|k| !old.iter().any(|e| &e.name == *k))
        .map(String::as_str)
        .collect();
    if !invalid.is_empty() {
        return Err(Stop::Message(format!(
            "Invalid config(s): {}",
            invalid.join(",")
        )));
    }
    let kind = match entity_type {
        "topics" => ResourceType::Topic,
        "brokers" => ResourceType::Broker,
        _ => ResourceType::Group,
    };
    let resource = ConfigResource {
        kind,
        name: name.clone(),
    };
    let result = if kind == ResourceType::Broker {
        // The whole new dynamic set through AlterConfigs, as Kafka's tool sends it.
        let mut entries: Vec<(String, Option<String>)> = old
            .iter()
            .map(|e| (e.name.clone(), e.value.clone()))
            .collect();
        for (k, v) in &added {
            entries.retain(|(old, _)| old != k);
            entries.push((k.clone(), Some(v.clone())));
        }
        entries.retain(|(k, _)| !deleted.contains(k));
        let missing: Vec<&str> = entries
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(Stop::Message(format!(
                "All sensitive broker config entries must be specified for --alter, missing entries: Set({})",
                missing.join(", ")
            )));
        }
        admin.alter_configs(&resource, &entries).await
    } else {
        let mut ops: Vec<(String, AlterOp, Option<String>)> = added
            .iter()
            .map(|(k, v)| (k.clone(), AlterOp::Set, Some(v.clone())))
            .collect();
        ops.extend(
            deleted
                .iter()
                .map(|k| (k.clone(), AlterOp::Delete, Some(String::new()))),
        );
        admin.incremental_alter_configs(&resource, &ops).await
    };
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(Stop::kafka(&e)),
        Err(e) => return Err(Stop::call(&e)),
    }
    let line = if name.is_empty() {
        format!("Completed updating default config for {entity_type} in the cluster.\n")
    } else {
        format!(
            "Completed updating config for {} {name}.\n",
            singular(entity_type)
        )
    };
    let _ = out.write_all(line.as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::configs::ConfigSynonym;

    #[test]
    fn headers_read_like_kafka_configs() {
        assert_eq!(
            header("topics", "orders", false),
            "Dynamic configs for topic orders are:\n"
        );
        assert_eq!(
            header("brokers", "1", true),
            "All configs for broker 1 are:\n"
        );
        assert_eq!(
            header("brokers", "", false),
            "Default configs for brokers in the cluster are:\n"
        );
        assert_eq!(
            header("groups", "g", false),
            "Dynamic configs for group g are:\n"
        );
    }

    #[test]
    fn entry_lines_print_synonyms_and_nulls_like_java() {
        let entry = ConfigEntry {
            name: "retention.ms".into(),
            value: Some("1000".into()),
            source: 1,
            sensitive: false,
            read_only: false,
            synonyms: vec![
                ConfigSynonym {
                    name: "retention.ms".into(),
                    value: Some("1000".into()),
                    source: 1,
                },
                ConfigSynonym {
                    name: "log.retention.hours".into(),
                    value: Some("168".into()),
                    source: 5,
                },
            ],
        };
        assert_eq!(
            entry_line(&entry),
            "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168}\n"
        );
        let secret = ConfigEntry {
            name: "sasl.jaas.config".into(),
            value: None,
            sensitive: true,
            synonyms: vec![],
            ..entry
        };
        assert_eq!(
            entry_line(&secret),
            "  sasl.jaas.config=null sensitive=true synonyms={}\n"
        );
    }

    #[test]
    fn topic_names_are_checked_as_kafka_checks_them() {
        assert_eq!(invalid_topic("orders.v1_x-y"), None);
        assert_eq!(
            invalid_topic("a b"),
            Some("Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'".into())
        );
        assert_eq!(
            invalid_topic(".."),
            Some("Topic name is invalid: '..' is not allowed".into())
        );
        assert!(invalid_topic(&"x".repeat(250)).is_some());
    }
}
