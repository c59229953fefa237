//! Online migration between the classic and the consumer protocol (KIP-848's "online
//! migration", Kafka 4.0's `group.consumer.migration.policy`), above both protocols' concerns:
//!
//! ```text
//!   classic group ──ConsumerGroupHeartbeat joins (upgrade, consumer_group::upgrade)──▶ consumer group
//!        ▲                                                                             │ classic members
//!        │                                                                             │ served by
//!        └──last consumer-protocol member leaves or is fenced (downgrade.rs)───────────┘ classic_member.rs
//! ```
//!
//! The upgrade is part of the consumer heartbeat (it only needs the group model); the
//! downgrade starts a classic rebalance, so it lives here, above `membership`.

pub(crate) mod classic_member;
pub(crate) mod downgrade;
