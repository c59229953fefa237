//! The request gate (decision 0149): every request passes here before its handler, and the
//! checks are the rows of `security::api_acls`. Kafka's way, as KafkaApis does it: split a
//! request into the parts the principal may act on and the parts it may not, let the handler
//! serve the first, then merge the refusals (or leave out what the principal may not see)
//! into the answer.
//!
//! ```text
//!  request ─► before(ctx, body) ─┬─ Answer(reply)            refused as a whole
//!                                └─ Run(body', amend) ─► handler ─► amend.apply(reply)
//!                                         body' = what may be done;  amend = the refused
//!                                         items' codes, filters, authorized operations
//! ```
//!
//! With `--authorizer none` `before` is one branch and hands the request on untouched.
//! The ACLs are read at each request, so a change counts for connections already open.

use std::collections::HashMap;

use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use protocol::ErrorCode;
use raft_meta::cohort_app::{AclOperation, AclResourceType};
use uuid::Uuid;

use super::{Reply, RequestContext};
use crate::security::api_acls::{needs_of, reported_operations, Denied, Part};
use crate::security::authorizer::CLUSTER_NAME;

/// The gate's verdict.
pub enum Gated {
    /// Answer this; the handler does not run.
    Answer(Reply),
    /// Run the handler on this request, then apply the amendment to its answer.
    Run(Box<RequestKind>, Amend),
}

fn run(body: RequestKind, amend: Amend) -> Gated {
    Gated::Run(Box::new(body), amend)
}

type Patch = Box<dyn FnOnce(&RequestContext, &mut ResponseKind) + Send>;

/// What the gate adds to the handler's answer.
#[derive(Default)]
pub struct Amend {
    patch: Option<Patch>,
    /// An `acks=0` Produce with refused partitions: Kafka closes the connection.
    close_if_silent: bool,
}

impl Amend {
    fn patch(f: impl FnOnce(&RequestContext, &mut ResponseKind) + Send + 'static) -> Amend {
        Amend {
            patch: Some(Box::new(f)),
            close_if_silent: false,
        }
    }

    /// The handler's answer with the refusals merged in.
    pub fn apply(self, ctx: &RequestContext, reply: Reply) -> Reply {
        let Some(patch) = self.patch else {
            return reply;
        };
        match reply {
            Reply::Body(mut body) => {
                patch(ctx, &mut body);
                Reply::Body(body)
            }
            Reply::Spliced(mut body, splicer) => {
                patch(ctx, &mut body);
                Reply::Spliced(body, splicer)
            }
            Reply::Nothing if self.close_if_silent => {
                Reply::Close("acks=0 produce to a topic without WRITE")
            }
            other => other,
        }
    }
}

fn answer(body: ResponseKind) -> Gated {
    Gated::Answer(Reply::Body(Box::new(body)))
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

/// Checks one request against the table.
struct Gate<'a> {
    ctx: &'a RequestContext,
    host: String,
}

impl<'a> Gate<'a> {
    fn new(ctx: &'a RequestContext) -> Self {
        Gate {
            ctx,
            host: ctx.peer.ip().to_string(),
        }
    }

    fn allows_op(
        &self,
        operation: AclOperation,
        resource_type: AclResourceType,
        name: &str,
    ) -> bool {
        let name = if resource_type == AclResourceType::Cluster {
            CLUSTER_NAME
        } else {
            name
        };
        self.ctx.broker.authorizer.authorize(
            &self.ctx.principal,
            &self.host,
            operation,
            resource_type,
            name,
        )
    }

    /// The rows of `part` for `name`, in order: `Ok` once one allows, else the denial of the
    /// first row that does not defer to the next.
    fn check(&self, part: Part, name: &str) -> Result<(), Denied> {
        let mut last = None;
        for n in needs_of(self.ctx.api_key, part) {
            let allowed = if part == Part::Idempotent && n.resource_type != AclResourceType::Cluster
            {
                self.ctx.broker.authorizer.authorize_by_resource_type(
                    &self.ctx.principal,
                    &self.host,
                    n.operation,
                    n.resource_type,
                )
            } else {
                self.allows_op(n.operation, n.resource_type, name)
            };
            if allowed {
                return Ok(());
            }
            if n.denied != Denied::TryNext {
                return Err(n.denied);
            }
            last = Some(n.denied);
        }
        match last {
            Some(d) => Err(d),
            None => Ok(()),
        }
    }

    fn allows(&self, part: Part, name: &str) -> bool {
        self.check(part, name).is_ok()
    }

    /// The code a refusal of `part` answers (the table's).
    fn code(&self, part: Part) -> ErrorCode {
        needs_of(self.ctx.api_key, part)
            .find_map(|n| match n.denied {
                Denied::Item(c) | Denied::Request(c) => Some(c),
                _ => None,
            })
            .unwrap_or(ErrorCode::UnknownServerError)
    }

    /// The error code of `part`'s refusal, counted in the metrics.
    fn err(&self, part: Part) -> i16 {
        self.ctx.error(self.code(part))
    }

    /// Splits `items` into (allowed, refused) by `part` on `name(item)`, one check per name.
    fn split<T>(&self, part: Part, items: Vec<T>, name: impl Fn(&T) -> &str) -> (Vec<T>, Vec<T>) {
        let mut seen: HashMap<String, bool> = HashMap::new();
        let mut ok = Vec::with_capacity(items.len());
        let mut refused = Vec::new();
        for item in items {
            let n = name(&item);
            let allowed = match seen.get(n) {
                Some(a) => *a,
                None => {
                    let a = self.allows(part, n);
                    seen.insert(n.to_owned(), a);
                    a
                }
            };
            if allowed {
                ok.push(item);
            } else {
                refused.push(item);
            }
        }
        (ok, refused)
    }

    /// Kafka's `authorized_operations` for a resource.
    fn operations(&self, resource_type: AclResourceType, name: &str) -> i32 {
        let name = if resource_type == AclResourceType::Cluster {
            CLUSTER_NAME
        } else {
            name
        };
        self.ctx.broker.authorizer.operations_bits(
            &self.ctx.principal,
            &self.host,
            resource_type,
            name,
            reported_operations(resource_type),
        )
    }
}

/// The gate: what the principal may not do is refused here, the rest goes to the handler.
pub fn before(ctx: &RequestContext, body: RequestKind) -> Gated {
    if !ctx.broker.authorizer.enabled() {
        return run(body, Amend::default());
    }
    let g = Gate::new(ctx);
    match body {
        RequestKind::Produce(r) => match produce(&g, r) {
            Ok((r, amend)) => run(RequestKind::Produce(r), amend),
            Err(reply) => Gated::Answer(reply),
        },
        RequestKind::Fetch(r) => fetch(&g, r),
        RequestKind::ListOffsets(r) => list_offsets(&g, r),
        RequestKind::Metadata(r) => metadata(&g, r),
        RequestKind::CreateTopics(r) => create_topics(&g, r),
        RequestKind::DeleteTopics(r) => delete_topics(&g, r),
        RequestKind::InitProducerId(r) => init_producer_id(&g, r),
        RequestKind::FindCoordinator(r) => find_coordinator(&g, r),
        RequestKind::JoinGroup(r) => join_group(&g, r),
        RequestKind::SyncGroup(r) => sync_group(&g, r),
        RequestKind::Heartbeat(r) => {
            if g.allows(Part::Groups, &r.group_id.0) {
                run(RequestKind::Heartbeat(r), Amend::default())
            } else {
                answer(ResponseKind::Heartbeat(
                    HeartbeatResponse::default().with_error_code(g.err(Part::Groups)),
                ))
            }
        }
        RequestKind::LeaveGroup(r) => {
            if g.allows(Part::Groups, &r.group_id.0) {
                run(RequestKind::LeaveGroup(r), Amend::default())
            } else {
                answer(ResponseKind::LeaveGroup(
                    LeaveGroupResponse::default().with_error_code(g.err(Part::Groups)),
                ))
            }
        }
        RequestKind::OffsetCommit(r) => offset_commit(&g, r),
        RequestKind::OffsetFetch(r) => offset_fetch(&g, r),
        RequestKind::OffsetDelete(r) => offset_delete(&g, r),
        RequestKind::DeleteGroups(r) => delete_groups(&g, r),
        RequestKind::ListGroups(r) => list_groups(&g, r),
        RequestKind::DescribeGroups(r) => describe_groups(&g, r),
        RequestKind::ConsumerGroupHeartbeat(r) => consumer_group_heartbeat(&g, r),
        RequestKind::ConsumerGroupDescribe(r) => consumer_group_describe(&g, r),
        RequestKind::DescribeConfigs(r) => describe_configs(&g, r),
        RequestKind::AlterConfigs(r) => alter_configs(&g, r),
        RequestKind::IncrementalAlterConfigs(r) => incremental_alter_configs(&g, r),
        RequestKind::CreatePartitions(r) => create_partitions(&g, r),
        RequestKind::DeleteRecords(r) => delete_records(&g, r),
        RequestKind::DescribeLogDirs(r) => {
            if g.allows(Part::Cluster, "") {
                run(RequestKind::DescribeLogDirs(r), Amend::default())
            } else {
                answer(ResponseKind::DescribeLogDirs(
                    DescribeLogDirsResponse::default().with_error_code(g.err(Part::Cluster)),
                ))
            }
        }
        RequestKind::OffsetForLeaderEpoch(r) => offset_for_leader_epoch(&g, r),
        RequestKind::DescribeCluster(r) => describe_cluster(&g, r),
        RequestKind::DescribeTopicPartitions(r) => describe_topic_partitions(&g, r),
        RequestKind::DescribeUserScramCredentials(r) => describe_scram(&g, r),
        RequestKind::AlterUserScramCredentials(r) => alter_scram(&g, r),
        RequestKind::DescribeProducers(r) => describe_producers(&g, r),
        RequestKind::DescribeTransactions(r) => describe_transactions(&g, r),
        RequestKind::ListTransactions(r) => list_transactions(&g, r),
        RequestKind::AddPartitionsToTxn(r) => add_partitions_to_txn(&g, r),
        RequestKind::AddOffsetsToTxn(r) => add_offsets_to_txn(&g, r),
        RequestKind::EndTxn(r) => {
            if g.allows(Part::TransactionalIds, &r.transactional_id.0) {
                run(RequestKind::EndTxn(r), Amend::default())
            } else {
                answer(ResponseKind::EndTxn(
                    EndTxnResponse::default().with_error_code(g.err(Part::TransactionalIds)),
                ))
            }
        }
        RequestKind::TxnOffsetCommit(r) => txn_offset_commit(&g, r),
        RequestKind::WriteTxnMarkers(r) => write_txn_markers(&g, r),
        // The ACL APIs check their row in `acl_common::gate` (after SECURITY_DISABLED, which
        // Kafka answers first); ApiVersions and SASL are never authorized.
        other => run(other, Amend::default()),
    }
}

// --- Data plane -------------------------------------------------------------------------------

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

fn produce(g: &Gate<'_>, mut r: ProduceRequest) -> Result<(ProduceRequest, Amend), Reply> {
    // v0-2 are answered UNSUPPORTED_VERSION as a whole by the handler: nothing is written.
    if g.ctx.version < protocol::apis::PRODUCE_MIN_DECODABLE_VERSION {
        return Ok((r, Amend::default()));
    }
    if let Some(txn) = &r.transactional_id {
        if super::produce::carries_transactional_batch(&r)
            && !g.allows(Part::TransactionalIds, &txn.0)
        {
            let code = g.code(Part::TransactionalIds);
            return Err(super::produce::refuse_all(g.ctx, &r, code, None));
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
                                    super::produce::error_response(
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

fn fetch(g: &Gate<'_>, mut r: FetchRequest) -> Gated {
    let topics = std::mem::take(&mut r.topics);
    let (ok, refused) = if r.replica_id.0 >= 0 {
        if g.allows(Part::Replica, "") {
            (topics, Vec::new())
        } else {
            (Vec::new(), topics)
        }
    } else {
        g.split(Part::Topics, topics, |t| t.topic.0.as_str())
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
            resp.responses.push(
                fetch_response::FetchableTopicResponse::default()
                    .with_topic(t.topic)
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

fn list_offsets(g: &Gate<'_>, mut r: ListOffsetsRequest) -> Gated {
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

fn metadata(g: &Gate<'_>, mut r: MetadataRequest) -> Gated {
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
                let ops = super::metadata::OPERATIONS_NOT_REQUESTED;
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

fn offset_for_leader_epoch(g: &Gate<'_>, mut r: OffsetForLeaderEpochRequest) -> Gated {
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

fn describe_topic_partitions(g: &Gate<'_>, mut r: DescribeTopicPartitionsRequest) -> Gated {
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

fn delete_records(g: &Gate<'_>, mut r: DeleteRecordsRequest) -> Gated {
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

fn describe_producers(g: &Gate<'_>, mut r: DescribeProducersRequest) -> Gated {
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

// --- Topic administration --------------------------------------------------------------------

fn create_topics(g: &Gate<'_>, mut r: CreateTopicsRequest) -> Gated {
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.name.0.as_str()
    });
    r.topics = ok;
    let v = g.ctx.version;
    let host = g.host.clone();
    run(
        RequestKind::CreateTopics(r),
        Amend::patch(move |ctx, body| {
            let ResponseKind::CreateTopics(resp) = body else {
                return;
            };
            let g = Gate { ctx, host };
            // v5+ returns the new topic's configs: only to who may DESCRIBE_CONFIGS it.
            if v >= 5 {
                for t in resp.topics.iter_mut().filter(|t| t.error_code == 0) {
                    if !g.allows(Part::TopicConfigs, &t.name.0) {
                        t.topic_config_error_code = g.err(Part::TopicConfigs);
                        t.num_partitions = -1;
                        t.replication_factor = -1;
                        t.configs = Some(Vec::new());
                    }
                }
            }
            for t in refused {
                resp.topics.push(
                    create_topics_response::CreatableTopicResult::default()
                        .with_name(t.name)
                        .with_error_code(ctx.error(ErrorCode::TopicAuthorizationFailed))
                        .with_error_message(Some(s("Authorization failed.")))
                        .with_num_partitions(-1)
                        .with_replication_factor(-1),
                );
            }
        }),
    )
}

fn delete_topics(g: &Gate<'_>, mut r: DeleteTopicsRequest) -> Gated {
    let catalog = &g.ctx.broker.catalog;
    // v6 names topics in `topics` (by name or by id), earlier versions in `topic_names`.
    let (names_ok, names_refused) =
        g.split(Part::Topics, std::mem::take(&mut r.topic_names), |n| {
            n.0.as_str()
        });
    r.topic_names = names_ok;
    let mut refused: Vec<(Option<TopicName>, Uuid)> = names_refused
        .into_iter()
        .map(|n| (Some(n), Uuid::nil()))
        .collect();
    let states = std::mem::take(&mut r.topics);
    for t in states {
        let name = match &t.name {
            Some(n) if !n.0.is_empty() => Some(n.0.to_string()),
            _ => catalog
                .topic_by_id(t.topic_id)
                .map(|spec| spec.name.clone()),
        };
        match name {
            Some(n) if !g.allows(Part::Topics, &n) => {
                // Asked by id: answered by id, the name stays hidden.
                let by_name = t.name.as_ref().filter(|n| !n.0.is_empty()).cloned();
                refused.push((by_name, t.topic_id));
            }
            _ => r.topics.push(t),
        }
    }
    if refused.is_empty() {
        return run(RequestKind::DeleteTopics(r), Amend::default());
    }
    run(
        RequestKind::DeleteTopics(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::DeleteTopics(resp) = body {
                for (name, id) in refused {
                    resp.responses.push(
                        delete_topics_response::DeletableTopicResult::default()
                            .with_name(name)
                            .with_topic_id(id)
                            .with_error_code(ctx.error(ErrorCode::TopicAuthorizationFailed)),
                    );
                }
            }
        }),
    )
}

fn create_partitions(g: &Gate<'_>, mut r: CreatePartitionsRequest) -> Gated {
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.name.0.as_str()
    });
    r.topics = ok;
    if refused.is_empty() {
        return run(RequestKind::CreatePartitions(r), Amend::default());
    }
    run(
        RequestKind::CreatePartitions(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::CreatePartitions(resp) = body {
                let code = ErrorCode::TopicAuthorizationFailed;
                for t in refused {
                    resp.results.push(
                        create_partitions_response::CreatePartitionsTopicResult::default()
                            .with_name(t.name)
                            .with_error_code(ctx.error(code))
                            .with_error_message(Some(s(code.default_message()))),
                    );
                }
            }
        }),
    )
}

// --- Configs ---------------------------------------------------------------------------------

/// Which table part a config resource type is checked under (TOPIC 2, BROKER 4,
/// BROKER_LOGGER 8, GROUP 32); `None`: the handler refuses the type itself.
fn config_part(resource_type: i8) -> Option<Part> {
    match resource_type {
        2 => Some(Part::TopicConfigs),
        4 | 8 => Some(Part::BrokerConfigs),
        32 => Some(Part::GroupConfigs),
        _ => None,
    }
}

fn config_refused(g: &Gate<'_>, resource_type: i8, name: &str) -> Option<ErrorCode> {
    let part = config_part(resource_type)?;
    (!g.allows(part, name)).then(|| g.code(part))
}

fn describe_configs(g: &Gate<'_>, mut r: DescribeConfigsRequest) -> Gated {
    let mut refused = Vec::new();
    let resources = std::mem::take(&mut r.resources);
    for res in resources {
        match config_refused(g, res.resource_type, &res.resource_name) {
            Some(code) => refused.push((res.resource_type, res.resource_name, code)),
            None => r.resources.push(res),
        }
    }
    if refused.is_empty() {
        return run(RequestKind::DescribeConfigs(r), Amend::default());
    }
    run(
        RequestKind::DescribeConfigs(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::DescribeConfigs(resp) = body {
                for (resource_type, name, code) in refused {
                    resp.results.push(
                        describe_configs_response::DescribeConfigsResult::default()
                            .with_error_code(ctx.error(code))
                            .with_error_message(Some(s(code.default_message())))
                            .with_resource_type(resource_type)
                            .with_resource_name(name),
                    );
                }
            }
        }),
    )
}

fn alter_configs(g: &Gate<'_>, mut r: AlterConfigsRequest) -> Gated {
    let mut refused = Vec::new();
    let resources = std::mem::take(&mut r.resources);
    for res in resources {
        match config_refused(g, res.resource_type, &res.resource_name) {
            Some(code) => refused.push((res.resource_type, res.resource_name, code)),
            None => r.resources.push(res),
        }
    }
    if refused.is_empty() {
        return run(RequestKind::AlterConfigs(r), Amend::default());
    }
    run(
        RequestKind::AlterConfigs(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::AlterConfigs(resp) = body {
                for (resource_type, name, code) in refused {
                    resp.responses.push(
                        alter_configs_response::AlterConfigsResourceResponse::default()
                            .with_error_code(ctx.error(code))
                            .with_error_message(Some(s(code.default_message())))
                            .with_resource_type(resource_type)
                            .with_resource_name(name),
                    );
                }
            }
        }),
    )
}

fn incremental_alter_configs(g: &Gate<'_>, mut r: IncrementalAlterConfigsRequest) -> Gated {
    let mut refused = Vec::new();
    let resources = std::mem::take(&mut r.resources);
    for res in resources {
        match config_refused(g, res.resource_type, &res.resource_name) {
            Some(code) => refused.push((res.resource_type, res.resource_name, code)),
            None => r.resources.push(res),
        }
    }
    if refused.is_empty() {
        return run(RequestKind::IncrementalAlterConfigs(r), Amend::default());
    }
    run(
        RequestKind::IncrementalAlterConfigs(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::IncrementalAlterConfigs(resp) = body {
                for (resource_type, name, code) in refused {
                    resp.responses.push(
                        incremental_alter_configs_response::AlterConfigsResourceResponse::default()
                            .with_error_code(ctx.error(code))
                            .with_error_message(Some(s(code.default_message())))
                            .with_resource_type(resource_type)
                            .with_resource_name(name),
                    );
                }
            }
        }),
    )
}

// --- Groups ----------------------------------------------------------------------------------

fn find_coordinator(g: &Gate<'_>, mut r: FindCoordinatorRequest) -> Gated {
    // KEY_TYPE 0 GROUP, 1 TRANSACTION; others are the handler's to refuse.
    let part = match r.key_type {
        0 => Part::Groups,
        1 => Part::TransactionalIds,
        _ => return run(RequestKind::FindCoordinator(r), Amend::default()),
    };
    let code = g.code(part);
    if g.ctx.version < 4 {
        if g.allows(part, &r.key) {
            return run(RequestKind::FindCoordinator(r), Amend::default());
        }
        return answer(ResponseKind::FindCoordinator(
            FindCoordinatorResponse::default()
                .with_error_code(g.ctx.error(code))
                .with_error_message(Some(s(code.default_message())))
                .with_node_id(BrokerId(-1))
                .with_host(s(""))
                .with_port(-1),
        ));
    }
    let (ok, refused) = g.split(part, std::mem::take(&mut r.coordinator_keys), |k| {
        k.as_str()
    });
    let refuse = move |ctx: &RequestContext, resp: &mut FindCoordinatorResponse| {
        for key in refused {
            resp.coordinators.push(
                find_coordinator_response::Coordinator::default()
                    .with_key(key)
                    .with_node_id(BrokerId(-1))
                    .with_host(s(""))
                    .with_port(-1)
                    .with_error_code(ctx.error(code))
                    .with_error_message(Some(s(code.default_message()))),
            );
        }
    };
    if ok.is_empty() {
        let mut resp = FindCoordinatorResponse::default();
        refuse(g.ctx, &mut resp);
        return answer(ResponseKind::FindCoordinator(resp));
    }
    r.coordinator_keys = ok;
    run(
        RequestKind::FindCoordinator(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::FindCoordinator(resp) = body {
                refuse(ctx, resp);
            }
        }),
    )
}

fn join_group(g: &Gate<'_>, r: JoinGroupRequest) -> Gated {
    if g.allows(Part::Groups, &r.group_id.0) {
        return run(RequestKind::JoinGroup(r), Amend::default());
    }
    let v = g.ctx.version;
    answer(ResponseKind::JoinGroup(
        JoinGroupResponse::default()
            .with_error_code(g.err(Part::Groups))
            .with_generation_id(-1)
            .with_protocol_type(None)
            .with_protocol_name(if v >= 7 { None } else { Some(s("")) })
            .with_leader(s(""))
            .with_member_id(r.member_id),
    ))
}

fn sync_group(g: &Gate<'_>, r: SyncGroupRequest) -> Gated {
    if g.allows(Part::Groups, &r.group_id.0) {
        return run(RequestKind::SyncGroup(r), Amend::default());
    }
    answer(ResponseKind::SyncGroup(
        SyncGroupResponse::default()
            .with_error_code(g.err(Part::Groups))
            .with_protocol_type(None)
            .with_protocol_name(None),
    ))
}

fn offset_commit(g: &Gate<'_>, mut r: OffsetCommitRequest) -> Gated {
    let every_partition = |ctx: &RequestContext,
                           topics: &[offset_commit_request::OffsetCommitRequestTopic],
                           code: ErrorCode| {
        topics
            .iter()
            .map(|t| {
                offset_commit_response::OffsetCommitResponseTopic::default()
                    .with_name(t.name.clone())
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                offset_commit_response::OffsetCommitResponsePartition::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(ctx.error(code))
                            })
                            .collect(),
                    )
            })
            .collect::<Vec<_>>()
    };
    if !g.allows(Part::Groups, &r.group_id.0) {
        let topics = every_partition(g.ctx, &r.topics, g.code(Part::Groups));
        return answer(ResponseKind::OffsetCommit(
            OffsetCommitResponse::default().with_topics(topics),
        ));
    }
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.name.0.as_str()
    });
    r.topics = ok;
    if refused.is_empty() {
        return run(RequestKind::OffsetCommit(r), Amend::default());
    }
    run(
        RequestKind::OffsetCommit(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::OffsetCommit(resp) = body {
                resp.topics.extend(every_partition(
                    ctx,
                    &refused,
                    ErrorCode::TopicAuthorizationFailed,
                ));
            }
        }),
    )
}

/// OffsetFetch's answer for a partition of a topic the principal may not DESCRIBE (Kafka's
/// `UNAUTHORIZED_PARTITION`).
fn unauthorized_fetch_partition(
    ctx: &RequestContext,
    index: i32,
    code: ErrorCode,
) -> offset_fetch_response::OffsetFetchResponsePartition {
    offset_fetch_response::OffsetFetchResponsePartition::default()
        .with_partition_index(index)
        .with_committed_offset(-1)
        .with_committed_leader_epoch(-1)
        .with_metadata(Some(s("")))
        .with_error_code(ctx.error(code))
}

fn offset_fetch(g: &Gate<'_>, mut r: OffsetFetchRequest) -> Gated {
    let v = g.ctx.version;
    if v >= 8 {
        return offset_fetch_groups(g, r);
    }
    if !g.allows(Part::Groups, &r.group_id.0) {
        let code = g.code(Part::Groups);
        let mut resp = OffsetFetchResponse::default();
        if v >= 2 {
            resp.error_code = g.ctx.error(code);
        } else {
            // v0-1 carry no top-level code: every asked partition answers it.
            for t in r.topics.iter().flatten() {
                resp.topics.push(
                    offset_fetch_response::OffsetFetchResponseTopic::default()
                        .with_name(t.name.clone())
                        .with_partitions(
                            t.partition_indexes
                                .iter()
                                .map(|i| unauthorized_fetch_partition(g.ctx, *i, code))
                                .collect(),
                        ),
                );
            }
        }
        return answer(ResponseKind::OffsetFetch(resp));
    }
    let host = g.host.clone();
    match r.topics.take() {
        // All topics: those the principal may not DESCRIBE are left out.
        None => run(
            RequestKind::OffsetFetch(r),
            Amend::patch(move |ctx, body| {
                if let ResponseKind::OffsetFetch(resp) = body {
                    let g = Gate { ctx, host };
                    resp.topics.retain(|t| g.allows(Part::Topics, &t.name.0));
                }
            }),
        ),
        Some(topics) => {
            let (ok, refused) = g.split(Part::Topics, topics, |t| t.name.0.as_str());
            r.topics = Some(ok);
            if refused.is_empty() {
                return run(RequestKind::OffsetFetch(r), Amend::default());
            }
            run(
                RequestKind::OffsetFetch(r),
                Amend::patch(move |ctx, body| {
                    if let ResponseKind::OffsetFetch(resp) = body {
                        for t in refused {
                            resp.topics.push(
                                offset_fetch_response::OffsetFetchResponseTopic::default()
                                    .with_name(t.name)
                                    .with_partitions(
                                        t.partition_indexes
                                            .iter()
                                            .map(|i| {
                                                unauthorized_fetch_partition(
                                                    ctx,
                                                    *i,
                                                    ErrorCode::TopicAuthorizationFailed,
                                                )
                                            })
                                            .collect(),
                                    ),
                            );
                        }
                    }
                }),
            )
        }
    }
}

/// OffsetFetch v8+: several groups, each checked on its own.
fn offset_fetch_groups(g: &Gate<'_>, mut r: OffsetFetchRequest) -> Gated {
    let (ok, refused_groups) = g.split(Part::Groups, std::mem::take(&mut r.groups), |q| {
        q.group_id.0.as_str()
    });
    let mut refused_topics: Vec<(GroupId, Vec<offset_fetch_request::OffsetFetchRequestTopics>)> =
        Vec::new();
    let mut listing: Vec<GroupId> = Vec::new();
    for mut q in ok {
        match q.topics.take() {
            None => listing.push(q.group_id.clone()),
            Some(topics) => {
                let (ok, refused) = g.split(Part::Topics, topics, |t| t.name.0.as_str());
                q.topics = Some(ok);
                if !refused.is_empty() {
                    refused_topics.push((q.group_id.clone(), refused));
                }
            }
        }
        r.groups.push(q);
    }
    let group_code = g.code(Part::Groups);
    let refuse_groups = move |ctx: &RequestContext, resp: &mut OffsetFetchResponse| {
        for q in refused_groups {
            resp.groups.push(
                offset_fetch_response::OffsetFetchResponseGroup::default()
                    .with_group_id(q.group_id)
                    .with_error_code(ctx.error(group_code)),
            );
        }
    };
    if r.groups.is_empty() {
        let mut resp = OffsetFetchResponse::default();
        refuse_groups(g.ctx, &mut resp);
        return answer(ResponseKind::OffsetFetch(resp));
    }
    let host = g.host.clone();
    run(
        RequestKind::OffsetFetch(r),
        Amend::patch(move |ctx, body| {
            let ResponseKind::OffsetFetch(resp) = body else {
                return;
            };
            let g = Gate { ctx, host };
            for group in resp.groups.iter_mut() {
                if listing.contains(&group.group_id) {
                    group.topics.retain(|t| g.allows(Part::Topics, &t.name.0));
                }
                if let Some((_, refused)) =
                    refused_topics.iter().find(|(id, _)| *id == group.group_id)
                {
                    for t in refused {
                        group.topics.push(
                            offset_fetch_response::OffsetFetchResponseTopics::default()
                                .with_name(t.name.clone())
                                .with_partitions(
                                    t.partition_indexes
                                        .iter()
                                        .map(|i| {
                                            offset_fetch_response::OffsetFetchResponsePartitions::default()
                                                .with_partition_index(*i)
                                                .with_committed_offset(-1)
                                                .with_committed_leader_epoch(-1)
                                                .with_metadata(Some(s("")))
                                                .with_error_code(ctx.error(
                                                    ErrorCode::TopicAuthorizationFailed,
                                                ))
                                        })
                                        .collect(),
                                ),
                        );
                    }
                }
            }
            refuse_groups(ctx, resp);
        }),
    )
}

fn offset_delete(g: &Gate<'_>, mut r: OffsetDeleteRequest) -> Gated {
    if !g.allows(Part::Groups, &r.group_id.0) {
        return answer(ResponseKind::OffsetDelete(
            OffsetDeleteResponse::default().with_error_code(g.err(Part::Groups)),
        ));
    }
    let (ok, refused) = g.split(Part::Topics, std::mem::take(&mut r.topics), |t| {
        t.name.0.as_str()
    });
    r.topics = ok;
    if refused.is_empty() {
        return run(RequestKind::OffsetDelete(r), Amend::default());
    }
    run(
        RequestKind::OffsetDelete(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::OffsetDelete(resp) = body {
                for t in refused {
                    resp.topics.push(
                        offset_delete_response::OffsetDeleteResponseTopic::default()
                            .with_name(t.name)
                            .with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        offset_delete_response::OffsetDeleteResponsePartition::default()
                                            .with_partition_index(p.partition_index)
                                            .with_error_code(
                                                ctx.error(ErrorCode::TopicAuthorizationFailed),
                                            )
                                    })
                                    .collect(),
                            ),
                    );
                }
            }
        }),
    )
}

fn delete_groups(g: &Gate<'_>, mut r: DeleteGroupsRequest) -> Gated {
    let (ok, refused) = g.split(Part::Groups, std::mem::take(&mut r.groups_names), |id| {
        id.0.as_str()
    });
    r.groups_names = ok;
    if refused.is_empty() {
        return run(RequestKind::DeleteGroups(r), Amend::default());
    }
    let code = g.code(Part::Groups);
    run(
        RequestKind::DeleteGroups(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::DeleteGroups(resp) = body {
                for id in refused {
                    resp.results.push(
                        delete_groups_response::DeletableGroupResult::default()
                            .with_group_id(id)
                            .with_error_code(ctx.error(code)),
                    );
                }
            }
        }),
    )
}

fn list_groups(g: &Gate<'_>, r: ListGroupsRequest) -> Gated {
    // DESCRIBE on the cluster lists every group.
    if g.allows(Part::Cluster, "") {
        return run(RequestKind::ListGroups(r), Amend::default());
    }
    let host = g.host.clone();
    run(
        RequestKind::ListGroups(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::ListGroups(resp) = body {
                let g = Gate { ctx, host };
                resp.groups
                    .retain(|l| g.allows(Part::Groups, &l.group_id.0));
            }
        }),
    )
}

fn describe_groups(g: &Gate<'_>, mut r: DescribeGroupsRequest) -> Gated {
    let ops = g.ctx.version >= 3 && r.include_authorized_operations;
    let (ok, refused) = g.split(Part::Groups, std::mem::take(&mut r.groups), |id| {
        id.0.as_str()
    });
    r.groups = ok;
    let code = g.code(Part::Groups);
    let host = g.host.clone();
    run(
        RequestKind::DescribeGroups(r),
        Amend::patch(move |ctx, body| {
            let ResponseKind::DescribeGroups(resp) = body else {
                return;
            };
            let g = Gate { ctx, host };
            if ops {
                for d in resp.groups.iter_mut().filter(|d| d.error_code == 0) {
                    d.authorized_operations = g.operations(AclResourceType::Group, &d.group_id.0);
                }
            }
            for id in refused {
                resp.groups.push(
                    describe_groups_response::DescribedGroup::default()
                        .with_error_code(ctx.error(code))
                        .with_group_id(id)
                        .with_group_state(s(""))
                        .with_protocol_type(s(""))
                        .with_protocol_data(s(""))
                        .with_authorized_operations(i32::MIN),
                );
            }
        }),
    )
}

fn consumer_group_heartbeat(g: &Gate<'_>, r: ConsumerGroupHeartbeatRequest) -> Gated {
    let refuse = |code: ErrorCode| {
        answer(ResponseKind::ConsumerGroupHeartbeat(
            ConsumerGroupHeartbeatResponse::default()
                .with_error_code(g.ctx.error(code))
                .with_error_message(Some(s(code.default_message()))),
        ))
    };
    if !g.allows(Part::Groups, &r.group_id.0) {
        return refuse(g.code(Part::Groups));
    }
    let mut subscribed = r.subscribed_topic_names.iter().flatten();
    if subscribed.any(|t| !g.allows(Part::Topics, &t.0)) {
        return refuse(g.code(Part::Topics));
    }
    run(RequestKind::ConsumerGroupHeartbeat(r), Amend::default())
}

fn consumer_group_describe(g: &Gate<'_>, mut r: ConsumerGroupDescribeRequest) -> Gated {
    let ops = r.include_authorized_operations;
    let (ok, refused) = g.split(Part::Groups, std::mem::take(&mut r.group_ids), |id| {
        id.0.as_str()
    });
    r.group_ids = ok;
    let group_code = g.code(Part::Groups);
    let host = g.host.clone();
    run(
        RequestKind::ConsumerGroupDescribe(r),
        Amend::patch(move |ctx, body| {
            let ResponseKind::ConsumerGroupDescribe(resp) = body else {
                return;
            };
            let g = Gate { ctx, host };
            for d in resp.groups.iter_mut().filter(|d| d.error_code == 0) {
                // A group naming topics the principal may not DESCRIBE is not described.
                let hidden = d.members.iter().any(|m| {
                    m.subscribed_topic_names
                        .iter()
                        .chain(m.assignment.topic_partitions.iter().map(|t| &t.topic_name))
                        .chain(
                            m.target_assignment
                                .topic_partitions
                                .iter()
                                .map(|t| &t.topic_name),
                        )
                        .any(|t| !g.allows(Part::Topics, &t.0))
                });
                if hidden {
                    let code = g.code(Part::Topics);
                    *d = consumer_group_describe_response::DescribedGroup::default()
                        .with_group_id(d.group_id.clone())
                        .with_error_code(ctx.error(code))
                        .with_error_message(Some(s(
                            "The group has described topic(s) that the client is not authorized to describe.",
                        )))
                        .with_authorized_operations(i32::MIN);
                } else if ops {
                    d.authorized_operations = g.operations(AclResourceType::Group, &d.group_id.0);
                }
            }
            for id in refused {
                resp.groups.push(
                    consumer_group_describe_response::DescribedGroup::default()
                        .with_group_id(id)
                        .with_error_code(ctx.error(group_code))
                        .with_error_message(Some(s(group_code.default_message())))
                        .with_authorized_operations(i32::MIN),
                );
            }
        }),
    )
}

// --- Cluster ---------------------------------------------------------------------------------

fn describe_cluster(g: &Gate<'_>, r: DescribeClusterRequest) -> Gated {
    if !r.include_cluster_authorized_operations {
        return run(RequestKind::DescribeCluster(r), Amend::default());
    }
    let host = g.host.clone();
    run(
        RequestKind::DescribeCluster(r),
        Amend::patch(move |ctx, body| {
            if let ResponseKind::DescribeCluster(resp) = body {
                if resp.error_code == 0 {
                    let g = Gate { ctx, host };
                    resp.cluster_authorized_operations = if g.allows(Part::Cluster, "") {
                        g.operations(AclResourceType::Cluster, "")
                    } else {
                        0
                    };
                }
            }
        }),
    )
}

fn describe_scram(g: &Gate<'_>, r: DescribeUserScramCredentialsRequest) -> Gated {
    if g.allows(Part::Cluster, "") {
        return run(
            RequestKind::DescribeUserScramCredentials(r),
            Amend::default(),
        );
    }
    let code = g.code(Part::Cluster);
    let message = Some(s(code.default_message()));
    let results = r
        .users
        .iter()
        .flatten()
        .map(|u| {
            describe_user_scram_credentials_response::DescribeUserScramCredentialsResult::default()
                .with_user(u.name.clone())
                .with_error_code(g.ctx.error(code))
                .with_error_message(message.clone())
        })
        .collect();
    answer(ResponseKind::DescribeUserScramCredentials(
        DescribeUserScramCredentialsResponse::default()
            .with_error_code(g.ctx.error(code))
            .with_error_message(message)
            .with_results(results),
    ))
}

fn alter_scram(g: &Gate<'_>, r: AlterUserScramCredentialsRequest) -> Gated {
    if g.allows(Part::Cluster, "") {
        return run(RequestKind::AlterUserScramCredentials(r), Amend::default());
    }
    let code = g.code(Part::Cluster);
    let mut users: Vec<StrBytes> = Vec::new();
    for name in r
        .deletions
        .iter()
        .map(|d| &d.name)
        .chain(r.upsertions.iter().map(|u| &u.name))
    {
        if !users.contains(name) {
            users.push(name.clone());
        }
    }
    let results = users
        .into_iter()
        .map(|user| {
            alter_user_scram_credentials_response::AlterUserScramCredentialsResult::default()
                .with_user(user)
                .with_error_code(g.ctx.error(code))
                .with_error_message(Some(s(code.default_message())))
        })
        .collect();
    answer(ResponseKind::AlterUserScramCredentials(
        AlterUserScramCredentialsResponse::default().with_results(results),
    ))
}

// --- Transactions ----------------------------------------------------------------------------

fn init_producer_id(g: &Gate<'_>, r: InitProducerIdRequest) -> Gated {
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

fn describe_transactions(g: &Gate<'_>, mut r: DescribeTransactionsRequest) -> Gated {
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

fn list_transactions(g: &Gate<'_>, r: ListTransactionsRequest) -> Gated {
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

fn add_partitions_to_txn(g: &Gate<'_>, r: AddPartitionsToTxnRequest) -> Gated {
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

fn add_offsets_to_txn(g: &Gate<'_>, r: AddOffsetsToTxnRequest) -> Gated {
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

fn txn_offset_commit(g: &Gate<'_>, mut r: TxnOffsetCommitRequest) -> Gated {
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

fn write_txn_markers(g: &Gate<'_>, r: WriteTxnMarkersRequest) -> Gated {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{broker, ctx};

    fn delete_groups(names: &[&str]) -> RequestKind {
        RequestKind::DeleteGroups(
            DeleteGroupsRequest::default()
                .with_groups_names(names.iter().map(|n| GroupId(s(n))).collect()),
        )
    }

    #[test]
    fn without_an_authorizer_a_request_runs_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let b = broker(dir.path(), &[]);
        let c = ctx(&b, ApiKey::DeleteGroups, 2);
        match before(&c, delete_groups(&["a", "b"])) {
            Gated::Run(body, amend) => {
                assert!(amend.patch.is_none());
                match *body {
                    RequestKind::DeleteGroups(r) => assert_eq!(r.groups_names.len(), 2),
                    other => panic!("{other:?}"),
                }
            }
            Gated::Answer(r) => panic!("{r:?}"),
        }
    }

    #[test]
    fn refused_items_leave_the_request_and_come_back_as_codes() {
        let dir = tempfile::tempdir().unwrap();
        // An ACL authorizer and no ACL: User:ANONYMOUS may do nothing.
        let b = broker(dir.path(), &["--authorizer", "acl"]);
        let c = ctx(&b, ApiKey::DeleteGroups, 2);
        let Gated::Run(body, amend) = before(&c, delete_groups(&["a"])) else {
            panic!("DeleteGroups refuses per group, never as a whole");
        };
        match *body {
            RequestKind::DeleteGroups(r) => assert!(r.groups_names.is_empty()),
            other => panic!("{other:?}"),
        }
        let reply = amend.apply(
            &c,
            Reply::Body(Box::new(ResponseKind::DeleteGroups(
                DeleteGroupsResponse::default(),
            ))),
        );
        match reply {
            Reply::Body(b) => match *b {
                ResponseKind::DeleteGroups(r) => {
                    assert_eq!(r.results.len(), 1);
                    assert_eq!(r.results[0].group_id.0.as_str(), "a");
                    assert_eq!(
                        r.results[0].error_code,
                        ErrorCode::GroupAuthorizationFailed.code()
                    );
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        // A group API refused as a whole is answered without its handler.
        let c = ctx(&b, ApiKey::Heartbeat, 4);
        let hb = HeartbeatRequest::default().with_group_id(GroupId(s("a")));
        match before(&c, RequestKind::Heartbeat(hb)) {
            Gated::Answer(Reply::Body(b)) => match *b {
                ResponseKind::Heartbeat(r) => {
                    assert_eq!(r.error_code, ErrorCode::GroupAuthorizationFailed.code())
                }
                other => panic!("{other:?}"),
            },
            _ => panic!("Heartbeat without READ on the group runs"),
        }
        // The handshake APIs are never refused.
        let c = ctx(&b, ApiKey::ApiVersions, 3);
        assert!(matches!(
            before(&c, RequestKind::ApiVersions(ApiVersionsRequest::default())),
            Gated::Run(_, _)
        ));
    }
}
