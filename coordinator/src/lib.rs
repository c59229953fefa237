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
//! the runtime (raft-meta, the binary) is in
//! `docs/decisions/0021-deterministic-coordinator-contract.md`.
//!
//! The modules form layers that only import downward (`scripts/check-layering.sh` checks it):
//!
//! ```text
//!   state                                   dispatches commands, replays records
//!   migration                               classic members of consumer groups, downgrade (uses both protocols)
//!   membership  offsets  admin  expiry      one concern each: (&Config, &GroupIndex, command) -> Outcome
//!   consumer_group                          the consumer protocol (KIP-848), same layer
//!   transactions                            the transaction coordinator (KIP-98), same layer
//!   group  index  assignor                  classic-group rules and effects; the indexes; assignors
//!   command  outcome                        the machine's inputs and outputs
//!   timer  reply                            timers as data; domain answers and error kinds
//!   record                                  records, their values and codec (no group state)
//!   ids  config  subscription               newtypes, settings, subscription bytes
//! ```
//!
//! A new concern (the consumer protocol, transactions) is a sibling of `membership/` that
//! takes the part of the state it needs; server-side assignors sit with the group model.

// Lowest layer first.
pub mod config;
pub mod ids;
pub mod subscription;

pub mod record;

pub mod reply;
pub mod timer;

pub mod command;
pub mod outcome;

pub mod assignor;
pub mod group;
pub mod group_config;
pub(crate) mod index;

mod admin;
pub(crate) mod consumer_group;
mod expiry;
pub(crate) mod membership;
pub(crate) mod offsets;
pub(crate) mod transactions;

pub(crate) mod migration;

pub mod state;

pub use command::*;
pub use config::{ClusterConfig, Config, ConfigChange, ConfigError, MigrationPolicy};
pub use consumer_group::AssignmentJob;
pub use group::{ClassicGroup, GroupState, InitialDelay, Member, PendingMember};
pub use ids::*;
pub use outcome::{AssignmentNeeded, MemberReply, Outcome, ReadOutcome, TxnMarkers};
pub use record::assignment::Assignment;
pub use record::codec::DecodeError;
pub use record::consumer_group::{
    ClassicMemberMetadata, ConsumerGroup, ConsumerGroupValue, ConsumerMemberValue,
    CurrentAssignment, MemberState, TopicValue,
};
pub use record::offset_commit::OffsetCommitValue;
pub use record::transaction::{PendingOffset, TransactionValue, TxnOffsetsValue, TxnState};
pub use record::{Record, RecordKey};
pub use reply::*;
pub use state::{CoordinatorState, HeartbeatPath};
pub use timer::{TimerKey, TimerOp};
pub use transactions::admin::{ListTransactionsFilter, ListedTransaction, ListedTransactions};
