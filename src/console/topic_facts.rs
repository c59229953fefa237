//! What the topics pages show, gathered where the Admin APIs read it, so the two agree:
//!
//! ```text
//!  topic list, placement, configs ── the replicated catalog (Metadata, DescribeConfigs)
//!  partition led here ─────────────── DataPlane: log start, high watermark (ListOffsets
//!                                     earliest / latest), the largest record timestamp
//!                                     (ListOffsets max timestamp); the directory's files
//!                                     (DescribeLogDirs' size)
//!  partition led by node N ────────── only N knows its size and log start ("on node N");
//!                                     its log end as the lag sampler last heard it from N,
//!                                     when a group consumes it and this node is the
//!                                     coordinator (the lag snapshot)
//! ```
//!
//! Nothing is invented: a figure this node does not hold is named as held elsewhere, and a
//! partition that cannot be read right now says why. Every page is bounded: at most
//! [`TOPICS_LISTED_MAX`] topics and [`LIST_PARTITIONS_MEASURED_MAX`] partitions measured on
//! the list, at most [`PARTITIONS_LISTED_MAX`] partitions on a topic's page.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crate::broker::Broker;
use crate::data::sizes::partition_bytes;
use crate::handlers::config_entries::{topic_entries, SOURCE_DYNAMIC_TOPIC_CONFIG};
use crate::lag::Snapshot;
use crate::topics::config_keys::topic_key;
use crate::topics::TopicSpec;

/// Most topics the list shows (by name); a line says how many more exist.
pub const TOPICS_LISTED_MAX: usize = 500;
/// Most partitions the list measures (opens and sizes) for one load; the topics past it are
/// listed without figures, which their own pages have.
pub const LIST_PARTITIONS_MEASURED_MAX: usize = 5_000;
/// Most partitions a topic's page lists (by index); a line says how many more exist.
pub const PARTITIONS_LISTED_MAX: usize = 1_000;

/// Figures of a partition this node leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalFigures {
    /// Bytes of the partition's directory (DescribeLogDirs' `partition_size`).
    pub size_bytes: u64,
    /// Log start offset (ListOffsets earliest).
    pub log_start: i64,
    /// High watermark (ListOffsets latest): where consumers read up to.
    pub log_end: i64,
    /// The largest record timestamp (ListOffsets max timestamp), `None` while empty.
    pub max_timestamp_ms: Option<i64>,
}

impl LocalFigures {
    /// Offsets between the log start and the high watermark (transaction markers count).
    pub fn records(&self) -> i64 {
        self.log_end.saturating_sub(self.log_start).max(0)
    }
}

/// What this node knows of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// Led here: read from the data plane and the partition's directory.
    Here(LocalFigures),
    /// Led here, but not readable right now (why, as the data plane said).
    Unavailable(String),
    /// Led by another node, which alone knows its size and log start; its log end as the lag
    /// sampler last heard it from that node, if it did.
    Elsewhere {
        /// The log end the lag sampler last heard.
        sampled_log_end: Option<i64>,
    },
}

/// One partition's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionFacts {
    /// Its index.
    pub index: i32,
    /// The node that leads it.
    pub leader: i32,
    /// Its replicas' nodes.
    pub replicas: Vec<i32>,
    /// Its figures.
    pub held: Held,
}

/// One topic config, as DescribeConfigs reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFact {
    /// Kafka's name.
    pub name: String,
    /// The effective value (`None`: Kafka reports null).
    pub value: Option<String>,
    /// Kafka's name of where the value comes from (`DYNAMIC_TOPIC_CONFIG`, `DEFAULT_CONFIG`).
    pub source: &'static str,
    /// Set on the topic (rather than a default).
    pub overridden: bool,
    /// Whether Cohort acts on it (the others are kept and reported only).
    pub honoured: bool,
}

/// Sums over a topic's partitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    /// Partitions summed (led here and readable).
    pub here: usize,
    /// Their bytes on disk.
    pub size_bytes: u64,
    /// Their log start offsets, summed.
    pub log_start: i64,
    /// Their high watermarks, summed.
    pub log_end: i64,
    /// Their records (offsets between start and end), summed.
    pub records: i64,
    /// Partitions not summed because another node leads them: count per node.
    pub elsewhere: BTreeMap<i32, usize>,
    /// Partitions led here but not readable now.
    pub unavailable: usize,
}

impl Totals {
    /// The sums of `partitions`.
    pub fn of(partitions: &[PartitionFacts]) -> Totals {
        let mut t = Totals::default();
        for p in partitions {
            match &p.held {
                Held::Here(f) => {
                    t.here += 1;
                    t.size_bytes = t.size_bytes.saturating_add(f.size_bytes);
                    t.log_start = t.log_start.saturating_add(f.log_start);
                    t.log_end = t.log_end.saturating_add(f.log_end);
                    t.records = t.records.saturating_add(f.records());
                }
                Held::Unavailable(_) => t.unavailable += 1,
                Held::Elsewhere { .. } => *t.elsewhere.entry(p.leader).or_default() += 1,
            }
        }
        t
    }
}

/// One row of the topics list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSummary {
    /// Its name (user input: escaped wherever shown).
    pub name: String,
    /// Its partition count.
    pub partitions: usize,
    /// Its sums; `None` when the page's measuring budget ran out before it.
    pub totals: Option<Totals>,
    /// `retention.ms`, `retention.bytes` and `cleanup.policy`.
    pub retention_ms: Option<ConfigFact>,
    /// See `retention_ms`.
    pub retention_bytes: Option<ConfigFact>,
    /// See `retention_ms`.
    pub cleanup_policy: Option<ConfigFact>,
}

/// The topics list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicList {
    /// When the figures were taken (unix ms).
    pub taken_at_ms: u64,
    /// The node answering.
    pub node_id: i32,
    /// Up to [`TOPICS_LISTED_MAX`] topics, by name.
    pub topics: Vec<TopicSummary>,
    /// How many topics exist.
    pub topics_total: usize,
}

/// One topic's page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicDetail {
    /// When the figures were taken (unix ms).
    pub taken_at_ms: u64,
    /// The node answering.
    pub node_id: i32,
    /// Its name.
    pub name: String,
    /// Its topic id.
    pub id: String,
    /// Its partition count.
    pub partition_count: usize,
    /// Up to [`PARTITIONS_LISTED_MAX`] partitions, by index.
    pub partitions: Vec<PartitionFacts>,
    /// Every topic config, by name.
    pub configs: Vec<ConfigFact>,
    /// Groups with committed offsets on it, as the lag snapshot has them.
    pub groups: Vec<String>,
    /// Whether this node knows the groups (it is the coordinator, whose snapshot has them);
    /// else `groups` is empty for want of knowing, not for want of groups.
    pub groups_known: bool,
}

/// Kafka's name of a `ConfigSource` code.
pub fn source_name(code: i8) -> &'static str {
    match code {
        1 => "DYNAMIC_TOPIC_CONFIG",
        2 => "DYNAMIC_BROKER_CONFIG",
        3 => "DYNAMIC_DEFAULT_BROKER_CONFIG",
        4 => "STATIC_BROKER_CONFIG",
        5 => "DEFAULT_CONFIG",
        6 => "DYNAMIC_BROKER_LOGGER_CONFIG",
        7 => "CLIENT_METRICS_CONFIG",
        8 => "GROUP_CONFIG",
        _ => "UNKNOWN",
    }
}

/// Every config of `spec`, as DescribeConfigs lists them.
pub fn configs(spec: &TopicSpec) -> Vec<ConfigFact> {
    topic_entries(spec)
        .into_iter()
        .map(|e| ConfigFact {
            honoured: topic_key(&e.name).is_some_and(|k| k.enforced),
            overridden: e.source == SOURCE_DYNAMIC_TOPIC_CONFIG,
            source: source_name(e.source),
            value: e.value,
            name: e.name,
        })
        .collect()
}

/// Log ends the lag sampler heard, by (topic, partition).
fn sampled_log_ends(snapshot: &Snapshot) -> HashMap<(&str, i32), i64> {
    let mut out = HashMap::new();
    for g in &snapshot.groups {
        for p in &g.partitions {
            if let Some(end) = p.log_end {
                out.insert((p.topic.as_str(), p.partition), end);
            }
        }
    }
    out
}

/// The first `take` partitions of `spec` as this node knows them.
async fn partitions(
    broker: &Broker,
    spec: &TopicSpec,
    take: usize,
    sampled: &HashMap<(&str, i32), i64>,
) -> Vec<PartitionFacts> {
    let me = broker.config.node_id;
    let mut out = Vec::with_capacity(take.min(spec.partitions.len()));
    // Directories to measure, by position in `out`: one blocking pass for the whole topic.
    let mut dirs: Vec<(usize, PathBuf)> = Vec::new();
    for (index, assignment) in (0..).zip(spec.partitions.iter().take(take)) {
        let leader = assignment.leader();
        let held = if leader != me {
            Held::Elsewhere {
                sampled_log_end: sampled.get(&(spec.name.as_str(), index)).copied(),
            }
        } else {
            match broker.data.partition(&spec.name, index).await {
                Ok(p) => {
                    dirs.push((out.len(), p.dir().to_path_buf()));
                    Held::Here(LocalFigures {
                        size_bytes: 0,
                        log_start: p.log_start_offset(),
                        log_end: p.high_watermark(),
                        max_timestamp_ms: p.max_timestamp_ms(),
                    })
                }
                Err(e) => Held::Unavailable(e.to_string()),
            }
        };
        out.push(PartitionFacts {
            index,
            leader,
            replicas: assignment.replicas.clone(),
            held,
        });
    }
    let topic_id = spec.id;
    let measured = tokio::task::spawn_blocking(move || {
        dirs.into_iter()
            .map(|(at, dir)| (at, partition_bytes(&dir, topic_id)))
            .collect::<Vec<_>>()
    })
    .await;
    match measured {
        Ok(sizes) => {
            for (at, size) in sizes {
                let Some(p) = out.get_mut(at) else { continue };
                match size {
                    Ok(bytes) => {
                        if let Held::Here(f) = &mut p.held {
                            f.size_bytes = bytes;
                        }
                    }
                    Err(e) => p.held = Held::Unavailable(format!("its size: {e}")),
                }
            }
        }
        Err(e) => {
            for p in &mut out {
                if matches!(p.held, Held::Here(_)) {
                    p.held = Held::Unavailable(format!("its size: {e}"));
                }
            }
        }
    }
    out
}

fn config_named(configs: &[ConfigFact], name: &str) -> Option<ConfigFact> {
    configs.iter().find(|c| c.name == name).cloned()
}

/// The topics list: every topic (up to [`TOPICS_LISTED_MAX`]) with its sums, measuring at
/// most `measure_max` partitions.
pub async fn list(
    broker: &Broker,
    snapshot: &Snapshot,
    now_ms: u64,
    measure_max: usize,
) -> TopicList {
    let mut specs = broker.catalog.topics();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    let sampled = sampled_log_ends(snapshot);
    let mut budget = measure_max;
    let mut topics = Vec::new();
    for spec in specs.iter().take(TOPICS_LISTED_MAX) {
        let totals = if spec.partitions.len() <= budget {
            budget -= spec.partitions.len();
            let parts = partitions(broker, spec, spec.partitions.len(), &sampled).await;
            Some(Totals::of(&parts))
        } else {
            // Later, smaller topics are not measured either: the list reads the same on
            // every load, and the note says where the budget ended.
            budget = 0;
            None
        };
        let configs = configs(spec);
        topics.push(TopicSummary {
            name: spec.name.clone(),
            partitions: spec.partitions.len(),
            totals,
            retention_ms: config_named(&configs, "retention.ms"),
            retention_bytes: config_named(&configs, "retention.bytes"),
            cleanup_policy: config_named(&configs, "cleanup.policy"),
        });
    }
    TopicList {
        taken_at_ms: now_ms,
        node_id: broker.config.node_id,
        topics,
        topics_total: specs.len(),
    }
}

/// Topic `name`'s page (`None`: no such topic), listing at most `partitions_max` partitions.
pub async fn detail(
    broker: &Broker,
    name: &str,
    snapshot: &Snapshot,
    now_ms: u64,
    partitions_max: usize,
) -> Option<TopicDetail> {
    let spec: Arc<TopicSpec> = broker.catalog.topic(name)?;
    let sampled = sampled_log_ends(snapshot);
    let parts = partitions(broker, &spec, partitions_max, &sampled).await;
    let groups: BTreeSet<&str> = snapshot
        .groups
        .iter()
        .filter(|g| g.partitions.iter().any(|p| p.topic == spec.name))
        .map(|g| g.group.as_str())
        .collect();
    Some(TopicDetail {
        taken_at_ms: now_ms,
        node_id: broker.config.node_id,
        name: spec.name.clone(),
        id: spec.id.to_string(),
        partition_count: spec.partitions.len(),
        partitions: parts,
        configs: configs(&spec),
        groups: groups.into_iter().map(str::to_owned).collect(),
        groups_known: snapshot.notice.is_none(),
    })
}
