//! Credentials and ACLs survive a leader kill and a restart in a three-node cluster: nodes with
//! a SASL_PLAINTEXT listener (what clients are sent to), `--authorizer acl` and an
//! authenticated Raft port; SCRAM users and ACLs created with confluent-kafka's AdminClient;
//! the leader SIGKILLed; on the new leader, then on the restarted node, the same user
//! authenticates, what its ACLs allow succeeds, what they do not gets Kafka's code, and a
//! deleted user stays deleted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cluster_support::metadata;
use common::{free_port, Cohort};

const ADMIN: [&str; 4] = [
    "security.protocol=SASL_PLAINTEXT",
    "sasl.mechanism=SCRAM-SHA-256",
    "sasl.username=admin",
    "sasl.password=admin-secret",
];
const ALICE: [&str; 4] = [
    "security.protocol=SASL_PLAINTEXT",
    "sasl.mechanism=SCRAM-SHA-512",
    "sasl.username=alice",
    "sasl.password=alice-secret",
];
const CAROL: [&str; 4] = [
    "security.protocol=SASL_PLAINTEXT",
    "sasl.mechanism=SCRAM-SHA-256",
    "sasl.username=carol",
    "sasl.password=carol-secret",
];

/// One node: its ports, its flags, the running process (if any).
struct Node {
    id: u64,
    sasl: u16,
    plain: u16,
    dir: PathBuf,
    args: Vec<String>,
    broker: Option<Cohort>,
}

impl Node {
    fn sasl(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.sasl))
    }

    fn plain(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.plain))
    }

    fn start(&mut self) {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        self.broker = Some(Cohort::start(&self.dir, &args));
    }
}

fn nodes(dir: &Path) -> Vec<Node> {
    let secret = common::cluster_secret(dir, "cluster security test: the nodes' shared secret\n");
    // The nodes' own credential on each other's SASL listener (markers, lag): the super user.
    let node_config = dir.join("node.properties");
    std::fs::write(
        &node_config,
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"admin\" password=\"admin-secret\";\n",
    )
    .unwrap();
    let ports: Vec<(u16, u16, u16)> = (0..3)
        .map(|_| (free_port(), free_port(), free_port()))
        .collect();
    // Clients are sent to the SASL listener (the peers' Kafka address); the PLAINTEXT one is
    // the test's own probe (Metadata as User:ANONYMOUS, which lists brokers and controller).
    let peers = ports
        .iter()
        .enumerate()
        .map(|(i, (sasl, _, raft))| format!("{}@127.0.0.1:{raft}@127.0.0.1:{sasl}", i + 1))
        .collect::<Vec<_>>()
        .join(",");
    ports
        .iter()
        .enumerate()
        .map(|(i, (sasl, plain, raft))| {
            let id = i as u64 + 1;
            let args = vec![
                "--node-id".to_string(),
                id.to_string(),
                "--listeners".into(),
                format!("SASL_PLAINTEXT://127.0.0.1:{sasl},PLAINTEXT://127.0.0.1:{plain}"),
                "--raft".into(),
                format!("127.0.0.1:{raft}"),
                "--peers".into(),
                peers.clone(),
                "--cluster-secret-file".into(),
                secret.display().to_string(),
                "--authorizer".into(),
                "acl".into(),
                "--super-users".into(),
                "User:admin".into(),
                "--scram-user".into(),
                "admin:SCRAM-SHA-256:admin-secret".into(),
                "--inter-broker-command-config".into(),
                node_config.display().to_string(),
            ];
            Node {
                id,
                sasl: *sasl,
                plain: *plain,
                dir: dir.join(format!("node-{id}")),
                args,
                broker: None,
            }
        })
        .collect()
}

/// The controller every listed node's Metadata names, once they agree on one of them.
fn wait_controller(nodes: &[Node], among: &[u64], limit: Duration) -> u64 {
    let deadline = Instant::now() + limit;
    loop {
        let seen: Vec<Option<i32>> = nodes
            .iter()
            .filter(|n| among.contains(&n.id))
            .map(|n| metadata(n.plain(), &[]).ok().map(|m| m.controller_id.0))
            .collect();
        if let Some(Some(c)) = seen.first() {
            if *c > 0 && among.contains(&(*c as u64)) && seen.iter().all(|s| *s == Some(*c)) {
                return *c as u64;
            }
        }
        assert!(Instant::now() < deadline, "no agreed controller: {seen:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn report(script: &str, bootstrap: &str, actions: &[&str], settings: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![bootstrap.to_owned()];
    args.extend(actions.iter().map(|a| (*a).to_owned()));
    for s in settings {
        args.push("-X".into());
        args.push((*s).to_owned());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::python_script(script, &args, Duration::from_secs(120));
    let line = String::from_utf8_lossy(&out.stdout);
    let parsed: serde_json::Value = serde_json::from_str(line.trim()).unwrap_or_else(|e| {
        panic!(
            "{e}: {line}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    parsed
        .as_array()
        .unwrap()
        .iter()
        .map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other["result"].to_string(),
        })
        .collect()
}

fn calls(bootstrap: &str, actions: &[&str], settings: &[&str]) -> Vec<String> {
    report("cluster_security.py", bootstrap, actions, settings)
}

/// alice authenticates, may not write `payroll`; carol (deleted) cannot authenticate. Retried
/// a little while `bootstrap` catches up with the log (a restarted node).
fn check_principals(bootstrap: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let alice = calls(bootstrap, &["connect", "produce:payroll"], &ALICE);
        let carol = calls(bootstrap, &["connect"], &CAROL);
        let expected = (
            vec!["OK".to_string(), "TOPIC_AUTHORIZATION_FAILED".to_string()],
            vec!["_AUTHENTICATION".to_string()],
        );
        if (alice.clone(), carol.clone()) == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "at {bootstrap}: alice {alice:?}, carol {carol:?}, expected {expected:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// alice produces, consumes in her group and commits on `orders` (secure_e2e.py); her
/// group's committed offset is then `committed`.
fn alice_uses_orders(bootstrap: &str, committed: i64) {
    let mut args = vec![
        bootstrap.to_string(),
        "orders".into(),
        "orders-group".into(),
        "10".into(),
    ];
    for s in ALICE {
        args.push("-X".into());
        args.push(s.into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::python_script("secure_e2e.py", &args, Duration::from_secs(180));
    let line = String::from_utf8_lossy(&out.stdout);
    let r: serde_json::Value = serde_json::from_str(line.trim()).unwrap_or_else(|e| {
        panic!(
            "{e}: {line}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(r["acked"], 10, "{r}");
    assert_eq!(r["consumed"], 10, "{r}");
    assert_eq!(r["errors"], serde_json::json!([]), "{r}");
    assert_eq!(r["committed"], committed, "{r}");
}

#[test]
fn credentials_and_acls_survive_a_leader_kill_and_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = nodes(dir.path());
    for n in &mut nodes {
        n.start();
    }
    let leader = wait_controller(&nodes, &[1, 2, 3], Duration::from_secs(60));
    let all = nodes
        .iter()
        .map(|n| n.sasl().to_string())
        .collect::<Vec<_>>()
        .join(",");

    // Users and ACLs, by the super user, over the Admin API.
    let users = report(
        "scram_admin.py",
        &all,
        &[
            "upsert:alice:SCRAM-SHA-512:8192:alice-secret",
            "upsert:carol:SCRAM-SHA-256:4096:carol-secret",
        ],
        &ADMIN,
    );
    assert_eq!(users, [r#"{"alice":"OK"}"#, r#"{"carol":"OK"}"#]);
    let created = calls(
        &all,
        &[
            "topic:orders",
            "topic:payroll",
            "acl:TOPIC:orders:LITERAL:User=alice:*:WRITE:ALLOW",
            "acl:TOPIC:orders:LITERAL:User=alice:*:READ:ALLOW",
            "acl:TOPIC:orders:LITERAL:User=alice:*:CREATE:ALLOW",
            "acl:GROUP:orders-group:LITERAL:User=alice:*:READ:ALLOW",
        ],
        &ADMIN,
    );
    assert!(created.iter().all(|r| r == "OK"), "{created:?}");
    // carol authenticates until deleted; alice has no ACL on the cluster: no topic creation.
    assert_eq!(calls(&all, &["connect"], &CAROL), ["OK"]);
    assert_eq!(
        calls(&all, &["topic:alice-made"], &ALICE),
        ["TOPIC_AUTHORIZATION_FAILED"]
    );
    let deleted = report(
        "scram_admin.py",
        &all,
        &["delete:carol:SCRAM-SHA-256"],
        &ADMIN,
    );
    assert_eq!(deleted, [r#"{"carol":"OK"}"#]);
    check_principals(&all);
    alice_uses_orders(&all, 10);

    // SIGKILL the leader: the new one holds the same credentials and ACLs.
    let killed = nodes.iter_mut().find(|n| n.id == leader).unwrap();
    killed.broker.as_mut().unwrap().kill9();
    let rest: Vec<u64> = [1, 2, 3].into_iter().filter(|n| *n != leader).collect();
    let new_leader = wait_controller(&nodes, &rest, Duration::from_secs(60));
    assert_ne!(new_leader, leader);
    let new_leader_sasl = nodes[new_leader as usize - 1].sasl().to_string();
    check_principals(&new_leader_sasl);

    // The killed node restarts on its data: it authenticates and authorizes the same way.
    let restarted = &mut nodes[leader as usize - 1];
    restarted.start();
    let restarted_sasl = restarted.sasl().to_string();
    wait_controller(&nodes, &[1, 2, 3], Duration::from_secs(60));
    check_principals(&restarted_sasl);
    alice_uses_orders(&restarted_sasl, 20);
    for n in &mut nodes {
        if let Some(b) = n.broker.as_mut() {
            b.kill9();
        }
    }
}
