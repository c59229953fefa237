//! `cohort serve` flags for the Raft meta service and the group coordinator.

use clap::Args;
use raft_meta::{Bootstrap, PeerSpec, RaftStore};

/// Flags that make a node part of a cluster. With no `--peers` the node is a one-voter
/// cluster on local disk: the embedded default, the same code path.
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// Address the Raft peer listener binds (port 0 picks a free port; fine for one node).
    #[arg(long = "raft", default_value = "127.0.0.1:0")]
    pub raft_listen: String,

    /// Raft address peers dial (default: the bound address).
    #[arg(long)]
    pub advertise_raft: Option<String>,

    /// The initial cluster, this node included: `id@raft_host:port@kafka_host:port,...`.
    /// Every node is started with the same list; ignored once the node's log holds a
    /// membership.
    #[arg(long, value_delimiter = ',')]
    pub peers: Vec<String>,

    /// Start with an empty log and wait to be added by `cohort cluster add-voter`, instead of
    /// forming the initial cluster from `--peers`. Ignored once the node's log holds a
    /// membership (a restarted node rejoins as what it was).
    #[arg(long, conflicts_with = "peers")]
    pub join: bool,

    /// Raft log store: `segments` (the default, chosen by raft-meta's bake-off) or `sled`.
    #[arg(long, default_value = "segments")]
    pub raft_store: String,

    /// Build a snapshot of the replicated state (groups, offsets, topics) after this many
    /// log entries; the log behind it is purged.
    #[arg(long, default_value_t = raft_meta::Tuning::default().snapshot_every_entries)]
    pub raft_snapshot_every_entries: u64,

    /// Most commands one Raft entry carries (one entry = one append, one fsync). A benchmark
    /// knob: 1 (with `--raft-batches-in-flight 1`) is the naive one-fsync-per-commit baseline.
    #[arg(long, default_value_t = 4096)]
    pub raft_batch_max_commands: u32,

    /// Raft entries proposed and not yet committed at once; the next batch takes whatever
    /// queued meanwhile. A benchmark knob, like `--raft-batch-max-commands`.
    #[arg(long, default_value_t = 2)]
    pub raft_batches_in_flight: u32,

    /// How often the Raft leader sends AppendEntries when idle; also each AppendEntries'
    /// deadline (openraft's), so it must cover a follower's fsync on a loaded disk.
    #[arg(long, default_value_t = raft_meta::Tuning::default().heartbeat_ms)]
    pub raft_heartbeat_ms: u64,

    /// The election timeout: a follower campaigns after this much silence from the leader
    /// (plus a random spread) and grants votes only then; a leader serves reads from its own
    /// state for four fifths of it after a quorum answered. A killed leader's successor
    /// serves about this long after the kill.
    #[arg(long, default_value_t = raft_meta::Tuning::default().election_timeout_max_ms)]
    pub raft_election_timeout_ms: u64,

    /// The random spread added to the election timeout per campaign (and the delay before a
    /// failed one is retried), so two followers rarely campaign at once.
    #[arg(long, default_value_t = raft_meta::Tuning::default().election_timeout_min_ms)]
    pub raft_election_jitter_ms: u64,

    /// A file holding the cluster secret (at least 32 bytes, mode 600): peers, forwarded
    /// writes and `cohort cluster` must prove it on the Raft port (challenge–response; it never
    /// travels), and every frame after is authenticated. Every node gets the same file. Without
    /// it the Raft port is open to whoever reaches it.
    #[arg(long)]
    pub cluster_secret_file: Option<std::path::PathBuf>,

    /// Caps and timeouts of the Raft peer port.
    #[command(flatten)]
    pub peer_port: crate::server::limits::PeerPortArgs,
}

/// Group coordinator settings (Kafka's broker configs of the same names). Every node of a
/// cluster must be started with the same values: replicas apply commands with them.
#[derive(Debug, Clone, Args)]
pub struct GroupArgs {
    /// `group.initial.rebalance.delay.ms`.
    #[arg(long, default_value_t = 3_000)]
    pub group_initial_rebalance_delay_ms: i32,
    /// `group.min.session.timeout.ms`.
    #[arg(long, default_value_t = 6_000)]
    pub group_min_session_timeout_ms: i32,
    /// `group.max.session.timeout.ms`.
    #[arg(long, default_value_t = 1_800_000)]
    pub group_max_session_timeout_ms: i32,
    /// `group.max.size`.
    #[arg(long, default_value_t = i32::MAX)]
    pub group_max_size: i32,
    /// `offsets.retention.minutes`.
    #[arg(long, default_value_t = 10_080)]
    pub offsets_retention_minutes: i64,
    /// `offsets.retention.check.interval.ms`.
    #[arg(long, default_value_t = 600_000)]
    pub offsets_retention_check_interval_ms: i64,
    /// `offset.metadata.max.bytes`.
    #[arg(long, default_value_t = 4_096)]
    pub offset_metadata_max_bytes: usize,
    /// `group.consumer.migration.policy`: whether a non-empty group switches between the
    /// classic and the consumer protocol online (bidirectional, upgrade, downgrade, disabled;
    /// case-insensitive, as Kafka's).
    #[arg(long, default_value = "bidirectional", value_parser = parse_migration_policy)]
    pub group_consumer_migration_policy: coordinator::MigrationPolicy,
    /// Most groups the replicated state holds (classic, consumer or offsets only); a request
    /// that would create one more gets POLICY_VIOLATION. Cohort's own: Kafka has no such count.
    #[arg(long, default_value_t = coordinator::config::GROUPS_MAX_DEFAULT)]
    pub groups_max: usize,
    /// Most committed offsets (topic-partitions) one group holds; a commit adding one more
    /// gets POLICY_VIOLATION for that partition. Cohort's own: Kafka has no such count.
    #[arg(long, default_value_t = coordinator::config::OFFSETS_PER_GROUP_MAX_DEFAULT)]
    pub offsets_per_group_max: usize,
}

impl GroupArgs {
    pub fn coordinator_config(&self) -> coordinator::Config {
        coordinator::Config {
            initial_rebalance_delay_ms: self.group_initial_rebalance_delay_ms.max(0),
            session_timeout_min_ms: self.group_min_session_timeout_ms,
            session_timeout_max_ms: self.group_max_session_timeout_ms,
            group_max_size: self.group_max_size,
            offsets_retention_ms: self.offsets_retention_minutes.saturating_mul(60_000),
            offsets_retention_check_interval_ms: self.offsets_retention_check_interval_ms.max(1),
            offset_metadata_max_bytes: self.offset_metadata_max_bytes,
            groups_max: self.groups_max,
            offsets_per_group_max: self.offsets_per_group_max,
            consumer_migration_policy: self.group_consumer_migration_policy,
            ..coordinator::Config::default()
        }
    }
}

fn parse_migration_policy(text: &str) -> Result<coordinator::MigrationPolicy, String> {
    coordinator::MigrationPolicy::parse(text).ok_or_else(|| {
        format!(
            "must be one of {} (case-insensitive)",
            coordinator::MigrationPolicy::NAMES.join(", ")
        )
    })
}

#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    #[error("--node-id {0} cannot be a Raft node id (must be 0 or more)")]
    NodeId(i32),
    #[error("--peers entry {0:?} is not id@raft_host:port@kafka_host:port")]
    Peer(String),
    #[error("--raft-store: {0}")]
    Store(String),
    #[error("--cluster-secret-file {0}")]
    Secret(#[from] raft_meta::network::SecretFileError),
}

impl ClusterArgs {
    /// Raft timing, snapshots, batching and peer-port limits: the defaults, with the knobs
    /// applied.
    pub fn tuning(&self) -> raft_meta::Tuning {
        raft_meta::Tuning {
            snapshot_every_entries: self.raft_snapshot_every_entries.max(1),
            batch_commands_max: self.raft_batch_max_commands as usize,
            batches_in_flight_max: self.raft_batches_in_flight as usize,
            heartbeat_ms: self.raft_heartbeat_ms,
            election_timeout_min_ms: self.raft_election_jitter_ms,
            election_timeout_max_ms: self.raft_election_timeout_ms,
            peer_port: self.peer_port.limits(),
            ..raft_meta::Tuning::default()
        }
    }

    /// How the Raft port authenticates: the secret in `--cluster-secret-file`, or open.
    pub fn peer_auth(&self) -> Result<raft_meta::network::PeerAuth, ArgsError> {
        Ok(raft_meta::network::PeerAuth::from_file(
            self.cluster_secret_file.as_deref(),
        )?)
    }

    pub fn store(&self) -> Result<RaftStore, ArgsError> {
        self.raft_store
            .parse()
            .map_err(|e: raft_meta::store::UnknownRaftStore| ArgsError::Store(e.to_string()))
    }

    /// A one-voter cluster: no peers, not joining one.
    pub fn is_single(&self) -> bool {
        self.peers.is_empty() && !self.join
    }

    pub fn bootstrap(&self, node_id: u64) -> Result<Bootstrap, ArgsError> {
        if self.join {
            return Ok(Bootstrap::Join);
        }
        if self.peers.is_empty() {
            return Ok(Bootstrap::Single);
        }
        let peers = self
            .peers
            .iter()
            .map(|p| parse_peer(p))
            .collect::<Result<Vec<_>, _>>()?;
        if !peers.iter().any(|p| p.node_id == node_id) {
            return Err(ArgsError::Peer(format!(
                "{} (node {node_id} is not in the list)",
                self.peers.join(",")
            )));
        }
        Ok(Bootstrap::Cluster(peers))
    }
}

fn parse_peer(s: &str) -> Result<PeerSpec, ArgsError> {
    let bad = || ArgsError::Peer(s.to_owned());
    let mut parts = s.trim().split('@');
    let (Some(id), Some(raft), Some(kafka), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let node_id = id.parse().map_err(|_| bad())?;
    let valid = |a: &str| {
        a.rsplit_once(':')
            .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
    };
    if !valid(raft) || !valid(kafka) {
        return Err(bad());
    }
    Ok(PeerSpec {
        node_id,
        raft_addr: raft.to_owned(),
        kafka_addr: kafka.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(peers: &[&str]) -> ClusterArgs {
        ClusterArgs {
            raft_listen: "127.0.0.1:0".into(),
            advertise_raft: None,
            peers: peers.iter().map(|s| s.to_string()).collect(),
            join: false,
            raft_store: "segments".into(),
            raft_snapshot_every_entries: 1000,
            raft_batch_max_commands: 4096,
            raft_batches_in_flight: 2,
            raft_heartbeat_ms: raft_meta::Tuning::default().heartbeat_ms,
            raft_election_timeout_ms: raft_meta::Tuning::default().election_timeout_max_ms,
            raft_election_jitter_ms: raft_meta::Tuning::default().election_timeout_min_ms,
            cluster_secret_file: None,
            peer_port: Default::default(),
        }
    }

    #[test]
    fn no_peers_is_a_single_voter_and_peers_must_name_this_node() {
        assert_eq!(args(&[]).bootstrap(1).unwrap(), Bootstrap::Single);
        let three = args(&[
            "1@127.0.0.1:7001@127.0.0.1:9001",
            "2@127.0.0.1:7002@127.0.0.1:9002",
            "3@127.0.0.1:7003@127.0.0.1:9003",
        ]);
        match three.bootstrap(2).unwrap() {
            Bootstrap::Cluster(p) => {
                assert_eq!(p.len(), 3);
                assert_eq!(p[1].raft_addr, "127.0.0.1:7002");
                assert_eq!(p[1].kafka_addr, "127.0.0.1:9002");
            }
            other => panic!("{other:?}"),
        }
        assert!(three.bootstrap(4).is_err());
        for bad in [
            "1@x",
            "a@h:1@h:2",
            "1@h:1@h:2@h:3",
            "1@:1@h:2",
            "1@h:99999@h:2",
        ] {
            assert!(args(&[bad]).bootstrap(1).is_err(), "{bad}");
        }
        let mut joining = args(&[]);
        joining.join = true;
        assert_eq!(joining.bootstrap(4).unwrap(), Bootstrap::Join);
        assert!(!joining.is_single());
        assert!(args(&[]).is_single());
        assert!(args(&[]).store().is_ok());
        let mut s = args(&[]);
        s.raft_store = "nope".into();
        assert!(s.store().is_err());
    }

    #[test]
    fn batching_knobs_reach_the_raft_tuning() {
        let defaults = args(&[]).tuning();
        assert_eq!(
            defaults.batch_commands_max,
            raft_meta::Tuning::default().batch_commands_max
        );
        assert_eq!(
            defaults.batches_in_flight_max,
            raft_meta::Tuning::default().batches_in_flight_max
        );
        let mut naive = args(&[]);
        naive.raft_batch_max_commands = 1;
        naive.raft_batches_in_flight = 1;
        let t = naive.tuning();
        assert_eq!((t.batch_commands_max, t.batches_in_flight_max), (1, 1));
        assert_eq!(t.heartbeat_ms, raft_meta::Tuning::default().heartbeat_ms);
    }

    #[test]
    fn election_timing_reaches_the_raft_tuning() {
        let mut a = args(&[]);
        a.raft_heartbeat_ms = 100;
        a.raft_election_jitter_ms = 300;
        a.raft_election_timeout_ms = 1000;
        let t = a.tuning();
        assert_eq!(
            (
                t.heartbeat_ms,
                t.election_timeout_min_ms,
                t.election_timeout_max_ms
            ),
            (100, 300, 1000)
        );
        assert_eq!(t.leader_lease(), std::time::Duration::from_millis(800));
    }
}
