//! The transaction coordinator as a state machine: Kafka's transitions and error codes for
//! InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit and EndTxn, the
//! markers a prepared transaction owes, pending offsets that become visible only at a commit
//! marker, fencing, timeouts and expiry — every step replay-checked by the harness (records,
//! compacted log, snapshot and followers all agree).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::harness;

use coordinator::*;
use harness::*;

const TXN: &str = "txn-1";
const TIMEOUT_MS: i32 = 60_000;

fn init(
    h: &mut Harness,
    expected: Option<(i64, i16)>,
    fresh: i64,
) -> Result<(i64, i16), ErrorKind> {
    let out = h.write(WriteCommand::InitTransactionalProducer(
        InitTransactionalProducer {
            now_ms: h.now_ms(),
            transactional_id: TXN.into(),
            timeout_ms: TIMEOUT_MS,
            expected: expected.map(|(p, e)| (ProducerId(p), ProducerEpoch(e))),
            fresh_producer_id: ProducerId(fresh),
        },
    ));
    match out.reply {
        Reply::InitProducer(r) => r.map(|(p, e)| (p.0, e.0)),
        other => panic!("expected an InitProducer reply, got {other:?}"),
    }
}

fn producer(h: &Harness, (pid, epoch): (i64, i16)) -> TxnProducer {
    TxnProducer {
        api_version: ApiVersion(3),
        now_ms: h.now_ms(),
        transactional_id: TXN.into(),
        producer_id: ProducerId(pid),
        producer_epoch: ProducerEpoch(epoch),
    }
}

fn add_partitions(
    h: &mut Harness,
    p: (i64, i16),
    partitions: &[(i32, bool)],
) -> Vec<Option<ErrorKind>> {
    let command = WriteCommand::AddPartitionsToTxn(AddPartitionsToTxn {
        producer: producer(h, p),
        topics: vec![TxnTopic {
            name: "out".into(),
            partitions: partitions
                .iter()
                .map(|&(p, known)| TxnPartition {
                    partition: PartitionIndex(p),
                    partition_known: known,
                })
                .collect(),
        }],
    });
    match h.write(command).reply {
        Reply::AddPartitionsToTxn(topics) => topics
            .into_iter()
            .flat_map(|(_, ps)| ps)
            .map(|(_, e)| e)
            .collect(),
        other => panic!("expected an AddPartitionsToTxn reply, got {other:?}"),
    }
}

fn txn_reply(out: Outcome) -> Result<(), ErrorKind> {
    match out.reply {
        Reply::Txn(r) => r,
        other => panic!("expected a Txn reply, got {other:?}"),
    }
}

fn add_offsets(h: &mut Harness, p: (i64, i16)) -> Result<(), ErrorKind> {
    let command = WriteCommand::AddOffsetsToTxn(AddOffsetsToTxn {
        producer: producer(h, p),
        group_id: GROUP.into(),
    });
    txn_reply(h.write(command))
}

fn txn_commit(h: &mut Harness, p: (i64, i16), partition: i32, offset: i64) -> Option<ErrorKind> {
    let command = WriteCommand::TxnOffsetCommit(TxnOffsetCommit {
        producer: producer(h, p),
        group_id: GROUP.into(),
        generation: Generation(-1),
        member_id: "".into(),
        group_instance_id: None,
        topics: vec![CommitTopic {
            name: TOPIC.into(),
            partitions: vec![CommitPartition {
                partition: PartitionIndex(partition),
                offset: Offset(offset),
                leader_epoch: LeaderEpoch(-1),
                metadata: None,
                partition_known: true,
            }],
        }],
    });
    match h.write(command).reply {
        Reply::Commit(r) => r.topics[0].1[0].1,
        other => panic!("expected a commit reply, got {other:?}"),
    }
}

fn end(h: &mut Harness, p: (i64, i16), commit: bool) -> (Result<(), ErrorKind>, Vec<TxnMarkers>) {
    let out = h.write(WriteCommand::EndTxn(EndTxn {
        producer: producer(h, p),
        commit,
    }));
    let markers = out.txn_markers.clone();
    (txn_reply(out), markers)
}

fn markers_written(h: &mut Harness, m: &TxnMarkers) -> Result<(), ErrorKind> {
    let command = WriteCommand::TxnMarkersWritten(TxnMarkersWritten {
        producer: TxnProducer {
            api_version: ApiVersion(0),
            now_ms: h.now_ms(),
            transactional_id: m.transactional_id.clone(),
            producer_id: m.producer_id,
            producer_epoch: m.producer_epoch,
        },
        commit: m.commit,
    });
    txn_reply(h.write(command))
}

fn state(h: &Harness) -> TxnState {
    h.state
        .transaction(&TXN.into())
        .expect("transaction exists")
        .state
}

fn fetch_stable(h: &mut Harness, partition: i32) -> (i64, Option<ErrorKind>) {
    h.fetch_stable(GROUP, partition)
}

#[test]
fn a_committed_transaction_makes_its_offsets_visible_only_at_the_marker() {
    let mut h = Harness::new();
    let p = init(&mut h, None, 7).unwrap();
    assert_eq!(p, (7, 0));
    assert_eq!(state(&h), TxnState::Empty);
    assert_eq!(
        add_partitions(&mut h, p, &[(0, true), (1, true)]),
        vec![None, None]
    );
    assert_eq!(state(&h), TxnState::Ongoing);
    assert!(h.timers.contains_key(&TimerKey::TransactionTimeout {
        transactional_id: TXN.into()
    }));
    // Adding what the transaction already holds writes nothing.
    let before = h.records.len();
    assert_eq!(add_partitions(&mut h, p, &[(1, true)]), vec![None]);
    assert_eq!(h.records.len(), before);
    assert_eq!(add_offsets(&mut h, p), Ok(()));
    assert_eq!(txn_commit(&mut h, p, 0, 42), None);
    assert_eq!(
        fetch_stable(&mut h, 0),
        (-1, Some(ErrorKind::UnstableOffsetCommit))
    );
    // Another partition of the group has no pending offset: stable.
    assert_eq!(fetch_stable(&mut h, 1), (-1, None));
    h.add_follower_from_snapshot();

    let (reply, markers) = end(&mut h, p, true);
    assert_eq!(reply, Ok(()));
    assert_eq!(state(&h), TxnState::PrepareCommit);
    assert_eq!(markers.len(), 1);
    assert!(markers[0].commit);
    assert_eq!(markers[0].producer_epoch, ProducerEpoch(0));
    assert_eq!(
        markers[0].partitions,
        vec![("out".into(), vec![PartitionIndex(0), PartitionIndex(1)])]
    );
    assert_eq!(h.state.txn_markers_to_redrive(), markers);
    assert!(!h.timers.contains_key(&TimerKey::TransactionTimeout {
        transactional_id: TXN.into()
    }));
    // While the markers are written the next transaction waits.
    assert_eq!(
        add_partitions(&mut h, p, &[(0, true)]),
        vec![Some(ErrorKind::ConcurrentTransactions)]
    );
    assert_eq!(
        end(&mut h, p, true).0,
        Err(ErrorKind::ConcurrentTransactions)
    );
    assert_eq!(end(&mut h, p, false).0, Err(ErrorKind::InvalidTxnState));
    assert_eq!(
        fetch_stable(&mut h, 0).1,
        Some(ErrorKind::UnstableOffsetCommit)
    );

    assert_eq!(markers_written(&mut h, &markers[0]), Ok(()));
    assert_eq!(state(&h), TxnState::CompleteCommit);
    assert_eq!(fetch_stable(&mut h, 0), (42, None));
    assert!(h.state.txn_markers_to_redrive().is_empty());
    // A re-driven marker after completion changes nothing; a retried EndTxn succeeds.
    let before = h.records.len();
    assert_eq!(
        markers_written(&mut h, &markers[0]),
        Err(ErrorKind::InvalidTxnState)
    );
    assert_eq!(h.records.len(), before);
    assert_eq!(end(&mut h, p, true).0, Ok(()));
    assert_eq!(end(&mut h, p, false).0, Err(ErrorKind::InvalidTxnState));
    // The next transaction starts from nothing.
    assert_eq!(add_partitions(&mut h, p, &[(2, true)]), vec![None]);
    let t = h.state.transaction(&TXN.into()).unwrap();
    assert_eq!(t.partition_count(), 1);
    assert!(t.groups.is_empty());
}

#[test]
fn an_aborted_transaction_drops_its_offsets_and_a_later_plain_commit_wins() {
    let mut h = Harness::new();
    let p = init(&mut h, None, 1).unwrap();
    assert_eq!(
        h.commit_with(CommitReq::admin().offset(0, 5)),
        vec![(PartitionIndex(0), None)]
    );
    assert_eq!(add_offsets(&mut h, p), Ok(()));
    assert_eq!(txn_commit(&mut h, p, 0, 10), None);
    assert_eq!(txn_commit(&mut h, p, 1, 11), None);
    let (reply, markers) = end(&mut h, p, false);
    assert_eq!(reply, Ok(()));
    // Offsets only: a marker with no data partition, still owed (it completes the group's).
    assert!(markers[0].partitions.is_empty() && !markers[0].commit);
    assert_eq!(markers_written(&mut h, &markers[0]), Ok(()));
    assert_eq!(state(&h), TxnState::CompleteAbort);
    assert_eq!(fetch_stable(&mut h, 0), (5, None));
    assert_eq!(fetch_stable(&mut h, 1), (-1, None));

    // Commit: the transactional offset of partition 0 was overtaken by a plain commit
    // written after it, so partition 0 keeps the plain one; partition 1 takes the
    // transaction's.
    assert_eq!(add_offsets(&mut h, p), Ok(()));
    assert_eq!(txn_commit(&mut h, p, 0, 20), None);
    assert_eq!(txn_commit(&mut h, p, 1, 21), None);
    assert_eq!(
        h.commit_with(CommitReq::admin().offset(0, 30)),
        vec![(PartitionIndex(0), None)]
    );
    let (_, markers) = end(&mut h, p, true);
    assert_eq!(markers_written(&mut h, &markers[0]), Ok(()));
    assert_eq!(fetch_stable(&mut h, 0), (30, None));
    assert_eq!(fetch_stable(&mut h, 1), (21, None));
}

#[test]
fn a_new_instance_fences_the_old_one_and_aborts_its_transaction() {
    let mut h = Harness::new();
    let old = init(&mut h, None, 3).unwrap();
    assert_eq!(add_partitions(&mut h, old, &[(0, true)]), vec![None]);
    // The new instance's InitProducerId aborts the open transaction under a bumped epoch and
    // asks it to retry.
    let out = h.write(WriteCommand::InitTransactionalProducer(
        InitTransactionalProducer {
            now_ms: h.now_ms(),
            transactional_id: TXN.into(),
            timeout_ms: TIMEOUT_MS,
            expected: None,
            fresh_producer_id: ProducerId(99),
        },
    ));
    assert_eq!(
        out.reply,
        Reply::InitProducer(Err(ErrorKind::ConcurrentTransactions))
    );
    assert_eq!(out.txn_markers.len(), 1);
    assert!(!out.txn_markers[0].commit);
    assert_eq!(out.txn_markers[0].producer_epoch, ProducerEpoch(1));
    assert_eq!(state(&h), TxnState::PrepareAbort);
    // The zombie is fenced everywhere.
    assert_eq!(
        add_partitions(&mut h, old, &[(1, true)]),
        vec![Some(ErrorKind::ProducerFenced)]
    );
    assert_eq!(end(&mut h, old, true).0, Err(ErrorKind::ProducerFenced));
    assert_eq!(
        init(&mut h, None, 100),
        Err(ErrorKind::ConcurrentTransactions)
    );
    assert_eq!(markers_written(&mut h, &out.txn_markers[0]), Ok(()));
    assert_eq!(init(&mut h, None, 101), Ok((3, 2)));
    assert_eq!(add_offsets(&mut h, old), Err(ErrorKind::ProducerFenced));
    assert_eq!(
        add_offsets(&mut h, (4, 2)),
        Err(ErrorKind::InvalidProducerIdMapping)
    );
}

#[test]
fn kip_360_bumps_a_known_producer_answers_a_retry_alike_and_rotates_exhausted_epochs() {
    let mut h = Harness::new();
    let p = init(&mut h, None, 5).unwrap();
    assert_eq!(init(&mut h, Some(p), 6), Ok((5, 1)));
    // The answer was lost: the retry names the epoch it had and gets the same answer.
    assert_eq!(init(&mut h, Some(p), 6), Ok((5, 1)));
    assert_eq!(init(&mut h, Some((5, 1)), 6), Ok((5, 2)));
    // An epoch that is neither the current nor the last one is a zombie.
    assert_eq!(
        init(&mut h, Some((5, 0)), 6),
        Err(ErrorKind::ProducerFenced)
    );
    assert_eq!(
        init(&mut h, Some((8, 2)), 6),
        Err(ErrorKind::ProducerFenced)
    );

    // Bring the epoch next to exhaustion (as 32,000 bumps would), then rotate to the fresh id.
    let mut t = h.state.transaction(&TXN.into()).unwrap().clone();
    t.producer_epoch = ProducerEpoch(i16::MAX - 3);
    let record = Record::Transaction {
        transactional_id: TXN.into(),
        value: Some(Box::new(t)),
    };
    h.state.replay(&record);
    h.records.push(record);
    let mut epoch = i16::MAX - 3;
    while epoch < i16::MAX - 1 {
        let (_, e) = init(&mut h, Some((5, epoch)), 6).unwrap();
        assert_eq!(e, epoch + 1);
        epoch = e;
    }
    assert_eq!(init(&mut h, Some((5, epoch)), 77), Ok((77, 0)));
    let t = h.state.transaction(&TXN.into()).unwrap();
    assert_eq!(
        (t.last_producer_id, t.last_producer_epoch),
        (ProducerId(5), ProducerEpoch(i16::MAX - 1))
    );
    // A retry of the rotation by the old id with its exhausted epoch is not fenced.
    assert!(init(&mut h, Some((5, i16::MAX - 1)), 78).is_ok());
}

#[test]
fn a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced() {
    let mut h = Harness::new();
    let p = init(&mut h, None, 9).unwrap();
    assert_eq!(add_partitions(&mut h, p, &[(0, true)]), vec![None]);
    assert_eq!(add_offsets(&mut h, p), Ok(()));
    assert_eq!(txn_commit(&mut h, p, 0, 3), None);
    h.advance(i64::from(TIMEOUT_MS) - 1);
    assert_eq!(state(&h), TxnState::Ongoing);
    h.advance(1);
    assert_eq!(state(&h), TxnState::PrepareAbort);
    let markers = h.state.txn_markers_to_redrive();
    assert_eq!(markers.len(), 1);
    assert_eq!(markers[0].producer_epoch, ProducerEpoch(1));
    assert_eq!(end(&mut h, p, true).0, Err(ErrorKind::ProducerFenced));
    assert_eq!(markers_written(&mut h, &markers[0]), Ok(()));
    assert_eq!(fetch_stable(&mut h, 0), (-1, None));
    // A new leader arms the timeout of every open transaction from its recorded start.
    assert_eq!(init(&mut h, None, 10), Ok((9, 2)));
    assert_eq!(add_partitions(&mut h, (9, 2), &[(0, true)]), vec![None]);
    let start = h.now_ms();
    let armed = h.state.timers_to_arm(TimestampMs(0));
    assert!(armed.contains(&TimerOp::Set {
        key: TimerKey::TransactionTimeout {
            transactional_id: TXN.into()
        },
        at_ms: start.plus_ms(i64::from(TIMEOUT_MS)),
    }));
}

#[test]
fn bad_transactional_requests_get_kafkas_codes_and_change_nothing() {
    let mut h = Harness::with_config(Config {
        transaction_max_timeout_ms: 1_000,
        ..Config::default()
    });
    let init_with = |h: &mut Harness, id: &str, timeout_ms| {
        h.write(WriteCommand::InitTransactionalProducer(
            InitTransactionalProducer {
                now_ms: h.now_ms(),
                transactional_id: id.into(),
                timeout_ms,
                expected: None,
                fresh_producer_id: ProducerId(1),
            },
        ))
        .reply
    };
    assert_eq!(
        init_with(&mut h, TXN, 1_001),
        Reply::InitProducer(Err(ErrorKind::InvalidTransactionTimeout))
    );
    assert_eq!(
        init_with(&mut h, TXN, 0),
        Reply::InitProducer(Err(ErrorKind::InvalidTransactionTimeout))
    );
    assert_eq!(
        init_with(&mut h, "", 1_000),
        Reply::InitProducer(Err(ErrorKind::InvalidRequest))
    );
    assert!(h.records.is_empty());
    // No such transactional id.
    assert_eq!(
        add_offsets(&mut h, (1, 0)),
        Err(ErrorKind::InvalidProducerIdMapping)
    );
    assert_eq!(
        end(&mut h, (1, 0), true).0,
        Err(ErrorKind::InvalidProducerIdMapping)
    );
    assert!(h.records.is_empty());

    assert_eq!(
        init_with(&mut h, TXN, 1_000),
        Reply::InitProducer(Ok((ProducerId(1), ProducerEpoch(0))))
    );
    let p = (1, 0);
    let before = h.records.len();
    // EndTxn with no transaction; TxnOffsetCommit for a group the transaction did not add.
    assert_eq!(end(&mut h, p, true).0, Err(ErrorKind::InvalidTxnState));
    assert_eq!(
        txn_commit(&mut h, p, 0, 1),
        Some(ErrorKind::InvalidTxnState)
    );
    // An unknown partition fails alone; the others are not attempted.
    assert_eq!(
        add_partitions(&mut h, p, &[(0, true), (9, false)]),
        vec![
            Some(ErrorKind::OperationNotAttempted),
            Some(ErrorKind::UnknownTopicOrPartition)
        ]
    );
    assert_eq!(h.records.len(), before);
    assert_eq!(state(&h), TxnState::Empty);
}

#[test]
fn limits_idle_expiry_and_pending_offsets_that_never_expire() {
    let mut h = Harness::with_config(Config {
        transactions_max: 1,
        transaction_partitions_max: 2,
        transactional_id_expiration_ms: 10_000,
        offsets_retention_ms: 1_000,
        offsets_retention_check_interval_ms: 500,
        ..Config::default()
    });
    let p = init(&mut h, None, 1).unwrap();
    let other = h.write(WriteCommand::InitTransactionalProducer(
        InitTransactionalProducer {
            now_ms: h.now_ms(),
            transactional_id: "txn-2".into(),
            timeout_ms: TIMEOUT_MS,
            expected: None,
            fresh_producer_id: ProducerId(2),
        },
    ));
    assert_eq!(
        other.reply,
        Reply::InitProducer(Err(ErrorKind::TransactionsMaxReached))
    );
    assert_eq!(
        add_partitions(&mut h, p, &[(0, true), (1, true), (2, true)]),
        vec![Some(ErrorKind::TransactionPartitionsMaxReached); 3]
    );
    assert_eq!(add_offsets(&mut h, p), Ok(()));
    assert_eq!(txn_commit(&mut h, p, 0, 4), None);
    // Retention passes run while the transaction is open: the pending offset stays.
    h.write(WriteCommand::ExpireOffsets {
        now_ms: TimestampMs(h.now + 5_000),
    });
    let (_, markers) = end(&mut h, p, true);
    assert_eq!(markers_written(&mut h, &markers[0]), Ok(()));
    assert_eq!(fetch_stable(&mut h, 0), (4, None));
    // Idle past `transactional.id.expiration.ms`: forgotten, and the id is free again.
    h.write(WriteCommand::ExpireOffsets {
        now_ms: TimestampMs(h.now + 9_999),
    });
    assert!(h.state.transaction(&TXN.into()).is_some());
    h.write(WriteCommand::ExpireOffsets {
        now_ms: TimestampMs(h.now + 10_000),
    });
    assert!(h.state.transaction(&TXN.into()).is_none());
}

/// TxnOffsetCommit to a consumer-protocol (KIP-848) group: v3+ carries the member epoch in the
/// generation field and is fenced by it, by member id and, with members, refuses a member-less
/// commit (Kafka's `ConsumerGroup.validateOffsetCommit` with `isTransactional`); nothing refused
/// becomes pending or visible.
#[test]
fn a_txn_offset_commit_to_a_consumer_protocol_group_is_fenced_by_member_epoch() {
    let mut h = Harness::new();
    h.topics_changed(&[(TOPIC, 1, 1)], &[]);
    let joined = h.cg_heartbeat(&harness::consumer::Hb::join("a", &[TOPIC]));
    assert_eq!(joined.error, None, "{joined:?}");
    let member_epoch = joined.member_epoch;
    let p = init(&mut h, None, 7).unwrap();
    assert_eq!(add_offsets(&mut h, p), Ok(()));
    let commit = |h: &mut Harness, member: &str, epoch: i32, offset: i64| {
        let command = WriteCommand::TxnOffsetCommit(TxnOffsetCommit {
            producer: producer(h, p),
            group_id: GROUP.into(),
            generation: Generation(epoch),
            member_id: member.into(),
            group_instance_id: None,
            topics: vec![CommitTopic {
                name: TOPIC.into(),
                partitions: vec![CommitPartition {
                    partition: PartitionIndex(0),
                    offset: Offset(offset),
                    leader_epoch: LeaderEpoch(-1),
                    metadata: None,
                    partition_known: true,
                }],
            }],
        });
        match h.write(command).reply {
            Reply::Commit(r) => r.topics[0].1[0].1,
            other => panic!("expected a commit reply, got {other:?}"),
        }
    };
    let before = h.records.len();
    assert_eq!(
        commit(&mut h, "a", member_epoch + 1, 5),
        Some(ErrorKind::StaleMemberEpoch)
    );
    assert_eq!(
        commit(&mut h, "stranger", member_epoch, 5),
        Some(ErrorKind::UnknownMemberId)
    );
    assert_eq!(commit(&mut h, "", -1, 5), Some(ErrorKind::UnknownMemberId));
    assert_eq!(h.records.len(), before, "nothing refused was recorded");
    assert_eq!(fetch_stable(&mut h, 0), (-1, None), "nothing pending");
    assert_eq!(commit(&mut h, "a", member_epoch, 9), None);
    assert_eq!(
        fetch_stable(&mut h, 0),
        (-1, Some(ErrorKind::UnstableOffsetCommit))
    );
    let (reply, markers) = end(&mut h, p, true);
    assert_eq!(reply, Ok(()));
    assert_eq!(markers_written(&mut h, &markers[0]), Ok(()));
    assert_eq!(fetch_stable(&mut h, 0), (9, None));
}
