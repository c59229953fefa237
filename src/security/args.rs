//! The security flags of `cohort serve` (their rules are in `config::rules`).

use std::path::PathBuf;
use std::str::FromStr;

use clap::Args;

/// Kafka's `connection.failed.authentication.delay.ms` default.
pub const FAILED_AUTHENTICATION_DELAY_MS_DEFAULT: u64 = 100;
/// Longest failed-authentication delay (the connection holds its slot meanwhile).
pub const FAILED_AUTHENTICATION_DELAY_MS_MAX: u64 = 60_000;
/// Longest `--connections-max-reauth-ms` (a year).
pub const CONNECTIONS_MAX_REAUTH_MS_MAX: u64 = 365 * 24 * 3_600_000;
/// Default time from accept to authenticated (TLS handshake and SASL exchange).
pub const AUTHENTICATION_TIMEOUT_MS_DEFAULT: u64 = 10_000;
/// Bounds of `--authentication-timeout-ms`.
pub const AUTHENTICATION_TIMEOUT_MS_MIN: u64 = 100;
/// See [`AUTHENTICATION_TIMEOUT_MS_MIN`].
pub const AUTHENTICATION_TIMEOUT_MS_MAX: u64 = 3_600_000;

/// A `--scram-user NAME:MECHANISM:PASSWORD` value, kept as given until its credential is made;
/// its `Debug` shows the name only.
#[derive(Clone)]
pub struct ScramUserArg(pub String);

impl FromStr for ScramUserArg {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ScramUserArg(s.to_owned()))
    }
}

impl ScramUserArg {
    /// The name part (what messages may show).
    pub fn name(&self) -> &str {
        self.0.split(':').next().unwrap_or("")
    }
}

impl std::fmt::Debug for ScramUserArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScramUserArg({:?}:…)", self.name())
    }
}

/// TLS and SASL.
#[derive(Debug, Clone, Args)]
pub struct SecurityArgs {
    /// This node's certificate chain (PEM), for SSL and SASL_SSL listeners.
    #[arg(long)]
    pub ssl_cert: Option<PathBuf>,

    /// The private key of `--ssl-cert` (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long)]
    pub ssl_key: Option<PathBuf>,

    /// CA certificates (PEM): SSL listeners then require a client certificate signed by one
    /// of them, and the principal is `User:` + its subject (Kafka's
    /// `ssl.client.auth=required`).
    #[arg(long)]
    pub ssl_client_ca: Option<PathBuf>,

    /// Kafka's `ssl.principal.mapping.rules`: how a client certificate's subject (RFC 2253)
    /// becomes a principal name, e.g. `RULE:^CN=(.*?),.*$/$1/,DEFAULT`.
    #[arg(long, default_value = "DEFAULT")]
    pub ssl_principal_mapping_rules: String,

    /// SASL mechanisms SASL listeners accept: SCRAM-SHA-256, SCRAM-SHA-512, PLAIN.
    #[arg(long, default_value = "SCRAM-SHA-256,SCRAM-SHA-512")]
    pub sasl_enabled_mechanisms: String,

    /// PLAIN users, one `NAME:PASSWORD` a line (`#` comments); hashed when read.
    #[arg(long)]
    pub sasl_plain_users: Option<PathBuf>,

    /// A SCRAM credential, `NAME:SCRAM-SHA-256|SCRAM-SHA-512:PASSWORD` (repeatable), created
    /// in the cluster's replicated state when the cluster is first started (the first leader's
    /// flags, once, as `kafka-storage.sh format --add-scram`); kept as a salted hash only.
    /// Later changes: `cohort users` / AlterUserScramCredentials.
    #[arg(long = "scram-user")]
    pub scram_users: Vec<ScramUserArg>,

    /// PBKDF2 iterations of the `--scram-user` credentials (Kafka: 4096 to 16384).
    #[arg(long, default_value_t = crate::security::scram::ITERATIONS_MIN)]
    pub scram_iterations: u32,

    /// Wait this long before answering a failed authentication and closing (Kafka's
    /// `connection.failed.authentication.delay.ms`): brute force gets slow.
    #[arg(long, default_value_t = FAILED_AUTHENTICATION_DELAY_MS_DEFAULT)]
    pub connection_failed_authentication_delay_ms: u64,

    /// Kafka's `connections.max.reauth.ms` (KIP-368): a SASL session lasts this long; the
    /// client re-authenticates on its open connection before then (SaslAuthenticate v1+ tells
    /// it the lifetime), or its first request after the end closes the connection. 0: sessions
    /// never end.
    #[arg(long, default_value_t = 0)]
    pub connections_max_reauth_ms: u64,

    /// A connection must finish its TLS handshake and SASL exchange within this of being
    /// accepted, else it is closed.
    #[arg(long, default_value_t = AUTHENTICATION_TIMEOUT_MS_DEFAULT)]
    pub authentication_timeout_ms: u64,

    /// `none`: every principal may do everything (Kafka without `authorizer.class.name`; the
    /// ACL APIs answer SECURITY_DISABLED). `acl`: Kafka's StandardAuthorizer over the
    /// cluster's replicated ACLs (CreateAcls/DeleteAcls, `cohort acls`).
    #[arg(long, default_value = "none")]
    pub authorizer: String,

    /// Kafka's `super.users`: principals allowed everything, `User:a;User:b`.
    #[arg(long, default_value = "")]
    pub super_users: String,

    /// Kafka's `allow.everyone.if.no.acl.found`: a resource without any ACL is open to all
    /// (default: only super users may use it).
    #[arg(long)]
    pub allow_everyone_if_no_acl_found: bool,

    /// Kafka's `inter.broker.listener.name`: the listener other nodes are called on for
    /// transaction markers and lag (WriteTxnMarkers, ListOffsets): one of `--listeners`
    /// (default: the first). Peers are dialled at their address on the listener of that name,
    /// which every node records in the cluster membership.
    #[arg(long)]
    pub inter_broker_listener_name: Option<String>,

    /// This node's own client settings on the inter-broker listener, in `--command-config`
    /// syntax (`security.protocol`, `sasl.mechanism`, `sasl.jaas.config`, `ssl.truststore.*`,
    /// `ssl.keystore.*`): Kafka's `sasl.mechanism.inter.broker.protocol` with the listener's
    /// JAAS login, or the broker's keystore. Needed in a cluster whose inter-broker listener is
    /// not PLAINTEXT; the principal needs CLUSTER_ACTION on the cluster (a super user).
    #[arg(long)]
    pub inter_broker_command_config: Option<PathBuf>,
}
