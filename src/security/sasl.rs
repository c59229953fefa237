//! One connection's SASL exchange on a SASL listener, as Kafka's `SaslServerAuthenticator`
//! runs it.
//!
//! ```text
//!  Handshake ── ApiVersions ──────────────> (answered as always)
//!      │ SaslHandshake(m): m enabled? ──no─> UNSUPPORTED_SASL_MECHANISM + enabled list, close
//!      ▼ yes (v0: raw tokens follow; v1: SaslAuthenticate requests)
//!  Authenticate ── PLAIN token ───────────> Complete | SASL_AUTHENTICATION_FAILED
//!      │ SCRAM client-first ─> server-first
//!      ▼
//!  ScramFinal ── client-final ───────────> server-final, Complete | SASL_AUTHENTICATION_FAILED
//! ```
//!
//! Anything else before completion is the connection layer's to refuse (ILLEGAL_SASL_STATE).
//! This type does no IO; the connection writes what it returns.

use std::sync::Arc;
use std::time::Duration;

use super::credentials::Credentials;
use super::principal::Principal;
use super::scram::{ScramMechanism, ScramServer};

/// Kafka's `sasl.server.max.receive.size` default: the largest frame read before a connection
/// has authenticated.
pub const MAX_RECEIVE_BYTES: usize = 524_288;

/// A SASL mechanism Cohort serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SaslMechanism {
    /// RFC 4616.
    Plain,
    /// RFC 5802 / 7677.
    Scram(ScramMechanism),
}

impl SaslMechanism {
    /// The mechanism's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::Scram(s) => s.name(),
        }
    }

    /// By name (exact, as Kafka compares them).
    pub fn from_name(name: &str) -> Option<SaslMechanism> {
        match name {
            "PLAIN" => Some(SaslMechanism::Plain),
            other => ScramMechanism::from_name(other).map(SaslMechanism::Scram),
        }
    }
}

/// What SASL listeners accept.
#[derive(Debug)]
pub struct SaslConfig {
    /// `--sasl-enabled-mechanisms`, in the order given (the handshake answer lists them so).
    pub enabled: Vec<SaslMechanism>,
    /// Who may authenticate.
    pub credentials: Arc<Credentials>,
    /// `--connection-failed-authentication-delay-ms`.
    pub failed_delay: Duration,
    /// `--authentication-timeout-ms`: from accept to authenticated (TLS handshake included).
    pub timeout: Duration,
    /// `--connections-max-reauth-ms` (KIP-368): how long a session lasts; zero: for ever.
    pub max_reauth: Duration,
}

/// Parses `--sasl-enabled-mechanisms`: every name known, none twice, at least one.
pub fn parse_mechanisms(s: &str) -> Option<Vec<SaslMechanism>> {
    let mut out = Vec::new();
    for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let m = SaslMechanism::from_name(name)?;
        if out.contains(&m) {
            return None;
        }
        out.push(m);
    }
    (!out.is_empty()).then_some(out)
}

/// Why authentication failed: one line for the log, one message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslFailure {
    /// For the log (never a password; the user name may appear).
    pub reason: String,
    /// For the client, as Kafka words it.
    pub client_message: String,
}

/// What a token leads to.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Send this and wait for the next token.
    Challenge(Vec<u8>),
    /// Authenticated: send this last token.
    Complete {
        /// Who the client is.
        principal: Principal,
        /// The final server token (empty for PLAIN).
        response: Vec<u8>,
    },
    /// Refuse, wait the failed-authentication delay, close.
    Failed(SaslFailure),
}

#[derive(Debug)]
enum State {
    Handshake,
    Authenticate { mechanism: SaslMechanism },
    ScramFinal(Box<ScramServer>),
    Done,
}

/// One connection's exchange.
#[derive(Debug)]
pub struct SaslSession {
    state: State,
    /// SaslHandshake v0: the tokens that follow are bare size-prefixed frames.
    raw: bool,
    /// The mechanism the handshake chose (a re-authentication must keep it).
    mechanism: Option<SaslMechanism>,
}

impl Default for SaslSession {
    fn default() -> Self {
        SaslSession {
            state: State::Handshake,
            raw: false,
            mechanism: None,
        }
    }
}

fn failed(mechanism: SaslMechanism, reason: impl Into<String>) -> Step {
    let client_message = match mechanism {
        SaslMechanism::Plain => "Authentication failed: Invalid username or password".to_owned(),
        SaslMechanism::Scram(m) => format!(
            "Authentication failed during authentication due to invalid credentials with SASL \
             mechanism {}",
            m.name()
        ),
    };
    Step::Failed(SaslFailure {
        reason: reason.into(),
        client_message,
    })
}

impl SaslSession {
    /// Takes a SaslHandshake at `version`: true if `mechanism` is enabled (the exchange
    /// starts), false if not (the caller answers UNSUPPORTED_SASL_MECHANISM and closes).
    /// Only the first handshake starts an exchange: the caller checks
    /// [`SaslSession::awaiting_handshake`] first.
    pub fn handshake(&mut self, config: &SaslConfig, mechanism: &str, version: i16) -> bool {
        match SaslMechanism::from_name(mechanism).filter(|m| config.enabled.contains(m)) {
            Some(mechanism) => {
                self.state = State::Authenticate { mechanism };
                self.raw = version == 0;
                self.mechanism = Some(mechanism);
                true
            }
            None => false,
        }
    }

    /// The mechanism the handshake chose.
    pub fn mechanism(&self) -> Option<SaslMechanism> {
        self.mechanism
    }

    /// Whether the next request must be SaslHandshake (or ApiVersions).
    pub fn awaiting_handshake(&self) -> bool {
        matches!(self.state, State::Handshake)
    }

    /// Whether the next frame is a bare token (after a v0 handshake).
    pub fn expects_raw_token(&self) -> bool {
        self.raw
            && matches!(
                self.state,
                State::Authenticate { .. } | State::ScramFinal(_)
            )
    }

    /// Takes one token. `nonce` makes a fresh server nonce (SCRAM's first step only).
    pub fn step(
        &mut self,
        config: &SaslConfig,
        token: &[u8],
        nonce: impl FnOnce() -> String,
    ) -> Step {
        let state = std::mem::replace(&mut self.state, State::Done);
        match state {
            State::Authenticate {
                mechanism: SaslMechanism::Plain,
            } => plain(config, token),
            State::Authenticate {
                mechanism: SaslMechanism::Scram(m),
            } => {
                let started = ScramServer::start(
                    m,
                    token,
                    |user| config.credentials.scram(m, user),
                    &nonce(),
                );
                match started {
                    Ok((server, first)) => {
                        self.state = State::ScramFinal(Box::new(server));
                        Step::Challenge(first)
                    }
                    Err(e) => failed(SaslMechanism::Scram(m), e.to_string()),
                }
            }
            State::ScramFinal(server) => {
                let mechanism = SaslMechanism::Scram(server.mechanism());
                match server.finish(token) {
                    Ok((user, last)) => Step::Complete {
                        principal: Principal::user(user),
                        response: last,
                    },
                    Err(e) => failed(mechanism, e.to_string()),
                }
            }
            State::Handshake | State::Done => Step::Failed(SaslFailure {
                reason: "a token outside an exchange".into(),
                client_message: "Unexpected SASL token".into(),
            }),
        }
    }
}

/// RFC 4616: `[authzid] NUL authcid NUL passwd`, as Kafka's `PlainSaslServer` checks it.
fn plain(config: &SaslConfig, token: &[u8]) -> Step {
    let parts: Vec<&[u8]> = token.split(|b| *b == 0).collect();
    let [authzid, user, password] = parts[..] else {
        return failed(
            SaslMechanism::Plain,
            format!("PLAIN token with {} fields, not 3", parts.len()),
        );
    };
    let Ok(user) = std::str::from_utf8(user) else {
        return failed(SaslMechanism::Plain, "PLAIN user name is not UTF-8");
    };
    if user.is_empty() || password.is_empty() {
        return failed(SaslMechanism::Plain, "PLAIN user name or password empty");
    }
    if !authzid.is_empty() && authzid != user.as_bytes() {
        return Step::Failed(SaslFailure {
            reason: format!("PLAIN authorization id differs from user {user:?}"),
            client_message: "Authentication failed: Client requested an authorization id that \
                             is different from username"
                .into(),
        });
    }
    if config.credentials.plain_matches(user, password) {
        Step::Complete {
            principal: Principal::user(user),
            response: Vec::new(),
        }
    } else {
        failed(
            SaslMechanism::Plain,
            format!("wrong password or unknown user {user:?}"),
        )
    }
}

/// A fresh server nonce: 32 characters of `[0-9a-z]` from the system's random source, the
/// alphabet Kafka's `ScramFormatter.secureRandomString` uses (older librdkafka releases fail
/// the exchange on some base64 characters in a nonce).
pub fn server_nonce() -> String {
    use ring::rand::SecureRandom;
    const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut bytes = [0u8; 32];
    // A failing system RNG leaves zeros; the client nonce still makes the exchange unique,
    // and ring's SystemRandom only fails where getrandom is unavailable.
    let _ = ring::rand::SystemRandom::new().fill(&mut bytes);
    bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::security::scram::ScramCredential;

    /// The credentials a replicated table would hold after the flags' bootstrap.
    struct Table(Vec<(String, ScramCredential)>);

    impl super::super::credentials::ScramLookup for Table {
        fn scram(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
            self.0
                .iter()
                .find(|(n, c)| n == user && c.mechanism == mechanism)
                .map(|(_, c)| c.clone())
        }
    }

    fn config(enabled: &str) -> SaslConfig {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("users");
        std::fs::write(&file, "alice:secret\n").unwrap();
        let credentials =
            Credentials::load(&["bob:SCRAM-SHA-256:builder".into()], 4096, Some(&file)).unwrap();
        credentials.install_scram(Arc::new(Table(credentials.scram_bootstrap().to_vec())));
        SaslConfig {
            enabled: parse_mechanisms(enabled).unwrap(),
            credentials: Arc::new(credentials),
            failed_delay: Duration::from_millis(100),
            timeout: Duration::from_secs(10),
            max_reauth: Duration::ZERO,
        }
    }

    #[test]
    fn mechanisms_parse_in_order_once_each() {
        assert_eq!(
            parse_mechanisms("SCRAM-SHA-512, PLAIN"),
            Some(vec![
                SaslMechanism::Scram(ScramMechanism::Sha512),
                SaslMechanism::Plain
            ])
        );
        assert_eq!(parse_mechanisms("PLAIN,PLAIN"), None);
        assert_eq!(parse_mechanisms("GSSAPI"), None);
        assert_eq!(parse_mechanisms(""), None);
    }

    #[test]
    fn plain_checks_the_password_and_the_authzid() {
        let c = config("PLAIN");
        let run = |token: &[u8]| {
            let mut s = SaslSession::default();
            assert!(s.handshake(&c, "PLAIN", 1));
            s.step(&c, token, String::new)
        };
        assert!(
            matches!(run(b"\0alice\0secret"), Step::Complete { principal, .. } if principal.to_string() == "User:alice")
        );
        assert!(matches!(
            run(b"alice\0alice\0secret"),
            Step::Complete { .. }
        ));
        assert!(matches!(run(b"\0alice\0nope"), Step::Failed(_)));
        assert!(
            matches!(run(b"bob\0alice\0secret"), Step::Failed(f) if f.client_message.contains("authorization id"))
        );
        assert!(matches!(run(b"\0alice"), Step::Failed(_)));
        assert!(matches!(run(b"\0\0secret"), Step::Failed(_)));
    }

    #[test]
    fn scram_runs_two_steps_and_handshakes_honour_the_enabled_list() {
        let c = config("SCRAM-SHA-256");
        let mut s = SaslSession::default();
        assert!(!s.handshake(&c, "PLAIN", 1));
        assert!(s.awaiting_handshake());
        assert!(s.handshake(&c, "SCRAM-SHA-256", 0));
        assert!(s.expects_raw_token());
        let Step::Challenge(first) = s.step(&c, b"n,,n=bob,r=cn", || "sn".into()) else {
            panic!("no challenge");
        };
        let first = String::from_utf8(first).unwrap();
        let last = crate::security::scram::tests::client_final(
            ScramMechanism::Sha256,
            "builder",
            "n=bob,r=cn",
            &first,
        );
        match s.step(&c, last.as_bytes(), || unreachable!()) {
            Step::Complete {
                principal,
                response,
            } => {
                assert_eq!(principal.to_string(), "User:bob");
                assert!(response.starts_with(b"v="));
            }
            other => panic!("{other:?}"),
        }
        assert!(!s.expects_raw_token());
        assert!(matches!(s.step(&c, b"x", String::new), Step::Failed(_)));
    }
}
