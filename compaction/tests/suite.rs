//! This package's integration tests, one module per file of `tests/`, built as one test binary
//! instead of one binary per file that each linked the crate and its dependencies (decision
//! 0180). `scripts/run-tests.py` runs each module in a process of its own; `scripts/check-layering.sh`
//! fails when a file of `tests/` is missing below.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/tmpfs.rs"]
mod tmpfs;

mod compaction_swap;
mod crash;
mod disk_full;
mod group_commit;
mod located_reads;
mod log_basics;
mod model;
mod recovery;
mod snapshot;
