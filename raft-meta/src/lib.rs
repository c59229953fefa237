//! The Raft meta service: openraft type config, log stores, state machine, transport and the node
//! handle the binary drives.
//!
//! ```text
//!   MetaNode::write(cmd) ─► Batcher ─► Raft::client_write(CommandBatch) ─► LogStore (sled | segments)
//!                                              │  AppendEntries / Vote / InstallSnapshot
//!                                              ▼
//!                                   network (TCP, length-prefixed postcard frames) ─► peers
//!   committed entries ─► StateMachine::apply ─► Application::apply(index, cmd) -> reply
//!   snapshots ─► Application::snapshot_records ─► snapshot files ─► purge the log behind them
//! ```
//!
//! Nothing here knows what a command means: the group coordinator is one [`Application`], the
//! test key-value store ([`kv::KvApp`]) another.

pub mod app;
mod batcher;
pub mod cohort_app;
mod control;
mod election;
pub mod error;
pub mod kv;
pub mod metrics;
pub mod network;
pub mod node;
pub mod snapshot_file;
pub mod state_machine;
pub mod status;
pub mod store;
pub mod types;

pub use app::{Application, Record, RestoreError};
pub use error::{MembershipError, ReadError, StartError, WriteError};
pub use node::{Bootstrap, Elections, MetaNode, NodeConfig, PeerSpec, Tuning};
pub use state_machine::StateMachine;
pub use status::{ClusterStatus, LeaderInfo};
pub use store::{LogStore, RaftStore};
pub use types::{CommandBatch, LogIndex, NodeId, NodeInfo, ReplyBatch, TypeConfig};
