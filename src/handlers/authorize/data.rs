//! The gate's rows for data plane: Produce, Fetch, ListOffsets, Metadata, OffsetForLeaderEpoch, DescribeTopicPartitions, DeleteRecords, DescribeProducers.

use super::*;

/// The gate for a Produce, which the connection serves on its own path (pipelined).
pub fn before_produce(
    ctx: &RequestContext,
    r: ProduceRequest,
) -> Result<(ProduceRequest, Amend), Reply> {
    if !ctx.broker.authorizer.enabled() {
        return Ok((r, Amend::default()));
    }
    produce(&Gate::new(ctx), r)
}

pub(super) fn produce(
    g: &Gate<'_>,
    mut r: ProduceRequest,
) -> Result<(ProduceRequest, Amend), Reply> {
    // v0-2 are answered UNSUPPORTED_VERSION as a whole by the handler: nothing is written.
    if g.ctx.version < protocol::apis::PRODUCE_MIN_DECODABLE_VERSION {
        return Ok((r, Amend::default()));
    }
    if let Some(txn) = &r.transactional_id {
        if crate::handlers::produce::carries_transactional_batch(&r)
            && !g.allows(Part::TransactionalIds, &txn.0)
        {
            let code = g.code(Part::TransactionalIds);
            return Err(crate::handlers::produce::refuse_all(g.ctx, &r, code, None));
        }
    }
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topic_data), |t| {
        t.name.0.as_str()
    });
    r.topic_data = ok;
    if refused.is_empty() {
        return Ok((r, Amend::default()));
    }
    let acks = r.acks;
    let mut amend = Amend::patch(move |ctx, body| {
        if let ResponseKind::Produce(resp) = body {
            for t in refused {
                resp.responses.push(
                    produce_response::TopicProduceResponse::default()
                        .with_name(t.name)
                        .with_partition_responses(
                            t.partition_data
                                .iter()
                                .map(|p| {
                                    crate::handlers::produce::error_response(
                                        ctx,
                                        p.index,
                                        ErrorCode::TopicAuthorizationFailed,
                                        None,
                                    )
                                })
                                .collect(),
                        ),
                );
            }
        }
    });
    amend.close_if_silent = acks == 0;
    Ok((r, amend))
}

pub(super) fn fetch(g: &Gate<'_>, mut r: FetchRequest) -> Gated {
    let topics = std::mem::take(&mut r.topics);
    let (ok, refused) = if crate::handlers::fetch::replica_id(g.ctx.version, &r) >= 0 {
        if g.allows(Part::Replica, "") {
            (topics, Vec::new())
        } else {
            (Vec::new(), topics)
        }
    } else {
        // From v13 topics come by id: an id no topic has goes on to the handler, which answers
        // UNKNOWN_TOPIC_ID whatever the ACLs say, as Kafka does.
        let named: Vec<(Option<String>, fetch_request::FetchTopic)> = topics
            .into_iter()
            .map(|t| (crate::handlers::fetch::topic_name(g.ctx, &t), t))
            .collect();
        let (ok, refused) = g.split(Part::Topics, named, |(name, _)| {
            name.as_deref().unwrap_or_default()
        });
        let mut ok: Vec<_> = ok.into_iter().map(|(_, t)| t).collect();
        let mut denied = Vec::new();
        for (name, t) in refused {
            if name.is_none() {
                ok.push(t);
            } else {
                denied.push(t);
            }
        }
        (ok, denied)
    };
    if refused.is_empty() {
        r.topics = ok;
        return run(RequestKind::Fetch(r), Amend::default());
    }
    let v = g.ctx.version;
    let refuse = move |ctx: &RequestContext, resp: &mut FetchResponse| {
        for t in refused {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut d = fetch_response::PartitionData::default()
                        .with_partition_index(p.partition)
                        .with_error_code(ctx.error(ErrorCode::TopicAuthorizationFailed))
                        .with_high_watermark(-1)
                        .with_last_stable_offset(-1)
                        .with_records(Some(bytes::Bytes::new()));
                    if v >= 5 {
                        d = d.with_log_start_offset(-1);
                    }
                    d
                })
                .collect();
            // Only one of name (below v13) and id (from v13) was decoded.
            resp.responses.push(
                fetch_response::FetchableTopicResponse::default()
                    .with_topic(t.topic)
                    .with_topic_id(t.topic_id)
                    .with_partitions(partitions),
            );
        }
    };
    // Nothing left to wait for: answer at once, as Kafka does, not after max_wait_ms.
    if ok.is_empty() {
        let mut resp = FetchResponse::default();
        refuse(g.ctx, &mut resp);
        return answer(ResponseKind::Fetch(resp));
    }
    r.topics = ok;
    run(
        RequestKind::Fetch(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::Fetch(resp) = body {
                refuse(ctx, resp);
            }
        }),
    )
}

pub(super) fn list_offsets(g: &Gate<'_>, mut r: ListOffsetsRequest) -> Gated {
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.name.0.as_str()
    });
    r.topics = ok;
    if refused.is_empty() {
        return run(RequestKind::ListOffsets(r), Amend::default());
    }
    let v = g.ctx.version;
    run(
        RequestKind::ListOffsets(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::ListOffsets(resp) = body {
                for t in refused {
                    let partitions = t
                        .partitions
                        .iter()
                        .map(|p| {
                            let mut e =
                                list_offsets_response::ListOffsetsPartitionResponse::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(ctx.error(ErrorCode::TopicAuthorizationFailed))
                                    .with_timestamp(-1)
                                    .with_offset(-1);
                            if v >= 4 {
                                e = e.with_leader_epoch(-1);
                            }
                            e
                        })
                        .collect();
                    resp.topics.push(
                        list_offsets_response::ListOffsetsTopicResponse::default()
                            .with_name(t.name)
                            .with_partitions(partitions),
                    );
                }
            }
        }),
    )
}

pub(super) fn metadata(g: &Gate<'_>, mut r: MetadataRequest) -> Gated {
    let v = g.ctx.version;
    let topic_ops = v >= 8 && r.include_topic_authorized_operations;
    let cluster_ops = (8..=10).contains(&v) && r.include_cluster_authorized_operations;
    let listing = match &r.topics {
        None => true,
        Some(t) => t.is_empty() && v == 0,
    };
    let mut refused: Vec<String> = Vec::new();
    let mut asked_by_name: Vec<String> = Vec::new();
    if let Some(topics) = r.topics.as_mut().filter(|_| !listing) {
        let broker = &g.ctx.broker;
        let auto_create =
            broker.config.auto_create_topics && (v < 4 || r.allow_auto_topic_creation);
        topics.retain(|t| {
            let Some(name) = t.name.as_ref().filter(|n| !n.0.is_empty()) else {
                return true; // by id: checked on the answer, once the name is known
            };
            let name = name.0.to_string();
            let allowed = g.allows(Part::Topics, &name)
                && (!auto_create
                    || broker.catalog.topic(&name).is_some()
                    || g.allows(Part::NewTopics, &name));
            if !allowed {
                refused.push(name.clone());
            }
            asked_by_name.push(name);
            allowed
        });
    }
    // Every asked-for name refused at v0: an empty list would mean "all topics".
    let nothing_left = !listing && v == 0 && r.topics.as_ref().is_some_and(Vec::is_empty);
    let gate_host = g.host.clone();
    run(
        RequestKind::Metadata(r),
        Amend::patch(move |ctx, body| {
            let ResponseKind::Metadata(resp) = body else {
                return;
            };
            let g = Gate {
                ctx,
                host: gate_host,
            };
            if nothing_left {
                resp.topics.clear();
            }
            let topics = std::mem::take(&mut resp.topics);
            for mut t in topics {
                let name = t.name.as_ref().map(|n| n.0.to_string());
                let allowed = name.as_deref().is_none_or(|n| g.allows(Part::Topics, n));
                if allowed {
                    if topic_ops && t.error_code == 0 {
                        if let Some(n) = &name {
                            t.topic_authorized_operations = g.operations(AclResourceType::Topic, n);
                        }
                    }
                    resp.topics.push(t);
                } else if !listing {
                    // Asked by id: the id is answered, never the name behind it.
                    let by_id = name.as_ref().is_none_or(|n| !asked_by_name.contains(n));
                    let mut e = metadata_response::MetadataResponseTopic::default()
                        .with_error_code(ctx.error(ErrorCode::TopicAuthorizationFailed))
                        .with_topic_authorized_operations(t.topic_authorized_operations);
                    if by_id {
                        e = e.with_name(None).with_topic_id(t.topic_id);
                    } else {
                        e = e.with_name(t.name);
                    }
                    resp.topics.push(e);
                }
            }
            for name in refused {
                let ops = crate::handlers::metadata::OPERATIONS_NOT_REQUESTED;
                resp.topics.push(
                    metadata_response::MetadataResponseTopic::default()
                        .with_error_code(ctx.error(ErrorCode::TopicAuthorizationFailed))
                        .with_name(Some(TopicName(StrBytes::from_string(name))))
                        .with_topic_authorized_operations(ops),
                );
            }
            if cluster_ops {
                resp.cluster_authorized_operations =
                    if g.allows_op(AclOperation::Describe, AclResourceType::Cluster, "") {
                        g.operations(AclResourceType::Cluster, "")
                    } else {
                        0
                    };
            }
        }),
    )
}

pub(super) fn offset_for_leader_epoch(g: &Gate<'_>, mut r: OffsetForLeaderEpochRequest) -> Gated {
    if g.allows(Part::Cluster, "") {
        return run(RequestKind::OffsetForLeaderEpoch(r), Amend::default());
    }
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.topic.0.as_str()
    });
    r.topics = ok;
    if refused.is_empty() {
        return run(RequestKind::OffsetForLeaderEpoch(r), Amend::default());
    }
    run(
        RequestKind::OffsetForLeaderEpoch(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::OffsetForLeaderEpoch(resp) = body {
                for t in refused {
                    let partitions = t
                        .partitions
                        .iter()
                        .map(|p| {
                            offset_for_leader_epoch_response::EpochEndOffset::default()
                                .with_partition(p.partition)
                                .with_error_code(ctx.error(ErrorCode::TopicAuthorizationFailed))
                                .with_leader_epoch(-1)
                                .with_end_offset(-1)
                        })
                        .collect();
                    resp.topics.push(
                        offset_for_leader_epoch_response::OffsetForLeaderTopicResult::default()
                            .with_topic(t.topic)
                            .with_partitions(partitions),
                    );
                }
            }
        }),
    )
}

pub(super) fn describe_topic_partitions(
    g: &Gate<'_>,
    mut r: DescribeTopicPartitionsRequest,
) -> Gated {
    let listing = r.topics.is_empty();
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.name.0.as_str()
    });
    let nothing_left = !listing && ok.is_empty();
    r.topics = ok;
    let host = g.host.clone();
    run(
        RequestKind::DescribeTopicPartitions(r),
        Amend::patch(move |ctx, body| {
            let ResponseKind::DescribeTopicPartitions(resp) = body else {
                return;
            };
            let g = Gate { ctx, host };
            if nothing_left {
                resp.topics.clear();
                resp.next_cursor = None;
            }
            let topics = std::mem::take(&mut resp.topics);
            for mut t in topics {
                let name = t.name.as_ref().map(|n| n.0.to_string());
                match name {
                    Some(n) if !g.allows(Part::Topics, &n) => {} // listed: left out
                    Some(n) => {
                        if t.error_code == 0 {
                            t.topic_authorized_operations =
                                g.operations(AclResourceType::Topic, &n);
                        }
                        resp.topics.push(t);
                    }
                    None => resp.topics.push(t),
                }
            }
            for t in refused {
                resp.topics.push(
                    describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic::default()
                        .with_error_code(ctx.error(ErrorCode::TopicAuthorizationFailed))
                        .with_name(Some(t.name))
                        .with_topic_id(Uuid::nil()),
                );
            }
        }),
    )
}

pub(super) fn delete_records(g: &Gate<'_>, mut r: DeleteRecordsRequest) -> Gated {
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.name.0.as_str()
    });
    r.topics = ok;
    if refused.is_empty() {
        return run(RequestKind::DeleteRecords(r), Amend::default());
    }
    run(
        RequestKind::DeleteRecords(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::DeleteRecords(resp) = body {
                for t in refused {
                    let partitions = t
                        .partitions
                        .iter()
                        .map(|p| {
                            delete_records_response::DeleteRecordsPartitionResult::default()
                                .with_partition_index(p.partition_index)
                                .with_low_watermark(-1)
                                .with_error_code(ctx.error(ErrorCode::TopicAuthorizationFailed))
                        })
                        .collect();
                    resp.topics.push(
                        delete_records_response::DeleteRecordsTopicResult::default()
                            .with_name(t.name)
                            .with_partitions(partitions),
                    );
                }
            }
        }),
    )
}

pub(super) fn describe_producers(g: &Gate<'_>, mut r: DescribeProducersRequest) -> Gated {
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.name.0.as_str()
    });
    r.topics = ok;
    if refused.is_empty() {
        return run(RequestKind::DescribeProducers(r), Amend::default());
    }
    run(
        RequestKind::DescribeProducers(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::DescribeProducers(resp) = body {
                for t in refused {
                    let code = ErrorCode::TopicAuthorizationFailed;
                    let partitions = t
                        .partition_indexes
                        .iter()
                        .map(|i| {
                            describe_producers_response::PartitionResponse::default()
                                .with_partition_index(*i)
                                .with_error_code(ctx.error(code))
                                .with_error_message(Some(s(code.default_message())))
                        })
                        .collect();
                    resp.topics.push(
                        describe_producers_response::TopicResponse::default()
                            .with_name(t.name)
                            .with_partitions(partitions),
                    );
                }
            }
        }),
    )
}
