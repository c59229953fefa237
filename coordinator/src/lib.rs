//! The group and offset domain of Cohort: a deterministic state machine with no IO, no clock
//! and no randomness (time and random nonces are fields of the commands).
//!
//! ```text
//!   Kafka request ──binary──▶ WriteCommand { now_ms, nonce, .. }
//!                                 │ replicated through Raft, then on every replica:
//!                                 ▼
//!                 CoordinatorState::decide(&self) ──▶ Outcome
//!                                 │                      ├─ records ──▶ state.replay(&r)   (all replicas)
//!                                 │                      ├─ reply, member_replies ──▶ parked
//!                                 │                      │     connections              (leader only)
//!                                 │                      └─ timers: Set/Cancel ──▶ leader's timer
//!                                 │                              wheel ──fires──▶ TimerFired command
//!   Kafka request ──binary──▶ ReadCommand ──▶ CoordinatorState::read(&self) ──▶ ReadOutcome
//!                              (Heartbeat, OffsetFetch, DescribeGroups, ListGroups: leader only)
//! ```
//!
//! `replay` is the only mutator, so the state after a command is exactly what replaying its
//! records gives, on every replica and after a restart from a compacted log. The contract for
//! the runtime (raft-meta, the binary) is in `docs/ARCHITECTURE.md`, "Coordinator core".

mod admin;
pub mod command;
pub mod config;
mod expiry;
pub mod group;
pub mod ids;
pub(crate) mod index;
pub(crate) mod membership;
pub(crate) mod offsets;
pub mod outcome;
pub mod record;
pub mod reply;
pub mod state;
pub mod subscription;

pub use command::*;
pub use config::Config;
pub use group::{ClassicGroup, GroupState, Member};
pub use ids::*;
pub use index::offsets::OffsetCommitValue;
pub use outcome::{MemberReply, Outcome, ParkedKind, ReadOutcome, TimerKey, TimerOp};
pub use record::codec::DecodeError;
pub use record::{Record, RecordKey};
pub use reply::*;
pub use state::CoordinatorState;
