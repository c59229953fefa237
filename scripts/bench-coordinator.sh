#!/usr/bin/env bash
# The group-coordinator figures of docs/BENCHMARKS.md, one scenario after another, each with
# its own naive baseline where that makes sense. Prints every report (with `uptime` before each)
# to stdout; progress goes to stderr.
#
#   scripts/bench-coordinator.sh                 # every scenario
#   scripts/bench-coordinator.sh single fetch    # some of them
#
# Scenarios: single (1 partition per commit), wide (50 partitions), three (3 nodes), fetch
# (OffsetFetch of a 100-partition group), soak (10,000 members, 10 minutes), soak-baseline
# (the soak's shape for 60 s against Cohort and the naive baseline).
#
# On a shared machine, BENCH_QUIET_LOAD=1.0 waits (up to BENCH_QUIET_WAIT_SECS, default 600)
# before each scenario until the 1-minute load average is below that value.
set -euo pipefail

cd "$(dirname "$0")/.."
cargo build --release --bin cohort >&2
COHORT=target/release/cohort
SCRATCH=${BENCH_DIR:-${TMPDIR:-/tmp}}

wait_quiet() {
    [[ -z "${BENCH_QUIET_LOAD:-}" ]] && return 0
    local waited=0 max=${BENCH_QUIET_WAIT_SECS:-600}
    while awk -v lim="$BENCH_QUIET_LOAD" '{ exit !($1 >= lim) }' /proc/loadavg; do
        if ((waited >= max)); then
            echo "bench: load still $(cut -d' ' -f1 /proc/loadavg) after ${max} s; running anyway" >&2
            return 0
        fi
        sleep 10
        waited=$((waited + 10))
    done
}

run() {
    local name=$1
    shift
    wait_quiet
    echo "bench: $name" >&2
    echo
    echo "## $name"
    echo "uptime: $(uptime)"
    "$COHORT" bench "$@" --dir "$SCRATCH"
}

scenario() {
    case $1 in
    single)
        run single commits --members 256 --groups 64 --partitions 1 --duration-secs 20 ;;
    wide)
        run wide commits --members 256 --groups 64 --partitions 50 --duration-secs 20 ;;
    three)
        run three commits --nodes 3 --members 256 --groups 64 --partitions 1 --duration-secs 20 ;;
    fetch)
        run fetch offset-fetch --partitions 100 --groups 1 --connections 64 --duration-secs 10 ;;
    soak)
        run soak commits --members 10000 --groups 1000 --partitions 1 \
            --commit-interval-ms 5000 --heartbeat-interval-ms 3000 \
            --warmup-secs 10 --duration-secs 600 --baseline false ;;
    soak-baseline)
        run soak-baseline commits --members 10000 --groups 1000 --partitions 1 \
            --commit-interval-ms 5000 --heartbeat-interval-ms 3000 \
            --warmup-secs 10 --duration-secs 60 ;;
    *)
        echo "unknown scenario $1" >&2
        exit 2 ;;
    esac
}

if (($# == 0)); then
    set -- single wide three fetch soak-baseline soak
fi
for s in "$@"; do
    scenario "$s"
done
