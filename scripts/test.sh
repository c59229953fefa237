#!/usr/bin/env bash
# Runs every test Cohort has, on a fresh machine too: installs the real clients the suite
# drives, then formatting, lints, layering, and the whole workspace's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-clients.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
scripts/check-layering.sh
cargo test --workspace --no-fail-fast
