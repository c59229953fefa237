//! `cohort groups` end to end through its real client over loopback TCP, against a scripted
//! broker that keeps a small cluster's state (groups, members, committed offsets, partitions with
//! record timestamps) and answers as Kafka's protocol prescribes. The outputs are pinned to the
//! exact bytes Kafka 4.0's tool prints for the same state; row orders that come from Java hash
//! maps are worked out by hand in the comments. The same scenarios run against Cohort itself in
//! `tests/operator_*`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bytes::{BufMut, BytesMut};
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as AssignedTopic;
use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::metadata_response::{
    MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartitions, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};

use super::context::Console;
use crate::client::testing::{api_versions, metadata_for, scripted, Handler, Reply};

const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
const UNKNOWN_MEMBER_ID: i16 = 25;
const NON_EMPTY_GROUP: i16 = 68;
const GROUP_ID_NOT_FOUND: i16 = 69;
const GROUP_SUBSCRIBED_TO_TOPIC: i16 = 86;

#[derive(Clone, Default)]
struct Member {
    id: &'static str,
    client: &'static str,
    host: &'static str,
    instance: Option<&'static str>,
    assignment: Vec<(&'static str, Vec<i32>)>,
}

#[derive(Clone, Default)]
struct Group {
    state: &'static str,
    protocol_type: &'static str,
    assignor: &'static str,
    members: Vec<Member>,
    offsets: BTreeMap<(String, i32), i64>,
}

/// A partition: its log starts at `log_start` and holds one record per timestamp.
#[derive(Clone)]
struct Partition {
    log_start: i64,
    timestamps: Vec<i64>,
}

impl Partition {
    fn log_end(&self) -> i64 {
        self.log_start + self.timestamps.len() as i64
    }
}

#[derive(Default)]
struct Cluster {
    port: i32,
    groups: BTreeMap<String, Group>,
    topics: BTreeMap<String, Vec<Partition>>,
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn assignment_bytes(assignment: &[(&str, Vec<i32>)]) -> bytes::Bytes {
    let a = ConsumerProtocolAssignment::default().with_assigned_partitions(
        assignment
            .iter()
            .map(|(t, ps)| {
                AssignedTopic::default()
                    .with_topic(TopicName(s(t)))
                    .with_partitions(ps.clone())
            })
            .collect(),
    );
    let mut b = BytesMut::new();
    b.put_i16(0);
    a.encode(&mut b, 0).unwrap();
    b.freeze()
}

fn handler(cluster: Arc<Mutex<Cluster>>) -> Handler {
    Arc::new(move |_h, req| {
        let mut c = cluster.lock().unwrap();
        let port = c.port;
        let me: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let response = match req {
            RequestKind::ApiVersions(_) => ResponseKind::ApiVersions(api_versions(&[
                (ApiKey::ApiVersions, 0, 3),
                (ApiKey::Metadata, 0, 12),
                (ApiKey::FindCoordinator, 0, 4),
                (ApiKey::ListGroups, 0, 5),
                (ApiKey::DescribeGroups, 0, 5),
                (ApiKey::OffsetFetch, 0, 8),
                (ApiKey::ListOffsets, 0, 7),
                (ApiKey::OffsetCommit, 0, 8),
                (ApiKey::OffsetDelete, 0, 0),
                (ApiKey::DeleteGroups, 0, 2),
            ])),
            RequestKind::Metadata(r) => {
                let names: Vec<String> = match r.topics {
                    None => c.topics.keys().cloned().collect(),
                    Some(ts) => ts
                        .iter()
                        .filter_map(|t| t.name.as_ref().map(|n| n.0.to_string()))
                        .collect(),
                };
                let topics = names
                    .iter()
                    .map(|n| match c.topics.get(n) {
                        None => MetadataResponseTopic::default()
                            .with_name(Some(TopicName(s(n))))
                            .with_error_code(UNKNOWN_TOPIC_OR_PARTITION),
                        Some(ps) => MetadataResponseTopic::default()
                            .with_name(Some(TopicName(s(n))))
                            .with_partitions(
                                (0..ps.len() as i32)
                                    .map(|p| {
                                        MetadataResponsePartition::default()
                                            .with_partition_index(p)
                                            .with_leader_id(BrokerId(1))
                                            .with_replica_nodes(vec![BrokerId(1)])
                                            .with_isr_nodes(vec![BrokerId(1)])
                                    })
                                    .collect(),
                            ),
                    })
                    .collect();
                ResponseKind::Metadata(metadata_for(&[(1, me)]).with_topics(topics))
            }
            RequestKind::FindCoordinator(r) => ResponseKind::FindCoordinator(
                FindCoordinatorResponse::default().with_coordinators(
                    r.coordinator_keys
                        .iter()
                        .map(|k| {
                            Coordinator::default()
                                .with_key(k.clone())
                                .with_node_id(BrokerId(1))
                                .with_host(s("127.0.0.1"))
                                .with_port(port)
                        })
                        .collect(),
                ),
            ),
            RequestKind::ListGroups(r) => ResponseKind::ListGroups(
                ListGroupsResponse::default().with_groups(
                    c.groups
                        .iter()
                        .filter(|(_, g)| {
                            r.states_filter.is_empty()
                                || r.states_filter
                                    .iter()
                                    .any(|f| f.eq_ignore_ascii_case(g.state))
                        })
                        .map(|(id, g)| {
                            ListedGroup::default()
                                .with_group_id(GroupId(s(id)))
                                .with_protocol_type(s(g.protocol_type))
                                .with_group_state(s(g.state))
                                .with_group_type(s("classic"))
                        })
                        .collect(),
                ),
            ),
            RequestKind::DescribeGroups(r) => ResponseKind::DescribeGroups(
                DescribeGroupsResponse::default().with_groups(
                    r.groups
                        .iter()
                        .map(|id| match c.groups.get(id.0.as_str()) {
                            None => DescribedGroup::default()
                                .with_group_id(id.clone())
                                .with_group_state(s("Dead")),
                            Some(g) => {
                                let stable = g.state == "Stable";
                                DescribedGroup::default()
                                    .with_group_id(id.clone())
                                    .with_group_state(s(g.state))
                                    .with_protocol_type(s(g.protocol_type))
                                    .with_protocol_data(s(if stable { g.assignor } else { "" }))
                                    .with_members(
                                        g.members
                                            .iter()
                                            .map(|m| {
                                                DescribedGroupMember::default()
                                                    .with_member_id(s(m.id))
                                                    .with_group_instance_id(m.instance.map(s))
                                                    .with_client_id(s(m.client))
                                                    .with_client_host(s(m.host))
                                                    .with_member_assignment(if stable {
                                                        assignment_bytes(&m.assignment)
                                                    } else {
                                                        bytes::Bytes::new()
                                                    })
                                            })
                                            .collect(),
                                    )
                            }
                        })
                        .collect(),
                ),
            ),
            RequestKind::OffsetFetch(r) => ResponseKind::OffsetFetch(
                OffsetFetchResponse::default().with_groups(
                    r.groups
                        .iter()
                        .map(|g| {
                            let mut by_topic: BTreeMap<String, Vec<OffsetFetchResponsePartitions>> =
                                BTreeMap::new();
                            if let Some(group) = c.groups.get(g.group_id.0.as_str()) {
                                for ((t, p), o) in &group.offsets {
                                    by_topic.entry(t.clone()).or_default().push(
                                        OffsetFetchResponsePartitions::default()
                                            .with_partition_index(*p)
                                            .with_committed_offset(*o)
                                            .with_metadata(Some(s(""))),
                                    );
                                }
                            }
                            OffsetFetchResponseGroup::default()
                                .with_group_id(g.group_id.clone())
                                .with_topics(
                                    by_topic
                                        .into_iter()
                                        .map(|(t, ps)| {
                                            OffsetFetchResponseTopics::default()
                                                .with_name(TopicName(s(&t)))
                                                .with_partitions(ps)
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                ),
            ),
            RequestKind::ListOffsets(r) => ResponseKind::ListOffsets(
                ListOffsetsResponse::default().with_topics(
                    r.topics
                        .iter()
                        .map(|t| {
                            let parts = c.topics.get(t.name.0.as_str());
                            ListOffsetsTopicResponse::default()
                                .with_name(t.name.clone())
                                .with_partitions(
                                    t.partitions
                                        .iter()
                                        .map(|p| {
                                            let base = ListOffsetsPartitionResponse::default()
                                                .with_partition_index(p.partition_index);
                                            let Some(part) = parts
                                                .and_then(|ps| ps.get(p.partition_index as usize))
                                            else {
                                                return base
                                                    .with_error_code(UNKNOWN_TOPIC_OR_PARTITION);
                                            };
                                            let offset = match p.timestamp {
                                                -1 => part.log_end(),
                                                -2 => part.log_start,
                                                ts => part
                                                    .timestamps
                                                    .iter()
                                                    .position(|x| *x >= ts)
                                                    .map(|i| part.log_start + i as i64)
                                                    .unwrap_or(-1),
                                            };
                                            base.with_offset(offset).with_timestamp(-1)
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                ),
            ),
            RequestKind::OffsetCommit(r) => {
                let id = r.group_id.0.to_string();
                let busy = c.groups.get(&id).is_some_and(|g| !g.members.is_empty());
                let group = c.groups.entry(id).or_insert_with(|| Group {
                    state: "Empty",
                    ..Group::default()
                });
                let topics = r
                    .topics
                    .iter()
                    .map(|t| {
                        OffsetCommitResponseTopic::default()
                            .with_name(t.name.clone())
                            .with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        let code = if busy { UNKNOWN_MEMBER_ID } else { 0 };
                                        if !busy {
                                            group.offsets.insert(
                                                (t.name.0.to_string(), p.partition_index),
                                                p.committed_offset,
                                            );
                                        }
                                        OffsetCommitResponsePartition::default()
                                            .with_partition_index(p.partition_index)
                                            .with_error_code(code)
                                    })
                                    .collect(),
                            )
                    })
                    .collect();
                ResponseKind::OffsetCommit(OffsetCommitResponse::default().with_topics(topics))
            }
            RequestKind::OffsetDelete(r) => {
                let Some(group) = c.groups.get_mut(r.group_id.0.as_str()) else {
                    return Reply::Respond(ResponseKind::OffsetDelete(
                        OffsetDeleteResponse::default().with_error_code(GROUP_ID_NOT_FOUND),
                    ));
                };
                let subscribed: Vec<&str> = group
                    .members
                    .iter()
                    .flat_map(|m| m.assignment.iter().map(|(t, _)| *t))
                    .collect();
                let topics = r
                    .topics
                    .iter()
                    .map(|t| {
                        let name = t.name.0.to_string();
                        let busy = subscribed.contains(&name.as_str());
                        OffsetDeleteResponseTopic::default()
                            .with_name(t.name.clone())
                            .with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        if !busy {
                                            group
                                                .offsets
                                                .remove(&(name.clone(), p.partition_index));
                                        }
                                        OffsetDeleteResponsePartition::default()
                                            .with_partition_index(p.partition_index)
                                            .with_error_code(if busy {
                                                GROUP_SUBSCRIBED_TO_TOPIC
                                            } else {
                                                0
                                            })
                                    })
                                    .collect(),
                            )
                    })
                    .collect();
                ResponseKind::OffsetDelete(OffsetDeleteResponse::default().with_topics(topics))
            }
            RequestKind::DeleteGroups(r) => ResponseKind::DeleteGroups(
                DeleteGroupsResponse::default().with_results(
                    r.groups_names
                        .iter()
                        .map(|g| {
                            let code = match c.groups.get(g.0.as_str()) {
                                None => GROUP_ID_NOT_FOUND,
                                Some(group) if !group.members.is_empty() => NON_EMPTY_GROUP,
                                Some(_) => {
                                    c.groups.remove(g.0.as_str());
                                    0
                                }
                            };
                            DeletableGroupResult::default()
                                .with_group_id(g.clone())
                                .with_error_code(code)
                        })
                        .collect(),
                ),
            ),
            _ => return Reply::Silence,
        };
        Reply::Respond(response)
    })
}

/// A cluster with topic `t` (4 partitions) and `u` (1), and groups:
/// - `active`: Stable, two members; `c-1` owns t-0,t-1,t-2, `c-2` owns t-3; commits on t and u-0.
/// - `idle`: Empty, commits on t-0 and t-1.
fn cluster() -> Arc<Mutex<Cluster>> {
    let mut c = Cluster::default();
    let ts = |n: i64, from: i64| (0..n).map(|i| from + i * 1000).collect::<Vec<_>>();
    c.topics.insert(
        "t".into(),
        vec![
            Partition {
                log_start: 0,
                timestamps: ts(10, 1_000_000),
            },
            Partition {
                log_start: 5,
                timestamps: ts(15, 1_000_000),
            },
            Partition {
                log_start: 0,
                timestamps: ts(3, 1_000_000),
            },
            Partition {
                log_start: 0,
                timestamps: vec![],
            },
        ],
    );
    c.topics.insert(
        "u".into(),
        vec![Partition {
            log_start: 0,
            timestamps: ts(7, 1_000_000),
        }],
    );
    let mut offsets = BTreeMap::new();
    offsets.insert(("t".to_string(), 0), 4);
    offsets.insert(("t".to_string(), 1), 20);
    offsets.insert(("t".to_string(), 2), 3);
    offsets.insert(("u".to_string(), 0), 2);
    c.groups.insert(
        "active".into(),
        Group {
            state: "Stable",
            protocol_type: "consumer",
            assignor: "range",
            members: vec![
                Member {
                    id: "c-2-bbbb",
                    client: "c-2",
                    host: "/127.0.0.1",
                    assignment: vec![("t", vec![3])],
                    ..Member::default()
                },
                Member {
                    id: "c-1-aaaa",
                    client: "c-1",
                    host: "/127.0.0.1",
                    assignment: vec![("t", vec![0, 1, 2])],
                    ..Member::default()
                },
            ],
            offsets,
        },
    );
    let mut idle = BTreeMap::new();
    idle.insert(("t".to_string(), 0), 2);
    idle.insert(("t".to_string(), 1), 9);
    c.groups.insert(
        "idle".into(),
        Group {
            state: "Empty",
            protocol_type: "consumer",
            offsets: idle,
            ..Group::default()
        },
    );
    Arc::new(Mutex::new(c))
}

struct Ran {
    code: i32,
    out: String,
    err: String,
}

async fn run_groups(state: &Arc<Mutex<Cluster>>, args: &[&str]) -> Ran {
    let broker = scripted(handler(state.clone())).await;
    state.lock().unwrap().port = broker.addr.port() as i32;
    let mut argv: Vec<String> = vec!["--bootstrap-server".into(), broker.addr.to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = {
        let mut console = Console {
            out: &mut out,
            err: &mut err,
            progress: false,
        };
        super::run(&argv, &mut console).await
    };
    Ran {
        code,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
    }
}

fn row(cols: &[(&str, usize)]) -> String {
    let mut l = String::from("\n");
    for (i, (v, w)) in cols.iter().enumerate() {
        if i > 0 {
            l.push(' ');
        }
        l.push_str(&format!("{v:<w$}", w = *w));
    }
    l
}

#[tokio::test]
async fn describe_offsets_of_a_stable_group() {
    let c = cluster();
    let r = run_groups(&c, &["--describe", "--group", "active"]).await;
    assert_eq!(r.code, 0);
    assert_eq!(r.err, "");
    let line = |cols: [&str; 8]| {
        row(&[
            ("active", 15),
            (cols[0], 15),
            (cols[1], 10),
            (cols[2], 15),
            (cols[3], 15),
            (cols[4], 15),
            (cols[5], 15),
            (cols[6], 15),
            (cols[7], 0),
        ])
    };
    // Members by assignment size: c-1 (3 partitions) first. Its rows come out of a HashMap of
    // t-0..t-2: "t".hashCode() = 116, t-p hashes to 1077 + 31p, buckets 5, 4, 3 of 16 → 2, 1, 0.
    // Then c-2's t-3, then u-0, committed but owned by nobody.
    let expected = [
        row(&[
            ("GROUP", 15),
            ("TOPIC", 15),
            ("PARTITION", 10),
            ("CURRENT-OFFSET", 15),
            ("LOG-END-OFFSET", 15),
            ("LAG", 15),
            ("CONSUMER-ID", 15),
            ("HOST", 15),
            ("CLIENT-ID", 0),
        ]),
        line(["t", "2", "3", "3", "0", "c-1-aaaa", "/127.0.0.1", "c-1"]),
        line(["t", "1", "20", "20", "0", "c-1-aaaa", "/127.0.0.1", "c-1"]),
        line(["t", "0", "4", "10", "6", "c-1-aaaa", "/127.0.0.1", "c-1"]),
        line(["t", "3", "-", "0", "-", "c-2-bbbb", "/127.0.0.1", "c-2"]),
        line(["u", "0", "2", "7", "5", "-", "-", "-"]),
    ]
    .concat()
        + "\n";
    assert_eq!(r.out, expected);
}

#[tokio::test]
async fn describe_an_empty_group_and_a_missing_one() {
    let c = cluster();
    let r = run_groups(&c, &["--describe", "--group", "idle", "--group", "nobody"]).await;
    assert_eq!(r.code, 0);
    assert_eq!(r.err, "\nConsumer group 'idle' has no active members.\n");
    // Groups print in id order; "idle" rows come from a HashMap of t-0, t-1: buckets 5, 4 → 1, 0.
    let line = |p: &str, cur: &str, end: &str, lag: &str| {
        row(&[
            ("idle", 15),
            ("t", 15),
            (p, 10),
            (cur, 15),
            (end, 15),
            (lag, 15),
            ("-", 15),
            ("-", 15),
            ("-", 0),
        ])
    };
    let expected = [
        row(&[
            ("GROUP", 15),
            ("TOPIC", 15),
            ("PARTITION", 10),
            ("CURRENT-OFFSET", 15),
            ("LOG-END-OFFSET", 15),
            ("LAG", 15),
            ("CONSUMER-ID", 15),
            ("HOST", 15),
            ("CLIENT-ID", 0),
        ]),
        line("1", "9", "20", "11"),
        line("0", "2", "10", "8"),
        "\n".to_string(),
        "\nError: Consumer group 'nobody' does not exist.\n".to_string(),
    ]
    .concat();
    assert_eq!(r.out, expected);
}

/// A deliberate difference from Kafka 4.0's tool (README, "Where the tools differ"): Kafka
/// fails the whole describe when a committed offset's topic is gone; here that partition's
/// LOG-END-OFFSET and LAG read `-` and the rest of the group is still described.
#[tokio::test]
async fn describe_shows_dashes_for_a_committed_topic_the_cluster_no_longer_knows() {
    let c = cluster();
    let mut offsets = BTreeMap::new();
    offsets.insert(("gone".to_string(), 0), 5);
    offsets.insert(("u".to_string(), 0), 2);
    c.lock().unwrap().groups.insert(
        "orphan".into(),
        Group {
            state: "Empty",
            protocol_type: "consumer",
            offsets,
            ..Group::default()
        },
    );
    let r = run_groups(&c, &["--describe", "--group", "orphan"]).await;
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.err, "\nConsumer group 'orphan' has no active members.\n");
    let line = |t: &str, cur: &str, end: &str, lag: &str| {
        row(&[
            ("orphan", 15),
            (t, 15),
            ("0", 10),
            (cur, 15),
            (end, 15),
            (lag, 15),
            ("-", 15),
            ("-", 15),
            ("-", 0),
        ])
    };
    let header = row(&[
        ("GROUP", 15),
        ("TOPIC", 15),
        ("PARTITION", 10),
        ("CURRENT-OFFSET", 15),
        ("LOG-END-OFFSET", 15),
        ("LAG", 15),
        ("CONSUMER-ID", 15),
        ("HOST", 15),
        ("CLIENT-ID", 0),
    ]);
    let gone = line("gone", "5", "-", "-");
    let u = line("u", "2", "7", "5");
    assert!(r.out.starts_with(&header), "{}", r.out);
    assert!(r.out.contains(&gone), "{}", r.out);
    assert!(r.out.contains(&u), "{}", r.out);
    assert_eq!(
        r.out.len(),
        header.len() + gone.len() + u.len() + 1,
        "{}",
        r.out
    );
}

#[tokio::test]
async fn describe_members_and_state() {
    let c = cluster();
    let r = run_groups(
        &c,
        &["--describe", "--group", "active", "--members", "--verbose"],
    )
    .await;
    let header = format!(
        "\n{:<15} {:<15} {:<15} {:<15} {:<15} {:<15} {:<20} {:<15} {:<20}\n",
        "GROUP",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
        "#PARTITIONS",
        "CURRENT-EPOCH",
        "CURRENT-ASSIGNMENT",
        "TARGET-EPOCH",
        "TARGET-ASSIGNMENT"
    );
    let m = |id: &str, client: &str, n: &str, a: &str| {
        format!(
            "{:<15} {:<15} {:<15} {:<15} {:<15} {:<15} {:<20} {:<15} {:<20}\n",
            "active", id, "/127.0.0.1", client, n, "-", a, "-", "-"
        )
    };
    assert_eq!(
        r.out,
        format!(
            "{header}{}{}",
            m("c-2-bbbb", "c-2", "1", "t:3"),
            m("c-1-aaaa", "c-1", "3", "t:0,1,2")
        )
    );

    let r = run_groups(&c, &["--describe", "--all-groups", "--state"]).await;
    let port = c.lock().unwrap().port;
    let coordinator = format!("127.0.0.1:{port}  (1)");
    let state = |g: &str, strategy: &str, st: &str, n: &str| {
        format!(
            "\n{:<15} {:<25} {:<20} {:<20} {}\n{:<15} {:<25} {:<20} {:<20} {}\n",
            "GROUP",
            "COORDINATOR (ID)",
            "ASSIGNMENT-STRATEGY",
            "STATE",
            "#MEMBERS",
            g,
            coordinator,
            strategy,
            st,
            n
        )
    };
    assert_eq!(
        r.out,
        format!(
            "{}{}",
            state("active", "range", "Stable", "2"),
            state("idle", "-", "Empty", "0")
        )
    );
    assert_eq!(r.err, "\nConsumer group 'idle' has no active members.\n");
}

#[tokio::test]
async fn list_plain_and_with_state() {
    let c = cluster();
    let r = run_groups(&c, &["--list"]).await;
    // "idle".hashCode() = 3227604 (bucket 5 of 16), "active" 2872016646 as unsigned (bucket 9).
    assert_eq!(r.out, "idle\nactive\n");
    let r = run_groups(&c, &["--list", "--state", "stable"]).await;
    assert_eq!(
        r.out,
        format!(
            "{:<25} {:<20}\n{:<25} {:<20}\n",
            "GROUP", "STATE", "active", "Stable"
        )
    );
    let r = run_groups(&c, &["--list", "--state", "nope"]).await;
    assert_eq!(r.code, 1);
    assert!(r.err.starts_with("Invalid state list 'nope'. Valid states are: PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, Assigning, Reconciling\n"));
}

fn plan(lines: &[(&str, &str, &str, &str)]) -> String {
    let mut out = String::new();
    for (g, t, p, o) in lines {
        out.push_str(&format!("\n{g:<30} {t:<30} {p:<10} {o:<15}"));
    }
    out + "\n"
}

#[tokio::test]
async fn reset_specifiers_follow_kafkas_rules() {
    let c = cluster();
    let header = ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET");
    // --all-topics = the committed partitions t-0 and t-1; HashMap order → t-1, t-0.
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--all-topics",
            "--to-earliest",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(
        r.out,
        plan(&[header, ("idle", "t", "1", "5"), ("idle", "t", "0", "0")])
    );
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--all-topics",
            "--to-latest",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(
        r.out,
        plan(&[header, ("idle", "t", "1", "20"), ("idle", "t", "0", "10")])
    );
    // --to-offset clamps into [log start, log end], warning on stderr.
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--topic",
            "t:0,1",
            "--to-offset",
            "12",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(
        r.out,
        plan(&[header, ("idle", "t", "1", "12"), ("idle", "t", "0", "10")])
    );
    assert_eq!(r.err, "WARN New offset (12) is higher than latest offset for topic partition t-0. Value will be set to 10\n");
    // --shift-by past either end.
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--all-topics",
            "--shift-by",
            "-7",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(
        r.out,
        plan(&[header, ("idle", "t", "1", "5"), ("idle", "t", "0", "0")])
    );
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--all-topics",
            "--shift-by",
            "100",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(
        r.out,
        plan(&[header, ("idle", "t", "1", "20"), ("idle", "t", "0", "10")])
    );
    // --to-datetime: t-0's records start at 1_000_000 ms, one per second; t-3 is empty and
    // falls back to its log end with Kafka's notice.
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--topic",
            "t:0,3",
            "--to-datetime",
            "1970-01-01T00:16:43.500",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(
        r.out,
        "\nWarn: Partition 3 from topic t is empty. Falling back to latest known offset.\n"
            .to_string()
            + &plan(&[header, ("idle", "t", "3", "0"), ("idle", "t", "0", "4")])
    );
    // --to-current keeps committed offsets, and uses the log end where there is none.
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--topic",
            "t",
            "--to-current",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(
        r.out,
        plan(&[
            header,
            ("idle", "t", "3", "0"),
            ("idle", "t", "2", "3"),
            ("idle", "t", "1", "9"),
            ("idle", "t", "0", "2")
        ])
    );
    // A shift without a committed offset is a usage error.
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--topic",
            "t:3",
            "--shift-by",
            "1",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(r.code, 1);
    assert!(r.err.starts_with(
        "Cannot shift offset for partition t-3 since there is no current committed offset\n"
    ));
    // Nothing was written by dry runs.
    let offsets = c.lock().unwrap().groups["idle"].offsets.clone();
    assert_eq!(offsets.values().copied().collect::<Vec<_>>(), vec![2, 9]);
}

#[tokio::test]
async fn reset_execute_export_and_from_file_round_trip() {
    let c = cluster();
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--all-topics",
            "--to-earliest",
            "--execute",
        ],
    )
    .await;
    assert_eq!(r.code, 0);
    let offsets = c.lock().unwrap().groups["idle"].offsets.clone();
    assert_eq!(offsets.values().copied().collect::<Vec<_>>(), vec![0, 5]);

    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--topic",
            "t:0,1",
            "--to-offset",
            "7",
            "--export",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(r.out, "t,1,7\nt,0,7\n\n");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plan.csv");
    std::fs::write(&file, &r.out).unwrap();
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "idle",
            "--from-file",
            file.to_str().unwrap(),
            "--execute",
        ],
    )
    .await;
    assert_eq!(
        r.out,
        plan(&[
            ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"),
            ("idle", "t", "1", "7"),
            ("idle", "t", "0", "7")
        ])
    );
    let offsets = c.lock().unwrap().groups["idle"].offsets.clone();
    assert_eq!(offsets.values().copied().collect::<Vec<_>>(), vec![7, 7]);

    // The multi-group layout round-trips too.
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--all-groups",
            "--topic",
            "u:0",
            "--to-latest",
            "--export",
            "--dry-run",
        ],
    )
    .await;
    assert!(r.out.contains("idle,u,0,7\n"), "{}", r.out);
}

#[tokio::test]
async fn reset_of_an_active_group_is_refused_and_changes_nothing() {
    let c = cluster();
    let before = c.lock().unwrap().groups["active"].offsets.clone();
    let r = run_groups(
        &c,
        &[
            "--reset-offsets",
            "--group",
            "active",
            "--all-topics",
            "--to-earliest",
            "--execute",
        ],
    )
    .await;
    assert_eq!(r.code, 0);
    assert_eq!(
        r.out,
        "\nError: Assignments can only be reset if the group 'active' is inactive, but the current state is Stable.\n\n\
GROUP                          TOPIC                          PARTITION  NEW-OFFSET     \n"
    );
    assert_eq!(c.lock().unwrap().groups["active"].offsets, before);
}

#[tokio::test]
async fn delete_offsets_and_groups() {
    let c = cluster();
    let r = run_groups(
        &c,
        &["--delete-offsets", "--group", "active", "--topic", "u"],
    )
    .await;
    assert_eq!(
        r.out,
        format!("Request succeed for deleting offsets with topic u group active\n\n{:<30} {:<15} {:<15}\n{:<30} {:<15} {:<15}\n", "TOPIC", "PARTITION", "STATUS", "u", "0", "Successful")
    );
    let r = run_groups(
        &c,
        &["--delete-offsets", "--group", "active", "--topic", "t:1"],
    )
    .await;
    assert_eq!(
        r.out,
        format!(
            "\nError: Encounter some partition level error, see the follow-up details:\n\n{:<30} {:<15} {:<15}\n{:<30} {:<15} {}\n",
            "TOPIC", "PARTITION", "STATUS", "t", "1",
            "Error: :org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."
        )
    );
    let r = run_groups(&c, &["--delete", "--group", "idle", "--group", "active"]).await;
    assert_eq!(
        r.out,
        "\nError: Deletion of some consumer groups failed:\n* Group 'active' could not be deleted due to: java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.\n\nThese consumer groups were deleted successfully: 'idle', '\n"
    );
    assert!(!c.lock().unwrap().groups.contains_key("idle"));
}

#[tokio::test]
async fn lag_status_column_from_sampling() {
    let c = cluster();
    // While the tool samples, records keep arriving on t-2 and the group never commits.
    let feeder = {
        let c = c.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                c.lock().unwrap().topics.get_mut("t").unwrap()[2]
                    .timestamps
                    .push(2_000_000);
            }
        })
    };
    let r = run_groups(
        &c,
        &[
            "--describe",
            "--group",
            "active",
            "--lag-status",
            "--lag-window-ms",
            "400",
        ],
    )
    .await;
    feeder.abort();
    assert_eq!(r.code, 0, "{}", r.err);
    let rows: Vec<Vec<&str>> = r
        .out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0][..8],
        [
            "GROUP",
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
            "LAG-STATUS",
            "CONSUMER-ID"
        ]
    );
    let status: BTreeMap<(&str, &str), &str> =
        rows[1..].iter().map(|r| ((r[1], r[2]), r[6])).collect();
    // t-1 is caught up; t-0 and u-0 are behind and never move; t-2 falls behind with no commit,
    // but it was caught up at the start of the window, and a zero lag anywhere in the window is
    // OK (Burrow's first rule); t-3 has no committed offset.
    assert_eq!(status[&("t", "1")], "OK");
    assert_eq!(status[&("t", "0")], "STOPPED");
    assert_eq!(status[&("u", "0")], "STOPPED");
    assert_eq!(status[&("t", "2")], "OK");
    assert_eq!(status[&("t", "3")], "-");
}
