//! The output of `cohort topics --describe`, as `kafka-topics.sh` 4.0 prints it: one tab-separated
//! line per topic, one per partition.

use crate::client::topics::{topic_id_string, PartitionInfo};

/// The topic line: name, id (unless all zero), partition count, replication factor, the
/// non-default configs as `k=v,k=v`.
pub fn topic_line(
    topic: &str,
    topic_id: &[u8; 16],
    partition_count: usize,
    replication_factor: usize,
    configs: &[(String, String)],
) -> String {
    let mut line = format!("Topic: {topic}");
    if topic_id != &[0u8; 16] {
        line.push_str(&format!("\tTopicId: {}", topic_id_string(topic_id)));
    }
    line.push_str(&format!("\tPartitionCount: {partition_count}"));
    line.push_str(&format!("\tReplicationFactor: {replication_factor}"));
    let configs: Vec<String> = configs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    line.push_str(&format!("\tConfigs: {}", configs.join(",")));
    line.push('\n');
    line
}

fn ids(nodes: &[crate::client::NodeId]) -> String {
    nodes
        .iter()
        .map(|n| n.0.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The ELR columns: the list, or `N/A` when the broker did not report one (Metadata), as
/// Kafka's tool prints them.
fn elr(nodes: Option<&Vec<crate::client::NodeId>>) -> String {
    nodes.map_or_else(|| "N/A".to_string(), |n| ids(n))
}

/// One partition line.
pub fn partition_line(topic: &str, p: &PartitionInfo) -> String {
    let leader = p
        .leader
        .map(|l| l.0.to_string())
        .unwrap_or_else(|| "none".to_string());
    format!(
        "\tTopic: {topic}\tPartition: {}\tLeader: {leader}\tReplicas: {}\tIsr: {}\tElr: {}\tLastKnownElr: {}\n",
        p.partition,
        ids(&p.replicas),
        ids(&p.isr),
        elr(p.elr.as_ref()),
        elr(p.last_known_elr.as_ref())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::NodeId;

    #[test]
    fn topic_lines() {
        assert_eq!(
            topic_line("t", &[0; 16], 3, 1, &[]),
            "Topic: t\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: \n"
        );
        let id: [u8; 16] = core::array::from_fn(|i| (i + 1) as u8);
        assert_eq!(
            topic_line("t", &id, 1, 1, &[("cleanup.policy".into(), "compact".into()), ("retention.ms".into(), "5".into())]),
            "Topic: t\tTopicId: AQIDBAUGBwgJCgsMDQ4PEA\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: cleanup.policy=compact,retention.ms=5\n"
        );
    }

    #[test]
    fn partition_lines() {
        let p = PartitionInfo {
            partition: 2,
            leader: Some(NodeId(1)),
            replicas: vec![NodeId(1), NodeId(2)],
            isr: vec![NodeId(1)],
            elr: None,
            last_known_elr: None,
        };
        assert_eq!(
            partition_line("t", &p),
            "\tTopic: t\tPartition: 2\tLeader: 1\tReplicas: 1,2\tIsr: 1\tElr: N/A\tLastKnownElr: N/A\n"
        );
        // DescribeTopicPartitions reports the lists, empty without ELR.
        let reported = PartitionInfo {
            elr: Some(vec![]),
            last_known_elr: Some(vec![NodeId(2)]),
            ..p.clone()
        };
        assert_eq!(
            partition_line("t", &reported),
            "\tTopic: t\tPartition: 2\tLeader: 1\tReplicas: 1,2\tIsr: 1\tElr: \tLastKnownElr: 2\n"
        );
        let none = PartitionInfo { leader: None, ..p };
        assert!(partition_line("t", &none).contains("\tLeader: none\t"));
    }
}
