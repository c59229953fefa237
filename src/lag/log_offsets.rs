//! How the coordinator learns every partition's log offsets: its own partitions from its data
//! plane, the others from their owners over the network, periodically — never through Raft
//! (log ends move with every produce; replicating them would put the data plane's write rate
//! on the meta log).
//!
//! ```text
//!  poll()
//!   ├─ catalog: every partition and its owner (replicated placement)
//!   ├─ owned here ─────► DataPlane: log start, high watermark
//!   └─ owned by node N ─► ListOffsets(latest) + ListOffsets(earliest) to N's Kafka port
//!                          (the crate's own client `Connection`, one kept per node,
//!                           all nodes asked at once, each under a deadline)
//! ```
//!
//! ListOffsets over the Kafka port was picked over a new message on the Raft peer transport:
//! the owner already answers it, with the very figure (`latest` = high watermark) that
//! consumers and `cohort groups --describe` see, and the Raft transport stays about Raft.
//! A partition not heard from for [`STALE_AFTER_ROUNDS`] rounds (its owner is down or slow)
//! loses its log offsets, so its lag shows as unknown rather than as a stale number.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use tokio::task::JoinSet;

use super::feed::{LogOffsets, RecordTime};
use crate::client::auth::ClientSecurity;
use crate::client::connection::Connection;
use crate::client::offsets::list_offsets_request;
use crate::client::record_times::{fetch_timestamps, timestamp_at};
use crate::client::{ClientError, TopicPartition};
use crate::cluster::ClusterView;
use crate::data::DataPlane;
use crate::topics::TopicCatalog;

/// Rounds a partition may go unheard before its log offsets are dropped.
pub const STALE_AFTER_ROUNDS: u64 = 3;
/// Most partitions in one ListOffsets request (a node may own tens of thousands).
pub const PARTITIONS_PER_REQUEST_MAX: usize = 5_000;
/// Client id of the poller's connections, as the owners' logs show it.
pub const CLIENT_ID: &str = "cohort-lag-poller";

/// Most record timestamps looked up in one round (each reads one batch); the rest wait for
/// the next round.
pub const RECORD_TIMES_PER_ROUND_MAX: usize = 2_000;
/// Most partitions in one Fetch for record timestamps.
pub const RECORD_TIMES_PER_REQUEST_MAX: usize = 500;

/// ListOffsets' special timestamps.
const LATEST: i64 = -1;
const EARLIEST: i64 = -2;

/// A kept connection to one owner, and the address it was opened to (a node that moved gets
/// a new one).
struct PeerConnection {
    addr: String,
    conn: Connection,
}

/// Why one owner's offsets were not learned this round.
#[derive(Debug, thiserror::Error)]
pub enum PollError {
    /// The owner is not in the cluster view (yet).
    #[error("node {0} has no known Kafka address")]
    UnknownNode(i32),
    /// The request failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// No answer in time.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

/// What one round learned.
#[derive(Debug, Default)]
pub struct PollRound {
    /// Offsets of every partition heard from.
    pub offsets: Vec<LogOffsets>,
    /// Owners that did not answer, with why.
    pub failures: Vec<(i32, PollError)>,
}

/// Polls log offsets from the data plane and the partitions' owners.
pub struct LogOffsetsPoller {
    local_node: i32,
    catalog: Arc<dyn TopicCatalog>,
    cluster: Arc<dyn ClusterView>,
    data: Arc<DataPlane>,
    /// Bound on one owner's answer.
    request_timeout: Duration,
    /// How this node logs in on the owners' inter-broker listener.
    security: Arc<ClientSecurity>,
    connections: HashMap<i32, PeerConnection>,
    /// Round in which each partition was last heard from.
    last_heard: HashMap<TopicPartition, u64>,
    round: u64,
}

impl std::fmt::Debug for LogOffsetsPoller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogOffsetsPoller")
            .field("local_node", &self.local_node)
            .field("round", &self.round)
            .finish_non_exhaustive()
    }
}

impl LogOffsetsPoller {
    /// A poller for node `local_node`; `request_timeout` bounds each owner's answer;
    /// `security` is the node's credential on its peers' inter-broker listener.
    pub fn new(
        local_node: i32,
        catalog: Arc<dyn TopicCatalog>,
        cluster: Arc<dyn ClusterView>,
        data: Arc<DataPlane>,
        request_timeout: Duration,
        security: Arc<ClientSecurity>,
    ) -> Self {
        LogOffsetsPoller {
            local_node,
            catalog,
            cluster,
            data,
            request_timeout,
            security,
            connections: HashMap::new(),
            last_heard: HashMap::new(),
            round: 0,
        }
    }

    /// Forgets connections and what was heard (this node stopped exporting).
    pub fn reset(&mut self) {
        self.connections.clear();
        self.last_heard.clear();
    }

    /// Whether `tp` still exists and was heard from recently enough to be shown.
    pub fn is_fresh(&self, tp: &TopicPartition) -> bool {
        self.last_heard
            .get(tp)
            .is_some_and(|r| self.round.saturating_sub(*r) < STALE_AFTER_ROUNDS)
    }

    /// One round over the partitions in `wanted` (those some group consumes: the others' log
    /// offsets show nowhere, and asking for them would open every idle partition), each from
    /// wherever it lives.
    pub async fn poll(&mut self, wanted: &HashSet<TopicPartition>) -> PollRound {
        self.round += 1;
        let mut local: Vec<(String, i32)> = Vec::new();
        let mut remote: BTreeMap<i32, Vec<TopicPartition>> = BTreeMap::new();
        // Sorted, so each topic is looked up once and requests group a topic's partitions.
        let mut wanted: Vec<&TopicPartition> = wanted.iter().collect();
        wanted.sort();
        let mut spec: Option<Arc<crate::topics::TopicSpec>> = None;
        for tp in wanted {
            if spec.as_ref().is_none_or(|s| s.name != tp.topic) {
                spec = self.catalog.topic(&tp.topic);
            }
            // A topic or partition that no longer exists has no log offsets.
            let Some(assignment) = spec.as_ref().and_then(|s| s.partition(tp.partition)) else {
                continue;
            };
            let owner = assignment.leader();
            if owner == self.local_node {
                local.push((tp.topic.clone(), tp.partition));
            } else {
                remote.entry(owner).or_default().push(tp.clone());
            }
        }
        // Partitions of deleted topics, moved ones and ones no group consumes any more are not
        // kept past this round.
        let existing: HashSet<TopicPartition> = local
            .iter()
            .map(|(t, p)| TopicPartition::new(t.clone(), *p))
            .chain(remote.values().flatten().cloned())
            .collect();
        self.last_heard.retain(|tp, _| existing.contains(tp));

        let mut round = PollRound::default();
        let mut asks = JoinSet::new();
        let addresses: HashMap<i32, String> = self
            .cluster
            // The owners on the inter-broker listener (named by the credential's protocol).
            .brokers_on(self.security.protocol.name())
            .into_iter()
            .map(|b| (b.node_id.0, format!("{}:{}", b.host, b.port)))
            .collect();
        for (node, partitions) in remote {
            let Some(addr) = addresses.get(&node).cloned() else {
                round.failures.push((node, PollError::UnknownNode(node)));
                continue;
            };
            let kept = self
                .connections
                .remove(&node)
                .filter(|c| c.addr == addr && c.conn.is_usable());
            let timeout = self.request_timeout;
            let security = self.security.clone();
            asks.spawn(async move {
                let asked = tokio::time::timeout(
                    timeout,
                    ask_owner(addr.clone(), kept, partitions, timeout, &security),
                )
                .await;
                match asked {
                    Ok((conn, result)) => {
                        (node, conn.map(|conn| PeerConnection { addr, conn }), result)
                    }
                    Err(_) => (node, None, Err(PollError::Timeout(timeout))),
                }
            });
        }
        for (topic, index) in local {
            match self.data.partition(&topic, index).await {
                Ok(p) => round.offsets.push(LogOffsets {
                    tp: TopicPartition::new(topic, index),
                    log_start: Some(p.log_start_offset()),
                    log_end: p.high_watermark(),
                }),
                Err(e) => {
                    tracing::debug!(%topic, partition = index, error = %e,
                        "no log offsets for a local partition")
                }
            }
        }
        while let Some(joined) = asks.join_next().await {
            let Ok((node, conn, result)) = joined else {
                continue;
            };
            if let Some(conn) = conn {
                self.connections.insert(node, conn);
            }
            match result {
                Ok(offsets) => round.offsets.extend(offsets),
                Err(e) => round.failures.push((node, e)),
            }
        }
        for o in &round.offsets {
            self.last_heard.insert(o.tp.clone(), self.round);
        }
        round
    }
}

impl LogOffsetsPoller {
    /// The timestamps the logs keep for the records at `wanted` (partition, offset) pairs: a
    /// local partition's batch read from the data plane, another owner's by a one-batch Fetch
    /// over the kept connection. At most [`RECORD_TIMES_PER_ROUND_MAX`] per round; what cannot
    /// be read now (owner down, offset not yet readable) is simply absent and asked again.
    pub async fn record_times(&mut self, wanted: &[(TopicPartition, i64)]) -> Vec<RecordTime> {
        let mut local: Vec<(TopicPartition, i64)> = Vec::new();
        let mut remote: BTreeMap<i32, Vec<(TopicPartition, i64)>> = BTreeMap::new();
        let mut spec: Option<Arc<crate::topics::TopicSpec>> = None;
        for (tp, offset) in wanted.iter().take(RECORD_TIMES_PER_ROUND_MAX) {
            if spec.as_ref().is_none_or(|s| s.name != tp.topic) {
                spec = self.catalog.topic(&tp.topic);
            }
            let Some(assignment) = spec.as_ref().and_then(|s| s.partition(tp.partition)) else {
                continue;
            };
            let owner = assignment.leader();
            if owner == self.local_node {
                local.push((tp.clone(), *offset));
            } else {
                remote.entry(owner).or_default().push((tp.clone(), *offset));
            }
        }
        let mut out = Vec::new();
        for (tp, offset) in local {
            let Ok(partition) = self.data.partition(&tp.topic, tp.partition).await else {
                continue;
            };
            let read = tokio::task::spawn_blocking(move || {
                partition
                    .read(offset, 1, true)
                    .ok()
                    .and_then(|r| r.concatenated().ok())
            })
            .await
            .ok()
            .flatten();
            if let Some(ts) = read.and_then(|b| timestamp_at(&b, offset).ok().flatten()) {
                out.push(RecordTime {
                    tp,
                    offset,
                    timestamp_ms: ts,
                });
            }
        }
        let addresses: HashMap<i32, String> = self
            .cluster
            // The owners on the inter-broker listener (named by the credential's protocol).
            .brokers_on(self.security.protocol.name())
            .into_iter()
            .map(|b| (b.node_id.0, format!("{}:{}", b.host, b.port)))
            .collect();
        for (node, pairs) in remote {
            let Some(addr) = addresses.get(&node).cloned() else {
                continue;
            };
            let kept = self
                .connections
                .remove(&node)
                .filter(|c| c.addr == addr && c.conn.is_usable());
            let mut conn = match kept {
                Some(c) => c.conn,
                None => match Connection::open_with(
                    &addr,
                    CLIENT_ID,
                    self.request_timeout,
                    &self.security,
                )
                .await
                {
                    Ok(c) => c,
                    // The offsets poll of the same round reports (and counts) the failure.
                    Err(_) => continue,
                },
            };
            let mut usable = true;
            for chunk in pairs.chunks(RECORD_TIMES_PER_REQUEST_MAX) {
                let asked =
                    tokio::time::timeout(self.request_timeout, fetch_timestamps(&mut conn, chunk))
                        .await;
                match asked {
                    Ok(Ok(answers)) => {
                        for (tp, answer) in answers {
                            let Ok(Some(ts)) = answer else { continue };
                            if let Some((_, offset)) = chunk.iter().find(|(w, _)| *w == tp) {
                                out.push(RecordTime {
                                    tp,
                                    offset: *offset,
                                    timestamp_ms: ts,
                                });
                            }
                        }
                    }
                    _ => {
                        usable = false;
                        break;
                    }
                }
            }
            if usable && conn.is_usable() {
                self.connections.insert(node, PeerConnection { addr, conn });
            }
        }
        out
    }
}

/// Asks one owner for the latest and earliest offsets of `partitions`. Returns the connection
/// if it can be used again.
async fn ask_owner(
    addr: String,
    kept: Option<PeerConnection>,
    partitions: Vec<TopicPartition>,
    timeout: Duration,
    security: &ClientSecurity,
) -> (Option<Connection>, Result<Vec<LogOffsets>, PollError>) {
    let mut conn = match kept {
        Some(c) => c.conn,
        None => match Connection::open_with(&addr, CLIENT_ID, timeout, security).await {
            Ok(c) => c,
            Err(e) => return (None, Err(e.into())),
        },
    };
    let result = ask_on(&mut conn, &partitions).await;
    let reusable = result.is_ok() && conn.is_usable();
    (reusable.then_some(conn), result)
}

async fn ask_on(
    conn: &mut Connection,
    partitions: &[TopicPartition],
) -> Result<Vec<LogOffsets>, PollError> {
    let version = conn.versions().pick(ApiKey::ListOffsets)?;
    let mut out = Vec::with_capacity(partitions.len());
    for chunk in partitions.chunks(PARTITIONS_PER_REQUEST_MAX) {
        let ends = list(conn, version, chunk, LATEST).await?;
        let starts = list(conn, version, chunk, EARLIEST).await?;
        // Only what was asked: whatever else an answer carries is ignored.
        for tp in chunk {
            if let Some(end) = ends.get(tp) {
                out.push(LogOffsets {
                    tp: tp.clone(),
                    log_start: starts.get(tp).copied(),
                    log_end: *end,
                });
            }
        }
    }
    Ok(out)
}

/// One ListOffsets request; the partitions answered without error, with their offset.
async fn list(
    conn: &mut Connection,
    version: i16,
    partitions: &[TopicPartition],
    timestamp: i64,
) -> Result<HashMap<TopicPartition, i64>, PollError> {
    let request = list_offsets_request(partitions.iter().map(|tp| (tp, timestamp)));
    let response = conn.send_at(&request, version).await?;
    let mut out = HashMap::new();
    for t in response.topics {
        for p in t.partitions {
            if let Some(reason) = crate::security::inter_broker::refusal_code(p.error_code) {
                // The owner's authorizer refused this node's principal (DESCRIBE on the topic).
                crate::security::inter_broker::count_refusal("lag", reason);
            }
            if p.error_code == 0 && p.offset >= 0 {
                out.insert(
                    TopicPartition::new(t.name.0.as_str(), p.partition_index),
                    p.offset,
                );
            }
        }
    }
    Ok(out)
}
