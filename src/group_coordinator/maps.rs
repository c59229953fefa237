//! The hash map of the coordinator runtime's tables (waiting requests, member writes, timers,
//! fired timers).
//!
//! A commit looks these up about two dozen times (registered, answered, the member's writes,
//! the session timer's re-arm), and with std's SipHash-1-3 the hashing was 8 % of a batched
//! commit's instructions (`docs/BENCHMARKS.md`). Their keys are group and member ids that
//! clients choose, so the hash stays keyed: foldhash seeded at random for each map, which an
//! attacker who cannot read the seed cannot aim collisions at (decision 0187).

/// A `HashMap` with a per-map random foldhash seed; `Map::default()` makes one.
pub(crate) type Map<K, V> = std::collections::HashMap<K, V, foldhash::quality::RandomState>;
