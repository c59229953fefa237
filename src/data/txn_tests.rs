//! Transactions in the data plane on real partition files: the last stable offset, the
//! aborted-transaction index, its `.txnindex` files and producer snapshots across reopening,
//! retention and DeleteRecords (decision 0128).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use protocol::batch::control::{encode_control_batch, ControlMarker, ControlType};

use super::partition::AppendError;
use super::producers::SequenceError;
use super::txn_index::{self, AbortedTxn, INDEX_SUFFIX, SNAPSHOT_SUFFIX, TXN_DIR};
use super::Partition;
use crate::broker::Broker;
use crate::handlers::test_support::{broker, client_batch};
use crate::topics::NewTopic;

/// A batch of `n` records of producer `pid` (`None`: a plain batch), transactional or not.
fn batch(producer: Option<(i64, i16, i32)>, n: usize, transactional: bool) -> Bytes {
    let (pid, _, seq0) = producer.unwrap_or((-1, -1, -1));
    client_batch(producer, n, transactional, |i| {
        Bytes::from(format!("{pid}/{seq0}/{i}"))
    })
}

fn marker(pid: i64, epoch: i16, kind: ControlType) -> Bytes {
    encode_control_batch(&ControlMarker {
        kind,
        producer_id: pid,
        producer_epoch: epoch,
        coordinator_epoch: 1,
        timestamp_ms: 2_000,
    })
}

/// Appends a produced batch at `now_ms`; its base offset.
fn produce(p: &Partition, records: Bytes, now_ms: i64) -> Result<i64, AppendError> {
    let header = protocol::batch::validate_produced(&records)?;
    p.append(BytesMut::from(&records[..]), header, now_ms)
        .map(|a| a.base_offset)
}

async fn topic(b: &Arc<Broker>, name: &str, configs: &[(&str, &str)]) -> Arc<Partition> {
    let new = NewTopic {
        name: name.into(),
        num_partitions: 1,
        replication_factor: 1,
        configs: configs
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect(),
        ..NewTopic::default()
    };
    b.create_topic(&new, false).await.unwrap();
    b.data.partition(name, 0).await.unwrap()
}

fn aborted(pid: i64, first: i64, last: i64, lso: i64) -> AbortedTxn {
    AbortedTxn {
        producer_id: pid,
        first_offset: first,
        last_offset: last,
        last_stable_offset: lso,
    }
}

/// Offsets of every batch a read_committed consumer keeps: batches of aborted transactions
/// dropped (by the listed aborts, as librdkafka does) and control batches skipped.
fn committed_view(p: &Partition) -> Vec<i64> {
    let (read, aborts) = p.read_committed(0, 64 << 20, true).unwrap();
    let bytes = read.concatenated().unwrap();
    let mut at = 0;
    let mut pending: std::collections::VecDeque<AbortedTxn> = aborts.into_iter().collect();
    pending.make_contiguous().sort_by_key(|a| a.first_offset);
    let mut open_aborts: Vec<i64> = Vec::new();
    let mut kept = Vec::new();
    while at < bytes.len() {
        let h = protocol::batch::BatchHeader::parse(&bytes[at..]).unwrap();
        at += h.total_bytes();
        while pending
            .front()
            .is_some_and(|a| a.first_offset <= h.base_offset)
        {
            if let Some(a) = pending.pop_front() {
                open_aborts.push(a.producer_id);
            }
        }
        if h.is_control() {
            open_aborts.retain(|pid| *pid != h.producer_id);
            continue;
        }
        if h.is_transactional() && open_aborts.contains(&h.producer_id) {
            continue;
        }
        kept.push(h.base_offset);
    }
    kept
}

#[tokio::test]
async fn open_transactions_hold_the_last_stable_offset_and_markers_release_it() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(dir.path(), &[]);
    let p = topic(&b, "t", &[]).await;
    assert_eq!(produce(&p, batch(None, 2, false), 0).unwrap(), 0);
    assert_eq!(produce(&p, batch(Some((7, 0, 0)), 3, true), 0).unwrap(), 2);
    assert_eq!(produce(&p, batch(None, 1, false), 0).unwrap(), 5);
    assert_eq!((p.high_watermark(), p.last_stable_offset()), (6, 2));
    assert_eq!(p.open_transactions(), vec![(7, 2)]);
    // read_committed stops at the LSO: only the first plain batch.
    let (read, aborts) = p.read_committed(0, 1 << 20, true).unwrap();
    assert_eq!((read.next_offset, aborts.len()), (Some(2), 0));
    let (read, _) = p.read_committed(2, 1 << 20, true).unwrap();
    assert_eq!(read.next_offset, None, "nothing at or past the LSO");
    // read_uncommitted sees everything.
    assert_eq!(p.read(0, 1 << 20, true).unwrap().next_offset, Some(6));
    let at = p
        .append_marker(&marker(7, 0, ControlType::Commit), 0)
        .unwrap();
    assert_eq!(at.base_offset, 6);
    assert_eq!((p.high_watermark(), p.last_stable_offset()), (7, 7));
    assert!(p.open_transactions().is_empty());
    assert_eq!(committed_view(&p), vec![0, 2, 5]);
    // The producer's next transaction continues its sequence.
    assert_eq!(produce(&p, batch(Some((7, 0, 3)), 1, true), 0).unwrap(), 7);
    assert_eq!(p.last_stable_offset(), 7);
}

#[tokio::test]
async fn read_committed_lists_the_aborted_transactions_it_reads_over() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(dir.path(), &[]);
    let p = topic(&b, "t", &[]).await;
    produce(&p, batch(Some((1, 0, 0)), 2, true), 0).unwrap(); // 0-1
    produce(&p, batch(Some((2, 0, 0)), 2, true), 0).unwrap(); // 2-3
    produce(&p, batch(None, 1, false), 0).unwrap(); // 4
    p.append_marker(&marker(1, 0, ControlType::Abort), 0)
        .unwrap(); // 5
    assert_eq!(p.last_stable_offset(), 2, "producer 2 is still open");
    p.append_marker(&marker(2, 0, ControlType::Commit), 0)
        .unwrap(); // 6
    produce(&p, batch(Some((3, 0, 0)), 1, true), 0).unwrap(); // 7
    p.append_marker(&marker(3, 0, ControlType::Abort), 0)
        .unwrap(); // 8
    assert_eq!(p.last_stable_offset(), 9);
    assert_eq!(
        p.aborted_transactions(),
        vec![aborted(1, 0, 5, 2), aborted(3, 7, 8, 9)]
    );
    let (_, aborts) = p.read_committed(0, 1 << 20, true).unwrap();
    assert_eq!(aborts, vec![aborted(1, 0, 5, 2), aborted(3, 7, 8, 9)]);
    // From past the first abort's marker only the second overlaps.
    let (_, aborts) = p.read_committed(6, 1 << 20, true).unwrap();
    assert_eq!(aborts, vec![aborted(3, 7, 8, 9)]);
    assert_eq!(committed_view(&p), vec![2, 4]);
}

#[tokio::test]
async fn stale_epochs_and_plain_writes_inside_a_transaction_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(dir.path(), &[]);
    let p = topic(&b, "t", &[]).await;
    produce(&p, batch(Some((5, 3, 0)), 1, true), 0).unwrap();
    let end = p.log_end_offset();
    assert!(matches!(
        produce(&p, batch(Some((5, 2, 1)), 1, true), 0),
        Err(AppendError::Sequence(SequenceError::InvalidProducerEpoch {
            current: 3,
            ..
        }))
    ));
    assert!(matches!(
        p.append_marker(&marker(5, 2, ControlType::Abort), 0),
        Err(AppendError::Sequence(SequenceError::InvalidProducerEpoch {
            current: 3,
            ..
        }))
    ));
    assert!(matches!(
        produce(&p, batch(Some((5, 3, 1)), 1, false), 0),
        Err(AppendError::OpenTransaction { producer_id: 5 })
    ));
    assert!(matches!(
        p.append_marker(&batch(None, 1, false), 0),
        Err(AppendError::NotAMarker(_))
    ));
    assert_eq!(p.log_end_offset(), end, "nothing was written");
    assert_eq!(p.open_transactions(), vec![(5, 0)]);
    // A fence: the coordinator aborts with a bumped epoch, which the partition adopts.
    p.append_marker(&marker(5, 4, ControlType::Abort), 0)
        .unwrap();
    assert!(matches!(
        produce(&p, batch(Some((5, 3, 1)), 1, true), 0),
        Err(AppendError::Sequence(SequenceError::InvalidProducerEpoch {
            current: 4,
            ..
        }))
    ));
    assert_eq!(produce(&p, batch(Some((5, 4, 0)), 1, true), 0).unwrap(), 2);
}

fn marker_from(pid: i64, epoch: i16, coordinator_epoch: i32, kind: ControlType) -> Bytes {
    encode_control_batch(&ControlMarker {
        kind,
        producer_id: pid,
        producer_epoch: epoch,
        coordinator_epoch,
        timestamp_ms: 2_000,
    })
}

#[tokio::test]
async fn a_marker_from_an_older_coordinator_epoch_is_fenced_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(dir.path(), &[]);
    let p = topic(&b, "t", &[]).await;
    // Coordinator epoch 7 (a Raft term) completes a first transaction of producer 5.
    produce(&p, batch(Some((5, 0, 0)), 1, true), 0).unwrap();
    p.append_marker(&marker_from(5, 0, 7, ControlType::Commit), 0)
        .unwrap();
    produce(&p, batch(Some((5, 0, 1)), 1, true), 0).unwrap();
    let end = p.log_end_offset();
    // A deposed coordinator (epoch 6) aborting the open one is a zombie.
    assert!(matches!(
        p.append_marker(&marker_from(5, 0, 6, ControlType::Abort), 0),
        Err(AppendError::Sequence(SequenceError::CoordinatorFenced {
            producer_id: 5,
            coordinator_epoch: 6,
            current: 7,
        }))
    ));
    assert_eq!(p.log_end_offset(), end, "nothing was written");
    assert_eq!(p.open_transactions(), vec![(5, 2)]);
    // The same epoch and a newer one (a re-drive after a failover) are written.
    p.append_marker(&marker_from(5, 0, 7, ControlType::Commit), 0)
        .unwrap();
    assert!(p.open_transactions().is_empty());
    produce(&p, batch(Some((5, 0, 2)), 1, true), 0).unwrap();
    p.append_marker(&marker_from(5, 0, 8, ControlType::Abort), 0)
        .unwrap();
    assert!(p.open_transactions().is_empty());
}

fn txn_dir(p: &Partition) -> PathBuf {
    p.dir().join(TXN_DIR)
}

fn files(dir: &Path, suffix: &str) -> Vec<i64> {
    txn_index::list(dir, suffix).unwrap()
}

/// Writes, one segment per append (`segment.ms=1`, appends 10 ms apart): aborted and
/// committed transactions, one left open across segments.
async fn rolled(b: &Arc<Broker>, configs: &[(&str, &str)]) -> Arc<Partition> {
    let mut all = vec![("segment.ms", "1")];
    all.extend_from_slice(configs);
    let p = topic(b, "r", &all).await;
    let mut now = 0;
    let mut step = || {
        now += 10;
        now
    };
    produce(&p, batch(Some((1, 0, 0)), 2, true), step()).unwrap(); // 0-1  seg 0
    produce(&p, batch(Some((9, 0, 0)), 1, true), step()).unwrap(); // 2    seg 2, stays open
    produce(&p, batch(Some((2, 0, 0)), 2, true), step()).unwrap(); // 3-4  seg 3
    p.append_marker(&marker(1, 0, ControlType::Abort), step())
        .unwrap(); // 5
    produce(&p, batch(None, 1, false), step()).unwrap(); // 6
    p.append_marker(&marker(2, 0, ControlType::Commit), step())
        .unwrap(); // 7
    produce(&p, batch(Some((3, 0, 0)), 1, true), step()).unwrap(); // 8
    p.append_marker(&marker(3, 0, ControlType::Abort), step())
        .unwrap(); // 9
    produce(&p, batch(None, 1, false), step()).unwrap(); // 10
    p
}

/// A new broker on the same directory (a restart) and its partition `r-0`.
async fn reopen(dir: &Path) -> (Arc<Broker>, Arc<Partition>) {
    let b = broker(dir, &[]);
    let p = b.data.partition("r", 0).await.unwrap();
    (b, p)
}

#[tokio::test]
async fn reopening_rebuilds_open_transactions_and_the_aborted_index_even_without_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let expected = vec![aborted(1, 0, 5, 2), aborted(3, 8, 9, 2)];
    let (tdir, segments) = {
        let b = broker(dir.path(), &[]);
        let p = rolled(&b, &[]).await;
        assert_eq!(p.aborted_transactions(), expected);
        assert_eq!(p.last_stable_offset(), 2);
        // One segment per batch; every sealed one has its index, every roll a snapshot.
        let segments = vec![0, 2, 3, 5, 6, 7, 8, 9, 10];
        assert_eq!(files(&txn_dir(&p), INDEX_SUFFIX), segments[..8].to_vec());
        assert_eq!(files(&txn_dir(&p), SNAPSHOT_SUFFIX), segments[1..].to_vec());
        let idx5 = std::fs::read(txn_dir(&p).join(txn_index::file_name(5, INDEX_SUFFIX)));
        assert_eq!(idx5.unwrap(), txn_index::encode(&expected[..1]));
        (txn_dir(&p), segments)
    };
    {
        let (_b, p) = reopen(dir.path()).await;
        assert_eq!(p.aborted_transactions(), expected);
        assert_eq!(p.open_transactions(), vec![(9, 2)]);
        assert_eq!((p.high_watermark(), p.last_stable_offset()), (11, 2));
    }
    // A torn index, a lost one and every snapshot gone: rebuilt from the log start.
    let idx5 = tdir.join(txn_index::file_name(5, INDEX_SUFFIX));
    let bytes = std::fs::read(&idx5).unwrap();
    std::fs::write(&idx5, &bytes[..bytes.len() - 1]).unwrap();
    std::fs::remove_file(tdir.join(txn_index::file_name(9, INDEX_SUFFIX))).unwrap();
    for s in files(&tdir, SNAPSHOT_SUFFIX) {
        txn_index::remove(&tdir, s, SNAPSHOT_SUFFIX).unwrap();
    }
    {
        let (_b, p) = reopen(dir.path()).await;
        assert_eq!(p.aborted_transactions(), expected);
        assert_eq!(p.open_transactions(), vec![(9, 2)]);
        assert_eq!(std::fs::read(&idx5).unwrap(), bytes, "rewritten whole");
        assert_eq!(files(&tdir, INDEX_SUFFIX), segments[..8].to_vec());
        // Producer state came back too: a resend is a duplicate, a gap is refused.
        let resend = produce(&p, batch(Some((9, 0, 0)), 1, true), 0).unwrap();
        assert_eq!(resend, 2);
        assert!(matches!(
            produce(&p, batch(Some((9, 0, 5)), 1, true), 0),
            Err(AppendError::Sequence(SequenceError::OutOfOrder { .. }))
        ));
        // Commit the open transaction; everything is stable.
        p.append_marker(&marker(9, 0, ControlType::Commit), 0)
            .unwrap();
        assert_eq!(p.last_stable_offset(), p.high_watermark());
    }
    // Files of segments the log does not have (a lost tail) are removed at open.
    txn_index::write(&tdir, 500, &[aborted(4, 499, 501, 502)]).unwrap();
    {
        let (_b, p) = reopen(dir.path()).await;
        assert_eq!(p.aborted_transactions(), expected);
        assert!(!files(&tdir, INDEX_SUFFIX).contains(&500));
    }
}

#[tokio::test]
async fn retention_and_delete_records_delete_the_transaction_files_of_deleted_segments() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(dir.path(), &[]);
    let p = rolled(&b, &[("retention.bytes", "1")]).await;
    let tdir = txn_dir(&p);
    // DeleteRecords to 6 deletes segments 0..=5, with the first abort's marker.
    p.delete_records_before(6).unwrap();
    assert_eq!(files(&tdir, INDEX_SUFFIX), (6..10).collect::<Vec<_>>());
    assert_eq!(files(&tdir, SNAPSHOT_SUFFIX), (6..=10).collect::<Vec<_>>());
    assert_eq!(p.aborted_transactions(), vec![aborted(3, 8, 9, 2)]);
    // The transaction open at 2 started below the log start: the LSO is the log start.
    assert_eq!(p.last_stable_offset(), 6);
    // Retention by size keeps only the active segment.
    assert_eq!(p.apply_retention(0).unwrap(), 4);
    assert!(files(&tdir, INDEX_SUFFIX).is_empty());
    assert_eq!(files(&tdir, SNAPSHOT_SUFFIX), vec![10]);
    assert!(p.aborted_transactions().is_empty());
}

/// KIP-890's guard on real partition files (decision 0165): a transactional batch that would
/// open a transaction is appended through `append_produced` only with the guard of a
/// verification that still holds; a marker written in between voids it; a batch inside an
/// open transaction needs none; nothing refused is written.
#[tokio::test]
async fn a_transaction_opens_only_with_a_verification_guard_that_still_holds() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(dir.path(), &[]);
    let p = topic(&b, "guard", &[]).await;
    let produced = |records: Bytes, guard: Option<super::TxnGuard>| {
        let header = protocol::batch::validate_produced(&records).unwrap();
        p.append_produced(BytesMut::from(&records[..]), header, 1_000, guard)
            .and_then(|a| {
                p.wait_durable(&a)
                    .map(|()| a.appended.base_offset)
                    .map_err(Into::into)
            })
    };
    // No verification: refused.
    assert!(matches!(
        produced(batch(Some((7, 0, 0)), 2, true), None),
        Err(AppendError::UnverifiedTransaction {
            producer_id: 7,
            producer_epoch: 0
        })
    ));
    // A guard for another epoch does not open it either.
    let other = p.start_txn_verification(7, 1).unwrap();
    assert!(matches!(
        produced(batch(Some((7, 0, 0)), 2, true), Some(other)),
        Err(AppendError::UnverifiedTransaction { .. })
    ));
    // A refused verification dropped: its guard no longer opens anything.
    let refused = p.start_txn_verification(7, 0).unwrap();
    p.drop_txn_verification(refused);
    assert!(matches!(
        produced(batch(Some((7, 0, 0)), 2, true), Some(refused)),
        Err(AppendError::UnverifiedTransaction { .. })
    ));
    // A guard voided by a marker of the producer written since.
    let guard = p.start_txn_verification(7, 0).unwrap();
    p.append_marker(&marker(7, 0, ControlType::Abort), 0)
        .unwrap();
    let end = p.log_end_offset();
    assert!(matches!(
        produced(batch(Some((7, 0, 0)), 2, true), Some(guard)),
        Err(AppendError::UnverifiedTransaction { .. })
    ));
    assert_eq!(p.log_end_offset(), end, "nothing was written");
    assert_eq!(p.open_transactions(), vec![]);
    // A guard that holds opens the transaction; inside it, no verification is started and
    // none is needed.
    let guard = p.start_txn_verification(7, 0).unwrap();
    assert_eq!(
        produced(batch(Some((7, 0, 0)), 2, true), Some(guard)).unwrap(),
        end
    );
    assert_eq!(p.open_transactions(), vec![(7, end)]);
    assert_eq!(p.start_txn_verification(7, 0), None);
    assert_eq!(
        produced(batch(Some((7, 0, 2)), 1, true), None).unwrap(),
        end + 2
    );
    // The used guard is gone: presenting it again after the commit does not reopen.
    p.append_marker(&marker(7, 0, ControlType::Commit), 0)
        .unwrap();
    assert!(matches!(
        produced(batch(Some((7, 0, 3)), 1, true), Some(guard)),
        Err(AppendError::UnverifiedTransaction { .. })
    ));
    // Non-transactional batches never need one.
    assert!(produced(batch(None, 1, false), None).is_ok());
}
