//! Start-up checks of `cohort serve`'s flags: one table, one line per rule.
//!
//! ```text
//!  clap parses (types)  ─>  serve_rules() checks (ranges, relations, zero)  ─>  Server::start
//!                                  │ any broken: every message on stderr, exit 2,
//!                                  └ nothing started (no lock file, no data dir, no port)
//! ```
//!
//! Why a table and not `value_parser` ranges: relations between flags (`min <= max`) and
//! checks that need another flag (`--peers` must name `--node-id`) live in the same place as
//! plain ranges, every message reads the same ("--flag must be ..., got X"), and a test walks
//! clap's own list of flags to make sure none is left without a rule.
//!
//! Adding a flag: add the field to [`ServeArgs`] (or a flattened group), then one line in
//! [`serve_rules`], then one `rejects!` line in the tests below.

use std::fmt::Display;
use std::ops::RangeInclusive;

use super::ServeArgs;
use crate::security::credentials::parse_scram_user;
use crate::security::http_basic::{check_file as check_basic_auth_file, HttpBasicAuthError};
use crate::security::listeners::parse_list;
use crate::security::principal::MappingRules;
use crate::security::sasl::{parse_mechanisms, SaslMechanism};

/// A week, in milliseconds: the longest period any periodic task may be given (a timer past
/// it is a typo, and `Instant + period` must not overflow).
pub const PERIOD_MS_MAX: u64 = 7 * 24 * 3_600_000;
/// Longest `--flush-ms`: an hour of acknowledged writes that a power cut may lose.
pub const FLUSH_MS_MAX: u64 = 3_600_000;
/// Shortest `--raft-heartbeat-ms`: below it the leader's heartbeats (each an AppendEntries
/// with that deadline) would time out behind one ordinary fsync.
pub const RAFT_HEARTBEAT_MS_MIN: u64 = 10;
/// Longest `--raft-election-timeout-ms` (and so heartbeat and spread): a minute without a leader.
pub const RAFT_TIMING_MS_MAX: u64 = 60_000;
/// Most client connections `--max-connections` may allow (each is a task and a descriptor).
pub const MAX_CONNECTIONS_MAX: usize = 1_000_000;
// The group coordinator's bounds are its replicated keys' (coordinator/src/config/keys.rs):
// a flag and an IncrementalAlterConfigs of the same setting accept the same values.
use coordinator::config::keys as group_keys;
/// Longest offset retention, in minutes.
pub const OFFSETS_RETENTION_MINUTES_MAX: i64 = group_keys::OFFSETS_RETENTION_MINUTES_MAX;
/// Largest `--offset-metadata-max-bytes`.
pub const OFFSET_METADATA_MAX_BYTES_MAX: usize = group_keys::OFFSET_METADATA_MAX_BYTES_MAX as usize;
/// Largest `--groups-max`.
pub const GROUPS_MAX_MAX: usize = group_keys::GROUPS_MAX_MAX as usize;
/// Largest `--offsets-per-group-max`.
pub const OFFSETS_PER_GROUP_MAX_MAX: usize = group_keys::OFFSETS_PER_GROUP_MAX_MAX as usize;
/// Longest initial rebalance delay.
pub const INITIAL_REBALANCE_DELAY_MS_MAX: i32 = group_keys::INITIAL_REBALANCE_DELAY_MS_MAX as i32;

/// A flag that breaks its rule: the message names the flag, what it must be, what it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag} must be {must_be}, got {value}")]
pub struct Broken {
    /// The flag, as typed on the command line (`--flush-ms`).
    pub flag: &'static str,
    /// What a good value is ("between 1 and 3600000").
    pub must_be: String,
    /// The value given.
    pub value: String,
}

/// Returns the value (as it should be shown) when the arguments break the rule.
type Check<A> = Box<dyn Fn(&A) -> Option<String> + Send + Sync>;

/// One rule about one flag.
pub struct Rule<A> {
    /// The flag the message names.
    pub flag: &'static str,
    /// What a good value is, as the message says it.
    pub must_be: String,
    check: Check<A>,
}

impl<A> Rule<A> {
    /// The flag's value lies in `range` (both ends included).
    pub fn range<T>(
        flag: &'static str,
        range: RangeInclusive<T>,
        get: impl Fn(&A) -> T + Send + Sync + 'static,
    ) -> Rule<A>
    where
        T: PartialOrd + Display + Copy + Send + Sync + 'static,
    {
        let must_be = format!("between {} and {}", range.start(), range.end());
        Rule::new(flag, must_be, move |a| {
            let v = get(a);
            (!range.contains(&v)).then(|| v.to_string())
        })
    }

    /// The flag's value, when it is given, lies in `range`.
    pub fn range_if_set<T>(
        flag: &'static str,
        range: RangeInclusive<T>,
        get: impl Fn(&A) -> Option<T> + Send + Sync + 'static,
    ) -> Rule<A>
    where
        T: PartialOrd + Display + Copy + Send + Sync + 'static,
    {
        let must_be = format!("between {} and {} when set", range.start(), range.end());
        Rule::new(flag, must_be, move |a| {
            get(a).filter(|v| !range.contains(v)).map(|v| v.to_string())
        })
    }

    /// The flag's value is at least `min` (for flags whose type already bounds them above).
    pub fn at_least<T>(
        flag: &'static str,
        min: T,
        get: impl Fn(&A) -> T + Send + Sync + 'static,
    ) -> Rule<A>
    where
        T: PartialOrd + Display + Copy + Send + Sync + 'static,
    {
        Rule::new(flag, format!("at least {min}"), move |a| {
            let v = get(a);
            (v < min).then(|| v.to_string())
        })
    }

    /// Anything else (a relation between flags, a format): `broken` returns the offending value.
    pub fn new(
        flag: &'static str,
        must_be: impl Into<String>,
        broken: impl Fn(&A) -> Option<String> + Send + Sync + 'static,
    ) -> Rule<A> {
        Rule {
            flag,
            must_be: must_be.into(),
            check: Box::new(broken),
        }
    }

    /// The message, if `args` break this rule.
    pub fn check(&self, args: &A) -> Option<Broken> {
        (self.check)(args).map(|value| Broken {
            flag: self.flag,
            must_be: self.must_be.clone(),
            value,
        })
    }
}

/// Every rule `args` break, in table order (all of them: an operator fixes a command line once).
pub fn broken<A>(rules: &[Rule<A>], args: &A) -> Vec<Broken> {
    rules.iter().filter_map(|r| r.check(args)).collect()
}

/// `HOST:PORT` with a host and a port number other than 0 (what clients or peers dial).
fn is_host_port(s: &str) -> bool {
    s.rsplit_once(':').is_some_and(|(h, p)| {
        let h = h.trim_start_matches('[').trim_end_matches(']');
        !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p != 0)
    })
}

/// `HOST:PORT` where port 0 (pick a free port) is allowed: what a listener binds.
fn is_bind_addr(s: &str) -> bool {
    s.rsplit_once(':').is_some_and(|(h, p)| {
        let h = h.trim_start_matches('[').trim_end_matches(']');
        !h.is_empty() && p.parse::<u16>().is_ok()
    })
}

/// The rules of `cohort serve`, one line each.
pub fn serve_rules() -> Vec<Rule<ServeArgs>> {
    use crate::config::{
        LAG_GROUPS_MAX_MAX, LAG_PARTITIONS_MAX_MAX, LAG_SAMPLE_INTERVAL_MS_MAX,
        LAG_SAMPLE_INTERVAL_MS_MIN, LAG_WINDOW_MS_MAX,
    };
    use crate::server::limits;
    vec![
        // --- where it lives and listens ---
        Rule::new(
            "--http",
            "another address than --listen",
            |a: &ServeArgs| (a.http.port() != 0 && a.http == a.listen).then(|| a.http.to_string()),
        ),
        Rule::new(
            "--http-basic-auth",
            "a readable file of NAME:PASSWORD lines, at least one",
            |a: &ServeArgs| {
                let path = a.http_basic_auth.as_ref()?;
                // The error names a bad line by number only: its text holds a password.
                let why = match check_basic_auth_file(path).err()? {
                    HttpBasicAuthError::File { source, .. } => source.to_string(),
                    HttpBasicAuthError::Empty { .. } => "no NAME:PASSWORD line".to_owned(),
                    HttpBasicAuthError::Random(e) => e.to_string(),
                };
                Some(format!("{:?} ({why})", path.display().to_string()))
            },
        ),
        Rule::new("--advertise", "HOST:PORT", |a: &ServeArgs| {
            a.advertise
                .as_ref()
                .filter(|s| !is_host_port(s))
                .map(|s| format!("{s:?}"))
        }),
        Rule::new(
            "--listeners",
            "PROTOCOL://HOST:PORT,... (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, each once)",
            |a: &ServeArgs| {
                a.listeners
                    .as_ref()
                    .filter(|s| parse_list(s).is_err())
                    .map(|s| format!("{s:?}"))
            },
        ),
        Rule::new(
            "--advertised-listeners",
            "PROTOCOL://HOST:PORT,... each protocol once, with a port, and one of the listeners'",
            |a: &ServeArgs| {
                let s = a.advertised_listeners.as_ref()?;
                let listeners = a.listener_addrs();
                let fits = parse_list(s).is_ok_and(|advertised| {
                    advertised
                        .iter()
                        .all(|x| x.port != 0 && listeners.iter().any(|l| l.protocol == x.protocol))
                });
                (!fits).then(|| format!("{s:?}"))
            },
        ),
        Rule::at_least("--node-id", 0, |a: &ServeArgs| a.node_id),
        // --- TLS and SASL (src/security) ---
        Rule::new(
            "--ssl-cert",
            "given (with --ssl-key) when an SSL or SASL_SSL listener exists",
            |a: &ServeArgs| {
                let tls = a.listener_addrs().iter().any(|l| l.protocol.is_tls());
                (tls && a.security.ssl_cert.is_none()).then(|| "nothing".to_owned())
            },
        ),
        Rule::new(
            "--ssl-key",
            "given exactly when --ssl-cert is",
            |a: &ServeArgs| {
                let s = &a.security;
                (s.ssl_cert.is_some() != s.ssl_key.is_some()).then(|| {
                    s.ssl_key.as_ref().map_or("nothing".to_owned(), |p| {
                        format!("{:?}", p.display().to_string())
                    })
                })
            },
        ),
        Rule::new(
            "--ssl-client-ca",
            "given only with --ssl-cert",
            |a: &ServeArgs| {
                let s = &a.security;
                s.ssl_client_ca
                    .as_ref()
                    .filter(|_| s.ssl_cert.is_none())
                    .map(|p| format!("{:?}", p.display().to_string()))
            },
        ),
        Rule::new(
            "--ssl-principal-mapping-rules",
            "DEFAULT or RULE:pattern/replacement/[LU], comma-separated",
            |a: &ServeArgs| {
                let r = &a.security.ssl_principal_mapping_rules;
                MappingRules::parse(r).is_err().then(|| format!("{r:?}"))
            },
        ),
        Rule::new(
            "--sasl-enabled-mechanisms",
            "a list of SCRAM-SHA-256, SCRAM-SHA-512, PLAIN, each once",
            |a: &ServeArgs| {
                let m = &a.security.sasl_enabled_mechanisms;
                parse_mechanisms(m).is_none().then(|| format!("{m:?}"))
            },
        ),
        Rule::new(
            "--sasl-plain-users",
            "given when PLAIN is enabled and a SASL listener exists",
            |a: &ServeArgs| {
                let s = &a.security;
                let sasl = a.listener_addrs().iter().any(|l| l.protocol.is_sasl());
                let plain = parse_mechanisms(&s.sasl_enabled_mechanisms)
                    .is_some_and(|m| m.contains(&SaslMechanism::Plain));
                (sasl && plain && s.sasl_plain_users.is_none()).then(|| "nothing".to_owned())
            },
        ),
        Rule::new(
            "--scram-user",
            "NAME:SCRAM-SHA-256:PASSWORD or NAME:SCRAM-SHA-512:PASSWORD",
            |a: &ServeArgs| {
                a.security
                    .scram_users
                    .iter()
                    .find(|u| parse_scram_user(&u.0).is_none())
                    // The name only: a password never reaches a message.
                    .map(|u| format!("one for {:?}", u.name()))
            },
        ),
        Rule::range(
            "--scram-iterations",
            crate::security::scram::ITERATIONS_MIN..=crate::security::scram::ITERATIONS_MAX,
            |a: &ServeArgs| a.security.scram_iterations,
        ),
        Rule::range(
            "--connection-failed-authentication-delay-ms",
            0..=crate::security::args::FAILED_AUTHENTICATION_DELAY_MS_MAX,
            |a: &ServeArgs| a.security.connection_failed_authentication_delay_ms,
        ),
        Rule::range(
            "--connections-max-reauth-ms",
            0..=crate::security::args::CONNECTIONS_MAX_REAUTH_MS_MAX,
            |a: &ServeArgs| a.security.connections_max_reauth_ms,
        ),
        Rule::range(
            "--authentication-timeout-ms",
            crate::security::args::AUTHENTICATION_TIMEOUT_MS_MIN
                ..=crate::security::args::AUTHENTICATION_TIMEOUT_MS_MAX,
            |a: &ServeArgs| a.security.authentication_timeout_ms,
        ),
        Rule::new("--authorizer", "none or acl", |a: &ServeArgs| {
            let v = &a.security.authorizer;
            (!matches!(v.as_str(), "none" | "acl")).then(|| format!("{v:?}"))
        }),
        Rule::new(
            "--super-users",
            "a `;`-separated list of principals, each TYPE:NAME (User:alice;User:bob), given \
             with --authorizer acl",
            |a: &ServeArgs| {
                let s = &a.security;
                let bad = crate::security::authorizer::parse_super_users(&s.super_users).is_none()
                    || (!s.super_users.is_empty() && s.authorizer != "acl");
                bad.then(|| format!("{:?}", s.super_users))
            },
        ),
        Rule::new(
            "--allow-everyone-if-no-acl-found",
            "given only with --authorizer acl",
            |a: &ServeArgs| {
                let s = &a.security;
                (s.allow_everyone_if_no_acl_found && s.authorizer != "acl")
                    .then(|| "--authorizer none".to_owned())
            },
        ),
        Rule::new(
            "--inter-broker-listener-name",
            "one of --listeners (peers are dialled at their address on the listener of that \
             name, which the cluster membership records)",
            |a: &ServeArgs| a.inter_broker_listener().err().map(|e| e.to_string()),
        ),
        Rule::new(
            "--inter-broker-command-config",
            "a readable client properties file whose security.protocol is the inter-broker \
             listener's, given in a cluster whose inter-broker listener is not PLAINTEXT",
            |a: &ServeArgs| {
                // A bad listener name is the rule above's to report.
                a.inter_broker_listener().ok()?;
                a.inter_broker_security().err().map(|e| e.to_string())
            },
        ),
        // --- topics and the data plane ---
        Rule::range(
            "--num-partitions",
            1..=crate::topics::MAX_PARTITIONS_PER_TOPIC,
            |a: &ServeArgs| a.num_partitions,
        ),
        // 0 made the maintenance task's interval panic, which silently stopped retention and
        // flushing for the life of the process.
        Rule::range_if_set("--flush-ms", 1..=FLUSH_MS_MAX, |a: &ServeArgs| a.flush_ms),
        Rule::range(
            "--max-frame-bytes",
            1024..=i32::MAX as usize,
            |a: &ServeArgs| a.max_frame_bytes,
        ),
        Rule::range(
            "--max-connections",
            1..=MAX_CONNECTIONS_MAX,
            |a: &ServeArgs| a.max_connections,
        ),
        Rule::range(
            "--retention-check-ms",
            1..=PERIOD_MS_MAX,
            |a: &ServeArgs| a.retention_check_ms,
        ),
        // --- what clients can make the broker hold (docs/decisions/0111-resource-limits.md) ---
        Rule::new(
            "--queued-max-request-bytes-per-connection",
            "at least --max-frame-bytes (one largest request must fit)",
            |a: &ServeArgs| {
                let per_connection = a.limits.per_connection_bytes(a.max_frame_bytes);
                (per_connection < a.max_frame_bytes).then(|| per_connection.to_string())
            },
        ),
        Rule::new(
            "--queued-max-request-bytes",
            "at least --queued-max-request-bytes-per-connection (default --max-frame-bytes)",
            |a: &ServeArgs| {
                let per_connection = a.limits.per_connection_bytes(a.max_frame_bytes);
                (a.limits.queued_max_request_bytes < per_connection)
                    .then(|| a.limits.queued_max_request_bytes.to_string())
            },
        ),
        Rule::range(
            "--connections-max-idle-ms",
            limits::IDLE_MS_MIN..=limits::IDLE_MS_MAX,
            |a: &ServeArgs| a.limits.connections_max_idle_ms,
        ),
        Rule::range(
            "--connections-send-timeout-ms",
            limits::SEND_MS_MIN..=limits::SEND_MS_MAX,
            |a: &ServeArgs| a.limits.connections_send_timeout_ms,
        ),
        Rule::range(
            "--request-receive-timeout-ms",
            limits::SEND_MS_MIN..=limits::SEND_MS_MAX,
            |a: &ServeArgs| a.limits.request_receive_timeout_ms,
        ),
        Rule::range_if_set(
            "--open-segment-files-max",
            limits::OPEN_FILES_MIN..=limits::OPEN_FILES_MAX,
            |a: &ServeArgs| a.limits.open_segment_files_max,
        ),
        Rule::range(
            "--disk-reserve-bytes",
            0..=limits::DISK_RESERVE_BYTES_MAX,
            |a: &ServeArgs| a.limits.disk_reserve_bytes,
        ),
        Rule::range(
            "--list-offsets-decompress-bytes-max",
            limits::DECOMPRESS_MIN..=protocol::batch::MAX_DECOMPRESSED_BYTES,
            |a: &ServeArgs| a.limits.list_offsets_decompress_bytes_max,
        ),
        // --- lag tracking ---
        Rule::range(
            "--lag-sample-interval-ms",
            LAG_SAMPLE_INTERVAL_MS_MIN..=LAG_SAMPLE_INTERVAL_MS_MAX,
            |a: &ServeArgs| a.lag_sample_interval_ms,
        ),
        Rule::new(
            "--lag-window-ms",
            format!(
                "at least twice and at most {} times --lag-sample-interval-ms, and at most \
                 {LAG_WINDOW_MS_MAX}",
                crate::config::LAG_OBSERVATIONS_MAX
            ),
            |a: &ServeArgs| {
                let (w, i) = (a.lag_window_ms, a.lag_sample_interval_ms.max(1));
                let fits = w >= i.saturating_mul(2)
                    && w <= LAG_WINDOW_MS_MAX
                    && w / i <= crate::config::LAG_OBSERVATIONS_MAX;
                (!fits).then(|| w.to_string())
            },
        ),
        Rule::range(
            "--lag-groups-max",
            1..=LAG_GROUPS_MAX_MAX,
            |a: &ServeArgs| a.lag_groups_max,
        ),
        Rule::range(
            "--lag-partitions-max",
            1..=LAG_PARTITIONS_MAX_MAX,
            |a: &ServeArgs| a.lag_partitions_max,
        ),
        Rule::range(
            "--lag-partitions-per-group-max",
            1..=LAG_GROUPS_MAX_MAX,
            |a: &ServeArgs| a.lag_partitions_per_group_max,
        ),
        // --- the Raft meta service ---
        Rule::new("--raft", "HOST:PORT (port 0 picks one)", |a: &ServeArgs| {
            (!is_bind_addr(&a.cluster.raft_listen)).then(|| format!("{:?}", a.cluster.raft_listen))
        }),
        Rule::new("--advertise-raft", "HOST:PORT", |a: &ServeArgs| {
            a.cluster
                .advertise_raft
                .as_ref()
                .filter(|s| !is_host_port(s))
                .map(|s| format!("{s:?}"))
        }),
        Rule::new(
            "--peers",
            "id@raft_host:port@kafka_host:port,... naming --node-id once, each id once",
            |a: &ServeArgs| {
                let node = u64::try_from(a.node_id).ok()?;
                let peers = match a.cluster.bootstrap(node) {
                    Ok(raft_meta::Bootstrap::Cluster(p)) => p,
                    Ok(_) => return None,
                    Err(_) => return Some(format!("{:?}", a.cluster.peers.join(","))),
                };
                let mut ids: Vec<u64> = peers.iter().map(|p| p.node_id).collect();
                ids.sort_unstable();
                ids.dedup();
                (ids.len() != peers.len()).then(|| format!("{:?}", a.cluster.peers.join(",")))
            },
        ),
        Rule::new(
            "--cluster-secret-file",
            format!(
                "a regular file only its owner may read (mode 600) holding {} to {} bytes",
                raft_meta::network::secret::SECRET_BYTES_MIN,
                raft_meta::network::secret::SECRET_BYTES_MAX
            ),
            |a: &ServeArgs| {
                // The error names the path and the rule broken, never the file's contents.
                a.cluster.peer_auth().err().map(|e| e.to_string())
            },
        ),
        Rule::new("--raft-store", "segments or sled", |a: &ServeArgs| {
            a.cluster
                .store()
                .is_err()
                .then(|| format!("{:?}", a.cluster.raft_store))
        }),
        Rule::at_least("--raft-snapshot-every-entries", 1, |a: &ServeArgs| {
            a.cluster.raft_snapshot_every_entries
        }),
        Rule::range("--raft-batch-max-commands", 1..=65_536, |a: &ServeArgs| {
            a.cluster.raft_batch_max_commands
        }),
        Rule::range("--raft-batches-in-flight", 1..=64, |a: &ServeArgs| {
            a.cluster.raft_batches_in_flight
        }),
        // Bounded above through the spread and the timeout, which must exceed it in turn
        // (openraft's rules): one message per broken relation.
        Rule::at_least(
            "--raft-heartbeat-ms",
            RAFT_HEARTBEAT_MS_MIN,
            |a: &ServeArgs| a.cluster.raft_heartbeat_ms,
        ),
        Rule::new(
            "--raft-election-jitter-ms",
            "above --raft-heartbeat-ms",
            |a: &ServeArgs| {
                let c = &a.cluster;
                (c.raft_election_jitter_ms <= c.raft_heartbeat_ms)
                    .then(|| c.raft_election_jitter_ms.to_string())
            },
        ),
        Rule::new(
            "--raft-election-timeout-ms",
            format!("above --raft-election-jitter-ms and at most {RAFT_TIMING_MS_MAX}"),
            |a: &ServeArgs| {
                let c = &a.cluster;
                (c.raft_election_timeout_ms <= c.raft_election_jitter_ms
                    || c.raft_election_timeout_ms > RAFT_TIMING_MS_MAX)
                    .then(|| c.raft_election_timeout_ms.to_string())
            },
        ),
        Rule::range(
            "--raft-connections-max",
            1..=limits::RAFT_CONNECTIONS_MAX_MAX,
            |a: &ServeArgs| a.cluster.peer_port.raft_connections_max,
        ),
        Rule::new(
            "--raft-connections-per-address-max",
            "between 1 and --raft-connections-max",
            |a: &ServeArgs| {
                let p = &a.cluster.peer_port;
                (!(1..=p.raft_connections_max).contains(&p.raft_connections_per_address_max))
                    .then(|| p.raft_connections_per_address_max.to_string())
            },
        ),
        Rule::range(
            "--raft-handshake-timeout-ms",
            limits::RAFT_HANDSHAKE_MS_MIN..=limits::RAFT_HANDSHAKE_MS_MAX,
            |a: &ServeArgs| a.cluster.peer_port.raft_handshake_timeout_ms,
        ),
        Rule::range(
            "--raft-connections-max-idle-ms",
            raft_meta::network::admission::IDLE_TIMEOUT_MIN.as_millis() as u64
                ..=limits::IDLE_MS_MAX,
            |a: &ServeArgs| a.cluster.peer_port.raft_connections_max_idle_ms,
        ),
        // --- the group coordinator (Kafka's broker configs of the same names) ---
        Rule::range(
            "--group-initial-rebalance-delay-ms",
            0..=INITIAL_REBALANCE_DELAY_MS_MAX,
            |a: &ServeArgs| a.group.group_initial_rebalance_delay_ms,
        ),
        Rule::at_least("--group-min-session-timeout-ms", 1, |a: &ServeArgs| {
            a.group.group_min_session_timeout_ms
        }),
        Rule::new(
            "--group-max-session-timeout-ms",
            "at least --group-min-session-timeout-ms",
            |a: &ServeArgs| {
                let g = &a.group;
                (g.group_max_session_timeout_ms < g.group_min_session_timeout_ms)
                    .then(|| g.group_max_session_timeout_ms.to_string())
            },
        ),
        Rule::at_least("--group-max-size", 1, |a: &ServeArgs| {
            a.group.group_max_size
        }),
        Rule::range(
            "--offsets-retention-minutes",
            1..=OFFSETS_RETENTION_MINUTES_MAX,
            |a: &ServeArgs| a.group.offsets_retention_minutes,
        ),
        Rule::range(
            "--offsets-retention-check-interval-ms",
            1..=PERIOD_MS_MAX as i64,
            |a: &ServeArgs| a.group.offsets_retention_check_interval_ms,
        ),
        Rule::range(
            "--offset-metadata-max-bytes",
            0..=OFFSET_METADATA_MAX_BYTES_MAX,
            |a: &ServeArgs| a.group.offset_metadata_max_bytes,
        ),
        // Cohort's count limits (docs/decisions/0113-group-count-limits.md): 0 would refuse
        // every group; the ceilings are a hundred times the defaults.
        Rule::range("--groups-max", 1..=GROUPS_MAX_MAX, |a: &ServeArgs| {
            a.group.groups_max
        }),
        Rule::range(
            "--offsets-per-group-max",
            1..=OFFSETS_PER_GROUP_MAX_MAX,
            |a: &ServeArgs| a.group.offsets_per_group_max,
        ),
    ]
}

/// Flags of `cohort serve` that need no rule, and why (the test below fails for any flag that
/// is in neither list).
#[cfg(test)]
const NO_RULE: &[(&str, &str)] = &[
    (
        "--data-dir",
        "any directory; clap refuses an empty one, the lock file names a bad one",
    ),
    ("--listen", "clap parses a socket address; port 0 picks one"),
    ("--auto-create-topics", "a boolean"),
    ("--transaction-partition-verification-enable", "a boolean"),
    ("--join", "a boolean; clap refuses it with --peers"),
    ("--log-format", "clap refuses anything but text or json"),
    (
        "--group-consumer-migration-policy",
        "clap refuses anything but Kafka's four policy names",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn parse(flags: &[&str]) -> ServeArgs {
        match Wrap::try_parse_from(std::iter::once("serve").chain(flags.iter().copied())) {
            Ok(w) => w.args,
            Err(e) => panic!("{flags:?} does not parse: {e}"),
        }
    }

    fn broken_by(flags: &[&str]) -> Vec<Broken> {
        broken(&serve_rules(), &parse(flags))
    }

    #[test]
    fn the_defaults_break_no_rule() {
        assert_eq!(broken_by(&[]), vec![]);
    }

    #[test]
    fn every_flag_has_a_rule_or_a_reason_not_to() {
        let rules: Vec<&str> = serve_rules().iter().map(|r| r.flag).collect();
        let command = Wrap::command();
        let flags: Vec<String> = command
            .get_arguments()
            .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        for (flag, _) in NO_RULE {
            assert!(
                flags.iter().any(|f| f == flag),
                "NO_RULE names {flag}, no such flag"
            );
        }
        for flag in flags {
            let listed = rules.contains(&flag.as_str()) || NO_RULE.iter().any(|(f, _)| *f == flag);
            assert!(
                listed,
                "{flag} has no rule in serve_rules() (src/config/rules.rs) and is not in NO_RULE"
            );
        }
    }

    #[test]
    fn every_broken_rule_is_reported_at_once() {
        let all = broken_by(&["--flush-ms", "0", "--num-partitions", "0"]);
        let flags: Vec<&str> = all.iter().map(|b| b.flag).collect();
        assert_eq!(flags, ["--num-partitions", "--flush-ms"]);
        assert_eq!(
            all[1].to_string(),
            "--flush-ms must be between 1 and 3600000 when set, got 0"
        );
    }

    /// One test per rule: each `bad` command line breaks exactly that rule (and names its
    /// flag); each `good` one, at the edge of the range, breaks none.
    macro_rules! rejects {
        ($name:ident, $flag:literal, bad: [$($bad:expr),+ $(,)?], good: [$($good:expr),+ $(,)?]) => {
            #[test]
            fn $name() {
                for bad in [$(&$bad[..]),+] {
                    let flags: Vec<&str> = broken_by(bad).iter().map(|b| b.flag).collect();
                    assert_eq!(flags, [$flag], "{bad:?}");
                }
                for good in [$(&$good[..]),+] {
                    assert_eq!(broken_by(good), vec![], "{good:?}");
                }
            }
        };
    }

    rejects!(http_differs_from_listen, "--http",
        bad: [["--listen", "127.0.0.1:9092", "--http", "127.0.0.1:9092"]],
        good: [["--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"]]);
    /// `--http-basic-auth` reads its file: each case writes one into a fresh directory.
    fn basic_auth_broken_by(contents: Option<&str>) -> Vec<Broken> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("http-users");
        if let Some(text) = contents {
            std::fs::write(&file, text).unwrap();
        }
        broken_by(&["--http-basic-auth", file.to_str().unwrap()])
    }

    fn assert_basic_auth_rule(broken: &[Broken], why: &str) {
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert_eq!(broken[0].flag, "--http-basic-auth");
        assert!(broken[0].value.contains(why), "{:?}", broken[0].value);
    }

    #[test]
    fn http_basic_auth_file_exists() {
        assert_basic_auth_rule(&basic_auth_broken_by(None), "cannot be read");
    }

    #[test]
    fn http_basic_auth_file_is_readable() {
        // A directory cannot be read as a file (whatever the user's rights, root included).
        let dir = tempfile::tempdir().unwrap();
        let broken = broken_by(&["--http-basic-auth", dir.path().to_str().unwrap()]);
        assert_basic_auth_rule(&broken, "cannot be read");
    }

    #[test]
    fn http_basic_auth_file_is_not_empty() {
        assert_basic_auth_rule(&basic_auth_broken_by(Some("")), "no NAME:PASSWORD line");
        assert_basic_auth_rule(
            &basic_auth_broken_by(Some("# only a comment\n\n")),
            "no NAME:PASSWORD line",
        );
    }

    #[test]
    fn http_basic_auth_lines_are_name_password_and_never_shown() {
        let broken = basic_auth_broken_by(Some("prom:fine\nhunter2-without-name\n"));
        assert_basic_auth_rule(&broken, "line 2 is not NAME:PASSWORD");
        assert!(!broken[0].to_string().contains("hunter2"), "{}", broken[0]);
        assert_basic_auth_rule(&basic_auth_broken_by(Some(":nameless\n")), "line 1");
        assert_basic_auth_rule(&basic_auth_broken_by(Some("nopassword:\n")), "line 1");
        assert_eq!(
            basic_auth_broken_by(Some("# ops\nprom:pw:with:colons\n")),
            vec![]
        );
    }

    rejects!(advertise_is_host_port, "--advertise",
        bad: [["--advertise", "nonsense"], ["--advertise", "h:0"], ["--advertise", ":9092"]],
        good: [["--advertise", "kafka.example:19092"], ["--advertise", "[::1]:9092"]]);
    rejects!(listeners_are_protocol_host_port, "--listeners",
        bad: [["--listeners", "TLS://h:1"], ["--listeners", "SSL://h"],
              ["--listeners", "PLAINTEXT://h:1,PLAINTEXT://h:2"], ["--listeners", ","]],
        good: [["--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://[::1]:9094"]]);
    rejects!(advertised_listeners_name_a_listener, "--advertised-listeners",
        bad: [["--advertised-listeners", "SSL://h:9093"],
              ["--listeners", "SASL_PLAINTEXT://0.0.0.0:0", "--advertised-listeners", "SASL_PLAINTEXT://h:0"],
              ["--advertised-listeners", "PLAINTEXT://h"]],
        good: [["--advertised-listeners", "PLAINTEXT://kafka.example:9092"],
               ["--listeners", "PLAINTEXT://0.0.0.0:0,SASL_PLAINTEXT://0.0.0.0:0",
                "--advertised-listeners", "SASL_PLAINTEXT://k:1"]]);
    rejects!(tls_listeners_need_a_certificate, "--ssl-cert",
        bad: [["--listeners", "SSL://127.0.0.1:0"],
              ["--listeners", "PLAINTEXT://h:0,SASL_SSL://h:0"]],
        good: [["--listeners", "SSL://h:0", "--ssl-cert", "c.pem", "--ssl-key", "k.pem"],
               ["--listeners", "SASL_PLAINTEXT://h:0"]]);
    rejects!(ssl_key_comes_with_the_certificate, "--ssl-key",
        bad: [["--ssl-cert", "c.pem"], ["--ssl-key", "k.pem"]],
        good: [["--ssl-cert", "c.pem", "--ssl-key", "k.pem"]]);
    rejects!(ssl_client_ca_needs_a_certificate, "--ssl-client-ca",
        bad: [["--ssl-client-ca", "ca.pem"]],
        good: [["--ssl-client-ca", "ca.pem", "--ssl-cert", "c.pem", "--ssl-key", "k.pem"]]);
    rejects!(principal_mapping_rules_parse, "--ssl-principal-mapping-rules",
        bad: [["--ssl-principal-mapping-rules", "RULE:^CN=(.*$/$1/"],
              ["--ssl-principal-mapping-rules", "NONE"]],
        good: [["--ssl-principal-mapping-rules", "RULE:^CN=(.*?),OU=(.*?)$/$1/L,DEFAULT"]]);
    rejects!(sasl_mechanisms_are_known, "--sasl-enabled-mechanisms",
        bad: [["--sasl-enabled-mechanisms", "GSSAPI"], ["--sasl-enabled-mechanisms", ""],
              ["--sasl-enabled-mechanisms", "PLAIN,PLAIN"]],
        good: [["--sasl-enabled-mechanisms", "PLAIN,SCRAM-SHA-512"]]);
    rejects!(plain_needs_its_users, "--sasl-plain-users",
        bad: [["--listeners", "SASL_PLAINTEXT://h:0", "--sasl-enabled-mechanisms", "PLAIN"]],
        good: [["--listeners", "SASL_PLAINTEXT://h:0", "--sasl-enabled-mechanisms", "PLAIN",
                "--sasl-plain-users", "users"],
               ["--sasl-enabled-mechanisms", "PLAIN"]]);
    rejects!(scram_users_are_name_mechanism_password, "--scram-user",
        bad: [["--scram-user", "alice:SCRAM-SHA-1:pw"], ["--scram-user", "alice:pw"],
              ["--scram-user", "a:SCRAM-SHA-256:pw", "--scram-user", ":SCRAM-SHA-256:pw"]],
        good: [["--scram-user", "alice:SCRAM-SHA-256:p:w", "--scram-user", "b:SCRAM-SHA-512:x"]]);
    rejects!(scram_iterations_are_kafkas, "--scram-iterations",
        bad: [["--scram-iterations", "4095"], ["--scram-iterations", "16385"]],
        good: [["--scram-iterations", "4096"], ["--scram-iterations", "16384"]]);
    rejects!(failed_authentication_delay_is_bounded, "--connection-failed-authentication-delay-ms",
        bad: [["--connection-failed-authentication-delay-ms", "60001"]],
        good: [["--connection-failed-authentication-delay-ms", "0"],
               ["--connection-failed-authentication-delay-ms", "60000"]]);
    rejects!(authentication_timeout_is_bounded, "--authentication-timeout-ms",
        bad: [["--authentication-timeout-ms", "99"], ["--authentication-timeout-ms", "3600001"]],
        good: [["--authentication-timeout-ms", "100"], ["--authentication-timeout-ms", "3600000"]]);
    rejects!(max_reauth_is_bounded, "--connections-max-reauth-ms",
        bad: [["--connections-max-reauth-ms", "31536000001"]],
        good: [["--connections-max-reauth-ms", "0"],
               ["--connections-max-reauth-ms", "31536000000"]]);
    rejects!(inter_broker_listener_is_one_of_the_listeners, "--inter-broker-listener-name",
        bad: [["--inter-broker-listener-name", "SSL"],
              ["--listeners", "SASL_PLAINTEXT://h:0,PLAINTEXT://h:0",
               "--inter-broker-listener-name", "SASL_SSL"],
              ["--inter-broker-listener-name", "INTERNAL"]],
        good: [["--inter-broker-listener-name", "PLAINTEXT"],
               ["--listeners", "SASL_PLAINTEXT://h:0,PLAINTEXT://h:0",
                "--inter-broker-listener-name", "sasl_plaintext"],
               ["--listeners", "SASL_PLAINTEXT://h:0,PLAINTEXT://h:0",
                "--inter-broker-listener-name", "PLAINTEXT"]]);
    rejects!(cluster_nodes_have_an_inter_broker_credential, "--inter-broker-command-config",
        bad: [["--node-id", "1", "--peers", "1@h:1@h:2", "--listeners", "SASL_PLAINTEXT://h:0"],
              ["--inter-broker-command-config", "/nonexistent/node.properties"]],
        good: [["--node-id", "1", "--peers", "1@h:1@h:2", "--listeners", "PLAINTEXT://h:0"],
               ["--listeners", "SASL_PLAINTEXT://h:0"]]);

    #[test]
    fn inter_broker_credential_speaks_the_listener_protocol() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("node.properties");
        std::fs::write(&file, "security.protocol=PLAINTEXT\n").unwrap();
        let path = file.to_str().unwrap();
        let cluster = ["--node-id", "1", "--peers", "1@h:1@h:2"];
        let mut bad = cluster.to_vec();
        bad.extend([
            "--listeners",
            "SASL_PLAINTEXT://h:0",
            "--inter-broker-command-config",
            path,
        ]);
        let broken = broken_by(&bad);
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert_eq!(broken[0].flag, "--inter-broker-command-config");
        assert!(
            broken[0].value.contains("security.protocol=PLAINTEXT"),
            "{}",
            broken[0]
        );
        let mut good = cluster.to_vec();
        good.extend([
            "--listeners",
            "PLAINTEXT://h:0",
            "--inter-broker-command-config",
            path,
        ]);
        assert_eq!(broken_by(&good), vec![]);
    }
    rejects!(authorizer_is_none_or_acl, "--authorizer",
        bad: [["--authorizer", "AclAuthorizer"], ["--authorizer", ""]],
        good: [["--authorizer", "none"], ["--authorizer", "acl"]]);
    rejects!(super_users_are_principals, "--super-users",
        bad: [["--authorizer", "acl", "--super-users", "alice"],
              ["--authorizer", "acl", "--super-users", "User:a;bob"],
              ["--super-users", "User:a"]],
        good: [["--authorizer", "acl", "--super-users", "User:a;User:b"],
               ["--authorizer", "acl", "--super-users", "User:ANONYMOUS"]]);
    rejects!(allow_everyone_needs_the_acl_authorizer, "--allow-everyone-if-no-acl-found",
        bad: [["--allow-everyone-if-no-acl-found"]],
        good: [["--authorizer", "acl", "--allow-everyone-if-no-acl-found"]]);
    rejects!(node_id_is_not_negative, "--node-id",
        bad: [["--node-id=-1"]], good: [["--node-id", "0"]]);
    rejects!(num_partitions_is_bounded, "--num-partitions",
        bad: [["--num-partitions", "0"], ["--num-partitions", "10001"]],
        good: [["--num-partitions", "1"], ["--num-partitions", "10000"]]);
    rejects!(flush_ms_is_not_zero, "--flush-ms",
        bad: [["--flush-ms", "0"], ["--flush-ms", "3600001"]],
        good: [["--flush-ms", "1"], ["--flush-ms", "3600000"]]);
    rejects!(max_frame_bytes_is_bounded, "--max-frame-bytes",
        // A frame that large needs request memory for it (--queued-max-request-bytes' rule),
        // given here so that only this rule is broken.
        bad: [["--max-frame-bytes", "1023"],
              ["--max-frame-bytes", "2147483648", "--queued-max-request-bytes", "4294967296"]],
        good: [["--max-frame-bytes", "1024"],
               ["--max-frame-bytes", "2147483647", "--queued-max-request-bytes", "2147483647"]]);
    rejects!(max_connections_is_bounded, "--max-connections",
        bad: [["--max-connections", "0"], ["--max-connections", "1000001"]],
        good: [["--max-connections", "1"]]);
    rejects!(retention_check_ms_is_not_zero, "--retention-check-ms",
        bad: [["--retention-check-ms", "0"], ["--retention-check-ms", "604800001"]],
        good: [["--retention-check-ms", "1"], ["--retention-check-ms", "604800000"]]);
    rejects!(per_connection_request_memory_fits_a_frame, "--queued-max-request-bytes-per-connection",
        bad: [["--max-frame-bytes", "2048", "--queued-max-request-bytes-per-connection", "2047"]],
        good: [["--max-frame-bytes", "2048", "--queued-max-request-bytes-per-connection", "2048"]]);
    rejects!(request_memory_fits_a_connection, "--queued-max-request-bytes",
        bad: [["--queued-max-request-bytes", "104857599"],
              ["--queued-max-request-bytes", "4096",
               "--queued-max-request-bytes-per-connection", "4097", "--max-frame-bytes", "4096"]],
        good: [["--queued-max-request-bytes", "104857600"],
               ["--queued-max-request-bytes", "4096", "--max-frame-bytes", "4096"]]);
    rejects!(idle_timeout_is_bounded, "--connections-max-idle-ms",
        bad: [["--connections-max-idle-ms", "999"], ["--connections-max-idle-ms", "604800001"]],
        good: [["--connections-max-idle-ms", "1000"], ["--connections-max-idle-ms", "604800000"]]);
    rejects!(send_timeout_is_bounded, "--connections-send-timeout-ms",
        bad: [["--connections-send-timeout-ms", "99"], ["--connections-send-timeout-ms", "3600001"]],
        good: [["--connections-send-timeout-ms", "100"], ["--connections-send-timeout-ms", "3600000"]]);
    rejects!(receive_timeout_is_bounded, "--request-receive-timeout-ms",
        bad: [["--request-receive-timeout-ms", "99"], ["--request-receive-timeout-ms", "3600001"]],
        good: [["--request-receive-timeout-ms", "100"], ["--request-receive-timeout-ms", "3600000"]]);
    rejects!(open_segment_files_is_bounded, "--open-segment-files-max",
        bad: [["--open-segment-files-max", "15"], ["--open-segment-files-max", "1000001"]],
        good: [["--open-segment-files-max", "16"], ["--open-segment-files-max", "1000000"]]);
    rejects!(disk_reserve_is_bounded, "--disk-reserve-bytes",
        bad: [["--disk-reserve-bytes", "1099511627777"]],
        good: [["--disk-reserve-bytes", "0"], ["--disk-reserve-bytes", "1099511627776"]]);
    rejects!(list_offsets_budget_is_bounded, "--list-offsets-decompress-bytes-max",
        bad: [["--list-offsets-decompress-bytes-max", "1048575"],
              ["--list-offsets-decompress-bytes-max", "268435457"]],
        good: [["--list-offsets-decompress-bytes-max", "1048576"],
               ["--list-offsets-decompress-bytes-max", "268435456"]]);
    rejects!(lag_sample_interval_is_bounded, "--lag-sample-interval-ms",
        bad: [["--lag-sample-interval-ms", "9", "--lag-window-ms", "1000"],
              ["--lag-sample-interval-ms", "60001", "--lag-window-ms", "3600000"]],
        good: [["--lag-sample-interval-ms", "10", "--lag-window-ms", "1000"]]);
    rejects!(lag_window_spans_two_to_a_thousand_samples, "--lag-window-ms",
        bad: [["--lag-sample-interval-ms", "1000", "--lag-window-ms", "1999"],
              ["--lag-window-ms", "3600001"],
              ["--lag-sample-interval-ms", "10", "--lag-window-ms", "10010"]],
        good: [["--lag-sample-interval-ms", "1000", "--lag-window-ms", "2000"],
               ["--lag-sample-interval-ms", "10", "--lag-window-ms", "10000"]]);
    rejects!(lag_groups_max_is_bounded, "--lag-groups-max",
        bad: [["--lag-groups-max", "0"], ["--lag-groups-max", "100001"]],
        good: [["--lag-groups-max", "1"], ["--lag-groups-max", "100000"]]);
    rejects!(lag_partitions_max_is_bounded, "--lag-partitions-max",
        bad: [["--lag-partitions-max", "0"], ["--lag-partitions-max", "500001"]],
        good: [["--lag-partitions-max", "500000"]]);
    rejects!(lag_partitions_per_group_max_is_bounded, "--lag-partitions-per-group-max",
        bad: [["--lag-partitions-per-group-max", "0"],
              ["--lag-partitions-per-group-max", "100001"]],
        good: [["--lag-partitions-per-group-max", "1"]]);
    rejects!(raft_is_a_bind_address, "--raft",
        bad: [["--raft", "nowhere"], ["--raft", ":7000"]],
        good: [["--raft", "0.0.0.0:0"], ["--raft", "localhost:7000"]]);
    rejects!(advertise_raft_is_host_port, "--advertise-raft",
        bad: [["--advertise-raft", "h:0"], ["--advertise-raft", "h"]],
        good: [["--advertise-raft", "h:7000"]]);
    rejects!(peers_are_well_formed_and_name_this_node_once, "--peers",
        bad: [["--peers", "1@x"],
              ["--node-id", "4", "--peers", "1@h:1@h:2,2@h:3@h:4"],
              ["--peers", "1@h:1@h:2,1@h:3@h:4"]],
        good: [["--node-id", "2", "--peers", "1@h:1@h:2,2@h:3@h:4"]]);
    /// `--cluster-secret-file` reads its file: each case writes one into a fresh directory
    /// with `mode`.
    fn secret_broken_by(contents: Option<&[u8]>, mode: u32) -> Vec<Broken> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cluster.secret");
        if let Some(bytes) = contents {
            std::fs::write(&file, bytes).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        broken_by(&["--cluster-secret-file", file.to_str().unwrap()])
    }

    fn assert_secret_rule(broken: &[Broken], why: &str) {
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert_eq!(broken[0].flag, "--cluster-secret-file");
        assert!(broken[0].value.contains(why), "{:?}", broken[0].value);
    }

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef\n";

    #[test]
    fn cluster_secret_file_exists() {
        assert_secret_rule(&secret_broken_by(None, 0o600), "cannot be read");
    }

    #[test]
    fn cluster_secret_file_is_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let broken = broken_by(&["--cluster-secret-file", dir.path().to_str().unwrap()]);
        assert_secret_rule(&broken, "not a regular file");
    }

    #[test]
    fn cluster_secret_file_is_readable_by_its_owner_only() {
        assert_secret_rule(&secret_broken_by(Some(SECRET), 0o644), "mode 0644");
        assert_secret_rule(&secret_broken_by(Some(SECRET), 0o660), "mode 0660");
        assert_eq!(secret_broken_by(Some(SECRET), 0o600), vec![]);
        assert_eq!(secret_broken_by(Some(SECRET), 0o400), vec![]);
    }

    #[test]
    fn cluster_secret_file_holds_32_bytes_at_least_and_never_shows_them() {
        let broken = secret_broken_by(Some(b"short-secret-value\n"), 0o600);
        assert_secret_rule(&broken, "18 bytes, fewer than 32");
        assert!(!broken[0].to_string().contains("short-secret-value"));
        assert_secret_rule(&secret_broken_by(Some(b""), 0o600), "0 bytes");
    }

    #[test]
    fn cluster_secret_file_holds_4096_bytes_at_most() {
        let huge = vec![b'k'; 4097];
        assert_secret_rule(&secret_broken_by(Some(&huge), 0o600), "more than 4096");
        assert_eq!(secret_broken_by(Some(&huge[..4096]), 0o600), vec![]);
    }

    rejects!(raft_store_is_known, "--raft-store",
        bad: [["--raft-store", "nope"]], good: [["--raft-store", "sled"]]);
    rejects!(raft_snapshot_every_entries_is_not_zero, "--raft-snapshot-every-entries",
        bad: [["--raft-snapshot-every-entries", "0"]],
        good: [["--raft-snapshot-every-entries", "1"]]);
    rejects!(raft_batch_max_commands_is_bounded, "--raft-batch-max-commands",
        bad: [["--raft-batch-max-commands", "0"], ["--raft-batch-max-commands", "65537"]],
        good: [["--raft-batch-max-commands", "1"], ["--raft-batch-max-commands", "65536"]]);
    rejects!(raft_batches_in_flight_is_bounded, "--raft-batches-in-flight",
        bad: [["--raft-batches-in-flight", "0"], ["--raft-batches-in-flight", "65"]],
        good: [["--raft-batches-in-flight", "1"], ["--raft-batches-in-flight", "64"]]);
    rejects!(raft_heartbeat_is_bounded, "--raft-heartbeat-ms",
        bad: [["--raft-heartbeat-ms", "9"]],
        good: [["--raft-heartbeat-ms", "10"],
               ["--raft-heartbeat-ms", "59", "--raft-election-jitter-ms", "60"]]);
    rejects!(raft_election_jitter_is_above_the_heartbeat, "--raft-election-jitter-ms",
        bad: [["--raft-heartbeat-ms", "60", "--raft-election-jitter-ms", "60"],
              ["--raft-heartbeat-ms", "100", "--raft-election-jitter-ms", "99"]],
        good: [["--raft-heartbeat-ms", "10", "--raft-election-jitter-ms", "11"]]);
    rejects!(raft_election_timeout_is_above_the_jitter, "--raft-election-timeout-ms",
        bad: [["--raft-election-jitter-ms", "100", "--raft-election-timeout-ms", "100"],
              ["--raft-election-timeout-ms", "60001"]],
        good: [["--raft-election-timeout-ms", "60000"],
               ["--raft-heartbeat-ms", "100", "--raft-election-jitter-ms", "500",
                "--raft-election-timeout-ms", "1000"]]);
    rejects!(raft_connections_max_is_bounded, "--raft-connections-max",
        bad: [["--raft-connections-max", "65537"]],
        good: [["--raft-connections-max", "65536"],
               ["--raft-connections-max", "1", "--raft-connections-per-address-max", "1"]]);
    rejects!(raft_per_address_cap_is_within_the_total, "--raft-connections-per-address-max",
        bad: [["--raft-connections-per-address-max", "0"],
              ["--raft-connections-per-address-max", "257"]],
        good: [["--raft-connections-per-address-max", "1"],
               ["--raft-connections-per-address-max", "256"]]);
    rejects!(raft_handshake_timeout_is_bounded, "--raft-handshake-timeout-ms",
        bad: [["--raft-handshake-timeout-ms", "99"], ["--raft-handshake-timeout-ms", "60001"]],
        good: [["--raft-handshake-timeout-ms", "100"], ["--raft-handshake-timeout-ms", "60000"]]);
    rejects!(raft_idle_timeout_is_bounded, "--raft-connections-max-idle-ms",
        bad: [["--raft-connections-max-idle-ms", "9999"],
              ["--raft-connections-max-idle-ms", "604800001"]],
        good: [["--raft-connections-max-idle-ms", "10000"]]);
    rejects!(initial_rebalance_delay_is_bounded, "--group-initial-rebalance-delay-ms",
        bad: [["--group-initial-rebalance-delay-ms=-1"],
              ["--group-initial-rebalance-delay-ms", "300001"]],
        good: [["--group-initial-rebalance-delay-ms", "0"]]);
    rejects!(min_session_timeout_is_positive, "--group-min-session-timeout-ms",
        bad: [["--group-min-session-timeout-ms", "0"]],
        good: [["--group-min-session-timeout-ms", "1"]]);
    rejects!(min_session_timeout_is_at_most_max, "--group-max-session-timeout-ms",
        bad: [["--group-min-session-timeout-ms", "6000", "--group-max-session-timeout-ms", "5999"]],
        good: [["--group-min-session-timeout-ms", "6000", "--group-max-session-timeout-ms", "6000"]]);
    rejects!(group_max_size_is_positive, "--group-max-size",
        bad: [["--group-max-size", "0"]], good: [["--group-max-size", "1"]]);
    rejects!(offsets_retention_is_positive, "--offsets-retention-minutes",
        bad: [["--offsets-retention-minutes", "0"],
              ["--offsets-retention-minutes", "52560001"]],
        good: [["--offsets-retention-minutes", "1"]]);
    rejects!(offsets_retention_check_interval_is_positive, "--offsets-retention-check-interval-ms",
        bad: [["--offsets-retention-check-interval-ms", "0"],
              ["--offsets-retention-check-interval-ms", "604800001"]],
        good: [["--offsets-retention-check-interval-ms", "1"]]);
    rejects!(groups_max_is_bounded, "--groups-max",
        bad: [["--groups-max", "0"], ["--groups-max", "100000001"]],
        good: [["--groups-max", "1"], ["--groups-max", "100000000"]]);
    rejects!(offsets_per_group_max_is_bounded, "--offsets-per-group-max",
        bad: [["--offsets-per-group-max", "0"], ["--offsets-per-group-max", "10000001"]],
        good: [["--offsets-per-group-max", "1"], ["--offsets-per-group-max", "10000000"]]);
    rejects!(offset_metadata_max_bytes_is_bounded, "--offset-metadata-max-bytes",
        bad: [["--offset-metadata-max-bytes", "1048577"]],
        good: [["--offset-metadata-max-bytes", "0"], ["--offset-metadata-max-bytes", "1048576"]]);
}
