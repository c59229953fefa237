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

mod cluster;
mod configs;
mod data;
mod groups;
#[cfg(test)]
mod tests;
mod topics;
mod transactions;

use cluster::*;
use configs::*;
use data::*;
use groups::*;
use topics::*;
use transactions::*;

use crate::security::api_acls::{needs_of, reported_operations, Denied, Part};
use crate::security::authorizer::CLUSTER_NAME;
pub use data::before_produce;

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
