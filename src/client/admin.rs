//! The admin client core: a pool of broker connections, cluster metadata, group coordinator
//! lookup, and the driver that sends group-addressed requests to each group's coordinator with
//! Kafka's retry rules. The operations themselves live in `groups`, `offsets` and `topics`.
//!
//! ```text
//!   op(groups) ─► FindCoordinator (batched v4+, else one per group)
//!              ─► per coordinator: request for its groups ─► per group:
//!                    Done / Failed ─► result
//!                    Retry (LOAD_IN_PROGRESS)        ─► same coordinator, after a backoff
//!                    Unmap (NOT_COORDINATOR, ...)    ─► look the coordinator up again
//! ```
//! Every public operation runs under one deadline (`--timeout`); a call that cannot finish in
//! time ends with `ClientError::Timeout`, as Kafka's Admin ends with a `TimeoutException`.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::time::Duration;

use kafka_protocol::messages::{
    ApiKey, FindCoordinatorRequest, MetadataRequest, MetadataResponse, TopicName,
};
use kafka_protocol::protocol::{Request, StrBytes};

use super::config::ClientConfig;
use super::connection::Connection;
use super::error::{
    ClientError, ClientResult, KafkaError, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
    NONE,
};
use super::types::{Node, NodeId};
use super::versions::BrokerVersions;

/// Most groups one batched request carries; bigger sets are split.
const GROUPS_PER_REQUEST_MAX: usize = 1000;

/// What one group's answer means for the driver.
#[derive(Debug)]
pub(crate) enum GroupOutcome<T> {
    /// Final answer for the group.
    Done(T),
    /// Final failure for the group.
    Failed(ClientError),
    /// Ask the same coordinator again after a backoff.
    Retry,
    /// The coordinator moved; look it up again.
    Unmap,
}

/// A request addressed to groups' coordinators (DescribeGroups, OffsetFetch, DeleteGroups ...).
pub(crate) trait GroupRequest {
    /// The per-group answer.
    type Output;
    /// The wire request.
    type Req: Request;
    /// The API key, to pick a version.
    const API: ApiKey;
    /// Whether one request may carry several groups at `version`.
    fn batches(&self, version: i16) -> bool;
    /// The request for `groups` at `version`.
    fn build(&self, groups: &[String], version: i16) -> ClientResult<Self::Req>;
    /// Classifies the response for each of `groups`.
    fn handle(
        &self,
        coordinator: &Node,
        groups: &[String],
        version: i16,
        response: <Self::Req as Request>::Response,
    ) -> Vec<(String, GroupOutcome<Self::Output>)>;
}

/// A Kafka admin client.
#[derive(Debug)]
pub struct Admin {
    config: ClientConfig,
    /// Open connections by `host:port`.
    connections: HashMap<String, Connection>,
    /// Brokers from the last Metadata response.
    brokers: BTreeMap<NodeId, Node>,
    /// The controller id from the last Metadata response (CreateTopics/DeleteTopics go there).
    controller: Option<NodeId>,
    /// Coordinators found so far, by group id. Dropped when a broker says it is not.
    coordinators: HashMap<String, Node>,
    /// Deadline of each public operation.
    call_timeout: Duration,
}

impl Admin {
    /// A client that has not connected yet; it bootstraps on the first call.
    pub fn new(config: ClientConfig) -> Admin {
        let call_timeout = config.api_timeout;
        Admin {
            config,
            connections: HashMap::new(),
            brokers: BTreeMap::new(),
            controller: None,
            coordinators: HashMap::new(),
            call_timeout,
        }
    }

    /// Sets the deadline of every operation (the tools' `--timeout`).
    pub fn set_call_timeout(&mut self, timeout: Duration) {
        self.call_timeout = timeout;
    }

    /// The deadline of every operation.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// Brokers known from the last Metadata response.
    pub fn brokers(&self) -> &BTreeMap<NodeId, Node> {
        &self.brokers
    }

    /// Runs `fut` under this client's call deadline.
    pub(crate) async fn deadline<T>(
        timeout: Duration,
        call: &str,
        fut: impl Future<Output = ClientResult<T>>,
    ) -> ClientResult<T> {
        match tokio::time::timeout(timeout, fut).await {
            Ok(result) => result,
            Err(_) => Err(ClientError::Timeout {
                call: call.to_string(),
            }),
        }
    }

    /// Pause before the `attempt`-th retry: doubling from `retry.backoff.ms` to its maximum.
    pub(crate) async fn backoff(&self, attempt: u32) {
        let base = self.config.retry_backoff.as_millis() as u64;
        let max = self.config.retry_backoff_max.as_millis() as u64;
        let ms = base
            .saturating_mul(1u64 << attempt.min(16))
            .min(max.max(base));
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }

    /// A usable connection to `addr`, opened if needed.
    async fn connection(&mut self, addr: &str) -> ClientResult<&mut Connection> {
        let stale = self
            .connections
            .get(addr)
            .map(|c| !c.is_usable())
            .unwrap_or(false);
        if stale {
            self.connections.remove(addr);
        }
        if !self.connections.contains_key(addr) {
            let conn = Connection::open_with(
                addr,
                &self.config.client_id,
                self.config.request_timeout,
                &self.config.security,
            )
            .await?;
            self.connections.insert(addr.to_string(), conn);
        }
        self.connections
            .get_mut(addr)
            .ok_or_else(|| ClientError::Config(format!("no connection to {addr}")))
    }

    /// What the broker at `addr` advertised (connecting if needed).
    pub(crate) async fn broker_versions(&mut self, addr: &str) -> ClientResult<BrokerVersions> {
        let result = self.connection(addr).await.map(|c| c.versions().clone());
        result
    }

    /// Sends `request` to `addr` at `version`. A connection that failed is dropped, so the next
    /// attempt dials afresh.
    pub(crate) async fn send_at<R: Request>(
        &mut self,
        addr: &str,
        request: &R,
        version: i16,
    ) -> ClientResult<R::Response> {
        let result = match self.connection(addr).await {
            Ok(conn) => conn.send_at(request, version).await,
            Err(e) => Err(e),
        };
        if matches!(
            result,
            Err(ClientError::Io { .. }) | Err(ClientError::Protocol { .. })
        ) {
            self.connections.remove(addr);
        }
        result
    }

    /// Sends `request` to `addr` at the highest version both sides speak.
    pub(crate) async fn send<R: Request>(
        &mut self,
        addr: &str,
        request: &R,
    ) -> ClientResult<R::Response> {
        let key = ApiKey::try_from(R::KEY)
            .map_err(|_| ClientError::UnsupportedVersion(format!("api key {}", R::KEY)))?;
        let version = self.broker_versions(addr).await?.pick(key)?;
        self.send_at(addr, request, version).await
    }

    /// The address of some reachable broker: an open connection, else the known brokers, else the
    /// bootstrap list, in order.
    pub(crate) async fn any_broker(&mut self) -> ClientResult<String> {
        if let Some(addr) = self
            .connections
            .iter()
            .filter(|(_, c)| c.is_usable())
            .map(|(a, _)| a.clone())
            .min()
        {
            return Ok(addr);
        }
        let mut candidates: Vec<String> = self.brokers.values().map(Node::address).collect();
        candidates.extend(self.config.bootstrap_servers.iter().cloned());
        let mut last = None;
        for addr in candidates {
            match self.connection(&addr).await {
                Ok(_) => return Ok(addr),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| ClientError::Config("no bootstrap servers".to_string())))
    }

    /// Metadata for `topics` (`None` = every topic), retried until it arrives. Updates the broker
    /// list and controller.
    pub(crate) async fn metadata(
        &mut self,
        topics: Option<&[String]>,
    ) -> ClientResult<MetadataResponse> {
        let mut attempt = 0;
        loop {
            match self.try_metadata(topics).await {
                Ok(r) => return Ok(r),
                Err(e @ (ClientError::Io { .. } | ClientError::Protocol { .. })) => {
                    tracing::debug!(error = %e, "metadata request failed; retrying");
                }
                Err(e) => return Err(e),
            }
            self.backoff(attempt).await;
            attempt += 1;
        }
    }

    async fn try_metadata(&mut self, topics: Option<&[String]>) -> ClientResult<MetadataResponse> {
        let addr = self.any_broker().await?;
        let version = self.broker_versions(&addr).await?.pick(ApiKey::Metadata)?;
        let mut request = MetadataRequest::default().with_topics(topics.map(|names| {
            names
                .iter()
                .map(|n| {
                    kafka_protocol::messages::metadata_request::MetadataRequestTopic::default()
                        .with_name(Some(TopicName(StrBytes::from_string(n.clone()))))
                })
                .collect()
        }));
        if version >= 4 {
            request = request.with_allow_auto_topic_creation(false);
        }
        let response = self.send_at(&addr, &request, version).await?;
        if response.error_code != NONE {
            return Err(KafkaError::new(response.error_code).into());
        }
        self.brokers = response
            .brokers
            .iter()
            .map(|b| {
                let node = Node {
                    id: NodeId(b.node_id.0),
                    host: b.host.to_string(),
                    port: b.port,
                    rack: b.rack.as_ref().map(|r| r.to_string()),
                };
                (node.id, node)
            })
            .collect();
        self.controller = Some(NodeId(response.controller_id.0)).filter(|id| id.0 >= 0);
        Ok(response)
    }

    /// The controller's address if Metadata named one we know, else any broker.
    pub(crate) async fn controller_or_any(&mut self) -> ClientResult<String> {
        if self.brokers.is_empty() {
            self.metadata(Some(&[])).await?;
        }
        match self.controller.and_then(|id| self.brokers.get(&id)) {
            Some(node) => Ok(node.address()),
            None => self.any_broker().await,
        }
    }

    /// The coordinator of each group: cached ones, then FindCoordinator for the rest. Groups
    /// whose lookup hit a retriable error are left out (the caller tries again later).
    async fn coordinators_for(
        &mut self,
        groups: &[String],
    ) -> ClientResult<Vec<(String, Result<Node, ClientError>)>> {
        let mut out = Vec::new();
        let mut missing = Vec::new();
        for g in groups {
            match self.coordinators.get(g) {
                Some(node) => out.push((g.clone(), Ok(node.clone()))),
                None => missing.push(g.clone()),
            }
        }
        if missing.is_empty() {
            return Ok(out);
        }
        let addr = self.any_broker().await?;
        let version = self
            .broker_versions(&addr)
            .await?
            .pick(ApiKey::FindCoordinator)?;
        let mut found = Vec::new();
        if version >= 4 {
            for chunk in missing.chunks(GROUPS_PER_REQUEST_MAX) {
                let request = FindCoordinatorRequest::default()
                    .with_key_type(0)
                    .with_coordinator_keys(
                        chunk
                            .iter()
                            .map(|g| StrBytes::from_string(g.clone()))
                            .collect(),
                    );
                let response = self.send_at(&addr, &request, version).await?;
                for c in response.coordinators {
                    found.push((
                        c.key.to_string(),
                        c.error_code,
                        c.error_message.map(|m| m.to_string()),
                        Node {
                            id: NodeId(c.node_id.0),
                            host: c.host.to_string(),
                            port: c.port,
                            rack: None,
                        },
                    ));
                }
            }
        } else {
            for g in &missing {
                let mut request =
                    FindCoordinatorRequest::default().with_key(StrBytes::from_string(g.clone()));
                if version >= 1 {
                    request = request.with_key_type(0);
                }
                let response = self.send_at(&addr, &request, version).await?;
                found.push((
                    g.clone(),
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                    Node {
                        id: NodeId(response.node_id.0),
                        host: response.host.to_string(),
                        port: response.port,
                        rack: None,
                    },
                ));
            }
        }
        for (group, code, message, node) in found {
            if !missing.contains(&group) {
                continue; // an answer for a key we did not ask about
            }
            match code {
                NONE => {
                    self.coordinators.insert(group.clone(), node.clone());
                    out.push((group, Ok(node)));
                }
                COORDINATOR_NOT_AVAILABLE | COORDINATOR_LOAD_IN_PROGRESS => {
                    tracing::debug!(group, code, "coordinator lookup will be retried");
                }
                _ => out.push((group, Err(KafkaError::with_message(code, message).into()))),
            }
        }
        Ok(out)
    }

    /// Sends `call` to the coordinator of every group in `groups` until each has a final answer
    /// (the caller's deadline bounds the retries).
    pub(crate) async fn drive_groups<C: GroupRequest>(
        &mut self,
        call: &C,
        groups: &[String],
    ) -> BTreeMap<String, ClientResult<C::Output>> {
        let mut results: BTreeMap<String, ClientResult<C::Output>> = BTreeMap::new();
        let mut pending: Vec<String> = Vec::new();
        for g in groups {
            if !pending.contains(g) {
                pending.push(g.clone());
            }
        }
        let mut attempt = 0u32;
        while !pending.is_empty() {
            let mut by_node: BTreeMap<NodeId, (Node, Vec<String>)> = BTreeMap::new();
            match self.coordinators_for(&pending).await {
                Ok(found) => {
                    for (group, node) in found {
                        match node {
                            Ok(node) => {
                                by_node
                                    .entry(node.id)
                                    .or_insert_with(|| (node.clone(), Vec::new()))
                                    .1
                                    .push(group);
                            }
                            Err(e) => {
                                pending.retain(|g| g != &group);
                                results.insert(group, Err(e));
                            }
                        }
                    }
                }
                Err(e @ ClientError::UnsupportedVersion(_)) => {
                    let message = e.to_string();
                    for g in pending.drain(..) {
                        results.insert(g, Err(ClientError::UnsupportedVersion(message.clone())));
                    }
                    break;
                }
                Err(e) => tracing::debug!(error = %e, "coordinator lookup failed; retrying"),
            }
            for (_, (node, node_groups)) in by_node {
                let outcomes = self.send_group_request(call, &node, &node_groups).await;
                for (group, outcome) in outcomes {
                    match outcome {
                        GroupOutcome::Done(v) => {
                            pending.retain(|g| g != &group);
                            results.insert(group, Ok(v));
                        }
                        GroupOutcome::Failed(e) => {
                            pending.retain(|g| g != &group);
                            results.insert(group, Err(e));
                        }
                        GroupOutcome::Retry => {}
                        GroupOutcome::Unmap => {
                            self.coordinators.remove(&group);
                        }
                    }
                }
            }
            if !pending.is_empty() {
                self.backoff(attempt).await;
                attempt += 1;
            }
        }
        results
    }

    async fn send_group_request<C: GroupRequest>(
        &mut self,
        call: &C,
        node: &Node,
        groups: &[String],
    ) -> Vec<(String, GroupOutcome<C::Output>)> {
        let addr = node.address();
        let version = match self.broker_versions(&addr).await {
            Ok(v) => match v.pick(C::API) {
                Ok(version) => version,
                Err(e) => {
                    let message = e.to_string();
                    return groups
                        .iter()
                        .map(|g| {
                            (
                                g.clone(),
                                GroupOutcome::Failed(ClientError::UnsupportedVersion(
                                    message.clone(),
                                )),
                            )
                        })
                        .collect();
                }
            },
            Err(e) => {
                tracing::debug!(error = %e, %addr, "coordinator unreachable; looking it up again");
                return groups
                    .iter()
                    .map(|g| (g.clone(), GroupOutcome::Unmap))
                    .collect();
            }
        };
        let batches: Vec<Vec<String>> = if call.batches(version) {
            groups
                .chunks(GROUPS_PER_REQUEST_MAX)
                .map(|c| c.to_vec())
                .collect()
        } else {
            groups.iter().map(|g| vec![g.clone()]).collect()
        };
        let mut out = Vec::new();
        for batch in batches {
            let request = match call.build(&batch, version) {
                Ok(r) => r,
                Err(e) => {
                    let message = e.to_string();
                    out.extend(batch.iter().map(|g| {
                        (
                            g.clone(),
                            GroupOutcome::Failed(ClientError::UnsupportedVersion(message.clone())),
                        )
                    }));
                    continue;
                }
            };
            match self.send_at(&addr, &request, version).await {
                Ok(response) => out.extend(call.handle(node, &batch, version, response)),
                Err(e) => {
                    tracing::debug!(error = %e, %addr, "request to coordinator failed");
                    out.extend(batch.iter().map(|g| (g.clone(), GroupOutcome::Unmap)));
                }
            }
        }
        out
    }
}

/// Classification shared by the group APIs: load-in-progress retries, a moved coordinator is
/// looked up again, anything else is final.
pub(crate) fn classify_group_error<T>(code: i16, message: Option<String>) -> GroupOutcome<T> {
    use super::error::NOT_COORDINATOR;
    match code {
        COORDINATOR_LOAD_IN_PROGRESS => GroupOutcome::Retry,
        COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR => GroupOutcome::Unmap,
        _ => GroupOutcome::Failed(KafkaError::with_message(code, message).into()),
    }
}
