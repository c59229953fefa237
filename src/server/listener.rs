//! One bound listener: its security protocol, what its clients are told about this node, and
//! (for TLS and SASL listeners) how its connections authenticate.
//!
//! ```text
//!  accept ─ PLAINTEXT, SASL_PLAINTEXT ─────────────────────────────> connection::serve(tcp)
//!         └ SSL, SASL_SSL ─ TLS handshake within the authentication timeout
//!              ├ failed or late: one log line, the connection closed
//!              └ done ─ principal from the client certificate ─> connection::serve(tls)
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use super::connection;
use super::front::Front;
use crate::config::AdvertisedListener;
use crate::handlers::loading::LoadingNode;
use crate::metrics as m;
use crate::security::listeners::SecurityProtocol;
use crate::security::principal::{MappingRules, Principal};
use crate::security::sasl::SaslConfig;

/// Shared by the connections of one listener.
pub struct Listener {
    /// How connections authenticate.
    pub protocol: SecurityProtocol,
    /// This node as the listener's clients reach it.
    pub advertised: Arc<AdvertisedListener>,
    /// TLS listeners: the handshake.
    pub tls: Option<TlsAcceptor>,
    /// SASL listeners: what they accept.
    pub sasl: Option<Arc<SaslConfig>>,
    /// How a client certificate's subject becomes a principal.
    pub mapping: Arc<MappingRules>,
    /// Bound on the TLS handshake (and, on SASL listeners, on the whole exchange).
    pub handshake_timeout: Duration,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("protocol", &self.protocol)
            .field("advertised", &self.advertised)
            .finish_non_exhaustive()
    }
}

impl Listener {
    /// A plaintext listener of `advertised.protocol` (tests, and PLAINTEXT).
    pub fn plain(advertised: AdvertisedListener) -> Listener {
        Listener {
            protocol: advertised.protocol,
            advertised: Arc::new(advertised),
            tls: None,
            sasl: None,
            mapping: Arc::new(MappingRules::default()),
            handshake_timeout: Duration::from_secs(10),
        }
    }

    /// Who this node is to group requests while it loads, as this listener's clients reach it.
    pub fn loading_as(&self, node: &LoadingNode) -> LoadingNode {
        match node {
            LoadingNode::Coordinator(me) => {
                let mut me = me.clone();
                me.host.clone_from(&self.advertised.host);
                me.port = self.advertised.port;
                LoadingNode::Coordinator(me)
            }
            LoadingNode::ClusterMember => LoadingNode::ClusterMember,
        }
    }

    /// Serves one accepted connection: the TLS handshake first on TLS listeners.
    pub async fn serve(
        self: Arc<Self>,
        stream: TcpStream,
        peer: SocketAddr,
        front: Arc<Front>,
        shutdown: watch::Receiver<bool>,
    ) {
        let accepted = Instant::now();
        let Some(acceptor) = self.tls.clone() else {
            connection::serve(
                stream,
                peer,
                self,
                front,
                shutdown,
                Principal::anonymous(),
                accepted,
            )
            .await;
            return;
        };
        let handshake = tokio::time::timeout(self.handshake_timeout, acceptor.accept(stream)).await;
        let refused = |why: String| {
            metrics::counter!(m::TLS_HANDSHAKE_FAILURES_TOTAL, "listener" => self.protocol.name())
                .increment(1);
            tracing::info!(%peer, listener = %self.protocol, "closing connection: TLS handshake {why}");
        };
        let tls = match handshake {
            Ok(Ok(tls)) => tls,
            Ok(Err(e)) => return refused(format!("failed: {e}")),
            Err(_) => return refused(format!("not done within {:?}", self.handshake_timeout)),
        };
        // SASL_SSL: the SASL exchange names the principal; SSL: the client certificate.
        let principal = match crate::security::tls::principal_of(tls.get_ref().1, &self.mapping) {
            Ok(p) => p,
            Err(e) => return refused(format!("refused the client certificate: {e}")),
        };
        if self.sasl.is_none() {
            tracing::debug!(%peer, listener = %self.protocol, %principal, "TLS connection");
        }
        connection::serve(tls, peer, self, front, shutdown, principal, accepted).await;
    }
}
