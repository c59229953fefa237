//! The broker's shared state: what every handler can reach.

use std::sync::Arc;

use tokio::sync::watch;

use crate::cluster::ClusterView;
use crate::config::BrokerConfig;
use crate::data::partition::LEADER_EPOCH;
use crate::data::DataPlane;
use crate::errors::BrokerError;
use crate::topics::{
    plan_topic, CatalogError, NewTopic, ProducerIdAllocator, TopicCatalog, TopicSpec,
};

/// Shared by every connection (in an `Arc`).
pub struct Broker {
    /// This broker's configuration.
    pub config: BrokerConfig,
    /// Who is in the cluster.
    pub cluster: Arc<dyn ClusterView>,
    /// Topics.
    pub catalog: Arc<dyn TopicCatalog>,
    /// Producer ids for InitProducerId.
    pub producer_ids: Arc<dyn ProducerIdAllocator>,
    /// Partition logs.
    pub data: Arc<DataPlane>,
    /// Flips to true when the broker begins shutting down: long polls answer at once.
    pub shutdown: watch::Receiver<bool>,
    /// The group coordinator on this node (`None` in handler unit tests that build a broker
    /// without Raft: group APIs then answer COORDINATOR_NOT_AVAILABLE).
    pub groups: Option<Arc<crate::group_coordinator::GroupCoordinator>>,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Broker {
    /// Whether shutdown has begun.
    pub fn is_shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }
}

impl Broker {
    /// Ids of the nodes new partitions are placed on.
    pub fn node_ids(&self) -> Vec<i32> {
        self.cluster.placement_node_ids()
    }

    /// Validates `new` and, unless `validate_only`, adds it to the catalog.
    pub async fn create_topic(
        &self,
        new: &NewTopic,
        validate_only: bool,
    ) -> Result<Arc<TopicSpec>, BrokerError> {
        let spec = plan_topic(new, self.config.default_num_partitions, &self.node_ids())?;
        if self.catalog.topic(&spec.name).is_some() {
            return Err(CatalogError::TopicExists(spec.name).into());
        }
        if validate_only {
            return Ok(Arc::new(spec));
        }
        Ok(self.catalog.create(spec).await?)
    }

    /// Removes a topic from the catalog, then its data.
    pub async fn delete_topic(&self, name: &str) -> Result<Arc<TopicSpec>, BrokerError> {
        let spec = self.catalog.delete(name).await?;
        if let Err(e) = self.data.remove_topic(&spec).await {
            // The catalog no longer has it; the next start removes the leftovers.
            tracing::error!(topic = name, error = %e, "removing a deleted topic's data failed");
        }
        Ok(spec)
    }

    /// Kafka's check of a client's known leader epoch (-1: none known) against ours.
    pub fn check_leader_epoch(&self, client: i32) -> Result<(), BrokerError> {
        match client {
            c if c < 0 || c == LEADER_EPOCH => Ok(()),
            c if c > LEADER_EPOCH => Err(BrokerError::UnknownLeaderEpoch {
                client: c,
                current: LEADER_EPOCH,
            }),
            c => Err(BrokerError::FencedLeaderEpoch {
                client: c,
                current: LEADER_EPOCH,
            }),
        }
    }
}
