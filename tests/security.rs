//! Listeners, TLS and SASL over real sockets: confluent-kafka (librdkafka) and kcat over
//! SASL_SSL with SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN and over mutual TLS; raw sockets for
//! Kafka's refusal codes (ILLEGAL_SASL_STATE 34, UNSUPPORTED_SASL_MECHANISM 33,
//! SASL_AUTHENTICATION_FAILED 58), TLS garbage, stalled handshakes and a run of failed
//! authentications that must leave the broker serving.
//!
//! Certificates are made for each run with the `openssl` command line tool (a throwaway CA, a
//! server certificate for 127.0.0.1 and a client certificate), in the test's temp directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::certs::Certs;
use common::raw::RawClient;
use common::Cohort;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{
    ApiKey, FindCoordinatorRequest, MetadataRequest, RequestKind, ResponseKind,
    SaslAuthenticateRequest, SaslHandshakeRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;

const SCRAM_256: (&str, &str) = ("alice", "alice-secret");
const SCRAM_512: (&str, &str) = ("bob", "bob-secret");
const PLAIN: (&str, &str) = ("carol", "carol-secret");

/// A broker with one listener of each protocol, SCRAM users alice (SHA-256) and bob
/// (SHA-512), PLAIN user carol, client certificates required on SSL.
fn secure_broker(dir: &Path, certs: &Certs, extra: &[&str]) -> Cohort {
    let users = dir.join("plain-users");
    std::fs::write(&users, format!("{}:{}\n", PLAIN.0, PLAIN.1)).unwrap();
    let scram_256 = format!("{}:SCRAM-SHA-256:{}", SCRAM_256.0, SCRAM_256.1);
    let scram_512 = format!("{}:SCRAM-SHA-512:{}", SCRAM_512.0, SCRAM_512.1);
    let data = dir.join("data");
    let mut flags = vec![
        "--listeners",
        "SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
        "--ssl-cert",
        certs.server_cert.to_str().unwrap(),
        "--ssl-key",
        certs.server_key.to_str().unwrap(),
        "--ssl-client-ca",
        certs.ca.to_str().unwrap(),
        "--sasl-enabled-mechanisms",
        "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN",
        "--sasl-plain-users",
        users.to_str().unwrap(),
        "--scram-user",
        &scram_256,
        "--scram-user",
        &scram_512,
    ];
    flags.extend_from_slice(extra);
    Cohort::start_logged(&data, &flags, "info,cohort::server=debug")
}

fn sasl_ssl_settings(certs: &Certs, mechanism: &str, user: (&str, &str)) -> Vec<String> {
    vec![
        "security.protocol=SASL_SSL".into(),
        format!("sasl.mechanism={mechanism}"),
        format!("sasl.username={}", user.0),
        format!("sasl.password={}", user.1),
        format!("ssl.ca.location={}", certs.ca.display()),
    ]
}

/// Runs secure_e2e.py and checks every record was acknowledged, consumed and committed.
fn produce_consume_commit(bootstrap: SocketAddr, topic: &str, settings: &[String]) {
    produce_consume_commit_sized(bootstrap, topic, settings, 0);
}

/// The same with values of `value_bytes` bytes.
fn produce_consume_commit_sized(
    bootstrap: SocketAddr,
    topic: &str,
    settings: &[String],
    value_bytes: usize,
) {
    let mut args = vec![
        bootstrap.to_string(),
        topic.to_string(),
        format!("{topic}-group"),
        "20".to_string(),
        "--value-bytes".to_string(),
        value_bytes.to_string(),
    ];
    for s in settings {
        args.push("-X".into());
        args.push(s.clone());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::python_script("secure_e2e.py", &args, Duration::from_secs(180));
    let line = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(line.trim()).unwrap_or_else(|e| {
        panic!(
            "{e}: {line}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(report["errors"], serde_json::json!([]), "{report}");
    assert_eq!(report["acked"], 20, "{report}");
    assert_eq!(report["consumed"], 20, "{report}");
    assert_eq!(report["committed"], 20, "{report}");
}

#[test]
fn confluent_kafka_over_sasl_ssl_with_scram_and_plain_produces_consumes_and_commits() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(dir.path(), &certs, &[]);
    let addr = broker.listener("SASL_SSL");
    for (mechanism, user, topic) in [
        ("SCRAM-SHA-256", SCRAM_256, "scram256"),
        ("SCRAM-SHA-512", SCRAM_512, "scram512"),
        ("PLAIN", PLAIN, "plain"),
    ] {
        produce_consume_commit(addr, topic, &sasl_ssl_settings(&certs, mechanism, user));
    }
    // Batches larger than a read chunk leave the segment files by the TLS copy path (sendfile
    // on plain TCP): 20 records of 300 KB, one batch each.
    produce_consume_commit_sized(
        addr,
        "large",
        &sasl_ssl_settings(&certs, "SCRAM-SHA-256", SCRAM_256),
        300_000,
    );
    let log = broker.log();
    for user in ["User:alice", "User:bob", "User:carol"] {
        assert!(log.contains(user), "{user} never authenticated:\n{log}");
    }
    // Passwords never reach the log.
    for secret in [SCRAM_256.1, SCRAM_512.1, PLAIN.1] {
        assert!(!log.contains(secret), "a password is in the log");
    }
}

#[test]
fn mutual_tls_names_the_principal_from_the_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(
        dir.path(),
        &certs,
        &[
            "--ssl-principal-mapping-rules",
            "RULE:^CN=([^,]*),OU=eng,.*$/svc-$1/,DEFAULT",
        ],
    );
    let addr = broker.listener("SSL");
    let settings = vec![
        "security.protocol=SSL".to_string(),
        format!("ssl.ca.location={}", certs.ca.display()),
        format!("ssl.certificate.location={}", certs.client_cert.display()),
        format!("ssl.key.location={}", certs.client_key.display()),
    ];
    produce_consume_commit(addr, "mtls", &settings);
    let log = broker.log();
    assert!(
        log.contains("User:svc-app"),
        "no mapped principal in the log:\n{log}"
    );
    // Without a client certificate the handshake is refused.
    let out = common::run(
        Command::new("kcat").args([
            "-b",
            &addr.to_string(),
            "-X",
            "security.protocol=SSL",
            "-X",
            &format!("ssl.ca.location={}", certs.ca.display()),
            "-m",
            "5",
            "-L",
        ]),
        Duration::from_secs(30),
    );
    assert!(
        !out.status.success(),
        "kcat without a certificate was served"
    );
}

#[test]
fn kcat_produces_and_consumes_over_sasl_ssl() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(dir.path(), &certs, &[]);
    let addr = broker.listener("SASL_SSL").to_string();
    let ca = format!("ssl.ca.location={}", certs.ca.display());
    let user = format!("sasl.username={}", SCRAM_512.0);
    let password = format!("sasl.password={}", SCRAM_512.1);
    let security = [
        "-X",
        "security.protocol=SASL_SSL",
        "-X",
        "sasl.mechanisms=SCRAM-SHA-512",
        "-X",
        &user,
        "-X",
        &password,
        "-X",
        &ca,
    ];
    let mut produce = Command::new("kcat");
    produce
        .args(["-b", &addr, "-t", "kcat-secure", "-P", "-m", "30"])
        .args(security)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = produce.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"one\ntwo\nthree\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "kcat -P: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::run_ok(
        Command::new("kcat")
            .args([
                "-b",
                &addr,
                "-t",
                "kcat-secure",
                "-C",
                "-o",
                "beginning",
                "-e",
                "-m",
                "30",
            ])
            .args(security),
        Duration::from_secs(60),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "one\ntwo\nthree\n");
}

fn handshake(c: &mut RawClient, version: i16, mechanism: &'static str) -> (i16, Vec<String>) {
    let req = SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism));
    match c.call(
        ApiKey::SaslHandshake,
        version,
        RequestKind::SaslHandshake(req),
    ) {
        ResponseKind::SaslHandshake(r) => (
            r.error_code,
            r.mechanisms.iter().map(|m| m.to_string()).collect(),
        ),
        other => panic!("{other:?}"),
    }
}

fn authenticate(c: &mut RawClient, version: i16, token: &[u8]) -> (i16, Option<String>) {
    let req = SaslAuthenticateRequest::default().with_auth_bytes(token.to_vec().into());
    match c.call(
        ApiKey::SaslAuthenticate,
        version,
        RequestKind::SaslAuthenticate(req),
    ) {
        ResponseKind::SaslAuthenticate(r) => (r.error_code, r.error_message.map(|m| m.to_string())),
        other => panic!("{other:?}"),
    }
}

fn metadata(c: &mut RawClient, topic: &'static str) -> kafka_protocol::messages::MetadataResponse {
    let req = MetadataRequest::default()
        .with_topics(Some(vec![MetadataRequestTopic::default()
            .with_name(Some(TopicName(StrBytes::from_static_str(topic))))]))
        .with_allow_auto_topic_creation(false);
    match c.call(ApiKey::Metadata, 9, RequestKind::Metadata(req)) {
        ResponseKind::Metadata(r) => r,
        other => panic!("{other:?}"),
    }
}

fn plain_token(user: &str, password: &str) -> Vec<u8> {
    format!("\0{user}\0{password}").into_bytes()
}

#[test]
fn sasl_refusals_carry_kafkas_codes_and_close_the_connection() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(
        dir.path(),
        &certs,
        &["--advertised-listeners", "PLAINTEXT://plain.example:19092"],
    );
    let sasl = broker.listener("SASL_PLAINTEXT");

    // ApiVersions is served before authentication and lists both SASL APIs.
    let mut c = RawClient::connect(sasl);
    let versions = c.api_versions();
    for (key, max) in [(ApiKey::SaslHandshake, 1), (ApiKey::SaslAuthenticate, 2)] {
        let v = versions
            .api_keys
            .iter()
            .find(|k| k.api_key == key as i16)
            .unwrap();
        assert_eq!(v.max_version, max);
    }
    // Any other API before authentication: its error response with ILLEGAL_SASL_STATE, closed.
    let md = metadata(&mut c, "t");
    assert_eq!(md.topics[0].error_code, 34);
    assert!(c.closed_by_broker());

    // Produce before authentication: every partition ILLEGAL_SASL_STATE, closed.
    let mut c = RawClient::connect(sasl);
    let produce = kafka_protocol::messages::ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(1000)
        .with_topic_data(vec![
            kafka_protocol::messages::produce_request::TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_static_str("t")))
                .with_partition_data(vec![
                    kafka_protocol::messages::produce_request::PartitionProduceData::default(),
                ]),
        ]);
    match c.call(ApiKey::Produce, 9, RequestKind::Produce(produce)) {
        ResponseKind::Produce(r) => {
            assert_eq!(r.responses[0].partition_responses[0].error_code, 34)
        }
        other => panic!("{other:?}"),
    }
    assert!(c.closed_by_broker());

    // SaslAuthenticate before SaslHandshake: ILLEGAL_SASL_STATE, closed.
    let mut c = RawClient::connect(sasl);
    assert_eq!(authenticate(&mut c, 2, b"\0a\0b").0, 34);
    assert!(c.closed_by_broker());

    // An unknown mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled list, after the
    // failed-authentication delay, closed.
    let mut c = RawClient::connect(sasl);
    let asked = Instant::now();
    let (code, mechanisms) = handshake(&mut c, 1, "GSSAPI");
    assert_eq!(code, 33);
    assert_eq!(mechanisms, ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"]);
    assert!(
        asked.elapsed() >= Duration::from_millis(100),
        "{:?}",
        asked.elapsed()
    );
    assert!(c.closed_by_broker());

    // A wrong password: SASL_AUTHENTICATION_FAILED after the delay, closed.
    let mut c = RawClient::connect(sasl);
    assert_eq!(handshake(&mut c, 1, "PLAIN").0, 0);
    let asked = Instant::now();
    let (code, message) = authenticate(&mut c, 2, &plain_token(PLAIN.0, "wrong"));
    assert_eq!(code, 58);
    assert_eq!(
        message.as_deref(),
        Some("Authentication failed: Invalid username or password")
    );
    assert!(asked.elapsed() >= Duration::from_millis(100));
    assert!(c.closed_by_broker());

    // A right one, v1 handshake: then Metadata names this listener's address.
    let mut c = RawClient::connect(sasl);
    assert_eq!(handshake(&mut c, 1, "PLAIN").0, 0);
    assert_eq!(
        authenticate(&mut c, 1, &plain_token(PLAIN.0, PLAIN.1)),
        (0, None)
    );
    let md = metadata(&mut c, "t");
    assert_eq!(md.brokers[0].port, i32::from(sasl.port()));
    // Once authenticated, both SASL APIs answer ILLEGAL_SASL_STATE and the connection stays.
    assert_eq!(handshake(&mut c, 1, "PLAIN").0, 34);
    assert_eq!(authenticate(&mut c, 2, b"x").0, 34);
    assert_eq!(c.api_versions().error_code, 0);

    // A v0 handshake: the token travels bare, the answer too (an empty one for PLAIN).
    let mut c = RawClient::connect(sasl);
    assert_eq!(handshake(&mut c, 0, "PLAIN").0, 0);
    let token = plain_token(PLAIN.0, PLAIN.1);
    let mut bare = (token.len() as u32).to_be_bytes().to_vec();
    bare.extend(&token);
    c.stream.write_all(&bare).unwrap();
    assert_eq!(c.read_frame().unwrap().len(), 0);
    assert_eq!(
        metadata(&mut c, "t").brokers[0].port,
        i32::from(sasl.port())
    );

    // A token larger than Kafka's sasl.server.max.receive.size: closed unread.
    let mut c = RawClient::connect(sasl);
    assert_eq!(handshake(&mut c, 1, "PLAIN").0, 0);
    c.stream.write_all(&(1_000_000u32).to_be_bytes()).unwrap();
    let _ = c.stream.write_all(&[0u8; 1024]);
    assert!(c.closed_by_broker());

    // The PLAINTEXT listener: User:ANONYMOUS, its advertised address, FindCoordinator too.
    let mut c = RawClient::connect(broker.listener("PLAINTEXT"));
    let md = metadata(&mut c, "t");
    assert_eq!(
        (md.brokers[0].host.as_str(), md.brokers[0].port),
        ("plain.example", 19092)
    );
    let req = FindCoordinatorRequest::default().with_key(StrBytes::from_static_str("g"));
    match c.call(
        ApiKey::FindCoordinator,
        3,
        RequestKind::FindCoordinator(req),
    ) {
        ResponseKind::FindCoordinator(r) => {
            assert_eq!((r.host.as_str(), r.port), ("plain.example", 19092), "{r:?}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(handshake(&mut c, 1, "PLAIN").0, 34);
}

/// Connects and waits for the broker to close; how long it took.
fn closed_after(addr: SocketAddr, send: &[u8]) -> Duration {
    let started = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = s.write_all(send);
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return started.elapsed(),
            // A TLS alert may come first.
            Ok(_) => {}
        }
    }
}

#[test]
fn tls_garbage_and_stalled_handshakes_cost_one_connection_and_one_log_line() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(dir.path(), &certs, &["--authentication-timeout-ms", "500"]);
    let tls = broker.listener("SASL_SSL");
    let took = closed_after(tls, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // A client that says nothing: closed at the authentication timeout.
    let took = closed_after(tls, b"");
    assert!(
        (Duration::from_millis(450)..Duration::from_secs(5)).contains(&took),
        "{took:?}"
    );
    // A client that stalls mid-handshake (a TLS record header announcing a ClientHello that
    // never comes): closed at the timeout too.
    let took = closed_after(tls, &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01]);
    assert!(
        (Duration::from_millis(450)..Duration::from_secs(5)).contains(&took),
        "{took:?}"
    );
    // The same on a SASL listener without TLS that never authenticates.
    let took = closed_after(broker.listener("SASL_PLAINTEXT"), b"");
    assert!(
        (Duration::from_millis(450)..Duration::from_secs(5)).contains(&took),
        "{took:?}"
    );
    std::thread::sleep(Duration::from_millis(200));
    let log = broker.log();
    let handshake_lines = log.matches("closing connection: TLS handshake").count();
    assert_eq!(handshake_lines, 3, "{log}");
    assert_eq!(log.matches("not authenticated in time").count(), 1, "{log}");
    let mut c = RawClient::connect(broker.listener("PLAINTEXT"));
    assert_eq!(c.api_versions().error_code, 0);
}

#[test]
fn a_run_of_failed_authentications_leaves_the_broker_serving() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(dir.path(), &certs, &[]);
    let sasl = broker.listener("SASL_PLAINTEXT");
    let pid = broker.pid();
    let fds_before = common::procfs::fds(pid);
    // 8 clients guess in parallel; each guess costs a connection and the 100 ms delay.
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..40 {
                    let mut c = RawClient::connect(sasl);
                    let mechanism = if i % 2 == 0 { "PLAIN" } else { "SCRAM-SHA-256" };
                    assert_eq!(handshake(&mut c, 1, mechanism).0, 0);
                    let token = if mechanism == "PLAIN" {
                        plain_token(PLAIN.0, &format!("guess-{t}-{i}"))
                    } else {
                        format!("n,,n=nobody-{t}-{i},r=abcdef").into_bytes()
                    };
                    assert_eq!(authenticate(&mut c, 2, &token).0, 58);
                    assert!(c.closed_by_broker());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let fds = common::procfs::fds_settle(pid, fds_before + 8, Duration::from_secs(10));
    assert!(
        fds <= fds_before + 8,
        "{fds} descriptors after, {fds_before} before"
    );
    // Still serving: a right password goes through.
    let mut c = RawClient::connect(sasl);
    assert_eq!(handshake(&mut c, 1, "PLAIN").0, 0);
    assert_eq!(authenticate(&mut c, 2, &plain_token(PLAIN.0, PLAIN.1)).0, 0);
    assert_eq!(c.api_versions().error_code, 0);
}

#[test]
fn kafka_python_and_kafkajs_over_sasl_ssl_with_scram_produce_consume_and_commit() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(dir.path(), &certs, &[]);
    let addr = broker.listener("SASL_SSL").to_string();
    let ca = certs.ca.to_str().unwrap();
    let out = common::python_script(
        "secure_kafka_python.py",
        &[
            &addr,
            "kp-secure",
            "kp-group",
            "10",
            "SCRAM-SHA-256",
            SCRAM_256.0,
            SCRAM_256.1,
            ca,
        ],
        Duration::from_secs(180),
    );
    let line = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(report["errors"], serde_json::json!([]), "{report}");
    assert_eq!(
        (&report["acked"], &report["consumed"], &report["committed"]),
        (
            &serde_json::json!(10),
            &serde_json::json!(10),
            &serde_json::json!(10)
        ),
        "{report}"
    );
    let out = common::node_script(
        "secure_kafkajs.js",
        &[
            &addr,
            "kjs-secure",
            "kjs-group",
            "10",
            "SCRAM-SHA-512",
            SCRAM_512.0,
            SCRAM_512.1,
            ca,
        ],
        Duration::from_secs(180),
    );
    let line = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(report["consumed"], 10, "{report}");
    assert_eq!(report["committed"], "10", "{report}");
}

/// Runs scram_admin.py (confluent-kafka's AdminClient) with `actions`; returns its report.
fn scram_admin(bootstrap: SocketAddr, settings: &[String], actions: &[&str]) -> serde_json::Value {
    let mut args: Vec<String> = vec![bootstrap.to_string()];
    args.extend(actions.iter().map(|a| (*a).to_owned()));
    for s in settings {
        args.push("-X".into());
        args.push(s.clone());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::python_script("scram_admin.py", &args, Duration::from_secs(120));
    let line = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(line.trim()).unwrap_or_else(|e| {
        panic!(
            "{e}: {line}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `cohort users ARGS` against `bootstrap`: (exit code, stdout, stderr).
fn cohort_users(bootstrap: SocketAddr, args: &[&str]) -> (i32, String, String) {
    let out = common::run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg("users")
            .args(["--bootstrap-server", &bootstrap.to_string()])
            .args(args),
        Duration::from_secs(60),
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The first SCRAM message for `user` over a raw SASL_PLAINTEXT connection: an unknown user
/// fails there with SASL_AUTHENTICATION_FAILED (58), a known one gets the server-first message.
fn scram_first(addr: SocketAddr, mechanism: &'static str, user: &str) -> i16 {
    let mut c = RawClient::connect(addr);
    assert_eq!(handshake(&mut c, 1, mechanism).0, 0);
    authenticate(
        &mut c,
        2,
        format!("n,,n={user},r=rawclientnonce").as_bytes(),
    )
    .0
}

#[test]
fn scram_credentials_altered_over_the_api_authenticate_survive_a_restart_and_deleted_ones_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let mut broker = secure_broker(dir.path(), &certs, &[]);
    let sasl_ssl = broker.listener("SASL_SSL");
    // The bootstrap user alice (--scram-user) administers the others.
    let admin = sasl_ssl_settings(&certs, "SCRAM-SHA-256", SCRAM_256);
    let report = scram_admin(
        sasl_ssl,
        &admin,
        &[
            "upsert:dave:SCRAM-SHA-512:8192:dave-secret",
            "upsert:erin:SCRAM-SHA-256:1024:erin-secret",
            "upsert:erin:SCRAM-SHA-256:16385:erin-secret",
            "delete:nobody:SCRAM-SHA-256",
            "describe:dave,alice,nobody",
        ],
    );
    let result = |i: usize| report[i]["result"].clone();
    assert_eq!(result(0), serde_json::json!({"dave": "OK"}), "{report}");
    assert_eq!(
        result(1),
        serde_json::json!({"erin": "UNACCEPTABLE_CREDENTIAL"}),
        "{report}"
    );
    assert_eq!(
        result(2),
        serde_json::json!({"erin": "UNACCEPTABLE_CREDENTIAL"}),
        "{report}"
    );
    assert_eq!(
        result(3),
        serde_json::json!({"nobody": "RESOURCE_NOT_FOUND"}),
        "{report}"
    );
    assert_eq!(
        result(4),
        serde_json::json!({
            "dave": [["SCRAM_SHA_512", 8192]],
            "alice": [["SCRAM_SHA_256", 4096]],
            "nobody": "RESOURCE_NOT_FOUND",
        }),
        "{report}"
    );
    // The credential made over the API authenticates a real client.
    let dave = ("dave", "dave-secret");
    produce_consume_commit(
        sasl_ssl,
        "dave-before",
        &sasl_ssl_settings(&certs, "SCRAM-SHA-512", dave),
    );
    // Cohort's own tool, kafka-configs.sh's flags and output.
    let plain = broker.listener("PLAINTEXT");
    let (code, out, err) = cohort_users(plain, &["--describe", "--entity-type", "users"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out,
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096\n\
         SCRAM credential configs for user-principal 'bob' are SCRAM-SHA-512=iterations=4096\n\
         SCRAM credential configs for user-principal 'dave' are SCRAM-SHA-512=iterations=8192\n"
    );
    let (code, out, err) = cohort_users(
        plain,
        &[
            "--alter",
            "--add-config",
            "SCRAM-SHA-256=[iterations=8192,password=frank-secret]",
            "--entity-type",
            "users",
            "--entity-name",
            "frank",
        ],
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "Completed updating config for user frank.\n"),
        "{err}"
    );
    // Two mechanisms of one user in one request: Kafka's controller refuses the user.
    let (code, out, err) = cohort_users(
        plain,
        &[
            "--alter",
            "--add-config",
            "SCRAM-SHA-256=[password=x],SCRAM-SHA-512=[password=y]",
            "--user",
            "frank",
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with("Error while executing config command with args"),
        "{out}"
    );
    assert!(
        err.contains("DuplicateResourceException: A user credential cannot be altered twice in the same request"),
        "{err}"
    );
    produce_consume_commit(
        sasl_ssl,
        "frank",
        &sasl_ssl_settings(&certs, "SCRAM-SHA-256", ("frank", "frank-secret")),
    );
    // Delete the bootstrap user bob: the same --scram-user flag at the next start must not
    // bring him back (the bootstrap applies once per cluster, as kafka-storage.sh format).
    let (code, out, err) = cohort_users(
        plain,
        &[
            "--alter",
            "--delete-config",
            "SCRAM-SHA-512",
            "--entity-type",
            "users",
            "--entity-name",
            "bob",
        ],
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "Completed updating config for user bob.\n"),
        "{err}"
    );
    let sasl_plain = broker.listener("SASL_PLAINTEXT");
    assert_eq!(scram_first(sasl_plain, "SCRAM-SHA-512", "bob"), 58);

    // A restart with the same flags: the replicated credentials are what authenticates.
    let _ = broker.terminate();
    let broker = secure_broker(dir.path(), &certs, &[]);
    let sasl_ssl = broker.listener("SASL_SSL");
    produce_consume_commit(
        sasl_ssl,
        "dave-after",
        &sasl_ssl_settings(&certs, "SCRAM-SHA-512", dave),
    );
    let sasl_plain = broker.listener("SASL_PLAINTEXT");
    assert_eq!(
        scram_first(sasl_plain, "SCRAM-SHA-512", "bob"),
        58,
        "bob came back"
    );
    assert_eq!(scram_first(sasl_plain, "SCRAM-SHA-512", "dave"), 0);
    // Deleted over the API: dave no longer authenticates.
    let report = scram_admin(
        sasl_ssl,
        &admin,
        &["delete:dave:SCRAM-SHA-512", "describe:dave"],
    );
    assert_eq!(
        report[0]["result"],
        serde_json::json!({"dave": "OK"}),
        "{report}"
    );
    assert_eq!(
        report[1]["result"],
        serde_json::json!({"dave": "RESOURCE_NOT_FOUND"}),
        "{report}"
    );
    assert_eq!(scram_first(sasl_plain, "SCRAM-SHA-512", "dave"), 58);
    // No password, salted password or key in the log or /metrics.
    let (_, metrics) = broker.http_get("/metrics");
    let log = broker.log();
    for secret in ["dave-secret", "frank-secret", "erin-secret", SCRAM_512.1] {
        assert!(!log.contains(secret), "{secret} is in the log");
        assert!(!metrics.contains(secret), "{secret} is in /metrics");
    }
}
