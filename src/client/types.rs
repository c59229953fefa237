//! Small value types the client hands out: ids and offsets are newtypes so a partition index is
//! never mistaken for an offset, and a topic-partition prints the way Kafka's Java tools print it.

use std::fmt;

/// A broker's node id, as Metadata and FindCoordinator report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub i32);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// An offset in a partition's log (committed, log-end, log-start, or one found by timestamp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Offset(pub i64);

impl fmt::Display for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A partition leader epoch; Kafka uses −1 for "unknown".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LeaderEpoch(pub i32);

/// A topic and partition index. Ordered by topic, then partition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicPartition {
    /// The topic name.
    pub topic: String,
    /// The partition index within the topic.
    pub partition: i32,
}

impl TopicPartition {
    /// A topic-partition from its parts.
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

/// Java's `TopicPartition.toString()`: `topic-partition`, which the Kafka tools put in messages.
impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// A broker as Metadata (or FindCoordinator) describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The node id.
    pub id: NodeId,
    /// Host name or address clients connect to.
    pub host: String,
    /// Kafka port.
    pub port: i32,
    /// Rack, if the broker has one.
    pub rack: Option<String>,
}

impl Node {
    /// `host:port`, the address to dial.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// Java's `Node.toString()` (Kafka 4.0), which appears in some of the tools' error messages.
impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} (id: {} rack: {})",
            self.host,
            self.port,
            self.id,
            self.rack.as_deref().unwrap_or("null")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_partition_prints_like_java() {
        assert_eq!(TopicPartition::new("orders", 3).to_string(), "orders-3");
    }

    #[test]
    fn topic_partitions_order_by_topic_then_partition() {
        let mut v = vec![
            TopicPartition::new("b", 0),
            TopicPartition::new("a", 10),
            TopicPartition::new("a", 2),
        ];
        v.sort();
        assert_eq!(
            v,
            vec![
                TopicPartition::new("a", 2),
                TopicPartition::new("a", 10),
                TopicPartition::new("b", 0)
            ]
        );
    }

    #[test]
    fn node_prints_like_java() {
        let node = Node {
            id: NodeId(1),
            host: "localhost".into(),
            port: 9092,
            rack: None,
        };
        assert_eq!(node.to_string(), "localhost:9092 (id: 1 rack: null)");
        assert_eq!(node.address(), "localhost:9092");
    }
}
