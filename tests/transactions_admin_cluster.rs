//! The transaction operator APIs on a three-node cluster (decision 0143), over real
//! processes: DescribeProducers is answered by a partition's owner and refused
//! NOT_LEADER_OR_FOLLOWER by every other node; DescribeTransactions is answered by the
//! coordinator (the Raft leader) and NOT_COORDINATOR elsewhere; ListTransactions on a node that
//! coordinates nothing is an empty list without error, as the Admin client expects when it asks
//! every broker.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;

use std::time::Duration;

use cluster_support::{create_topic, eventually, metadata, s, try_call, ScriptCluster};
use kafka_protocol::messages::*;

const T: Duration = Duration::from_secs(5);
const NOT_LEADER_OR_FOLLOWER: i16 = 6;
const NOT_COORDINATOR: i16 = 16;
const TRANSACTIONAL_ID_NOT_FOUND: i16 = 105;

fn describe_producers(
    c: &ScriptCluster,
    node: u64,
    topic: &str,
    partition: i32,
) -> Option<describe_producers_response::PartitionResponse> {
    let req = DescribeProducersRequest::default().with_topics(vec![
        describe_producers_request::TopicRequest::default()
            .with_name(TopicName(s(topic)))
            .with_partition_indexes(vec![partition]),
    ]);
    match try_call(
        c.kafka(node),
        ApiKey::DescribeProducers,
        0,
        RequestKind::DescribeProducers(req),
        T,
    )
    .ok()?
    {
        ResponseKind::DescribeProducers(mut r) => Some(r.topics.remove(0).partitions.remove(0)),
        other => panic!("{other:?}"),
    }
}

fn describe_txn(c: &ScriptCluster, node: u64, id: &str) -> Option<i16> {
    let req =
        DescribeTransactionsRequest::default().with_transactional_ids(vec![TransactionalId(s(id))]);
    match try_call(
        c.kafka(node),
        ApiKey::DescribeTransactions,
        0,
        RequestKind::DescribeTransactions(req),
        T,
    )
    .ok()?
    {
        ResponseKind::DescribeTransactions(r) => Some(r.transaction_states[0].error_code),
        other => panic!("{other:?}"),
    }
}

fn list_txns(c: &ScriptCluster, node: u64) -> Option<(i16, usize)> {
    match try_call(
        c.kafka(node),
        ApiKey::ListTransactions,
        1,
        RequestKind::ListTransactions(ListTransactionsRequest::default()),
        T,
    )
    .ok()?
    {
        ResponseKind::ListTransactions(r) => Some((r.error_code, r.transaction_states.len())),
        other => panic!("{other:?}"),
    }
}

#[test]
fn operator_apis_answer_from_the_owner_and_the_coordinator_only() {
    let dir = tempfile::tempdir().unwrap();
    let c = ScriptCluster::up(dir.path(), &[]);
    c.wait_healthy(Duration::from_secs(60));
    let leader = c.wait_controller(&[1, 2, 3], Duration::from_secs(30));
    eventually("topic ct", Duration::from_secs(30), || {
        create_topic(c.kafka(leader), "ct", 3)
            .ok()
            .filter(|e| *e == 0 || *e == 36)
    });
    // Each partition's owner, as Metadata names it.
    let owners: Vec<(i32, u64)> = eventually("ct's owners", Duration::from_secs(30), || {
        let m = metadata(c.kafka(leader), &["ct"]).ok()?;
        let t = m.topics.first()?;
        let owners: Vec<(i32, u64)> = t
            .partitions
            .iter()
            .filter(|p| p.leader_id.0 > 0)
            .map(|p| (p.partition_index, p.leader_id.0 as u64))
            .collect();
        (owners.len() == 3).then_some(owners)
    });
    for (partition, owner) in owners {
        // The owner answers (once it has opened the partition), every other node refuses.
        let got = eventually("the owner's answer", Duration::from_secs(30), || {
            describe_producers(&c, owner, "ct", partition).filter(|p| p.error_code == 0)
        });
        assert!(got.active_producers.is_empty(), "{got:?}");
        for other in [1, 2, 3].into_iter().filter(|n| *n != owner) {
            let got = describe_producers(&c, other, "ct", partition).unwrap();
            assert_eq!(
                (got.partition_index, got.error_code),
                (partition, NOT_LEADER_OR_FOLLOWER),
                "node {other} for partition {partition} (owner {owner})"
            );
        }
    }
    // The coordinator knows no such id; the other nodes are not the coordinator and list
    // nothing, without error.
    let coordinator = c.wait_controller(&[1, 2, 3], Duration::from_secs(30));
    let code = eventually("the coordinator's answer", Duration::from_secs(30), || {
        describe_txn(&c, coordinator, "nobody").filter(|e| *e != 14 && *e != NOT_COORDINATOR)
    });
    assert_eq!(code, TRANSACTIONAL_ID_NOT_FOUND);
    assert_eq!(list_txns(&c, coordinator), Some((0, 0)));
    for other in [1, 2, 3].into_iter().filter(|n| *n != coordinator) {
        assert_eq!(describe_txn(&c, other, "nobody"), Some(NOT_COORDINATOR));
        assert_eq!(list_txns(&c, other), Some((0, 0)));
    }
}
