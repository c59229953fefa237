//! `cohort bench`: load generators that print figures (see `docs/BENCHMARKS.md`). They are
//! benchmarks, not tests: each measures against a baseline taken in the same run.
//!
//! ```text
//!  consumer-heartbeats
//!                consumer-protocol members (KIP-848) joining, reconciling and heartbeating at
//!                the broker's interval, against classic members' Heartbeat in the same run
//!  commits       simulated members: JoinGroup/SyncGroup, then heartbeats and OffsetCommits
//!                over raw pipelined connections; Cohort against the naive one-fsync-per-commit
//!                baseline, each a `cohort serve` child (1 node or a loopback Raft cluster)
//!  offset-fetch  OffsetFetch of a P-partition group as fast as possible, against ApiVersions
//!  produce       Produce (acks=-1) of 1 KiB records against raw write + fdatasync of the same bytes
//!  fetch         Fetch of a whole partition against a raw sequential read of its segment files
//!  assignor      the consumer protocol's server-side assignors in-process, against `range`
//!  auth          SASL connect-authenticate-close loops against a running broker: per second
//!                and per second of the broker's CPU
//! ```
//!
//! `commits` (with `--bootstrap-server`), `produce` and `fetch` take `--command-config`, so
//! the same load runs over TLS and SASL.

pub mod assignor;
pub mod auth;
mod broker;
pub mod commits;
pub mod consumer_heartbeats;
mod consumer_load;
mod consumer_member;
pub mod data_plane;
mod fsync_probe;
mod load;
mod members;
pub mod offset_fetch;
mod raft_counters;
mod report;
mod setup;
mod stats;
mod wire;

use std::process::ExitCode;

use clap::{Args, Subcommand};

/// `cohort bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    what: BenchKind,
}

#[derive(Debug, Subcommand)]
enum BenchKind {
    /// Group members committing offsets: requests/s, offsets/s, latency percentiles, errors,
    /// against the naive baseline (one fsync per commit, no batching).
    Commits(commits::CommitsArgs),
    /// Consumer-protocol members (ConsumerGroupHeartbeat) heartbeating at the broker's
    /// interval: rate, latency, errors, Raft writes, broker CPU per heartbeat, against the
    /// classic protocol's Heartbeat in the same run.
    ConsumerHeartbeats(consumer_heartbeats::ConsumerHeartbeatsArgs),
    /// OffsetFetch of a whole group as fast as possible, against ApiVersions.
    OffsetFetch(offset_fetch::OffsetFetchArgs),
    /// Produce throughput (acks=-1, fsync before ack) against raw write + fdatasync.
    Produce(data_plane::DataArgs),
    /// Fetch throughput against a raw sequential read of the segment files.
    Fetch(data_plane::DataArgs),
    /// The server-side assignors (KIP-848) on 10,000- and 1,000-member groups, against
    /// the range assignor in the same run.
    Assignor(assignor::AssignorArgs),
    /// SASL authentications per second and per second of broker CPU.
    Auth(auth::AuthArgs),
}

/// The security settings of a `--command-config` file.
fn security_from(path: &str) -> Result<crate::client::auth::ClientSecurity, BenchError> {
    let props = crate::client::config::read_properties_file(path)
        .map_err(|e| BenchError::Setup(e.java_message()))?;
    crate::client::auth::ClientSecurity::from_properties(&props)
        .map_err(|e| BenchError::Setup(e.java_message()))
}

/// Why a benchmark could not produce figures.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A socket or file operation failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A broker answered something that cannot be read as Kafka.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The cluster could not be prepared (versions, topic, coordinator, groups).
    #[error("setup: {0}")]
    Setup(String),
    /// A started broker failed.
    #[error("broker: {0}")]
    Broker(String),
    /// The data-plane benchmark (`produce`, `fetch`) failed.
    #[error("{0}")]
    DataPlane(String),
}

/// Runs a benchmark and prints its figures on stdout (progress on stderr).
pub fn bench_main(args: BenchArgs) -> ExitCode {
    let result = match args.what {
        // In-process and single-threaded: no runtime.
        BenchKind::Assignor(a) => assignor::run(a),
        what => match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => match what {
                BenchKind::Commits(a) => runtime.block_on(commits::run(a)),
                BenchKind::ConsumerHeartbeats(a) => runtime.block_on(consumer_heartbeats::run(a)),
                BenchKind::OffsetFetch(a) => runtime.block_on(offset_fetch::run(a)),
                BenchKind::Produce(a) => runtime
                    .block_on(data_plane::produce(a))
                    .map_err(BenchError::DataPlane),
                BenchKind::Fetch(a) => runtime
                    .block_on(data_plane::fetch(a))
                    .map_err(BenchError::DataPlane),
                BenchKind::Assignor(a) => assignor::run(a),
                BenchKind::Auth(a) => runtime.block_on(auth::run(a)),
            },
            Err(e) => Err(BenchError::Io {
                what: "starting the runtime".into(),
                source: e,
            }),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cohort bench: {e}");
            ExitCode::FAILURE
        }
    }
}
