//! KIP-368 on the broker: with `--connections-max-reauth-ms` set, a SASL connection's session
//! lasts that long; the client re-authenticates on the open connection (SaslHandshake then
//! SaslAuthenticate) as the same principal, or its first request after the session ended
//! closes the connection. The rules are those of Kafka's `SocketServer` and `KafkaChannel`.
//!
//! ```text
//!  authenticated, lifetime L > 0 ─> session ends at (end of authentication + L)
//!  each request after that:
//!    SaslHandshake, >= 1 s since the last re-authentication began ─> re-authenticate
//!    anything after the session ended ──────────────────────────────> close, one log line
//!    otherwise ─────────────────────────────────────────────────────> serve (a SaslHandshake
//!                                                                      gets ILLEGAL_SASL_STATE)
//!  a re-authentication must keep the mechanism (else closed at its SaslAuthenticate, without
//!  an answer) and the principal (else SASL_AUTHENTICATION_FAILED, closed); success starts a
//!  new session
//! ```
//!
//! Time is an argument: this module reads no clock.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_protocol::messages::ApiKey;

use crate::security::principal::Principal;
use crate::security::sasl::SaslMechanism;

/// Kafka's `KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS`: a connection starts at most
/// one re-authentication a second.
pub const REAUTH_INTERVAL_MIN: Duration = Duration::from_secs(1);

/// An authenticated SASL connection's session, when sessions expire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    ends_at: Instant,
    mechanism: SaslMechanism,
    last_reauth_start: Option<Instant>,
}

/// What a request on an authenticated connection leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Serve it.
    Serve,
    /// It is a SaslHandshake that begins a re-authentication.
    Reauthenticate,
    /// The session ended: close the connection.
    Expired,
}

impl Session {
    /// A session authenticated with `mechanism` at `now`, lasting `lifetime`; `previous` is the
    /// session it renews (its re-authentication pace carries over).
    pub fn start(
        now: Instant,
        lifetime: Duration,
        mechanism: SaslMechanism,
        previous: Option<&Session>,
    ) -> Session {
        Session {
            ends_at: now + lifetime,
            mechanism,
            last_reauth_start: previous.and_then(|p| p.last_reauth_start),
        }
    }

    /// The mechanism a re-authentication must use.
    pub fn mechanism(&self) -> SaslMechanism {
        self.mechanism
    }

    /// Judges a request with `api_key` arriving at `now`.
    pub fn on_request(&mut self, api_key: ApiKey, now: Instant) -> Verdict {
        let paced = self
            .last_reauth_start
            .is_none_or(|t| now.saturating_duration_since(t) >= REAUTH_INTERVAL_MIN);
        if api_key == ApiKey::SaslHandshake && paced {
            self.last_reauth_start = Some(now);
            return Verdict::Reauthenticate;
        }
        if now > self.ends_at {
            Verdict::Expired
        } else {
            Verdict::Serve
        }
    }
}

/// A re-authentication under way: what it must match.
#[derive(Debug)]
pub struct Reauth {
    /// Who the connection was; the new exchange must name the same principal.
    pub previous: Arc<Principal>,
    /// The session being renewed.
    pub session: Session,
    /// Set when the handshake named another mechanism: Kafka's REAUTH_BAD_MECHANISM, the
    /// reason the next token closes the connection.
    pub bad_mechanism: Option<String>,
}

impl Reauth {
    /// Kafka's message for a principal change (`TYPE.NAME` on both sides).
    pub fn principal_changed(&self, now_principal: &Principal) -> Option<String> {
        (*self.previous != *now_principal).then(|| {
            format!(
                "Cannot change principals during re-authentication from {}: {}",
                dotted(&self.previous),
                dotted(now_principal)
            )
        })
    }
}

fn dotted(p: &Principal) -> String {
    p.to_string().replacen(':', ".", 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::scram::ScramMechanism;

    const PLAIN: SaslMechanism = SaslMechanism::Plain;

    #[test]
    fn requests_are_served_until_the_session_ends_then_refused() {
        let t0 = Instant::now();
        let mut s = Session::start(t0, Duration::from_millis(1000), PLAIN, None);
        assert_eq!(s.on_request(ApiKey::Metadata, t0), Verdict::Serve);
        assert_eq!(
            s.on_request(ApiKey::Metadata, t0 + Duration::from_millis(1000)),
            Verdict::Serve
        );
        assert_eq!(
            s.on_request(ApiKey::Produce, t0 + Duration::from_millis(1001)),
            Verdict::Expired
        );
    }

    #[test]
    fn a_handshake_reauthenticates_at_most_once_a_second_even_after_expiry() {
        let t0 = Instant::now();
        let mut s = Session::start(t0, Duration::from_millis(500), PLAIN, None);
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(
            s.on_request(ApiKey::SaslHandshake, at(100)),
            Verdict::Reauthenticate
        );
        // Too soon after the last one: served as any handshake on a done connection.
        assert_eq!(s.on_request(ApiKey::SaslHandshake, at(400)), Verdict::Serve);
        // Too soon and past the end: closed.
        assert_eq!(
            s.on_request(ApiKey::SaslHandshake, at(900)),
            Verdict::Expired
        );
        assert_eq!(
            s.on_request(ApiKey::SaslHandshake, at(1100)),
            Verdict::Reauthenticate
        );
        let renewed = Session::start(at(1150), Duration::from_millis(500), PLAIN, Some(&s));
        let mut renewed_copy = renewed.clone();
        assert_eq!(
            renewed_copy.on_request(ApiKey::SaslHandshake, at(1200)),
            Verdict::Serve
        );
        assert_eq!(renewed.mechanism(), PLAIN);
    }

    #[test]
    fn principal_changes_are_named_as_kafka_names_them() {
        let r = Reauth {
            previous: Arc::new(Principal::user("alice")),
            session: Session::start(
                Instant::now(),
                Duration::from_secs(1),
                SaslMechanism::Scram(ScramMechanism::Sha256),
                None,
            ),
            bad_mechanism: None,
        };
        assert_eq!(r.principal_changed(&Principal::user("alice")), None);
        assert_eq!(
            r.principal_changed(&Principal::user("bob")).as_deref(),
            Some("Cannot change principals during re-authentication from User.alice: User.bob")
        );
    }
}
