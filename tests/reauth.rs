//! KIP-368 re-authentication (`--connections-max-reauth-ms`): librdkafka (confluent-kafka)
//! re-authenticates its open connections and keeps producing and consuming across several
//! session lifetimes; raw clients check the broker's side of the rules — the session lifetime
//! in SaslAuthenticate, the close of an expired session, a renewal as the same principal, and
//! the refusal of another principal or another mechanism.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use common::raw::RawClient;
use common::Cohort;
use kafka_protocol::messages::{
    ApiKey, MetadataRequest, RequestKind, ResponseKind, SaslAuthenticateRequest,
    SaslHandshakeRequest,
};
use kafka_protocol::protocol::StrBytes;

const SASL_AUTHENTICATION_FAILED: i16 = 58;
const ILLEGAL_SASL_STATE: i16 = 34;

/// SASL_PLAINTEXT with PLAIN users carol and dave and SCRAM user alice.
fn broker(dir: &Path, extra: &[&str]) -> Cohort {
    let users = dir.join("plain-users");
    std::fs::write(&users, "carol:carol-secret\ndave:dave-secret\n").unwrap();
    let mut flags = vec![
        "--listeners",
        "SASL_PLAINTEXT://127.0.0.1:0",
        "--sasl-enabled-mechanisms",
        "PLAIN,SCRAM-SHA-256",
        "--sasl-plain-users",
        users.to_str().unwrap(),
        "--scram-user",
        "alice:SCRAM-SHA-256:alice-secret",
    ];
    flags.extend_from_slice(extra);
    Cohort::start_logged(&dir.join("data"), &flags, "info,cohort::server=debug")
}

fn handshake(c: &mut RawClient, mechanism: &'static str) -> i16 {
    let req = SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism));
    match c.call(ApiKey::SaslHandshake, 1, RequestKind::SaslHandshake(req)) {
        ResponseKind::SaslHandshake(r) => r.error_code,
        other => panic!("{other:?}"),
    }
}

/// SaslAuthenticate v2 with `token`: (error code, message, session lifetime).
fn authenticate(c: &mut RawClient, token: &[u8]) -> (i16, Option<String>, i64) {
    let req = SaslAuthenticateRequest::default().with_auth_bytes(token.to_vec().into());
    match c.call(
        ApiKey::SaslAuthenticate,
        2,
        RequestKind::SaslAuthenticate(req),
    ) {
        ResponseKind::SaslAuthenticate(r) => (
            r.error_code,
            r.error_message.map(|m| m.to_string()),
            r.session_lifetime_ms,
        ),
        other => panic!("{other:?}"),
    }
}

fn plain(user: &str, password: &str) -> Vec<u8> {
    format!("\0{user}\0{password}").into_bytes()
}

/// A PLAIN login on a fresh connection; returns it and the session lifetime the broker gave.
fn login(addr: SocketAddr, user: &str, password: &str) -> (RawClient, i64) {
    let mut c = RawClient::connect(addr);
    assert_eq!(handshake(&mut c, "PLAIN"), 0);
    let (code, message, lifetime) = authenticate(&mut c, &plain(user, password));
    assert_eq!(code, 0, "{message:?}");
    (c, lifetime)
}

fn metadata_ok(c: &mut RawClient) -> bool {
    let (correlation, frame) = c.frame(
        ApiKey::Metadata,
        9,
        &RequestKind::Metadata(MetadataRequest::default().with_topics(Some(vec![]))),
    );
    use std::io::Write;
    if c.stream.write_all(&frame).is_err() {
        return false;
    }
    match c.read_frame() {
        None => false,
        Some(mut f) => {
            use kafka_protocol::messages::ResponseHeader;
            use kafka_protocol::protocol::Decodable;
            let header = ResponseHeader::decode(&mut f, 0).unwrap();
            assert_eq!(header.correlation_id, correlation);
            true
        }
    }
}

#[test]
fn raw_clients_get_the_session_lifetime_are_closed_when_it_ends_and_may_renew_it() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(dir.path(), &["--connections-max-reauth-ms", "2000"]);
    let addr = b.listener("SASL_PLAINTEXT");

    // The lifetime is announced; once it has passed, the next request closes the connection.
    let (mut expiring, lifetime) = login(addr, "carol", "carol-secret");
    assert_eq!(lifetime, 2000);
    assert!(metadata_ok(&mut expiring));
    std::thread::sleep(Duration::from_millis(2300));
    assert!(!metadata_ok(&mut expiring), "an expired session was served");

    // Renewed before the end as the same principal: served past the first session's end.
    let (mut renewing, _) = login(addr, "carol", "carol-secret");
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(handshake(&mut renewing, "PLAIN"), 0);
    let (code, message, lifetime) = authenticate(&mut renewing, &plain("carol", "carol-secret"));
    assert_eq!((code, lifetime), (0, 2000), "{message:?}");
    // A second handshake within a second of the last re-authentication is no re-authentication:
    // ILLEGAL_SASL_STATE, as on any authenticated connection.
    assert_eq!(handshake(&mut renewing, "PLAIN"), ILLEGAL_SASL_STATE);
    // Past the first session's end, within the renewed one.
    std::thread::sleep(Duration::from_millis(1000));
    assert!(metadata_ok(&mut renewing), "a renewed session was refused");

    // Another principal: SASL_AUTHENTICATION_FAILED in Kafka's words, then closed.
    let (mut switching, _) = login(addr, "carol", "carol-secret");
    assert_eq!(handshake(&mut switching, "PLAIN"), 0);
    let (code, message, _) = authenticate(&mut switching, &plain("dave", "dave-secret"));
    assert_eq!(code, SASL_AUTHENTICATION_FAILED);
    assert_eq!(
        message.as_deref(),
        Some("Cannot change principals during re-authentication from User.carol: User.dave")
    );
    assert!(switching.closed_by_broker());

    // Another mechanism: the handshake is answered, its first token closes the connection.
    let (mut other_mechanism, _) = login(addr, "carol", "carol-secret");
    assert_eq!(handshake(&mut other_mechanism, "SCRAM-SHA-256"), 0);
    let req = SaslAuthenticateRequest::default()
        .with_auth_bytes(b"n,,n=alice,r=rawclientnonce".to_vec().into());
    let (_, frame) = other_mechanism.frame(
        ApiKey::SaslAuthenticate,
        2,
        &RequestKind::SaslAuthenticate(req),
    );
    use std::io::Write;
    other_mechanism.stream.write_all(&frame).unwrap();
    assert!(other_mechanism.read_frame().is_none(), "answered");

    let log = b.log();
    assert!(
        log.contains("re-authenticated"),
        "no re-authentication in the log"
    );
    assert!(
        log.contains("--connections-max-reauth-ms"),
        "no log line for the expired session"
    );
}

#[test]
fn without_the_flag_sessions_do_not_expire_and_a_handshake_is_illegal() {
    let dir = tempfile::tempdir().unwrap();
    let b = broker(dir.path(), &[]);
    let (mut c, lifetime) = login(b.listener("SASL_PLAINTEXT"), "carol", "carol-secret");
    assert_eq!(lifetime, 0);
    assert_eq!(handshake(&mut c, "PLAIN"), ILLEGAL_SASL_STATE);
    assert!(metadata_ok(&mut c));
}

#[test]
fn librdkafka_reauthenticates_and_keeps_producing_and_consuming() {
    let dir = tempfile::tempdir().unwrap();
    // librdkafka re-authenticates at 90 % of the session and not while a request is in
    // flight: a 2 s session left it 200 ms, less than a long-poll Fetch can take on a loaded
    // machine (a connection was closed for it once). 5 s leaves 500 ms, five times the
    // client's fetch wait (reauth_client.py sets fetch.wait.max.ms=100).
    let b = broker(dir.path(), &["--connections-max-reauth-ms", "5000"]);
    let addr = b.listener("SASL_PLAINTEXT").to_string();
    for (mechanism, user, password) in [
        ("SCRAM-SHA-256", "alice", "alice-secret"),
        ("PLAIN", "carol", "carol-secret"),
    ] {
        let topic = format!("reauth-{}", mechanism.to_lowercase());
        let args = [
            addr.as_str(),
            &topic,
            &format!("{topic}-group"),
            "7",
            "-X",
            "security.protocol=SASL_PLAINTEXT",
            "-X",
            &format!("sasl.mechanism={mechanism}"),
            "-X",
            &format!("sasl.username={user}"),
            "-X",
            &format!("sasl.password={password}"),
        ];
        let out = common::python_script("reauth_client.py", &args, Duration::from_secs(120));
        let line = String::from_utf8_lossy(&out.stdout);
        let report: serde_json::Value = serde_json::from_str(line.trim())
            .unwrap_or_else(|e| panic!("{e}: {line}\n{}", String::from_utf8_lossy(&out.stderr)));
        let sent = report["sent"].as_u64().unwrap();
        assert!(sent > 10, "{report}");
        assert_eq!(report["acked"].as_u64(), Some(sent), "{report}");
        assert_eq!(report["consumed"].as_u64(), Some(sent), "{report}");
        assert_eq!(report["errors"], serde_json::json!([]), "{report}");
    }
    let log = b.log();
    let renewals = log.matches("re-authenticated").count();
    assert!(renewals >= 4, "{renewals} re-authentications:\n{log}");
    assert!(
        !log.contains("--connections-max-reauth-ms"),
        "a librdkafka connection outlived its session:\n{log}"
    );
}
