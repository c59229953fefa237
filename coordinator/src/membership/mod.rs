//! Group membership: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and the timers that drive
//! the classic rebalance protocol.
//!
//! ```text
//!            first JoinGroup                all rejoined / rebalance timeout
//!   Empty ───────────────────▶ PreparingRebalance ───────────────────▶ CompletingRebalance
//!     ▲   (initial delay 3 s,        │  ▲                                   │ leader's SyncGroup
//!     │    re-armed per join)        │  │ join, leave, expiry,              ▼
//!     └──── no member left ──────────┘  └── metadata change ◀──────────  Stable
//! ```
//!
//! Each handler clones the group into a scratch copy, mutates the copy the way Kafka mutates
//! its in-memory group, and emits the copy as one `GroupMetadata` record when it changed:
//! `decide` stays `&self`, and replaying the record gives every replica the same group.

pub(crate) mod heartbeat;
pub(crate) mod join;
pub(crate) mod leave;
pub(crate) mod rebalance;
pub(crate) mod sync;
pub(crate) mod timers;
