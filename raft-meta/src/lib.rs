//! The Raft meta service: openraft type config, log stores, state machine, transport, elections
//! and the node handle the binary drives, plus the application Cohort replicates on it.
//!
//! ```text
//!   MetaNode::write(cmd) ─► Batcher ─► Raft::client_write(CommandBatch) ─► LogStore (segments|sled)
//!                                              │  AppendEntries / Vote / InstallSnapshot
//!                                              ▼
//!                                   network (TCP, length-prefixed postcard frames) ─► peers
//!   committed entries ─► StateMachine::apply ─► Application::apply(index, cmd) -> reply
//!   snapshots ─► Application::snapshot_records ─► snapshot files ─► purge the log behind them
//!   election task ─► pre-vote round over the peer port ─► Raft::trigger().elect()
//! ```
//!
//! A follower's `MetaNode::write_via_leader` forwards the command to the leader over the peer
//! port; openraft's own election timer is off (see `election.rs`).
//!
//! The machinery (node, batcher, stores, state machine, network, elections) never looks inside
//! a command: it replicates opaque bytes for an [`Application`]. [`cohort_app::CohortApp`] is the
//! application the broker runs (the group coordinator, topic metadata and the cluster record in
//! one state machine). A key-value demo application that exercises the machinery alone is not
//! part of the library: it lives in `testkit/kv.rs`, compiled into the tests, the crash-test node
//! (`testkit/kvnode.rs`, binary `raft-meta-kvnode`) and the bake-off example.

pub mod app;
mod batcher;
pub mod cohort_app;
mod control;
mod election;
pub mod error;
pub mod format;
pub mod lease;
pub mod metrics;
pub mod network;
pub mod node;
pub mod node_record;
mod publish;
pub mod snapshot_file;
pub mod state_machine;
pub mod status;
pub mod store;
pub mod types;

pub use app::{Application, Record, RestoreError, Undecodable};
pub use error::{MembershipError, ReadError, StartError, WriteError};
pub use network::PeerPortLimits;
pub use node::{raft_config, Bootstrap, Elections, MetaNode, NodeConfig, PeerSpec, Tuning};
pub use state_machine::StateMachine;
pub use status::{ApplyHalted, ClusterStatus, LeaderInfo};
pub use store::{LogStore, RaftStore};
pub use types::{CommandBatch, KafkaListener, LogIndex, NodeId, NodeInfo, ReplyBatch, TypeConfig};
