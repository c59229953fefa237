//! Topics: names, configs, placement planning, and the catalog trait the handlers read and
//! change them through.
//!
//! ```text
//!  handlers ──> TopicCatalog (trait) ──> replicated::catalog::RaftCatalog: the topic table of
//!                                        the Raft meta service (changes are replicated
//!                                        commands, forwarded to the leader from a follower)
//! ```
//!
//! The handlers' unit tests run on a file-backed catalog of their own
//! (`handlers/file_catalog.rs`).

pub mod catalog;
pub mod config_keys;
pub mod configs;
pub mod create;
pub mod names;
pub mod spec;

pub use catalog::{CatalogError, ProducerIdAllocator, TopicCatalog};
pub use configs::{AlterOp, CleanupPolicy, ConfigError, TopicConfigs};
pub use create::{plan_topic, CreateTopicError, NewTopic};
pub use spec::{PartitionAssignment, TopicSpec};

/// Most partitions one topic may have: every partition is a directory of open files.
pub const MAX_PARTITIONS_PER_TOPIC: i32 = 10_000;
/// Most topics the catalog holds.
pub const MAX_TOPICS: usize = 10_000;
/// Most partitions over all topics (each open partition holds file descriptors).
pub const MAX_TOTAL_PARTITIONS: usize = 50_000;
