//! Turning a CreateTopics entry (or an auto-create) into a complete [`TopicSpec`]: Kafka's
//! validation rules, the defaults, and the placement of partitions on nodes.

use std::collections::BTreeSet;

use uuid::Uuid;

use super::configs::{ConfigError, TopicConfigs};
use super::names::{validate_topic_name, InvalidTopicName};
use super::spec::{PartitionAssignment, TopicSpec};
use super::MAX_PARTITIONS_PER_TOPIC;

/// Replicas a partition has until data replication exists (DESIGN.md §4).
pub const SUPPORTED_REPLICATION_FACTOR: i16 = 1;

/// A topic as a client asked for it.
#[derive(Debug, Clone, Default)]
pub struct NewTopic {
    /// Name.
    pub name: String,
    /// Partitions, or -1 for the broker default.
    pub num_partitions: i32,
    /// Replication factor, or -1 for the broker default.
    pub replication_factor: i16,
    /// Explicit placement: `(partition, replicas)`. Excludes the two numbers above.
    pub assignments: Vec<(i32, Vec<i32>)>,
    /// Configs as sent (a null value is refused).
    pub configs: Vec<(String, Option<String>)>,
}

/// Why a topic cannot be created as asked; messages follow Kafka's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateTopicError {
    /// Bad name.
    #[error(transparent)]
    InvalidName(#[from] InvalidTopicName),
    /// Bad partition count.
    #[error("{0}")]
    InvalidPartitions(String),
    /// Bad replication factor.
    #[error("{0}")]
    InvalidReplicationFactor(String),
    /// Bad explicit placement.
    #[error("{0}")]
    InvalidReplicaAssignment(String),
    /// Contradictory fields.
    #[error("{0}")]
    InvalidRequest(String),
    /// Bad configs.
    #[error(transparent)]
    InvalidConfig(#[from] ConfigError),
}

/// Validates `new` and completes it into a spec. `nodes` are the live brokers' ids.
pub fn plan_topic(
    new: &NewTopic,
    default_num_partitions: i32,
    nodes: &[i32],
) -> Result<TopicSpec, CreateTopicError> {
    validate_topic_name(&new.name)?;
    let configs =
        TopicConfigs::from_pairs(new.configs.iter().map(|(k, v)| (k.as_str(), v.as_deref())))?;
    let mut nodes: Vec<i32> = nodes.to_vec();
    nodes.sort_unstable();
    nodes.dedup();
    let partitions = if new.assignments.is_empty() {
        let count = match new.num_partitions {
            -1 => default_num_partitions,
            n if n <= 0 => {
                return Err(CreateTopicError::InvalidPartitions(
                    "Number of partitions was set to an invalid non-positive value.".into(),
                ))
            }
            n => n,
        };
        if count > MAX_PARTITIONS_PER_TOPIC {
            return Err(CreateTopicError::InvalidPartitions(format!(
                "Number of partitions {count} is more than the maximum of \
                 {MAX_PARTITIONS_PER_TOPIC} per topic."
            )));
        }
        let rf = match new.replication_factor {
            -1 => SUPPORTED_REPLICATION_FACTOR,
            n if n <= 0 => {
                return Err(CreateTopicError::InvalidReplicationFactor(
                    "Replication factor must be larger than 0, or -1 to use the default value."
                        .into(),
                ))
            }
            n => n,
        };
        check_replication_factor(i32::from(rf), nodes.len())?;
        if nodes.is_empty() {
            return Err(CreateTopicError::InvalidReplicationFactor(
                "Replication factor: 1 larger than available brokers: 0.".into(),
            ));
        }
        // Round-robin leaders over the nodes, as Kafka's default placement starts.
        (0..count)
            .map(|p| PartitionAssignment {
                replicas: vec![nodes[p as usize % nodes.len()]],
            })
            .collect()
    } else {
        if new.num_partitions != -1 || new.replication_factor != -1 {
            return Err(CreateTopicError::InvalidRequest(
                "Both numPartitions or replicationFactor and replicasAssignments were set. \
                 Both cannot be used at the same time."
                    .into(),
            ));
        }
        plan_assignments(&new.assignments, &nodes)?
    };
    Ok(TopicSpec {
        name: new.name.clone(),
        id: Uuid::new_v4(),
        partitions,
        configs,
    })
}

fn check_replication_factor(rf: i32, nodes: usize) -> Result<(), CreateTopicError> {
    if rf as usize > nodes {
        return Err(CreateTopicError::InvalidReplicationFactor(format!(
            "Replication factor: {rf} larger than available brokers: {nodes}."
        )));
    }
    if rf > i32::from(SUPPORTED_REPLICATION_FACTOR) {
        return Err(CreateTopicError::InvalidReplicationFactor(format!(
            "Replication factor {rf} is not supported: Cohort keeps one replica per partition."
        )));
    }
    Ok(())
}

fn plan_assignments(
    assignments: &[(i32, Vec<i32>)],
    nodes: &[i32],
) -> Result<Vec<PartitionAssignment>, CreateTopicError> {
    if assignments.len() > MAX_PARTITIONS_PER_TOPIC as usize {
        return Err(CreateTopicError::InvalidPartitions(format!(
            "Number of partitions {} is more than the maximum of {MAX_PARTITIONS_PER_TOPIC} \
             per topic.",
            assignments.len()
        )));
    }
    let mut sorted: Vec<&(i32, Vec<i32>)> = assignments.iter().collect();
    sorted.sort_by_key(|(p, _)| *p);
    let mut out = Vec::with_capacity(sorted.len());
    for (expected, (partition, replicas)) in sorted.into_iter().enumerate() {
        if *partition != expected as i32 {
            return Err(CreateTopicError::InvalidReplicaAssignment(
                "Partitions should be a consecutive 0-based integer sequence".into(),
            ));
        }
        if replicas.is_empty() {
            return Err(CreateTopicError::InvalidReplicaAssignment(format!(
                "Replica assignment for partition {partition} is empty."
            )));
        }
        let distinct: BTreeSet<i32> = replicas.iter().copied().collect();
        if distinct.len() != replicas.len() {
            return Err(CreateTopicError::InvalidReplicaAssignment(format!(
                "Duplicate brokers not allowed in replica assignment: {replicas:?} for \
                 partition id {partition}."
            )));
        }
        if let Some(missing) = replicas.iter().find(|r| !nodes.contains(r)) {
            return Err(CreateTopicError::InvalidReplicaAssignment(format!(
                "Unknown broker {missing} in replica assignment for partition {partition}."
            )));
        }
        check_replication_factor(replicas.len() as i32, nodes.len())?;
        out.push(PartitionAssignment {
            replicas: replicas.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(name: &str, partitions: i32, rf: i16) -> NewTopic {
        NewTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: rf,
            ..NewTopic::default()
        }
    }

    #[test]
    fn defaults_fill_in_minus_one() {
        let spec = plan_topic(&new("t", -1, -1), 3, &[1]).unwrap();
        assert_eq!(spec.partitions.len(), 3);
        assert!(spec.partitions.iter().all(|p| p.replicas == vec![1]));
    }

    #[test]
    fn kafkas_rejections() {
        let err = |n: NewTopic| plan_topic(&n, 1, &[1]).unwrap_err();
        assert!(matches!(
            err(new("bad name", 1, 1)),
            CreateTopicError::InvalidName(_)
        ));
        assert!(matches!(
            err(new("t", 0, 1)),
            CreateTopicError::InvalidPartitions(_)
        ));
        assert!(matches!(
            err(new("t", 10_001, 1)),
            CreateTopicError::InvalidPartitions(_)
        ));
        assert_eq!(
            err(new("t", 1, 3)),
            CreateTopicError::InvalidReplicationFactor(
                "Replication factor: 3 larger than available brokers: 1.".into()
            )
        );
        assert!(matches!(
            err(new("t", 1, 0)),
            CreateTopicError::InvalidReplicationFactor(_)
        ));
        let mut both = new("t", 2, -1);
        both.assignments = vec![(0, vec![1])];
        assert!(matches!(err(both), CreateTopicError::InvalidRequest(_)));
        let mut gap = new("t", -1, -1);
        gap.assignments = vec![(0, vec![1]), (2, vec![1])];
        assert!(matches!(
            err(gap),
            CreateTopicError::InvalidReplicaAssignment(_)
        ));
        let mut unknown = new("t", -1, -1);
        unknown.assignments = vec![(0, vec![7])];
        assert!(matches!(
            err(unknown),
            CreateTopicError::InvalidReplicaAssignment(_)
        ));
        let mut cfg = new("t", 1, 1);
        cfg.configs = vec![("nope".into(), Some("1".into()))];
        assert!(matches!(err(cfg), CreateTopicError::InvalidConfig(_)));
    }

    #[test]
    fn explicit_assignments_are_kept() {
        let mut n = new("t", -1, -1);
        n.assignments = vec![(1, vec![2]), (0, vec![1])];
        let spec = plan_topic(&n, 1, &[1, 2]).unwrap();
        assert_eq!(spec.partitions[0].replicas, vec![1]);
        assert_eq!(spec.partitions[1].replicas, vec![2]);
    }
}
