//! How this node reaches the other nodes' Kafka ports (Kafka's inter-broker listener and the
//! broker's own credential): which listener, and who it logs in as there.
//!
//! ```text
//!  transaction coordinator ── WriteTxnMarkers ─┐
//!  lag sampler ────────────── ListOffsets ─────┴─> peer's address on the inter-broker
//!       Connection::open_with(.., node credential)     listener (the membership records every
//!       TLS + SASL as --inter-broker-command-config says    listener of every node, 0184)
//! ```
//!
//! `--inter-broker-listener-name` names any of this node's listeners (default: the first);
//! peers are dialled at their address on the listener of that name (decision 0166, 0184). The
//! node's credential is a client properties file in the syntax of `--command-config`, read by
//! the same client code as Cohort's tools; its `security.protocol` is the listener's, and so
//! names it (Cohort names listeners by protocol).

use std::path::Path;

use super::listeners::SecurityProtocol;
use crate::client::auth::ClientSecurity;
use crate::client::config::read_properties_file;

/// Calls a peer refused: the node's credential or TLS handshake failed, or the peer's
/// authorizer refused the node's principal (label `client`: `txn_markers` or `lag`; `reason`:
/// `authentication` or `authorization`).
pub const REFUSALS_TOTAL: &str = "cohort_inter_broker_refusals_total";

/// Kafka's SASL_AUTHENTICATION_FAILED.
const SASL_AUTHENTICATION_FAILED: i16 = 58;
/// Kafka's UNSUPPORTED_SASL_MECHANISM (the node's mechanism is not enabled on the peer).
const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
/// Kafka's TOPIC_AUTHORIZATION_FAILED.
const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
/// Kafka's CLUSTER_AUTHORIZATION_FAILED.
const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;

/// Why the inter-broker settings cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum InterBrokerError {
    /// `--inter-broker-listener-name` is not one of this node's listeners.
    #[error("{0:?}, which names no listener of this node")]
    UnknownListener(String),
    /// A cluster node whose inter-broker listener needs TLS or SASL, without a credential.
    #[error("nothing, while the inter-broker listener is {0}")]
    Missing(SecurityProtocol),
    /// The file cannot be read or its settings are unusable.
    #[error("{0}")]
    Unusable(String),
    /// The file's `security.protocol` is not the inter-broker listener's.
    #[error(
        "a file with security.protocol={found}, while the inter-broker listener is {listener}"
    )]
    ProtocolMismatch {
        /// What the file says.
        found: SecurityProtocol,
        /// The listener's protocol.
        listener: SecurityProtocol,
    },
}

/// The inter-broker listener: `name` (`--inter-broker-listener-name`) if given, which must be
/// one of `listeners`; else the first listener.
pub fn listener(
    name: Option<&str>,
    listeners: &[SecurityProtocol],
) -> Result<SecurityProtocol, InterBrokerError> {
    let first = listeners
        .first()
        .copied()
        .unwrap_or(SecurityProtocol::Plaintext);
    let Some(name) = name else {
        return Ok(first);
    };
    name.trim()
        .parse()
        .ok()
        .filter(|p| listeners.contains(p))
        .ok_or_else(|| InterBrokerError::UnknownListener(name.to_owned()))
}

/// The node's client settings towards its peers: from `config` (`--inter-broker-command-config`)
/// when given, whose `security.protocol` must be `listener`'s; else PLAINTEXT, which only a
/// single node (no peers to call) or a PLAINTEXT inter-broker listener may use.
pub fn client_security(
    config: Option<&Path>,
    listener: SecurityProtocol,
    in_cluster: bool,
) -> Result<ClientSecurity, InterBrokerError> {
    let Some(path) = config else {
        if in_cluster && listener != SecurityProtocol::Plaintext {
            return Err(InterBrokerError::Missing(listener));
        }
        return Ok(ClientSecurity::default());
    };
    let props = read_properties_file(&path.display().to_string())
        .map_err(|e| InterBrokerError::Unusable(e.to_string()))?;
    let security = ClientSecurity::from_properties(&props)
        .map_err(|e| InterBrokerError::Unusable(e.to_string()))?;
    if security.protocol != listener {
        return Err(InterBrokerError::ProtocolMismatch {
            found: security.protocol,
            listener,
        });
    }
    Ok(security)
}

/// Whether a peer refused this node's call for who it is: `authentication` (TLS handshake,
/// SASL exchange) or `authorization` (the peer's ACLs). Anything else (a peer down, a timeout)
/// is `None`: retried without counting as a refusal.
pub fn refusal(error: &crate::client::error::ClientError) -> Option<&'static str> {
    use crate::client::error::ClientError;
    match error {
        ClientError::SslHandshake { .. } | ClientError::Sasl(_) => Some("authentication"),
        ClientError::Kafka(_) => refusal_code(error.kafka_code().unwrap_or(0)),
        _ => None,
    }
}

/// [`refusal`] for an error code a peer answered with.
pub fn refusal_code(code: i16) -> Option<&'static str> {
    match code {
        SASL_AUTHENTICATION_FAILED | UNSUPPORTED_SASL_MECHANISM => Some("authentication"),
        CLUSTER_AUTHORIZATION_FAILED | TOPIC_AUTHORIZATION_FAILED => Some("authorization"),
        _ => None,
    }
}

/// Counts a refusal met by `client` (`txn_markers` or `lag`).
pub fn count_refusal(client: &'static str, reason: &'static str) {
    metrics::counter!(REFUSALS_TOTAL, "client" => client, "reason" => reason).increment(1);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use SecurityProtocol::*;

    #[test]
    fn the_inter_broker_listener_is_the_first_one_unless_another_is_named() {
        assert_eq!(listener(None, &[SaslSsl, Plaintext]).unwrap(), SaslSsl);
        assert_eq!(
            listener(Some("sasl_ssl"), &[SaslSsl, Plaintext]).unwrap(),
            SaslSsl
        );
        assert_eq!(
            listener(Some("PLAINTEXT"), &[SaslSsl, Plaintext]).unwrap(),
            Plaintext
        );
        assert!(matches!(
            listener(Some("SSL"), &[SaslSsl, Plaintext]),
            Err(InterBrokerError::UnknownListener(_))
        ));
    }

    #[test]
    fn a_cluster_needs_a_credential_for_a_secured_inter_broker_listener() {
        assert!(matches!(
            client_security(None, SaslSsl, true),
            Err(InterBrokerError::Missing(SaslSsl))
        ));
        // One node calls no peer; a PLAINTEXT listener needs no credential.
        assert_eq!(
            client_security(None, SaslSsl, false).unwrap().protocol,
            Plaintext
        );
        assert_eq!(
            client_security(None, Plaintext, true).unwrap().protocol,
            Plaintext
        );
    }

    #[test]
    fn the_credential_file_speaks_the_listener_protocol() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("node.properties");
        std::fs::write(
            &file,
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"broker\" password=\"broker-secret\";\n",
        )
        .unwrap();
        let security = client_security(Some(&file), SaslPlaintext, true).unwrap();
        assert_eq!(security.sasl.unwrap().username, "broker");
        let mismatch = client_security(Some(&file), Plaintext, true).unwrap_err();
        assert!(matches!(
            mismatch,
            InterBrokerError::ProtocolMismatch { .. }
        ));
        let missing = client_security(Some(&dir.path().join("none")), Plaintext, true);
        assert!(matches!(missing, Err(InterBrokerError::Unusable(_))));
    }

    #[test]
    fn refusals_are_told_from_other_failures() {
        use crate::client::error::ClientError;
        assert_eq!(
            refusal(&ClientError::Sasl("bad proof".into())),
            Some("authentication")
        );
        assert_eq!(refusal_code(31), Some("authorization"));
        assert_eq!(refusal_code(58), Some("authentication"));
        assert_eq!(refusal_code(6), None);
        assert_eq!(refusal(&ClientError::Config("x".into())), None);
    }
}
