//! TLS for the client with rustls (no OpenSSL), from the Java client's PEM properties.
//!
//! ```text
//!  ssl.truststore.type=PEM + ssl.truststore.location | ssl.truststore.certificates
//!        (neither: the system's CA bundle, as Java falls back to its cacerts)
//!  ssl.keystore.type=PEM   + ssl.keystore.location (key + chain in one file)
//!                          | ssl.keystore.key + ssl.keystore.certificate.chain   ─> mTLS
//!  ssl.endpoint.identification.algorithm=https (default): the certificate must name the host
//!                                        =""  : the chain is verified, the name is not
//! ```

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use tokio_rustls::TlsConnector;

use crate::client::error::{ClientError, ClientResult};

/// Largest PEM file or property read.
const PEM_BYTES_MAX: u64 = 1024 * 1024;

/// Where Linux distributions keep the system's CA bundle (Debian, Fedora/RHEL, Alpine/others).
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// A client's TLS settings, ready to connect.
#[derive(Clone)]
pub struct TlsClient {
    config: Arc<rustls::ClientConfig>,
    verify_hostname: bool,
    client_certificate: bool,
}

impl std::fmt::Debug for TlsClient {
    // The rustls configuration holds the private key: show only what it was built for.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient")
            .field("verify_hostname", &self.verify_hostname)
            .field("client_certificate", &self.client_certificate)
            .finish_non_exhaustive()
    }
}

fn config_error(detail: impl Into<String>) -> ClientError {
    ClientError::Config(detail.into())
}

fn read_pem_file(key: &str, path: &str) -> ClientResult<Vec<u8>> {
    let file = std::fs::File::open(path)
        .map_err(|e| config_error(format!("{key}: cannot read {path} ({e})")))?;
    let mut bytes = Vec::new();
    file.take(PEM_BYTES_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| config_error(format!("{key}: cannot read {path} ({e})")))?;
    if bytes.len() as u64 > PEM_BYTES_MAX {
        return Err(config_error(format!(
            "{key}: {path} is larger than {PEM_BYTES_MAX} bytes"
        )));
    }
    Ok(bytes)
}

fn certificates(key: &str, pem: &[u8]) -> ClientResult<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| config_error(format!("{key}: {e}")))?;
    if certs.is_empty() {
        return Err(config_error(format!("{key}: no PEM certificate found")));
    }
    Ok(certs)
}

fn private_key(key: &str, pem: &[u8]) -> ClientResult<PrivateKeyDer<'static>> {
    if pem.windows(9).any(|w| w == b"ENCRYPTED") {
        return Err(config_error(format!(
            "{key}: encrypted private keys are not supported by this client; give an \
             unencrypted PEM key"
        )));
    }
    PrivateKeyDer::from_pem_slice(pem)
        .map_err(|e| config_error(format!("{key}: no usable PEM private key ({e})")))
}

/// `ssl.<store>.type`, Java's default JKS when absent; only PEM is read here.
fn require_pem(props: &BTreeMap<String, String>, type_key: &str) -> ClientResult<()> {
    let kind = props.get(type_key).map_or("JKS", |v| v.trim());
    if kind.eq_ignore_ascii_case("PEM") {
        Ok(())
    } else {
        Err(config_error(format!(
            "{type_key}={kind} is not supported: this client reads PEM stores only \
             (set {type_key}=PEM)"
        )))
    }
}

fn truststore(props: &BTreeMap<String, String>) -> ClientResult<RootCertStore> {
    let location = props.get("ssl.truststore.location");
    let inline = props.get("ssl.truststore.certificates");
    let pem = match (location, inline) {
        (Some(_), Some(_)) => return Err(config_error(
            "Options ssl.truststore.certificates and ssl.truststore.location are both specified",
        )),
        (Some(path), None) => {
            require_pem(props, "ssl.truststore.type")?;
            read_pem_file("ssl.truststore.location", path)?
        }
        (None, Some(text)) => {
            require_pem(props, "ssl.truststore.type")?;
            text.as_bytes().to_vec()
        }
        (None, None) => system_bundle()?,
    };
    if props.contains_key("ssl.truststore.password") && (location.is_some() || inline.is_some()) {
        return Err(config_error(
            "SSL trust store password cannot be specified for PEM format.",
        ));
    }
    let mut roots = RootCertStore::empty();
    for cert in certificates("ssl.truststore", &pem)? {
        roots
            .add(cert)
            .map_err(|e| config_error(format!("ssl.truststore: {e}")))?;
    }
    Ok(roots)
}

/// The system's CA bundle (`SSL_CERT_FILE` first, as OpenSSL-based tools honour it).
fn system_bundle() -> ClientResult<Vec<u8>> {
    let from_env = std::env::var("SSL_CERT_FILE").ok();
    for path in from_env
        .iter()
        .map(String::as_str)
        .chain(SYSTEM_BUNDLES.iter().copied())
    {
        if std::path::Path::new(path).is_file() {
            return read_pem_file("system CA bundle", path);
        }
    }
    Err(config_error(
        "no ssl.truststore.location or ssl.truststore.certificates given, and no system CA \
         bundle found",
    ))
}

type Identity = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn keystore(props: &BTreeMap<String, String>) -> ClientResult<Option<Identity>> {
    let location = props.get("ssl.keystore.location");
    let key = props.get("ssl.keystore.key");
    let chain = props.get("ssl.keystore.certificate.chain");
    if location.is_none() && key.is_none() && chain.is_none() {
        return Ok(None);
    }
    require_pem(props, "ssl.keystore.type")?;
    if props.contains_key("ssl.keystore.password") {
        return Err(config_error(
            "SSL key store password cannot be specified with PEM format, only key password may be specified",
        ));
    }
    if props.contains_key("ssl.key.password") {
        return Err(config_error(
            "ssl.key.password: encrypted private keys are not supported by this client; give \
             an unencrypted PEM key",
        ));
    }
    match (location, key, chain) {
        (Some(_), Some(_), _) => Err(config_error(
            "Options ssl.keystore.key and ssl.keystore.location are both specified",
        )),
        (Some(_), None, Some(_)) => Err(config_error(
            "Options ssl.keystore.certificate.chain and ssl.keystore.location are both specified",
        )),
        (Some(path), None, None) => {
            let pem = read_pem_file("ssl.keystore.location", path)?;
            Ok(Some((
                certificates("ssl.keystore.location", &pem)?,
                private_key("ssl.keystore.location", &pem)?,
            )))
        }
        (None, Some(key), Some(chain)) => {
            let key = private_key("ssl.keystore.key", key.as_bytes())?;
            let chain = certificates("ssl.keystore.certificate.chain", chain.as_bytes())?;
            Ok(Some((chain, key)))
        }
        (None, Some(_), None) => Err(config_error(
            "ssl.keystore.key is given without ssl.keystore.certificate.chain",
        )),
        (None, None, _) => Err(config_error(
            "ssl.keystore.certificate.chain is given without ssl.keystore.key",
        )),
    }
}

fn verify_hostname(props: &BTreeMap<String, String>) -> ClientResult<bool> {
    match props.get("ssl.endpoint.identification.algorithm") {
        None => Ok(true),
        Some(v) if v.trim().is_empty() => Ok(false),
        Some(v) if v.trim().eq_ignore_ascii_case("https") => Ok(true),
        Some(v) => Err(config_error(format!(
            "Invalid value {v} for configuration ssl.endpoint.identification.algorithm: \
             https or empty"
        ))),
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl TlsClient {
    /// Builds the TLS settings from the `ssl.*` properties.
    pub fn from_properties(props: &BTreeMap<String, String>) -> ClientResult<TlsClient> {
        let roots = Arc::new(truststore(props)?);
        let identity = keystore(props)?;
        let verify_hostname = verify_hostname(props)?;
        let rustls_error = |e: rustls::Error| config_error(format!("TLS configuration: {e}"));
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(rustls_error)?;
        let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider())
            .build()
            .map_err(|e| config_error(format!("ssl.truststore: {e}")))?;
        let builder = if verify_hostname {
            builder.with_webpki_verifier(webpki)
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(webpki)))
        };
        let client_certificate = identity.is_some();
        let config = match identity {
            Some((chain, key)) => builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| config_error(format!("ssl.keystore: {e}")))?,
            None => builder.with_no_client_auth(),
        };
        Ok(TlsClient {
            config: Arc::new(config),
            verify_hostname,
            client_certificate,
        })
    }

    /// The rustls settings, for a blocking client (the data-plane benchmark).
    pub fn rustls_config(&self) -> Arc<rustls::ClientConfig> {
        self.config.clone()
    }

    /// A connector with these settings.
    pub fn connector(&self) -> TlsConnector {
        TlsConnector::from(self.config.clone())
    }

    /// The name the server's certificate is checked against (and sent as SNI): the host part
    /// of `addr` (`host:port`, `[v6]:port`).
    pub fn server_name(addr: &str) -> ClientResult<ServerName<'static>> {
        let host = match addr.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or(rest, |(h, _)| h),
            None => addr.rsplit_once(':').map_or(addr, |(h, _)| h),
        };
        ServerName::try_from(host.to_owned())
            .map_err(|e| config_error(format!("{host} is not a valid TLS server name ({e})")))
    }
}

/// `ssl.endpoint.identification.algorithm=""`: the chain must lead to a trusted CA, but the
/// certificate need not name the host (webpki checks the name only after the chain, so a
/// name error means the chain held).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn refused(pairs: &[(&str, &str)]) -> String {
        TlsClient::from_properties(&props(pairs))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn stores_must_be_pem_and_not_contradict_themselves() {
        assert!(refused(&[("ssl.truststore.location", "/nonexistent")])
            .contains("ssl.truststore.type=JKS is not supported"));
        assert!(refused(&[
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.location", "/nonexistent"),
        ])
        .contains("cannot read /nonexistent"));
        assert!(refused(&[
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.location", "a"),
            ("ssl.truststore.certificates", "b"),
        ])
        .contains("both specified"));
        assert!(refused(&[
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.certificates", "not pem"),
        ])
        .contains("no PEM certificate"));
        let keystore_refused =
            |pairs: &[(&str, &str)]| keystore(&props(pairs)).unwrap_err().to_string();
        assert!(keystore_refused(&[("ssl.keystore.key", "k")])
            .contains("ssl.keystore.type=JKS is not supported"));
        assert!(
            keystore_refused(&[("ssl.keystore.type", "PEM"), ("ssl.keystore.key", "k")])
                .contains("without ssl.keystore.certificate.chain")
        );
        assert!(keystore_refused(&[
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", "a"),
            ("ssl.keystore.password", "x"),
        ])
        .contains("cannot be specified with PEM"));
        assert!(keystore_refused(&[
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----"),
            ("ssl.keystore.certificate.chain", "c"),
        ])
        .contains("encrypted private keys are not supported"));
        assert!(keystore(&props(&[])).unwrap().is_none());
        let algorithm =
            |v: &str| verify_hostname(&props(&[("ssl.endpoint.identification.algorithm", v)]));
        assert!(algorithm("ldaps")
            .unwrap_err()
            .to_string()
            .contains("https or empty"));
        assert!(!algorithm(" ").unwrap());
        assert!(algorithm("HTTPS").unwrap());
        assert!(verify_hostname(&props(&[])).unwrap());
    }

    #[test]
    fn server_names_come_from_the_host_part() {
        assert!(matches!(
            TlsClient::server_name("127.0.0.1:9093").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            TlsClient::server_name("[::1]:9093").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            TlsClient::server_name("kafka.example:9093").unwrap(),
            ServerName::DnsName(_)
        ));
    }
}
