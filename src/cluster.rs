//! Who is in the cluster and who leads: what Metadata tells clients about brokers.
//!
//! Today the cluster is this one node. The Raft meta service will implement [`ClusterView`]
//! from its membership (brokers = voters and learners with their Kafka endpoints, controller =
//! Raft leader); handlers only ever ask this trait, never assume one node.

use kafka_protocol::messages::BrokerId;

/// A broker as clients see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerEndpoint {
    /// Node id.
    pub node_id: BrokerId,
    /// Advertised host.
    pub host: String,
    /// Advertised port.
    pub port: i32,
    /// Rack, when configured.
    pub rack: Option<String>,
}

/// The cluster as the front end needs to see it.
pub trait ClusterView: Send + Sync {
    /// This node's id.
    fn local_node_id(&self) -> BrokerId;
    /// Every live broker, this one included, at its first listener's address.
    fn brokers(&self) -> Vec<BrokerEndpoint>;
    /// Every live broker that has a listener named `listener`, at that listener's address
    /// (Kafka's `getAliveBrokerNodes(listenerName)`: a broker without it is left out). This
    /// node is listed at its first listener's address; a request context puts in the address
    /// of the listener the request came in on.
    fn brokers_on(&self, listener: &str) -> Vec<BrokerEndpoint> {
        let _ = listener;
        self.brokers()
    }
    /// The controller's node id (Raft leader), or -1 when none is known.
    fn controller_id(&self) -> BrokerId;
    /// The nodes new partitions may be placed on, in id order: every broker, unless the
    /// cluster knows better (a Raft learner serves clients but is no placement target).
    fn placement_node_ids(&self) -> Vec<i32> {
        let mut ids: Vec<i32> = self.brokers().iter().map(|b| b.node_id.0).collect();
        ids.sort_unstable();
        ids
    }
}

/// The embedded default: one node that is its own controller.
#[derive(Debug, Clone)]
pub struct SingleNode {
    /// This node, as advertised.
    pub endpoint: BrokerEndpoint,
}

impl ClusterView for SingleNode {
    fn local_node_id(&self) -> BrokerId {
        self.endpoint.node_id
    }

    fn brokers(&self) -> Vec<BrokerEndpoint> {
        vec![self.endpoint.clone()]
    }

    fn controller_id(&self) -> BrokerId {
        self.endpoint.node_id
    }
}
