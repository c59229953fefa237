//! A connection's SASL exchange, as Kafka's `SaslClientAuthenticator` runs it after
//! ApiVersions: SaslHandshake v1 names the mechanism, then SaslAuthenticate requests carry the
//! tokens (one for PLAIN, two for SCRAM).
//!
//! ```text
//!  SaslHandshake(m) ─► error 33: UnsupportedSaslMechanismException, enabled list
//!  SaslAuthenticate(token) ─► error 58: SaslAuthenticationException, the broker's message
//!                          ◄─ server token (SCRAM: server-first, then server-final, verified)
//! ```

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_protocol::protocol::StrBytes;

use super::SaslLogin;
use crate::client::auth::scram::ScramClient;
use crate::client::connection::Connection;
use crate::client::error::{ClientError, ClientResult, KafkaError, NONE};
use crate::security::sasl::SaslMechanism;
use protocol::ErrorCode;

/// Authenticates `conn` as `login`.
pub async fn authenticate(conn: &mut Connection, login: &SaslLogin) -> ClientResult<()> {
    let version = conn.versions().pick(ApiKey::SaslHandshake)?;
    let request = SaslHandshakeRequest::default()
        .with_mechanism(StrBytes::from_static_str(login.mechanism.name()));
    let response = conn.send_at(&request, version).await?;
    if response.error_code == ErrorCode::UnsupportedSaslMechanism.code() {
        let enabled: Vec<String> = response.mechanisms.iter().map(|m| m.to_string()).collect();
        return Err(KafkaError::with_message(
            response.error_code,
            Some(format!(
                "Client SASL mechanism '{}' not enabled in the server, enabled mechanisms are [{}]",
                login.mechanism.name(),
                enabled.join(", ")
            )),
        )
        .into());
    }
    if response.error_code != NONE {
        return Err(KafkaError::new(response.error_code).into());
    }
    let version = conn.versions().pick(ApiKey::SaslAuthenticate)?;
    match login.mechanism {
        SaslMechanism::Plain => {
            // RFC 4616: no authorization id, user, password.
            let mut token = Vec::with_capacity(login.username.len() + 2 + 64);
            token.push(0);
            token.extend_from_slice(login.username.as_bytes());
            token.push(0);
            token.extend_from_slice(login.password.expose().as_bytes());
            round(conn, version, token).await?;
        }
        SaslMechanism::Scram(mechanism) => {
            // The broker's nonce alphabet serves the client just as well.
            let nonce = crate::security::sasl::server_nonce();
            let (client, first) = ScramClient::start(mechanism, &login.username, &nonce);
            let server_first = round(conn, version, first).await?;
            let (last, proof) = client
                .respond(&server_first, login.password.expose().as_bytes())
                .map_err(|e| ClientError::Sasl(e.to_string()))?;
            let server_final = round(conn, version, last).await?;
            proof
                .verify(&server_final)
                .map_err(|e| ClientError::Sasl(e.to_string()))?;
        }
    }
    Ok(())
}

/// One SaslAuthenticate round trip: the server's token, or its error.
async fn round(conn: &mut Connection, version: i16, token: Vec<u8>) -> ClientResult<Bytes> {
    let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(token));
    let response = conn.send_at(&request, version).await?;
    if response.error_code != NONE {
        return Err(KafkaError::with_message(
            response.error_code,
            response.error_message.map(|m| m.to_string()),
        )
        .into());
    }
    Ok(response.auth_bytes)
}
