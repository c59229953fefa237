//! Transaction operations of the Admin client, as `kafka-transactions.sh` uses them (KIP-664):
//! DescribeTransactions at each transactional id's coordinator (FindCoordinator key type 1),
//! ListTransactions at every broker, DescribeProducers at a partition's leader (or a named
//! broker), and an abort as one WriteTxnMarkers ABORT to the partition's leader. Failures carry
//! the messages Kafka's Admin handlers put in their exceptions.

use std::collections::BTreeMap;
use std::fmt;

use kafka_protocol::messages::describe_producers_request::TopicRequest;
use kafka_protocol::messages::write_txn_markers_request::{
    WritableTxnMarker, WritableTxnMarkerTopic,
};
use kafka_protocol::messages::{
    ApiKey, DescribeProducersRequest, DescribeTransactionsRequest, FindCoordinatorRequest,
    ListTransactionsRequest, ProducerId, TopicName, TransactionalId, WriteTxnMarkersRequest,
};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;

use super::admin::Admin;
use super::error::{
    ClientError, ClientResult, KafkaError, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
    NONE, NOT_COORDINATOR, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
};
use super::offsets::{route, Route};
use super::types::{Node, NodeId, TopicPartition};

/// FindCoordinator key type of transactional ids.
const KEY_TYPE_TRANSACTION: i8 = 1;
const TRANSACTIONAL_ID_NOT_FOUND: i16 = ErrorCode::TransactionalIdNotFound.code();
const REPLICA_NOT_AVAILABLE: i16 = ErrorCode::ReplicaNotAvailable.code();
const BROKER_NOT_AVAILABLE: i16 = ErrorCode::BrokerNotAvailable.code();
const INVALID_PRODUCER_EPOCH: i16 = ErrorCode::InvalidProducerEpoch.code();
const TRANSACTION_COORDINATOR_FENCED: i16 = ErrorCode::TransactionCoordinatorFenced.code();

/// What the coordinator says of one transactional id (Kafka's `TransactionDescription`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionDescription {
    /// The coordinator that answered.
    pub coordinator: NodeId,
    /// Kafka's state name (`Ongoing`, `CompleteAbort`, ...).
    pub state: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub timeout_ms: i32,
    /// Start of the open transaction; `None` when the coordinator sent −1.
    pub start_time_ms: Option<i64>,
    /// Partitions in the transaction, sorted.
    pub partitions: Vec<TopicPartition>,
}

/// One row of ListTransactions (Kafka's `TransactionListing`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionListing {
    pub transactional_id: String,
    pub producer_id: i64,
    pub state: String,
}

/// ListTransactions' filters (Kafka's `ListTransactionsOptions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListTransactionsFilter {
    pub states: Vec<String>,
    pub producer_ids: Vec<i64>,
    /// Only transactions running longer than this many ms (ListTransactions v1).
    pub duration_ms: Option<i64>,
}

/// One active producer of a partition (Kafka's `ProducerState`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerState {
    pub producer_id: i64,
    pub producer_epoch: i32,
    pub last_sequence: i32,
    pub last_timestamp: i64,
    /// `None` when the broker sent −1.
    pub coordinator_epoch: Option<i32>,
    /// First offset of its open transaction; `None` when it has none.
    pub txn_start_offset: Option<i64>,
}

/// The transaction to abort on one partition (Kafka's `AbortTransactionSpec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortSpec {
    pub partition: TopicPartition,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub coordinator_epoch: i32,
}

/// `AbortTransactionSpec.toString()`, which the tool's messages quote.
impl fmt::Display for AbortSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AbortTransactionSpec(topicPartition={}, producerId={}, producerEpoch={}, \
             coordinatorEpoch={})",
            self.partition, self.producer_id, self.producer_epoch, self.coordinator_epoch
        )
    }
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

fn failed(code: i16, message: String) -> ClientError {
    KafkaError::with_message(code, Some(message)).into()
}

/// The answer of DescribeTransactions for one id: final, or ask again.
enum Described {
    Done(Result<TransactionDescription, ClientError>),
    Retry,
    Unmap,
}

/// Kafka's `DescribeTransactionsHandler` verdict on one id's error code.
fn describe_error(id: &str, code: i16) -> Described {
    match code {
        TRANSACTIONAL_ID_NOT_FOUND => Described::Done(Err(failed(
            code,
            format!(
                "DescribeTransactions request for transactionalId `{id}` failed because the ID \
                 could not be found"
            ),
        ))),
        COORDINATOR_LOAD_IN_PROGRESS => Described::Retry,
        NOT_COORDINATOR | COORDINATOR_NOT_AVAILABLE => Described::Unmap,
        _ => Described::Done(Err(failed(
            code,
            format!(
                "DescribeTransactions request for transactionalId `{id}` failed due to \
                 unexpected error"
            ),
        ))),
    }
}

/// Kafka's `AbortTransactionHandler` verdict on the partition's error code: `None` = find the
/// leader again and retry.
fn abort_error(spec: &AbortSpec, code: i16) -> Option<ClientError> {
    let message = match code {
        NOT_LEADER_OR_FOLLOWER
        | REPLICA_NOT_AVAILABLE
        | BROKER_NOT_AVAILABLE
        | UNKNOWN_TOPIC_OR_PARTITION => return None,
        INVALID_PRODUCER_EPOCH => {
            format!("WriteTxnMarkers request with {spec} failed due an invalid producer epoch")
        }
        TRANSACTION_COORDINATOR_FENCED => format!(
            "WriteTxnMarkers request with {spec} failed since the provided coordinator epoch {} \
             has been fenced by the active coordinator",
            spec.coordinator_epoch
        ),
        _ => format!(
            "WriteTxnMarkers request with {spec} failed due to unexpected error: {}",
            KafkaError::new(code).message()
        ),
    };
    Some(failed(code, message))
}

impl Admin {
    /// The transaction coordinator of `id`, or `None` while none is available.
    async fn transaction_coordinator(&mut self, id: &str) -> ClientResult<Option<Node>> {
        let addr = self.any_broker().await?;
        let version = self
            .broker_versions(&addr)
            .await?
            .pick(ApiKey::FindCoordinator)?;
        let (code, message, node) = if version >= 4 {
            let request = FindCoordinatorRequest::default()
                .with_key_type(KEY_TYPE_TRANSACTION)
                .with_coordinator_keys(vec![s(id)]);
            let response = self.send_at(&addr, &request, version).await?;
            let Some(c) = response.coordinators.into_iter().next() else {
                return Ok(None);
            };
            (c.error_code, c.error_message, (c.node_id.0, c.host, c.port))
        } else {
            let request = FindCoordinatorRequest::default()
                .with_key(s(id))
                .with_key_type(KEY_TYPE_TRANSACTION);
            let r = self.send_at(&addr, &request, version).await?;
            (r.error_code, r.error_message, (r.node_id.0, r.host, r.port))
        };
        match code {
            NONE => Ok(Some(Node {
                id: NodeId(node.0),
                host: node.1.to_string(),
                port: node.2,
                rack: None,
            })),
            COORDINATOR_NOT_AVAILABLE | COORDINATOR_LOAD_IN_PROGRESS => Ok(None),
            _ => Err(KafkaError::with_message(code, message.map(|m| m.to_string())).into()),
        }
    }

    /// What each id's coordinator says of it, retried (within the call deadline) while the
    /// coordinator moves or loads.
    pub async fn describe_transactions(
        &mut self,
        ids: &[String],
    ) -> ClientResult<BTreeMap<String, Result<TransactionDescription, ClientError>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeTransactions", async {
            let mut out = BTreeMap::new();
            for id in ids {
                let mut attempt = 0u32;
                let answer = loop {
                    match self.describe_one(id).await? {
                        Described::Done(answer) => break answer,
                        Described::Retry | Described::Unmap => {}
                    }
                    self.backoff(attempt).await;
                    attempt += 1;
                };
                out.insert(id.clone(), answer);
            }
            Ok(out)
        })
        .await
    }

    async fn describe_one(&mut self, id: &str) -> ClientResult<Described> {
        let Some(coordinator) = self.transaction_coordinator(id).await? else {
            return Ok(Described::Unmap);
        };
        let request = DescribeTransactionsRequest::default()
            .with_transactional_ids(vec![TransactionalId(s(id))]);
        let response = match self.send(&coordinator.address(), &request).await {
            Ok(r) => r,
            Err(e @ (ClientError::Io { .. } | ClientError::Protocol { .. })) => {
                tracing::debug!(error = %e, "DescribeTransactions failed; retrying");
                return Ok(Described::Unmap);
            }
            Err(e) => return Err(e),
        };
        let Some(t) = response
            .transaction_states
            .into_iter()
            .find(|t| t.transactional_id.0.as_str() == id)
        else {
            return Ok(Described::Retry);
        };
        if t.error_code != NONE {
            return Ok(describe_error(id, t.error_code));
        }
        let mut partitions: Vec<TopicPartition> = t
            .topics
            .iter()
            .flat_map(|d| {
                d.partitions
                    .iter()
                    .map(|p| TopicPartition::new(d.topic.0.to_string(), *p))
            })
            .collect();
        partitions.sort();
        partitions.dedup();
        Ok(Described::Done(Ok(TransactionDescription {
            coordinator: coordinator.id,
            state: t.transaction_state.to_string(),
            producer_id: t.producer_id.0,
            producer_epoch: t.producer_epoch,
            timeout_ms: t.transaction_timeout_ms,
            start_time_ms: (t.transaction_start_time_ms >= 0)
                .then_some(t.transaction_start_time_ms),
            partitions,
        })))
    }

    /// The transactions every broker coordinates, by broker id (Kafka's `allByBrokerId`).
    pub async fn list_transactions(
        &mut self,
        filter: &ListTransactionsFilter,
    ) -> ClientResult<BTreeMap<NodeId, Vec<TransactionListing>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "listTransactions", async {
            self.metadata(Some(&[])).await?;
            let brokers: Vec<Node> = self.brokers().values().cloned().collect();
            let mut out = BTreeMap::new();
            for broker in brokers {
                let mut attempt = 0u32;
                let listings = loop {
                    match self.list_at(&broker, filter).await? {
                        Some(listings) => break listings,
                        None => {
                            self.backoff(attempt).await;
                            attempt += 1;
                        }
                    }
                };
                out.insert(broker.id, listings);
            }
            Ok(out)
        })
        .await
    }

    /// One broker's listing; `None` while its coordinator loads.
    async fn list_at(
        &mut self,
        broker: &Node,
        filter: &ListTransactionsFilter,
    ) -> ClientResult<Option<Vec<TransactionListing>>> {
        let addr = broker.address();
        let version = self
            .broker_versions(&addr)
            .await?
            .pick(ApiKey::ListTransactions)?;
        let mut request = ListTransactionsRequest::default()
            .with_state_filters(filter.states.iter().map(|v| s(v)).collect())
            .with_producer_id_filters(filter.producer_ids.iter().map(|p| ProducerId(*p)).collect());
        if let Some(ms) = filter.duration_ms {
            if version < 1 {
                return Err(ClientError::UnsupportedVersion(format!(
                    "Duration filter is not supported by broker {} (ListTransactions v{version})",
                    broker.id
                )));
            }
            request = request.with_duration_filter(ms);
        }
        let response = self.send_at(&addr, &request, version).await?;
        match response.error_code {
            NONE => Ok(Some(
                response
                    .transaction_states
                    .into_iter()
                    .map(|t| TransactionListing {
                        transactional_id: t.transactional_id.0.to_string(),
                        producer_id: t.producer_id.0,
                        state: t.transaction_state.to_string(),
                    })
                    .collect(),
            )),
            COORDINATOR_LOAD_IN_PROGRESS => Ok(None),
            code => Err(KafkaError::new(code).into()),
        }
    }

    /// The active producers of each partition, asked of its leader or of `broker`.
    pub async fn describe_producers(
        &mut self,
        partitions: &[TopicPartition],
        broker: Option<NodeId>,
    ) -> ClientResult<BTreeMap<TopicPartition, Result<Vec<ProducerState>, ClientError>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeProducers", async {
            let mut out = BTreeMap::new();
            let mut pending: Vec<TopicPartition> = partitions.to_vec();
            pending.sort();
            pending.dedup();
            let mut attempt = 0u32;
            while !pending.is_empty() {
                let mut by_node: BTreeMap<NodeId, Vec<TopicPartition>> = BTreeMap::new();
                match broker {
                    Some(id) => {
                        by_node.insert(id, pending.clone());
                    }
                    None => {
                        let mut topics: Vec<String> =
                            pending.iter().map(|tp| tp.topic.clone()).collect();
                        topics.dedup();
                        let metadata = self.metadata(Some(&topics)).await?;
                        for tp in &pending {
                            match route(&metadata, tp) {
                                Route::Leader(node) => {
                                    by_node.entry(node).or_default().push(tp.clone())
                                }
                                Route::Retry => {}
                                Route::Fail(e) => {
                                    out.insert(tp.clone(), Err(e.into()));
                                }
                            }
                        }
                    }
                }
                for (node, tps) in by_node {
                    let addr = self.node_address(node).await?;
                    for (tp, answer) in self.describe_producers_at(&addr, &tps, broker).await? {
                        if let Some(answer) = answer {
                            out.insert(tp, answer);
                        }
                    }
                }
                pending.retain(|tp| !out.contains_key(tp));
                if !pending.is_empty() {
                    self.backoff(attempt).await;
                    attempt += 1;
                }
            }
            Ok(out)
        })
        .await
    }

    /// One node's answer per partition; `None` = ask again.
    async fn describe_producers_at(
        &mut self,
        addr: &str,
        partitions: &[TopicPartition],
        broker: Option<NodeId>,
    ) -> ClientResult<
        Vec<(
            TopicPartition,
            Option<Result<Vec<ProducerState>, ClientError>>,
        )>,
    > {
        let mut topics: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for tp in partitions {
            topics.entry(&tp.topic).or_default().push(tp.partition);
        }
        let request = DescribeProducersRequest::default().with_topics(
            topics
                .into_iter()
                .map(|(name, ps)| {
                    TopicRequest::default()
                        .with_name(TopicName(s(name)))
                        .with_partition_indexes(ps)
                })
                .collect(),
        );
        let response = match self.send(addr, &request).await {
            Ok(r) => r,
            Err(e @ (ClientError::Io { .. } | ClientError::Protocol { .. })) => {
                tracing::debug!(error = %e, "DescribeProducers failed; retrying");
                return Ok(Vec::new());
            }
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for t in response.topics {
            for p in t.partitions {
                let tp = TopicPartition::new(t.name.0.to_string(), p.partition_index);
                if !partitions.contains(&tp) {
                    continue;
                }
                let answer = match (p.error_code, broker) {
                    (NONE, _) => Some(Ok(p
                        .active_producers
                        .iter()
                        .map(|a| ProducerState {
                            producer_id: a.producer_id.0,
                            producer_epoch: a.producer_epoch,
                            last_sequence: a.last_sequence,
                            last_timestamp: a.last_timestamp,
                            coordinator_epoch: (a.coordinator_epoch >= 0)
                                .then_some(a.coordinator_epoch),
                            txn_start_offset: (a.current_txn_start_offset >= 0)
                                .then_some(a.current_txn_start_offset),
                        })
                        .collect())),
                    (NOT_LEADER_OR_FOLLOWER, Some(id)) => Some(Err(failed(
                        p.error_code,
                        format!(
                            "Failed to describe active producers for partition {tp} on brokerId \
                             {id}"
                        ),
                    ))),
                    (NOT_LEADER_OR_FOLLOWER | UNKNOWN_TOPIC_OR_PARTITION, _) => None,
                    (code, _) => Some(Err(failed(
                        code,
                        format!(
                            "Failed to describe active producers for partition {tp} due to \
                             unexpected error"
                        ),
                    ))),
                };
                out.push((tp, answer));
            }
        }
        Ok(out)
    }

    /// Writes an ABORT marker for `spec` on its partition, at the partition's leader.
    pub async fn abort_transaction(&mut self, spec: &AbortSpec) -> ClientResult<()> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "abortTransaction", async {
            let mut attempt = 0u32;
            loop {
                let topic = [spec.partition.topic.clone()];
                let metadata = self.metadata(Some(&topic)).await?;
                match route(&metadata, &spec.partition) {
                    Route::Leader(node) => {
                        let addr = self.node_address(node).await?;
                        if let Some(done) = self.abort_at(&addr, spec).await? {
                            return done;
                        }
                    }
                    Route::Retry => {}
                    Route::Fail(e) => return Err(e.into()),
                }
                self.backoff(attempt).await;
                attempt += 1;
            }
        })
        .await
    }

    /// The leader's verdict; `None` = find the leader again.
    async fn abort_at(
        &mut self,
        addr: &str,
        spec: &AbortSpec,
    ) -> ClientResult<Option<ClientResult<()>>> {
        let request =
            WriteTxnMarkersRequest::default().with_markers(vec![WritableTxnMarker::default()
                .with_producer_id(ProducerId(spec.producer_id))
                .with_producer_epoch(spec.producer_epoch)
                .with_transaction_result(false)
                .with_coordinator_epoch(spec.coordinator_epoch)
                .with_topics(vec![WritableTxnMarkerTopic::default()
                    .with_name(TopicName(s(&spec.partition.topic)))
                    .with_partition_indexes(vec![spec.partition.partition])])]);
        let response = match self.send(addr, &request).await {
            Ok(r) => r,
            Err(e @ (ClientError::Io { .. } | ClientError::Protocol { .. })) => {
                tracing::debug!(error = %e, "WriteTxnMarkers failed; retrying");
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let code = response
            .markers
            .iter()
            .filter(|m| m.producer_id.0 == spec.producer_id)
            .flat_map(|m| m.topics.iter())
            .filter(|t| t.name.0.as_str() == spec.partition.topic)
            .flat_map(|t| t.partitions.iter())
            .find(|p| p.partition_index == spec.partition.partition)
            .map(|p| p.error_code);
        let Some(code) = code else {
            return Ok(Some(Err(ClientError::Protocol {
                addr: addr.to_owned(),
                detail: format!(
                    "WriteTxnMarkers response included no entry for {}",
                    spec.partition
                ),
            })));
        };
        if code == NONE {
            return Ok(Some(Ok(())));
        }
        Ok(abort_error(spec, code).map(Err))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> AbortSpec {
        AbortSpec {
            partition: TopicPartition::new("t", 0),
            producer_id: 7,
            producer_epoch: 2,
            coordinator_epoch: 0,
        }
    }

    #[test]
    fn abort_spec_prints_as_java() {
        assert_eq!(
            spec().to_string(),
            "AbortTransactionSpec(topicPartition=t-0, producerId=7, producerEpoch=2, \
             coordinatorEpoch=0)"
        );
    }

    #[test]
    fn abort_errors_are_kafkas() {
        assert!(abort_error(&spec(), NOT_LEADER_OR_FOLLOWER).is_none());
        let e = abort_error(&spec(), INVALID_PRODUCER_EPOCH).map(|e| e.java_string());
        assert_eq!(
            e.as_deref(),
            Some(
                "org.apache.kafka.common.errors.InvalidProducerEpochException: WriteTxnMarkers \
                 request with AbortTransactionSpec(topicPartition=t-0, producerId=7, \
                 producerEpoch=2, coordinatorEpoch=0) failed due an invalid producer epoch"
            )
        );
    }

    #[test]
    fn an_unknown_transactional_id_fails_with_kafkas_message() {
        let Described::Done(Err(e)) = describe_error("x", TRANSACTIONAL_ID_NOT_FOUND) else {
            panic!("not final")
        };
        assert_eq!(
            e.java_message(),
            "DescribeTransactions request for transactionalId `x` failed because the ID could \
             not be found"
        );
        assert!(matches!(
            describe_error("x", NOT_COORDINATOR),
            Described::Unmap
        ));
        assert!(matches!(
            describe_error("x", COORDINATOR_LOAD_IN_PROGRESS),
            Described::Retry
        ));
    }
}
