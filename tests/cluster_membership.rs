//! `cohort cluster add-voter` / `remove-voter` / `status` against a running cluster: a fourth
//! node started with `--join` becomes a voter (learner first, promoted once caught up), serves
//! Metadata with four brokers, is removed again; failures exit with a code that says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use cluster_support::*;
use common::{run, Cohort};

/// `cohort cluster ARGS --cluster-secret-file SECRET` (nothing: no secret given).
fn cohort_cluster_with(secret: Option<&Path>, args: &[&str]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cohort"));
    command.arg("cluster").args(args);
    if let Some(secret) = secret {
        command.arg("--cluster-secret-file").arg(secret);
    }
    let out = run(&mut command, Duration::from_secs(90));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write_secret(path: &Path, bytes: &[u8], mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, bytes).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_joining_node_is_added_as_a_voter_and_removed_again() {
    let dir = tempfile::tempdir().unwrap();
    let c = ScriptCluster::up(dir.path(), &[]);
    let secret = c.secret_file();
    let cohort_cluster = |args: &[&str]| cohort_cluster_with(Some(&secret), args);
    let leader = c.wait_controller(&NODES, Duration::from_secs(30));
    assert_eq!(create_topic(c.kafka(leader), "before-join", 3), Ok(0));
    let bootstrap = c.raft(1).to_string();

    let raft4 = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut fourth = Cohort::start(
        &dir.path().join("node-4"),
        &[
            "--node-id",
            "4",
            "--raft",
            &raft4.to_string(),
            "--join",
            "--cluster-secret-file",
            secret.to_str().unwrap(),
        ],
    );
    let (code, out, err) = cohort_cluster(&[
        "add-voter",
        "--bootstrap",
        &bootstrap,
        "--node-id",
        "4",
        "--node-raft",
        &raft4.to_string(),
        "--node-kafka",
        &fourth.bootstrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}\n{}", fourth.log());
    assert!(out.starts_with("Node 4 is a voter.\n"), "{out}");
    assert!(
        out.contains(&format!(
            "Voter:      4 (raft {raft4}, kafka {})",
            fourth.bootstrap()
        )),
        "{out}"
    );

    // The new voter caught up with the topics made before it joined, and every node's
    // Metadata now lists four brokers.
    eventually("node 4 lists the topic", Duration::from_secs(30), || {
        metadata(fourth.kafka, &["before-join"])
            .ok()
            .filter(|m| m.topics[0].error_code == 0)
    });
    let (code, status, _) = cohort_cluster(&["status", "--bootstrap", &bootstrap]);
    assert_eq!(code, 0, "{status}");
    assert!(status.contains("Voters:     1, 2, 3, 4\n"), "{status}");
    assert!(
        status.contains(&format!("\n4     voter   follower  {raft4}")),
        "{status}"
    );
    for addr in [c.kafka(1), c.kafka(2), c.kafka(3), fourth.kafka] {
        assert_eq!(metadata(addr, &[]).unwrap().brokers.len(), 4, "{addr}");
    }

    // Removed: the three go on without it.
    let (code, out, err) =
        cohort_cluster(&["remove-voter", "--bootstrap", &bootstrap, "--node-id", "4"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("Node 4 is no longer a member.\n"), "{out}");
    assert!(!out.contains("Voter:      4"), "{out}");
    fourth.kill9();
    let (code, status, _) = cohort_cluster(&["status", "--bootstrap", &bootstrap]);
    assert_eq!(code, 0, "{status}");
    assert!(status.contains("Voters:     1, 2, 3\n"), "{status}");
    assert_eq!(metadata(c.kafka(1), &[]).unwrap().brokers.len(), 3);

    // Failures say so: nothing listening, a bad address, a degraded cluster.
    let nobody = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let (code, _, err) = cohort_cluster(&["status", "--bootstrap", &nobody, "--timeout-ms", "500"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.starts_with("cohort cluster status: no node answered"),
        "{err}"
    );
    let (code, _, err) = cohort_cluster(&[
        "add-voter",
        "--bootstrap",
        &bootstrap,
        "--node-id",
        "5",
        "--node-raft",
        "nowhere",
        "--node-kafka",
        "127.0.0.1:1",
    ]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = cohort_cluster(&["remove-voter", "--node-id", "2"]);
    assert_eq!(code, 2, "--bootstrap is required: {err}");
    // The Raft port answers only who proves the cluster secret: nothing given, or another
    // secret, is refused (exit 1, and the message says which flag); a secret file others may
    // read is a usage error.
    let (code, _, err) = cohort_cluster_with(None, &["status", "--bootstrap", &bootstrap]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("pass the same file"), "{err}");
    let other = dir.path().join("other.secret");
    write_secret(
        &other,
        b"not the secret this cluster was started with\n",
        0o600,
    );
    let (code, _, err) = cohort_cluster_with(Some(&other), &["status", "--bootstrap", &bootstrap]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("a different --cluster-secret-file"), "{err}");
    let (code, _, err) = cohort_cluster_with(
        Some(&other),
        &["remove-voter", "--bootstrap", &bootstrap, "--node-id", "2"],
    );
    assert_eq!(code, 1, "{err}");
    write_secret(
        &other,
        b"not the secret this cluster was started with\n",
        0o644,
    );
    let (code, _, err) = cohort_cluster_with(Some(&other), &["status", "--bootstrap", &bootstrap]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("mode 0644"), "{err}");
    assert_eq!(
        c.raft_status(1).unwrap()["voters"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let mut c = c;
    let victim = NODES.into_iter().find(|n| *n != leader).unwrap();
    c.kill9(victim);
    let all = NODES
        .iter()
        .map(|n| c.raft(*n).to_string())
        .collect::<Vec<_>>()
        .join(",");
    let (code, status, _) = cohort_cluster(&["status", "--bootstrap", &all]);
    assert_eq!(code, 4, "{status}");
    assert!(
        status.contains(&format!("\n{victim}     voter   down")),
        "{status}"
    );
    c.start(victim);
    c.wait_healthy(Duration::from_secs(30));
}
