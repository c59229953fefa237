//! The gate's rows for transactions: InitProducerId, the transaction APIs, DescribeTransactions, ListTransactions, WriteTxnMarkers.

use super::*;

pub(super) fn init_producer_id(g: &Gate<'_>, r: InitProducerIdRequest) -> Gated {
    let refused = match &r.transactional_id {
        Some(txn) => {
            (!g.allows(Part::TransactionalIds, &txn.0)).then(|| g.code(Part::TransactionalIds))
        }
        None => (!g.allows(Part::Idempotent, "")).then(|| g.code(Part::Idempotent)),
    };
    match refused {
        None => run(RequestKind::InitProducerId(r), Amend::default()),
        Some(code) => answer(ResponseKind::InitProducerId(
            InitProducerIdResponse::default()
                .with_error_code(g.ctx.error(code))
                .with_producer_id(ProducerId(-1))
                .with_producer_epoch(-1),
        )),
    }
}

pub(super) fn describe_transactions(g: &Gate<'_>, mut r: DescribeTransactionsRequest) -> Gated {
    let (ok, refused) = g.split(
        Part::TransactionalIds,
        std::mem::take(&mut r.transactional_ids),
        |id| &id.0,
    );
    r.transactional_ids = ok;
    let code = g.code(Part::TransactionalIds);
    let host = g.host.clone();
    run(
        RequestKind::DescribeTransactions(r),
        Amend::patch(move |ctx, body| {
            let ResponseKind::DescribeTransactions(resp) = body else {
                return;
            };
            let g = Gate { ctx, host };
            // The partitions of topics the principal may not DESCRIBE are left out.
            for state in resp.transaction_states.iter_mut() {
                state.topics.retain(|t| g.allows(Part::Topics, &t.topic.0));
            }
            for id in refused {
                resp.transaction_states.push(
                    describe_transactions_response::TransactionState::default()
                        .with_error_code(ctx.error(code))
                        .with_transactional_id(id)
                        .with_transaction_state(s(""))
                        .with_producer_id(ProducerId(-1))
                        .with_producer_epoch(-1)
                        .with_transaction_start_time_ms(-1),
                );
            }
        }),
    )
}

pub(super) fn list_transactions(g: &Gate<'_>, r: ListTransactionsRequest) -> Gated {
    let host = g.host.clone();
    run(
        RequestKind::ListTransactions(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::ListTransactions(resp) = body {
                let g = Gate { ctx, host };
                resp.transaction_states
                    .retain(|t| g.allows(Part::TransactionalIds, &t.transactional_id.0));
            }
        }),
    )
}

pub(super) fn add_partitions_to_txn(g: &Gate<'_>, r: AddPartitionsToTxnRequest) -> Gated {
    // v0-3 (the served range): one transaction. The id first; then, if any topic lacks WRITE,
    // nothing is added: those topics answer TOPIC_AUTHORIZATION_FAILED, the others
    // OPERATION_NOT_ATTEMPTED.
    let all_refused = !g.allows(Part::TransactionalIds, &r.v3_and_below_transactional_id.0);
    let refused_topics: Vec<&str> = r
        .v3_and_below_topics
        .iter()
        .map(|t| t.name.0.as_str())
        .filter(|n| !g.allows(Part::Topics, n))
        .collect();
    if !all_refused && refused_topics.is_empty() {
        return run(RequestKind::AddPartitionsToTxn(r), Amend::default());
    }
    let results = r
        .v3_and_below_topics
        .iter()
        .map(|t| {
            let code = if all_refused {
                g.code(Part::TransactionalIds)
            } else if refused_topics.contains(&t.name.0.as_str()) {
                g.code(Part::Topics)
            } else {
                ErrorCode::OperationNotAttempted
            };
            add_partitions_to_txn_response::AddPartitionsToTxnTopicResult::default()
                .with_name(t.name.clone())
                .with_results_by_partition(
                    t.partitions
                        .iter()
                        .map(|p| {
                            add_partitions_to_txn_response::AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(*p)
                                .with_partition_error_code(g.ctx.error(code))
                        })
                        .collect(),
                )
        })
        .collect();
    answer(ResponseKind::AddPartitionsToTxn(
        AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(results),
    ))
}

pub(super) fn add_offsets_to_txn(g: &Gate<'_>, r: AddOffsetsToTxnRequest) -> Gated {
    let refused = if !g.allows(Part::TransactionalIds, &r.transactional_id.0) {
        Some(g.code(Part::TransactionalIds))
    } else if !g.allows(Part::Groups, &r.group_id.0) {
        Some(g.code(Part::Groups))
    } else {
        None
    };
    match refused {
        None => run(RequestKind::AddOffsetsToTxn(r), Amend::default()),
        Some(code) => answer(ResponseKind::AddOffsetsToTxn(
            AddOffsetsToTxnResponse::default().with_error_code(g.ctx.error(code)),
        )),
    }
}

pub(super) fn txn_offset_commit(g: &Gate<'_>, mut r: TxnOffsetCommitRequest) -> Gated {
    let every_partition = |ctx: &RequestContext,
                           topics: &[txn_offset_commit_request::TxnOffsetCommitRequestTopic],
                           code: ErrorCode| {
        topics
            .iter()
            .map(|t| {
                txn_offset_commit_response::TxnOffsetCommitResponseTopic::default()
                    .with_name(t.name.clone())
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                txn_offset_commit_response::TxnOffsetCommitResponsePartition::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(ctx.error(code))
                            })
                            .collect(),
                    )
            })
            .collect::<Vec<_>>()
    };
    let whole = if !g.allows(Part::TransactionalIds, &r.transactional_id.0) {
        Some(g.code(Part::TransactionalIds))
    } else if !g.allows(Part::Groups, &r.group_id.0) {
        Some(g.code(Part::Groups))
    } else {
        None
    };
    if let Some(code) = whole {
        let topics = every_partition(g.ctx, &r.topics, code);
        return answer(ResponseKind::TxnOffsetCommit(
            TxnOffsetCommitResponse::default().with_topics(topics),
        ));
    }
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.name.0.as_str()
    });
    r.topics = ok;
    if refused.is_empty() {
        return run(RequestKind::TxnOffsetCommit(r), Amend::default());
    }
    run(
        RequestKind::TxnOffsetCommit(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::TxnOffsetCommit(resp) = body {
                resp.topics.extend(every_partition(
                    ctx,
                    &refused,
                    ErrorCode::TopicAuthorizationFailed,
                ));
            }
        }),
    )
}

pub(super) fn write_txn_markers(g: &Gate<'_>, r: WriteTxnMarkersRequest) -> Gated {
    if g.allows(Part::Cluster, "") {
        return run(RequestKind::WriteTxnMarkers(r), Amend::default());
    }
    let code = g.code(Part::Cluster);
    let markers = r
        .markers
        .iter()
        .map(|m| {
            write_txn_markers_response::WritableTxnMarkerResult::default()
                .with_producer_id(m.producer_id)
                .with_topics(
                    m.topics
                        .iter()
                        .map(|t| {
                            write_txn_markers_response::WritableTxnMarkerTopicResult::default()
                                .with_name(t.name.clone())
                                .with_partitions(
                                    t.partition_indexes
                                        .iter()
                                        .map(|i| {
                                            write_txn_markers_response::WritableTxnMarkerPartitionResult::default()
                                                .with_partition_index(*i)
                                                .with_error_code(g.ctx.error(code))
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                )
        })
        .collect();
    answer(ResponseKind::WriteTxnMarkers(
        WriteTxnMarkersResponse::default().with_markers(markers),
    ))
}
