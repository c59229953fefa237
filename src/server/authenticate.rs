//! The SASL gate of a connection on a SASL listener: what each frame before authentication
//! leads to. Pure decisions over `security::sasl`; the connection does the writing, waiting
//! and closing.
//!
//! ```text
//!  ApiVersions ───────────────────────> Pass (answered as on any listener)
//!  SaslHandshake(m), first ───────────> mechanisms list; m not enabled: code 33, close after
//!                                        the failed-authentication delay
//!  SaslAuthenticate after a handshake ─> the mechanism's token; failure: code 58, delay, close
//!  anything else ─────────────────────> its error response with code 34 (or none), close
//!  (after a v0 handshake: bare size-prefixed tokens instead of SaslAuthenticate)
//!  re-authentication (KIP-368, `reauth`): the same gate, but another mechanism closes the
//!  connection at its first token and another principal fails (code 58) and closes
//! ```

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, RequestKind, ResponseKind, SaslAuthenticateResponse, SaslHandshakeResponse,
};
use kafka_protocol::protocol::StrBytes;
use protocol::request::Request;
use protocol::ErrorCode;

use super::reauth::Reauth;
use crate::handlers::sasl::refused_before_authentication;
use crate::security::principal::Principal;
use crate::security::sasl::{server_nonce, SaslConfig, SaslSession, Step};

/// What the connection does with a frame that arrived before authentication.
#[derive(Debug)]
pub enum Gate {
    /// Serve it as usual (ApiVersions).
    Pass(Box<Request>),
    /// Write `frame` (if any), then go on as `then` says.
    Answer {
        /// The encoded answer.
        frame: Option<Bytes>,
        /// What follows.
        then: After,
    },
}

/// What follows an answer.
#[derive(Debug)]
pub enum After {
    /// Read the next frame.
    Continue,
    /// The connection is `Principal` from now on.
    Authenticated(Principal),
    /// Wait `delay` before writing the answer, then close; `reason` is the one log line.
    Close {
        /// Kafka's failed-authentication delay, or zero.
        delay: Duration,
        /// Why, for the log.
        reason: String,
        /// For `cohort_authentications_total`.
        outcome: &'static str,
    },
}

fn encode(request: &Request, body: ResponseKind) -> Result<Bytes, protocol::EncodeError> {
    protocol::encode_response(
        request.correlation_id(),
        request.api_key,
        request.version(),
        &body,
    )
}

/// Decides what a decoded request before authentication (or during a re-authentication,
/// `reauth`) gets.
pub fn request(
    session: &mut SaslSession,
    config: &SaslConfig,
    mut reauth: Option<&mut Reauth>,
    request: Request,
) -> Result<Gate, protocol::EncodeError> {
    let version = request.version();
    match &request.body {
        RequestKind::ApiVersions(_) => Ok(Gate::Pass(Box::new(request))),
        RequestKind::SaslHandshake(h) if session.awaiting_handshake() => {
            let mechanism = h.mechanism.to_string();
            let enabled: Vec<StrBytes> = config
                .enabled
                .iter()
                .map(|m| StrBytes::from_static_str(m.name()))
                .collect();
            let accepted = session.handshake(config, &mechanism, version);
            if let Some(r) = reauth.as_deref_mut() {
                let before = r.session.mechanism();
                if accepted && session.mechanism() != Some(before) {
                    // Kafka answers the handshake, then closes at the next token.
                    r.bad_mechanism = Some(format!(
                        "SASL mechanism '{mechanism}' requested by client is not supported for \
                         re-authentication of mechanism '{}'",
                        before.name()
                    ));
                }
            }
            let code = if accepted {
                ErrorCode::None
            } else {
                ErrorCode::UnsupportedSaslMechanism
            };
            let body = SaslHandshakeResponse::default()
                .with_error_code(code.code())
                .with_mechanisms(enabled);
            let frame = Some(encode(&request, ResponseKind::SaslHandshake(body))?);
            let then = if accepted {
                After::Continue
            } else {
                After::Close {
                    delay: config.failed_delay,
                    reason: format!("unsupported SASL mechanism {mechanism:?}"),
                    outcome: "unsupported_mechanism",
                }
            };
            Ok(Gate::Answer { frame, then })
        }
        RequestKind::SaslAuthenticate(a) if !session.awaiting_handshake() => {
            if let Some(reason) = reauth.as_deref().and_then(|r| r.bad_mechanism.clone()) {
                return Ok(Gate::Answer {
                    frame: None,
                    then: After::Close {
                        delay: config.failed_delay,
                        reason,
                        outcome: "failed",
                    },
                });
            }
            let step = session.step(config, &a.auth_bytes, server_nonce);
            let step = match (step, reauth.as_deref()) {
                (Step::Complete { principal, .. }, Some(r))
                    if r.principal_changed(&principal).is_some() =>
                {
                    let message = r.principal_changed(&principal).unwrap_or_default();
                    Step::Failed(crate::security::sasl::SaslFailure {
                        reason: message.clone(),
                        client_message: message,
                    })
                }
                (step, _) => step,
            };
            let (body, then) = match step {
                Step::Challenge(token) => (
                    SaslAuthenticateResponse::default()
                        .with_error_message(None)
                        .with_auth_bytes(Bytes::from(token)),
                    After::Continue,
                ),
                Step::Complete {
                    principal,
                    response,
                } => (
                    // KIP-368: v1+ tells the client when to re-authenticate (0: never).
                    SaslAuthenticateResponse::default()
                        .with_error_message(None)
                        .with_auth_bytes(Bytes::from(response))
                        .with_session_lifetime_ms(if version >= 1 {
                            i64::try_from(config.max_reauth.as_millis()).unwrap_or(i64::MAX)
                        } else {
                            0
                        }),
                    After::Authenticated(principal),
                ),
                Step::Failed(f) => (
                    SaslAuthenticateResponse::default()
                        .with_error_code(ErrorCode::SaslAuthenticationFailed.code())
                        .with_error_message(Some(StrBytes::from_string(f.client_message))),
                    After::Close {
                        delay: config.failed_delay,
                        reason: format!("authentication failed: {}", f.reason),
                        outcome: "failed",
                    },
                ),
            };
            let frame = Some(encode(&request, ResponseKind::SaslAuthenticate(body))?);
            Ok(Gate::Answer { frame, then })
        }
        other => {
            let frame = match refused_before_authentication(version, other) {
                Some(body) => Some(encode(&request, body)?),
                None => None,
            };
            let what = match request.api_key {
                ApiKey::SaslHandshake => "a second SaslHandshake".to_owned(),
                ApiKey::SaslAuthenticate => "SaslAuthenticate before SaslHandshake".to_owned(),
                key => format!("{} before authentication", crate::handlers::api_name(key)),
            };
            Ok(Gate::Answer {
                frame,
                then: After::Close {
                    delay: Duration::ZERO,
                    reason: format!("{what} (ILLEGAL_SASL_STATE)"),
                    outcome: "illegal_state",
                },
            })
        }
    }
}

/// Decides what a bare token (after a v0 handshake) gets: a bare size-prefixed answer, or
/// nothing and a close (Kafka has no way to say why in this framing).
pub fn raw_token(
    session: &mut SaslSession,
    config: &SaslConfig,
    reauth: Option<&Reauth>,
    token: &[u8],
) -> Gate {
    let bare = |token: Vec<u8>| {
        let mut out = BytesMut::with_capacity(4 + token.len());
        out.put_u32(token.len() as u32);
        out.put_slice(&token);
        Some(out.freeze())
    };
    if let Some(reason) = reauth.and_then(|r| r.bad_mechanism.clone()) {
        return Gate::Answer {
            frame: None,
            then: After::Close {
                delay: config.failed_delay,
                reason,
                outcome: "failed",
            },
        };
    }
    match session.step(config, token, server_nonce) {
        Step::Complete { principal, .. }
            if reauth.is_some_and(|r| r.principal_changed(&principal).is_some()) =>
        {
            Gate::Answer {
                frame: None,
                then: After::Close {
                    delay: config.failed_delay,
                    reason: format!("re-authentication as another principal ({principal})"),
                    outcome: "failed",
                },
            }
        }
        Step::Challenge(t) => Gate::Answer {
            frame: bare(t),
            then: After::Continue,
        },
        Step::Complete {
            principal,
            response,
        } => Gate::Answer {
            frame: bare(response),
            then: After::Authenticated(principal),
        },
        Step::Failed(f) => Gate::Answer {
            frame: None,
            then: After::Close {
                delay: config.failed_delay,
                reason: format!("authentication failed: {}", f.reason),
                outcome: "failed",
            },
        },
    }
}
