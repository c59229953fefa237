//! The broker's integration tests, one module per file of `tests/`, built as one test binary:
//! each file used to be a binary of its own that linked the whole crate and its dependencies,
//! and those ~50 links were a third of CI's build (decision 0180). `scripts/run-tests.py` still
//! runs each module in a process of its own (`suite --exact <its tests>`), so tests of
//! different files never share a process there; `scripts/check-layering.sh` fails when a file
//! of `tests/` is missing below. Run one file's tests with `cargo test --test suite acls::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster_support;
mod common;
mod eos_support;
#[path = "common/full_disk.rs"]
mod full_disk;
mod group_wire;
#[path = "common/quota_fs.rs"]
mod quota_fs;
#[path = "../compaction/tests/support/tmpfs.rs"]
mod tmpfs;

mod acls;
mod admin_cluster;
mod admin_cluster_nodes;
mod admin_configs;
mod authorization;
mod bad_input;
mod bench_smoke;
mod cluster_chaos;
mod cluster_config;
mod cluster_failover;
mod cluster_kip848;
mod cluster_lease;
mod cluster_listener_missing;
mod cluster_membership;
mod cluster_node_auth;
mod cluster_partition;
mod cluster_script;
mod cluster_security;
mod command_config;
mod console_live;
mod data_plane;
mod decoder_counts;
mod disk_full;
mod disk_quota;
mod group_configs;
mod groups_clients;
mod groups_cluster;
mod groups_durability;
mod groups_loading;
mod groups_migration;
mod groups_wire;
mod http_auth;
mod lag_cluster;
mod lag_metrics;
mod lag_operator;
mod lag_seconds;
mod limits;
mod limits_raft;
mod operator_admin;
mod operator_groups;
mod operator_groups_args;
mod operator_surface;
mod operator_topics;
mod reauth;
mod restart_keeps_data;
mod security;
mod server;
mod topics;
mod transactions_admin;
mod transactions_admin_cluster;
mod transactions_clients;
mod transactions_crash;
mod transactions_crash_kafkajs;
mod transactions_data;
mod transactions_tool;
