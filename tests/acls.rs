//! ACLs over real sockets (issue 12 items 3 and 4, decisions 0140–0142): confluent-kafka's and
//! kafkajs's admin clients create, describe and delete ACLs against `cohort serve --authorizer
//! acl`; `cohort acls` prints kafka-acls.sh's lines; the ACLs survive a SIGKILL; a SASL
//! principal without ALTER on the CLUSTER gets CLUSTER_AUTHORIZATION_FAILED (31) until an ACL
//! grants it, on the connection it already has open; bad filters get INVALID_REQUEST (42);
//! without `--authorizer acl` the ACL APIs answer SECURITY_DISABLED (54).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::raw::RawClient;
use common::Cohort;
use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::{
    ApiKey, CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest, RequestKind, ResponseKind,
};
use kafka_protocol::protocol::StrBytes;

const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
const INVALID_REQUEST: i16 = 42;
const SECURITY_DISABLED: i16 = 54;

/// A broker with the ACL authorizer: PLAINTEXT (User:ANONYMOUS, a super user here, as the
/// admin) and SASL_PLAINTEXT with PLAIN user bob (no ACL).
fn acl_broker(dir: &Path) -> Cohort {
    let users = dir.join("plain-users");
    std::fs::write(&users, "bob:bob-secret\n").unwrap();
    Cohort::start(
        &dir.join("data"),
        &[
            "--listeners",
            "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "--sasl-enabled-mechanisms",
            "PLAIN",
            "--sasl-plain-users",
            users.to_str().unwrap(),
            "--authorizer",
            "acl",
            "--super-users",
            "User:ANONYMOUS;User:admin",
        ],
    )
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

fn describe(c: &mut RawClient, pattern: i8, operation: i8) -> (i16, usize) {
    let req = DescribeAclsRequest::default()
        .with_resource_type_filter(1)
        .with_resource_name_filter(None)
        .with_pattern_type_filter(pattern)
        .with_principal_filter(None)
        .with_host_filter(None)
        .with_operation(operation)
        .with_permission_type(1);
    match c.call(ApiKey::DescribeAcls, 3, RequestKind::DescribeAcls(req)) {
        ResponseKind::DescribeAcls(r) => (r.error_code, r.resources.len()),
        other => panic!("{other:?}"),
    }
}

fn create(c: &mut RawClient, resource_type: i8, name: &str) -> (i16, Option<String>) {
    let req = CreateAclsRequest::default().with_creations(vec![AclCreation::default()
        .with_resource_type(resource_type)
        .with_resource_name(s(name))
        .with_resource_pattern_type(3)
        .with_principal(s("User:carol"))
        .with_host(s("*"))
        .with_operation(3)
        .with_permission_type(3)]);
    match c.call(ApiKey::CreateAcls, 2, RequestKind::CreateAcls(req)) {
        ResponseKind::CreateAcls(r) => (
            r.results[0].error_code,
            r.results[0].error_message.as_ref().map(|m| m.to_string()),
        ),
        other => panic!("{other:?}"),
    }
}

fn delete(c: &mut RawClient, operation: i8) -> (i16, usize) {
    let req = DeleteAclsRequest::default().with_filters(vec![DeleteAclsFilter::default()
        .with_resource_type_filter(1)
        .with_resource_name_filter(None)
        .with_pattern_type_filter(1)
        .with_principal_filter(Some(s("User:carol")))
        .with_host_filter(None)
        .with_operation(operation)
        .with_permission_type(1)]);
    match c.call(ApiKey::DeleteAcls, 1, RequestKind::DeleteAcls(req)) {
        ResponseKind::DeleteAcls(r) => (
            r.filter_results[0].error_code,
            r.filter_results[0].matching_acls.len(),
        ),
        other => panic!("{other:?}"),
    }
}

/// `cohort acls ARGS` against `bootstrap`: (exit code, stdout, stderr).
fn cohort_acls(bootstrap: &str, args: &[&str]) -> (i32, String, String) {
    let out = common::run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg("acls")
            .args(["--bootstrap-server", bootstrap])
            .args(args),
        Duration::from_secs(60),
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn confluent_kafka_and_kafkajs_admin_clients_create_describe_and_delete_acls() {
    let dir = tempfile::tempdir().unwrap();
    let broker = acl_broker(dir.path());
    let out = common::python_script(
        "acl_admin.py",
        &[&broker.bootstrap()],
        Duration::from_secs(120),
    );
    let report: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    let alice = "TOPIC:orders:LITERAL:User:alice:*:READ:ALLOW";
    let bob = "TOPIC:orders-:PREFIXED:User:bob:*:WRITE:ALLOW";
    let group = "GROUP:g:LITERAL:User:alice:10.0.0.1:READ:DENY";
    // Sorted as strings: "orders-" before "orders:".
    assert_eq!(
        report["created"],
        serde_json::json!([group, bob, alice]),
        "{report}"
    );
    // MATCH: the ACLs that apply to the topic "orders-eu" (the prefix), to "orders" (the
    // literal; "orders-" is no prefix of it).
    assert_eq!(
        report["match_orders_eu"],
        serde_json::json!([bob]),
        "{report}"
    );
    assert_eq!(
        report["match_orders"],
        serde_json::json!([alice]),
        "{report}"
    );
    assert_eq!(
        report["any"],
        serde_json::json!([group, bob, alice]),
        "{report}"
    );
    assert_eq!(report["deleted"], serde_json::json!([bob]), "{report}");
    assert_eq!(
        report["after"],
        serde_json::json!([group, alice]),
        "{report}"
    );

    // kafkajs (v1 of the three APIs): codes TOPIC 2, TRANSACTIONAL_ID 5, LITERAL 3,
    // PREFIXED 4, DESCRIBE 8, WRITE 4, ALLOW 3.
    let out = common::node_script(
        "acls_kafkajs.js",
        &[&broker.bootstrap()],
        Duration::from_secs(120),
    );
    let report: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    let topic = "2:kjs-topic:3:User:kjs:*:8:3";
    let txn = "5:kjs-:4:User:kjs:*:4:3";
    assert_eq!(
        report["described"],
        serde_json::json!([topic, txn]),
        "{report}"
    );
    assert_eq!(report["deleted"], serde_json::json!([txn]), "{report}");
    assert_eq!(report["after"], serde_json::json!([topic]), "{report}");

    // Bad filters and bindings: Kafka's INVALID_REQUEST, nothing changed.
    let mut c = RawClient::connect(broker.kafka);
    assert_eq!(
        describe(&mut c, 0, 1).0,
        INVALID_REQUEST,
        "UNKNOWN pattern type"
    );
    assert_eq!(
        describe(&mut c, 1, 0).0,
        INVALID_REQUEST,
        "UNKNOWN operation"
    );
    assert_eq!(describe(&mut c, 1, 1), (0, 3));
    assert_eq!(
        create(&mut c, 1, "t"),
        (INVALID_REQUEST, Some("Invalid resourceType ANY".to_owned()))
    );
    assert_eq!(
        create(&mut c, 2, ""),
        (
            INVALID_REQUEST,
            Some("Resource name should not be empty".to_owned())
        )
    );
    assert_eq!(
        create(&mut c, 4, "t"),
        (
            INVALID_REQUEST,
            Some("The only valid name for the CLUSTER resource is kafka-cluster".to_owned())
        )
    );
    assert_eq!(delete(&mut c, 0), (INVALID_REQUEST, 0), "UNKNOWN operation");
    assert_eq!(create(&mut c, 2, "t"), (0, None));
    assert_eq!(delete(&mut c, 1), (0, 1));
}

#[test]
fn cohort_acls_prints_kafkas_lines_and_acls_survive_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut broker = acl_broker(dir.path());
    let (code, out, err) = cohort_acls(
        &broker.bootstrap(),
        &[
            "--add",
            "--allow-principal",
            "User:alice",
            "--operation",
            "Read",
            "--operation",
            "Describe",
            "--topic",
            "orders",
            "--group",
            "billing",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out,
        "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: \n \
         \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n\
         \t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW) \n\n\
         Adding ACLs for resource `ResourcePattern(resourceType=GROUP, name=billing, patternType=LITERAL)`: \n \
         \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n\
         \t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW) \n\n"
    );
    let (code, out, err) = cohort_acls(
        &broker.bootstrap(),
        &[
            "--add",
            "--deny-principal",
            "User:mallory",
            "--deny-host",
            "10.0.0.9",
            "--cluster",
            "--operation",
            "Alter",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let listing = "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: \n \
         \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n\
         \t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW) \n\n\
         Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=billing, patternType=LITERAL)`: \n \
         \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n\
         \t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW) \n\n\
         Current ACLs for resource `ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)`: \n \
         \t(principal=User:mallory, host=10.0.0.9, operation=ALTER, permissionType=DENY) \n\n";
    let (code, out, err) = cohort_acls(&broker.bootstrap(), &["--list"]);
    assert_eq!((code, out.as_str()), (0, listing), "{err}");

    // SIGKILL: the ACLs come back from the Raft log / snapshot.
    broker.kill9();
    let broker = acl_broker(dir.path());
    let (code, out, err) = cohort_acls(&broker.bootstrap(), &["--list"]);
    assert_eq!((code, out.as_str()), (0, listing), "{err}");
    let (code, out, err) = cohort_acls(
        &broker.bootstrap(),
        &[
            "--list",
            "--topic",
            "orders-eu",
            "--resource-pattern-type",
            "match",
        ],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");

    // Remove one entry, then everything on the group without a prompt.
    let (code, out, err) = cohort_acls(
        &broker.bootstrap(),
        &[
            "--remove",
            "--force",
            "--allow-principal",
            "User:alice",
            "--operation",
            "Describe",
            "--topic",
            "orders",
        ],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let (code, out, err) = cohort_acls(
        &broker.bootstrap(),
        &["--remove", "--force", "--group", "billing"],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let (code, out, err) = cohort_acls(&broker.bootstrap(), &["--list", "--topic", "orders"]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: \n \
             \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n"
        ),
        "{err}"
    );
    let (code, out, _) = cohort_acls(&broker.bootstrap(), &["--list", "--group", "billing"]);
    assert_eq!((code, out.as_str()), (0, ""));
    // Usage errors exit 1 with Kafka's message.
    let (code, _, err) = cohort_acls(&broker.bootstrap(), &["--add", "--topic", "t"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with(
            "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."
        ),
        "{err}"
    );
}

#[test]
fn a_sasl_principal_without_alter_on_the_cluster_is_refused_until_an_acl_grants_it() {
    let dir = tempfile::tempdir().unwrap();
    let broker = acl_broker(dir.path());
    let sasl = broker.listener("SASL_PLAINTEXT");
    let mut bob = RawClient::connect_plain(sasl, "bob", "bob-secret");
    assert_eq!(create(&mut bob, 2, "t").0, CLUSTER_AUTHORIZATION_FAILED);
    assert_eq!(describe(&mut bob, 1, 1).0, CLUSTER_AUTHORIZATION_FAILED);
    assert_eq!(delete(&mut bob, 1).0, CLUSTER_AUTHORIZATION_FAILED);
    // confluent-kafka over SASL sees the same refusal.
    let out = common::run(
        Command::new(common::python())
            .arg(common::repo_root().join("tests/clients/python/acl_admin.py"))
            .args([
                &sasl.to_string(),
                "-X",
                "security.protocol=SASL_PLAINTEXT",
                "-X",
                "sasl.mechanism=PLAIN",
                "-X",
                "sasl.username=bob",
                "-X",
                "sasl.password=bob-secret",
            ]),
        Duration::from_secs(120),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CLUSTER_AUTHORIZATION_FAILED"), "{err}");

    // Granted ALTER on the CLUSTER: bob's open connection may create and delete ACLs now,
    // and describe them (ALTER implies DESCRIBE).
    let (code, out, err) = cohort_acls(
        &broker.bootstrap(),
        &[
            "--add",
            "--allow-principal",
            "User:bob",
            "--operation",
            "Alter",
            "--cluster",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(create(&mut bob, 2, "t"), (0, None));
    assert_eq!(describe(&mut bob, 1, 1), (0, 2));
    assert_eq!(delete(&mut bob, 1), (0, 1));
    // A DENY for bob's host wins over the ALLOW, on the same connection.
    let (code, out, err) = cohort_acls(
        &broker.bootstrap(),
        &[
            "--add",
            "--deny-principal",
            "User:bob",
            "--deny-host",
            "127.0.0.1",
            "--operation",
            "Describe",
            "--cluster",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(describe(&mut bob, 1, 1).0, CLUSTER_AUTHORIZATION_FAILED);
    assert_eq!(
        create(&mut bob, 2, "t"),
        (0, None),
        "DENY DESCRIBE leaves ALTER"
    );
}

#[test]
fn without_the_acl_authorizer_the_acl_apis_answer_security_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Cohort::start(&dir.path().join("data"), &[]);
    let mut c = RawClient::connect(broker.kafka);
    assert_eq!(describe(&mut c, 1, 1).0, SECURITY_DISABLED);
    assert_eq!(create(&mut c, 2, "t").0, SECURITY_DISABLED);
    assert_eq!(delete(&mut c, 1).0, SECURITY_DISABLED);
    let (code, out, _) = cohort_acls(&broker.bootstrap(), &["--list"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with(
            "Error while executing ACL command: org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker"
        ),
        "{out}"
    );
}
