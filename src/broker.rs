//! The broker's shared state: what every handler can reach.

use std::sync::Arc;

use tokio::sync::watch;

use crate::cluster::ClusterView;
use crate::config::BrokerConfig;
use crate::data::DataPlane;
use crate::errors::BrokerError;
use crate::topics::{
    plan_topic, CatalogError, ConfigError, CreateTopicError, NewTopic, PartitionAssignment,
    ProducerIdAllocator, TopicCatalog, TopicConfigs, TopicSpec, MAX_PARTITIONS_PER_TOPIC,
};

/// Times a compare-and-set topic change is computed again after another change won the race.
const TOPIC_CHANGE_ATTEMPTS: usize = 5;

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
    /// Who may do what (`--authorizer`), over the replicated ACLs.
    pub authorizer: Arc<crate::security::authorizer::Authorizer>,
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

    /// Changes a topic's configs to what `change` computes from the current ones (validated
    /// as a whole); with `validate_only`, computes and checks only. Retried if another change
    /// of the topic commits between the read and the write.
    pub async fn alter_topic_configs(
        &self,
        name: &str,
        change: impl Fn(&TopicConfigs) -> Result<TopicConfigs, ConfigError>,
        validate_only: bool,
    ) -> Result<Arc<TopicSpec>, BrokerError> {
        let mut attempt = 0;
        loop {
            let current = self
                .catalog
                .topic(name)
                .ok_or_else(|| CatalogError::UnknownTopic(name.to_owned()))?;
            let configs = change(&current.configs)?;
            if validate_only {
                let mut spec = (*current).clone();
                spec.configs = configs;
                return Ok(Arc::new(spec));
            }
            match self.catalog.alter_configs(&current, configs).await {
                Err(CatalogError::Conflict(_)) if attempt + 1 < TOPIC_CHANGE_ATTEMPTS => {
                    attempt += 1;
                }
                other => return Ok(other?),
            }
        }
    }

    /// Grows topic `name` to `count` partitions (CreatePartitions), placed round-robin over
    /// the nodes as topic creation places them, or as `assignments` (one per new partition)
    /// say; with `validate_only`, checks only.
    pub async fn create_partitions(
        &self,
        name: &str,
        count: i32,
        assignments: Option<&[Vec<i32>]>,
        validate_only: bool,
    ) -> Result<Arc<TopicSpec>, BrokerError> {
        let mut attempt = 0;
        loop {
            let current = self
                .catalog
                .topic(name)
                .ok_or_else(|| CatalogError::UnknownTopic(name.to_owned()))?;
            let added = plan_new_partitions(&current, count, assignments, &self.node_ids())?;
            if validate_only {
                let mut spec = (*current).clone();
                spec.partitions.extend(added);
                return Ok(Arc::new(spec));
            }
            match self.catalog.add_partitions(&current, added).await {
                Err(CatalogError::Conflict(_)) if attempt + 1 < TOPIC_CHANGE_ATTEMPTS => {
                    attempt += 1;
                }
                other => return Ok(other?),
            }
        }
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

    /// Kafka's check of a client's known leader epoch against the partition's `current`
    /// (`Partition.checkCurrentLeaderEpoch`): -1 means the client knows none and is not
    /// checked; an older one is fenced, a newer one not known yet.
    pub fn check_leader_epoch(&self, client: i32, current: i32) -> Result<(), BrokerError> {
        match client {
            -1 => Ok(()),
            c if c == current => Ok(()),
            c if c > current => Err(BrokerError::UnknownLeaderEpoch { client: c, current }),
            c => Err(BrokerError::FencedLeaderEpoch { client: c, current }),
        }
    }
}

/// Kafka's checks of a CreatePartitions entry, and the placement of the new partitions.
fn plan_new_partitions(
    current: &TopicSpec,
    count: i32,
    assignments: Option<&[Vec<i32>]>,
    nodes: &[i32],
) -> Result<Vec<PartitionAssignment>, CreateTopicError> {
    let have = current.partition_count();
    if count < have {
        return Err(CreateTopicError::InvalidPartitions(format!(
            "The topic {} currently has {have} partition(s); {count} would not be an increase.",
            current.name
        )));
    }
    if count == have {
        return Err(CreateTopicError::InvalidPartitions(format!(
            "Topic already has {have} partition(s)."
        )));
    }
    if count > MAX_PARTITIONS_PER_TOPIC {
        return Err(CreateTopicError::InvalidPartitions(format!(
            "Number of partitions {count} is more than the maximum of \
             {MAX_PARTITIONS_PER_TOPIC} per topic."
        )));
    }
    let adding = usize::try_from(count - have).unwrap_or(0);
    let mut nodes = nodes.to_vec();
    nodes.sort_unstable();
    nodes.dedup();
    let replication = current.partitions.first().map_or(1, |p| p.replicas.len());
    match assignments {
        None => {
            if nodes.is_empty() {
                return Err(CreateTopicError::InvalidReplicationFactor(
                    "Replication factor: 1 larger than available brokers: 0.".into(),
                ));
            }
            Ok((have..count)
                .map(|p| PartitionAssignment {
                    replicas: vec![nodes[usize::try_from(p).unwrap_or(0) % nodes.len()]],
                })
                .collect())
        }
        Some(given) => {
            if given.len() != adding {
                return Err(CreateTopicError::InvalidReplicaAssignment(format!(
                    "Attempted to add {adding} additional partition(s), but only {} \
                     assignment(s) were supplied.",
                    given.len()
                )));
            }
            let mut out = Vec::with_capacity(adding);
            for (i, replicas) in given.iter().enumerate() {
                let partition = i64::from(have) + i as i64;
                if replicas.is_empty() {
                    return Err(CreateTopicError::InvalidReplicaAssignment(format!(
                        "Replica assignment for partition {partition} is empty."
                    )));
                }
                if let Some(missing) = replicas.iter().find(|r| !nodes.contains(r)) {
                    return Err(CreateTopicError::InvalidReplicaAssignment(format!(
                        "The manual partition assignment includes broker {missing}, but no \
                         such broker is registered."
                    )));
                }
                let mut distinct = replicas.clone();
                distinct.sort_unstable();
                distinct.dedup();
                if distinct.len() != replicas.len() {
                    return Err(CreateTopicError::InvalidReplicaAssignment(format!(
                        "The manual partition assignment includes the broker {} more than \
                         once.",
                        replicas
                            .iter()
                            .find(|r| replicas.iter().filter(|x| x == r).count() > 1)
                            .copied()
                            .unwrap_or(-1)
                    )));
                }
                if replicas.len() != replication {
                    return Err(CreateTopicError::InvalidReplicaAssignment(format!(
                        "The manual partition assignment includes a partition with {} \
                         replica(s), but this is not consistent with previous partitions, \
                         which have {replication} replica(s).",
                        replicas.len()
                    )));
                }
                out.push(PartitionAssignment {
                    replicas: replicas.clone(),
                });
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn topic(partitions: usize) -> TopicSpec {
        TopicSpec {
            name: "t".into(),
            id: Uuid::from_u128(1),
            partitions: vec![PartitionAssignment { replicas: vec![1] }; partitions],
            configs: TopicConfigs::default(),
        }
    }

    #[test]
    fn new_partitions_continue_the_round_robin_and_never_shrink() {
        let added = plan_new_partitions(&topic(2), 5, None, &[3, 1, 2]).unwrap();
        let leaders: Vec<i32> = added.iter().map(PartitionAssignment::leader).collect();
        assert_eq!(leaders, vec![3, 1, 2]);
        for count in [1, 2] {
            assert!(matches!(
                plan_new_partitions(&topic(2), count, None, &[1]),
                Err(CreateTopicError::InvalidPartitions(_))
            ));
        }
        assert!(matches!(
            plan_new_partitions(&topic(2), 10_001, None, &[1]),
            Err(CreateTopicError::InvalidPartitions(_))
        ));
    }

    #[test]
    fn explicit_assignments_are_checked_like_kafka() {
        let ok = plan_new_partitions(&topic(1), 3, Some(&[vec![2], vec![1]]), &[1, 2]).unwrap();
        assert_eq!(ok[0].replicas, vec![2]);
        for bad in [
            vec![vec![2]],
            vec![vec![2], vec![7]],
            vec![vec![2], vec![]],
            vec![vec![1, 2], vec![1]],
            vec![vec![1, 1], vec![1]],
        ] {
            assert!(
                matches!(
                    plan_new_partitions(&topic(1), 3, Some(&bad), &[1, 2]),
                    Err(CreateTopicError::InvalidReplicaAssignment(_))
                ),
                "{bad:?}"
            );
        }
    }
}
