#!/usr/bin/env bash
# The long form of the seeded chaos test (tests/cluster_chaos.rs): three nodes, producer and
# committer load, topics created and deleted, a random node SIGKILLed every few seconds and
# restarted; then every acknowledged record, commit and topic is checked and the nodes must
# agree. Prints the seed (rerun with --seed to replay the kill schedule) and the figures that
# go in docs/BENCHMARKS.md.
#
#   scripts/chaos.sh [--minutes N] [--seed S] [--release]
#
# Defaults: 5 minutes, a fresh seed, the debug build. scripts/test.sh runs the short form
# (COHORT_CHAOS_SECONDS unset: 40 s).
set -euo pipefail

minutes=5
seed=""
profile=()
while [[ $# -gt 0 ]]; do
    case "$1" in
    --minutes) minutes=${2:?--minutes needs a number}; shift 2 ;;
    --seed) seed=${2:?--seed needs a number}; shift 2 ;;
    --release) profile=(--release); shift ;;
    *) echo "usage: $0 [--minutes N] [--seed S] [--release]" >&2; exit 2 ;;
    esac
done
[[ $minutes =~ ^[0-9]+$ ]] && ((minutes >= 1 && minutes <= 600)) ||
    { echo "chaos.sh: --minutes must be 1..600, got '$minutes'" >&2; exit 2; }
[[ -z $seed || $seed =~ ^[0-9]+$ ]] ||
    { echo "chaos.sh: --seed must be a number, got '$seed'" >&2; exit 2; }

cd "$(dirname "$0")/.."
export COHORT_CHAOS_SECONDS=$((minutes * 60))
[[ -n $seed ]] && export COHORT_CHAOS_SEED=$seed
exec cargo test "${profile[@]}" -p cohort --test suite -- cluster_chaos:: --nocapture --test-threads 1
