//! Fetch (1), v4–v17: whole batches below the high watermark, `max_bytes` and per-partition
//! limits, OFFSET_OUT_OF_RANGE, high watermark, last stable offset and log start offset, and
//! the long poll. `isolation_level = 1` (READ_COMMITTED) reads below the last stable offset
//! and lists the aborted transactions overlapping what it read (decision 0128): the client
//! drops their records and skips control batches itself, as with Kafka.
//!
//! ```text
//!  resolve partitions ─> loop:
//!     watch every partition's high watermark (before reading, so no append slips by)
//!     read all (one blocking task), budget = max_bytes, first batch always
//!     enough bytes (min_bytes) / an error / max_wait over / shutdown ─> answer
//!     else sleep until a watched high watermark moves or the deadline
//! ```
//!
//! Fetch sessions (KIP-227) are not kept: a request to open one gets session id 0, which
//! clients take as "keep sending full fetches"; an incremental fetch gets
//! FETCH_SESSION_ID_NOT_FOUND, after which clients start over with a full one.
//!
//! From v13 topics are named by id (KIP-516), in the request and the answer; an id no topic has
//! is UNKNOWN_TOPIC_ID for each of its partitions. v14 only lets a broker answer
//! OFFSET_MOVED_TO_TIERED_STORAGE (no tiered storage here, never answered). v15 moves the
//! fetching replica's id into `replica_state` (KIP-903), read as the older field was. From v16
//! (KIP-951) a partition answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH names its
//! current leader and epoch, and the response lists that leader's endpoint, so the client
//! goes there without a Metadata round trip. v17's replica directory id (KIP-853) is for
//! replicating followers; Cohort has none and ignores it (decision 0161).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::FetchTopic;
use kafka_protocol::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData,
};
use kafka_protocol::messages::{BrokerId, FetchRequest, FetchResponse, ProducerId, TopicName};
use kafka_protocol::protocol::StrBytes;
use protocol::splice::RecordsSplicer;
use protocol::ErrorCode;
use tokio::sync::watch;
use uuid::Uuid;

use super::RequestContext;
use crate::data::partition::LEADER_EPOCH;
use crate::data::txn_index::AbortedTxn;
use crate::data::{FetchRecords, Partition, ReadBatches};
use crate::errors::{to_kafka_error, BrokerError};

/// Longest long poll honoured, whatever `max_wait_ms` asks.
pub const MAX_WAIT: Duration = Duration::from_secs(30);
/// Largest response, whatever `max_bytes` asks.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;
/// First version naming topics by id instead of by name (KIP-516).
pub const TOPIC_IDS_MIN_VERSION: i16 = 13;
/// First version carrying the fetching replica's id in `replica_state` (KIP-903).
const REPLICA_STATE_MIN_VERSION: i16 = 15;
/// First version whose leadership errors name the current leader and its endpoint (KIP-951).
const LEADER_HINTS_MIN_VERSION: i16 = 16;

/// The name of the topic a request entry asks for: its name below v13; from v13 the name of
/// the topic with its id, `None` when no topic has it (UNKNOWN_TOPIC_ID).
pub fn topic_name(ctx: &RequestContext, t: &FetchTopic) -> Option<String> {
    if ctx.version < TOPIC_IDS_MIN_VERSION {
        Some(t.topic.0.to_string())
    } else {
        ctx.broker
            .catalog
            .topic_by_id(t.topic_id)
            .map(|spec| spec.name.clone())
    }
}

/// The fetching replica's id, -1 for a consumer: `replica_state` from v15, `replica_id` before.
pub fn replica_id(version: i16, r: &FetchRequest) -> i32 {
    if version >= REPLICA_STATE_MIN_VERSION {
        r.replica_state.replica_id.0
    } else {
        r.replica_id.0
    }
}

struct Wanted {
    index: i32,
    offset: i64,
    partition_max_bytes: usize,
    /// The partition, or the code the lookup failed with.
    partition: Result<Arc<Partition>, ErrorCode>,
}

struct Outcome {
    index: i32,
    /// What was read, or the error code.
    result: Result<Read, ErrorCode>,
}

struct Read {
    batches: ReadBatches,
    high_watermark: i64,
    last_stable_offset: i64,
    log_start: i64,
    /// read_committed: the aborted transactions overlapping the batches.
    aborted: Vec<AbortedTxn>,
}

/// A Fetch answer whose records fields hold placeholders for the batches in `splicer`
/// (see `protocol::splice`: the batches are written to the socket without being copied).
#[derive(Debug)]
pub struct FetchAnswer {
    /// The body, records as placeholders.
    pub body: FetchResponse,
    /// The batches behind the placeholders.
    pub splicer: RecordsSplicer<FetchRecords>,
}

impl FetchAnswer {
    /// The body with the real records in place (copies, reading the file parts; tests).
    pub fn materialized(mut self) -> Result<FetchResponse, compaction::LogError> {
        for t in &mut self.body.responses {
            for p in &mut t.partitions {
                if let Some(r) = &p.records {
                    if let Some(real) = self.splicer.records(r) {
                        p.records = Some(real.to_bytes()?);
                    }
                }
            }
        }
        Ok(self.body)
    }
}

/// Answers a fetch, waiting up to `max_wait_ms` for `min_bytes`.
pub async fn handle(ctx: &RequestContext, req: FetchRequest) -> FetchAnswer {
    let v = ctx.version;
    if v >= 7 && req.session_epoch > 0 {
        let mut r = FetchResponse::default()
            .with_error_code(ctx.error(ErrorCode::FetchSessionIdNotFound))
            .with_session_id(0);
        r.responses = Vec::new();
        return FetchAnswer {
            body: r,
            splicer: RecordsSplicer::new(),
        };
    }
    let read_committed = req.isolation_level == 1;
    let max_bytes = usize::try_from(req.max_bytes)
        .unwrap_or(0)
        .min(MAX_RESPONSE_BYTES);
    let min_bytes = usize::try_from(req.min_bytes).unwrap_or(0);
    let max_wait = Duration::from_millis(u64::try_from(req.max_wait_ms).unwrap_or(0)).min(MAX_WAIT);
    let deadline = tokio::time::Instant::now() + max_wait;

    let mut wanted = Vec::new();
    let mut topic_order: Vec<AskedTopic> = Vec::new();
    for t in req.topics {
        let name = topic_name(ctx, &t);
        for p in &t.partitions {
            let Some(name) = &name else {
                tracing::debug!(topic_id = %t.topic_id, partition = p.partition,
                    "fetch of an unknown topic id");
                wanted.push(Wanted {
                    index: p.partition,
                    offset: p.fetch_offset,
                    partition_max_bytes: 0,
                    partition: Err(ErrorCode::UnknownTopicId),
                });
                continue;
            };
            let partition = match ctx
                .broker
                .check_leader_epoch(p.current_leader_epoch, LEADER_EPOCH)
            {
                Ok(()) => ctx
                    .broker
                    .data
                    .partition(name, p.partition)
                    .await
                    .map_err(BrokerError::from),
                Err(e) => Err(e),
            }
            .map_err(|e| {
                tracing::debug!(topic = %name, partition = p.partition, error = %e,
                    "fetch refused");
                to_kafka_error(&e)
            });
            wanted.push(Wanted {
                index: p.partition,
                offset: p.fetch_offset,
                partition_max_bytes: usize::try_from(p.partition_max_bytes).unwrap_or(0),
                partition,
            });
        }
        topic_order.push(AskedTopic {
            topic: t.topic,
            topic_id: t.topic_id,
            name,
            count: t.partitions.len(),
        });
    }
    let wanted = Arc::new(wanted);
    let mut shutdown = ctx.broker.shutdown.clone();

    let outcomes = loop {
        let mut watchers: Vec<watch::Receiver<i64>> = wanted
            .iter()
            .filter_map(|w| w.partition.as_ref().ok().map(|p| p.watch_high_watermark()))
            .collect();
        for w in &mut watchers {
            w.borrow_and_update();
        }
        let outcomes = read_all(Arc::clone(&wanted), max_bytes, read_committed).await;
        let bytes: usize = outcomes
            .iter()
            .filter_map(|o| o.result.as_ref().ok())
            .map(|r| r.batches.bytes)
            .sum();
        let any_error = outcomes.iter().any(|o| o.result.is_err());
        if bytes >= min_bytes
            || any_error
            || watchers.is_empty()
            || tokio::time::Instant::now() >= deadline
            || *shutdown.borrow()
        {
            break outcomes;
        }
        tokio::select! {
            _ = any_changed(&mut watchers) => {}
            _ = tokio::time::sleep_until(deadline) => {}
            _ = shutdown.changed() => {}
        }
    };

    let mut outcomes = outcomes.into_iter();
    let mut splicer = RecordsSplicer::new();
    let mut hints = LeaderHints::default();
    let mut responses = Vec::with_capacity(topic_order.len());
    for asked in topic_order {
        let partitions = outcomes
            .by_ref()
            .take(asked.count)
            .map(|o| {
                let d = partition_data(ctx, o, read_committed, &mut splicer);
                if v >= LEADER_HINTS_MIN_VERSION {
                    hints.add(ctx, asked.name.as_deref(), d)
                } else {
                    d
                }
            })
            .collect();
        // Only one of name (below v13) and id (from v13) was decoded; the other is its default.
        responses.push(
            FetchableTopicResponse::default()
                .with_topic(asked.topic)
                .with_topic_id(asked.topic_id)
                .with_partitions(partitions),
        );
    }
    let mut body = FetchResponse::default().with_responses(responses);
    if v >= 7 {
        body = body.with_error_code(0).with_session_id(0);
    }
    if v >= LEADER_HINTS_MIN_VERSION {
        body = body.with_node_endpoints(hints.endpoints);
    }
    FetchAnswer { body, splicer }
}

/// One topic of the request, in request order.
struct AskedTopic {
    /// As asked (below v13).
    topic: TopicName,
    /// As asked (from v13).
    topic_id: Uuid,
    /// The topic's name, `None` for an unknown id.
    name: Option<String>,
    /// How many partitions were asked for.
    count: usize,
}

/// KIP-951's hints: the current leader of each partition answered NOT_LEADER_OR_FOLLOWER or
/// FENCED_LEADER_EPOCH, and the endpoints of those leaders (each once).
#[derive(Default)]
struct LeaderHints {
    endpoints: Vec<NodeEndpoint>,
}

impl LeaderHints {
    /// `d` with its current leader set if its error calls for one (the leader as Metadata
    /// names it: -1 and epoch -1 when the topic or partition is gone or the leader is down).
    fn add(
        &mut self,
        ctx: &RequestContext,
        topic: Option<&str>,
        d: PartitionData,
    ) -> PartitionData {
        let leadership_error = [ErrorCode::NotLeaderOrFollower, ErrorCode::FencedLeaderEpoch]
            .iter()
            .any(|c| c.code() == d.error_code);
        if !leadership_error {
            return d;
        }
        let leader = topic
            .and_then(|t| ctx.broker.catalog.topic(t))
            .and_then(|spec| spec.partition(d.partition_index).map(|a| a.leader()))
            .filter(|leader| ctx.broker.node_ids().contains(leader));
        let Some(leader) = leader else {
            return d.with_current_leader(
                LeaderIdAndEpoch::default()
                    .with_leader_id(BrokerId(-1))
                    .with_leader_epoch(-1),
            );
        };
        if !self.endpoints.iter().any(|e| e.node_id.0 == leader) {
            if let Some(b) = ctx.brokers().into_iter().find(|b| b.node_id.0 == leader) {
                self.endpoints.push(
                    NodeEndpoint::default()
                        .with_node_id(b.node_id)
                        .with_host(StrBytes::from_string(b.host))
                        .with_port(b.port)
                        .with_rack(b.rack.map(StrBytes::from_string)),
                );
            }
        }
        d.with_current_leader(
            LeaderIdAndEpoch::default()
                .with_leader_id(BrokerId(leader))
                .with_leader_epoch(LEADER_EPOCH),
        )
    }
}

/// Reads every partition in one blocking task, sharing the response budget.
async fn read_all(
    wanted: Arc<Vec<Wanted>>,
    max_bytes: usize,
    read_committed: bool,
) -> Vec<Outcome> {
    let read = move || {
        let mut budget = max_bytes;
        let mut any_data = false;
        wanted
            .iter()
            .map(|w| {
                let result = match &w.partition {
                    Err(code) => Err(*code),
                    Ok(p) => {
                        let limit = w.partition_max_bytes.min(budget);
                        // Kafka returns the first batch of the first non-empty partition even
                        // when it exceeds the limits, so a consumer always progresses.
                        let read = if limit == 0 && any_data {
                            Ok((ReadBatches::default(), Vec::new()))
                        } else if read_committed {
                            p.read_committed(w.offset, limit, !any_data)
                        } else {
                            p.read(w.offset, limit, !any_data).map(|r| (r, Vec::new()))
                        };
                        read.map(|(r, aborted)| {
                            budget = budget.saturating_sub(r.bytes);
                            any_data |= r.bytes > 0;
                            Read {
                                batches: r,
                                high_watermark: p.high_watermark(),
                                last_stable_offset: p.last_stable_offset(),
                                log_start: p.log_start_offset(),
                                aborted,
                            }
                        })
                        .map_err(|e| to_kafka_error(&BrokerError::from(e)))
                    }
                };
                Outcome {
                    index: w.index,
                    result,
                }
            })
            .collect::<Vec<_>>()
    };
    // Reads mostly hit the page cache: run them on this worker (its other tasks move to
    // another) instead of a round trip through the blocking pool.
    if tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread
    {
        tokio::task::block_in_place(read)
    } else {
        tokio::task::spawn_blocking(read).await.unwrap_or_default()
    }
}

fn partition_data(
    ctx: &RequestContext,
    o: Outcome,
    read_committed: bool,
    splicer: &mut RecordsSplicer<FetchRecords>,
) -> PartitionData {
    let v = ctx.version;
    let mut d = PartitionData::default().with_partition_index(o.index);
    let mut aborted = Vec::new();
    match o.result {
        Ok(read) => {
            d = d
                .with_error_code(0)
                .with_high_watermark(read.high_watermark)
                .with_last_stable_offset(read.last_stable_offset)
                .with_records(Some(splicer.placeholder(read.batches.records)));
            if v >= 5 {
                d = d.with_log_start_offset(read.log_start);
            }
            aborted = read.aborted;
        }
        Err(code) => {
            d = d
                .with_error_code(ctx.error(code))
                .with_high_watermark(-1)
                .with_last_stable_offset(-1)
                .with_records(Some(Bytes::new()));
            if v >= 5 {
                d = d.with_log_start_offset(-1);
            }
        }
    }
    // Kafka answers null for read_uncommitted and a (maybe empty) list for read_committed.
    d = d.with_aborted_transactions(read_committed.then(|| {
        aborted
            .iter()
            .map(|a| {
                AbortedTransaction::default()
                    .with_producer_id(ProducerId(a.producer_id))
                    .with_first_offset(a.first_offset)
            })
            .collect()
    }));
    if v >= 11 {
        d = d.with_preferred_read_replica(BrokerId(-1));
    }
    d
}

/// Resolves when any of `watchers` sees a new value (or its sender is gone).
async fn any_changed(watchers: &mut [watch::Receiver<i64>]) {
    let mut futures: Vec<Pin<Box<dyn Future<Output = ()> + Send + '_>>> = watchers
        .iter_mut()
        .map(|w| -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
            Box::pin(async move {
                let _ = w.changed().await;
            })
        })
        .collect();
    std::future::poll_fn(|cx| {
        for f in futures.iter_mut() {
            if f.as_mut().poll(cx).is_ready() {
                return Poll::Ready(());
            }
        }
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx, plain_batch};
    use crate::topics::NewTopic;
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::{ApiKey, ResponseKind};
    use kafka_protocol::protocol::StrBytes;

    fn request(topics: &[(&str, i32, i64)], max_bytes: i32, partition_max: i32) -> FetchRequest {
        FetchRequest::default()
            .with_max_wait_ms(0)
            .with_min_bytes(0)
            .with_max_bytes(max_bytes)
            .with_session_epoch(-1)
            .with_topics(
                topics
                    .iter()
                    .map(|(t, p, o)| {
                        FetchTopic::default()
                            .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                            .with_partitions(vec![FetchPartition::default()
                                .with_partition(*p)
                                .with_fetch_offset(*o)
                                .with_partition_max_bytes(partition_max)])
                    })
                    .collect(),
            )
    }

    /// `request` as a client at `v` sends it: from v13 by topic id (an unknown name as an id
    /// no topic has).
    fn request_at(
        b: &crate::broker::Broker,
        v: i16,
        topics: &[(&str, i32, i64)],
        max_bytes: i32,
        partition_max: i32,
    ) -> FetchRequest {
        let mut r = request(topics, max_bytes, partition_max);
        if v >= TOPIC_IDS_MIN_VERSION {
            for t in &mut r.topics {
                t.topic_id = b
                    .catalog
                    .topic(&t.topic.0)
                    .map_or(Uuid::from_u128(0xdead), |spec| spec.id);
                t.topic = TopicName::default();
            }
        }
        r
    }

    /// A spliced frame as the bytes a client receives.
    fn frame_bytes(frame: protocol::splice::SplicedFrame<FetchRecords>) -> Bytes {
        let mut out = bytes::BytesMut::new();
        for piece in frame.into_pieces() {
            match piece {
                protocol::splice::Piece::Bytes(b) => out.extend_from_slice(&b),
                protocol::splice::Piece::Records(r) => {
                    out.extend_from_slice(&r.to_bytes().unwrap())
                }
            }
        }
        out.freeze()
    }

    async fn setup() -> (tempfile::TempDir, Arc<crate::broker::Broker>) {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        for name in ["a", "b"] {
            let new = NewTopic {
                name: name.into(),
                num_partitions: 1,
                replication_factor: 1,
                ..NewTopic::default()
            };
            b.create_topic(&new, false).await.unwrap();
            let p = b.data.partition(name, 0).await.unwrap();
            for _ in 0..3 {
                let records = plain_batch(4);
                let header = protocol::batch::validate_produced(&records).unwrap();
                p.append(bytes::BytesMut::from(&records[..]), header, 0)
                    .unwrap();
            }
        }
        (dir, b)
    }

    #[tokio::test]
    async fn every_version_answers_and_encodes() {
        let (_dir, b) = setup().await;
        for v in 4..=17 {
            let c = ctx(&b, ApiKey::Fetch, v);
            let answer = handle(
                &c,
                request_at(
                    &b,
                    v,
                    &[("a", 0, 0), ("zz", 0, 0), ("a", 0, 99)],
                    1 << 20,
                    1 << 20,
                ),
            )
            .await;
            let copy = FetchAnswer {
                body: answer.body.clone(),
                splicer: answer.splicer.clone(),
            };
            let spliced = protocol::splice::encode_spliced(
                1,
                ApiKey::Fetch,
                v,
                &ResponseKind::Fetch(answer.body),
                answer.splicer,
            )
            .unwrap();
            let resp = copy.materialized().unwrap();
            let whole =
                protocol::encode_response(1, ApiKey::Fetch, v, &ResponseKind::Fetch(resp.clone()))
                    .unwrap();
            assert_eq!(
                frame_bytes(spliced),
                whole,
                "v{v}: the spliced frame is the codec's"
            );
            let codes: Vec<i16> = resp
                .responses
                .iter()
                .map(|t| t.partitions[0].error_code)
                .collect();
            // An unknown name is UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID.
            let unknown = if v >= 13 { 100 } else { 3 };
            assert_eq!(codes, vec![0, unknown, 1], "v{v}");
            if v >= 13 {
                let id = b.catalog.topic("a").unwrap().id;
                assert_eq!(resp.responses[0].topic_id, id, "v{v}: answered by id");
                assert_eq!(resp.responses[1].topic_id, Uuid::from_u128(0xdead));
                assert!(resp.node_endpoints.is_empty(), "v{v}: no leadership error");
            } else {
                assert_eq!(resp.responses[0].topic.0.as_str(), "a", "v{v}");
            }
            let a = &resp.responses[0].partitions[0];
            assert_eq!(a.high_watermark, 12, "v{v}");
            assert_eq!(
                a.records.as_ref().unwrap().len(),
                3 * plain_batch(4).len(),
                "v{v}"
            );
            assert_encodes(&c, &ResponseKind::Fetch(resp));
        }
    }

    #[tokio::test]
    async fn a_fenced_epoch_names_the_current_leader_and_its_endpoint_from_v16() {
        let (_dir, b) = setup().await;
        let fenced = |v: i16, epoch: i32| {
            let mut r = request_at(&b, v, &[("a", 0, 0), ("b", 0, 0)], 1 << 20, 1 << 20);
            r.topics[0].partitions[0].current_leader_epoch = epoch;
            r
        };
        let c = ctx(&b, ApiKey::Fetch, 16);
        let resp = handle(&c, fenced(16, -2)).await.materialized().unwrap();
        let a = &resp.responses[0].partitions[0];
        assert_eq!(a.error_code, 74, "FENCED_LEADER_EPOCH");
        assert_eq!(
            (a.current_leader.leader_id, a.current_leader.leader_epoch),
            (BrokerId(1), LEADER_EPOCH)
        );
        let listener = &c.listener;
        assert_eq!(resp.node_endpoints.len(), 1);
        let e = &resp.node_endpoints[0];
        assert_eq!(
            (e.node_id, e.host.as_str(), e.port),
            (BrokerId(1), listener.host.as_str(), listener.port)
        );
        // The partition served normally carries no hint.
        let other = &resp.responses[1].partitions[0];
        assert_eq!(other.error_code, 0);
        assert_eq!(other.current_leader, LeaderIdAndEpoch::default());
        assert_encodes(&c, &ResponseKind::Fetch(resp));
        // An epoch from the future is no leadership change: no hint.
        let resp = handle(&c, fenced(16, 5)).await.body;
        assert_eq!(
            resp.responses[0].partitions[0].error_code, 75,
            "UNKNOWN_LEADER_EPOCH"
        );
        assert_eq!(
            resp.responses[0].partitions[0].current_leader,
            LeaderIdAndEpoch::default()
        );
        assert!(resp.node_endpoints.is_empty());
        // Below v16 the same error carries no hint.
        let c15 = ctx(&b, ApiKey::Fetch, 15);
        let resp = handle(&c15, fenced(15, -2)).await.body;
        assert_eq!(resp.responses[0].partitions[0].error_code, 74);
        assert_eq!(
            resp.responses[0].partitions[0].current_leader,
            LeaderIdAndEpoch::default()
        );
        assert!(resp.node_endpoints.is_empty());
    }

    #[tokio::test]
    async fn limits_are_kafkas_first_batch_always_then_budget() {
        let (_dir, b) = setup().await;
        let batch = plain_batch(4).len();
        let c = ctx(&b, ApiKey::Fetch, 12);
        // A partition limit below one batch still returns one batch (the first partition).
        let resp = handle(&c, request(&[("a", 0, 0), ("b", 0, 0)], 1 << 20, 1))
            .await
            .materialized()
            .unwrap();
        let sizes: Vec<usize> = resp
            .responses
            .iter()
            .map(|t| t.partitions[0].records.as_ref().unwrap().len())
            .collect();
        assert_eq!(sizes, vec![batch, 0]);
        // The response budget spans partitions.
        let resp = handle(
            &c,
            request(&[("a", 0, 0), ("b", 0, 0)], (batch * 2) as i32, 1 << 20),
        )
        .await
        .materialized()
        .unwrap();
        let sizes: Vec<usize> = resp
            .responses
            .iter()
            .map(|t| t.partitions[0].records.as_ref().unwrap().len())
            .collect();
        assert_eq!(sizes, vec![2 * batch, 0]);
        // A fetch from inside a batch returns that whole batch.
        let resp = handle(&c, request(&[("a", 0, 5)], 1 << 20, 1 << 20))
            .await
            .materialized()
            .unwrap();
        assert_eq!(
            resp.responses[0].partitions[0]
                .records
                .as_ref()
                .unwrap()
                .len(),
            2 * batch
        );
    }

    #[tokio::test]
    async fn incremental_sessions_are_not_kept() {
        let (_dir, b) = setup().await;
        let c = ctx(&b, ApiKey::Fetch, 7);
        let resp = handle(
            &c,
            request(&[("a", 0, 0)], 1 << 20, 1 << 20).with_session_epoch(3),
        )
        .await
        .body;
        assert_eq!(resp.error_code, 70, "FETCH_SESSION_ID_NOT_FOUND");
        let resp = handle(
            &c,
            request(&[("a", 0, 0)], 1 << 20, 1 << 20).with_session_epoch(0),
        )
        .await
        .body;
        assert_eq!(
            (resp.error_code, resp.session_id),
            (0, 0),
            "no session is created"
        );
    }
}
