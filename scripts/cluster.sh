#!/usr/bin/env bash
# A three-node Cohort cluster on this machine.
#
#   scripts/cluster.sh up DIR        start nodes 1..3 and wait for a leader and Metadata on all
#   scripts/cluster.sh down DIR      stop exactly the processes `up` started (by their pid files)
#   scripts/cluster.sh status DIR    `cohort cluster status` against the three nodes
#   scripts/cluster.sh start DIR N   start node N alone (e.g. after it was killed)
#   scripts/cluster.sh stop DIR N    stop node N alone
#
# Ports, from BASE (default 19090): node N listens for Kafka on BASE+N, for Raft on BASE+10+N
# and for HTTP (/metrics, /healthz) on BASE+20+N. Data lives in DIR/node-N, the log (stdout and
# stderr) in DIR/node-N.log, the pid in DIR/node-N.pid.
#
# The Raft ports are authenticated: the first `up` or `start` writes a random cluster secret to
# DIR/cluster.secret (mode 600) unless it exists, and every node and every `cohort cluster` call
# of this script is given it (`--cluster-secret-file`). Run `cohort cluster` by hand with
# `--cluster-secret-file DIR/cluster.secret`.
#
# Environment: BASE; RAFT_PEER_BASE (default BASE+10): peers dial node N's Raft port at
# RAFT_PEER_BASE+N, so a test can put a proxy it cuts between the nodes (tests/cluster_lease.rs);
# COHORT_BIN (default: target/release/cohort if present, else
# target/debug/cohort); COHORT_SERVE_ARGS, extra `cohort serve` flags for every node;
# UP_TIMEOUT_S (default 60); DOWN_GRACE_S (default 10), the SIGTERM-to-SIGKILL grace;
# CLUSTER_SECRET_FILE (default DIR/cluster.secret), a secret of your own instead.
#
# Exit codes: 0 done; 1 failure (a node did not start, the cluster did not form in time);
# 2 usage; for `status`, `cohort cluster status`'s own codes (3 no leader, 4 degraded).
set -euo pipefail

NODES=(1 2 3)
BASE=${BASE:-19090}
UP_TIMEOUT_S=${UP_TIMEOUT_S:-60}
DOWN_GRACE_S=${DOWN_GRACE_S:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

usage() {
    echo "usage: $0 up|down|status DIR" >&2
    echo "       $0 start|stop DIR N" >&2
    exit 2
}

die() {
    echo "cluster.sh: $*" >&2
    exit 1
}

case "$BASE" in
'' | *[!0-9]*) die "BASE must be a port number, not '$BASE'" ;;
esac
if ((BASE < 1024 || BASE + 23 > 65535)); then
    die "BASE=$BASE leaves ports outside 1024..65535"
fi
case "${RAFT_PEER_BASE:-1024}" in
'' | *[!0-9]*) die "RAFT_PEER_BASE must be a port number, not '$RAFT_PEER_BASE'" ;;
esac

bin() {
    if [[ -n ${COHORT_BIN:-} ]]; then
        echo "$COHORT_BIN"
    elif [[ -x $ROOT/target/release/cohort ]]; then
        echo "$ROOT/target/release/cohort"
    elif [[ -x $ROOT/target/debug/cohort ]]; then
        echo "$ROOT/target/debug/cohort"
    else
        die "no cohort binary: build it (cargo build --release) or set COHORT_BIN"
    fi
}

kafka_port() { echo $((BASE + $1)); }
raft_port() { echo $((BASE + 10 + $1)); }
peer_raft_port() { echo $((${RAFT_PEER_BASE:-$((BASE + 10))} + $1)); }
http_port() { echo $((BASE + 20 + $1)); }

peers() {
    local list="" n
    for n in "${NODES[@]}"; do
        list+="${list:+,}$n@127.0.0.1:$(peer_raft_port "$n")@127.0.0.1:$(kafka_port "$n")"
    done
    echo "$list"
}

raft_addrs() {
    local list="" n
    for n in "${NODES[@]}"; do
        list+="${list:+,}127.0.0.1:$(raft_port "$n")"
    done
    echo "$list"
}

# The pid in DIR/node-N.pid if that process is still the cohort node this script started
# (its command line names the node's data directory), so a recycled pid is never signalled.
live_pid() {
    local dir=$1 n=$2 pidfile="$1/node-$2.pid" pid
    [[ -f $pidfile ]] || return 1
    pid=$(<"$pidfile")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [[ -r /proc/$pid/cmdline ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "--data-dir $dir/node-$n " || return 1
    echo "$pid"
}

secret_file() {
    echo "${CLUSTER_SECRET_FILE:-$1/cluster.secret}"
}

# Writes a random secret (32 bytes, base64) readable by this user only, unless one exists.
ensure_secret() {
    local file tmp
    file=$(secret_file "$1")
    [[ -f $file ]] && return 0
    tmp="$file.tmp.$$"
    (umask 077 && head -c 32 /dev/urandom | base64 >"$tmp") || die "cannot write $tmp"
    mv "$tmp" "$file"
    echo "cluster secret: $file"
}

start_node() {
    local dir=$1 n=$2 pid
    if pid=$(live_pid "$dir" "$n"); then
        echo "node $n already running (pid $pid)"
        return 0
    fi
    ensure_secret "$dir"
    mkdir -p "$dir/node-$n"
    # shellcheck disable=SC2086 # COHORT_SERVE_ARGS is a list of flags
    nohup "$(bin)" serve \
        --data-dir "$dir/node-$n" \
        --node-id "$n" \
        --listen "127.0.0.1:$(kafka_port "$n")" \
        --http "127.0.0.1:$(http_port "$n")" \
        --raft "127.0.0.1:$(raft_port "$n")" \
        --advertise-raft "127.0.0.1:$(peer_raft_port "$n")" \
        --peers "$(peers)" \
        --cluster-secret-file "$(secret_file "$dir")" \
        ${COHORT_SERVE_ARGS:-} \
        >>"$dir/node-$n.log" 2>&1 </dev/null &
    echo $! >"$dir/node-$n.pid"
    echo "node $n: pid $!, kafka 127.0.0.1:$(kafka_port "$n"), raft 127.0.0.1:$(raft_port "$n"), http 127.0.0.1:$(http_port "$n")"
}

stop_node() {
    local dir=$1 n=$2 pid waited=0
    if ! pid=$(live_pid "$dir" "$n"); then
        rm -f "$dir/node-$n.pid"
        return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null && ((waited < DOWN_GRACE_S * 10)); do
        sleep 0.1
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "node $n (pid $pid) still running after ${DOWN_GRACE_S}s: SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    # Wait (bounded) until it is gone, or a zombie: its data-dir lock is released then.
    waited=0
    while [[ -e /proc/$pid ]] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null &&
        ((waited < 100)); do
        sleep 0.05
        waited=$((waited + 1))
    done
    rm -f "$dir/node-$n.pid"
    echo "node $n stopped (pid $pid)"
}

cluster_status() {
    local secret=()
    if [[ -f $(secret_file "$dir") ]]; then
        secret=(--cluster-secret-file "$(secret_file "$dir")")
    fi
    "$(bin)" cluster status --bootstrap "$(raft_addrs)" --timeout-ms 2000 "${secret[@]}" "$@"
}

up() {
    local dir=$1 n deadline
    mkdir -p "$dir"
    ensure_secret "$dir"
    for n in "${NODES[@]}"; do
        start_node "$dir" "$n"
    done
    deadline=$((SECONDS + UP_TIMEOUT_S))
    while ((SECONDS < deadline)); do
        for n in "${NODES[@]}"; do
            # kill -0 rather than live_pid: a node just forked may not have exec'd yet.
            if ! kill -0 "$(<"$dir/node-$n.pid")" 2>/dev/null; then
                echo "node $n exited; last lines of $dir/node-$n.log:" >&2
                tail -n 20 "$dir/node-$n.log" >&2 || true
                exit 1
            fi
        done
        # Healthy = one leader every node agrees on, and every node's Metadata lists all
        # three brokers with that leader as controller.
        if cluster_status >/dev/null 2>&1; then
            cluster_status
            return 0
        fi
        sleep 0.2
    done
    echo "no healthy cluster within ${UP_TIMEOUT_S}s:" >&2
    cluster_status >&2 || true
    exit 1
}

down() {
    local dir=$1 n
    # In parallel: each node's shutdown (flush, close connections) then overlaps the others'.
    for n in "${NODES[@]}"; do
        stop_node "$dir" "$n" &
    done
    wait
}

node_arg() {
    [[ ${1:-} =~ ^[123]$ ]] || usage
    echo "$1"
}

[[ $# -ge 2 ]] || usage
cmd=$1
[[ -n $2 ]] || usage
dir=$(mkdir -p "$2" && cd "$2" && pwd)
case "$cmd" in
up) [[ $# -eq 2 ]] || usage; up "$dir" ;;
down) [[ $# -eq 2 ]] || usage; down "$dir" ;;
status) [[ $# -eq 2 ]] || usage; cluster_status ;;
start) [[ $# -eq 3 ]] || usage; start_node "$dir" "$(node_arg "$3")" ;;
stop) [[ $# -eq 3 ]] || usage; stop_node "$dir" "$(node_arg "$3")" ;;
*) usage ;;
esac
