//! Topic operations of the Admin client, as `kafka-topics.sh` uses them: list through Metadata,
//! describe through DescribeTopicPartitions paged as Kafka 4.x's Admin pages it (Metadata when
//! the broker does not offer it), read topic configs through DescribeConfigs (when the broker
//! has it), create and delete at the controller.

use std::collections::BTreeMap;

use kafka_protocol::messages::{
    create_topics_request::{
        CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig, CreateTopicsRequest,
    },
    delete_topics_request::{DeleteTopicState, DeleteTopicsRequest},
    describe_configs_request::{DescribeConfigsRequest, DescribeConfigsResource},
    describe_topic_partitions_request::{
        Cursor as RequestCursor, DescribeTopicPartitionsRequest, TopicRequest,
    },
    ApiKey, BrokerId, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::admin::Admin;
use super::error::{ClientError, ClientResult, KafkaError, NONE, UNKNOWN_TOPIC_OR_PARTITION};
use super::types::NodeId;

/// Partitions per DescribeTopicPartitions response (Kafka's `partitionSizeLimitPerResponse`
/// default).
const PARTITIONS_PER_PAGE: i32 = 2000;
/// Most DescribeTopicPartitions pages one call reads (every page carries a partition).
const MAX_PAGES: usize = 100_000;

/// DescribeConfigs resource type of topics.
const RESOURCE_TYPE_TOPIC: i8 = 2;
/// DescribeConfigs config source of a value nobody set (`DEFAULT_CONFIG`); Kafka's tools show
/// every other entry as an override.
pub const SOURCE_DEFAULT: i8 = 5;

/// One partition of a described topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionInfo {
    /// Partition index.
    pub partition: i32,
    /// The leader, if the partition has one.
    pub leader: Option<NodeId>,
    /// Replica node ids.
    pub replicas: Vec<NodeId>,
    /// In-sync replica node ids.
    pub isr: Vec<NodeId>,
    /// Eligible leader replicas (KIP-966), when the broker reports them (DescribeTopicPartitions;
    /// Metadata does not).
    pub elr: Option<Vec<NodeId>>,
    /// The last known eligible leader replicas, likewise.
    pub last_known_elr: Option<Vec<NodeId>>,
}

/// A topic as Metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicDescription {
    /// The topic name.
    pub name: String,
    /// Kafka's topic id, 16 bytes (all zero when the broker has none).
    pub topic_id: [u8; 16],
    /// Whether the broker marks it internal.
    pub is_internal: bool,
    /// Partitions, sorted by index.
    pub partitions: Vec<PartitionInfo>,
}

/// A topic to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTopic {
    /// The name.
    pub name: String,
    /// Partition count; `None` = the broker's default (−1 on the wire).
    pub partitions: Option<i32>,
    /// Replication factor; `None` = the broker's default (−1 on the wire).
    pub replication_factor: Option<i16>,
    /// Topic config overrides.
    pub configs: BTreeMap<String, String>,
    /// Replica placement per partition (partition i on the i-th list), instead of a count.
    pub assignment: Option<Vec<Vec<NodeId>>>,
}

/// A topic's config entries: name, value, and DescribeConfigs source.
pub type TopicConfigEntries = Vec<(String, String, i8)>;

impl Admin {
    /// Names of all topics (internal ones only if asked), sorted.
    pub async fn list_topics(&mut self, include_internal: bool) -> ClientResult<Vec<String>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "listTopics", async {
            let metadata = self.metadata(None).await?;
            let mut names: Vec<String> = metadata
                .topics
                .iter()
                .filter(|t| t.error_code == NONE && (include_internal || !t.is_internal))
                .filter_map(|t| t.name.as_ref().map(|n| n.0.to_string()))
                .collect();
            names.sort();
            Ok(names)
        })
        .await
    }

    /// The named topics, by DescribeTopicPartitions when the broker offers it (as Kafka 4.x's
    /// Admin does), else by Metadata.
    pub async fn describe_topics(
        &mut self,
        names: &[String],
    ) -> ClientResult<BTreeMap<String, Result<TopicDescription, KafkaError>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeTopics", async {
            let mut out = BTreeMap::new();
            if names.is_empty() {
                return Ok(out);
            }
            let addr = self.any_broker().await?;
            if self
                .broker_versions(&addr)
                .await?
                .range(ApiKey::DescribeTopicPartitions)
                .is_some()
            {
                return self.describe_topic_partitions(&addr, names).await;
            }
            let metadata = self.metadata(Some(names)).await?;
            for name in names {
                let found = metadata
                    .topics
                    .iter()
                    .find(|t| t.name.as_ref().map(|n| n.0.as_str()) == Some(name.as_str()));
                let result = match found {
                    None => Err(KafkaError::with_message(
                        UNKNOWN_TOPIC_OR_PARTITION,
                        Some(format!("Topic {name} not found.")),
                    )),
                    Some(t) if t.error_code != NONE => Err(KafkaError::new(t.error_code)),
                    Some(t) => {
                        let mut partitions: Vec<PartitionInfo> = t
                            .partitions
                            .iter()
                            .map(|p| PartitionInfo {
                                partition: p.partition_index,
                                leader: (p.leader_id.0 >= 0).then_some(NodeId(p.leader_id.0)),
                                replicas: p.replica_nodes.iter().map(|b| NodeId(b.0)).collect(),
                                isr: p.isr_nodes.iter().map(|b| NodeId(b.0)).collect(),
                                elr: None,
                                last_known_elr: None,
                            })
                            .collect();
                        partitions.sort_by_key(|p| p.partition);
                        Ok(TopicDescription {
                            name: name.clone(),
                            topic_id: *t.topic_id.as_bytes(),
                            is_internal: t.is_internal,
                            partitions,
                        })
                    }
                };
                out.insert(name.clone(), result);
            }
            Ok(out)
        })
        .await
    }

    /// Kafka's `handleDescribeTopicsByNamesWithDescribeTopicPartitionsApi`: the names sorted,
    /// pages of at most [`PARTITIONS_PER_PAGE`] partitions, each next page asking for the topics
    /// from the cursor's on, the cursor's topic from its next partition.
    async fn describe_topic_partitions(
        &mut self,
        addr: &str,
        names: &[String],
    ) -> ClientResult<BTreeMap<String, Result<TopicDescription, KafkaError>>> {
        let version = self
            .broker_versions(addr)
            .await?
            .pick(ApiKey::DescribeTopicPartitions)?;
        let mut pending: Vec<String> = names.to_vec();
        pending.sort();
        pending.dedup();
        let mut out: BTreeMap<String, Result<TopicDescription, KafkaError>> = BTreeMap::new();
        let mut cursor: Option<(String, i32)> = None;
        for _ in 0..MAX_PAGES {
            let request = DescribeTopicPartitionsRequest::default()
                .with_topics(
                    pending
                        .iter()
                        .map(|n| {
                            TopicRequest::default()
                                .with_name(TopicName(StrBytes::from_string(n.clone())))
                        })
                        .collect(),
                )
                .with_response_partition_limit(PARTITIONS_PER_PAGE)
                .with_cursor(cursor.as_ref().map(|(t, p)| {
                    RequestCursor::default()
                        .with_topic_name(TopicName(StrBytes::from_string(t.clone())))
                        .with_partition_index(*p)
                }));
            let response = self.send_at(addr, &request, version).await?;
            for t in &response.topics {
                let Some(name) = t.name.as_ref().map(|n| n.0.to_string()) else {
                    continue;
                };
                if t.error_code != NONE {
                    out.insert(name, Err(KafkaError::new(t.error_code)));
                    continue;
                }
                let partitions = t.partitions.iter().map(|p| PartitionInfo {
                    partition: p.partition_index,
                    leader: (p.leader_id.0 >= 0).then_some(NodeId(p.leader_id.0)),
                    replicas: p.replica_nodes.iter().map(|b| NodeId(b.0)).collect(),
                    isr: p.isr_nodes.iter().map(|b| NodeId(b.0)).collect(),
                    elr: p
                        .eligible_leader_replicas
                        .as_ref()
                        .map(|v| v.iter().map(|b| NodeId(b.0)).collect()),
                    last_known_elr: p
                        .last_known_elr
                        .as_ref()
                        .map(|v| v.iter().map(|b| NodeId(b.0)).collect()),
                });
                match out.get_mut(&name) {
                    Some(Ok(d)) => d.partitions.extend(partitions),
                    _ => {
                        out.insert(
                            name.clone(),
                            Ok(TopicDescription {
                                name,
                                topic_id: *t.topic_id.as_bytes(),
                                is_internal: t.is_internal,
                                partitions: partitions.collect(),
                            }),
                        );
                    }
                }
            }
            let Some(next) = response.next_cursor else {
                for name in &pending {
                    out.entry(name.clone()).or_insert_with(|| {
                        Err(KafkaError::with_message(
                            UNKNOWN_TOPIC_OR_PARTITION,
                            Some(format!("Topic {name} not found.")),
                        ))
                    });
                }
                for d in out.values_mut().flatten() {
                    d.partitions.sort_by_key(|p| p.partition);
                }
                return Ok(out);
            };
            let from = next.topic_name.0.to_string();
            pending.retain(|n| *n >= from);
            cursor = Some((from, next.partition_index));
        }
        Err(ClientError::Config(format!(
            "DescribeTopicPartitions did not finish in {MAX_PAGES} pages"
        )))
    }

    /// The config entries of each topic, or `None` when the broker has no DescribeConfigs.
    pub async fn describe_topic_configs(
        &mut self,
        names: &[String],
    ) -> ClientResult<Option<BTreeMap<String, Result<TopicConfigEntries, KafkaError>>>> {
        let timeout = self.call_timeout();
        Admin::deadline(timeout, "describeConfigs", async {
            let addr = self.any_broker().await?;
            let versions = self.broker_versions(&addr).await?;
            if versions.range(ApiKey::DescribeConfigs).is_none() {
                return Ok(None);
            }
            let version = versions.pick(ApiKey::DescribeConfigs)?;
            let request = DescribeConfigsRequest::default().with_resources(
                names
                    .iter()
                    .map(|n| {
                        DescribeConfigsResource::default()
                            .with_resource_type(RESOURCE_TYPE_TOPIC)
                            .with_resource_name(StrBytes::from_string(n.clone()))
                            .with_configuration_keys(None)
                    })
                    .collect(),
            );
            let response = self.send_at(&addr, &request, version).await?;
            let mut out = BTreeMap::new();
            for r in response.results {
                let entry = if r.error_code != NONE {
                    Err(KafkaError::with_message(
                        r.error_code,
                        r.error_message.map(|m| m.to_string()),
                    ))
                } else {
                    Ok(r.configs
                        .iter()
                        .map(|c| {
                            (
                                c.name.to_string(),
                                c.value.as_ref().map(|v| v.to_string()).unwrap_or_default(),
                                c.config_source,
                            )
                        })
                        .collect())
                };
                out.insert(r.resource_name.to_string(), entry);
            }
            Ok(Some(out))
        })
        .await
    }

    /// Creates topics at the controller; each topic's outcome.
    pub async fn create_topics(
        &mut self,
        topics: &[NewTopic],
    ) -> ClientResult<BTreeMap<String, Result<(), KafkaError>>> {
        let timeout = self.call_timeout();
        let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        Admin::deadline(timeout, "createTopics", async {
            let addr = self.controller_or_any().await?;
            let request = CreateTopicsRequest::default()
                .with_timeout_ms(timeout_ms)
                .with_topics(
                    topics
                        .iter()
                        .map(|t| {
                            let assignments: Vec<CreatableReplicaAssignment> = t
                                .assignment
                                .iter()
                                .flatten()
                                .enumerate()
                                .map(|(i, brokers)| {
                                    CreatableReplicaAssignment::default()
                                        .with_partition_index(i as i32)
                                        .with_broker_ids(
                                            brokers.iter().map(|b| BrokerId(b.0)).collect(),
                                        )
                                })
                                .collect();
                            let manual = !assignments.is_empty();
                            CreatableTopic::default()
                                .with_name(TopicName(StrBytes::from_string(t.name.clone())))
                                .with_num_partitions(if manual {
                                    -1
                                } else {
                                    t.partitions.unwrap_or(-1)
                                })
                                .with_replication_factor(if manual {
                                    -1
                                } else {
                                    t.replication_factor.unwrap_or(-1)
                                })
                                .with_assignments(assignments)
                                .with_configs(
                                    t.configs
                                        .iter()
                                        .map(|(k, v)| {
                                            CreatableTopicConfig::default()
                                                .with_name(StrBytes::from_string(k.clone()))
                                                .with_value(Some(StrBytes::from_string(v.clone())))
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                );
            let response = self.send(&addr, &request).await?;
            Ok(response
                .topics
                .into_iter()
                .map(|t| {
                    let result = if t.error_code == NONE {
                        Ok(())
                    } else {
                        Err(KafkaError::with_message(
                            t.error_code,
                            t.error_message.map(|m| m.to_string()),
                        ))
                    };
                    (t.name.0.to_string(), result)
                })
                .collect())
        })
        .await
    }

    /// Deletes topics at the controller; each topic's outcome.
    pub async fn delete_topics(
        &mut self,
        names: &[String],
    ) -> ClientResult<BTreeMap<String, Result<(), KafkaError>>> {
        let timeout = self.call_timeout();
        let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        Admin::deadline(timeout, "deleteTopics", async {
            let addr = self.controller_or_any().await?;
            let version = self
                .broker_versions(&addr)
                .await?
                .pick(ApiKey::DeleteTopics)?;
            let mut request = DeleteTopicsRequest::default().with_timeout_ms(timeout_ms);
            if version >= 6 {
                request = request.with_topics(
                    names
                        .iter()
                        .map(|n| {
                            DeleteTopicState::default()
                                .with_name(Some(TopicName(StrBytes::from_string(n.clone()))))
                        })
                        .collect(),
                );
            } else {
                request = request.with_topic_names(
                    names
                        .iter()
                        .map(|n| TopicName(StrBytes::from_string(n.clone())))
                        .collect(),
                );
            }
            let response = self.send_at(&addr, &request, version).await?;
            let mut out = BTreeMap::new();
            for r in response.responses {
                let Some(name) = r.name.map(|n| n.0.to_string()) else {
                    continue;
                };
                let result = if r.error_code == NONE {
                    Ok(())
                } else {
                    Err(KafkaError::with_message(
                        r.error_code,
                        r.error_message.map(|m| m.to_string()),
                    ))
                };
                out.insert(name, result);
            }
            for n in names {
                if !out.contains_key(n) {
                    return Err(ClientError::Protocol {
                        addr: addr.clone(),
                        detail: format!("DeleteTopics response has no entry for {n}"),
                    });
                }
            }
            Ok(out)
        })
        .await
    }
}

/// Kafka's textual topic id: the 16 bytes in URL-safe base64 without padding (22 characters).
pub fn topic_id_string(id: &[u8; 16]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(22);
    for chunk in id.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            let index = (n >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(ALPHABET[index as usize]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_ids_print_as_kafka_prints_them() {
        assert_eq!(topic_id_string(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        // Kafka's Uuid.toString of 0x0102..10 is the URL-safe base64 of those bytes.
        let id: [u8; 16] = core::array::from_fn(|i| (i + 1) as u8);
        assert_eq!(topic_id_string(&id), "AQIDBAUGBwgJCgsMDQ4PEA");
        assert_eq!(topic_id_string(&[0xff; 16]), "_____________________w");
    }
}
