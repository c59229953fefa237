//! ListOffsets: log-end (latest), log-start (earliest) and by-timestamp offsets, asked of each
//! partition's leader as Metadata names it. Leadership errors refresh metadata and retry until
//! the call's deadline; a topic the cluster does not know is a final error for its partitions.

use std::collections::BTreeMap;

use kafka_protocol::messages::{
    list_offsets_request::{ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic},
    ApiKey, BrokerId, MetadataResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::Admin;
use super::error::{
    ClientError, ClientResult, KafkaError, LEADER_NOT_AVAILABLE, NONE, NOT_LEADER_OR_FOLLOWER,
    UNKNOWN_TOPIC_OR_PARTITION,
};
use super::types::{LeaderEpoch, NodeId, Offset, TopicPartition};

/// Kafka's "latest" timestamp: the high watermark.
pub const LATEST_TIMESTAMP: i64 = -1;
/// Kafka's "earliest" timestamp: the log start offset.
pub const EARLIEST_TIMESTAMP: i64 = -2;

/// Which offset to look up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetSpec {
    /// The log-end offset (high watermark).
    Latest,
    /// The log-start offset.
    Earliest,
    /// The first offset whose record timestamp is at or after this many ms since the epoch.
    Timestamp(i64),
}

impl OffsetSpec {
    fn wire_timestamp(self) -> i64 {
        match self {
            OffsetSpec::Latest => LATEST_TIMESTAMP,
            OffsetSpec::Earliest => EARLIEST_TIMESTAMP,
            OffsetSpec::Timestamp(ts) => ts,
        }
    }
}

/// One partition's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListOffsetsInfo {
    /// The offset; −1 for a timestamp query that matched no record.
    pub offset: Offset,
    /// The timestamp of the record found (−1 when not applicable).
    pub timestamp: i64,
    /// The leader epoch of that offset, if the broker sent one.
    pub leader_epoch: Option<LeaderEpoch>,
}

/// Errors that mean "ask again, maybe elsewhere".
pub(crate) fn retriable(code: i16) -> bool {
    matches!(
        code,
        NOT_LEADER_OR_FOLLOWER
            | LEADER_NOT_AVAILABLE
            | UNKNOWN_TOPIC_OR_PARTITION
            | 9   // REPLICA_NOT_AVAILABLE
            | 56  // KAFKA_STORAGE_ERROR
            | 74  // FENCED_LEADER_EPOCH
            | 75  // UNKNOWN_LEADER_EPOCH
            | 78 // OFFSET_NOT_AVAILABLE
    )
}

/// Where each pending partition should go, from one Metadata response.
pub(crate) enum Route {
    Leader(NodeId),
    Retry,
    Fail(KafkaError),
}

pub(crate) fn route(metadata: &MetadataResponse, tp: &TopicPartition) -> Route {
    let Some(topic) = metadata
        .topics
        .iter()
        .find(|t| t.name.as_ref().map(|n| n.0.as_str()) == Some(tp.topic.as_str()))
    else {
        return Route::Fail(KafkaError::new(UNKNOWN_TOPIC_OR_PARTITION));
    };
    if topic.error_code == UNKNOWN_TOPIC_OR_PARTITION {
        return Route::Fail(KafkaError::new(UNKNOWN_TOPIC_OR_PARTITION));
    }
    if topic.error_code != NONE {
        return if retriable(topic.error_code) {
            Route::Retry
        } else {
            Route::Fail(KafkaError::new(topic.error_code))
        };
    }
    match topic
        .partitions
        .iter()
        .find(|p| p.partition_index == tp.partition)
    {
        None => Route::Fail(KafkaError::new(UNKNOWN_TOPIC_OR_PARTITION)),
        Some(p) if p.leader_id.0 < 0 => Route::Retry,
        Some(p) => Route::Leader(NodeId(p.leader_id.0)),
    }
}

impl Admin {
    /// Looks up offsets per partition, at each partition's leader.
    pub async fn list_offsets(
        &mut self,
        specs: &BTreeMap<TopicPartition, OffsetSpec>,
    ) -> ClientResult<BTreeMap<TopicPartition, Result<ListOffsetsInfo, KafkaError>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "listOffsets", self.list_offsets_inner(specs)).await
    }

    async fn list_offsets_inner(
        &mut self,
        specs: &BTreeMap<TopicPartition, OffsetSpec>,
    ) -> ClientResult<BTreeMap<TopicPartition, Result<ListOffsetsInfo, KafkaError>>> {
        let mut results = BTreeMap::new();
        let mut pending: BTreeMap<TopicPartition, OffsetSpec> = specs.clone();
        let mut attempt = 0u32;
        while !pending.is_empty() {
            let mut topics: Vec<String> = pending.keys().map(|tp| tp.topic.clone()).collect();
            topics.dedup();
            let metadata = self.metadata(Some(&topics)).await?;
            let mut by_leader: BTreeMap<NodeId, Vec<(TopicPartition, OffsetSpec)>> =
                BTreeMap::new();
            for (tp, spec) in &pending {
                match route(&metadata, tp) {
                    Route::Leader(node) => {
                        by_leader.entry(node).or_default().push((tp.clone(), *spec))
                    }
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
                match self.list_offsets_at(&addr, &partitions).await {
                    Ok(answers) => {
                        for (tp, answer) in answers {
                            match answer {
                                Ok(info) => {
                                    pending.remove(&tp);
                                    results.insert(tp, Ok(info));
                                }
                                Err(e) if retriable(e.code) => {}
                                Err(e) => {
                                    pending.remove(&tp);
                                    results.insert(tp, Err(e));
                                }
                            }
                        }
                    }
                    Err(e @ ClientError::UnsupportedVersion(_)) => return Err(e),
                    Err(e) => tracing::debug!(error = %e, %addr, "ListOffsets failed; retrying"),
                }
            }
            if !pending.is_empty() {
                self.backoff(attempt).await;
                attempt += 1;
            }
        }
        Ok(results)
    }

    async fn list_offsets_at(
        &mut self,
        addr: &str,
        partitions: &[(TopicPartition, OffsetSpec)],
    ) -> ClientResult<Vec<(TopicPartition, Result<ListOffsetsInfo, KafkaError>)>> {
        let version = self
            .broker_versions(addr)
            .await?
            .pick(ApiKey::ListOffsets)?;
        let request = list_offsets_request(
            partitions
                .iter()
                .map(|(tp, spec)| (tp, spec.wire_timestamp())),
        );
        let response = self.send_at(addr, &request, version).await?;
        let mut out = Vec::new();
        for t in response.topics {
            for p in t.partitions {
                let tp = TopicPartition::new(t.name.0.to_string(), p.partition_index);
                if !partitions.iter().any(|(asked, _)| asked == &tp) {
                    continue;
                }
                let answer = if p.error_code == NONE {
                    Ok(ListOffsetsInfo {
                        offset: Offset(p.offset),
                        timestamp: p.timestamp,
                        leader_epoch: (p.leader_epoch >= 0).then_some(LeaderEpoch(p.leader_epoch)),
                    })
                } else {
                    Err(KafkaError::new(p.error_code))
                };
                out.push((tp, answer));
            }
        }
        Ok(out)
    }
}

/// A consumer's ListOffsets request (replica id -1) for `(partition, timestamp)` pairs, the
/// partitions of one topic grouped together when they come one after the other.
pub fn list_offsets_request<'a>(
    partitions: impl IntoIterator<Item = (&'a TopicPartition, i64)>,
) -> ListOffsetsRequest {
    let mut topics: Vec<ListOffsetsTopic> = Vec::new();
    for (tp, timestamp) in partitions {
        let p = ListOffsetsPartition::default()
            .with_partition_index(tp.partition)
            .with_timestamp(timestamp);
        match topics.last_mut() {
            Some(t) if t.name.0.as_str() == tp.topic => t.partitions.push(p),
            _ => topics.push(
                ListOffsetsTopic::default()
                    .with_name(TopicName(StrBytes::from_string(tp.topic.clone())))
                    .with_partitions(vec![p]),
            ),
        }
    }
    ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(topics)
}
