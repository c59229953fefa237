//! The timestamp the log keeps for the record at an offset, as a consumer would read it: a
//! Fetch of one batch from that offset at the partition's leader (the broker returns at least
//! one whole batch, KIP-74), then the record's timestamp inside it — the producer's CreateTime,
//! or the batch's max timestamp on a LogAppendTime batch (the broker wrote every record's
//! time there). This is what lag in seconds is measured from: `now - timestamp(committed)`.
//!
//! ```text
//!   (partition, offset) ─► Fetch(offset, partition_max_bytes 1, max_wait 0) at the leader
//!                        ─► first batch with last offset >= offset ─► record timestamp
//! ```
//!
//! Looking inside a compressed batch decompresses it, within [`DECODE_BYTES_MAX`]; a batch
//! needing more has no answer (`None`), never an unbounded allocation.

use std::collections::BTreeMap;

use bytes::Bytes;
use kafka_protocol::messages::{
    fetch_request::{FetchPartition, FetchRequest, FetchTopic},
    ApiKey, BrokerId, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use protocol::batch::{self, BatchError, BatchHeader};

use super::admin::Admin;
use super::connection::Connection;
use super::error::{ClientError, ClientResult, KafkaError, NONE};
use super::offsets::{retriable, route, Route};
use super::types::{NodeId, TopicPartition};

/// Most memory one batch's decoding may take (decompressed data and decoded records).
pub const DECODE_BYTES_MAX: usize = 32 << 20;
/// Bytes asked for per Fetch response (the broker still sends one whole first batch).
const FETCH_BYTES_MAX: i32 = 1 << 20;
/// LogAppendTime: attribute bit 3 of a v2 batch.
const LOG_APPEND_TIME: i16 = 1 << 3;

/// The timestamp of the first record at or after `offset` in `batches` (whole record batches
/// as Fetch returns them), or `None` if none of them reaches `offset`.
pub fn timestamp_at(batches: &Bytes, offset: i64) -> Result<Option<i64>, BatchError> {
    let mut at = 0usize;
    while at < batches.len() {
        let rest = batches.slice(at..);
        let header = match BatchHeader::parse(&rest) {
            Ok(h) => h,
            // A partial batch at the end of a Fetch response (max_bytes cut it).
            Err(_) if at > 0 => return Ok(None),
            Err(e) => return Err(e),
        };
        let size = header.total_bytes();
        if size == 0 || size > rest.len() {
            return Ok(None);
        }
        let last = header
            .base_offset
            .saturating_add(i64::from(header.last_offset_delta));
        if last >= offset && !header.is_control() {
            if header.attributes & LOG_APPEND_TIME != 0 {
                return Ok(Some(header.max_timestamp));
            }
            let found = batch::find_record_within(&rest.slice(..size), DECODE_BYTES_MAX, |r| {
                r.offset >= offset
            })?;
            if let Some(r) = found {
                return Ok(Some(r.timestamp));
            }
        }
        at += size;
    }
    Ok(None)
}

/// A consumer's Fetch (read committed) of one batch from each `(partition, offset)`.
pub fn fetch_request(wanted: &[(TopicPartition, i64)]) -> FetchRequest {
    let mut topics: Vec<FetchTopic> = Vec::new();
    for (tp, offset) in wanted {
        let p = FetchPartition::default()
            .with_partition(tp.partition)
            .with_current_leader_epoch(-1)
            .with_last_fetched_epoch(-1)
            .with_log_start_offset(-1)
            .with_fetch_offset(*offset)
            .with_partition_max_bytes(1);
        match topics.last_mut() {
            Some(t) if t.topic.0.as_str() == tp.topic => t.partitions.push(p),
            _ => topics.push(
                FetchTopic::default()
                    .with_topic(TopicName(StrBytes::from_string(tp.topic.clone())))
                    .with_partitions(vec![p]),
            ),
        }
    }
    FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_min_bytes(0)
        .with_max_bytes(FETCH_BYTES_MAX)
        .with_isolation_level(1)
        .with_session_id(0)
        .with_session_epoch(-1)
        .with_topics(topics)
}

/// Fetches over `conn` the timestamp of the record at each `(partition, offset)`: `Ok(None)`
/// when the partition has no record there (yet) or the batch cannot be looked into; the
/// partition's error code when the broker answered with one.
pub async fn fetch_timestamps(
    conn: &mut Connection,
    wanted: &[(TopicPartition, i64)],
) -> ClientResult<Vec<(TopicPartition, Result<Option<i64>, KafkaError>)>> {
    let version = conn.versions().pick(ApiKey::Fetch)?;
    let response = conn.send_at(&fetch_request(wanted), version).await?;
    if response.error_code != NONE {
        return Err(KafkaError::new(response.error_code).into());
    }
    let mut out = Vec::new();
    for t in response.responses {
        for p in t.partitions {
            let tp = TopicPartition::new(t.topic.0.to_string(), p.partition_index);
            let Some(offset) = wanted.iter().find(|(w, _)| *w == tp).map(|(_, o)| *o) else {
                continue;
            };
            let answer = if p.error_code != NONE {
                Err(KafkaError::new(p.error_code))
            } else {
                Ok(p.records
                    .as_ref()
                    .and_then(|b| timestamp_at(b, offset).ok().flatten()))
            };
            out.push((tp, answer));
        }
    }
    Ok(out)
}

impl Admin {
    /// The timestamp of the record at each partition's offset, asked of each leader;
    /// `None` where there is none (the offset is the log end) or it cannot be read.
    pub async fn record_timestamps(
        &mut self,
        wanted: &BTreeMap<TopicPartition, i64>,
    ) -> ClientResult<BTreeMap<TopicPartition, Option<i64>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "fetch", async {
            let mut results = BTreeMap::new();
            let mut pending = wanted.clone();
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
                        Route::Fail(_) => {
                            results.insert(tp.clone(), None);
                        }
                    }
                }
                pending.retain(|tp, _| !results.contains_key(tp));
                for (leader, partitions) in by_leader {
                    let Some(addr) = self.brokers().get(&leader).map(|n| n.address()) else {
                        continue;
                    };
                    let version = self.broker_versions(&addr).await?.pick(ApiKey::Fetch)?;
                    match self
                        .send_at(&addr, &fetch_request(&partitions), version)
                        .await
                    {
                        Ok(response) => {
                            for t in response.responses {
                                for p in t.partitions {
                                    let tp = TopicPartition::new(
                                        t.topic.0.to_string(),
                                        p.partition_index,
                                    );
                                    let Some(offset) = pending.get(&tp).copied() else {
                                        continue;
                                    };
                                    if p.error_code != NONE && retriable(p.error_code) {
                                        continue;
                                    }
                                    let ts = (p.error_code == NONE)
                                        .then(|| {
                                            p.records.as_ref().and_then(|b| {
                                                timestamp_at(b, offset).ok().flatten()
                                            })
                                        })
                                        .flatten();
                                    pending.remove(&tp);
                                    results.insert(tp, ts);
                                }
                            }
                        }
                        Err(e @ ClientError::UnsupportedVersion(_)) => return Err(e),
                        Err(e) => tracing::debug!(error = %e, %addr, "Fetch failed; retrying"),
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
}
