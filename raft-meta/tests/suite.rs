//! This package's integration tests, one module per file of `tests/`, built as one test binary
//! instead of one binary per file that each linked the crate and its dependencies (decision
//! 0180). `scripts/run-tests.py` runs each module in a process of its own; `scripts/check-layering.sh`
//! fails when a file of `tests/` is missing below.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;
mod sim;
#[path = "../../compaction/tests/support/tmpfs.rs"]
mod tmpfs;
mod workload;

mod apply_halt;
mod cluster;
mod crash;
mod disk_full;
mod format_fuzz;
mod golden;
mod kv_app;
mod legacy_log;
mod peer_auth;
mod process_cluster;
mod simulation;
mod single_node;
mod store_suite;
mod transport;
