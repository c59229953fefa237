//! The front end's topic catalog and cluster view, backed by the replicated state.
//!
//! Reads come from this node's applied state (every node holds all topics); changes are Raft
//! commands. Any node takes them: a follower forwards the command to the leader over the peer
//! port and answers once it has applied the entry itself, as a KRaft broker forwards to its
//! controller. So CreateTopics, DeleteTopics, auto-creation through Metadata and InitProducerId
//! work whichever broker a client picked, and the client then finds the topic on that broker.
//! NOT_CONTROLLER is left for when no leader can be reached (clients refresh and retry).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kafka_protocol::messages::BrokerId;
use raft_meta::cohort_app::{
    AppReply, Body, CohortApp, Envelope, PartitionsAdded, TopicChangeError, TopicConfigChange,
    TopicMeta,
};
use raft_meta::{MetaNode, WriteError};
use uuid::Uuid;

use crate::cluster::{BrokerEndpoint, ClusterView};
use crate::topics::catalog::BoxFuture;
use crate::topics::{
    CatalogError, PartitionAssignment, ProducerIdAllocator, TopicCatalog, TopicConfigs, TopicSpec,
};

/// Producer ids reserved through Raft at a time; handed out locally until used up.
const PRODUCER_ID_BLOCK: u32 = 1000;

type TopicMap = Arc<BTreeMap<String, Arc<TopicSpec>>>;

/// Topics kept in the Raft meta service.
pub struct RaftCatalog {
    node: Arc<MetaNode<CohortApp>>,
    /// The applied table converted to specs, tagged with the table version it reflects.
    cache: Mutex<(u64, TopicMap)>,
    /// `[next, end)` of the producer-id block this node holds.
    producer_ids: tokio::sync::Mutex<(i64, i64)>,
}

impl RaftCatalog {
    pub fn new(node: Arc<MetaNode<CohortApp>>) -> Self {
        Self {
            node,
            cache: Mutex::new((u64::MAX, Arc::new(BTreeMap::new()))),
            producer_ids: tokio::sync::Mutex::new((0, 0)),
        }
    }

    fn current(&self) -> TopicMap {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let version = self.node.read_local(|a| a.app.topics().version());
        if cache.0 != version {
            let (version, topics) = self.node.read_local(|a| {
                let topics = a.app.topics();
                let map: BTreeMap<String, Arc<TopicSpec>> = topics
                    .iter()
                    .map(|t| (t.name.clone(), Arc::new(spec_of(t))))
                    .collect();
                (topics.version(), map)
            });
            *cache = (version, Arc::new(topics));
        }
        cache.1.clone()
    }

    async fn submit(&self, body: Body) -> Result<AppReply, CatalogError> {
        let bytes = Envelope { origin: None, body }.encode();
        let reply = self
            .node
            .write_via_leader(bytes)
            .await
            .map_err(catalog_write_error)?;
        AppReply::decode(&reply).map_err(|e| CatalogError::Storage(e.to_string()))
    }
}

pub(crate) fn spec_of(meta: &TopicMeta) -> TopicSpec {
    let configs = TopicConfigs::from_pairs(
        meta.configs
            .iter()
            .map(|(k, v)| (k.as_str(), Some(v.as_str()))),
    )
    .unwrap_or_else(|e| {
        // Validated before it was replicated; a config a newer version accepted and this one
        // does not know is shown as default rather than hiding the topic.
        tracing::warn!(topic = %meta.name, error = %e, "replicated topic config not understood");
        TopicConfigs::default()
    });
    TopicSpec {
        name: meta.name.clone(),
        id: Uuid::from_u128(meta.id),
        partitions: meta
            .partitions
            .iter()
            .map(|r| PartitionAssignment {
                replicas: r.clone(),
            })
            .collect(),
        configs,
    }
}

fn meta_of(spec: &TopicSpec) -> TopicMeta {
    TopicMeta {
        name: spec.name.clone(),
        id: spec.id.as_u128(),
        partitions: spec.partitions.iter().map(|p| p.replicas.clone()).collect(),
        configs: spec.configs.set_values().clone(),
    }
}

/// Nothing written (no leader reachable) is NOT_CONTROLLER, which clients retry after a
/// Metadata refresh; an unknown outcome is a timeout, as a Kafka controller reports it.
pub(super) fn catalog_write_error(e: WriteError) -> CatalogError {
    match e {
        WriteError::NotLeader { .. } | WriteError::Unavailable(_) | WriteError::ShuttingDown => {
            CatalogError::NotController
        }
        WriteError::Busy | WriteError::Indeterminate(_) => CatalogError::Timeout(e.to_string()),
        // A full disk under the leader's Raft log (decision 0112): KAFKA_STORAGE_ERROR, which
        // Kafka clients retry.
        WriteError::CommandTooLarge { .. } | WriteError::Refused(_) | WriteError::DiskFull(_) => {
            CatalogError::Storage(e.to_string())
        }
    }
}

fn catalog_error(e: TopicChangeError) -> CatalogError {
    match e {
        TopicChangeError::Exists(n) => CatalogError::TopicExists(n),
        TopicChangeError::Unknown(n) => CatalogError::UnknownTopic(n),
        TopicChangeError::LimitReached(m) => CatalogError::LimitReached(m),
        TopicChangeError::Invalid(m) => CatalogError::Storage(m),
        TopicChangeError::Conflict(m) => CatalogError::Conflict(m),
    }
}

fn altered(reply: AppReply) -> Result<Arc<TopicSpec>, CatalogError> {
    match reply {
        AppReply::TopicAltered(r) => r.map(|t| Arc::new(spec_of(&t))).map_err(catalog_error),
        other => Err(CatalogError::Storage(format!("unexpected reply {other:?}"))),
    }
}

fn first_result(reply: AppReply) -> Result<Result<TopicMeta, TopicChangeError>, CatalogError> {
    match reply {
        AppReply::CreateTopics(r) | AppReply::DeleteTopics(r) => r
            .into_iter()
            .next()
            .ok_or_else(|| CatalogError::Storage("empty reply".into())),
        other => Err(CatalogError::Storage(format!("unexpected reply {other:?}"))),
    }
}

impl TopicCatalog for RaftCatalog {
    fn cluster_id(&self) -> String {
        self.node
            .read_local(|a| a.app.cluster().cluster_id.clone())
            .unwrap_or_default()
    }

    fn topics(&self) -> Vec<Arc<TopicSpec>> {
        self.current().values().cloned().collect()
    }

    fn topic(&self, name: &str) -> Option<Arc<TopicSpec>> {
        self.current().get(name).cloned()
    }

    fn topic_by_id(&self, id: Uuid) -> Option<Arc<TopicSpec>> {
        self.current().values().find(|t| t.id == id).cloned()
    }

    fn create(&self, spec: TopicSpec) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>> {
        Box::pin(async move {
            let body = Body::CreateTopics {
                topics: vec![meta_of(&spec)],
            };
            let created = first_result(self.submit(body).await?)?.map_err(catalog_error)?;
            Ok(Arc::new(spec_of(&created)))
        })
    }

    fn delete(&self, name: &str) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>> {
        let name = name.to_owned();
        Box::pin(async move {
            let body = Body::DeleteTopics {
                names: vec![name],
                now_ms: crate::clock::now(),
            };
            let deleted = first_result(self.submit(body).await?)?.map_err(catalog_error)?;
            Ok(Arc::new(spec_of(&deleted)))
        })
    }

    fn alter_configs(
        &self,
        current: &TopicSpec,
        configs: TopicConfigs,
    ) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>> {
        let body = Body::AlterTopicConfigs(TopicConfigChange {
            name: current.name.clone(),
            id: current.id.as_u128(),
            expected: current.configs.set_values().clone(),
            configs: configs.set_values().clone(),
        });
        Box::pin(async move { altered(self.submit(body).await?) })
    }

    fn add_partitions(
        &self,
        current: &TopicSpec,
        added: Vec<PartitionAssignment>,
    ) -> BoxFuture<'_, Result<Arc<TopicSpec>, CatalogError>> {
        let body = Body::CreatePartitions(PartitionsAdded {
            name: current.name.clone(),
            id: current.id.as_u128(),
            expected_count: u32::try_from(current.partitions.len()).unwrap_or(u32::MAX),
            added: added.into_iter().map(|p| p.replicas).collect(),
        });
        Box::pin(async move { altered(self.submit(body).await?) })
    }
}

impl ProducerIdAllocator for RaftCatalog {
    fn next_producer_id(&self) -> BoxFuture<'_, Result<i64, CatalogError>> {
        Box::pin(async move {
            let mut block = self.producer_ids.lock().await;
            if block.0 >= block.1 {
                let reply = self
                    .submit(Body::AllocateProducerIds {
                        count: PRODUCER_ID_BLOCK,
                    })
                    .await?;
                match reply {
                    AppReply::ProducerIds { first } => {
                        *block = (first, first + i64::from(PRODUCER_ID_BLOCK));
                    }
                    other => {
                        return Err(CatalogError::Storage(format!(
                            "producer ids not reserved: {other:?}"
                        )))
                    }
                }
            }
            let id = block.0;
            block.0 += 1;
            Ok(id)
        })
    }
}

/// Brokers = the Raft membership (each node's advertised Kafka listeners, decision 0184);
/// controller = the Raft leader.
pub struct RaftCluster {
    node: Arc<MetaNode<CohortApp>>,
    /// This node as it advertises itself now (the membership keeps the address it had when it
    /// joined; a restarted single node may listen elsewhere).
    local: BrokerEndpoint,
}

impl RaftCluster {
    pub fn new(node: Arc<MetaNode<CohortApp>>, local: BrokerEndpoint) -> Self {
        Self { node, local }
    }

    /// The Kafka endpoint of node `id`, if it is a member.
    pub fn endpoint(&self, id: u64) -> Option<BrokerEndpoint> {
        self.brokers()
            .into_iter()
            .find(|b| u64::try_from(b.node_id.0).ok() == Some(id))
    }
}

/// Partitions go on voters only: a learner may still be catching up, may never be promoted
/// (a failed `add_voter`), and is no part of the quorum the cluster tooling reasons about.
fn voter_broker_ids(voters: impl IntoIterator<Item = u64>) -> Vec<i32> {
    let mut ids: Vec<i32> = voters
        .into_iter()
        .filter_map(|id| i32::try_from(id).ok())
        .collect();
    ids.sort_unstable();
    ids
}

fn endpoint_of(id: u64, kafka_addr: &str) -> Option<BrokerEndpoint> {
    let (host, port) = kafka_addr.rsplit_once(':')?;
    Some(BrokerEndpoint {
        node_id: BrokerId(i32::try_from(id).ok()?),
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port: i32::from(port.parse::<u16>().ok()?),
        rack: None,
    })
}

impl RaftCluster {
    /// This node and every other member that `addr` gives an address, in id order.
    fn members_at(
        &self,
        addr: impl Fn(&raft_meta::NodeInfo) -> Option<String>,
    ) -> Vec<BrokerEndpoint> {
        let members: Vec<(u64, Option<String>)> = self.node.read_local(|a| {
            a.membership
                .membership()
                .nodes()
                .map(|(id, info)| (*id, addr(info)))
                .collect()
        });
        let mut out: Vec<BrokerEndpoint> = members
            .iter()
            .filter(|(id, _)| i64::try_from(*id).ok() != Some(i64::from(self.local.node_id.0)))
            .filter_map(|(id, addr)| endpoint_of(*id, addr.as_deref()?))
            .collect();
        out.push(self.local.clone());
        out.sort_by_key(|b| b.node_id.0);
        out
    }
}

impl ClusterView for RaftCluster {
    fn local_node_id(&self) -> BrokerId {
        self.local.node_id
    }

    fn placement_node_ids(&self) -> Vec<i32> {
        voter_broker_ids(
            self.node
                .read_local(|a| a.membership.membership().voter_ids().collect::<Vec<u64>>()),
        )
    }

    fn brokers(&self) -> Vec<BrokerEndpoint> {
        self.members_at(|info| Some(info.kafka_addr.clone()))
    }

    fn brokers_on(&self, listener: &str) -> Vec<BrokerEndpoint> {
        self.members_at(|info| info.listener_addr(listener).map(str::to_owned))
    }

    fn controller_id(&self) -> BrokerId {
        self.node
            .leader()
            .and_then(|l| i32::try_from(l.node_id).ok())
            .map_or(BrokerId(-1), BrokerId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_targets_are_the_voters_in_id_order() {
        // Node 4 is a learner: it is in the membership's nodes but not among its voters.
        assert_eq!(voter_broker_ids([3, 1, 2]), vec![1, 2, 3]);
        // An id no Kafka broker id can carry is never a target.
        assert_eq!(voter_broker_ids([2, u64::MAX]), vec![2]);
    }
}
