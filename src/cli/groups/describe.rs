//! `--describe`: the `--offsets` (default), `--members` and `--state` views, with the rows in the
//! order Kafka 4.0's tool produces them, and Cohort's `--lag-status` column.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client::error::UNKNOWN_TOPIC_OR_PARTITION;
use crate::client::groups::{GroupDescription, GroupOffsets, MemberDescription};
use crate::client::offsets::OffsetSpec;
use crate::client::{ClientError, TopicPartition};
use crate::lag::status::{evaluate, Observation};

use super::context::{Run, Step, Stop};
use super::format::{self, MemberRow, OffsetRow, StateRow};
use super::java_order::{self, Construction};
use super::options::DescribeView;

/// Milliseconds as seconds with three decimals, as the LAG-SECONDS column prints them.
fn seconds(ms: i64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Samples `--lag-status` takes over its window.
const LAG_SAMPLES: u32 = 5;
/// Default `--lag-window-ms`.
const LAG_WINDOW_MS_DEFAULT: u64 = 10_000;
/// Longest `--lag-window-ms` accepted (an hour).
const LAG_WINDOW_MS_MAX: u64 = 3_600_000;

/// Keys the rows of one group by partition, to line samples up.
type RowKey = (String, Option<String>, Option<i32>);

impl Run<'_, '_> {
    /// `--describe`.
    pub async fn describe(&mut self) -> Step<()> {
        let ids = if self.options.has("all-groups") {
            self.all_group_ids().await?
        } else {
            self.options.groups()
        };
        match self.options.describe_view() {
            DescribeView::Offsets => self.describe_offsets(&ids).await,
            DescribeView::Members => self.describe_members(&ids).await,
            DescribeView::State => self.describe_state(&ids).await,
        }
    }

    /// DescribeGroups for `ids`; the first failure (in Kafka's iteration order) ends the run.
    async fn described(&mut self, ids: &[String]) -> Step<BTreeMap<String, GroupDescription>> {
        let mut unique: Vec<String> = Vec::new();
        for id in ids {
            if !unique.contains(id) {
                unique.push(id.clone());
            }
        }
        self.console.progress("Describing groups", 0, unique.len());
        let mut results = self
            .admin
            .describe_consumer_groups(&unique)
            .await
            .map_err(|e| Stop::from_future(&e))?;
        let mut out = BTreeMap::new();
        for id in java_order::strings(Construction::CopyOf(unique.len()), unique.iter().cloned()) {
            match results.remove(&id) {
                Some(Ok(d)) => {
                    out.insert(id, d);
                }
                Some(Err(e)) => return Err(Stop::from_future(&e)),
                None => {
                    return Err(Stop::from_future(&ClientError::Config(format!(
                        "no description for group {id}"
                    ))))
                }
            }
        }
        self.console
            .progress("Describing groups", unique.len(), unique.len());
        Ok(out)
    }

    /// Committed offsets of `group`; a failure ends the run (Kafka wraps it in a
    /// RuntimeException).
    pub async fn committed(&mut self, group: &str) -> Step<GroupOffsets> {
        self.admin
            .list_consumer_group_offsets(group)
            .await
            .map_err(|e| Stop::from_runtime(&e))
    }

    /// Offsets of `spec` kind for `partitions`: `None` where the partition is unknown.
    pub async fn log_offsets(
        &mut self,
        partitions: &[TopicPartition],
        spec: OffsetSpec,
    ) -> Step<BTreeMap<TopicPartition, Option<i64>>> {
        if partitions.is_empty() {
            return Ok(BTreeMap::new());
        }
        let specs: BTreeMap<TopicPartition, OffsetSpec> =
            partitions.iter().map(|tp| (tp.clone(), spec)).collect();
        let answers = self
            .admin
            .list_offsets(&specs)
            .await
            .map_err(|e| Stop::from_runtime(&e))?;
        let mut out = BTreeMap::new();
        for tp in partitions {
            let value = match answers.get(tp) {
                Some(Ok(info)) => Some(info.offset.0),
                Some(Err(e)) if e.code == UNKNOWN_TOPIC_OR_PARTITION => None,
                Some(Err(e)) => return Err(Stop::from_runtime(&ClientError::Kafka(e.clone()))),
                None => None,
            };
            out.insert(tp.clone(), value);
        }
        Ok(out)
    }

    /// The rows of one group's `--offsets` table, in Kafka's order: members with an assignment,
    /// largest first, each member's partitions as a `HashMap` built from them sorted by index
    /// iterates; then committed partitions nobody owns.
    async fn offset_rows(&mut self, desc: &GroupDescription) -> Step<Vec<OffsetRow>> {
        let group = desc.group_id.clone();
        let committed = self.committed(&group).await?;
        let mut members: Vec<&MemberDescription> = desc
            .members
            .iter()
            .filter(|m| !m.assignment.is_empty())
            .collect();
        members.sort_by_key(|m| std::cmp::Reverse(distinct(&m.assignment)));
        let mut rows = Vec::new();
        let mut assigned: Vec<TopicPartition> = Vec::new();
        for m in members {
            let mut partitions = java_order::topic_partitions(
                Construction::HashSetOf(m.assignment.len()),
                m.assignment.iter().cloned(),
            );
            partitions.sort_by_key(|tp| tp.partition);
            assigned.extend(partitions.iter().cloned());
            let owner = (m.member_id.clone(), m.host.clone(), m.client_id.clone());
            rows.extend(
                self.partition_rows(&group, &partitions, &committed, Some(owner))
                    .await?,
            );
        }
        let committed_order =
            java_order::topic_partitions(Construction::Default, committed.keys().cloned());
        let unassigned_keys: Vec<TopicPartition> = committed_order
            .into_iter()
            .filter(|tp| !assigned.contains(tp))
            .collect();
        if !unassigned_keys.is_empty() {
            let mut unassigned =
                java_order::topic_partitions(Construction::Default, unassigned_keys);
            unassigned.sort_by_key(|tp| tp.partition);
            let owner = (
                format::MISSING.to_string(),
                format::MISSING.to_string(),
                format::MISSING.to_string(),
            );
            rows.extend(
                self.partition_rows(&group, &unassigned, &committed, Some(owner))
                    .await?,
            );
        }
        Ok(rows)
    }

    async fn partition_rows(
        &mut self,
        group: &str,
        sorted: &[TopicPartition],
        committed: &GroupOffsets,
        owner: Option<(String, String, String)>,
    ) -> Step<Vec<OffsetRow>> {
        let log_end = self.log_offsets(sorted, OffsetSpec::Latest).await?;
        let order = java_order::topic_partitions(Construction::Default, sorted.iter().cloned());
        Ok(order
            .into_iter()
            .map(|tp| {
                let c = committed.get(&tp).cloned().flatten();
                let current = c.as_ref().map(|c| c.offset.0);
                let end = log_end.get(&tp).copied().flatten();
                OffsetRow {
                    group: group.to_string(),
                    topic: Some(tp.topic.clone()),
                    partition: Some(tp.partition),
                    leader_epoch: c.as_ref().and_then(|c| c.leader_epoch).map(|e| e.0),
                    current_offset: current,
                    log_end_offset: end,
                    lag: crate::lag::offset_lag(current, end),
                    consumer_id: owner.as_ref().map(|o| o.0.clone()),
                    host: owner.as_ref().map(|o| o.1.clone()),
                    client_id: owner.as_ref().map(|o| o.2.clone()),
                    lag_status: None,
                    lag_seconds: None,
                }
            })
            .collect())
    }

    async fn all_offset_rows(
        &mut self,
        described: &BTreeMap<String, GroupDescription>,
    ) -> Step<BTreeMap<String, Vec<OffsetRow>>> {
        let mut out = BTreeMap::new();
        let total = described.len();
        for (n, (id, desc)) in described.iter().enumerate() {
            out.insert(id.clone(), self.offset_rows(desc).await?);
            self.console.progress("Collecting offsets", n + 1, total);
        }
        Ok(out)
    }

    async fn describe_offsets(&mut self, ids: &[String]) -> Step<()> {
        let described = self.described(ids).await?;
        let verbose = self.options.has("verbose");
        let extras = format::Extras {
            lag_status: self.options.has("lag-status"),
            lag_seconds: self.options.has("lag-seconds"),
        };
        let mut rows = self.all_offset_rows(&described).await?;
        if extras.lag_status {
            rows = self.sample_lag_status(&described, rows).await?;
        }
        if extras.lag_seconds {
            self.lag_seconds(&mut rows).await?;
        }
        for (id, desc) in &described {
            let group_rows = rows.remove(id).unwrap_or_default();
            let gate =
                format::gate(id, &desc.state, Some(group_rows.len())).map_err(kafka_exception)?;
            self.console.out(&gate.stdout);
            self.console.err(&gate.stderr);
            if gate.print_table {
                self.console
                    .out(&format::offsets_table(&group_rows, verbose, extras));
            }
        }
        Ok(())
    }

    /// Sets each row's lag in seconds: 0 when caught up; else now minus the timestamp of the
    /// record at the committed offset, read by a one-batch Fetch at the partition's leader;
    /// `-` when that record cannot be read (its offset is below the log start, or unknown).
    async fn lag_seconds(&mut self, rows: &mut BTreeMap<String, Vec<OffsetRow>>) -> Step<()> {
        let mut wanted: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        let mut times: BTreeMap<(TopicPartition, i64), Option<i64>> = BTreeMap::new();
        // One Fetch per distinct committed offset of a partition (groups may differ).
        let mut lagging: Vec<(TopicPartition, i64)> = rows
            .values()
            .flatten()
            .filter(|r| r.lag.is_some_and(|l| l > 0))
            .filter_map(|r| {
                Some((
                    TopicPartition::new(r.topic.clone()?, r.partition?),
                    r.current_offset?,
                ))
            })
            .collect();
        lagging.sort();
        lagging.dedup();
        while !lagging.is_empty() {
            wanted.clear();
            lagging.retain(|(tp, offset)| {
                if wanted.contains_key(tp) {
                    true
                } else {
                    wanted.insert(tp.clone(), *offset);
                    false
                }
            });
            let got = self
                .admin
                .record_timestamps(&wanted)
                .await
                .map_err(|e| Stop::from_runtime(&e))?;
            for (tp, offset) in &wanted {
                times.insert((tp.clone(), *offset), got.get(tp).copied().flatten());
            }
        }
        let now_ms = crate::clock::unix_ms();
        for r in rows.values_mut().flatten() {
            r.lag_seconds = match r.lag {
                Some(l) if l <= 0 => Some("0".to_string()),
                Some(_) => r
                    .topic
                    .clone()
                    .zip(r.partition)
                    .zip(r.current_offset)
                    .and_then(|((t, p), c)| times.get(&(TopicPartition::new(t, p), c)).copied())
                    .flatten()
                    .map(|ts| seconds(now_ms.saturating_sub(ts).max(0))),
                None => None,
            };
        }
        Ok(())
    }

    /// Samples committed and log-end offsets over the window and sets each row's status from
    /// the last sample's values and the evaluator's verdict.
    async fn sample_lag_status(
        &mut self,
        described: &BTreeMap<String, GroupDescription>,
        first: BTreeMap<String, Vec<OffsetRow>>,
    ) -> Step<BTreeMap<String, Vec<OffsetRow>>> {
        let window_ms = match self.options.value("lag-window-ms") {
            Some(v) => v
                .parse::<u64>()
                .ok()
                .filter(|w| *w <= LAG_WINDOW_MS_MAX)
                .ok_or_else(|| {
                    Stop::exception(format!(
                        "joptsimple.OptionArgumentConversionException: Cannot parse argument '{v}' of option lag-window-ms"
                    ))
                })?,
            None => LAG_WINDOW_MS_DEFAULT,
        };
        let interval = Duration::from_millis(window_ms / u64::from(LAG_SAMPLES - 1));
        let started = std::time::Instant::now();
        let mut history: BTreeMap<RowKey, Vec<Observation>> = BTreeMap::new();
        let mut record = |rows: &BTreeMap<String, Vec<OffsetRow>>, at_ms: u64| {
            for r in rows.values().flatten() {
                history
                    .entry((r.group.clone(), r.topic.clone(), r.partition))
                    .or_default()
                    .push(Observation {
                        at_ms,
                        committed: r.current_offset,
                        log_end: r.log_end_offset,
                        log_start: None,
                        commits: None,
                        lag_ms: None,
                    });
            }
        };
        record(&first, 0);
        let mut last = first;
        for n in 1..LAG_SAMPLES {
            self.console
                .progress("Sampling lag", n as usize, LAG_SAMPLES as usize - 1);
            tokio::time::sleep(interval).await;
            last = self.all_offset_rows(described).await?;
            record(&last, started.elapsed().as_millis() as u64);
        }
        for rows in last.values_mut() {
            for r in rows.iter_mut() {
                let key = (r.group.clone(), r.topic.clone(), r.partition);
                r.lag_status = history
                    .get(&key)
                    .and_then(|window| evaluate(window))
                    .map(|s| s.as_str().to_string());
            }
        }
        Ok(last)
    }

    async fn describe_members(&mut self, ids: &[String]) -> Step<()> {
        let described = self.described(ids).await?;
        let verbose = self.options.has("verbose");
        for (id, desc) in &described {
            let rows: Vec<MemberRow> = desc
                .members
                .iter()
                .map(|m| MemberRow {
                    group: id.clone(),
                    consumer_id: m.member_id.clone(),
                    group_instance_id: m.group_instance_id.clone().unwrap_or_default(),
                    host: m.host.clone(),
                    client_id: m.client_id.clone(),
                    num_partitions: distinct(&m.assignment),
                    assignment: m.assignment.clone(),
                    current_epoch: m.member_epoch,
                    target_epoch: desc.target_assignment_epoch,
                    target_assignment: m.target_assignment.clone().unwrap_or_default(),
                    upgraded: m.upgraded,
                })
                .collect();
            let gate = format::gate(id, &desc.state, Some(rows.len())).map_err(kafka_exception)?;
            self.console.out(&gate.stdout);
            self.console.err(&gate.stderr);
            self.console.out(&format::members_table(&rows, verbose));
        }
        Ok(())
    }

    async fn describe_state(&mut self, ids: &[String]) -> Step<()> {
        let described = self.described(ids).await?;
        let verbose = self.options.has("verbose");
        for (id, desc) in &described {
            let gate = format::gate(id, &desc.state, Some(1)).map_err(kafka_exception)?;
            self.console.out(&gate.stdout);
            self.console.err(&gate.stderr);
            if gate.print_table {
                let row = StateRow {
                    group: id.clone(),
                    coordinator: format::coordinator_string(
                        &desc.coordinator.host,
                        desc.coordinator.port,
                        desc.coordinator.id.0,
                    ),
                    assignment_strategy: desc.partition_assignor.clone(),
                    state: format::canonical_state(&desc.state).to_string(),
                    group_epoch: desc.group_epoch,
                    target_assignment_epoch: desc.target_assignment_epoch,
                    num_members: desc.members.len(),
                };
                self.console.out(&format::state_table(&row, verbose));
            }
        }
        Ok(())
    }
}

/// Number of distinct partitions (an assignment is a set in Kafka's Admin).
fn distinct(assignment: &[TopicPartition]) -> usize {
    let mut v: Vec<&TopicPartition> = assignment.iter().collect();
    v.sort();
    v.dedup();
    v.len()
}

fn kafka_exception(message: String) -> Stop {
    Stop::exception(format!("org.apache.kafka.common.KafkaException: {message}"))
}
