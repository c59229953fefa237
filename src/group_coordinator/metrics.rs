//! Metric names of the group coordinator (request counts and errors per API are the front
//! end's `cohort_requests_total` / `cohort_request_errors_total`).

/// OffsetCommit requests whose command was committed, by `result` (`ok` or `error`).
pub const GROUP_COMMITS_TOTAL: &str = "cohort_group_commits_total";
/// Partitions written by committed OffsetCommits.
pub const GROUP_COMMITTED_PARTITIONS_TOTAL: &str = "cohort_group_committed_partitions_total";
/// Time from an OffsetCommit's submission to its durable, applied reply.
pub const GROUP_COMMIT_SECONDS: &str = "cohort_group_commit_seconds";
/// Time from any group write's submission to its reply (parked joins and syncs included), by `api`.
pub const GROUP_WRITE_SECONDS: &str = "cohort_group_write_seconds";
/// Join phases completed (a generation handed to the members).
pub const GROUP_REBALANCES_TOTAL: &str = "cohort_group_rebalances_total";
/// Coordinator timers that fired on the leader, by `timer`.
pub const GROUP_TIMERS_FIRED_TOTAL: &str = "cohort_group_timers_fired_total";
/// Timer firings whose write failed while this node still led, armed again after a backoff.
pub const GROUP_TIMER_RETRIES_TOTAL: &str = "cohort_group_timer_retries_total";
/// Members removed because their session expired.
pub const GROUP_MEMBER_EXPIRATIONS_TOTAL: &str = "cohort_group_member_expirations_total";
/// Offsets removed by KIP-211 retention.
pub const GROUP_OFFSETS_EXPIRED_TOTAL: &str = "cohort_group_offsets_expired_total";
/// 1 while this node is the active coordinator.
pub const GROUP_COORDINATOR_ACTIVE: &str = "cohort_group_coordinator_active";
/// Group requests the Raft leader refused (NOT_COORDINATOR) because no quorum acknowledged it
/// within its lease: it may be cut off, and another node may lead already.
pub const GROUP_LEASE_REFUSALS_TOTAL: &str = "cohort_group_lease_refusals_total";
/// Group answers refused by a count limit, by `limit` (`groups`: a request that would create a
/// group past `--groups-max`; `offsets_per_group`: one per partition refused by
/// `--offsets-per-group-max`).
pub const GROUP_LIMIT_REFUSALS_TOTAL: &str = "cohort_group_limit_refusals_total";
/// Transactions whose markers were all written and whose completion was committed, by
/// `result` (`commit` or `abort`).
pub const TXN_MARKERS_COMPLETED_TOTAL: &str = "cohort_txn_markers_completed_total";
/// EndTxn requests answered before their transaction's markers were all written and its
/// completion applied, because the wait reached its bound (decision 0152): an owner down, a
/// full disk.
pub const TXN_END_ANSWERED_BEFORE_COMPLETION_TOTAL: &str =
    "cohort_txn_end_answered_before_completion_total";
