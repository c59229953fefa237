//! The [`MarkerLog`] of a broker: a marker goes to its partition's owner. A partition this node
//! owns is appended through the data plane (`Partition::append_marker`, on the blocking pool
//! like a produce); one another node owns goes to that node as WriteTxnMarkers v1 over its
//! Kafka port (decision 0125), which appends it there the same way.

use std::sync::Arc;

use bytes::Bytes;
use protocol::batch::control::ControlMarker;
use protocol::ErrorCode;

use super::txn_markers::{AppendFuture, MarkerAppend, MarkerLog};
use crate::data::{DataPlane, LookupError};
use crate::errors::{to_kafka_error, BrokerError};

/// Appends markers to the partitions this node owns, and hands the others to their owners.
pub struct BrokerMarkerLog {
    data: Arc<DataPlane>,
    remote: Arc<dyn RemoteMarkers>,
}

/// How a marker reaches a partition another node owns.
pub trait RemoteMarkers: Send + Sync + 'static {
    /// Sends the marker for `topic`-`partition` to node `owner`.
    fn send(&self, owner: i32, topic: &str, partition: i32, marker: ControlMarker) -> AppendFuture;
}

impl BrokerMarkerLog {
    pub fn new(data: Arc<DataPlane>, remote: Arc<dyn RemoteMarkers>) -> Self {
        Self { data, remote }
    }
}

impl MarkerLog for BrokerMarkerLog {
    fn append(
        &self,
        topic: &str,
        partition: i32,
        marker: ControlMarker,
        batch: Bytes,
    ) -> AppendFuture {
        let data = self.data.clone();
        let remote = self.remote.clone();
        let topic = topic.to_owned();
        Box::pin(async move {
            match data.partition(&topic, partition).await {
                Ok(p) => local_outcome(append_local(p, batch).await),
                Err(LookupError::UnknownTopicOrPartition) => MarkerAppend::Gone,
                Err(LookupError::NotLeader { leader }) => {
                    remote.send(leader, &topic, partition, marker).await
                }
                Err(e) => MarkerAppend::Retry(e.to_string()),
            }
        })
    }
}

/// Appends `batch` to a partition of this node and waits until it is durable; the error is
/// Kafka's code for it (WriteTxnMarkers answers it per partition).
pub async fn append_local(
    p: Arc<crate::data::Partition>,
    batch: Bytes,
) -> Result<(), (ErrorCode, String)> {
    let now = crate::clock::now().0;
    let written = tokio::task::spawn_blocking(move || p.append_marker(&batch, now)).await;
    match written {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => {
            let e = BrokerError::from(e);
            Err((to_kafka_error(&e), e.to_string()))
        }
        Err(e) => Err((ErrorCode::KafkaStorageError, e.to_string())),
    }
}

/// What a local append's answer means for the writer: a newer epoch of the producer already
/// wrote to the partition, so this transaction's marker is moot (Kafka's marker writer drops
/// it on INVALID_PRODUCER_EPOCH); anything else is tried again.
fn local_outcome(r: Result<(), (ErrorCode, String)>) -> MarkerAppend {
    match r {
        Ok(()) => MarkerAppend::Written,
        Err((ErrorCode::InvalidProducerEpoch, _)) => MarkerAppend::Gone,
        Err((ErrorCode::TransactionCoordinatorFenced, _)) => MarkerAppend::Fenced,
        Err((_, why)) => MarkerAppend::Retry(why),
    }
}

/// Client id of the marker writer's connections, as the owners' logs show it.
pub const CLIENT_ID: &str = "cohort-txn-markers";
/// Bound on one owner's WriteTxnMarkers answer (a marker append waits for an fsync).
const REMOTE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Idle connections kept per owner: a transaction's markers to one owner go out together
/// (decision 0152), each exchange on a connection of its own.
const IDLE_CONNECTIONS_MAX: usize = 8;

/// Markers for partitions other nodes own: WriteTxnMarkers v1 to the owner's Kafka port
/// (the same port and client the lag poller uses for ListOffsets), over a few kept connections
/// per owner.
pub struct KafkaPortMarkers {
    cluster: Arc<dyn crate::cluster::ClusterView>,
    /// How this node logs in on the owners' inter-broker listener (the owner's authorizer
    /// wants CLUSTER_ACTION on the cluster from it).
    security: Arc<crate::client::auth::ClientSecurity>,
    /// Idle connections by owner, with the address each was opened to. Taken out for an
    /// exchange, so the lock is never held across one.
    connections: std::sync::Mutex<
        std::collections::HashMap<i32, Vec<(String, crate::client::connection::Connection)>>,
    >,
}

impl KafkaPortMarkers {
    pub fn new(
        cluster: Arc<dyn crate::cluster::ClusterView>,
        security: Arc<crate::client::auth::ClientSecurity>,
    ) -> Self {
        Self {
            cluster,
            security,
            connections: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }
}

impl RemoteMarkers for Arc<KafkaPortMarkers> {
    fn send(&self, owner: i32, topic: &str, partition: i32, marker: ControlMarker) -> AppendFuture {
        let this = self.clone();
        let topic = topic.to_owned();
        Box::pin(async move { this.send_one(owner, &topic, partition, marker).await })
    }
}

impl KafkaPortMarkers {
    fn lock_connections(
        &self,
    ) -> std::sync::MutexGuard<
        '_,
        std::collections::HashMap<i32, Vec<(String, crate::client::connection::Connection)>>,
    > {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An idle usable connection to `owner` at `addr`, if one is kept (the others are closed).
    fn take_idle(&self, owner: i32, addr: &str) -> Option<crate::client::connection::Connection> {
        let mut connections = self.lock_connections();
        let idle = connections.get_mut(&owner)?;
        while let Some((kept_addr, c)) = idle.pop() {
            if kept_addr == addr && c.is_usable() {
                return Some(c);
            }
        }
        None
    }

    async fn send_one(
        &self,
        owner: i32,
        topic: &str,
        partition: i32,
        marker: ControlMarker,
    ) -> MarkerAppend {
        use kafka_protocol::messages::write_txn_markers_request::{
            WritableTxnMarker, WritableTxnMarkerTopic,
        };
        use kafka_protocol::messages::{ProducerId, TopicName, WriteTxnMarkersRequest};
        // The owner's address on the inter-broker listener, whose name is the protocol the
        // node's credential speaks (start-up checks they match, decision 0166).
        let Some(addr) = self
            .cluster
            .brokers_on(self.security.protocol.name())
            .into_iter()
            .find(|b| b.node_id.0 == owner)
            .map(|b| format!("{}:{}", b.host, b.port))
        else {
            return MarkerAppend::Retry(format!(
                "node {owner} has no known address on the inter-broker listener {}",
                self.security.protocol
            ));
        };
        let request =
            WriteTxnMarkersRequest::default().with_markers(vec![WritableTxnMarker::default()
                .with_producer_id(ProducerId(marker.producer_id))
                .with_producer_epoch(marker.producer_epoch)
                .with_transaction_result(
                    marker.kind == protocol::batch::control::ControlType::Commit,
                )
                .with_coordinator_epoch(marker.coordinator_epoch)
                .with_topics(vec![WritableTxnMarkerTopic::default()
                    .with_name(TopicName(kafka_protocol::protocol::StrBytes::from_string(
                        topic.to_owned(),
                    )))
                    .with_partition_indexes(vec![partition])])]);
        let kept = self.take_idle(owner, &addr);
        let mut conn = match kept {
            Some(c) => c,
            None => {
                match crate::client::connection::Connection::open_with(
                    &addr,
                    CLIENT_ID,
                    REMOTE_TIMEOUT,
                    &self.security,
                )
                .await
                {
                    Ok(c) => c,
                    Err(e) => {
                        return match crate::security::inter_broker::refusal(&e) {
                            Some(reason) => refused(owner, reason, &e.to_string()),
                            None => MarkerAppend::Retry(e.to_string()),
                        }
                    }
                }
            }
        };
        let answer = conn.send_at(&request, 1).await;
        let code = match answer {
            Ok(r) => r
                .markers
                .iter()
                .flat_map(|m| m.topics.iter())
                .flat_map(|t| t.partitions.iter())
                .find(|p| p.partition_index == partition)
                .map(|p| p.error_code),
            Err(e) => return MarkerAppend::Retry(e.to_string()),
        };
        if conn.is_usable() {
            let mut connections = self.lock_connections();
            let idle = connections.entry(owner).or_default();
            if idle.len() < IDLE_CONNECTIONS_MAX {
                idle.push((addr, conn));
            }
        }
        match code.map(|c| (c, ErrorCode::from_code(c))) {
            Some((_, Some(ErrorCode::None))) => MarkerAppend::Written,
            Some((_, Some(ErrorCode::InvalidProducerEpoch))) => MarkerAppend::Gone,
            Some((_, Some(ErrorCode::TransactionCoordinatorFenced))) => MarkerAppend::Fenced,
            Some((code, known)) => match crate::security::inter_broker::refusal_code(code) {
                Some(reason) => refused(owner, reason, known.map_or("", ErrorCode::name)),
                None => MarkerAppend::Retry(format!("node {owner} answered error {code}")),
            },
            None => MarkerAppend::Retry(format!("node {owner} did not answer the partition")),
        }
    }
}

/// A marker a peer refused for who this node is: counted, and retried like any failure (the
/// operator may fix the credential or the ACL; the transaction then completes).
fn refused(owner: i32, reason: &'static str, detail: &str) -> MarkerAppend {
    crate::security::inter_broker::count_refusal("txn_markers", reason);
    MarkerAppend::Retry(format!(
        "node {owner} refused this node's inter-broker {reason} \
         (--inter-broker-command-config, CLUSTER_ACTION): {detail}"
    ))
}
