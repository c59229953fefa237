//! `list`, `describe`, `describe-producers` and `abort`: one Admin call each (abort: two), the
//! rows Kafka's `TransactionsCommand` prints, and its messages when a call fails.

use std::collections::BTreeMap;
use std::io::Write;

use super::table;
use super::Failure;
use crate::client::transactions::{
    AbortSpec, ListTransactionsFilter, ProducerState, TransactionDescription, TransactionListing,
};
use crate::client::{Admin, NodeId, TopicPartition};

/// `printErrorAndExit(message, cause)`: the message, the cause's, and Kafka's hint.
pub fn with_cause(message: &str, cause: &str) -> Failure {
    Failure(format!(
        "{message}: {cause}. Enable debug logging for additional detail."
    ))
}

/// Rows of `list`: by broker id, each broker's listings in the order it sent them.
pub fn list_rows(result: &BTreeMap<NodeId, Vec<TransactionListing>>) -> Vec<Vec<String>> {
    result
        .iter()
        .flat_map(|(broker, listings)| {
            listings.iter().map(move |l| {
                vec![
                    l.transactional_id.clone(),
                    broker.to_string(),
                    l.producer_id.to_string(),
                    l.state.clone(),
                ]
            })
        })
        .collect()
}

pub async fn list(
    admin: &mut Admin,
    duration_filter: Option<i64>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let filter = ListTransactionsFilter {
        duration_ms: duration_filter,
        ..ListTransactionsFilter::default()
    };
    let result = admin
        .list_transactions(&filter)
        .await
        .map_err(|e| with_cause("Failed to list transactions", &e.java_message()))?;
    table::print(out, table::LIST_HEADERS, &list_rows(&result));
    Ok(())
}

/// The row of `describe`; the duration is `now_ms` minus the start, as Kafka's tool computes it.
pub fn describe_row(id: &str, d: &TransactionDescription, now_ms: i64) -> Vec<String> {
    let (start, duration) = match d.start_time_ms {
        Some(start) => (start.to_string(), (now_ms - start).to_string()),
        None => ("None".to_owned(), "None".to_owned()),
    };
    let partitions: Vec<String> = d.partitions.iter().map(ToString::to_string).collect();
    vec![
        d.coordinator.to_string(),
        id.to_owned(),
        d.producer_id.to_string(),
        d.producer_epoch.to_string(),
        d.state.clone(),
        d.timeout_ms.to_string(),
        start,
        duration,
        partitions.join(","),
    ]
}

pub async fn describe(admin: &mut Admin, id: &str, out: &mut dyn Write) -> Result<(), Failure> {
    let fail = |cause: String| {
        with_cause(
            &format!("Failed to describe transaction state of transactional-id `{id}`"),
            &cause,
        )
    };
    let mut result = admin
        .describe_transactions(&[id.to_owned()])
        .await
        .map_err(|e| fail(e.java_message()))?;
    let description = match result.remove(id) {
        Some(Ok(d)) => d,
        Some(Err(e)) => return Err(fail(e.java_message())),
        None => return Err(fail("no answer for it".to_owned())),
    };
    let row = describe_row(id, &description, super::now_ms());
    table::print(out, table::DESCRIBE_HEADERS, &[row]);
    Ok(())
}

/// The row of one producer in `describe-producers`.
pub fn producer_row(p: &ProducerState) -> Vec<String> {
    vec![
        p.producer_id.to_string(),
        p.producer_epoch.to_string(),
        p.coordinator_epoch.unwrap_or(-1).to_string(),
        p.last_sequence.to_string(),
        p.last_timestamp.to_string(),
        p.txn_start_offset
            .map_or_else(|| "None".to_owned(), |o| o.to_string()),
    ]
}

/// The active producers of one partition, or the cause of the failure.
async fn producers_of(
    admin: &mut Admin,
    tp: &TopicPartition,
    broker: Option<NodeId>,
) -> Result<Vec<ProducerState>, String> {
    let mut result = admin
        .describe_producers(std::slice::from_ref(tp), broker)
        .await
        .map_err(|e| e.java_message())?;
    match result.remove(tp) {
        Some(Ok(producers)) => Ok(producers),
        Some(Err(e)) => Err(e.java_message()),
        None => Err("no answer for it".to_owned()),
    }
}

pub async fn describe_producers(
    admin: &mut Admin,
    tp: &TopicPartition,
    broker: Option<i32>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let producers = producers_of(admin, tp, broker.map(NodeId))
        .await
        .map_err(|cause| {
            let on = broker.map_or_else(|| "leader".to_owned(), |b| format!("broker {b}"));
            with_cause(
                &format!("Failed to describe producers for partition {tp} on {on}"),
                &cause,
            )
        })?;
    let rows: Vec<Vec<String>> = producers.iter().map(producer_row).collect();
    table::print(out, table::PRODUCERS_HEADERS, &rows);
    Ok(())
}

/// How `abort` names the transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AbortTarget {
    /// The first offset of its open transaction (brokers 3.0+).
    StartOffset(i64),
    /// Its producer, epoch and coordinator epoch (older brokers).
    Producer(AbortSpec),
}

/// Kafka's checks of `abort`'s options, before any call.
pub fn abort_target(
    tp: &TopicPartition,
    start_offset: Option<i64>,
    producer_id: Option<i64>,
    producer_epoch: Option<i16>,
    coordinator_epoch: Option<i32>,
) -> Result<AbortTarget, Failure> {
    if let Some(offset) = start_offset {
        return Ok(AbortTarget::StartOffset(offset));
    }
    let Some(producer_id) = producer_id else {
        return Err(Failure(
            "The transaction to abort must be identified either with --start-offset (for \
             brokers on 3.0 or above) or with --producer-id, --producer-epoch, and \
             --coordinator-epoch (for older brokers)"
                .to_owned(),
        ));
    };
    let Some(producer_epoch) = producer_epoch else {
        return Err(Failure(
            "Missing required argument --producer-epoch".to_owned(),
        ));
    };
    let Some(coordinator_epoch) = coordinator_epoch else {
        return Err(Failure(
            "Missing required argument --coordinator-epoch".to_owned(),
        ));
    };
    // A producer that hung before its first marker shows coordinator epoch -1; 0 is at most
    // any real epoch, as Kafka's tool reasons.
    Ok(AbortTarget::Producer(AbortSpec {
        partition: tp.clone(),
        producer_id,
        producer_epoch,
        coordinator_epoch: coordinator_epoch.max(0),
    }))
}

/// The abort of the open transaction that starts at `offset`, from the partition's producers.
pub fn spec_at_offset(
    tp: &TopicPartition,
    offset: i64,
    producers: &[ProducerState],
) -> Result<AbortSpec, Failure> {
    let Some(p) = producers
        .iter()
        .find(|p| p.txn_start_offset == Some(offset))
    else {
        return Err(Failure(format!(
            "Could not find any open transactions starting at offset {offset} on partition {tp}"
        )));
    };
    Ok(AbortSpec {
        partition: tp.clone(),
        producer_id: p.producer_id,
        // Kafka's `(short) producerEpoch()`: epochs are shorts on the wire of every other API.
        producer_epoch: p.producer_epoch as i16,
        coordinator_epoch: p.coordinator_epoch.unwrap_or(0),
    })
}

pub async fn abort(
    admin: &mut Admin,
    tp: &TopicPartition,
    target: AbortTarget,
) -> Result<(), Failure> {
    let spec = match target {
        AbortTarget::Producer(spec) => spec,
        AbortTarget::StartOffset(offset) => {
            let producers = producers_of(admin, tp, None).await.map_err(|cause| {
                with_cause(
                    &format!("Failed to validate producer state for partition {tp}"),
                    &cause,
                )
            })?;
            spec_at_offset(tp, offset, &producers)?
        }
    };
    admin.abort_transaction(&spec).await.map_err(|e| {
        with_cause(
            &format!("Failed to abort transaction {spec}"),
            &e.java_message(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn producer(start: Option<i64>, coordinator_epoch: Option<i32>) -> ProducerState {
        ProducerState {
            producer_id: 4000,
            producer_epoch: 3,
            last_sequence: 2,
            last_timestamp: 1_700_000_000_000,
            coordinator_epoch,
            txn_start_offset: start,
        }
    }

    #[test]
    fn rows_print_kafkas_values() {
        assert_eq!(
            producer_row(&producer(Some(7), None)),
            ["4000", "3", "-1", "2", "1700000000000", "7"]
        );
        assert_eq!(
            producer_row(&producer(None, Some(2)))[2..],
            ["2", "2", "1700000000000", "None"]
        );
        let d = TransactionDescription {
            coordinator: NodeId(1),
            state: "Ongoing".into(),
            producer_id: 4000,
            producer_epoch: 0,
            timeout_ms: 600_000,
            start_time_ms: Some(1_000),
            partitions: vec![TopicPartition::new("a", 0), TopicPartition::new("a", 1)],
        };
        assert_eq!(
            describe_row("tx", &d, 3_500),
            ["1", "tx", "4000", "0", "Ongoing", "600000", "1000", "2500", "a-0,a-1"]
        );
        let d = TransactionDescription {
            start_time_ms: None,
            partitions: vec![],
            ..d
        };
        assert_eq!(describe_row("tx", &d, 3_500)[6..], ["None", "None", ""]);
        let listed = BTreeMap::from([(
            NodeId(1),
            vec![TransactionListing {
                transactional_id: "tx".into(),
                producer_id: 4000,
                state: "Ongoing".into(),
            }],
        )]);
        assert_eq!(list_rows(&listed), [["tx", "1", "4000", "Ongoing"]]);
    }

    #[test]
    fn abort_targets_are_checked_as_kafka_checks_them() {
        let tp = TopicPartition::new("t", 0);
        assert_eq!(
            abort_target(&tp, Some(5), Some(1), None, None),
            Ok(AbortTarget::StartOffset(5))
        );
        assert!(matches!(
            abort_target(&tp, None, None, Some(1), Some(1)),
            Err(Failure(m)) if m.starts_with("The transaction to abort must be identified")
        ));
        assert_eq!(
            abort_target(&tp, None, Some(1), None, Some(1)),
            Err(Failure("Missing required argument --producer-epoch".into()))
        );
        assert_eq!(
            abort_target(&tp, None, Some(1), Some(2), None),
            Err(Failure(
                "Missing required argument --coordinator-epoch".into()
            ))
        );
        let Ok(AbortTarget::Producer(spec)) = abort_target(&tp, None, Some(1), Some(2), Some(-1))
        else {
            panic!()
        };
        assert_eq!(spec.coordinator_epoch, 0);
        let found = spec_at_offset(&tp, 7, &[producer(None, None), producer(Some(7), None)]);
        assert_eq!(
            found.map(|s| s.to_string()),
            Ok(
                "AbortTransactionSpec(topicPartition=t-0, producerId=4000, producerEpoch=3, \
                coordinatorEpoch=0)"
                    .to_owned()
            )
        );
        assert_eq!(
            spec_at_offset(&tp, 8, &[producer(Some(7), None)]),
            Err(Failure(
                "Could not find any open transactions starting at offset 8 on partition t-0".into()
            ))
        );
    }
}
