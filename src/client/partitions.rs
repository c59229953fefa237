//! Partition operations of the Admin client: CreatePartitions (at the controller, as
//! `kafka-topics.sh --alter --partitions` sends it) and DeleteRecords (at each partition's leader,
//! as `kafka-delete-records.sh` sends it; leadership errors refresh metadata and retry until the
//! call's deadline).

use std::collections::BTreeMap;

use kafka_protocol::messages::{
    create_partitions_request::{
        CreatePartitionsAssignment, CreatePartitionsRequest, CreatePartitionsTopic,
    },
    delete_records_request::{DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic},
    ApiKey, BrokerId, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::Admin;
use super::error::{ClientError, ClientResult, KafkaError, NONE};
use super::offsets::{retriable, route, Route};
use super::types::{NodeId, Offset, TopicPartition};

/// A topic's new partition count, with the placement of the new partitions if chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPartitions {
    /// The total count after the change.
    pub total: i32,
    /// Replicas of each new partition, in order; `None` lets the broker place them.
    pub assignment: Option<Vec<Vec<NodeId>>>,
}

impl Admin {
    /// CreatePartitions at the controller; each topic's outcome.
    pub async fn create_partitions(
        &mut self,
        topics: &BTreeMap<String, NewPartitions>,
    ) -> ClientResult<BTreeMap<String, Result<(), KafkaError>>> {
        let timeout = self.call_timeout();
        let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        Admin::deadline(timeout, "createPartitions", async {
            let addr = self.controller_or_any().await?;
            let request = CreatePartitionsRequest::default()
                .with_timeout_ms(timeout_ms)
                .with_topics(
                    topics
                        .iter()
                        .map(|(name, p)| {
                            CreatePartitionsTopic::default()
                                .with_name(TopicName(StrBytes::from_string(name.clone())))
                                .with_count(p.total)
                                .with_assignments(p.assignment.as_ref().map(|a| {
                                    a.iter()
                                        .map(|brokers| {
                                            CreatePartitionsAssignment::default().with_broker_ids(
                                                brokers.iter().map(|b| BrokerId(b.0)).collect(),
                                            )
                                        })
                                        .collect()
                                }))
                        })
                        .collect(),
                );
            let response = self.send(&addr, &request).await?;
            let mut out = BTreeMap::new();
            for r in response.results {
                let result = if r.error_code == NONE {
                    Ok(())
                } else {
                    Err(KafkaError::with_message(
                        r.error_code,
                        r.error_message.map(|m| m.to_string()),
                    ))
                };
                out.insert(r.name.0.to_string(), result);
            }
            for name in topics.keys() {
                if !out.contains_key(name) {
                    return Err(ClientError::Protocol {
                        addr: addr.clone(),
                        detail: format!("CreatePartitions response has no entry for {name}"),
                    });
                }
            }
            Ok(out)
        })
        .await
    }

    /// DeleteRecords before each offset (−1: the high watermark), at each partition's leader;
    /// each partition's new low watermark.
    pub async fn delete_records(
        &mut self,
        before: &BTreeMap<TopicPartition, i64>,
    ) -> ClientResult<BTreeMap<TopicPartition, Result<Offset, KafkaError>>> {
        let timeout = self.call_timeout();
        let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        Admin::deadline(timeout, "deleteRecords", async {
            let mut results = BTreeMap::new();
            let mut pending = before.clone();
            let mut attempt = 0u32;
            while !pending.is_empty() {
                let mut topics: Vec<String> = pending.keys().map(|tp| tp.topic.clone()).collect();
                topics.dedup();
                let metadata = self.metadata(Some(&topics)).await?;
                let mut by_leader: BTreeMap<NodeId, Vec<(TopicPartition, i64)>> = BTreeMap::new();
                for (tp, offset) in &pending {
                    match route(&metadata, tp) {
                        Route::Leader(node) => by_leader
                            .entry(node)
                            .or_default()
                            .push((tp.clone(), *offset)),
                        Route::Retry => {}
                        Route::Fail(e) => {
                            results.insert(tp.clone(), Err(e));
                        }
                    }
                }
                pending.retain(|tp, _| !results.contains_key(tp));
                for (leader, partitions) in by_leader {
                    let Some(addr) = self.brokers().get(&leader).map(|n| n.address()) else {
                        continue;
                    };
                    match self.delete_records_at(&addr, &partitions, timeout_ms).await {
                        Ok(answers) => {
                            for (tp, answer) in answers {
                                match answer {
                                    Err(e) if retriable(e.code) => {}
                                    answer => {
                                        pending.remove(&tp);
                                        results.insert(tp, answer);
                                    }
                                }
                            }
                        }
                        Err(e @ ClientError::UnsupportedVersion(_)) => return Err(e),
                        Err(e) => {
                            tracing::debug!(error = %e, %addr, "DeleteRecords failed; retrying")
                        }
                    }
                }
                if !pending.is_empty() {
                    self.backoff(attempt).await;
                    attempt += 1;
                }
            }
            Ok(results)
        })
        .await
    }

    async fn delete_records_at(
        &mut self,
        addr: &str,
        partitions: &[(TopicPartition, i64)],
        timeout_ms: i32,
    ) -> ClientResult<Vec<(TopicPartition, Result<Offset, KafkaError>)>> {
        let version = self
            .broker_versions(addr)
            .await?
            .pick(ApiKey::DeleteRecords)?;
        let mut topics: Vec<DeleteRecordsTopic> = Vec::new();
        for (tp, offset) in partitions {
            let p = DeleteRecordsPartition::default()
                .with_partition_index(tp.partition)
                .with_offset(*offset);
            match topics.last_mut() {
                Some(t) if t.name.0.as_str() == tp.topic => t.partitions.push(p),
                _ => topics.push(
                    DeleteRecordsTopic::default()
                        .with_name(TopicName(StrBytes::from_string(tp.topic.clone())))
                        .with_partitions(vec![p]),
                ),
            }
        }
        let request = DeleteRecordsRequest::default()
            .with_topics(topics)
            .with_timeout_ms(timeout_ms);
        let response = self.send_at(addr, &request, version).await?;
        let mut out = Vec::new();
        for t in response.topics {
            for p in t.partitions {
                let tp = TopicPartition::new(t.name.0.to_string(), p.partition_index);
                if !partitions.iter().any(|(asked, _)| asked == &tp) {
                    continue;
                }
                let answer = if p.error_code == NONE {
                    Ok(Offset(p.low_watermark))
                } else {
                    Err(KafkaError::new(p.error_code))
                };
                out.push((tp, answer));
            }
        }
        Ok(out)
    }
}
