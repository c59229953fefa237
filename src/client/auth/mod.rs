//! How a client proves who it is and protects the connection: the Java client's security
//! properties (`security.protocol`, `sasl.*`, `ssl.*`) turned into what a connection does
//! after TCP connect.
//!
//! ```text
//!  PLAINTEXT       TCP ─────────────────────────────── ApiVersions ─ requests
//!  SSL             TCP ─ TLS (truststore, keystore) ── ApiVersions ─ requests
//!  SASL_PLAINTEXT  TCP ─────────────────────────────── ApiVersions ─ SASL ─ requests
//!  SASL_SSL        TCP ─ TLS ───────────────────────── ApiVersions ─ SASL ─ requests
//! ```

pub mod jaas;
pub mod sasl;
pub mod scram;
pub mod tls;

use std::collections::BTreeMap;

pub use crate::security::listeners::SecurityProtocol;
use crate::security::sasl::SaslMechanism;

use super::error::{ClientError, ClientResult};
use tls::TlsClient;

/// A secret that never shows in Debug output or logs (Kafka's `Password` prints `[hidden]`).
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// Wraps a secret.
    pub fn new(secret: String) -> Password {
        Password(secret)
    }

    /// The secret, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[hidden]")
    }
}

/// Who a SASL connection logs in as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslLogin {
    /// `sasl.mechanism`.
    pub mechanism: SaslMechanism,
    /// The JAAS config's `username`.
    pub username: String,
    /// The JAAS config's `password`.
    pub password: Password,
}

/// A client's security settings.
#[derive(Debug, Clone)]
pub struct ClientSecurity {
    /// `security.protocol`.
    pub protocol: SecurityProtocol,
    /// Set for SASL_PLAINTEXT and SASL_SSL.
    pub sasl: Option<SaslLogin>,
    /// Set for SSL and SASL_SSL.
    pub tls: Option<TlsClient>,
}

impl Default for ClientSecurity {
    fn default() -> Self {
        ClientSecurity {
            protocol: SecurityProtocol::Plaintext,
            sasl: None,
            tls: None,
        }
    }
}

/// The security properties this client reads.
const SASL_KEYS: &[&str] = &["sasl.mechanism", "sasl.jaas.config"];
const SSL_KEYS: &[&str] = &[
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.certificates",
    "ssl.truststore.password",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
];

fn config_error(detail: impl Into<String>) -> ClientError {
    ClientError::Config(detail.into())
}

impl ClientSecurity {
    /// Reads the security properties. Settings the protocol does not use are left alone (the
    /// caller reports them as unused, see [`ClientSecurity::uses`]).
    pub fn from_properties(props: &BTreeMap<String, String>) -> ClientResult<ClientSecurity> {
        let protocol = match props.get("security.protocol") {
            None => SecurityProtocol::Plaintext,
            Some(value) => value.trim().parse().map_err(|_| {
                config_error(format!(
                    "Invalid value {value} for configuration security.protocol: String must be \
                     one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"
                ))
            })?,
        };
        let sasl = if protocol.is_sasl() {
            Some(sasl_login(props)?)
        } else {
            None
        };
        let tls = if protocol.is_tls() {
            Some(TlsClient::from_properties(props)?)
        } else {
            None
        };
        Ok(ClientSecurity {
            protocol,
            sasl,
            tls,
        })
    }

    /// Whether `key` is a security property this configuration reads (`security.protocol`
    /// always; `sasl.*` and `ssl.*` when the protocol uses them).
    pub fn uses(&self, key: &str) -> bool {
        key == "security.protocol"
            || (self.protocol.is_sasl() && SASL_KEYS.contains(&key))
            || (self.protocol.is_tls() && SSL_KEYS.contains(&key))
    }
}

fn sasl_login(props: &BTreeMap<String, String>) -> ClientResult<SaslLogin> {
    // Kafka's default mechanism is GSSAPI (Kerberos), which this client does not speak.
    let name = props.get("sasl.mechanism").map_or("GSSAPI", |m| m.trim());
    let mechanism = SaslMechanism::from_name(name).ok_or_else(|| {
        config_error(format!(
            "sasl.mechanism {name} is not supported by this client: use PLAIN, SCRAM-SHA-256 \
             or SCRAM-SHA-512"
        ))
    })?;
    let text = props.get("sasl.jaas.config").ok_or_else(|| {
        config_error(
            "Could not find a 'KafkaClient' entry in the JAAS configuration. System property \
             'java.security.auth.login.config' is not set (set sasl.jaas.config)",
        )
    })?;
    let login = jaas::parse(text).map_err(|e| config_error(format!("sasl.jaas.config: {e}")))?;
    Ok(SaslLogin {
        mechanism,
        username: login.username,
        password: login.password,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(text: &str) -> BTreeMap<String, String> {
        crate::client::config::parse_properties(text)
    }

    #[test]
    fn sasl_settings_come_from_the_mechanism_and_the_jaas_config() {
        let s = ClientSecurity::from_properties(&props(
            "security.protocol=sasl_plaintext\nsasl.mechanism=SCRAM-SHA-512\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"bob\" password=\"bob-secret\";\nssl.truststore.type=PEM\n",
        ))
        .unwrap();
        assert_eq!(s.protocol, SecurityProtocol::SaslPlaintext);
        let login = s.sasl.as_ref().unwrap();
        assert_eq!(login.mechanism.name(), "SCRAM-SHA-512");
        assert_eq!(login.username, "bob");
        assert!(s.tls.is_none());
        assert!(s.uses("sasl.jaas.config") && !s.uses("ssl.truststore.type"));
        let shown = format!("{s:?}");
        assert!(
            !shown.contains("bob-secret") && shown.contains("[hidden]"),
            "{shown}"
        );
    }

    #[test]
    fn unusable_sasl_settings_are_refused() {
        let refused = |text: &str| {
            ClientSecurity::from_properties(&props(text))
                .unwrap_err()
                .to_string()
        };
        assert!(refused("security.protocol=SASL_PLAIN\n")
            .contains("String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"));
        assert!(refused("security.protocol=SASL_PLAINTEXT\n").contains("GSSAPI is not supported"));
        assert!(
            refused("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n")
                .contains("Could not find a 'KafkaClient' entry")
        );
        let e = refused(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=\
             org.apache.kafka.common.security.plain.PlainLoginModule required username=a \
             password=\"topsecret\"\n",
        );
        assert!(
            e.contains("expected ';'") && !e.contains("topsecret"),
            "{e}"
        );
        let plain = ClientSecurity::from_properties(&props("sasl.mechanism=PLAIN\n")).unwrap();
        assert_eq!(plain.protocol, SecurityProtocol::Plaintext);
        assert!(!plain.uses("sasl.mechanism"));
    }
}
