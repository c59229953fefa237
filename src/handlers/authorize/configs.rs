//! The gate's rows for configs: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs (TOPIC, BROKER, GROUP resources).

use super::*;

/// Which table part a config resource type is checked under (TOPIC 2, BROKER 4,
/// BROKER_LOGGER 8, GROUP 32); `None`: the handler refuses the type itself.
pub(super) fn config_part(resource_type: i8) -> Option<Part> {
    match resource_type {
        2 => Some(Part::TopicConfigs),
        4 | 8 => Some(Part::BrokerConfigs),
        32 => Some(Part::GroupConfigs),
        _ => None,
    }
}

pub(super) fn config_refused(g: &Gate<'_>, resource_type: i8, name: &str) -> Option<ErrorCode> {
    let part = config_part(resource_type)?;
    (!g.allows(part, name)).then(|| g.code(part))
}

/// A config request split by resource: the refused resources leave the request and come back
/// in the answer as `refusal(type, name, code)` entries appended by `push`.
fn gate_resources<R, A>(
    g: &Gate<'_>,
    resources: Vec<R>,
    key: impl Fn(&R) -> (i8, StrBytes),
    rebuild: impl FnOnce(Vec<R>) -> RequestKind,
    push: impl Fn(&mut ResponseKind, A) + Send + 'static,
    refusal: impl Fn(i8, StrBytes, i16, ErrorCode) -> A + Send + 'static,
) -> Gated {
    let mut allowed = Vec::with_capacity(resources.len());
    let mut refused = Vec::new();
    for res in resources {
        let (resource_type, name) = key(&res);
        match config_refused(g, resource_type, &name) {
            Some(code) => refused.push((resource_type, name, code)),
            None => allowed.push(res),
        }
    }
    if refused.is_empty() {
        return run(rebuild(allowed), Amend::default());
    }
    run(
        rebuild(allowed),
        Amend::patch(move |ctx, body| {
            for (resource_type, name, code) in refused {
                let entry = refusal(resource_type, name, ctx.error(code), code);
                push(body, entry);
            }
        }),
    )
}

pub(super) fn describe_configs(g: &Gate<'_>, mut r: DescribeConfigsRequest) -> Gated {
    let resources = std::mem::take(&mut r.resources);
    gate_resources(
        g,
        resources,
        |res| (res.resource_type, res.resource_name.clone()),
        |kept| RequestKind::DescribeConfigs(r.with_resources(kept)),
        |body, entry| {
            if let ResponseKind::DescribeConfigs(resp) = body {
                resp.results.push(entry);
            }
        },
        |resource_type, name, wire, code| {
            describe_configs_response::DescribeConfigsResult::default()
                .with_error_code(wire)
                .with_error_message(Some(s(code.default_message())))
                .with_resource_type(resource_type)
                .with_resource_name(name)
        },
    )
}

pub(super) fn alter_configs(g: &Gate<'_>, mut r: AlterConfigsRequest) -> Gated {
    let resources = std::mem::take(&mut r.resources);
    gate_resources(
        g,
        resources,
        |res| (res.resource_type, res.resource_name.clone()),
        |kept| RequestKind::AlterConfigs(r.with_resources(kept)),
        |body, entry| {
            if let ResponseKind::AlterConfigs(resp) = body {
                resp.responses.push(entry);
            }
        },
        |resource_type, name, wire, code| {
            alter_configs_response::AlterConfigsResourceResponse::default()
                .with_error_code(wire)
                .with_error_message(Some(s(code.default_message())))
                .with_resource_type(resource_type)
                .with_resource_name(name)
        },
    )
}

pub(super) fn incremental_alter_configs(
    g: &Gate<'_>,
    mut r: IncrementalAlterConfigsRequest,
) -> Gated {
    let resources = std::mem::take(&mut r.resources);
    gate_resources(
        g,
        resources,
        |res| (res.resource_type, res.resource_name.clone()),
        |kept| RequestKind::IncrementalAlterConfigs(r.with_resources(kept)),
        |body, entry| {
            if let ResponseKind::IncrementalAlterConfigs(resp) = body {
                resp.responses.push(entry);
            }
        },
        |resource_type, name, wire, code| {
            incremental_alter_configs_response::AlterConfigsResourceResponse::default()
                .with_error_code(wire)
                .with_error_message(Some(s(code.default_message())))
                .with_resource_type(resource_type)
                .with_resource_name(name)
        },
    )
}
