//! Cohort, the broker: a Kafka-compatible front end whose heart is a replicated group
//! coordinator. This library is the `cohort` binary's body; `main.rs` only parses the command
//! line, and tests and benches embed a [`server::Server`] in-process.
//!
//! ```text
//!  TCP ─> server (accept, one task per connection, limits)
//!           └─> connection: frames ─> protocol::decode_request ─> handlers::dispatch
//!                 ├─ ApiVersions, Metadata, CreateTopics, DeleteTopics ─> topics::TopicCatalog
//!                 └─ Produce, Fetch, ListOffsets, InitProducerId ──────> data plane
//!  HTTP ─> http (/healthz, /metrics)
//! ```
//!
//! Typed errors from every part meet in one table, [`errors::to_kafka_error`].

pub mod bench;
pub mod broker;
pub mod cluster;
pub mod config;
pub mod data;
pub mod errors;
pub mod group_coordinator;
pub mod handlers;
pub mod http;
pub mod lock;
pub mod metrics;
pub mod replicated;
pub mod server;
pub mod topics;

// Operator surface: a pure Kafka admin client, the `groups`/`topics` tools, lag arithmetic and
// status, the console page.
pub mod cli;
pub mod client;
pub mod console;
pub mod lag;
