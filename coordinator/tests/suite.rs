//! This package's integration tests, one module per file of `tests/`, built as one test binary
//! instead of one binary per file that each linked the crate and its dependencies (decision
//! 0180). `scripts/run-tests.py` runs each module in a process of its own; `scripts/check-layering.sh`
//! fails when a file of `tests/` is missing below.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

mod admin_expiry;
mod assignor_property;
mod codec;
mod codec_consumer;
mod consumer_group;
mod consumer_replay_property;
mod count_limits;
mod group_config;
mod hostile_input;
mod join;
mod lifecycle;
mod migration;
mod offsets;
mod record_golden;
mod replay_property;
mod serde;
mod sync_heartbeat_leave;
mod transactions;
