//! A small async Kafka client: the Admin operations Cohort's operator tools need
//! (`cohort groups`, `cohort topics`, ...), spoken with `kafka-protocol` over TCP, TLS and SASL
//! as `--command-config`'s security properties say (`auth`). It is a pure
//! Kafka client: nothing in it knows Cohort, so it works against Apache Kafka as well.
//!
//! ```text
//!   cli ─► Admin ─► (metadata, FindCoordinator, per-op requests) ─► Connection ─► TCP ─► broker
//!                     versions: min(ours, broker's) per API, from ApiVersions (KIP-511 fallback)
//! ```

pub mod acls;
pub mod admin;
pub mod auth;
pub mod config;
pub mod configs;
pub mod connection;
pub mod consumer_protocol;
pub mod error;
pub mod groups;
pub mod log_dirs;
pub mod offsets;
pub mod partitions;
pub mod record_times;
pub mod topics;
pub mod transactions;
pub mod transport;
pub mod types;
pub mod users;
pub mod versions;

pub use admin::Admin;
pub use config::ClientConfig;
pub use error::{ClientError, KafkaError};
pub use types::{NodeId, Offset, TopicPartition};

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
