//! `cohort topics`: Kafka's `kafka-topics.sh` (4.0 era) for `--create`, `--list`, `--describe`,
//! `--alter --partitions` (CreatePartitions) and `--delete`, over Cohort's pure Kafka client.
//!
//! Exit codes follow Kafka's tool: 0 on success, 1 on any error (printed as
//! `Error while executing topic command : <message>` on stdout, or as the option error on
//! stderr). Differences from Kafka's tool: `--topic` for `--list`/`--describe` matches exact
//! names (a comma-separated list) rather than a Java regular expression; topic configs are
//! validated by the broker, not by the tool; `--topic-id` and partition reassignment reports are
//! not offered.

pub mod format;
pub mod options;

use std::collections::BTreeMap;
use std::io::Write;

use crate::client::error::{ClientError, KafkaError};
use crate::client::partitions::NewPartitions;
use crate::client::topics::NewTopic;
use crate::client::{Admin, ClientConfig, NodeId};

use super::entry::warn_unused;
use super::groups::java_order::{self, Construction};
use options::{Action, TopicsOptions};

/// Topics Kafka treats as internal.
const INTERNAL_TOPICS: &[&str] = &[
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];
/// Kafka's `TOPIC_ALREADY_EXISTS`.
const TOPIC_ALREADY_EXISTS: i16 = 36;
/// How long each Admin call may take (Kafka's default.api.timeout.ms).
const CALL_TIMEOUT_MS: u64 = 60_000;

/// Runs `cohort topics` with `args` on the process's stdout and stderr; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    super::entry::run_on_stdio(
        |mut out, mut err| async move { run(args, &mut out, &mut err).await },
    )
}

/// An error that ends the command: Kafka prints `Error while executing topic command : <msg>`.
struct Failure(String);

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        Failure(e.java_message())
    }
}

impl From<KafkaError> for Failure {
    fn from(e: KafkaError) -> Self {
        Failure(e.message())
    }
}

/// Runs `cohort topics` with `args`, writing to `out`/`err`; returns the exit code.
pub async fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let options = match options::check(args).or_exit(&options::help(), out, err) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let result = match admin_for(&options, err) {
        Ok(mut admin) => match options.action {
            Action::Create => create(&options, &mut admin, out).await,
            Action::List => list(&options, &mut admin, out).await,
            Action::Describe => describe(&options, &mut admin, out).await,
            Action::Delete => delete(&options, &mut admin).await,
            Action::Alter => alter(&options, &mut admin).await,
        },
        Err(f) => Err(f),
    };
    match result {
        Ok(()) => 0,
        Err(Failure(m)) => {
            let _ = writeln!(out, "Error while executing topic command : {m}");
            1
        }
    }
}

fn admin_for(options: &TopicsOptions, err: &mut dyn Write) -> Result<Admin, Failure> {
    let (config, unused) = ClientConfig::for_tool(
        options.value("bootstrap-server").unwrap_or_default(),
        options.value("command-config"),
        &[],
    )
    .map_err(|e| Failure(e.java_message()))?;
    warn_unused(err, &unused);
    let mut admin = Admin::new(config);
    admin.set_call_timeout(std::time::Duration::from_millis(CALL_TIMEOUT_MS));
    Ok(admin)
}

fn parse_int(v: &str, option: &str) -> Result<i64, Failure> {
    v.trim()
        .parse::<i64>()
        .map_err(|_| Failure(format!("Cannot parse argument '{v}' of option {option}")))
}

/// `--config k=v` values split on `=` with surrounding blanks, as Kafka does.
fn parse_configs(values: &[String]) -> Result<BTreeMap<String, String>, Failure> {
    let mut out = BTreeMap::new();
    for v in values {
        let parts: Vec<&str> = v.split('=').map(str::trim).collect();
        if parts.len() != 2 {
            return Err(Failure(
                "requirement failed: Invalid topic config: all configs to be added must be in the format \"key=val\"."
                    .to_string(),
            ));
        }
        out.insert(parts[0].to_string(), parts[1].to_string());
    }
    Ok(out)
}

/// `--replica-assignment 1:2,2:3`: partition i gets the i-th list of broker ids.
fn parse_assignment(v: &str) -> Result<Vec<Vec<i32>>, Failure> {
    let mut out: Vec<Vec<i32>> = Vec::new();
    for (i, part) in v.split(',').enumerate() {
        let brokers: Vec<i32> = part
            .split(':')
            .map(|b| {
                b.trim()
                    .parse::<i32>()
                    .map_err(|_| Failure(format!("For input string: \"{}\"", b.trim())))
            })
            .collect::<Result<_, _>>()?;
        let mut sorted = brokers.clone();
        sorted.sort();
        let dups: Vec<String> = sorted
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0].to_string())
            .collect();
        if !dups.is_empty() {
            return Err(Failure(format!(
                "Partition replica lists may not contain duplicate entries: {}",
                dups.join(",")
            )));
        }
        if let Some(first) = out.first() {
            if first.len() != brokers.len() {
                return Err(Failure(format!(
                    "Partition {i} has different replication factor: [{}]",
                    brokers
                        .iter()
                        .map(|b| b.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        out.push(brokers);
    }
    Ok(out)
}

async fn create(
    options: &TopicsOptions,
    admin: &mut Admin,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let name = options.value("topic").unwrap_or_default().to_string();
    if name.contains('.') || name.contains('_') {
        let _ = writeln!(out, "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.");
    }
    let replication_factor = match options.value("replication-factor") {
        Some(v) => Some(parse_int(v, "replication-factor")?),
        None => None,
    };
    if replication_factor.is_some_and(|rf| !(1..=i64::from(i16::MAX)).contains(&rf)) {
        return Err(Failure(format!(
            "The replication factor must be between 1 and {} inclusive",
            i16::MAX
        )));
    }
    let partitions = match options.value("partitions") {
        Some(v) => Some(parse_int(v, "partitions")?),
        None => None,
    };
    if partitions.is_some_and(|p| p < 1) {
        return Err(Failure("The partitions must be greater than 0".to_string()));
    }
    let configs = parse_configs(&options.values("config"))?;
    let assignment = match options
        .value("replica-assignment")
        .filter(|v| !v.is_empty())
    {
        Some(v) => Some(parse_assignment(v)?),
        None => None,
    };
    let topic = NewTopic {
        name: name.clone(),
        partitions: partitions.map(|p| i32::try_from(p).unwrap_or(i32::MAX)),
        replication_factor: replication_factor.map(|r| r as i16),
        configs,
        assignment: assignment.map(|a| {
            a.into_iter()
                .map(|b| b.into_iter().map(NodeId).collect())
                .collect()
        }),
    };
    let results = admin.create_topics(&[topic]).await?;
    match results.get(&name) {
        Some(Ok(())) => {
            let _ = writeln!(out, "Created topic {name}.");
            Ok(())
        }
        Some(Err(e)) if e.code == TOPIC_ALREADY_EXISTS && options.has("if-not-exists") => Ok(()),
        Some(Err(e)) => Err(e.clone().into()),
        None => Err(Failure(format!("No result for topic {name}"))),
    }
}

/// The names of topics `--topic` selects (all when absent), sorted, without internal topics
/// if asked.
async fn topics_for(options: &TopicsOptions, admin: &mut Admin) -> Result<Vec<String>, Failure> {
    let exclude_internal = options.has("exclude-internal");
    let all = admin.list_topics(true).await?;
    let wanted: Option<Vec<String>> = options.value("topic").map(|t| {
        t.trim()
            .split(',')
            .map(|s| s.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
            .collect()
    });
    Ok(all
        .into_iter()
        .filter(|t| !(exclude_internal && INTERNAL_TOPICS.contains(&t.as_str())))
        .filter(|t| wanted.as_ref().is_none_or(|w| w.contains(t)))
        .collect())
}

/// Kafka's `ensureTopicExists` (its message prints the `Optional`, as Kafka's does).
fn ensure_exists(options: &TopicsOptions, found: &[String]) -> Result<(), Failure> {
    if let Some(t) = options.value("topic").filter(|t| !t.is_empty()) {
        if found.is_empty() && !options.has("if-exists") {
            return Err(Failure(format!(
                "Topic 'Optional[{t}]' does not exist as expected"
            )));
        }
    }
    Ok(())
}

async fn list(
    options: &TopicsOptions,
    admin: &mut Admin,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let topics = topics_for(options, admin).await?;
    let _ = writeln!(out, "{}", topics.join("\n"));
    Ok(())
}

async fn delete(options: &TopicsOptions, admin: &mut Admin) -> Result<(), Failure> {
    let topics = topics_for(options, admin).await?;
    ensure_exists(options, &topics)?;
    if topics.is_empty() {
        return Ok(());
    }
    let results = admin.delete_topics(&topics).await?;
    for t in &topics {
        if let Some(Err(e)) = results.get(t) {
            return Err(e.clone().into());
        }
    }
    Ok(())
}

/// Kafka's `alterTopic`: every selected topic grows to `--partitions`; with
/// `--replica-assignment`, the new partitions take the lists from the current count on. Prints
/// nothing on success, as Kafka's tool.
async fn alter(options: &TopicsOptions, admin: &mut Admin) -> Result<(), Failure> {
    let count = parse_int(
        options.value("partitions").unwrap_or_default(),
        "partitions",
    )?;
    let count = i32::try_from(count).map_err(|_| {
        Failure(format!(
            "Cannot parse argument '{count}' of option partitions"
        ))
    })?;
    let assignment = match options
        .value("replica-assignment")
        .filter(|v| !v.is_empty())
    {
        Some(v) => Some(parse_assignment(v)?),
        None => None,
    };
    let topics = topics_for(options, admin).await?;
    ensure_exists(options, &topics)?;
    if topics.is_empty() {
        return Ok(());
    }
    let described = if assignment.is_some() {
        Some(admin.describe_topics(&topics).await?)
    } else {
        None
    };
    let mut wanted = BTreeMap::new();
    for name in &topics {
        let new_assignment = match (&assignment, &described) {
            (Some(lists), Some(d)) => {
                let current = match d.get(name) {
                    Some(Ok(t)) => t.partitions.len(),
                    Some(Err(e)) => return Err(e.clone().into()),
                    None => 0,
                };
                Some(
                    lists
                        .iter()
                        .skip(current)
                        .map(|b| b.iter().copied().map(NodeId).collect())
                        .collect(),
                )
            }
            _ => None,
        };
        wanted.insert(
            name.clone(),
            NewPartitions {
                total: count,
                assignment: new_assignment,
            },
        );
    }
    let results = admin.create_partitions(&wanted).await?;
    for name in &topics {
        if let Some(Err(e)) = results.get(name) {
            return Err(e.clone().into());
        }
    }
    Ok(())
}

async fn describe(
    options: &TopicsOptions,
    admin: &mut Admin,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let topics = topics_for(options, admin).await?;
    ensure_exists(options, &topics)?;
    if topics.is_empty() {
        return Ok(());
    }
    let described = admin.describe_topics(&topics).await?;
    let configs = admin.describe_topic_configs(&topics).await?;
    let live: Vec<NodeId> = admin.brokers().keys().copied().collect();
    let reports = [
        "under-replicated-partitions",
        "unavailable-partitions",
        "under-min-isr-partitions",
        "at-min-isr-partitions",
    ];
    let any_report = reports.iter().any(|r| options.has(r));
    let describe_configs = !any_report;
    let describe_partitions = !options.has("topics-with-overrides");
    let order = java_order::strings(
        Construction::WithCapacity(topics.len()),
        topics.iter().cloned(),
    );
    for name in order {
        let d = match described.get(&name) {
            Some(Ok(d)) => d,
            Some(Err(e)) => return Err(e.clone().into()),
            None => continue,
        };
        let entries: Vec<(String, String, i8)> = match configs.as_ref().and_then(|c| c.get(&name)) {
            Some(Ok(entries)) => entries.clone(),
            Some(Err(e)) => return Err(e.clone().into()),
            None => Vec::new(),
        };
        let non_default: Vec<(String, String)> = entries
            .iter()
            .filter(|(_, _, source)| *source != crate::client::topics::SOURCE_DEFAULT)
            .map(|(k, v, _)| (k.clone(), v.clone()))
            .collect();
        let min_isr: usize = entries
            .iter()
            .find(|(k, _, _)| k == "min.insync.replicas")
            .and_then(|(_, v, _)| v.parse().ok())
            .unwrap_or(1);
        if describe_configs && (!options.has("topics-with-overrides") || !non_default.is_empty()) {
            let rf = d.partitions.first().map(|p| p.replicas.len()).unwrap_or(0);
            let _ = out.write_all(
                format::topic_line(&name, &d.topic_id, d.partitions.len(), rf, &non_default)
                    .as_bytes(),
            );
        }
        if describe_partitions {
            for p in &d.partitions {
                let under_replicated = p.replicas.len() > p.isr.len();
                let unavailable = p.leader.is_none_or(|l| !live.contains(&l));
                let under_min_isr = p.leader.is_none() || p.isr.len() < min_isr;
                let at_min_isr = p.isr.len() == min_isr;
                let show = describe_configs
                    || (options.has("under-replicated-partitions") && under_replicated)
                    || (options.has("unavailable-partitions") && unavailable)
                    || (options.has("under-min-isr-partitions") && under_min_isr)
                    || (options.has("at-min-isr-partitions") && at_min_isr);
                if show {
                    let _ = out.write_all(format::partition_line(&name, p).as_bytes());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_split_on_equals_with_blanks() {
        let c = parse_configs(&["a = b".into(), "retention.ms=5".into()])
            .ok()
            .unwrap();
        assert_eq!(c.get("a").map(String::as_str), Some("b"));
        assert_eq!(c.get("retention.ms").map(String::as_str), Some("5"));
        assert!(parse_configs(&["novalue".into()]).is_err());
        assert!(parse_configs(&["a=b=c".into()]).is_err());
    }

    #[test]
    fn replica_assignments() {
        assert_eq!(
            parse_assignment("1:2,2:3").ok().unwrap(),
            vec![vec![1, 2], vec![2, 3]]
        );
        assert_eq!(
            parse_assignment("1:1").err().map(|f| f.0),
            Some("Partition replica lists may not contain duplicate entries: 1".to_string())
        );
        assert_eq!(
            parse_assignment("1:2,3").err().map(|f| f.0),
            Some("Partition 1 has different replication factor: [3]".to_string())
        );
    }
}
