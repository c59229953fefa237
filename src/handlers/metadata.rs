//! Metadata (3), v0–v13: brokers, cluster id, controller, topics with their partitions'
//! leaders, replicas and ISR, topic ids; auto-creation of asked-for topics. v13's top-level
//! error code (KIP-1102) exists for a broker to ask a client to rebootstrap
//! (REBOOTSTRAP_REQUIRED); Kafka 4.0's brokers never send it and neither does Cohort: it is 0.

use std::collections::BTreeSet;
use std::sync::Arc;

use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{BrokerId, MetadataRequest, MetadataResponse, TopicName};
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;
use uuid::Uuid;

use super::RequestContext;
use crate::data::partition::LEADER_EPOCH;
use crate::errors::{to_kafka_error, BrokerError};
use crate::topics::{NewTopic, TopicSpec};

/// Kafka's "authorized operations" when not asked for.
pub(crate) const OPERATIONS_NOT_REQUESTED: i32 = i32::MIN;
/// Without ACLs every topic operation is allowed: READ(3), WRITE(4), CREATE(5), DELETE(6),
/// ALTER(7), DESCRIBE(8), DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11), as Kafka's bit set.
pub(crate) const ALL_TOPIC_OPERATIONS: i32 =
    (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11);
/// Cluster operations likewise: CREATE(5), ALTER(7), DESCRIBE(8), CLUSTER_ACTION(9),
/// DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11), IDEMPOTENT_WRITE(12).
pub(crate) const ALL_CLUSTER_OPERATIONS: i32 =
    (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);
/// Most topics one request may name; more is refused per topic with INVALID_REQUEST.
const MAX_TOPICS_PER_REQUEST: usize = 10_000;

/// One asked-for topic.
enum Wanted {
    Name(String),
    Id(Uuid),
}

/// Answers with the cluster and the asked-for topics (all of them for a null list, and for an
/// empty list at v0).
pub async fn handle(ctx: &RequestContext, req: MetadataRequest) -> MetadataResponse {
    let v = ctx.version;
    let broker = &ctx.broker;
    let cluster = &broker.cluster;
    let live: BTreeSet<i32> = broker.node_ids().into_iter().collect();
    let listed = ctx.brokers();
    // Live brokers this client can reach on its listener: a partition led by another one is
    // answered as Kafka does (`getPartitionMetadata` with the request's listener name).
    let reachable: BTreeSet<i32> = listed
        .iter()
        .map(|b| b.node_id.0)
        .filter(|id| live.contains(id))
        .collect();

    let brokers = listed
        .into_iter()
        .map(|b| {
            let mut out = MetadataResponseBroker::default()
                .with_node_id(b.node_id)
                .with_host(StrBytes::from_string(b.host))
                .with_port(b.port);
            if v >= 1 {
                out = out.with_rack(b.rack.map(StrBytes::from_string));
            }
            out
        })
        .collect();

    let include_ops = v >= 8 && req.include_topic_authorized_operations;
    let wanted: Option<Vec<Wanted>> = match req.topics {
        None => None,
        Some(ref t) if t.is_empty() && v == 0 => None,
        Some(t) => Some(dedup(t.into_iter().map(|t| match t.name {
            // From v10 a topic may be named by id alone (the name null or empty).
            Some(name) if !(v >= 10 && name.0.is_empty() && !t.topic_id.is_nil()) => {
                Wanted::Name(name.0.to_string())
            }
            _ if v >= 10 && !t.topic_id.is_nil() => Wanted::Id(t.topic_id),
            _ => Wanted::Name(String::new()),
        }))),
    };
    // Below v4 the field does not exist and Kafka auto-creates; from v4 the client decides.
    let allow_auto_create =
        broker.config.auto_create_topics && (v < 4 || req.allow_auto_topic_creation);

    let mut topics = Vec::new();
    match wanted {
        None => {
            for spec in broker.catalog.topics() {
                topics.push(topic_metadata(ctx, &spec, (&reachable, &live), include_ops));
            }
        }
        Some(wanted) => {
            let over_limit = wanted.len() > MAX_TOPICS_PER_REQUEST;
            for w in wanted {
                let t = if over_limit {
                    missing_topic(ctx, &w, ErrorCode::InvalidRequest)
                } else {
                    match w {
                        Wanted::Id(id) => match broker.catalog.topic_by_id(id) {
                            Some(spec) => {
                                topic_metadata(ctx, &spec, (&reachable, &live), include_ops)
                            }
                            None => missing_topic(ctx, &w, ErrorCode::UnknownTopicId),
                        },
                        Wanted::Name(ref name) => match broker.catalog.topic(name) {
                            Some(spec) => {
                                topic_metadata(ctx, &spec, (&reachable, &live), include_ops)
                            }
                            None if allow_auto_create => match auto_create(ctx, name).await {
                                Ok(spec) => {
                                    topic_metadata(ctx, &spec, (&reachable, &live), include_ops)
                                }
                                Err(code) => missing_topic(ctx, &w, code),
                            },
                            None => missing_topic(ctx, &w, ErrorCode::UnknownTopicOrPartition),
                        },
                    }
                };
                topics.push(t);
            }
        }
    }

    let mut resp = MetadataResponse::default()
        .with_brokers(brokers)
        .with_topics(topics);
    if v >= 1 {
        resp = resp.with_controller_id(cluster.controller_id());
    }
    if v >= 2 {
        resp = resp.with_cluster_id(Some(StrBytes::from_string(broker.catalog.cluster_id())));
    }
    if (8..=10).contains(&v) && req.include_cluster_authorized_operations {
        resp = resp.with_cluster_authorized_operations(ALL_CLUSTER_OPERATIONS);
    }
    resp
}

fn dedup(wanted: impl Iterator<Item = Wanted>) -> Vec<Wanted> {
    let mut names = BTreeSet::new();
    let mut ids = BTreeSet::new();
    wanted
        .filter(|w| match w {
            Wanted::Name(n) => names.insert(n.clone()),
            Wanted::Id(id) => ids.insert(*id),
        })
        .collect()
}

async fn auto_create(ctx: &RequestContext, name: &str) -> Result<Arc<TopicSpec>, ErrorCode> {
    let new = NewTopic {
        name: name.to_string(),
        num_partitions: -1,
        replication_factor: -1,
        ..NewTopic::default()
    };
    match ctx.broker.create_topic(&new, false).await {
        Ok(spec) => {
            tracing::info!(
                topic = name,
                partitions = spec.partitions.len(),
                "auto-created topic"
            );
            Ok(spec)
        }
        // Another request created it meanwhile.
        Err(BrokerError::Catalog(crate::topics::CatalogError::TopicExists(_))) => ctx
            .broker
            .catalog
            .topic(name)
            .ok_or(ErrorCode::LeaderNotAvailable),
        Err(e) => {
            tracing::info!(topic = name, error = %e, "auto-create refused");
            Err(to_kafka_error(&e))
        }
    }
}

fn missing_topic(ctx: &RequestContext, wanted: &Wanted, code: ErrorCode) -> MetadataResponseTopic {
    let mut t = MetadataResponseTopic::default().with_error_code(ctx.error(code));
    match wanted {
        Wanted::Name(n) => t = t.with_name(Some(TopicName(StrBytes::from_string(n.clone())))),
        Wanted::Id(id) => t = t.with_topic_id(*id),
    }
    t
}

fn topic_metadata(
    ctx: &RequestContext,
    spec: &TopicSpec,
    (live, alive): (&BTreeSet<i32>, &BTreeSet<i32>),
    include_ops: bool,
) -> MetadataResponseTopic {
    // `live`: the brokers this client reaches on its listener; `alive`: every live broker.
    let v = ctx.version;
    let partitions = spec
        .partitions
        .iter()
        .enumerate()
        .map(|(index, assignment)| {
            let leader = assignment.leader();
            let replicas: Vec<BrokerId> =
                assignment.replicas.iter().map(|r| BrokerId(*r)).collect();
            // Kafka lists replicas and ISR whatever the client's listener from v1; v0
            // (`errorUnavailableEndpoints`) lists only those it can reach on it.
            let among = |set: &BTreeSet<i32>| -> Vec<BrokerId> {
                replicas
                    .iter()
                    .copied()
                    .filter(|r| set.contains(&r.0))
                    .collect()
            };
            let (listed, in_sync) = if v == 0 {
                (among(live), among(live))
            } else {
                (replicas.clone(), among(alive))
            };
            let leader_live = live.contains(&leader);
            // A live leader without the client's listener: LISTENER_NOT_FOUND from v6,
            // LEADER_NOT_AVAILABLE before (Kafka's `errorUnavailableListeners`).
            let code = if leader_live {
                ErrorCode::None
            } else if v >= 6 && alive.contains(&leader) {
                ErrorCode::ListenerNotFound
            } else {
                ErrorCode::LeaderNotAvailable
            };
            let mut p = MetadataResponsePartition::default()
                .with_partition_index(index as i32)
                .with_error_code(ctx.error(code))
                .with_leader_id(BrokerId(if leader_live { leader } else { -1 }))
                .with_replica_nodes(listed)
                .with_isr_nodes(in_sync);
            if v >= 5 {
                p = p.with_offline_replicas(
                    replicas
                        .into_iter()
                        .filter(|r| !live.contains(&r.0))
                        .collect(),
                );
            }
            if v >= 7 {
                p = p.with_leader_epoch(LEADER_EPOCH);
            }
            p
        })
        .collect();
    let mut t = MetadataResponseTopic::default()
        .with_name(Some(TopicName(StrBytes::from_string(spec.name.clone()))))
        .with_partitions(partitions);
    if v >= 10 {
        t = t.with_topic_id(spec.id);
    }
    if include_ops {
        t = t.with_topic_authorized_operations(ALL_TOPIC_OPERATIONS);
    } else {
        t = t.with_topic_authorized_operations(OPERATIONS_NOT_REQUESTED);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{assert_encodes, broker, ctx};
    use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
    use kafka_protocol::messages::{ApiKey, ResponseKind};

    fn ask(names: &[&str]) -> MetadataRequest {
        MetadataRequest::default().with_topics(Some(
            names
                .iter()
                .map(|n| {
                    MetadataRequestTopic::default()
                        .with_name(Some(TopicName(StrBytes::from_string(n.to_string()))))
                })
                .collect(),
        ))
    }

    #[tokio::test]
    async fn every_version_answers_and_encodes() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &["--num-partitions", "3"]);
        for v in 0..=13 {
            let c = ctx(&b, ApiKey::Metadata, v);
            let mut req = ask(&["auto", "bad name"]);
            if v >= 4 {
                req = req.with_allow_auto_topic_creation(true);
            }
            if v >= 8 {
                req = req.with_include_topic_authorized_operations(true);
            }
            let resp = handle(&c, req).await;
            assert_eq!(resp.brokers.len(), 1, "v{v}");
            let auto = &resp.topics[0];
            assert_eq!(auto.error_code, 0, "v{v}");
            assert_eq!(auto.partitions.len(), 3, "v{v}");
            assert_eq!(auto.partitions[2].leader_id, BrokerId(1));
            assert_eq!(resp.topics[1].error_code, 17, "v{v}: invalid name");
            if v >= 1 {
                assert_eq!(resp.controller_id, BrokerId(1));
            }
            if v >= 2 {
                assert_eq!(
                    resp.cluster_id.as_deref(),
                    Some(b.catalog.cluster_id().as_str())
                );
            }
            if v >= 10 {
                assert_eq!(auto.topic_id, b.catalog.topic("auto").unwrap().id);
            }
            assert_eq!(resp.error_code, 0, "v{v}: no top-level error");
            assert_encodes(&c, &ResponseKind::Metadata(resp));
        }
    }

    #[tokio::test]
    async fn auto_create_can_be_refused_by_client_or_broker() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let resp = handle(
            &ctx(&b, ApiKey::Metadata, 9),
            ask(&["x"]).with_allow_auto_topic_creation(false),
        )
        .await;
        assert_eq!(resp.topics[0].error_code, 3);
        assert!(b.catalog.topic("x").is_none());

        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &["--auto-create-topics=false"]);
        let resp = handle(&ctx(&b, ApiKey::Metadata, 1), ask(&["x"])).await;
        assert_eq!(resp.topics[0].error_code, 3);
    }

    #[tokio::test]
    async fn null_lists_all_topics_and_ids_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        handle(&ctx(&b, ApiKey::Metadata, 1), ask(&["a", "b"])).await;
        let all = handle(
            &ctx(&b, ApiKey::Metadata, 12),
            MetadataRequest::default().with_topics(None),
        )
        .await;
        let names: Vec<_> = all
            .topics
            .iter()
            .map(|t| t.name.as_ref().unwrap().0.to_string())
            .collect();
        assert_eq!(names, vec!["a", "b"]);
        let v0_all = handle(&ctx(&b, ApiKey::Metadata, 0), ask(&[])).await;
        assert_eq!(v0_all.topics.len(), 2);
        let v1_none = handle(&ctx(&b, ApiKey::Metadata, 1), ask(&[])).await;
        assert!(v1_none.topics.is_empty());

        let id = b.catalog.topic("b").unwrap().id;
        let by_id = MetadataRequest::default().with_topics(Some(vec![
            MetadataRequestTopic::default()
                .with_name(None)
                .with_topic_id(id),
            MetadataRequestTopic::default().with_topic_id(Uuid::from_u128(7)),
        ]));
        let resp = handle(&ctx(&b, ApiKey::Metadata, 12), by_id).await;
        assert_eq!(resp.topics[0].name.as_ref().unwrap().0.as_str(), "b");
        assert_eq!(resp.topics[1].error_code, 100);
    }
}
