//! Cluster and log-directory operations of the Admin client, as `kafka-log-dirs.sh` uses
//! them: `describe_cluster` (DescribeCluster when the broker has it, else Metadata, as Kafka's
//! Admin falls back) and `describe_log_dirs` (DescribeLogDirs of every topic, sent to each
//! broker asked about: every broker answers only for the partitions it holds).

use std::collections::BTreeMap;

use kafka_protocol::messages::{ApiKey, DescribeClusterRequest, DescribeLogDirsRequest};

use super::admin::Admin;
use super::error::{ClientError, ClientResult, KafkaError, NONE};
use super::types::{Node, NodeId};

/// The cluster as DescribeCluster describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterDescription {
    /// The cluster id, if the broker has one.
    pub cluster_id: Option<String>,
    /// The controller, if one is known.
    pub controller: Option<NodeId>,
    /// The brokers, in the order the broker listed them.
    pub nodes: Vec<Node>,
}

/// One partition's replica in a log directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaInfo {
    /// Topic name.
    pub topic: String,
    /// Partition index.
    pub partition: i32,
    /// Bytes on disk.
    pub size: i64,
    /// How far the replica is behind the log end (0 for the current replica).
    pub offset_lag: i64,
    /// Whether it is a future replica (a move between directories in progress).
    pub is_future: bool,
}

/// One log directory of a broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDirDescription {
    /// The directory's path on the broker.
    pub path: String,
    /// The directory's error, if it has one (KAFKA_STORAGE_ERROR for an offline one).
    pub error: Option<KafkaError>,
    /// Its replicas, in the order the broker listed them.
    pub replicas: Vec<ReplicaInfo>,
    /// Total bytes of its filesystem (DescribeLogDirs v4+), if known.
    pub total_bytes: Option<i64>,
    /// Usable bytes of its filesystem (DescribeLogDirs v4+), if known.
    pub usable_bytes: Option<i64>,
}

impl Admin {
    /// The cluster's id, controller and brokers.
    pub async fn describe_cluster(&mut self) -> ClientResult<ClusterDescription> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeCluster", async {
            let addr = self.any_broker().await?;
            let versions = self.broker_versions(&addr).await?;
            if versions.range(ApiKey::DescribeCluster).is_none() {
                let metadata = self.metadata(Some(&[])).await?;
                return Ok(ClusterDescription {
                    cluster_id: metadata.cluster_id.map(|c| c.to_string()),
                    controller: Some(NodeId(metadata.controller_id.0)).filter(|c| c.0 >= 0),
                    nodes: self.brokers().values().cloned().collect(),
                });
            }
            let version = versions.pick(ApiKey::DescribeCluster)?;
            let response = self
                .send_at(&addr, &DescribeClusterRequest::default(), version)
                .await?;
            if response.error_code != NONE {
                return Err(KafkaError::with_message(
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                )
                .into());
            }
            Ok(ClusterDescription {
                cluster_id: Some(response.cluster_id.to_string()),
                controller: Some(NodeId(response.controller_id.0)).filter(|c| c.0 >= 0),
                nodes: response
                    .brokers
                    .iter()
                    .map(|b| Node {
                        id: NodeId(b.broker_id.0),
                        host: b.host.to_string(),
                        port: b.port,
                        rack: b.rack.as_ref().map(|r| r.to_string()),
                    })
                    .collect(),
            })
        })
        .await
    }

    /// The log directories of each of `brokers` (DescribeLogDirs of every topic). A broker that
    /// cannot be reached or answers with an error fails the whole call, as Kafka's
    /// `allDescriptions()` does.
    pub async fn describe_log_dirs(
        &mut self,
        brokers: &[NodeId],
    ) -> ClientResult<BTreeMap<NodeId, Vec<LogDirDescription>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeLogDirs", async {
            let mut out = BTreeMap::new();
            for id in brokers {
                let addr = self.node_address(*id).await?;
                let version = self
                    .broker_versions(&addr)
                    .await?
                    .pick(ApiKey::DescribeLogDirs)?;
                let request = DescribeLogDirsRequest::default().with_topics(None);
                let response = self.send_at(&addr, &request, version).await?;
                if response.error_code != NONE {
                    return Err(KafkaError::new(response.error_code).into());
                }
                let dirs = response
                    .results
                    .iter()
                    .map(|r| LogDirDescription {
                        path: r.log_dir.to_string(),
                        error: (r.error_code != NONE).then(|| KafkaError::new(r.error_code)),
                        replicas: r
                            .topics
                            .iter()
                            .flat_map(|t| {
                                t.partitions.iter().map(|p| ReplicaInfo {
                                    topic: t.name.0.to_string(),
                                    partition: p.partition_index,
                                    size: p.partition_size,
                                    offset_lag: p.offset_lag,
                                    is_future: p.is_future_key,
                                })
                            })
                            .collect(),
                        total_bytes: (version >= 4 && r.total_bytes >= 0).then_some(r.total_bytes),
                        usable_bytes: (version >= 4 && r.usable_bytes >= 0)
                            .then_some(r.usable_bytes),
                    })
                    .collect();
                out.insert(*id, dirs);
            }
            Ok(out)
        })
        .await
    }

    /// The address of broker `id`, from the last Metadata answer (refreshed once if the broker
    /// is not in it).
    pub(crate) async fn node_address(&mut self, id: NodeId) -> ClientResult<String> {
        if let Some(node) = self.brokers().get(&id) {
            return Ok(node.address());
        }
        self.metadata(Some(&[])).await?;
        self.brokers()
            .get(&id)
            .map(Node::address)
            .ok_or_else(|| ClientError::Config(format!("broker {id} is not in the cluster")))
    }
}
