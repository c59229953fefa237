#!/bin/bash
# Instructions per request, independent of machine load: a broker under callgrind, counters
# zeroed around each load, requests counted from its own cohort_requests_total.
#   scripts/bench-callgrind.sh [COHORT_BINARY]     (default target/release/cohort)
# Prints instructions per ApiVersions, per lone OffsetCommit and per OffsetCommit of 64
# members in 16 groups. Needs valgrind (callgrind_control) and python3.
set -euo pipefail
BIN=${1:-target/release/cohort}
BIN=$(realpath "$BIN")
PORT=${PORT:-19292}
. "$(dirname "$0")/lib/callgrind-broker.sh"
count() { metrics | awk -v k="cohort_requests_total{api=\"$1\"}" '$1==k {print $2}'; }
per() { echo "$1: $2 instructions for $3 requests: $(( $2 / $3 )) each"; }

zero; sleep 10; echo "idle broker: $(dumped) instructions in 10 s"

a0=$(count ApiVersions); zero
python3 - 127.0.0.1 $PORT 3000 <<'PY'
import socket, struct, sys
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.create_connection((host, port))
def exact(k):
    buf = b""
    while len(buf) < k:
        c = s.recv(k - len(buf))
        if not c:
            raise SystemExit("closed")
        buf += c
    return buf
for i in range(n):
    body = struct.pack(">hhih", 18, 0, i, 2) + b"cg"
    s.sendall(struct.pack(">i", len(body)) + body)
    exact(struct.unpack(">i", exact(4))[0])
PY
ir=$(dumped); a1=$(count ApiVersions); per ApiVersions "$ir" $((a1 - a0))

for shape in "1 1 cg1" "64 16 cg64"; do
  set -- $shape
  c0=$(count OffsetCommit); zero
  "$BIN" bench commits --bootstrap-server 127.0.0.1:$PORT --baseline false --members "$1" \
    --groups "$2" --partitions 1 --duration-secs 20 --warmup-secs 1 --fsync-probe-writes 10 \
    --topic "$3" > "$D/bench-$3.out" 2>&1
  ir=$(dumped); c1=$(count OffsetCommit); per "OffsetCommit, $1 member(s) in $2 group(s)" "$ir" $((c1 - c0))
done
