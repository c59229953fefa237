//! `find-hanging`, Kafka's rule: a partition's open transaction is a candidate when its
//! producer's last write is older than `--max-transaction-timeout`; a candidate hangs when no
//! coordinator lists a transactional id for its producer id, when the coordinator does not know
//! that id, or when the coordinator's transaction for it does not include the partition (so no
//! marker will ever come). An Ongoing transaction the coordinator still tracks on the partition
//! is not hanging, however old: the coordinator will time it out and write its marker.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use super::commands::with_cause;
use super::{table, Failure};
use crate::client::transactions::{ListTransactionsFilter, ProducerState, TransactionDescription};
use crate::client::{Admin, NodeId, TopicPartition};
use protocol::ErrorCode;

/// Most topics or partitions one request carries (Kafka's `MAX_BATCH_SIZE`).
const BATCH_MAX: usize = 500;
const MS_PER_MINUTE: i64 = 60_000;

/// An open transaction seen on a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenTransaction {
    pub partition: TopicPartition,
    pub producer: ProducerState,
}

/// Kafka's checks of the search's scope, before any call.
pub fn check_scope(
    broker_id: Option<i32>,
    topic: Option<&str>,
    partition: Option<i32>,
) -> Result<(), Failure> {
    if topic.is_none() && broker_id.is_none() {
        return Err(Failure(
            "The `find-hanging` command requires either --topic or --broker-id to limit the \
             scope of the search"
                .to_owned(),
        ));
    }
    if partition.is_some() && topic.is_none() {
        return Err(Failure(
            "The --partition argument requires --topic to be provided".to_owned(),
        ));
    }
    Ok(())
}

/// Open transactions whose producer last wrote more than `max_ms` before `now_ms`.
pub fn candidates(
    producers: &BTreeMap<TopicPartition, Vec<ProducerState>>,
    now_ms: i64,
    max_ms: i64,
) -> Vec<OpenTransaction> {
    producers
        .iter()
        .flat_map(|(tp, ps)| {
            ps.iter()
                .filter(move |p| p.txn_start_offset.is_some() && now_ms - p.last_timestamp > max_ms)
                .map(move |p| OpenTransaction {
                    partition: tp.clone(),
                    producer: p.clone(),
                })
        })
        .collect()
}

/// The candidates that hang, by producer id: `ids` maps producer ids to the transactional ids
/// the coordinators listed, `descriptions` what the coordinators said of those ids (`None`: not
/// found).
pub fn hanging(
    candidates: &[OpenTransaction],
    ids: &BTreeMap<i64, String>,
    descriptions: &BTreeMap<String, Option<TransactionDescription>>,
) -> Vec<OpenTransaction> {
    let mut by_producer: BTreeMap<i64, Vec<&OpenTransaction>> = BTreeMap::new();
    for c in candidates {
        by_producer
            .entry(c.producer.producer_id)
            .or_default()
            .push(c);
    }
    let mut out = Vec::new();
    for (producer_id, open) in by_producer {
        let description = ids
            .get(&producer_id)
            .and_then(|id| descriptions.get(id))
            .and_then(Option::as_ref);
        for t in open {
            let awaited = description.is_some_and(|d| d.partitions.contains(&t.partition));
            if !awaited {
                out.push(t.clone());
            }
        }
    }
    out
}

/// The rows Kafka prints for hanging transactions.
pub fn rows(hanging: &[OpenTransaction], now_ms: i64) -> Vec<Vec<String>> {
    hanging
        .iter()
        .map(|t| {
            let p = &t.producer;
            vec![
                t.partition.topic.clone(),
                t.partition.partition.to_string(),
                p.producer_id.to_string(),
                p.producer_epoch.to_string(),
                p.coordinator_epoch.unwrap_or(-1).to_string(),
                p.txn_start_offset.unwrap_or(-1).to_string(),
                p.last_timestamp.to_string(),
                ((now_ms - p.last_timestamp) / MS_PER_MINUTE).to_string(),
            ]
        })
        .collect()
}

/// Java's `Optional<Integer>.toString()`, which Kafka's message prints.
fn java_optional(v: Option<i32>) -> String {
    v.map_or_else(|| "Optional.empty".to_owned(), |b| format!("Optional[{b}]"))
}

pub async fn find_hanging(
    admin: &mut Admin,
    broker_id: Option<i32>,
    topic: Option<&str>,
    partition: Option<i32>,
    max_minutes: i32,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    check_scope(broker_id, topic, partition)?;
    let max_ms = i64::from(max_minutes) * MS_PER_MINUTE;
    let partitions = partitions_to_search(admin, broker_id, topic, partition).await?;
    let mut open = Vec::new();
    for batch in partitions.chunks(BATCH_MAX) {
        let fail = |cause: String| {
            with_cause(
                &format!(
                    "Failed to describe producers for {} partitions on broker {}",
                    batch.len(),
                    java_optional(broker_id)
                ),
                &cause,
            )
        };
        let answers = admin
            .describe_producers(batch, broker_id.map(NodeId))
            .await
            .map_err(|e| fail(e.java_message()))?;
        let mut producers = BTreeMap::new();
        for (tp, answer) in answers {
            producers.insert(tp, answer.map_err(|e| fail(e.java_message()))?);
        }
        open.extend(candidates(&producers, super::now_ms(), max_ms));
    }
    if open.is_empty() {
        table::print(out, table::HANGING_HEADERS, &[]);
        return Ok(());
    }
    let producer_ids: BTreeSet<i64> = open.iter().map(|t| t.producer.producer_id).collect();
    let ids = transactional_ids(admin, &producer_ids).await?;
    let descriptions = describe(admin, &ids).await?;
    let found = hanging(&open, &ids, &descriptions);
    table::print(out, table::HANGING_HEADERS, &rows(&found, super::now_ms()));
    Ok(())
}

async fn partitions_to_search(
    admin: &mut Admin,
    broker_id: Option<i32>,
    topic: Option<&str>,
    partition: Option<i32>,
) -> Result<Vec<TopicPartition>, Failure> {
    let topics = match (topic, partition) {
        (Some(t), Some(p)) => return Ok(vec![TopicPartition::new(t, p)]),
        (Some(t), None) => vec![t.to_owned()],
        (None, _) => admin
            .list_topics(true)
            .await
            .map_err(|e| with_cause("Failed to list topics", &e.java_message()))?,
    };
    let mut out = Vec::new();
    for batch in topics.chunks(BATCH_MAX) {
        let fail = |cause: String| {
            with_cause(
                &format!("Failed to describe {} topics", batch.len()),
                &cause,
            )
        };
        let described = admin
            .describe_topics(batch)
            .await
            .map_err(|e| fail(e.java_message()))?;
        for (name, d) in described {
            let d = d.map_err(|e| fail(e.message()))?;
            for p in &d.partitions {
                if broker_id.is_none_or(|b| p.replicas.contains(&NodeId(b))) {
                    out.push(TopicPartition::new(name.clone(), p.partition));
                }
            }
        }
    }
    Ok(out)
}

async fn transactional_ids(
    admin: &mut Admin,
    producer_ids: &BTreeSet<i64>,
) -> Result<BTreeMap<i64, String>, Failure> {
    let filter = ListTransactionsFilter {
        producer_ids: producer_ids.iter().copied().collect(),
        ..ListTransactionsFilter::default()
    };
    let listed = admin.list_transactions(&filter).await.map_err(|e| {
        with_cause(
            &format!(
                "Failed to list transactions for {} producers",
                producer_ids.len()
            ),
            &e.java_message(),
        )
    })?;
    Ok(listed
        .into_values()
        .flatten()
        .filter(|l| producer_ids.contains(&l.producer_id))
        .map(|l| (l.producer_id, l.transactional_id))
        .collect())
}

async fn describe(
    admin: &mut Admin,
    ids: &BTreeMap<i64, String>,
) -> Result<BTreeMap<String, Option<TransactionDescription>>, Failure> {
    let fail = |cause: String| {
        with_cause(
            &format!("Failed to describe {} transactions", ids.len()),
            &cause,
        )
    };
    let wanted: Vec<String> = ids
        .values()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let answers = admin
        .describe_transactions(&wanted)
        .await
        .map_err(|e| fail(e.java_message()))?;
    let mut out = BTreeMap::new();
    for (id, answer) in answers {
        match answer {
            Ok(d) => {
                out.insert(id, Some(d));
            }
            Err(e) if e.kafka_code() == Some(ErrorCode::TransactionalIdNotFound.code()) => {
                out.insert(id, None);
            }
            Err(e) => return Err(fail(e.java_message())),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn producer(id: i64, start: Option<i64>, last: i64) -> ProducerState {
        ProducerState {
            producer_id: id,
            producer_epoch: 0,
            last_sequence: 2,
            last_timestamp: last,
            coordinator_epoch: None,
            txn_start_offset: start,
        }
    }

    #[test]
    fn scope_checks_are_kafkas() {
        assert!(
            matches!(check_scope(None, None, None), Err(Failure(m)) if m.starts_with("The `find-hanging` command requires"))
        );
        assert_eq!(
            check_scope(Some(1), None, Some(0)),
            Err(Failure(
                "The --partition argument requires --topic to be provided".into()
            ))
        );
        assert_eq!(check_scope(Some(1), None, None), Ok(()));
        assert_eq!(check_scope(None, Some("t"), Some(0)), Ok(()));
        assert_eq!(java_optional(Some(1)), "Optional[1]");
        assert_eq!(java_optional(None), "Optional.empty");
    }

    #[test]
    fn only_old_open_transactions_the_coordinator_does_not_await_hang() {
        let now = 100 * MS_PER_MINUTE;
        let a0 = TopicPartition::new("a", 0);
        let a1 = TopicPartition::new("a", 1);
        let producers = BTreeMap::from([
            (
                a0.clone(),
                vec![
                    producer(1, Some(5), now - 20 * MS_PER_MINUTE), // old, unknown id
                    producer(2, None, 0),                           // no open transaction
                    producer(3, Some(9), now - MS_PER_MINUTE),      // too young
                    producer(4, Some(3), now - 30 * MS_PER_MINUTE), // awaited on a-0
                ],
            ),
            (
                a1.clone(),
                vec![producer(4, Some(0), now - 30 * MS_PER_MINUTE)],
            ),
        ]);
        let open = candidates(&producers, now, 15 * MS_PER_MINUTE);
        let got: Vec<(i64, i32)> = open
            .iter()
            .map(|t| (t.producer.producer_id, t.partition.partition))
            .collect();
        assert_eq!(got, [(1, 0), (4, 0), (4, 1)]);
        let ids = BTreeMap::from([(4, "tx".to_owned())]);
        let d = TransactionDescription {
            coordinator: NodeId(1),
            state: "Ongoing".into(),
            producer_id: 4,
            producer_epoch: 0,
            timeout_ms: 60_000,
            start_time_ms: Some(0),
            partitions: vec![a0.clone()],
        };
        let descriptions = BTreeMap::from([("tx".to_owned(), Some(d))]);
        let found = hanging(&open, &ids, &descriptions);
        let got: Vec<(i64, i32)> = found
            .iter()
            .map(|t| (t.producer.producer_id, t.partition.partition))
            .collect();
        // Producer 1: no transactional id; producer 4 on a-1: not in its transaction.
        assert_eq!(got, [(1, 0), (4, 1)]);
        // An id the coordinator does not know hangs everywhere.
        let unknown = BTreeMap::from([("tx".to_owned(), None)]);
        assert_eq!(hanging(&open, &ids, &unknown).len(), 3);
        assert_eq!(
            rows(&found[..1], now),
            [[
                "a",
                "0",
                "1",
                "0",
                "-1",
                "5",
                &(now - 20 * MS_PER_MINUTE).to_string(),
                "20"
            ]]
        );
    }
}
