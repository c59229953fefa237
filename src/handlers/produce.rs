//! Produce (0): v3–v12 stored, v0–v2 answered with UNSUPPORTED_VERSION (advertised only so
//! that older librdkafka enables compression, as Kafka 4.0 does).
//!
//! Each partition's batch is checked (one v2 batch, CRC, counts), a transaction's first batch in
//! the partition verified against the transaction coordinator's state (KIP-890 part 1, decision
//! 0165: `verify_transactions`), then appended on the blocking pool; the partitions of one
//! request are appended concurrently, so their fsyncs overlap and join the group commits of
//! other producers. `acks=0` gets no response; if something failed,
//! the connection is closed instead, which is how Kafka tells such a producer.

use bytes::BytesMut;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;
use protocol::apis::PRODUCE_MIN_DECODABLE_VERSION;
use protocol::ErrorCode;

use std::sync::Arc;

use kafka_protocol::messages::TopicName;
use protocol::batch::BatchHeader;

use super::{Reply, RequestContext};
use crate::data::{Appending, Partition, TxnGuard};
use crate::errors::{to_kafka_error, BrokerError};
use crate::group_coordinator::txn_verify::{TxnBatch, TxnVerifyError};

/// Handles one Produce request: [`begin`] then [`InFlight::finish`].
pub async fn handle(ctx: &RequestContext, req: ProduceRequest) -> Reply {
    match begin(ctx, req, true).await {
        Started::Ready(reply) => reply,
        Started::Pending(in_flight) => in_flight.finish().await,
    }
}

/// What [`begin`] did.
#[derive(Debug)]
pub enum Started {
    /// Answered without writing anything (legacy version, bad acks, transactional records
    /// without a transactional id).
    Ready(Reply),
    /// Written; [`InFlight::finish`] waits for durability and builds the answer.
    Pending(InFlight),
}

/// A produce whose batches are written but not yet acknowledged.
#[derive(Debug)]
pub struct InFlight {
    ctx: RequestContext,
    acks: i16,
    topics: Vec<(TopicName, Vec<(i32, Slot)>)>,
}

#[derive(Debug)]
enum Slot {
    Failed(BrokerError),
    Written(Arc<Partition>, Appending),
    Durable(Appending),
}

/// Checks and writes every partition's batch, in request order, without waiting for fsync.
/// A connection calls this for its requests one after the other, so appends keep the order the
/// client sent them in; the `finish` of several requests may then overlap.
///
/// `sync_now`: the client has nothing else in flight, so there is nothing to overlap with: the
/// blocking task that writes a single-partition batch also waits for its fsync, saving a hop.
pub async fn begin(ctx: &RequestContext, req: ProduceRequest, sync_now: bool) -> Started {
    if ctx.version < PRODUCE_MIN_DECODABLE_VERSION {
        return Started::Ready(legacy(ctx, &req));
    }
    let acks = req.acks;
    if !matches!(acks, -1..=1) {
        // Kafka refuses the whole request, every partition with INVALID_REQUIRED_ACKS.
        return Started::Ready(refuse_all(ctx, &req, ErrorCode::InvalidRequiredAcks, None));
    }
    if req.transactional_id.is_none() && carries_transactional_batch(&req) {
        // Kafka authorizes transactional records against the request's transactional id:
        // without one, the whole request is refused.
        return Started::Ready(refuse_all(
            ctx,
            &req,
            ErrorCode::TransactionalIdAuthorizationFailed,
            None,
        ));
    }
    // Validate and find every partition first, verify the transactional batches that would
    // open a transaction, then write them all in one blocking task.
    let mut jobs = Vec::new();
    let mut shape = Vec::with_capacity(req.topic_data.len());
    for t in req.topic_data {
        let mut indexes = Vec::with_capacity(t.partition_data.len());
        for p in t.partition_data {
            indexes.push(p.index);
            let job = prepare(ctx, &t.name.0, p.index, p.records).await;
            jobs.push(job);
        }
        shape.push((t.name, indexes));
    }
    let transactional_id = req.transactional_id.as_ref().map(|t| t.0.as_str());
    verify_transactions(ctx, transactional_id, &mut jobs).await;
    let now = crate::clock::unix_ms();
    let sync_now = sync_now && jobs.len() == 1;
    let write_all = move || {
        jobs.into_iter()
            .map(|job| match job {
                Ok(job) => {
                    let partition = Arc::clone(&job.partition);
                    match job.append(now) {
                        Ok(appending) if sync_now => match partition.wait_durable(&appending) {
                            Ok(()) => Slot::Durable(appending),
                            Err(e) => Slot::Failed(BrokerError::Log(e)),
                        },
                        Ok(appending) => Slot::Written(partition, appending),
                        Err(e) => Slot::Failed(e.into()),
                    }
                }
                Err(e) => Slot::Failed(e),
            })
            .collect::<Vec<_>>()
    };
    let multi_thread = tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread;
    let written = if sync_now && multi_thread {
        // A lone request waits for its own fsync anyway: block this worker (its other tasks
        // move to another) rather than hop to the blocking pool and back.
        Ok(tokio::task::block_in_place(write_all))
    } else {
        tokio::task::spawn_blocking(write_all).await
    };
    let mut slots = match written {
        Ok(s) => s.into_iter(),
        Err(e) => {
            let err = task_failed("append", &e);
            let reply = refuse_shape(ctx, acks, &shape, &err);
            return Started::Ready(reply);
        }
    };
    let topics = shape
        .into_iter()
        .map(|(name, indexes)| {
            let slots = indexes
                .into_iter()
                .map(|i| {
                    let slot = slots
                        .next()
                        .unwrap_or_else(|| Slot::Failed(task_failed("append", &"lost slot")));
                    (i, slot)
                })
                .collect();
            (name, slots)
        })
        .collect();
    Started::Pending(InFlight {
        ctx: ctx.clone(),
        acks,
        topics,
    })
}

impl InFlight {
    /// Waits until every written batch is durable (group commit), then answers.
    pub async fn finish(self) -> Reply {
        let ctx = &self.ctx;
        let mut waits = Vec::new();
        for (_, slots) in &self.topics {
            for (_, slot) in slots {
                if let Slot::Written(partition, appending) = slot {
                    let partition = Arc::clone(partition);
                    let appending = *appending;
                    waits.push(Some(tokio::task::spawn_blocking(move || {
                        partition.wait_durable(&appending)
                    })));
                } else {
                    waits.push(None);
                }
            }
        }
        let mut waits = waits.into_iter();
        let mut failed = false;
        let mut topics = Vec::with_capacity(self.topics.len());
        for (name, slots) in self.topics {
            let mut partitions = Vec::with_capacity(slots.len());
            for (index, slot) in slots {
                let wait = waits.next().flatten();
                let outcome = match slot {
                    Slot::Failed(e) => Err(e),
                    Slot::Durable(appending) => Ok(appending.appended),
                    Slot::Written(_, appending) => match wait {
                        Some(w) => match w.await {
                            Ok(Ok(())) => Ok(appending.appended),
                            Ok(Err(e)) => Err(BrokerError::Log(e)),
                            Err(e) => Err(task_failed("fsync", &e)),
                        },
                        None => Err(task_failed("fsync", &"lost wait")),
                    },
                };
                partitions.push(match outcome {
                    Ok(a) => {
                        let mut r = PartitionProduceResponse::default()
                            .with_index(index)
                            .with_base_offset(a.base_offset);
                        if ctx.version >= 2 {
                            r = r.with_log_append_time_ms(-1);
                        }
                        if ctx.version >= 5 {
                            r = r.with_log_start_offset(a.log_start_offset);
                        }
                        r
                    }
                    Err(e) => {
                        failed = true;
                        tracing::debug!(topic = %name.0, partition = index, error = %e,
                            "produce refused");
                        error_response(ctx, index, to_kafka_error(&e), Some(&e))
                    }
                });
            }
            topics.push(
                TopicProduceResponse::default()
                    .with_name(name)
                    .with_partition_responses(partitions),
            );
        }
        answer(self.acks, failed, topics)
    }
}

fn answer(acks: i16, failed: bool, topics: Vec<TopicProduceResponse>) -> Reply {
    if acks == 0 {
        return if failed {
            Reply::Close("a produce with acks=0 failed")
        } else {
            Reply::Nothing
        };
    }
    Reply::Body(Box::new(ResponseKind::Produce(
        ProduceResponse::default().with_responses(topics),
    )))
}

pub(crate) fn refuse_all(
    ctx: &RequestContext,
    req: &ProduceRequest,
    code: ErrorCode,
    err: Option<&BrokerError>,
) -> Reply {
    let topics = req
        .topic_data
        .iter()
        .map(|t| {
            TopicProduceResponse::default()
                .with_name(t.name.clone())
                .with_partition_responses(
                    t.partition_data
                        .iter()
                        .map(|p| error_response(ctx, p.index, code, err))
                        .collect(),
                )
        })
        .collect();
    answer(req.acks, true, topics)
}

fn refuse_shape(
    ctx: &RequestContext,
    acks: i16,
    shape: &[(TopicName, Vec<i32>)],
    err: &BrokerError,
) -> Reply {
    let code = to_kafka_error(err);
    let topics = shape
        .iter()
        .map(|(name, indexes)| {
            TopicProduceResponse::default()
                .with_name(name.clone())
                .with_partition_responses(
                    indexes
                        .iter()
                        .map(|i| error_response(ctx, *i, code, Some(err)))
                        .collect(),
                )
        })
        .collect();
    answer(acks, true, topics)
}

fn task_failed(what: &'static str, e: &dyn std::fmt::Display) -> BrokerError {
    BrokerError::Log(compaction::LogError::Io {
        op: what,
        path: Default::default(),
        source: std::io::Error::other(e.to_string()),
    })
}

/// Whether any partition's batch has the transactional attribute.
pub(crate) fn carries_transactional_batch(req: &ProduceRequest) -> bool {
    req.topic_data.iter().any(|t| {
        t.partition_data.iter().any(|p| {
            p.records
                .as_ref()
                .and_then(|r| BatchHeader::parse(r).ok())
                .is_some_and(|h| h.is_transactional())
        })
    })
}

/// One partition's checked batch, ready to append.
#[derive(Debug)]
struct Job {
    partition: Arc<Partition>,
    records: BytesMut,
    header: BatchHeader,
    /// A transactional batch that would open a transaction here: its verification, to be
    /// confirmed by [`verify_transactions`] before the append presents it.
    guard: Option<TxnGuard>,
    /// Whether transactional batches are verified (`--transaction-partition-verification-enable`).
    verify: bool,
}

impl Job {
    /// Writes the batch (not waiting for durability); a transactional one that would open a
    /// transaction here only with a confirmed verification, unless verification is off.
    fn append(self, now_ms: i64) -> Result<Appending, crate::data::AppendError> {
        if self.verify {
            self.partition
                .append_produced(self.records, self.header, now_ms, self.guard)
        } else {
            self.partition
                .append_unsynced(self.records, self.header, now_ms)
        }
    }
}

/// Checks one partition's batch and finds its partition; a transactional batch of a producer
/// with no transaction open here at its epoch starts a verification (decision 0165).
async fn prepare(
    ctx: &RequestContext,
    topic: &str,
    index: i32,
    records: Option<bytes::Bytes>,
) -> Result<Job, BrokerError> {
    let records = records.unwrap_or_default();
    let header =
        protocol::batch::validate_produced(&records).map_err(crate::data::AppendError::from)?;
    let partition = ctx.broker.data.partition(topic, index).await?;
    let verify = ctx.broker.config.txn_partition_verification;
    let guard = if verify && header.is_transactional() {
        partition.start_txn_verification(header.producer_id, header.producer_epoch)
    } else {
        None
    };
    Ok(Job {
        partition,
        records: BytesMut::from(&records[..]),
        header,
        guard,
        verify,
    })
}

/// KIP-890 part 1: every job holding a verification is checked against the transaction
/// coordinator's state, made fresh once for the request; a batch the coordinator did not
/// register becomes that partition's error and is not written.
async fn verify_transactions(
    ctx: &RequestContext,
    transactional_id: Option<&str>,
    jobs: &mut [Result<Job, BrokerError>],
) {
    if !jobs
        .iter()
        .any(|j| matches!(j, Ok(Job { guard: Some(_), .. })))
    {
        return;
    }
    let fresh = match ctx.broker.groups.as_ref() {
        Some(groups) => groups
            .catch_up_for_txn_verification()
            .await
            .map(|()| groups),
        None => Err(TxnVerifyError::Unavailable(
            "this broker runs no transaction coordinator".into(),
        )),
    };
    for slot in jobs.iter_mut() {
        let Ok(job) = slot else { continue };
        if job.guard.is_none() {
            continue;
        }
        let verdict = fresh.clone().and_then(|groups| {
            groups.judge_txn_batch(&TxnBatch {
                // `begin` refused transactional batches without a transactional id.
                transactional_id: transactional_id.unwrap_or_default(),
                producer_id: job.header.producer_id,
                producer_epoch: job.header.producer_epoch,
                topic: &job.partition.topic,
                partition: job.partition.index,
                abortable: ctx.version >= TRANSACTION_ABORTABLE_SINCE,
            })
        });
        if let Err(e) = verdict {
            if let Some(guard) = job.guard {
                job.partition.drop_txn_verification(guard);
            }
            *slot = Err(e.into());
        }
    }
}

/// The Produce version from which a client handles TRANSACTION_ABORTABLE (KIP-890: v11).
const TRANSACTION_ABORTABLE_SINCE: i16 = 11;

pub(crate) fn error_response(
    ctx: &RequestContext,
    index: i32,
    code: ErrorCode,
    err: Option<&BrokerError>,
) -> PartitionProduceResponse {
    let mut r = PartitionProduceResponse::default()
        .with_index(index)
        .with_error_code(ctx.error(code))
        .with_base_offset(-1);
    if ctx.version >= 2 {
        r = r.with_log_append_time_ms(-1);
    }
    if ctx.version >= 5 {
        r = r.with_log_start_offset(-1);
    }
    if ctx.version >= 8 {
        r = r.with_error_message(err.map(|e| StrBytes::from_string(e.to_string())));
    }
    r
}

/// v0–v2: every partition gets UNSUPPORTED_VERSION, in the layout of the client's version.
fn legacy(ctx: &RequestContext, req: &ProduceRequest) -> Reply {
    ctx.error(ErrorCode::UnsupportedVersion);
    if req.acks == 0 {
        return Reply::Close("a produce below v3 with acks=0 cannot be answered");
    }
    match protocol::response::legacy_produce_response(
        ctx.correlation_id,
        ctx.version,
        req,
        ErrorCode::UnsupportedVersion,
    ) {
        Ok(frame) => Reply::Frame(frame),
        Err(e) => {
            tracing::error!(error = %e, "encoding a legacy produce answer failed");
            Reply::Close("a legacy produce answer could not be encoded")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, create_topic, ctx, plain_batch};
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::{ApiKey, TopicName};

    fn request(topic: &str, partition: i32, records: bytes::Bytes, acks: i16) -> ProduceRequest {
        ProduceRequest::default()
            .with_transactional_id(None)
            .with_acks(acks)
            .with_timeout_ms(1000)
            .with_topic_data(vec![TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_partition_data(vec![PartitionProduceData::default()
                    .with_index(partition)
                    .with_records(Some(records))])])
    }

    fn partition(reply: Reply) -> PartitionProduceResponse {
        match reply {
            Reply::Body(body) => match *body {
                ResponseKind::Produce(mut r) => r.responses.remove(0).partition_responses.remove(0),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn every_version_appends_and_encodes_its_answer() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        create_topic(&b, "p", 1, &[]).await;
        let mut expected_offset = 0;
        for v in 3..=12 {
            let c = ctx(&b, ApiKey::Produce, v);
            let reply = handle(&c, request("p", 0, plain_batch(2), -1)).await;
            let Reply::Body(body) = reply else {
                panic!("v{v}: no body")
            };
            assert_encodes(&c, &body);
            let p = partition(Reply::Body(body));
            assert_eq!((p.error_code, p.base_offset), (0, expected_offset), "v{v}");
            expected_offset += 2;
            // Errors encode at every version too.
            let reply = handle(&c, request("absent", 0, plain_batch(1), 1)).await;
            let Reply::Body(body) = reply else {
                panic!("v{v}: no body")
            };
            assert_encodes(&c, &body);
            assert_eq!(partition(Reply::Body(body)).error_code, 3, "v{v}");
        }
    }

    #[tokio::test]
    async fn acks_zero_answers_nothing_or_closes_on_failure_and_bad_acks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        create_topic(&b, "p", 1, &[]).await;
        let c = ctx(&b, ApiKey::Produce, 9);
        assert!(matches!(
            handle(&c, request("p", 0, plain_batch(1), 0)).await,
            Reply::Nothing
        ));
        assert!(matches!(
            handle(&c, request("p", 5, plain_batch(1), 0)).await,
            Reply::Close(_)
        ));
        let p = partition(handle(&c, request("p", 0, plain_batch(1), 2)).await);
        assert_eq!(p.error_code, 21, "INVALID_REQUIRED_ACKS");
        assert_eq!(b.data.partition("p", 0).await.unwrap().log_end_offset(), 1);
    }
}
