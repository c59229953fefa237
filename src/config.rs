//! `cohort serve` flags and the broker configuration they become.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::security::listeners::{parse_list, ListenerAddr, SecurityProtocol};

pub mod rules;
pub mod summary;

/// Flags of `cohort serve`. Defaults follow DESIGN.md §6 and Kafka where Kafka has one.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Directory for topic data and metadata; one broker process per directory (lock file).
    #[arg(long, default_value = "./data")]
    pub data_dir: PathBuf,

    /// Address the Kafka protocol listens on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:9092")]
    pub listen: SocketAddr,

    /// Address given to clients in Metadata (default: the address actually listened on).
    #[arg(long)]
    pub advertise: Option<String>,

    /// Kafka's `listeners`: comma-separated `PROTOCOL://HOST:PORT`, PROTOCOL one of
    /// PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, each at most once (port 0 picks a free
    /// port). When given it wins over `--listen` and `--advertise`.
    #[arg(long)]
    pub listeners: Option<String>,

    /// Kafka's `advertised.listeners`: what clients of each listener are told to connect to
    /// (same form, one entry per listener protocol at most; default: the bound addresses).
    #[arg(long)]
    pub advertised_listeners: Option<String>,

    /// Address of the HTTP endpoint serving /healthz and Prometheus /metrics.
    #[arg(long, default_value = "127.0.0.1:9644")]
    pub http: SocketAddr,

    /// HTTP Basic users, one `NAME:PASSWORD` a line (`#` comments; the form of
    /// `--sasl-plain-users`): every HTTP path but /healthz and /readyz then requires one of
    /// them. Hashed when read.
    #[arg(long)]
    pub http_basic_auth: Option<PathBuf>,

    /// This broker's node id.
    #[arg(long, default_value_t = 1)]
    pub node_id: i32,

    /// Create a topic when a client asks Metadata for one that does not exist (Kafka's
    /// `auto.create.topics.enable`). `--auto-create-topics=false` turns it off.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub auto_create_topics: bool,

    /// Partitions of an auto-created topic, and of CreateTopics asking for the default (-1).
    #[arg(long, default_value_t = 1)]
    pub num_partitions: i32,

    /// Verify the first transactional batch of a transaction in each partition against the
    /// transaction coordinator (Kafka's `transaction.partition.verification.enable`, KIP-890;
    /// decision 0165). `=false` accepts transactional batches unverified, as brokers before
    /// Kafka 3.6 did: an escape hatch that can leave hanging transactions (`cohort
    /// transactions find-hanging` finds them).
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub transaction_partition_verification_enable: bool,

    /// Acknowledge writes before they are fsynced and fsync at most every this many
    /// milliseconds. Unset (the default), every acknowledged write has been fsynced.
    #[arg(long)]
    pub flush_ms: Option<u64>,

    /// Largest request frame accepted; larger: one log line, connection closed.
    #[arg(long, default_value_t = protocol::DEFAULT_MAX_FRAME_BYTES)]
    pub max_frame_bytes: usize,

    /// Most client connections open at once; more are closed on accept with one log line.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,

    /// How often retention is enforced (Kafka's `log.retention.check.interval.ms`).
    #[arg(long, default_value_t = 300_000)]
    pub retention_check_ms: u64,

    /// How often the coordinator samples lag: it polls every partition's log offsets (from
    /// their owners in a cluster) and adds one observation per group partition and one point
    /// to each group's lag history.
    #[arg(long, default_value_t = 5_000)]
    pub lag_sample_interval_ms: u64,

    /// How far back the lag status (OK, WARNING, STALLED, STOPPED, ERROR) looks. Two minutes
    /// spans two dozen commits of a consumer committing every 5 s (Kafka's auto-commit
    /// default), so one slow commit does not flip a status, while a stopped consumer shows
    /// within the window.
    #[arg(long, default_value_t = 120_000)]
    pub lag_window_ms: u64,

    /// Most consumer groups the coordinator tracks lag for; commits of further groups are
    /// counted in `cohort_lag_untracked_offsets_total{what="group"}` and logged once.
    #[arg(long, default_value_t = 10_000)]
    pub lag_groups_max: usize,

    /// Most group partitions (over every group) the coordinator tracks lag for; each keeps a
    /// window of observations.
    #[arg(long, default_value_t = 50_000)]
    pub lag_partitions_max: usize,

    /// Most partitions tracked per group.
    #[arg(long, default_value_t = 10_000)]
    pub lag_partitions_per_group_max: usize,

    /// Log lines on stderr as text or as one JSON object per line (for log shippers).
    /// `RUST_LOG` sets the filter (default: `info,openraft=warn`).
    #[arg(long, value_enum, default_value_t = crate::logging::LogFormat::Text)]
    pub log_format: crate::logging::LogFormat,

    /// Raft meta service: peers, Raft listener, log store.
    #[command(flatten)]
    pub cluster: crate::replicated::args::ClusterArgs,

    /// Group coordinator settings.
    #[command(flatten)]
    pub group: crate::replicated::args::GroupArgs,

    /// Resource limits: request memory, connection timeouts, open files, lookup budgets.
    #[command(flatten)]
    pub limits: crate::server::limits::LimitArgs,

    /// TLS and SASL.
    #[command(flatten)]
    pub security: crate::security::args::SecurityArgs,
}

/// Everything the broker needs to know about itself, resolved from [`ServeArgs`].
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    /// Where topics and metadata live.
    pub data_dir: PathBuf,
    /// This node.
    pub node_id: i32,
    /// Host clients are told to connect to.
    pub advertised_host: String,
    /// Port clients are told to connect to.
    pub advertised_port: i32,
    /// Every listener with the address its clients are told (the first one is the
    /// `advertised_host`/`advertised_port` above); the Raft membership records them all.
    pub listeners: Vec<AdvertisedListener>,
    /// Kafka's `auto.create.topics.enable`.
    pub auto_create_topics: bool,
    /// Default partition count.
    pub default_num_partitions: i32,
    /// Kafka's `transaction.partition.verification.enable`.
    pub txn_partition_verification: bool,
    /// `None`: fsync before acknowledging. `Some(d)`: acknowledge at once, fsync every `d`.
    pub flush_interval: Option<Duration>,
    /// Client connections: how many, frame size, request memory, timeouts.
    pub connection_limits: crate::server::limits::ConnectionLimits,
    /// Decompressed bytes ListOffsets-by-timestamp lookups hold at once.
    pub list_offsets_decompress_bytes: usize,
    /// Segment files kept open at once over every partition.
    pub open_segment_files_max: usize,
    /// `--disk-reserve-bytes`: free space partition data leaves to the Raft log and metadata.
    pub disk_reserve_bytes: u64,
    /// Period of retention enforcement.
    pub retention_check_interval: Duration,
    /// Period of lag sampling (and of log-offset polling).
    pub lag_sample_interval: Duration,
    /// Windows and limits of the lag tracker.
    pub lag: crate::lag::LagTrackerConfig,
    /// `--authorizer acl` with `--super-users` and `--allow-everyone-if-no-acl-found`;
    /// `None` for `--authorizer none`.
    pub authorizer: Option<raft_meta::cohort_app::acl::AuthorizerSettings>,
    /// How this node logs in on its peers' inter-broker listener (transaction markers, lag).
    pub inter_broker: std::sync::Arc<crate::client::auth::ClientSecurity>,
}

/// A listener as clients of it are told to reach this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdvertisedListener {
    /// Its security protocol (also its name).
    pub protocol: SecurityProtocol,
    /// Advertised host.
    pub host: String,
    /// Advertised port.
    pub port: i32,
}

/// Shortest lag sample interval: polling every partition's owner more often is load, not
/// information.
pub const LAG_SAMPLE_INTERVAL_MS_MIN: u64 = 10;
/// Longest lag sample interval (the console's history keeps a point per 5 s at most anyway).
pub const LAG_SAMPLE_INTERVAL_MS_MAX: u64 = 60_000;
/// Longest lag window, as `cohort groups --lag-status` allows.
pub const LAG_WINDOW_MS_MAX: u64 = 3_600_000;
/// Most observations per group partition in a window (each costs memory per partition).
pub const LAG_OBSERVATIONS_MAX: u64 = 1_000;
/// Largest `--lag-groups-max` (and `--lag-partitions-per-group-max`): ten times the default.
pub const LAG_GROUPS_MAX_MAX: usize = 100_000;
/// Largest `--lag-partitions-max`: ten times the default (each costs a window in memory).
pub const LAG_PARTITIONS_MAX_MAX: usize = 500_000;

/// Why a configuration cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Flags that break their rules ([`rules::serve_rules`]), every one of them.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<rules::Broken>),
    /// `--advertise` is not `HOST:PORT` (checked by the rules first; kept for callers that
    /// resolve without validating).
    #[error("--advertise {0:?} is not HOST:PORT")]
    BadAdvertise(String),
    /// `--inter-broker-command-config` became unusable between validation and resolution.
    #[error("--inter-broker-command-config: {0}")]
    InterBroker(String),
}

impl ServeArgs {
    /// Checks every flag against [`rules::serve_rules`] before anything starts: no file is
    /// created and no port bound for a command line that cannot run.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let broken = rules::broken(&rules::serve_rules(), self);
        if broken.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::Invalid(broken))
        }
    }
}

impl ServeArgs {
    /// The listeners to bind, in order: `--listeners`, else PLAINTEXT on `--listen`.
    pub fn listener_addrs(&self) -> Vec<ListenerAddr> {
        match self.listeners.as_deref().map(parse_list) {
            Some(Ok(list)) => list,
            // The rules refuse a bad list before anything starts.
            Some(Err(_)) | None => vec![ListenerAddr {
                protocol: SecurityProtocol::Plaintext,
                host: self.listen.ip().to_string(),
                port: self.listen.port(),
            }],
        }
    }

    /// `--advertised-listeners`, parsed (empty when not given or malformed; the rules refuse
    /// a malformed one).
    pub fn advertised_addrs(&self) -> Vec<ListenerAddr> {
        self.advertised_listeners
            .as_deref()
            .and_then(|s| parse_list(s).ok())
            .unwrap_or_default()
    }
}

impl ServeArgs {
    /// The inter-broker listener (`--inter-broker-listener-name`, else the first listener).
    pub fn inter_broker_listener(
        &self,
    ) -> Result<SecurityProtocol, crate::security::inter_broker::InterBrokerError> {
        let protocols: Vec<SecurityProtocol> =
            self.listener_addrs().iter().map(|l| l.protocol).collect();
        crate::security::inter_broker::listener(
            self.security.inter_broker_listener_name.as_deref(),
            &protocols,
        )
    }

    /// This node's client settings towards its peers (`--inter-broker-command-config`).
    pub fn inter_broker_security(
        &self,
    ) -> Result<crate::client::auth::ClientSecurity, crate::security::inter_broker::InterBrokerError>
    {
        crate::security::inter_broker::client_security(
            self.security.inter_broker_command_config.as_deref(),
            self.inter_broker_listener()?,
            !self.cluster.is_single(),
        )
    }
}

impl BrokerConfig {
    /// Resolves the flags once the Kafka listener is bound (`listened` is the real address,
    /// which differs from `--listen` when it asked for port 0). Validates them first.
    pub fn resolve(args: &ServeArgs, listened: SocketAddr) -> Result<BrokerConfig, ConfigError> {
        Self::resolve_bound(args, &[listened])
    }

    /// [`BrokerConfig::resolve`] with every listener's bound address, in
    /// [`ServeArgs::listener_addrs`] order.
    pub fn resolve_bound(
        args: &ServeArgs,
        bound: &[SocketAddr],
    ) -> Result<BrokerConfig, ConfigError> {
        args.validate()?;
        let advertised = args.advertised_addrs();
        let mut listeners = Vec::new();
        for (i, l) in args.listener_addrs().into_iter().enumerate() {
            let listened = bound.get(i).copied();
            let (host, port) = if let Some(a) = advertised.iter().find(|a| a.protocol == l.protocol)
            {
                (a.host.clone(), i32::from(a.port))
            } else if let (None, Some(a)) = (&args.listeners, &args.advertise) {
                split_host_port(a)?
            } else {
                let port = i32::from(listened.map_or(l.port, |b| b.port()));
                match listened {
                    Some(b) if b.ip().is_unspecified() => ("127.0.0.1".to_string(), port),
                    Some(b) => (b.ip().to_string(), port),
                    None => (l.host.clone(), port),
                }
            };
            listeners.push(AdvertisedListener {
                protocol: l.protocol,
                host,
                port,
            });
        }
        let (advertised_host, advertised_port) = listeners
            .first()
            .map(|l| (l.host.clone(), l.port))
            .ok_or_else(|| ConfigError::BadAdvertise(String::new()))?;
        Ok(BrokerConfig {
            data_dir: args.data_dir.clone(),
            node_id: args.node_id,
            advertised_host,
            advertised_port,
            listeners,
            auto_create_topics: args.auto_create_topics,
            default_num_partitions: args.num_partitions,
            txn_partition_verification: args.transaction_partition_verification_enable,
            flush_interval: args.flush_ms.map(Duration::from_millis),
            connection_limits: args
                .limits
                .connection_limits(args.max_connections, args.max_frame_bytes),
            list_offsets_decompress_bytes: args.limits.list_offsets_decompress_bytes_max,
            open_segment_files_max: args.limits.open_segment_files_max(),
            disk_reserve_bytes: args.limits.disk_reserve_bytes,
            retention_check_interval: Duration::from_millis(args.retention_check_ms),
            lag_sample_interval: Duration::from_millis(args.lag_sample_interval_ms),
            lag: lag_config(args),
            authorizer: crate::security::authorizer::settings_from_flags(
                &args.security.authorizer,
                &args.security.super_users,
                args.security.allow_everyone_if_no_acl_found,
            ),
            inter_broker: std::sync::Arc::new(
                args.inter_broker_security()
                    .map_err(|e| ConfigError::InterBroker(e.to_string()))?,
            ),
        })
    }
}

/// The lag tracker's windows and limits from their (validated) flags: the window holds every
/// sample it spans plus two.
fn lag_config(args: &ServeArgs) -> crate::lag::LagTrackerConfig {
    let observations = args.lag_window_ms / args.lag_sample_interval_ms.max(1) + 2;
    crate::lag::LagTrackerConfig {
        window_ms: args.lag_window_ms,
        observations_max: usize::try_from(observations).unwrap_or(usize::MAX),
        groups_max: args.lag_groups_max,
        partitions_max: args.lag_partitions_max,
        partitions_per_group_max: args.lag_partitions_per_group_max,
        ..crate::lag::LagTrackerConfig::default()
    }
}

fn split_host_port(s: &str) -> Result<(String, i32), ConfigError> {
    let bad = || ConfigError::BadAdvertise(s.to_string());
    let (host, port) = s.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok((host.to_string(), i32::from(port)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn parse(flags: &[&str]) -> ServeArgs {
        Wrap::parse_from(std::iter::once("serve").chain(flags.iter().copied())).args
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let a = parse(&[]);
        assert_eq!(a.data_dir, PathBuf::from("./data"));
        assert_eq!(a.listen.to_string(), "127.0.0.1:9092");
        assert_eq!(a.http.to_string(), "127.0.0.1:9644");
        assert_eq!(a.node_id, 1);
        assert!(a.auto_create_topics);
        assert_eq!(a.num_partitions, 1);
        assert_eq!(a.flush_ms, None);
        assert_eq!(a.lag_sample_interval_ms, 5_000);
        assert_eq!(a.lag_window_ms, 120_000);
        let c = BrokerConfig::resolve(&a, "127.0.0.1:9092".parse().unwrap()).unwrap();
        assert_eq!(c.lag_sample_interval, Duration::from_secs(5));
        assert_eq!(c.lag.window_ms, 120_000);
        assert_eq!(c.lag.observations_max, 26);
        assert_eq!(
            (
                c.lag.groups_max,
                c.lag.partitions_max,
                c.lag.partitions_per_group_max
            ),
            (10_000, 50_000, 10_000)
        );
    }

    #[test]
    fn lag_flags_are_bounded() {
        let resolve = |flags: &[&str]| {
            BrokerConfig::resolve(&parse(flags), "127.0.0.1:9092".parse().unwrap())
        };
        let ok = resolve(&["--lag-sample-interval-ms", "100", "--lag-window-ms", "2000"]).unwrap();
        assert_eq!(ok.lag.observations_max, 22);
        let small = resolve(&[
            "--lag-groups-max",
            "2",
            "--lag-partitions-max",
            "3",
            "--lag-partitions-per-group-max",
            "1",
        ])
        .unwrap();
        assert_eq!(
            (
                small.lag.groups_max,
                small.lag.partitions_max,
                small.lag.partitions_per_group_max
            ),
            (2, 3, 1)
        );
        for bad in [
            &["--lag-sample-interval-ms", "0"][..],
            &["--lag-sample-interval-ms", "60001"],
            &[
                "--lag-sample-interval-ms",
                "1000",
                "--lag-window-ms",
                "1999",
            ],
            &["--lag-window-ms", "3600001"],
            &["--lag-sample-interval-ms", "10", "--lag-window-ms", "10010"],
            &["--lag-groups-max", "0"],
            &["--lag-groups-max", "100001"],
            &["--lag-partitions-max", "0"],
            &["--lag-partitions-max", "500001"],
            &["--lag-partitions-per-group-max", "0"],
            &["--lag-partitions-per-group-max", "100001"],
        ] {
            let err = resolve(bad).unwrap_err().to_string();
            assert!(err.starts_with("--lag-"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn auto_create_can_be_turned_off() {
        assert!(!parse(&["--auto-create-topics=false"]).auto_create_topics);
        assert!(parse(&["--auto-create-topics"]).auto_create_topics);
    }

    #[test]
    fn every_listener_advertises_its_bound_address_unless_told_otherwise() {
        let a = parse(&[
            "--listeners",
            "SASL_SSL://0.0.0.0:0,PLAINTEXT://127.0.0.1:0",
            "--advertised-listeners",
            "SASL_SSL://kafka.example:9093",
            "--ssl-cert",
            "c.pem",
            "--ssl-key",
            "k.pem",
            "--advertise",
            "ignored.example:1",
        ]);
        let bound = [
            "0.0.0.0:40001".parse().unwrap(),
            "127.0.0.1:40002".parse().unwrap(),
        ];
        let c = BrokerConfig::resolve_bound(&a, &bound).unwrap();
        let l = |protocol, host: &str, port| AdvertisedListener {
            protocol,
            host: host.into(),
            port,
        };
        assert_eq!(
            c.listeners,
            vec![
                l(SecurityProtocol::SaslSsl, "kafka.example", 9093),
                l(SecurityProtocol::Plaintext, "127.0.0.1", 40002)
            ]
        );
        // The first listener is the node's Kafka address (what `--peers` names).
        assert_eq!(
            (c.advertised_host.as_str(), c.advertised_port),
            ("kafka.example", 9093)
        );
        // Without --listeners: one PLAINTEXT listener on --listen, --advertise as before.
        let a = parse(&["--listen", "0.0.0.0:0", "--advertise", "k.example:19092"]);
        let c = BrokerConfig::resolve(&a, "0.0.0.0:40003".parse().unwrap()).unwrap();
        assert_eq!(
            c.listeners,
            vec![l(SecurityProtocol::Plaintext, "k.example", 19092)]
        );
    }

    #[test]
    fn advertise_defaults_to_the_bound_address() {
        let a = parse(&["--listen", "127.0.0.1:0"]);
        let c = BrokerConfig::resolve(&a, "127.0.0.1:40001".parse().unwrap()).unwrap();
        assert_eq!(
            (c.advertised_host.as_str(), c.advertised_port),
            ("127.0.0.1", 40001)
        );
        let a = parse(&["--advertise", "kafka.example:19092"]);
        let c = BrokerConfig::resolve(&a, "0.0.0.0:9092".parse().unwrap()).unwrap();
        assert_eq!(
            (c.advertised_host.as_str(), c.advertised_port),
            ("kafka.example", 19092)
        );
        let a = parse(&["--advertise", "nonsense"]);
        assert!(BrokerConfig::resolve(&a, "0.0.0.0:9092".parse().unwrap()).is_err());
    }
}
