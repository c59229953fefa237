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
