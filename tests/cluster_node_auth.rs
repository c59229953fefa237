//! Nodes authenticate to each other on the Kafka port (Kafka's inter-broker listener and the
//! broker's own credential, decision 0166): three nodes whose only client listener is
//! SASL_SSL (plus a PLAINTEXT probe the test reads Metadata on), `--authorizer acl`, and a
//! node credential (`--inter-broker-command-config`: SCRAM-SHA-512 user `broker`, a super
//! user). With the right credential a transaction spanning partitions of all three nodes
//! commits (the remote owners write its markers, read_committed sees every record) and the
//! coordinator samples the lag of partitions other nodes own. With a wrong one the markers are
//! refused: a log line and `cohort_inter_broker_refusals_total`, and read_committed sees only
//! the coordinator's own partition. `cohort cluster status --command-config` probes the
//! SASL_SSL listeners.
//!
//! With the listeners the other way round (PLAINTEXT first, what `--peers` names) and
//! `--inter-broker-listener-name SASL_SSL` (decision 0184): every node records both listeners
//! in the membership; a client on node 1's SASL_SSL listener is told every broker's SASL_SSL
//! address and the coordinator's, one on PLAINTEXT the PLAINTEXT ones; the transaction across
//! nodes commits with its markers written over the SASL_SSL listener.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cluster_support;
use crate::common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use cluster_support::metadata;
use common::certs::Certs;
use common::metrics::scrape;
use common::{free_port, Cohort};

const TOPIC: &str = "orders";

/// The two clusters run one after the other: each picks nine free ports before binding them,
/// and two clusters starting at once took each other's (and two clusters share two cores).
static ONE_CLUSTER_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
const PARTITIONS: i32 = 3;

/// A running three-node cluster and what its clients need.
struct Cluster {
    nodes: Vec<Cohort>,
    /// The PLAINTEXT probe listener of each node.
    probes: Vec<SocketAddr>,
    /// The SASL_SSL listener of each node (what clients and peers use).
    secure: Vec<SocketAddr>,
    /// confluent-kafka settings of the test's super user `admin`.
    admin: Vec<String>,
    /// The same user for Cohort's own commands (`--command-config`).
    admin_properties: std::path::PathBuf,
    /// The nodes' Raft addresses.
    raft: Vec<String>,
    /// The cluster secret file.
    secret: std::path::PathBuf,
}

/// Which listener comes first in `--listeners` (the one `--peers` names); the inter-broker
/// listener is SASL_SSL either way.
#[derive(Clone, Copy, PartialEq, Eq)]
enum First {
    SaslSsl,
    Plaintext,
}

/// Starts three nodes whose inter-broker credential is user `broker` with `node_password`
/// (the cluster's `broker` credential is `broker-secret`).
fn cluster(dir: &Path, node_password: &str, first: First) -> Cluster {
    let certs = Certs::make(dir);
    let secret = common::cluster_secret(dir, "node auth test: the nodes' shared cluster secret\n");
    let node_config = dir.join("node.properties");
    std::fs::write(
        &node_config,
        format!(
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"broker\" password=\"{node_password}\";\n\
             ssl.truststore.type=PEM\nssl.truststore.location={}\n",
            certs.ca.display()
        ),
    )
    .unwrap();
    let admin_properties = dir.join("admin.properties");
    std::fs::write(
        &admin_properties,
        format!(
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"admin\" password=\"admin-secret\";\n\
             ssl.truststore.type=PEM\nssl.truststore.location={}\n",
            certs.ca.display()
        ),
    )
    .unwrap();
    let ports: Vec<(u16, u16, u16)> = (0..3)
        .map(|_| (free_port(), free_port(), free_port()))
        .collect();
    let peers = ports
        .iter()
        .enumerate()
        .map(|(i, (sasl, plain, raft))| {
            let kafka = if first == First::Plaintext {
                plain
            } else {
                sasl
            };
            format!("{}@127.0.0.1:{raft}@127.0.0.1:{kafka}", i + 1)
        })
        .collect::<Vec<_>>()
        .join(",");
    let nodes = ports
        .iter()
        .enumerate()
        .map(|(i, (sasl, plain, raft))| {
            let id = (i + 1).to_string();
            let listeners = match first {
                First::SaslSsl => {
                    format!("SASL_SSL://127.0.0.1:{sasl},PLAINTEXT://127.0.0.1:{plain}")
                }
                First::Plaintext => {
                    format!("PLAINTEXT://127.0.0.1:{plain},SASL_SSL://127.0.0.1:{sasl}")
                }
            };
            let raft = format!("127.0.0.1:{raft}");
            let args: Vec<&str> = vec![
                "--node-id",
                &id,
                "--listeners",
                &listeners,
                "--ssl-cert",
                certs.server_cert.to_str().unwrap(),
                "--ssl-key",
                certs.server_key.to_str().unwrap(),
                "--raft",
                &raft,
                "--peers",
                &peers,
                "--cluster-secret-file",
                secret.to_str().unwrap(),
                "--authorizer",
                "acl",
                "--super-users",
                "User:admin;User:broker",
                "--scram-user",
                "admin:SCRAM-SHA-256:admin-secret",
                "--scram-user",
                "broker:SCRAM-SHA-512:broker-secret",
                "--inter-broker-listener-name",
                "SASL_SSL",
                "--inter-broker-command-config",
                node_config.to_str().unwrap(),
                "--lag-sample-interval-ms",
                "200",
                "--lag-window-ms",
                "5000",
            ];
            let data = dir.join(format!("node-{id}"));
            Cohort::start(&data, &args)
        })
        .collect();
    Cluster {
        nodes,
        probes: ports
            .iter()
            .map(|(_, p, _)| SocketAddr::from(([127, 0, 0, 1], *p)))
            .collect(),
        secure: ports
            .iter()
            .map(|(s, _, _)| SocketAddr::from(([127, 0, 0, 1], *s)))
            .collect(),
        admin: vec![
            "security.protocol=SASL_SSL".into(),
            "sasl.mechanism=SCRAM-SHA-256".into(),
            "sasl.username=admin".into(),
            "sasl.password=admin-secret".into(),
            format!("ssl.ca.location={}", certs.ca.display()),
        ],
        admin_properties,
        raft: ports
            .iter()
            .map(|(_, _, r)| format!("127.0.0.1:{r}"))
            .collect(),
        secret,
    }
}

impl Cluster {
    /// The controller (Raft leader, transaction and group coordinator) every node names.
    fn controller(&self) -> usize {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seen: Vec<Option<i32>> = self
                .probes
                .iter()
                .map(|p| metadata(*p, &[]).ok().map(|m| m.controller_id.0))
                .collect();
            if let Some(Some(c)) = seen.first() {
                if (1..=3).contains(c) && seen.iter().all(|s| *s == Some(*c)) {
                    return *c as usize;
                }
            }
            assert!(Instant::now() < deadline, "no agreed controller: {seen:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Runs `node_auth.py` as `admin` against node `n`'s SASL_SSL listener.
    fn calls(&self, n: usize, actions: &[&str]) -> Vec<serde_json::Value> {
        let mut args: Vec<String> = vec![self.secure[n - 1].to_string()];
        args.extend(actions.iter().map(|a| (*a).to_owned()));
        for s in &self.admin {
            args.push("-X".into());
            args.push(s.clone());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::python_script("node_auth.py", &args, Duration::from_secs(180));
        let line = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str::<serde_json::Value>(line.trim())
            .unwrap_or_else(|e| {
                panic!(
                    "{e}: {line}\nstderr:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
            .as_array()
            .unwrap()
            .clone()
    }

    /// Creates the topic and returns its partitions' owners, checking that at least one
    /// partition lives on a node other than `coordinator` (else the test proves nothing).
    fn spread_topic(&self, coordinator: usize) -> Vec<i64> {
        let owners = self.calls(coordinator, &[&format!("topic:{TOPIC}:{PARTITIONS}")]);
        let owners: Vec<i64> = owners[0]
            .as_array()
            .unwrap_or_else(|| panic!("topic: {owners:?}"))
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert!(
            owners.iter().any(|o| *o != coordinator as i64),
            "every partition on the coordinator {coordinator}: {owners:?}"
        );
        owners
    }
}

/// `cohort cluster status --json` (with `extra` flags): exit code and the report.
fn cluster_status(c: &Cluster, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = common::run(
        std::process::Command::new(env!("CARGO_BIN_EXE_cohort"))
            .args(["cluster", "status", "--json", "--bootstrap", &c.raft[0]])
            .arg("--cluster-secret-file")
            .arg(&c.secret)
            .args(extra),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "{e}: {text}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// The value of the series named `name` whose labels include every `labels` pair.
fn series(m: &BTreeMap<String, f64>, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    m.iter()
        .find(|(k, _)| {
            k.split('{').next() == Some(name)
                && labels
                    .iter()
                    .all(|(l, v)| k.contains(&format!("{l}=\"{v}\"")))
        })
        .map(|(_, v)| *v)
}

#[test]
fn with_the_node_credential_a_transaction_across_nodes_commits_and_remote_lag_is_sampled() {
    let _serial = ONE_CLUSTER_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let c = cluster(dir.path(), "broker-secret", First::SaslSsl);
    let coordinator = c.controller();
    let owners = c.spread_topic(coordinator);

    let txn = c.calls(coordinator, &[&format!("txn:{TOPIC}:{PARTITIONS}")]);
    assert_eq!(txn, ["OK"], "owners {owners:?}");
    let leader = &c.nodes[coordinator - 1];
    let m = scrape(leader);
    assert_eq!(
        series(&m, "cohort_inter_broker_refusals_total", &[]),
        None,
        "leader log:\n{}",
        leader.log()
    );
    let read = c.calls(coordinator, &[&format!("read:{TOPIC}:{PARTITIONS}")]);
    let expected: Vec<String> = (0..PARTITIONS).map(|p| format!("v-{p}")).collect();
    assert_eq!(read[0], serde_json::json!(expected), "owners {owners:?}");

    // A group at offset 0 of every partition: each log ends at 2 (the record, the commit
    // marker), so the coordinator's lag is 2 everywhere, remote partitions included.
    let committed = c.calls(
        coordinator,
        &[&format!("commit:lagger:{TOPIC}:{PARTITIONS}:0")],
    );
    assert_eq!(committed, ["OK"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let m = scrape(leader);
        let lags: Vec<Option<f64>> = (0..PARTITIONS)
            .map(|p| {
                series(
                    &m,
                    "cohort_group_lag",
                    &[
                        ("group", "lagger"),
                        ("topic", TOPIC),
                        ("partition", &p.to_string()),
                    ],
                )
            })
            .collect();
        if lags.iter().all(|l| *l == Some(2.0)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "lag {lags:?} (owners {owners:?}, coordinator {coordinator})\nleader log:\n{}",
            leader.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        series(&scrape(leader), "cohort_inter_broker_refusals_total", &[]),
        None
    );

    // `cohort cluster status` probes the SASL_SSL listeners as `admin` with --command-config;
    // without it, the plaintext probe gets no Metadata and the report says the nodes are out
    // of step (exit 4).
    let admin = c.admin_properties.to_str().unwrap();
    let (code, report) = cluster_status(&c, &["--command-config", admin]);
    let kafka: Vec<&serde_json::Value> = report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["kafka"])
        .collect();
    assert_eq!(code, 0, "{report:#}");
    for k in &kafka {
        assert_eq!(
            k["Ok"]["brokers"],
            serde_json::json!([1, 2, 3]),
            "{report:#}"
        );
        assert_eq!(
            k["Ok"]["controller"],
            serde_json::json!(coordinator),
            "{report:#}"
        );
    }
    let (code, report) = cluster_status(&c, &[]);
    assert_eq!(code, 4, "{report:#}");
    assert!(
        report["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["kafka"].get("Err").is_some()),
        "{report:#}"
    );
}

#[test]
fn with_a_wrong_node_credential_markers_are_refused_loudly() {
    let _serial = ONE_CLUSTER_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let c = cluster(dir.path(), "not-the-broker-secret", First::SaslSsl);
    let coordinator = c.controller();
    let owners = c.spread_topic(coordinator);

    // EndTxn is answered after its bound (decision 0152) while the remote markers are refused.
    let txn = c.calls(coordinator, &[&format!("txn:{TOPIC}:{PARTITIONS}")]);
    assert_eq!(txn, ["OK"], "owners {owners:?}");
    let leader = &c.nodes[coordinator - 1];
    let refused = series(
        &scrape(leader),
        "cohort_inter_broker_refusals_total",
        &[("client", "txn_markers"), ("reason", "authentication")],
    );
    assert!(
        refused.is_some_and(|n| n >= 1.0),
        "refusals {refused:?}\nleader log:\n{}",
        leader.log()
    );
    assert!(
        leader
            .log()
            .contains("refused this node's inter-broker authentication"),
        "leader log:\n{}",
        leader.log()
    );
    // Only the coordinator's own partitions got their commit marker.
    let read = c.calls(coordinator, &[&format!("read:{TOPIC}:{PARTITIONS}")]);
    let local: Vec<String> = owners
        .iter()
        .enumerate()
        .filter(|(_, o)| **o == coordinator as i64)
        .map(|(p, _)| format!("v-{p}"))
        .collect();
    assert_eq!(read[0], serde_json::json!(local), "owners {owners:?}");
}

/// Polls `cohort cluster status --json` until every voter's membership record lists both
/// listeners; returns the records' listeners by node id.
fn recorded_listeners(c: &Cluster) -> BTreeMap<u64, serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, report) = cluster_status(c, &[]);
        let recorded: BTreeMap<u64, serde_json::Value> = report["view"]["voters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| Some((v[0].as_u64()?, v[1]["listeners"].clone())))
            .collect();
        if recorded.len() == 3
            && recorded
                .values()
                .all(|l| l.as_array().is_some_and(|a| a.len() == 2))
        {
            return recorded;
        }
        assert!(
            Instant::now() < deadline,
            "listeners not recorded: {report:#}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn clients_are_told_every_broker_on_their_own_listener_and_markers_use_the_named_one() {
    let _serial = ONE_CLUSTER_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let c = cluster(dir.path(), "broker-secret", First::Plaintext);
    let coordinator = c.controller();

    // Each node recorded its two listeners, in --listeners order.
    let recorded = recorded_listeners(&c);
    for (i, (plain, secure)) in c.probes.iter().zip(&c.secure).enumerate() {
        assert_eq!(
            recorded[&(i as u64 + 1)],
            serde_json::json!([
                {"name": "PLAINTEXT", "addr": plain.to_string()},
                {"name": "SASL_SSL", "addr": secure.to_string()},
            ]),
            "node {}",
            i + 1
        );
    }

    // A client on node 1's SASL_SSL listener: every broker at its SASL_SSL address.
    let owners = c.spread_topic(coordinator);
    let committed = c.calls(1, &[&format!("commit:placed:{TOPIC}:{PARTITIONS}:0")]);
    assert_eq!(committed, ["OK"]);
    let seen = c.calls(1, &["brokers", "coordinator:placed"]);
    let secure: serde_json::Value = c
        .secure
        .iter()
        .enumerate()
        .map(|(i, a)| ((i + 1).to_string(), serde_json::json!(a.to_string())))
        .collect::<serde_json::Map<_, _>>()
        .into();
    assert_eq!(seen[0], secure, "SASL_SSL client's brokers");
    assert_eq!(
        seen[1],
        serde_json::json!(format!("{coordinator}@{}", c.secure[coordinator - 1])),
        "SASL_SSL client's coordinator"
    );

    // A client on node 1's PLAINTEXT listener (User:ANONYMOUS, allowed to find the group's
    // coordinator): the PLAINTEXT addresses.
    let allowed = c.calls(1, &["allow-describe:User:ANONYMOUS:placed"]);
    assert_eq!(allowed, ["OK"]);
    let m = metadata(c.probes[0], &[]).unwrap();
    let brokers: Vec<(i32, String)> = m
        .brokers
        .iter()
        .map(|b| (b.node_id.0, format!("{}:{}", b.host, b.port)))
        .collect();
    let plain: Vec<(i32, String)> = c
        .probes
        .iter()
        .enumerate()
        .map(|(i, a)| (i as i32 + 1, a.to_string()))
        .collect();
    assert_eq!(brokers, plain, "PLAINTEXT client's brokers");
    let found = cluster_support::find_coordinator_endpoint(c.probes[0], "placed").unwrap();
    assert_eq!(
        found,
        (coordinator as i32, c.probes[coordinator - 1].to_string()),
        "PLAINTEXT client's coordinator"
    );

    // The transaction across nodes commits: the remote owners accepted its markers, which the
    // coordinator sent to their SASL_SSL listener (its SASL_SSL credential cannot even
    // handshake with a PLAINTEXT one: that would count a refusal and leave the remote
    // partitions uncommitted).
    let txn = c.calls(coordinator, &[&format!("txn:{TOPIC}:{PARTITIONS}")]);
    assert_eq!(txn, ["OK"], "owners {owners:?}");
    let read = c.calls(coordinator, &[&format!("read:{TOPIC}:{PARTITIONS}")]);
    let expected: Vec<String> = (0..PARTITIONS).map(|p| format!("v-{p}")).collect();
    let leader = &c.nodes[coordinator - 1];
    assert_eq!(
        read[0],
        serde_json::json!(expected),
        "owners {owners:?}\nleader log:\n{}",
        leader.log()
    );
    assert_eq!(
        series(&scrape(leader), "cohort_inter_broker_refusals_total", &[]),
        None
    );
}
