//! Security at the edge: listeners and their protocols, TLS, SASL, principals.
//!
//! ```text
//!  accept on a listener ─ PLAINTEXT ───────────────────────────────> User:ANONYMOUS
//!                       ├ SSL ─ TLS handshake (bounded) ─ client cert? User:<DN> : ANONYMOUS
//!                       ├ SASL_PLAINTEXT ─ SaslHandshake + SaslAuthenticate ─> User:<name>
//!                       └ SASL_SSL ─ TLS, then SASL as above
//! ```
//!
//! SCRAM credentials are the cluster's replicated ones (`replicated::scram`); PLAIN users come
//! from a node-local file. Both are kept only as salted hashes.

pub mod api_acls;
pub mod args;
pub mod authorizer;
pub mod credentials;
pub mod http_basic;
pub mod inter_broker;
pub mod listeners;
pub mod principal;
pub mod sasl;
pub mod scram;
pub mod tls;
pub mod user_file;

use std::sync::Arc;
use std::time::Duration;

use tokio_rustls::TlsAcceptor;

use crate::config::AdvertisedListener;
use crate::server::listener::Listener;
use args::SecurityArgs;
use listeners::SecurityProtocol;

/// Why the security configuration cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SecurityError {
    /// A certificate, key or CA file.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// `--scram-user` or `--sasl-plain-users`.
    #[error(transparent)]
    Credentials(#[from] credentials::CredentialError),
    /// `--ssl-principal-mapping-rules` or `--sasl-enabled-mechanisms` (the rules check them
    /// first; kept for callers that load without validating).
    #[error("{0}")]
    Flag(String),
}

/// What every listener of the node authenticates with, loaded once at start.
#[derive(Debug)]
pub struct Security {
    tls: Option<tls::TlsConfigs>,
    sasl: Arc<sasl::SaslConfig>,
    mapping: Arc<principal::MappingRules>,
    timeout: Duration,
}

impl Security {
    /// Reads the PEM files and hashes the credentials the flags name.
    pub fn load(args: &SecurityArgs) -> Result<Security, SecurityError> {
        let tls = match (&args.ssl_cert, &args.ssl_key) {
            (Some(cert), Some(key)) => Some(tls::TlsConfigs::load(
                cert,
                key,
                args.ssl_client_ca.as_deref(),
            )?),
            _ => None,
        };
        let users: Vec<String> = args.scram_users.iter().map(|u| u.0.clone()).collect();
        let credentials = credentials::Credentials::load(
            &users,
            args.scram_iterations,
            args.sasl_plain_users.as_deref(),
        )?;
        let enabled = sasl::parse_mechanisms(&args.sasl_enabled_mechanisms).ok_or_else(|| {
            SecurityError::Flag(format!(
                "--sasl-enabled-mechanisms {:?}",
                args.sasl_enabled_mechanisms
            ))
        })?;
        let mapping = principal::MappingRules::parse(&args.ssl_principal_mapping_rules)
            .map_err(|e| SecurityError::Flag(format!("--ssl-principal-mapping-rules: {e}")))?;
        let timeout = Duration::from_millis(args.authentication_timeout_ms);
        Ok(Security {
            tls,
            sasl: Arc::new(sasl::SaslConfig {
                enabled,
                credentials: Arc::new(credentials),
                failed_delay: Duration::from_millis(args.connection_failed_authentication_delay_ms),
                max_reauth: Duration::from_millis(args.connections_max_reauth_ms),
                timeout,
            }),
            mapping: Arc::new(mapping),
            timeout,
        })
    }

    /// Who SASL listeners authenticate (the replicated SCRAM credentials are installed into
    /// it once the node's replica runs).
    pub fn credentials(&self) -> &Arc<credentials::Credentials> {
        &self.sasl.credentials
    }

    /// The listener serving `advertised.protocol` with this configuration.
    pub fn listener(&self, advertised: AdvertisedListener) -> Listener {
        let protocol = advertised.protocol;
        let tls = self.tls.as_ref().filter(|_| protocol.is_tls()).map(|t| {
            // Only SSL listeners require a client certificate: on SASL_SSL, SASL names the
            // principal.
            let config = match (&t.client_auth, protocol) {
                (Some(mtls), SecurityProtocol::Ssl) => mtls.clone(),
                _ => t.server_only.clone(),
            };
            TlsAcceptor::from(config)
        });
        let mut l = Listener::plain(advertised);
        l.tls = tls;
        l.sasl = protocol.is_sasl().then(|| self.sasl.clone());
        l.mapping = self.mapping.clone();
        l.handshake_timeout = self.timeout;
        l
    }
}
