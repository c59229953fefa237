//! Kafka's listeners: `PROTOCOL://HOST:PORT`, one socket each, with the security protocol that
//! decides how its connections authenticate.
//!
//! ```text
//!  --listeners SASL_SSL://0.0.0.0:9093,PLAINTEXT://127.0.0.1:9092      (wins over --listen)
//!  --advertised-listeners SASL_SSL://kafka.example:9093                (default: the bound
//!                                                                       addresses)
//!  a connection on listener L is told, in Metadata and FindCoordinator, this node's
//!  advertised address of L
//! ```
//!
//! Kafka lets a listener have any name and maps names to protocols; Cohort names each listener
//! by its protocol, so a node has at most one listener per protocol (decision 0120).

use std::fmt;
use std::str::FromStr;

/// Kafka's security protocols (`security.protocol` on the client side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SecurityProtocol {
    /// No encryption, no authentication: the principal is `User:ANONYMOUS`.
    Plaintext,
    /// TLS; with `--ssl-client-ca` the client's certificate names the principal.
    Ssl,
    /// SASL authentication over plain TCP.
    SaslPlaintext,
    /// SASL authentication over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// Kafka's name.
    pub fn name(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    /// Whether connections speak TLS.
    pub fn is_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    /// Whether connections must authenticate with SASL before anything else.
    pub fn is_sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }
}

impl fmt::Display for SecurityProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SecurityProtocol {
    type Err = ListenerError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Ok(SecurityProtocol::Plaintext),
            "SSL" => Ok(SecurityProtocol::Ssl),
            "SASL_PLAINTEXT" => Ok(SecurityProtocol::SaslPlaintext),
            "SASL_SSL" => Ok(SecurityProtocol::SaslSsl),
            _ => Err(ListenerError::UnknownProtocol(s.to_owned())),
        }
    }
}

/// Why a listener list does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenerError {
    /// Not one of Kafka's four security protocols.
    #[error("unknown security protocol {0:?} (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)")]
    UnknownProtocol(String),
    /// Not `PROTOCOL://HOST:PORT`.
    #[error("{0:?} is not PROTOCOL://HOST:PORT")]
    Malformed(String),
    /// Two listeners of one protocol.
    #[error("{0} is listed twice")]
    Duplicate(SecurityProtocol),
    /// Nothing listed.
    #[error("no listener listed")]
    Empty,
}

/// One `PROTOCOL://HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerAddr {
    /// How its connections authenticate.
    pub protocol: SecurityProtocol,
    /// Host (brackets of an IPv6 literal removed).
    pub host: String,
    /// Port (0: pick a free one, for a listener that binds).
    pub port: u16,
}

impl ListenerAddr {
    /// `HOST:PORT`, brackets back around an IPv6 literal (what `bind` and clients take).
    pub fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl fmt::Display for ListenerAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.protocol, self.host_port())
    }
}

impl FromStr for ListenerAddr {
    type Err = ListenerError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let malformed = || ListenerError::Malformed(s.to_owned());
        let (protocol, rest) = s.trim().split_once("://").ok_or_else(malformed)?;
        let protocol: SecurityProtocol = protocol.parse()?;
        let (host, port) = rest.rsplit_once(':').ok_or_else(malformed)?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port: u16 = port.parse().map_err(|_| malformed())?;
        if host.is_empty() || host.contains('/') {
            return Err(malformed());
        }
        Ok(ListenerAddr {
            protocol,
            host: host.to_owned(),
            port,
        })
    }
}

/// A comma-separated listener list: every entry well formed, each protocol once.
pub fn parse_list(s: &str) -> Result<Vec<ListenerAddr>, ListenerError> {
    let mut out: Vec<ListenerAddr> = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let addr: ListenerAddr = part.parse()?;
        if out.iter().any(|l| l.protocol == addr.protocol) {
            return Err(ListenerError::Duplicate(addr.protocol));
        }
        out.push(addr);
    }
    if out.is_empty() {
        return Err(ListenerError::Empty);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_with_kafkas_protocol_names() {
        let l = parse_list("SASL_SSL://0.0.0.0:9093, PLAINTEXT://[::1]:0").unwrap();
        assert_eq!(l[0].protocol, SecurityProtocol::SaslSsl);
        assert_eq!((l[0].host.as_str(), l[0].port), ("0.0.0.0", 9093));
        assert_eq!(l[1].host_port(), "[::1]:0");
        assert_eq!(l[1].to_string(), "PLAINTEXT://[::1]:0");
        assert!(matches!(
            parse_list("TLS://h:1"),
            Err(ListenerError::UnknownProtocol(_))
        ));
        assert!(matches!(
            parse_list("SSL://h"),
            Err(ListenerError::Malformed(_))
        ));
        assert!(matches!(
            parse_list("SSL://h:1,SSL://h:2"),
            Err(ListenerError::Duplicate(SecurityProtocol::Ssl))
        ));
        assert_eq!(parse_list(" , "), Err(ListenerError::Empty));
    }
}
