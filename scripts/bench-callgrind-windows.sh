#!/bin/bash
# Instructions per request of whatever a `cohort bench` load sends, independent of machine
# load: a broker under callgrind, its counters dumped every WINDOW seconds while the load runs,
# each window's requests counted from the broker's own cohort_requests_total. A window in which
# one API is at least 98 % of the requests counts for that API; its lowest and median windows
# are printed, net of a window of the idle broker taken first (its timers and the scrape that
# counts the requests: 6-9 M instructions in 10 s, a fifth of a window of 1,000 heartbeats).
#   scripts/bench-callgrind-windows.sh COHORT_BINARY BENCH_SUBCOMMAND [BENCH_ARGS...]
# e.g. scripts/bench-callgrind-windows.sh target/release/cohort consumer-heartbeats \
#        --members 500 --groups 50 --warmup-secs 30 --duration-secs 40
# (`--bootstrap-server` is added). Needs valgrind (callgrind_control), curl and python3.
set -euo pipefail
BIN=$(realpath "$1")
shift
WINDOW=${WINDOW:-10}
PORT=${PORT:-19392}
. "$(dirname "$0")/lib/callgrind-broker.sh"
counts() {
  metrics | awk -F'[{}" ]+' '/^cohort_requests_total\{/ {print $3, $NF}' | sort
}
# The idle broker's own window (timers, and the scrape that counts requests), taken off each
# window below; each of those is WINDOW seconds and the second its dump waits.
zero
sleep $((WINDOW + 1))
counts > /dev/null
dumped > "$D/ir.idle"
"$BIN" bench "$@" --bootstrap-server 127.0.0.1:$PORT > "$D/bench.out" 2>&1 &
B=$!
STOP_TOO=$B
counts > "$D/counts.0"
n=0
while kill -0 $B 2>/dev/null; do
  sleep "$WINDOW"
  n=$((n + 1))
  counts > "$D/counts.$n"
  dumped > "$D/ir.$n"
done
wait $B || { cat "$D/bench.out"; exit 1; }
STOP_TOO=
python3 - "$D" "$n" <<'PY'
import statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
def counts(i):
    out = {}
    for line in open(f"{d}/counts.{i}"):
        api, value = line.split()
        out[api] = float(value)
    return out
idle = int(open(f"{d}/ir.idle").read())
print(f"idle window: {idle:,} instructions (taken off every window)")
per_api = {}
prev = counts(0)
for i in range(1, n + 1):
    cur = counts(i)
    delta = {a: cur[a] - prev.get(a, 0) for a in cur if cur[a] - prev.get(a, 0) > 0}
    prev = cur
    ir = int(open(f"{d}/ir.{i}").read())
    total = sum(delta.values())
    shown = " ".join(f"{a}:{int(v)}" for a, v in sorted(delta.items()))
    print(f"window {i}: {ir:,} instructions; {shown or 'no requests'}")
    if total:
        api, top = max(delta.items(), key=lambda kv: kv[1])
        if top >= 0.98 * total:
            per_api.setdefault(api, []).append(max(ir - idle, 0) / total)
# The lowest window is the steady state (joins, rebalances and expiries cost more); the
# median shows how many windows were near it.
for api, values in sorted(per_api.items()):
    print(f"{api}: {min(values):,.0f} instructions per request in the lowest window, median "
          f"{statistics.median(values):,.0f} over {len(values)} windows (highest {max(values):,.0f})")
PY
