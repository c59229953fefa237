//! What the operator APIs read from the transaction state (decision 0143): DescribeTransactions
//! by transactional id, ListTransactions with Kafka's filters (`listTransactionStates`), and
//! the figures `/metrics` shows. Read-only and clock-free: `now` comes from the caller.

use crate::ids::{ProducerId, TimestampMs, TransactionalId};
use crate::index::transactions::TxnIndex;
use crate::record::transaction::TxnState;

/// ListTransactions' filters, as the request carries them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListTransactionsFilter {
    /// Kafka state names (`Ongoing`...); empty: every state.
    pub states: Vec<String>,
    /// Producer ids; empty: every producer.
    pub producer_ids: Vec<i64>,
    /// v1 (KIP-994): only transactions running longer than this many ms; negative: no filter.
    pub min_duration_ms: i64,
    /// The leader's clock, for the duration filter.
    pub now_ms: TimestampMs,
}

/// One listed transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedTransaction {
    pub transactional_id: TransactionalId,
    pub producer_id: ProducerId,
    pub state: TxnState,
}

/// ListTransactions' answer: the state filters no state is called by, and the matches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListedTransactions {
    pub unknown_state_filters: Vec<String>,
    pub transactions: Vec<ListedTransaction>,
}

/// Every state, for the filter's names.
const STATES: [TxnState; 6] = [
    TxnState::Empty,
    TxnState::Ongoing,
    TxnState::PrepareCommit,
    TxnState::PrepareAbort,
    TxnState::CompleteCommit,
    TxnState::CompleteAbort,
];

/// Kafka's `listTransactionStates`: a state filter naming no state is returned as unknown
/// (and matches nothing); a transaction is kept when its producer id and state pass the
/// filters and, with a duration filter, it started more than that long ago. A transaction
/// with no start time (Empty, Complete*) counts as started at −1, as Kafka's
/// `txnStartTimestamp`, so a duration filter keeps it (Kafka does the same).
pub(crate) fn list(txns: &TxnIndex, filter: &ListTransactionsFilter) -> ListedTransactions {
    let mut unknown_state_filters = Vec::new();
    let mut states = Vec::new();
    for name in &filter.states {
        match STATES.iter().find(|s| s.as_str() == name) {
            Some(s) => states.push(*s),
            None => unknown_state_filters.push(name.clone()),
        }
    }
    let transactions = txns
        .iter()
        .filter(|(_, t)| {
            if !filter.producer_ids.is_empty() && !filter.producer_ids.contains(&t.producer_id.0) {
                return false;
            }
            if !filter.states.is_empty() && !states.contains(&t.state) {
                return false;
            }
            if filter.min_duration_ms >= 0 {
                let start = t.start_timestamp.map_or(-1, |s| s.0);
                if filter.now_ms.0.saturating_sub(start) <= filter.min_duration_ms {
                    return false;
                }
            }
            true
        })
        .map(|(id, t)| ListedTransaction {
            transactional_id: id.clone(),
            producer_id: t.producer_id,
            state: t.state,
        })
        .collect();
    ListedTransactions {
        unknown_state_filters,
        transactions,
    }
}

/// The start of the oldest transaction still open or completing (Ongoing or Prepare*).
pub(crate) fn oldest_open_start(txns: &TxnIndex) -> Option<TimestampMs> {
    txns.iter()
        .filter(|(_, t)| !t.state.is_idle())
        .filter_map(|(_, t)| t.start_timestamp)
        .min()
}

/// How many transactional ids are in each state, in [`STATES`] order.
pub(crate) fn count_by_state(txns: &TxnIndex) -> Vec<(TxnState, usize)> {
    STATES
        .iter()
        .map(|s| (*s, txns.iter().filter(|(_, t)| t.state == *s).count()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ProducerEpoch;
    use crate::record::transaction::TransactionValue;
    use std::collections::{BTreeMap, BTreeSet};

    fn txn(pid: i64, state: TxnState, start: Option<i64>) -> TransactionValue {
        TransactionValue {
            producer_id: ProducerId(pid),
            producer_epoch: ProducerEpoch(0),
            last_producer_id: ProducerId::NONE,
            last_producer_epoch: ProducerEpoch::NONE,
            timeout_ms: 60_000,
            state,
            partitions: BTreeMap::new(),
            groups: BTreeSet::new(),
            start_timestamp: start.map(TimestampMs),
            last_update_timestamp: TimestampMs(0),
        }
    }

    fn index() -> TxnIndex {
        let mut txns = TxnIndex::default();
        txns.put_transaction(
            &TransactionalId::new("a"),
            Some(&txn(1, TxnState::Ongoing, Some(1_000))),
        );
        txns.put_transaction(
            &TransactionalId::new("b"),
            Some(&txn(2, TxnState::PrepareAbort, Some(9_000))),
        );
        txns.put_transaction(
            &TransactionalId::new("c"),
            Some(&txn(3, TxnState::CompleteCommit, None)),
        );
        txns
    }

    fn ids(l: &ListedTransactions) -> Vec<&str> {
        l.transactions
            .iter()
            .map(|t| t.transactional_id.as_str())
            .collect()
    }

    fn filter(states: &[&str], pids: &[i64], min_duration_ms: i64) -> ListTransactionsFilter {
        ListTransactionsFilter {
            states: states.iter().map(|s| (*s).to_owned()).collect(),
            producer_ids: pids.to_vec(),
            min_duration_ms,
            now_ms: TimestampMs(10_000),
        }
    }

    #[test]
    fn filters_are_kafkas() {
        let txns = index();
        assert_eq!(ids(&list(&txns, &filter(&[], &[], -1))), ["a", "b", "c"]);
        let l = list(&txns, &filter(&["Ongoing", "Hanging"], &[], -1));
        assert_eq!(ids(&l), ["a"]);
        assert_eq!(l.unknown_state_filters, ["Hanging"]);
        // Only unknown names: nothing matches.
        assert!(list(&txns, &filter(&["Hanging"], &[], -1))
            .transactions
            .is_empty());
        assert_eq!(ids(&list(&txns, &filter(&[], &[2, 3], -1))), ["b", "c"]);
        assert_eq!(
            ids(&list(&txns, &filter(&["Ongoing"], &[2], -1))),
            Vec::<&str>::new()
        );
        // Running longer than 5 s at 10 s: `a` (9 s) yes, `b` (1 s) no, `c` (no start) yes.
        assert_eq!(ids(&list(&txns, &filter(&[], &[], 5_000))), ["a", "c"]);
        // Exactly the duration is not longer than it.
        assert_eq!(ids(&list(&txns, &filter(&[], &[], 9_000))), ["c"]);
    }

    #[test]
    fn oldest_open_and_counts() {
        let txns = index();
        assert_eq!(oldest_open_start(&txns), Some(TimestampMs(1_000)));
        let counts = count_by_state(&txns);
        assert_eq!(counts.len(), 6);
        assert!(counts.contains(&(TxnState::Ongoing, 1)));
        assert!(counts.contains(&(TxnState::PrepareAbort, 1)));
        assert!(counts.contains(&(TxnState::CompleteCommit, 1)));
        assert!(counts.contains(&(TxnState::Empty, 0)));
        assert_eq!(oldest_open_start(&TxnIndex::default()), None);
    }
}
