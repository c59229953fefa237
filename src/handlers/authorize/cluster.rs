//! The gate's rows for cluster: DescribeCluster and the SCRAM credential APIs.

use super::*;

pub(super) fn describe_cluster(g: &Gate<'_>, r: DescribeClusterRequest) -> Gated {
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

pub(super) fn describe_scram(g: &Gate<'_>, r: DescribeUserScramCredentialsRequest) -> Gated {
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

pub(super) fn alter_scram(g: &Gate<'_>, r: AlterUserScramCredentialsRequest) -> Gated {
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
