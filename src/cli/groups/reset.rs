//! `--reset-offsets`: per group, refuse unless the group is inactive, work out the partitions in
//! scope and their new offsets with Kafka's rules for each specifier, commit them as an
//! administrator with `--execute`, and print the plan (or export it as CSV).

use std::collections::BTreeMap;

use crate::client::error::{ClientError, GROUP_ID_NOT_FOUND};
use crate::client::offsets::OffsetSpec;
use crate::client::{Offset, TopicPartition};

use super::context::{Run, Step, Stop};
use super::format::{self, ResetPlan};
use super::java_order::{self, Construction};
use super::jopt;
use super::options::RESET_SCENARIOS;
use super::reset_plan::{self, clamp, FilePlan};
use super::timeparse;

/// Partitions to reset, in the order Kafka's tool collected them.
type Partitions = Vec<TopicPartition>;

impl Run<'_, '_> {
    /// `--reset-offsets`.
    pub async fn reset_offsets(&mut self) -> Step<()> {
        let ids = if self.options.has("all-groups") {
            self.all_group_ids().await?
        } else {
            self.options.groups()
        };
        let mut unique: Vec<String> = Vec::new();
        for id in ids {
            if !unique.contains(&id) {
                unique.push(id);
            }
        }
        let mut described = self
            .admin
            .describe_consumer_groups(&unique)
            .await
            .map_err(|e| Stop::from_runtime(&e))?;
        let order = java_order::strings(Construction::CopyOf(unique.len()), unique.iter().cloned());
        let mut result: Vec<(String, Vec<(TopicPartition, i64)>)> = Vec::new();
        let total = order.len();
        for (n, group) in order.into_iter().enumerate() {
            let state = match described.remove(&group) {
                Some(Ok(d)) => format::canonical_state(&d.state).to_string(),
                // A 4.0 broker answers GROUP_ID_NOT_FOUND for a group that does not exist yet;
                // such a group is as inactive as a Dead one.
                Some(Err(ClientError::Kafka(e))) if e.code == GROUP_ID_NOT_FOUND => {
                    "Dead".to_string()
                }
                Some(Err(e)) => return Err(Stop::from_runtime(&e)),
                None => "Dead".to_string(),
            };
            let planned = if state == "Empty" || state == "Dead" {
                let partitions = self.partitions_to_reset(&group).await?;
                let prepared = self.prepare_offsets(&group, &partitions).await?;
                if !self.options.dry_run() {
                    self.commit_plan(&group, &prepared).await?;
                }
                prepared
            } else {
                self.console.out(&format::error(&format!(
                    "Assignments can only be reset if the group '{group}' is inactive, but the current state is {state}."
                )));
                Vec::new()
            };
            result.push((group, planned));
            self.console.progress("Resetting groups", n + 1, total);
        }
        let plan: ResetPlan = {
            let order =
                java_order::strings(Construction::Default, result.iter().map(|(g, _)| g.clone()));
            order
                .into_iter()
                .filter_map(|g| result.iter().find(|(x, _)| *x == g).cloned())
                .collect()
        };
        if self.options.has("export") {
            let single = self.options.groups().len() == 1;
            self.console.out(&format::export_csv(&plan, single));
        } else {
            self.console.out(&format::reset_plan_table(&plan));
        }
        Ok(())
    }

    async fn commit_plan(&mut self, group: &str, prepared: &[(TopicPartition, i64)]) -> Step<()> {
        let offsets: BTreeMap<TopicPartition, Offset> = prepared
            .iter()
            .map(|(tp, o)| (tp.clone(), Offset(*o)))
            .collect();
        let results = self
            .admin
            .alter_consumer_group_offsets(group, &offsets)
            .await
            .map_err(|e| Stop::from_runtime(&e))?;
        // Kafka's `all().get()` fails with the first partition error.
        if let Some(Err(e)) = results.values().find(|r| r.is_err()) {
            return Err(Stop::from_runtime(&ClientError::Kafka(e.clone())));
        }
        Ok(())
    }

    /// The partitions in scope: `--all-topics` = those with a committed offset; `--topic t` =
    /// all of t's partitions; `--topic t:0,1` = as given.
    async fn partitions_to_reset(&mut self, group: &str) -> Step<Partitions> {
        if self.options.has("all-topics") {
            let committed = self.committed(group).await?;
            return Ok(java_order::topic_partitions(
                Construction::Default,
                committed.keys().cloned(),
            ));
        }
        if self.options.has("topic") {
            let args = self.options.topics();
            let mut specified: Partitions = Vec::new();
            let mut whole: Vec<String> = Vec::new();
            for arg in &args {
                if arg.contains(':') {
                    specified.extend(reset_plan::parse_topic_partitions(arg).map_err(Stop::Usage)?);
                } else if !whole.contains(arg) {
                    whole.push(arg.clone());
                }
            }
            if !whole.is_empty() {
                let described = self
                    .admin
                    .describe_topics(&whole)
                    .await
                    .map_err(|e| Stop::from_runtime(&e))?;
                for topic in java_order::strings(
                    Construction::WithCapacity(whole.len()),
                    whole.iter().cloned(),
                ) {
                    match described.get(&topic) {
                        Some(Ok(d)) => specified.extend(
                            d.partitions
                                .iter()
                                .map(|p| TopicPartition::new(topic.clone(), p.partition)),
                        ),
                        Some(Err(e)) => {
                            return Err(Stop::from_runtime(&ClientError::Kafka(e.clone())))
                        }
                        None => {}
                    }
                }
            }
            let mut seen = Vec::new();
            specified.retain(|tp| {
                let fresh = !seen.contains(tp);
                if fresh {
                    seen.push(tp.clone());
                }
                fresh
            });
            return Ok(specified);
        }
        if !self.options.has("from-file") {
            return Err(Stop::Usage(
                "One of the reset scopes should be defined: --all-topics, --topic.".to_string(),
            ));
        }
        Ok(Vec::new())
    }

    /// Log-start and log-end offsets of `partitions`, then each requested offset clamped into
    /// range (with Kafka's warnings on stderr). Output follows the request order through the
    /// same maps Kafka builds.
    async fn check_offsets_range(
        &mut self,
        requested: &[(TopicPartition, i64)],
    ) -> Step<Vec<(TopicPartition, i64)>> {
        let keys: Vec<TopicPartition> = requested.iter().map(|(tp, _)| tp.clone()).collect();
        let starts = self.log_offsets(&keys, OffsetSpec::Earliest).await?;
        let ends = self.log_offsets(&keys, OffsetSpec::Latest).await?;
        let mut out = Vec::new();
        for (tp, offset) in requested {
            let c = clamp(
                tp,
                *offset,
                starts.get(tp).copied().flatten(),
                ends.get(tp).copied().flatten(),
            );
            if let Some(w) = c.warning {
                self.console.err(&format!("WARN {w}\n"));
            }
            out.push((tp.clone(), c.offset));
        }
        Ok(reorder(out))
    }

    /// New offsets for `partitions` under the chosen specifier.
    async fn prepare_offsets(
        &mut self,
        group: &str,
        partitions: &Partitions,
    ) -> Step<Vec<(TopicPartition, i64)>> {
        if let Some(v) = self.options.value("to-offset") {
            let offset = parse_long(v, "to-offset")?;
            let requested: Vec<(TopicPartition, i64)> =
                partitions.iter().map(|tp| (tp.clone(), offset)).collect();
            return self.check_offsets_range(&reorder(requested)).await;
        }
        if self.options.has("to-earliest") {
            return self
                .offsets_or_usage(
                    partitions,
                    OffsetSpec::Earliest,
                    "Error getting starting offset of topic partition: ",
                )
                .await;
        }
        if self.options.has("to-latest") {
            return self
                .offsets_or_usage(
                    partitions,
                    OffsetSpec::Latest,
                    "Error getting ending offset of topic partition: ",
                )
                .await;
        }
        if let Some(v) = self.options.value("shift-by") {
            let shift = parse_long(v, "shift-by")?;
            let committed = self.committed(group).await?;
            let mut requested = Vec::new();
            for tp in partitions {
                let current = committed.get(tp).cloned().flatten().ok_or_else(|| {
                    Stop::Usage(format!(
                        "Cannot shift offset for partition {tp} since there is no current committed offset"
                    ))
                })?;
                requested.push((tp.clone(), current.offset.0.saturating_add(shift)));
            }
            return self.check_offsets_range(&reorder(requested)).await;
        }
        if let Some(v) = self.options.value("to-datetime") {
            let ts = timeparse::parse_datetime(v).map_err(Stop::wrapped)?;
            return self.offsets_for_timestamp(partitions, ts).await;
        }
        if let Some(v) = self.options.value("by-duration") {
            let duration_ms = timeparse::parse_duration(v).map_err(Stop::exception)?;
            let now_ms = crate::clock::unix_ms();
            return self
                .offsets_for_timestamp(partitions, now_ms.saturating_sub(duration_ms))
                .await;
        }
        if let Some(path) = self.options.value("from-file") {
            let plan = read_plan(path, &self.options.groups())?;
            return match plan.get(group) {
                None => {
                    self.console.out(&format::error(&format!(
                        "No reset plan for group {group} found"
                    )));
                    Ok(Vec::new())
                }
                Some(entries) => {
                    let requested = java_order::topic_partitions(
                        Construction::Default,
                        entries.iter().map(|(tp, _)| tp.clone()),
                    )
                    .into_iter()
                    .filter_map(|tp| {
                        entries
                            .iter()
                            .rev()
                            .find(|(t, _)| *t == tp)
                            .map(|(_, o)| (tp, *o))
                    })
                    .collect::<Vec<_>>();
                    self.check_offsets_range(&requested).await
                }
            };
        }
        if self.options.has("to-current") {
            let committed = self.committed(group).await?;
            let mut with: Vec<(TopicPartition, i64)> = Vec::new();
            let mut without: Vec<TopicPartition> = Vec::new();
            for tp in partitions {
                match committed.get(tp) {
                    Some(Some(c)) => with.push((tp.clone(), c.offset.0)),
                    Some(None) => {
                        return Err(Stop::exception(format!(
                            "java.lang.IllegalStateException: Expected a valid current offset for topic partition: {tp}"
                        )))
                    }
                    None => without.push(tp.clone()),
                }
            }
            let ends = self.log_offsets(&without, OffsetSpec::Latest).await?;
            let mut all = reorder(with);
            for tp in java_order::topic_partitions(Construction::Default, without.iter().cloned()) {
                match ends.get(&tp).copied().flatten() {
                    Some(end) => all.push((tp, end)),
                    None => {
                        return Err(Stop::Usage(format!(
                            "Error getting ending offset of topic partition: {tp}"
                        )))
                    }
                }
            }
            return Ok(reorder(all));
        }
        let scenarios: Vec<String> = jopt::hash_set_order(RESET_SCENARIOS)
            .iter()
            .map(|n| jopt::spec_name(n))
            .collect();
        Err(Stop::Usage(format!(
            "Option '{}' requires one of the following scenarios: [{}]",
            jopt::spec_name("reset-offsets"),
            scenarios.join(", ")
        )))
    }

    async fn offsets_or_usage(
        &mut self,
        partitions: &Partitions,
        spec: OffsetSpec,
        missing: &str,
    ) -> Step<Vec<(TopicPartition, i64)>> {
        let found = self.log_offsets(partitions, spec).await?;
        let mut out = Vec::new();
        for tp in partitions {
            match found.get(tp).copied().flatten() {
                Some(o) => out.push((tp.clone(), o)),
                None => return Err(Stop::Usage(format!("{missing}{tp}"))),
            }
        }
        Ok(reorder(out))
    }

    /// ListOffsets by timestamp; partitions with no record that new fall back to the log end,
    /// with Kafka's notice on stdout.
    async fn offsets_for_timestamp(
        &mut self,
        partitions: &Partitions,
        timestamp_ms: i64,
    ) -> Step<Vec<(TopicPartition, i64)>> {
        let found = self
            .log_offsets(partitions, OffsetSpec::Timestamp(timestamp_ms))
            .await?;
        let mut hits: Vec<(TopicPartition, i64)> = Vec::new();
        let mut empty: Vec<TopicPartition> = Vec::new();
        for tp in java_order::topic_partitions(Construction::Default, found.keys().cloned()) {
            match found.get(&tp).copied().flatten() {
                Some(o) if o != -1 => hits.push((tp, o)),
                Some(_) => empty.push(tp),
                None => {}
            }
        }
        for tp in &empty {
            self.console.out(&format!(
                "\nWarn: Partition {} from topic {} is empty. Falling back to latest known offset.\n",
                tp.partition, tp.topic
            ));
        }
        let ends = self.log_offsets(&empty, OffsetSpec::Latest).await?;
        for tp in empty {
            if let Some(end) = ends.get(&tp).copied().flatten() {
                hits.push((tp, end));
            }
        }
        let mut out = Vec::new();
        for tp in partitions {
            match hits.iter().find(|(t, _)| t == tp) {
                Some((_, o)) => out.push((tp.clone(), *o)),
                None => {
                    return Err(Stop::Usage(format!(
                        "Error getting offset by timestamp of topic partition: {tp}"
                    )))
                }
            }
        }
        Ok(reorder(out))
    }
}

/// The entries in the iteration order of a Java `HashMap` filled with them in order.
fn reorder(entries: Vec<(TopicPartition, i64)>) -> Vec<(TopicPartition, i64)> {
    let order = java_order::topic_partitions(
        Construction::Default,
        entries.iter().map(|(tp, _)| tp.clone()),
    );
    order
        .into_iter()
        .filter_map(|tp| entries.iter().rev().find(|(t, _)| *t == tp).cloned())
        .collect()
}

fn parse_long(v: &str, option: &str) -> Step<i64> {
    v.trim().parse::<i64>().map_err(|_| {
        Stop::exception(format!(
            "joptsimple.OptionArgumentConversionException: Cannot parse argument '{v}' of option {option}"
        ))
    })
}

fn read_plan(path: &str, groups: &[String]) -> Step<FilePlan> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| Stop::wrapped(format!("java.nio.file.NoSuchFileException: {path} ({e})")))?;
    let mut text = String::new();
    file.take(reset_plan::PLAN_BYTES_MAX + 1)
        .read_to_string(&mut text)
        .map_err(|e| Stop::wrapped(format!("java.io.IOException: {path}: {e}")))?;
    if text.len() as u64 > reset_plan::PLAN_BYTES_MAX {
        return Err(Stop::wrapped(format!(
            "java.io.IOException: {path} is larger than {} bytes",
            reset_plan::PLAN_BYTES_MAX
        )));
    }
    let single = (groups.len() == 1).then(|| groups[0].as_str());
    reset_plan::parse_plan(&text, single).map_err(|e| {
        Stop::wrapped(format!(
            "com.fasterxml.jackson.databind.RuntimeJsonMappingException: {e}"
        ))
    })
}
