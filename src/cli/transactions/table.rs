//! Kafka's `ToolsUtils.prettyPrintTable`, which every `kafka-transactions.sh` command prints
//! with: each cell left-aligned and padded to its column's widest cell (header included), then
//! a tab — the last column too — one line per row, headers first.

use std::io::Write;

pub const LIST_HEADERS: &[&str] = &[
    "TransactionalId",
    "Coordinator",
    "ProducerId",
    "TransactionState",
];

pub const DESCRIBE_HEADERS: &[&str] = &[
    "CoordinatorId",
    "TransactionalId",
    "ProducerId",
    "ProducerEpoch",
    "TransactionState",
    "TransactionTimeoutMs",
    "CurrentTransactionStartTimeMs",
    "TransactionDurationMs",
    "TopicPartitions",
];

pub const PRODUCERS_HEADERS: &[&str] = &[
    "ProducerId",
    "ProducerEpoch",
    "LatestCoordinatorEpoch",
    "LastSequence",
    "LastTimestamp",
    "CurrentTransactionStartOffset",
];

pub const HANGING_HEADERS: &[&str] = &[
    "Topic",
    "Partition",
    "ProducerId",
    "ProducerEpoch",
    "CoordinatorEpoch",
    "StartOffset",
    "LastTimestamp",
    "Duration(min)",
];

/// The table's text: headers, then `rows` (each as long as `headers`).
pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    // Java pads by `String.length()`, UTF-16 units; ids are ASCII in practice, chars are close.
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header_row: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header_row).chain(rows) {
        for (w, cell) in widths.iter().zip(row) {
            out.push_str(cell);
            out.extend(std::iter::repeat_n(
                ' ',
                w.saturating_sub(cell.chars().count()),
            ));
            out.push('\t');
        }
        out.push('\n');
    }
    out
}

/// Prints the table on `out`.
pub fn print(out: &mut dyn Write, headers: &[&str], rows: &[Vec<String>]) {
    let _ = out.write_all(render(headers, rows).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_pad_to_the_widest_and_end_with_a_tab() {
        let rows = vec![
            vec![
                "payments-1".to_owned(),
                "1".to_owned(),
                "4000".to_owned(),
                "Ongoing".to_owned(),
            ],
            vec![
                "x".to_owned(),
                "1".to_owned(),
                "7".to_owned(),
                "CompleteAbort".to_owned(),
            ],
        ];
        assert_eq!(
            render(LIST_HEADERS, &rows),
            "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n\
             payments-1     \t1          \t4000      \tOngoing         \t\n\
             x              \t1          \t7         \tCompleteAbort   \t\n"
        );
        assert_eq!(
            render(HANGING_HEADERS, &[]),
            "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\t\
             LastTimestamp\tDuration(min)\t\n"
        );
    }
}
