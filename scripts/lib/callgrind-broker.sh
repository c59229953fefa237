# Sourced by scripts/bench-callgrind*.sh: starts `$BIN serve` under callgrind on 127.0.0.1:$PORT
# (metrics on $PORT + 1) with its data and dumps in a temporary directory $D, and defines
#   zero          zero the broker's counters
#   dumped        dump them and print the instructions since the last zero or dump
#   metrics       the broker's /metrics
# The broker is stopped and $D removed on exit; a caller with more to stop sets STOP_TOO to
# its PIDs. Needs valgrind (callgrind_control) and curl.
D=$(mktemp -d)
HTTP=$((PORT + 1))
valgrind --tool=callgrind --callgrind-out-file="$D/cg.%p.out" "$BIN" serve --data-dir "$D/data" \
  --listen 127.0.0.1:$PORT --http 127.0.0.1:$HTTP > "$D/broker.log" 2>&1 &
P=$!
STOP_TOO=
trap 'kill $STOP_TOO $P 2>/dev/null; wait 2>/dev/null; rm -rf "$D"' EXIT
for _ in $(seq 1 120); do curl -sf 127.0.0.1:$HTTP/metrics > /dev/null && break; sleep 1; done
metrics() { curl -s 127.0.0.1:$HTTP/metrics; }
zero() { callgrind_control -z $P > /dev/null 2>&1; }
dumped() {
  callgrind_control -d $P > /dev/null 2>&1
  sleep 1
  grep -E "^(summary|totals):" "$(ls -t "$D"/cg.$P.out.* | head -1)" | head -1 | awk '{print $2}'
}
