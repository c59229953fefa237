//! The gate's rows for groups: FindCoordinator, the classic and consumer protocols, offsets, listing, describing and deleting groups.

use super::*;

pub(super) fn find_coordinator(g: &Gate<'_>, mut r: FindCoordinatorRequest) -> Gated {
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

pub(super) fn join_group(g: &Gate<'_>, r: JoinGroupRequest) -> Gated {
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

pub(super) fn sync_group(g: &Gate<'_>, r: SyncGroupRequest) -> Gated {
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

pub(super) fn offset_commit(g: &Gate<'_>, mut r: OffsetCommitRequest) -> Gated {
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
pub(super) fn unauthorized_fetch_partition(
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

pub(super) fn offset_fetch(g: &Gate<'_>, mut r: OffsetFetchRequest) -> Gated {
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
pub(super) fn offset_fetch_groups(g: &Gate<'_>, mut r: OffsetFetchRequest) -> Gated {
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

pub(super) fn offset_delete(g: &Gate<'_>, mut r: OffsetDeleteRequest) -> Gated {
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

pub(super) fn delete_groups(g: &Gate<'_>, mut r: DeleteGroupsRequest) -> Gated {
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

pub(super) fn list_groups(g: &Gate<'_>, r: ListGroupsRequest) -> Gated {
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

pub(super) fn describe_groups(g: &Gate<'_>, mut r: DescribeGroupsRequest) -> Gated {
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

pub(super) fn consumer_group_heartbeat(g: &Gate<'_>, r: ConsumerGroupHeartbeatRequest) -> Gated {
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

pub(super) fn consumer_group_describe(g: &Gate<'_>, mut r: ConsumerGroupDescribeRequest) -> Gated {
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
