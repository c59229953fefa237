//! Coordinator settings: Kafka's broker defaults for the semantics, plus Cohort's own limits
//! (every input that ends up in replicated state has a bound and a named error).

use serde::{Deserialize, Serialize};

pub mod keys;

pub use keys::{ClusterConfig, ConfigChange, ConfigError};

/// Every replica must run `decide` with the same `Config`, or replicas diverge: the fields
/// Kafka names (see [`keys::KEYS`]) are replicated state ([`ClusterConfig`], set from the first
/// leader's flags and changed by IncrementalAlterConfigs); the rest are the binary's constants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// `group.min.session.timeout.ms`: shorter sessions get INVALID_SESSION_TIMEOUT.
    pub session_timeout_min_ms: i32,
    /// `group.max.session.timeout.ms`: longer sessions get INVALID_SESSION_TIMEOUT.
    pub session_timeout_max_ms: i32,
    /// `group.initial.rebalance.delay.ms`: how long the first rebalance of an Empty group
    /// waits for more members, re-armed per join up to the rebalance timeout.
    pub initial_rebalance_delay_ms: i32,
    /// `group.classic.new.member.join.timeout.ms` (internal in Kafka): a new member that never
    /// completes its first join is dropped after this.
    pub new_member_join_timeout_ms: i32,
    /// `offsets.retention.minutes` in ms (KIP-211).
    pub offsets_retention_ms: i64,
    /// `offsets.retention.check.interval.ms`: how often the leader submits `ExpireOffsets`.
    pub offsets_retention_check_interval_ms: i64,
    /// `group.max.size`: members beyond it get GROUP_MAX_SIZE_REACHED.
    pub group_max_size: i32,
    /// `offset.metadata.max.bytes` (Kafka counts UTF-16 units; so do we).
    pub offset_metadata_max_bytes: usize,

    /// Hard cap on members per group whatever `group_max_size` says: a group is replicated as
    /// one record, so its size bounds every membership command's cost.
    pub members_max: usize,
    /// Cap on members waiting to rejoin with their minted id (KIP-394); beyond it joins get
    /// COORDINATOR_NOT_AVAILABLE, which clients retry after a backoff.
    pub pending_members_max: usize,
    /// Longest accepted group id, in bytes (INVALID_GROUP_ID beyond).
    pub group_id_max_bytes: usize,
    /// Longest accepted member id, instance id, client id, client host, protocol type or
    /// protocol name, in bytes (INVALID_REQUEST beyond).
    pub field_max_bytes: usize,
    /// Most protocols one JoinGroup may offer.
    pub protocols_max: usize,
    /// Most bytes of protocol metadata (all protocols together) one member may send.
    pub member_metadata_max_bytes: usize,
    /// Most bytes of assignment the leader may give one member.
    pub member_assignment_max_bytes: usize,
    /// Most groups the replicated state holds, of every kind (classic, consumer, offsets
    /// only): a JoinGroup, ConsumerGroupHeartbeat or OffsetCommit that would create one more
    /// gets POLICY_VIOLATION. Kafka has no such count; every group costs memory on every
    /// replica and bytes in every snapshot.
    pub groups_max: usize,
    /// Most committed offsets (topic-partitions) one group holds: a commit to a partition
    /// the group has none for, once it holds this many, gets POLICY_VIOLATION for that
    /// partition (commits to partitions it already holds are never refused).
    pub offsets_per_group_max: usize,
    /// Most bytes of one group's record value: a join that would grow the group past it gets
    /// GROUP_MAX_SIZE_REACHED, an assignment that would gets INVALID_REQUEST. Keeps every
    /// record well under the log's and snapshot's 16 MiB record limit.
    pub group_record_max_bytes: usize,

    // The consumer protocol (KIP-848): the broker owns the session and the heartbeat interval.
    /// `group.consumer.session.timeout.ms` (Kafka: 45 s, within the min/max below).
    pub consumer_session_timeout_ms: i32,
    /// `group.consumer.min.session.timeout.ms` (45 s): the floor for per-group overrides.
    pub consumer_session_timeout_min_ms: i32,
    /// `group.consumer.max.session.timeout.ms` (60 s).
    pub consumer_session_timeout_max_ms: i32,
    /// `group.consumer.heartbeat.interval.ms` (5 s).
    pub consumer_heartbeat_interval_ms: i32,
    /// `group.consumer.min.heartbeat.interval.ms` (5 s).
    pub consumer_heartbeat_interval_min_ms: i32,
    /// `group.consumer.max.heartbeat.interval.ms` (15 s).
    pub consumer_heartbeat_interval_max_ms: i32,
    /// `group.consumer.max.size`: members beyond it get GROUP_MAX_SIZE_REACHED (bounded by
    /// `members_max` too).
    pub consumer_group_max_size: i32,
    /// Most topics one member may subscribe to by name (INVALID_REQUEST beyond).
    pub consumer_subscribed_topics_max: usize,
    /// Largest group (members × subscribed partitions) whose target assignment `decide`
    /// computes inline; larger ones are computed by the runtime off the request path and
    /// installed with `InstallTargetAssignment`.
    pub consumer_inline_assignment_max_cost: usize,
    /// `group.consumer.migration.policy`: whether a non-empty group changes protocol online
    /// (a consumer-protocol member joining a classic group upgrades it; the last one leaving
    /// downgrades it). Empty groups change protocol whatever it says.
    pub consumer_migration_policy: MigrationPolicy,

    // Transactions (KIP-98).
    /// `transaction.max.timeout.ms`: a producer asking for more gets INVALID_TRANSACTION_TIMEOUT.
    pub transaction_max_timeout_ms: i32,
    /// `transactional.id.expiration.ms`: an idle transactional id is forgotten after this.
    pub transactional_id_expiration_ms: i32,
    /// Most transactional ids the replicated state holds (POLICY_VIOLATION beyond): each is a
    /// record on every replica and in every snapshot.
    pub transactions_max: usize,
    /// Most partitions plus groups one transaction holds (POLICY_VIOLATION beyond): the
    /// transaction is one record and its markers one write per partition.
    pub transaction_partitions_max: usize,
}

/// About 100 MB of index on every replica for simple groups (~80-100 B each,
/// BENCHMARKS.md `index_memory`).
pub const GROUPS_MAX_DEFAULT: usize = 1_000_000;
/// Ten times a 10,000-partition consumer; ~8 MB of index for a group that reaches it.
pub const OFFSETS_PER_GROUP_MAX_DEFAULT: usize = 100_000;
/// A hundred thousand producers; a transaction record is ~100 B plus its partitions.
pub const TRANSACTIONS_MAX_DEFAULT: usize = 100_000;
/// Far above what a stream processor's transaction spans (its input and output partitions).
pub const TRANSACTION_PARTITIONS_MAX_DEFAULT: usize = 10_000;

impl Default for Config {
    fn default() -> Self {
        Config {
            session_timeout_min_ms: 6_000,
            session_timeout_max_ms: 1_800_000,
            initial_rebalance_delay_ms: 3_000,
            new_member_join_timeout_ms: 300_000,
            offsets_retention_ms: 7 * 24 * 60 * 60 * 1000,
            offsets_retention_check_interval_ms: 600_000,
            group_max_size: i32::MAX,
            offset_metadata_max_bytes: 4096,
            members_max: 10_000,
            pending_members_max: 1_000,
            group_id_max_bytes: 1024,
            field_max_bytes: 1024,
            protocols_max: 64,
            member_metadata_max_bytes: 256 * 1024,
            member_assignment_max_bytes: 1024 * 1024,
            group_record_max_bytes: 8 * 1024 * 1024,
            groups_max: GROUPS_MAX_DEFAULT,
            offsets_per_group_max: OFFSETS_PER_GROUP_MAX_DEFAULT,
            consumer_session_timeout_ms: 45_000,
            consumer_session_timeout_min_ms: 45_000,
            consumer_session_timeout_max_ms: 60_000,
            consumer_heartbeat_interval_ms: 5_000,
            consumer_heartbeat_interval_min_ms: 5_000,
            consumer_heartbeat_interval_max_ms: 15_000,
            consumer_group_max_size: i32::MAX,
            consumer_subscribed_topics_max: 10_000,
            consumer_inline_assignment_max_cost: 100_000,
            consumer_migration_policy: MigrationPolicy::Bidirectional,
            transaction_max_timeout_ms: 900_000,
            transactional_id_expiration_ms: 604_800_000,
            transactions_max: TRANSACTIONS_MAX_DEFAULT,
            transaction_partitions_max: TRANSACTION_PARTITIONS_MAX_DEFAULT,
        }
    }
}

/// Kafka's `ConsumerGroupMigrationPolicy` (default `bidirectional` since Kafka 4.0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MigrationPolicy {
    /// Neither upgrade nor downgrade; a classic member may not join a consumer group
    /// (KAFKA-20640), so no group is ever mixed.
    Disabled,
    Downgrade,
    Upgrade,
    #[default]
    Bidirectional,
}

impl MigrationPolicy {
    /// Kafka's names, by the index the replicated configuration stores.
    pub const NAMES: &'static [&'static str] =
        &["disabled", "downgrade", "upgrade", "bidirectional"];

    pub fn index(self) -> i64 {
        match self {
            MigrationPolicy::Disabled => 0,
            MigrationPolicy::Downgrade => 1,
            MigrationPolicy::Upgrade => 2,
            MigrationPolicy::Bidirectional => 3,
        }
    }

    /// The policy stored as `index`; an index out of range reads as `Disabled`, as Kafka
    /// parses a name it does not know (the key's range refuses such values before).
    pub fn from_index(index: i64) -> MigrationPolicy {
        match index {
            1 => MigrationPolicy::Downgrade,
            2 => MigrationPolicy::Upgrade,
            3 => MigrationPolicy::Bidirectional,
            _ => MigrationPolicy::Disabled,
        }
    }

    /// The policy named `name` (case-insensitive), if any.
    pub fn parse(name: &str) -> Option<MigrationPolicy> {
        Self::NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name.trim()))
            .and_then(|i| i64::try_from(i).ok())
            .map(Self::from_index)
    }

    pub fn as_str(self) -> &'static str {
        Self::NAMES
            .get(usize::try_from(self.index()).unwrap_or(0))
            .copied()
            .unwrap_or("disabled")
    }

    pub fn upgrade_enabled(self) -> bool {
        matches!(
            self,
            MigrationPolicy::Upgrade | MigrationPolicy::Bidirectional
        )
    }

    pub fn downgrade_enabled(self) -> bool {
        matches!(
            self,
            MigrationPolicy::Downgrade | MigrationPolicy::Bidirectional
        )
    }
}

impl Config {
    /// The effective member cap: Kafka's `group.max.size` bounded by our hard cap.
    pub(crate) fn max_members(&self) -> usize {
        let kafka = usize::try_from(self.group_max_size).unwrap_or(0);
        kafka.min(self.members_max)
    }

    /// The effective consumer-group member cap.
    pub(crate) fn max_consumer_members(&self) -> usize {
        let kafka = usize::try_from(self.consumer_group_max_size).unwrap_or(0);
        kafka.min(self.members_max)
    }
}
