//! The client against scripted peers on real loopback TCP: brokers that answer with exactly the
//! protocol situations a real cluster produces only by accident (an old ApiVersions, a loading
//! coordinator, a moved coordinator, a broker that never answers, garbage), to pin down how the
//! client reacts. End-to-end behaviour against Cohort itself is covered by `tests/operator_*`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kafka_protocol::messages::describe_groups_response::DescribedGroup;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::testing::{api_versions, metadata_for, scripted, Handler, Reply};

use super::error::{
    ClientError, COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, UNSUPPORTED_VERSION,
};
use super::groups::ListGroupsFilter;
use super::{Admin, ClientConfig};

fn group_apis() -> Vec<(ApiKey, i16, i16)> {
    vec![
        (ApiKey::ApiVersions, 0, 4),
        (ApiKey::Metadata, 0, 12),
        (ApiKey::FindCoordinator, 0, 4),
        (ApiKey::DescribeGroups, 0, 5),
        (ApiKey::ListGroups, 0, 5),
        (ApiKey::OffsetFetch, 0, 9),
    ]
}

fn admin_for(addr: std::net::SocketAddr, timeout_ms: u64) -> Admin {
    let mut config = ClientConfig::new(&addr.to_string()).unwrap();
    config.retry_backoff = Duration::from_millis(10);
    config.retry_backoff_max = Duration::from_millis(20);
    let mut admin = Admin::new(config);
    admin.set_call_timeout(Duration::from_millis(timeout_ms));
    admin
}

/// A broker that is its own coordinator and describes every group as Stable with no members,
/// failing the first `load_failures` DescribeGroups with LOAD_IN_PROGRESS.
fn coordinator_handler(
    addr: Arc<Mutex<Option<std::net::SocketAddr>>>,
    load_failures: usize,
) -> Handler {
    let failures = Arc::new(Mutex::new(load_failures));
    Arc::new(move |_h, req| {
        let me = addr.lock().unwrap().unwrap();
        match req {
            RequestKind::ApiVersions(_) => {
                Reply::Respond(ResponseKind::ApiVersions(api_versions(&group_apis())))
            }
            RequestKind::Metadata(_) => {
                Reply::Respond(ResponseKind::Metadata(metadata_for(&[(1, me)])))
            }
            RequestKind::FindCoordinator(r) => Reply::Respond(ResponseKind::FindCoordinator(
                FindCoordinatorResponse::default().with_coordinators(
                    r.coordinator_keys
                        .iter()
                        .map(|k| {
                            Coordinator::default()
                                .with_key(k.clone())
                                .with_node_id(BrokerId(1))
                                .with_host(StrBytes::from_string(me.ip().to_string()))
                                .with_port(me.port() as i32)
                        })
                        .collect(),
                ),
            )),
            RequestKind::DescribeGroups(r) => {
                let mut left = failures.lock().unwrap();
                let code = if *left > 0 {
                    *left -= 1;
                    COORDINATOR_LOAD_IN_PROGRESS
                } else {
                    0
                };
                Reply::Respond(ResponseKind::DescribeGroups(
                    DescribeGroupsResponse::default().with_groups(
                        r.groups
                            .iter()
                            .map(|g| {
                                DescribedGroup::default()
                                    .with_error_code(code)
                                    .with_group_id(g.clone())
                                    .with_group_state(StrBytes::from_static_str("Stable"))
                                    .with_protocol_type(StrBytes::from_static_str("consumer"))
                            })
                            .collect(),
                    ),
                ))
            }
            _ => Reply::Silence,
        }
    })
}

#[tokio::test]
async fn kip511_falls_back_to_the_brokers_api_versions_version() {
    let handler: Handler = Arc::new(|h, _req| {
        if h.request_api_version > 2 {
            // An old broker: answers UNSUPPORTED_VERSION in a v0 body with its own range.
            let r =
                api_versions(&[(ApiKey::ApiVersions, 0, 2)]).with_error_code(UNSUPPORTED_VERSION);
            return Reply::RespondAt(ResponseKind::ApiVersions(r), 0);
        }
        let mut apis = group_apis();
        apis[0] = (ApiKey::ApiVersions, 0, 2);
        Reply::Respond(ResponseKind::ApiVersions(api_versions(&apis)))
    });
    let broker = scripted(handler).await;
    let mut admin = admin_for(broker.addr, 2_000);
    let versions = admin
        .broker_versions(&broker.addr.to_string())
        .await
        .unwrap();
    assert_eq!(versions.range(ApiKey::DescribeGroups), Some((0, 5)));
    let seen = broker.seen.lock().unwrap().clone();
    assert_eq!(seen, vec![(18, 4), (18, 2)], "v4 refused, then v2");
}

#[tokio::test]
async fn describe_retries_while_the_coordinator_loads() {
    let me = Arc::new(Mutex::new(None));
    let broker = scripted(coordinator_handler(me.clone(), 2)).await;
    *me.lock().unwrap() = Some(broker.addr);
    let mut admin = admin_for(broker.addr, 5_000);
    let groups = vec!["a".to_string(), "b".to_string()];
    let described = admin.describe_consumer_groups(&groups).await.unwrap();
    assert_eq!(described.len(), 2);
    for g in &groups {
        let d = described[g].as_ref().unwrap();
        assert_eq!(d.state, "Stable");
        assert_eq!(d.coordinator.port, broker.addr.port() as i32);
    }
    let seen = broker.seen.lock().unwrap().clone();
    let describes = seen
        .iter()
        .filter(|(k, _)| *k == ApiKey::DescribeGroups as i16)
        .count();
    assert_eq!(describes, 3, "two refused attempts, then success: {seen:?}");
    let lookups: Vec<i16> = seen
        .iter()
        .filter(|(k, _)| *k == ApiKey::FindCoordinator as i16)
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(
        lookups,
        vec![4],
        "one batched lookup, cached across retries"
    );
}

#[tokio::test]
async fn not_coordinator_sends_the_client_to_find_the_coordinator_again() {
    let me: Arc<Mutex<Option<std::net::SocketAddr>>> = Arc::new(Mutex::new(None));
    let moved = Arc::new(Mutex::new(true));
    let inner = coordinator_handler(me.clone(), 0);
    let handler: Handler = {
        let moved = moved.clone();
        Arc::new(move |h, req| match req {
            RequestKind::DescribeGroups(r)
                if std::mem::replace(&mut *moved.lock().unwrap(), false) =>
            {
                Reply::Respond(ResponseKind::DescribeGroups(
                    DescribeGroupsResponse::default().with_groups(
                        r.groups
                            .iter()
                            .map(|g| {
                                DescribedGroup::default()
                                    .with_group_id(g.clone())
                                    .with_error_code(NOT_COORDINATOR)
                            })
                            .collect(),
                    ),
                ))
            }
            other => inner(h, other),
        })
    };
    let broker = scripted(handler).await;
    *me.lock().unwrap() = Some(broker.addr);
    let mut admin = admin_for(broker.addr, 5_000);
    let described = admin
        .describe_consumer_groups(&["g".to_string()])
        .await
        .unwrap();
    assert!(described["g"].is_ok());
    let seen = broker.seen.lock().unwrap().clone();
    let lookups = seen
        .iter()
        .filter(|(k, _)| *k == ApiKey::FindCoordinator as i16)
        .count();
    assert_eq!(lookups, 2, "the coordinator was looked up again: {seen:?}");
}

#[tokio::test]
async fn old_brokers_get_one_find_coordinator_per_group() {
    let me: Arc<Mutex<Option<std::net::SocketAddr>>> = Arc::new(Mutex::new(None));
    let inner = coordinator_handler(me.clone(), 0);
    let handler: Handler = {
        let me = me.clone();
        Arc::new(move |h, req| match req {
            RequestKind::ApiVersions(_) => {
                let mut apis = group_apis();
                apis[2] = (ApiKey::FindCoordinator, 0, 2);
                Reply::Respond(ResponseKind::ApiVersions(api_versions(&apis)))
            }
            RequestKind::FindCoordinator(_) => {
                let addr = me.lock().unwrap().unwrap();
                Reply::Respond(ResponseKind::FindCoordinator(
                    FindCoordinatorResponse::default()
                        .with_node_id(BrokerId(1))
                        .with_host(StrBytes::from_string(addr.ip().to_string()))
                        .with_port(addr.port() as i32),
                ))
            }
            other => inner(h, other),
        })
    };
    let broker = scripted(handler).await;
    *me.lock().unwrap() = Some(broker.addr);
    let mut admin = admin_for(broker.addr, 5_000);
    let described = admin
        .describe_consumer_groups(&["a".to_string(), "b".to_string(), "c".to_string()])
        .await
        .unwrap();
    assert!(described.values().all(|d| d.is_ok()));
    let seen = broker.seen.lock().unwrap().clone();
    let lookups: Vec<i16> = seen
        .iter()
        .filter(|(k, _)| *k == ApiKey::FindCoordinator as i16)
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(lookups, vec![2, 2, 2]);
}

#[tokio::test]
async fn list_groups_merges_every_broker_and_keeps_consumer_groups_only() {
    let addrs: Arc<Mutex<Vec<std::net::SocketAddr>>> = Arc::new(Mutex::new(Vec::new()));
    let make = |groups: Vec<(&'static str, &'static str)>| -> Handler {
        let addrs = addrs.clone();
        Arc::new(move |_h, req| match req {
            RequestKind::ApiVersions(_) => {
                Reply::Respond(ResponseKind::ApiVersions(api_versions(&group_apis())))
            }
            RequestKind::Metadata(_) => {
                let a = addrs.lock().unwrap().clone();
                Reply::Respond(ResponseKind::Metadata(metadata_for(&[
                    (1, a[0]),
                    (2, a[1]),
                ])))
            }
            RequestKind::ListGroups(r) => {
                assert_eq!(r.states_filter, vec![StrBytes::from_static_str("Stable")]);
                Reply::Respond(ResponseKind::ListGroups(
                    ListGroupsResponse::default().with_groups(
                        groups
                            .iter()
                            .map(|(id, pt)| {
                                ListedGroup::default()
                                    .with_group_id(GroupId(StrBytes::from_static_str(id)))
                                    .with_protocol_type(StrBytes::from_static_str(pt))
                                    .with_group_state(StrBytes::from_static_str("Stable"))
                                    .with_group_type(StrBytes::from_static_str("classic"))
                            })
                            .collect(),
                    ),
                ))
            }
            _ => Reply::Silence,
        })
    };
    let b1 = scripted(make(vec![("a", "consumer"), ("connect-x", "connect")])).await;
    let b2 = scripted(make(vec![("b", ""), ("a", "consumer")])).await;
    *addrs.lock().unwrap() = vec![b1.addr, b2.addr];
    let mut admin = admin_for(b1.addr, 5_000);
    let filter = ListGroupsFilter {
        states: vec!["Stable".to_string()],
        types: vec![],
    };
    let listed = admin.list_consumer_groups(&filter).await.unwrap();
    let ids: Vec<(&str, bool)> = listed
        .iter()
        .map(|l| (l.group_id.as_str(), l.is_simple))
        .collect();
    assert_eq!(ids, vec![("b", true), ("a", false)]);
    assert!(listed.iter().all(|l| l.state.as_deref() == Some("Stable")));
}

#[tokio::test]
async fn a_silent_broker_ends_in_a_timeout_within_the_deadline() {
    let handler: Handler = Arc::new(|_h, req| match req {
        RequestKind::ApiVersions(_) => {
            Reply::Respond(ResponseKind::ApiVersions(api_versions(&group_apis())))
        }
        _ => Reply::Silence,
    });
    let broker = scripted(handler).await;
    let mut admin = admin_for(broker.addr, 300);
    let started = std::time::Instant::now();
    let err = admin
        .list_consumer_groups(&ListGroupsFilter::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Timeout { ref call } if call == "listConsumerGroups"),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        err.java_string(),
        "org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. Call: listConsumerGroups"
    );
}

#[tokio::test]
async fn garbage_and_oversized_responses_are_errors_not_crashes() {
    for raw in [
        vec![0, 0, 0, 0],                   // correlation id 0, then nothing: truncated body
        vec![0, 0, 0, 9, 1, 2, 3],          // wrong correlation id
        vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 1], // an entry cut short
    ] {
        let handler: Handler = Arc::new(move |_h, _req| Reply::Raw(raw.clone()));
        let broker = scripted(handler).await;
        let mut admin = admin_for(broker.addr, 500);
        let err = admin
            .broker_versions(&broker.addr.to_string())
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::Protocol { .. }), "{err:?}");
    }
    // A frame size beyond the limit is refused before reading it.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 64];
        let _ = sock.read(&mut buf).await;
        let _ = sock.write_all(&i32::MAX.to_be_bytes()).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let mut admin = admin_for(addr, 500);
    let err = admin.broker_versions(&addr.to_string()).await.unwrap_err();
    assert!(matches!(err, ClientError::Protocol { .. }), "{err:?}");
}

#[tokio::test]
async fn an_unreachable_bootstrap_times_out() {
    // A port nobody listens on: bind, learn the port, close.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let mut admin = admin_for(addr, 300);
    let err = admin
        .list_consumer_groups(&ListGroupsFilter::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
}

/// The DescribeTopicPartitions requests a scripted broker saw: the topics and the cursor.
type PageRequests = Arc<Mutex<Vec<(Vec<String>, Option<(String, i32)>)>>>;

/// A broker that pages DescribeTopicPartitions two partitions at a time over topics `a` (3
/// partitions) and `b` (2), whatever limit the client asks for (a broker may cap it lower).
fn paging_handler(requests: PageRequests) -> Handler {
    use kafka_protocol::messages::describe_topic_partitions_response::{
        Cursor, DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic,
    };
    Arc::new(move |_h, req| match req {
        RequestKind::ApiVersions(_) => Reply::Respond(ResponseKind::ApiVersions(api_versions(&[
            (ApiKey::ApiVersions, 0, 4),
            (ApiKey::Metadata, 0, 12),
            (ApiKey::DescribeTopicPartitions, 0, 0),
        ]))),
        RequestKind::DescribeTopicPartitions(r) => {
            let names: Vec<String> = r.topics.iter().map(|t| t.name.0.to_string()).collect();
            let cursor = r
                .cursor
                .as_ref()
                .map(|c| (c.topic_name.0.to_string(), c.partition_index));
            requests
                .lock()
                .unwrap()
                .push((names.clone(), cursor.clone()));
            let counts = [("a", 3), ("b", 2)];
            let mut room = 2;
            let mut topics = Vec::new();
            let mut next = None;
            for name in &names {
                let Some((_, count)) = counts.iter().find(|(n, _)| n == name) else {
                    topics.push(
                        DescribeTopicPartitionsResponseTopic::default()
                            .with_name(Some(TopicName(StrBytes::from_string(name.clone()))))
                            .with_error_code(3),
                    );
                    continue;
                };
                if room == 0 {
                    next = Some((name.clone(), 0));
                    break;
                }
                let start = match &cursor {
                    Some((t, p)) if t == name => *p,
                    _ => 0,
                };
                let upper = (*count).min(start + room);
                topics.push(
                    DescribeTopicPartitionsResponseTopic::default()
                        .with_name(Some(TopicName(StrBytes::from_string(name.clone()))))
                        .with_partitions(
                            (start..upper)
                                .map(|p| {
                                    DescribeTopicPartitionsResponsePartition::default()
                                        .with_partition_index(p)
                                        .with_leader_id(BrokerId(1))
                                        .with_replica_nodes(vec![BrokerId(1)])
                                        .with_isr_nodes(vec![BrokerId(1)])
                                        .with_eligible_leader_replicas(Some(vec![]))
                                        .with_last_known_elr(Some(vec![]))
                                })
                                .collect(),
                        ),
                );
                room -= upper - start;
                if upper < *count {
                    next = Some((name.clone(), upper));
                    break;
                }
            }
            Reply::Respond(ResponseKind::DescribeTopicPartitions(
                DescribeTopicPartitionsResponse::default()
                    .with_topics(topics)
                    .with_next_cursor(next.map(|(t, p)| {
                        Cursor::default()
                            .with_topic_name(TopicName(StrBytes::from_string(t)))
                            .with_partition_index(p)
                    })),
            ))
        }
        other => panic!("unexpected {other:?}"),
    })
}

#[tokio::test]
async fn describe_topics_follows_describe_topic_partitions_cursors() {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let broker = scripted(paging_handler(requests.clone())).await;
    let mut admin = admin_for(broker.addr, 5_000);
    let names = ["b".to_string(), "zz".to_string(), "a".to_string()];
    let described = admin.describe_topics(&names).await.unwrap();
    let a = described["a"].as_ref().unwrap();
    let b = described["b"].as_ref().unwrap();
    let indexes = |d: &super::topics::TopicDescription| {
        d.partitions.iter().map(|p| p.partition).collect::<Vec<_>>()
    };
    assert_eq!((indexes(a), indexes(b)), (vec![0, 1, 2], vec![0, 1]));
    assert_eq!(a.partitions[0].elr, Some(vec![]));
    assert_eq!(described["zz"].as_ref().unwrap_err().code, 3);
    // Sorted names; each next page from the cursor's topic on, at the cursor's partition.
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        *requests.lock().unwrap(),
        vec![
            (s(&["a", "b", "zz"]), None),
            (s(&["a", "b", "zz"]), Some(("a".to_string(), 2))),
            (s(&["b", "zz"]), Some(("b".to_string(), 1))),
        ]
    );
}
