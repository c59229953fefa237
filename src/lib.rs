//! Cohort, the broker: a Kafka-compatible front end whose heart is a replicated group
//! coordinator. This library is the `cohort` binary's body; `main.rs` only parses the command
//! line, and tests and benches embed a [`server::Server`] in-process.
//!
//! ```text
//!  Kafka port ─> server (accept loop, one task per connection, limits; front: loading answers)
//!                 └─> connection: frame ─> protocol::decode_request ─> handlers::dispatch
//!                       ├─ Produce, Fetch, ListOffsets ──> data (partition logs on compaction)
//!                       ├─ Metadata, CreateTopics, DeleteTopics,
//!                       │  InitProducerId ──> topics::{TopicCatalog, ProducerIdAllocator},
//!                       │                     cluster::ClusterView
//!                       │                     (replicated::catalog: the replicated topic table)
//!                       ├─ group APIs ──────> group_coordinator (Raft leader only) ─> raft_meta
//!                       └─ ApiVersions ─────> protocol::SUPPORTED_APIS
//!  Raft port ─> raft_meta (peers; `cohort cluster` admin requests)
//!  HTTP port ─> http (/healthz, /metrics, /console) <─ lag (tracker fed by the coordinator)
//!  CLI ───────> cli (groups, topics, cluster) on client (a pure Kafka client); bench
//! ```
//!
//! Typed errors from every part meet in one table, [`errors::to_kafka_error`]. The map of the
//! whole system is `docs/ARCHITECTURE.md`.

pub mod bench;
pub mod broker;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod data;
pub mod disk;
pub mod errors;
pub mod group_coordinator;
pub mod handlers;
pub mod http;
pub mod lock;
pub mod logging;
pub mod metrics;
pub mod readiness;
pub mod replicated;
pub mod security;
pub mod server;
pub mod topics;
pub mod txn_metrics;

// Operator surface: a pure Kafka admin client, the `groups`/`topics` tools, lag arithmetic and
// status, the console page.
pub mod cli;
pub mod client;
pub mod console;
pub mod lag;
