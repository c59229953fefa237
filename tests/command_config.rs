//! `--command-config` with the Java client's security properties, for every `cohort` client
//! command, against a real broker over real sockets: SASL_SSL with SCRAM-SHA-256 and
//! SCRAM-SHA-512, PLAIN over SASL_PLAINTEXT, mutual TLS on an SSL listener (key and chain in
//! one file, or inline), and the refusals: a wrong password, an untrusted or misnamed server
//! certificate, a missing client certificate — each an error and an exit code, never a hang,
//! never a password in the output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::certs::Certs;
use common::Cohort;

const SCRAM_256: (&str, &str) = ("alice", "alice-secret");
const SCRAM_512: (&str, &str) = ("bob", "bob-secret");
const PLAIN: (&str, &str) = ("carol", "carol-secret");

const SCRAM_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";
const PLAIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";

/// SASL_SSL, SSL (client certificates required, `CN=app` mapped to `User:app`) and
/// SASL_PLAINTEXT listeners, the ACL authorizer with every test principal a super user.
fn secure_broker(dir: &Path, certs: &Certs) -> Cohort {
    let users = dir.join("plain-users");
    std::fs::write(&users, format!("{}:{}\n", PLAIN.0, PLAIN.1)).unwrap();
    let scram_256 = format!("{}:SCRAM-SHA-256:{}", SCRAM_256.0, SCRAM_256.1);
    let scram_512 = format!("{}:SCRAM-SHA-512:{}", SCRAM_512.0, SCRAM_512.1);
    Cohort::start(
        &dir.join("data"),
        &[
            "--listeners",
            "SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "--ssl-cert",
            certs.server_cert.to_str().unwrap(),
            "--ssl-key",
            certs.server_key.to_str().unwrap(),
            "--ssl-client-ca",
            certs.ca.to_str().unwrap(),
            "--ssl-principal-mapping-rules",
            "RULE:^CN=([^,]*),.*$/$1/,DEFAULT",
            "--sasl-enabled-mechanisms",
            "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN",
            "--sasl-plain-users",
            users.to_str().unwrap(),
            "--scram-user",
            &scram_256,
            "--scram-user",
            &scram_512,
            "--authorizer",
            "acl",
            "--super-users",
            "User:alice;User:bob;User:carol;User:app",
        ],
    )
}

/// Writes a properties file named `name` in `dir`.
fn properties(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn jaas(module: &str, user: (&str, &str)) -> String {
    format!(
        "sasl.jaas.config={module} required username=\"{}\" password=\"{}\";",
        user.0, user.1
    )
}

fn sasl_ssl(certs: &Certs, mechanism: &str, user: (&str, &str)) -> Vec<String> {
    vec![
        "security.protocol=SASL_SSL".into(),
        format!("sasl.mechanism={mechanism}"),
        jaas(SCRAM_MODULE, user),
        "ssl.truststore.type=PEM".into(),
        format!("ssl.truststore.location={}", certs.ca.display()),
    ]
}

/// What one tool run printed.
struct Run {
    code: i32,
    out: String,
    err: String,
    took: Duration,
}

/// `cohort TOOL --bootstrap-server ADDR --command-config FILE ARGS`.
fn tool(name: &str, addr: &str, config: &Path, args: &[&str]) -> Run {
    let started = Instant::now();
    let out = common::run(
        Command::new(env!("CARGO_BIN_EXE_cohort"))
            .arg(name)
            .args(["--bootstrap-server", addr])
            .args(["--command-config", config.to_str().unwrap()])
            .args(args),
        Duration::from_secs(60),
    );
    Run {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: started.elapsed(),
    }
}

impl Run {
    /// Everything printed: the tools print errors on stdout or stderr, as Kafka's do.
    fn said(&self) -> String {
        format!("{}{}", self.out, self.err)
    }
}

fn ok(run: Run, what: &str) -> String {
    assert_eq!(
        run.code, 0,
        "{what}: stdout:\n{}\nstderr:\n{}",
        run.out, run.err
    );
    assert!(
        !run.err.contains("were supplied but are not used"),
        "{what}: {}",
        run.err
    );
    run.out
}

/// The tools the issue names, through one properties file: topics (create, list), groups
/// (a committed group listed and described), acls (add, list), users (describe).
fn every_tool(addr: &str, config: &Path, tag: &str) {
    let topic = format!("t-{tag}");
    let group = format!("g-{tag}");
    let out = ok(
        tool(
            "topics",
            addr,
            config,
            &[
                "--create",
                "--topic",
                &topic,
                "--partitions",
                "2",
                "--replication-factor",
                "1",
            ],
        ),
        "topics --create",
    );
    assert_eq!(out, format!("Created topic {topic}.\n"));
    let out = ok(tool("topics", addr, config, &["--list"]), "topics --list");
    assert!(out.lines().any(|l| l == topic), "{out}");

    let out = ok(
        tool(
            "groups",
            addr,
            config,
            &[
                "--reset-offsets",
                "--group",
                &group,
                "--topic",
                &topic,
                "--to-earliest",
                "--execute",
            ],
        ),
        "groups --reset-offsets",
    );
    assert!(out.contains(&group), "{out}");
    let out = ok(tool("groups", addr, config, &["--list"]), "groups --list");
    assert!(out.lines().any(|l| l == group), "{out}");
    let out = ok(
        tool("groups", addr, config, &["--describe", "--group", &group]),
        "groups --describe",
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with(&group) && l.contains(&topic)),
        "{out}"
    );

    let principal = format!("User:reader-{tag}");
    ok(
        tool(
            "acls",
            addr,
            config,
            &[
                "--add",
                "--allow-principal",
                &principal,
                "--operation",
                "Read",
                "--topic",
                &topic,
            ],
        ),
        "acls --add",
    );
    let out = ok(
        tool("acls", addr, config, &["--list", "--topic", &topic]),
        "acls --list",
    );
    assert!(
        out.contains(&format!(
            "(principal={principal}, host=*, operation=READ, permissionType=ALLOW)"
        )),
        "{out}"
    );

    let out = ok(
        tool(
            "users",
            addr,
            config,
            &["--describe", "--entity-type", "users"],
        ),
        "users --describe",
    );
    assert!(
        out.contains(
            "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096"
        ) && out.contains(
            "SCRAM credential configs for user-principal 'bob' are SCRAM-SHA-512=iterations=4096"
        ),
        "{out}"
    );
}

#[test]
fn scram_over_sasl_ssl_and_plain_over_sasl_plaintext_serve_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(dir.path(), &certs);
    let sasl_ssl_addr = broker.listener("SASL_SSL").to_string();

    let scram_256 = properties(
        dir.path(),
        "scram-256.properties",
        &sasl_ssl(&certs, "SCRAM-SHA-256", SCRAM_256),
    );
    every_tool(&sasl_ssl_addr, &scram_256, "sha256");
    let scram_512 = properties(
        dir.path(),
        "scram-512.properties",
        &sasl_ssl(&certs, "SCRAM-SHA-512", SCRAM_512),
    );
    every_tool(&sasl_ssl_addr, &scram_512, "sha512");

    let plain = properties(
        dir.path(),
        "plain.properties",
        &[
            "security.protocol=SASL_PLAINTEXT".into(),
            "sasl.mechanism=PLAIN".into(),
            jaas(PLAIN_MODULE, PLAIN),
        ],
    );
    every_tool(
        &broker.listener("SASL_PLAINTEXT").to_string(),
        &plain,
        "plain",
    );

    // The other client commands take the same file.
    let records = dir.path().join("delete.json");
    std::fs::write(
        &records,
        r#"{"partitions":[{"topic":"t-sha512","partition":0,"offset":0}],"version":1}"#,
    )
    .unwrap();
    let out = ok(
        tool(
            "records",
            &sasl_ssl_addr,
            &scram_512,
            &["--delete", "--offset-json-file", records.to_str().unwrap()],
        ),
        "records --delete",
    );
    assert!(
        out.contains("partition: t-sha512-0\tlow_watermark: 0"),
        "{out}"
    );
    let out = ok(
        tool(
            "configs",
            &sasl_ssl_addr,
            &scram_512,
            &[
                "--describe",
                "--entity-type",
                "topics",
                "--entity-name",
                "t-sha512",
            ],
        ),
        "configs --describe",
    );
    assert!(out.contains("configs for topic t-sha512"), "{out}");
    let out = ok(
        tool("log-dirs", &sasl_ssl_addr, &scram_512, &["--describe"]),
        "log-dirs --describe",
    );
    assert!(out.contains("t-sha512"), "{out}");
    let out = ok(
        tool("transactions", &sasl_ssl_addr, &scram_512, &["list"]),
        "transactions list",
    );
    assert!(out.starts_with("TransactionalId"), "{out}");
}

#[test]
fn mutual_tls_from_a_keystore_file_or_inline_pem_serves_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(dir.path(), &certs);
    let ssl_addr = broker.listener("SSL").to_string();
    let key = std::fs::read_to_string(&certs.client_key).unwrap();
    let chain = std::fs::read_to_string(&certs.client_cert).unwrap();

    // Key and certificate chain in one PEM file, as ssl.keystore.location holds them.
    let keystore = dir.path().join("client-keystore.pem");
    std::fs::write(&keystore, format!("{key}{chain}")).unwrap();
    let from_file = properties(
        dir.path(),
        "mtls-file.properties",
        &[
            "security.protocol=SSL".into(),
            "ssl.truststore.type=PEM".into(),
            format!("ssl.truststore.location={}", certs.ca.display()),
            "ssl.keystore.type=PEM".into(),
            format!("ssl.keystore.location={}", keystore.display()),
        ],
    );
    every_tool(&ssl_addr, &from_file, "mtls-file");

    // Inline PEM: Java properties continue a value over lines with a trailing backslash.
    let inline = |pem: &str| pem.trim_end().replace('\n', "\\n\\\n");
    let ca = std::fs::read_to_string(&certs.ca).unwrap();
    let inline_config = properties(
        dir.path(),
        "mtls-inline.properties",
        &[
            "security.protocol=SSL".into(),
            "ssl.truststore.type=PEM".into(),
            format!("ssl.truststore.certificates={}", inline(&ca)),
            "ssl.keystore.type=PEM".into(),
            format!("ssl.keystore.key={}", inline(&key)),
            format!("ssl.keystore.certificate.chain={}", inline(&chain)),
        ],
    );
    // Only User:app (the certificate's CN, mapped) is a super user: the ACL-guarded calls
    // above prove the broker took the principal from the client certificate.
    every_tool(&ssl_addr, &inline_config, "mtls-inline");

    // Without a client certificate the broker refuses the handshake: an error, no retries.
    let no_cert = properties(
        dir.path(),
        "no-cert.properties",
        &[
            "security.protocol=SSL".into(),
            "ssl.truststore.type=PEM".into(),
            format!("ssl.truststore.location={}", certs.ca.display()),
        ],
    );
    let run = tool("topics", &ssl_addr, &no_cert, &["--list"]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert!(
        run.out
            .contains("Error while executing topic command : SSL handshake failed"),
        "{}",
        run.said()
    );
    assert!(run.took < Duration::from_secs(20), "took {:?}", run.took);
}

#[test]
fn a_wrong_password_fails_with_kafkas_message_and_exit_code_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(dir.path(), &certs);
    let sasl_ssl_addr = broker.listener("SASL_SSL").to_string();
    for (mechanism, user) in [("SCRAM-SHA-256", "alice"), ("SCRAM-SHA-512", "bob")] {
        let config = properties(
            dir.path(),
            "wrong.properties",
            &sasl_ssl(&certs, mechanism, (user, "not-the-password-xyzzy")),
        );
        // Kafka's ConsumerGroupCommand prints its error and still exits 0; the others exit 1.
        for (name, args, code) in [
            ("topics", &["--list"][..], 1),
            ("groups", &["--list"][..], 0),
            ("acls", &["--list"][..], 1),
            ("users", &["--describe", "--entity-type", "users"][..], 1),
        ] {
            let run = tool(name, &sasl_ssl_addr, &config, args);
            let said = run.said();
            assert_eq!(run.code, code, "{name}: {said}");
            assert!(
                said.contains(&format!(
                    "Authentication failed during authentication due to invalid credentials \
                     with SASL mechanism {mechanism}"
                )),
                "{name}: {said}"
            );
            assert!(
                !said.contains("xyzzy"),
                "{name} printed the password: {said}"
            );
            assert!(
                run.took < Duration::from_secs(20),
                "{name} took {:?}",
                run.took
            );
        }
    }
    // PLAIN's refusal, and a mechanism the listener does not enable, in Kafka's words.
    let plain = properties(
        dir.path(),
        "wrong-plain.properties",
        &[
            "security.protocol=SASL_PLAINTEXT".into(),
            "sasl.mechanism=PLAIN".into(),
            jaas(PLAIN_MODULE, ("carol", "xyzzy")),
        ],
    );
    let run = tool(
        "topics",
        &broker.listener("SASL_PLAINTEXT").to_string(),
        &plain,
        &["--list"],
    );
    assert_eq!(run.code, 1);
    let said = run.said();
    assert!(
        said.contains("Authentication failed: Invalid username or password")
            && !said.contains("xyzzy"),
        "{said}"
    );
}

#[test]
fn untrusted_or_misnamed_server_certificates_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certs::make(dir.path());
    let broker = secure_broker(dir.path(), &certs);
    let sasl_ssl_addr = broker.listener("SASL_SSL").to_string();

    // A CA that did not sign the broker's certificate: refused, with or without hostname
    // verification.
    let other_dir = dir.path().join("other");
    std::fs::create_dir(&other_dir).unwrap();
    let other = Certs::make(&other_dir);
    for verify in ["https", ""] {
        let mut lines = sasl_ssl(&other, "SCRAM-SHA-256", SCRAM_256);
        lines.push(format!("ssl.endpoint.identification.algorithm={verify}"));
        let config = properties(dir.path(), "untrusted.properties", &lines);
        let run = tool("topics", &sasl_ssl_addr, &config, &["--list"]);
        assert_eq!(run.code, 1, "{}", run.said());
        assert!(
            run.said().contains("SSL handshake failed"),
            "{}",
            run.said()
        );
        assert!(run.took < Duration::from_secs(20), "took {:?}", run.took);
    }

    // A trusted certificate that names another host: refused unless hostname verification
    // is turned off, as ssl.endpoint.identification.algorithm= does in Kafka.
    let misnamed_dir = dir.path().join("misnamed");
    std::fs::create_dir(&misnamed_dir).unwrap();
    let misnamed = Certs::make_for(&misnamed_dir, "DNS:elsewhere.example");
    let other_broker = secure_broker(&misnamed_dir, &misnamed);
    let addr = other_broker.listener("SASL_SSL").to_string();
    let base = sasl_ssl(&misnamed, "SCRAM-SHA-256", SCRAM_256);
    let config = properties(dir.path(), "misnamed.properties", &base);
    let run = tool("topics", &addr, &config, &["--list"]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert!(
        run.said().contains("SSL handshake failed"),
        "{}",
        run.said()
    );
    let mut lines = base.clone();
    lines.push("ssl.endpoint.identification.algorithm=".into());
    let config = properties(dir.path(), "unverified.properties", &lines);
    ok(
        tool("topics", &addr, &config, &["--list"]),
        "topics --list without hostname verification",
    );
}

#[test]
fn unusable_security_settings_are_refused_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens here: each error must come from the settings alone.
    let addr = "127.0.0.1:1";
    for (lines, expected) in [
        (
            vec![
                "security.protocol=SASL_SSL".to_string(),
                "sasl.mechanism=GSSAPI".into(),
            ],
            "sasl.mechanism GSSAPI is not supported",
        ),
        (
            vec![
                "security.protocol=SASL_PLAINTEXT".to_string(),
                "sasl.mechanism=SCRAM-SHA-256".into(),
                format!(
                    "sasl.jaas.config={SCRAM_MODULE} required username=\"a\" password=\"xyzzy\""
                ),
            ],
            "expected ';'",
        ),
        (
            vec![
                "security.protocol=SSL".to_string(),
                "ssl.truststore.location=/etc/hosts".into(),
            ],
            "ssl.truststore.type=JKS is not supported",
        ),
    ] {
        let config = properties(dir.path(), "bad.properties", &lines);
        let run = tool("topics", addr, &config, &["--list"]);
        assert_eq!(run.code, 1, "{}", run.said());
        assert!(run.said().contains(expected), "{expected}: {}", run.said());
        assert!(!run.said().contains("xyzzy"), "{}", run.said());
    }
}
