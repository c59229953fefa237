//! TLS with rustls (ring provider, no OpenSSL): the server configurations built from PEM
//! files, and the principal a client certificate names.
//!
//! ```text
//!  --ssl-cert, --ssl-key ─> ServerConfig (server auth only)        SASL_SSL listeners, and
//!                                                                  SSL without --ssl-client-ca
//!  + --ssl-client-ca    ─> ServerConfig requiring a client cert    SSL listeners
//!                          signed by that CA (Kafka's ssl.client.auth=required)
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::principal::{subject_dn, MappingRules, Principal, PrincipalError};

/// Why the TLS configuration cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file is missing, unreadable or holds nothing usable.
    #[error("{flag} {}: {reason}", path.display())]
    Pem {
        /// The flag that named it.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// rustls refused the certificate, key or CA.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
    /// The client CA cannot verify anything.
    #[error("--ssl-client-ca: {0}")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
}

/// The server configurations of a node's TLS listeners.
#[derive(Debug, Clone)]
pub struct TlsConfigs {
    /// Server authentication only.
    pub server_only: Arc<ServerConfig>,
    /// Requiring a client certificate signed by `--ssl-client-ca`, when given.
    pub client_auth: Option<Arc<ServerConfig>>,
}

fn certs(flag: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |reason: String| TlsError::Pem {
        flag,
        path: path.to_owned(),
        reason,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no CERTIFICATE block".into()));
    }
    Ok(certs)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl TlsConfigs {
    /// Reads the PEM files and builds the configurations.
    pub fn load(cert: &Path, key: &Path, client_ca: Option<&Path>) -> Result<TlsConfigs, TlsError> {
        let chain = certs("--ssl-cert", cert)?;
        let key = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsError::Pem {
            flag: "--ssl-key",
            path: key.to_owned(),
            reason: e.to_string(),
        })?;
        let builder = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?;
        let server_only = builder
            .with_no_client_auth()
            .with_single_cert(chain.clone(), key.clone_key())?;
        let client_auth = match client_ca {
            None => None,
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                for c in certs("--ssl-client-ca", ca)? {
                    roots.add(c)?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                        .build()?;
                let config = ServerConfig::builder_with_provider(provider())
                    .with_safe_default_protocol_versions()?
                    .with_client_cert_verifier(verifier)
                    .with_single_cert(chain, key)?;
                Some(Arc::new(config))
            }
        };
        Ok(TlsConfigs {
            server_only: Arc::new(server_only),
            client_auth,
        })
    }
}

/// The principal of a TLS connection: `User:` and the mapped subject of the client's
/// certificate, `User:ANONYMOUS` without one.
pub fn principal_of(
    conn: &rustls::ServerConnection,
    rules: &MappingRules,
) -> Result<Principal, PrincipalError> {
    match conn.peer_certificates().and_then(|c| c.first()) {
        None => Ok(Principal::anonymous()),
        Some(cert) => Ok(Principal::user(rules.apply(&subject_dn(cert)?)?)),
    }
}
