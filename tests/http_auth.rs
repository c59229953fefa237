//! `--http-basic-auth FILE` over real TCP against a `cohort serve` process: every HTTP path but
//! the probes wants `Authorization: Basic`, a refusal is a bare `401` with the `Basic`
//! challenge, and neither the pages nor the log ever show a credential (decision 0151).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine;
use common::Cohort;

/// The HTTP users (in the `--http-basic-auth` file).
const SCRAPER: (&str, &str) = ("prom", "Scrape-Pass-7f3:x");
const OPERATOR: (&str, &str) = ("ops", "Ops-Pass-91c");
/// The other secrets the broker is given: a PLAIN user, a SCRAM user.
const PLAIN_PASSWORD: &str = "Plain-Pass-55d";
const SCRAM_PASSWORD: &str = "Scram-Pass-2e1";

/// Every page the side door has, probes aside.
const GUARDED: [&str; 5] = ["/metrics", "/console", "/console.json", "/", "/nowhere"];

/// One response: status line, head (lower-cased header names kept as sent), body.
struct Response {
    status: String,
    head: String,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

fn basic(user: &str, password: &str) -> String {
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {token}")
}

fn get(addr: SocketAddr, path: &str, authorization: Option<&str>) -> Response {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = authorization
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    write!(s, "GET {path} HTTP/1.1\r\nhost: test\r\n{auth}\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    Response {
        status: head.lines().next().unwrap_or("").to_string(),
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// A self-signed certificate and its key (the key file's content must never be shown).
fn tls_files(dir: &Path) -> (String, String) {
    common::run_ok(
        Command::new("openssl").current_dir(dir).args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ]),
        Duration::from_secs(60),
    );
    let path = |f: &str| dir.join(f).to_str().unwrap().to_owned();
    (path("server.pem"), path("server.key"))
}

/// Everything secret the broker was given, and its forms a page or a log line could carry.
fn secrets(key_file: &str) -> Vec<String> {
    let mut out: Vec<String> = [SCRAPER.1, OPERATOR.1, PLAIN_PASSWORD, SCRAM_PASSWORD]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (u, p) in [SCRAPER, OPERATOR] {
        out.push(basic(u, p)["Basic ".len()..].to_owned());
    }
    // The key's base64 lines (the armour lines are public).
    let key = std::fs::read_to_string(key_file).unwrap();
    out.extend(
        key.lines()
            .filter(|l| !l.starts_with("-----") && l.len() > 16)
            .map(str::to_owned),
    );
    assert!(out.len() > 6, "the key file has a body: {key}");
    out
}

fn assert_shows_none(what: &str, text: &str, secrets: &[String]) {
    for s in secrets {
        assert!(!text.contains(s.as_str()), "{what} shows a secret ({s:?})");
    }
}

#[test]
fn only_the_files_users_get_past_the_probes_and_no_credential_is_ever_shown() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let http_users = dir.path().join("http-users");
    std::fs::write(
        &http_users,
        format!(
            "# scrapers and operators\n{}:{}\n{}:{}\n",
            SCRAPER.0, SCRAPER.1, OPERATOR.0, OPERATOR.1
        ),
    )
    .unwrap();
    let plain_users = dir.path().join("plain-users");
    std::fs::write(&plain_users, format!("alice:{PLAIN_PASSWORD}\n")).unwrap();
    let (cert, key) = tls_files(dir.path());
    let scram_user = format!("bob:SCRAM-SHA-256:{SCRAM_PASSWORD}");
    let broker = Cohort::start_logged(
        &data,
        &[
            "--listeners",
            "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
            "--sasl-enabled-mechanisms",
            "PLAIN,SCRAM-SHA-256",
            "--sasl-plain-users",
            plain_users.to_str().unwrap(),
            "--scram-user",
            &scram_user,
            "--ssl-cert",
            &cert,
            "--ssl-key",
            &key,
            "--http-basic-auth",
            http_users.to_str().unwrap(),
        ],
        // Every module of the broker at debug: not one line may carry a credential.
        "debug",
    );
    let secrets = secrets(&key);
    let http = broker.http;

    // The probes: open, as orchestrators probe them without credentials.
    assert_eq!(get(http, "/healthz", None).status, "HTTP/1.1 200 OK");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = get(http, "/readyz", None);
        if ready.status == "HTTP/1.1 200 OK" {
            break;
        }
        assert_eq!(ready.status, "HTTP/1.1 503 Service Unavailable");
        assert!(Instant::now() < deadline, "never ready: {}", ready.body);
        std::thread::sleep(Duration::from_millis(100));
    }

    let wrong = [
        None,
        Some(basic(SCRAPER.0, "Scrape-Pass-7f3")),
        Some(basic(SCRAPER.0, OPERATOR.1)),
        Some(basic("nobody", SCRAPER.1)),
        Some(basic("alice", PLAIN_PASSWORD)),
        Some(format!("Bearer {}", &basic(SCRAPER.0, SCRAPER.1)[6..])),
    ];
    for path in GUARDED {
        for authorization in &wrong {
            let r = get(http, path, authorization.as_deref());
            assert_eq!(
                r.status, "HTTP/1.1 401 Unauthorized",
                "{path} with {authorization:?}"
            );
            assert_eq!(
                r.header("www-authenticate"),
                Some("Basic realm=\"cohort\""),
                "{}",
                r.head
            );
            assert_eq!(r.body, "unauthorized\n");
        }
    }

    for (user, password) in [SCRAPER, OPERATOR] {
        let authorization = basic(user, password);
        let metrics = get(http, "/metrics", Some(&authorization));
        assert_eq!(metrics.status, "HTTP/1.1 200 OK", "{}", metrics.body);
        assert!(metrics.body.contains("cohort_ready"), "{}", metrics.body);
        let console = get(http, "/console", Some(&authorization));
        assert_eq!(console.status, "HTTP/1.1 200 OK");
        assert!(console.body.contains("<html"), "{}", console.body);
        for path in GUARDED {
            let r = get(http, path, Some(&authorization));
            assert_ne!(r.status, "HTTP/1.1 401 Unauthorized", "{path}");
            assert_shows_none(path, &r.body, &secrets);
        }
    }
    assert_eq!(
        get(http, "/nowhere", Some(&basic(SCRAPER.0, SCRAPER.1))).status,
        "HTTP/1.1 404 Not Found"
    );

    let log = broker.log();
    assert!(log.contains("basic auth required"), "{log}");
    assert!(
        log.lines().any(|l| l.contains("DEBUG")),
        "debug logging is on"
    );
    assert_shows_none("the broker's log", &log, &secrets);
}

#[test]
fn a_bad_basic_auth_file_stops_start_up_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "# nobody\n").unwrap();
    let malformed = dir.path().join("malformed");
    std::fs::write(&malformed, "prom:fine\nTopSecret-no-name-sep\n").unwrap();
    let cases = [
        (missing.as_path(), "cannot be read"),
        (dir.path(), "cannot be read"),
        (empty.as_path(), "no NAME:PASSWORD line"),
        (malformed.as_path(), "line 2 is not NAME:PASSWORD"),
    ];
    for (file, why) in cases {
        let data = dir.path().join("data");
        let out = common::run(
            Command::new(env!("CARGO_BIN_EXE_cohort")).args([
                "serve",
                "--data-dir",
                data.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
                "--http",
                "127.0.0.1:0",
                "--http-basic-auth",
                file.to_str().unwrap(),
            ]),
            Duration::from_secs(30),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file:?}: {stderr}");
        assert!(
            stderr.contains("--http-basic-auth must be a readable file of NAME:PASSWORD lines"),
            "{stderr}"
        );
        assert!(stderr.contains(why), "{file:?}: {stderr}");
        assert!(!stderr.contains("TopSecret"), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing started");
        assert!(!data.exists(), "nothing created");
    }
}
