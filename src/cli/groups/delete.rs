//! `--delete` (groups) and `--delete-offsets` (a group's offsets for some topics).

use crate::client::error::{
    GROUP_AUTHORIZATION_FAILED, GROUP_ID_NOT_FOUND, GROUP_SUBSCRIBED_TO_TOPIC, INVALID_GROUP_ID,
    NON_EMPTY_GROUP, TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION,
};
use crate::client::{ClientError, KafkaError, TopicPartition};

use super::context::{Run, Step, Stop};
use super::format::{self, DeleteOffsetsOutcome};
use super::java_order::{self, Construction};
use super::reset_plan;

/// Kafka's `Errors.forException(TimeoutException)`: how a call that never completed is named.
const REQUEST_TIMED_OUT: i16 = 7;

impl Run<'_, '_> {
    /// `--delete`.
    pub async fn delete_groups(&mut self) -> Step<()> {
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
        let results = match self.admin.delete_consumer_groups(&unique).await {
            Ok(r) => r,
            // Every group's future fails with the call's error.
            Err(e) => unique
                .iter()
                .map(|g| (g.clone(), Err(clone_error(&e))))
                .collect(),
        };
        let order = java_order::strings(
            Construction::WithCapacity(unique.len()),
            unique.iter().cloned(),
        );
        let mut succeeded = Vec::new();
        let mut failed = Vec::new();
        for group in order {
            match results.get(&group) {
                Some(Ok(())) => succeeded.push(group),
                Some(Err(e)) => failed.push((
                    group,
                    format!("java.util.concurrent.ExecutionException: {}", e.java_string()),
                )),
                None => failed.push((
                    group,
                    "java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.UnknownServerException: no result".to_string(),
                )),
            }
        }
        let succeeded = java_order::strings(Construction::Default, succeeded);
        let failed_order =
            java_order::strings(Construction::Default, failed.iter().map(|(g, _)| g.clone()));
        let failed: Vec<(String, String)> = failed_order
            .into_iter()
            .filter_map(|g| failed.iter().find(|(x, _)| *x == g).cloned())
            .collect();
        self.console
            .out(&format::delete_groups_report(&succeeded, &failed));
        Ok(())
    }

    /// `--delete-offsets`.
    pub async fn delete_offsets(&mut self) -> Step<()> {
        let group = self.options.value("group").unwrap_or_default().to_string();
        let topics = self.options.topics();
        let mut known: Vec<TopicPartition> = Vec::new();
        let mut whole: Vec<String> = Vec::new();
        for t in &topics {
            if t.contains(':') {
                known.extend(reset_plan::parse_topic_partitions(t).map_err(Stop::Usage)?);
            } else if !whole.contains(t) {
                whole.push(t.clone());
            }
        }
        let mut rows: Vec<(String, i32, Option<String>)> = Vec::new();
        let mut partitions = known;
        if !whole.is_empty() {
            match self.admin.describe_topics(&whole).await {
                Ok(described) => {
                    for (topic, d) in described {
                        match d {
                            Ok(d) => partitions.extend(
                                d.partitions
                                    .iter()
                                    .map(|p| TopicPartition::new(topic.clone(), p.partition)),
                            ),
                            Err(e) => rows.push((topic, -1, Some(e.java_string()))),
                        }
                    }
                }
                Err(e) => {
                    for topic in &whole {
                        rows.push((topic.clone(), -1, Some(e.java_string())));
                    }
                }
            }
        }
        partitions.sort();
        partitions.dedup();
        let (outcome, per_partition) = match self
            .admin
            .delete_consumer_group_offsets(&group, &partitions)
            .await
        {
            Ok(result) => {
                let top = result.group_error.clone().or_else(|| {
                    partitions
                        .iter()
                        .find_map(|tp| match result.partitions.get(tp) {
                            Some(Err(e)) => Some(e.clone()),
                            _ => None,
                        })
                });
                let rows: Vec<(TopicPartition, Option<String>)> = partitions
                    .iter()
                    .map(|tp| {
                        let err = match (&result.group_error, result.partitions.get(tp)) {
                            (Some(g), _) => Some(g.java_string()),
                            (None, Some(Err(e))) => Some(e.java_string()),
                            (None, Some(Ok(()))) => None,
                            (None, None) => Some(
                                KafkaError::with_message(
                                    UNKNOWN_TOPIC_OR_PARTITION,
                                    Some("The partition was not included in the response".into()),
                                )
                                .java_string(),
                            ),
                        };
                        (tp.clone(), err)
                    })
                    .collect();
                (top.map(|e| e.code), rows)
            }
            Err(e) => {
                let code = e.kafka_code().unwrap_or(REQUEST_TIMED_OUT);
                let text = e.java_string();
                (
                    Some(code),
                    partitions
                        .iter()
                        .map(|tp| (tp.clone(), Some(text.clone())))
                        .collect(),
                )
            }
        };
        for (tp, err) in per_partition {
            rows.push((tp.topic, tp.partition, err));
        }
        let outcome = match outcome {
            None => DeleteOffsetsOutcome::Success,
            Some(INVALID_GROUP_ID) => DeleteOffsetsOutcome::InvalidGroupId,
            Some(GROUP_ID_NOT_FOUND) => DeleteOffsetsOutcome::GroupIdNotFound,
            Some(GROUP_AUTHORIZATION_FAILED) => DeleteOffsetsOutcome::GroupAuthorizationFailed,
            Some(NON_EMPTY_GROUP) => DeleteOffsetsOutcome::NonEmptyGroup,
            Some(
                GROUP_SUBSCRIBED_TO_TOPIC | TOPIC_AUTHORIZATION_FAILED | UNKNOWN_TOPIC_OR_PARTITION,
            ) => DeleteOffsetsOutcome::PartitionLevel,
            Some(code) => DeleteOffsetsOutcome::Other(KafkaError::new(code).name()),
        };
        self.console.out(&format::delete_offsets_report(
            &group, &topics, &outcome, &rows,
        ));
        Ok(())
    }
}

fn clone_error(e: &ClientError) -> ClientError {
    match e {
        ClientError::Kafka(k) => ClientError::Kafka(k.clone()),
        ClientError::Timeout { call } => ClientError::Timeout { call: call.clone() },
        other => ClientError::Config(other.to_string()),
    }
}
