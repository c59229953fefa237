//! The gate's rows for topic administration: CreateTopics, DeleteTopics, CreatePartitions.

use super::*;

pub(super) fn create_topics(g: &Gate<'_>, mut r: CreateTopicsRequest) -> Gated {
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

pub(super) fn delete_topics(g: &Gate<'_>, mut r: DeleteTopicsRequest) -> Gated {
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

pub(super) fn create_partitions(g: &Gate<'_>, mut r: CreatePartitionsRequest) -> Gated {
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
