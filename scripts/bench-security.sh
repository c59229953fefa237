#!/usr/bin/env bash
# Issue 12's security figures, each a ratio measured in the same run (docs/BENCHMARKS.md):
#
#   1. produce and fetch over TLS against plaintext: `cohort bench produce|fetch
#      --command-config` (the in-process broker listens on both; every round measures
#      plaintext, then TLS)
#   2. OffsetCommit requests/s over SASL_SSL (SCRAM-SHA-512) with `--authorizer acl` holding
#      10,000 ACLs against plaintext with no authorizer: two `cohort serve` processes, the
#      same `cohort bench commits` load on each, alternating
#   3. SCRAM authentications per second and per second of broker CPU: `cohort bench auth`
#      against the SASL broker of 2 (SCRAM-SHA-256 and SCRAM-SHA-512)
#
#   scripts/bench-security.sh [DIR]      (DIR: scratch, default a new temp directory)
#
# Every figure is measured twice, baseline and variant alternating. Needs the release binary
# (COHORT_BIN, default target/release/cohort), openssl, and .venv's confluent-kafka (for the
# 10,000 CreateAcls). Stops what it started by pid.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${COHORT_BIN:-$ROOT/target/release/cohort}
PY=${PYTHON:-$ROOT/.venv/bin/python}
DIR=${1:-$(mktemp -d)}
DURATION_S=${DURATION_S:-10}
mkdir -p "$DIR"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do
        kill -9 "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT

echo "# cohort security figures, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary: $BIN"

# --- certificates: a throwaway CA and a server certificate for 127.0.0.1 ---
cd "$DIR"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout ca.key -out ca.pem -subj "/CN=bench CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile server.ext -out server.pem 2>/dev/null
printf 'security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=%s/ca.pem\n' \
    "$DIR" > ssl.properties
for mech in 256 512; do
    cat > "alice-$mech.properties" <<PROPS
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-$mech
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice$mech" password="alice-secret";
ssl.truststore.type=PEM
ssl.truststore.location=$DIR/ca.pem
PROPS
done

# --- 1. produce and fetch, TLS against plaintext ---
for run in 1 2; do
    echo
    echo "## produce, run $run"
    "$BIN" bench produce --dir "$DIR" --total-mib 128 --rounds 4 \
        --command-config ssl.properties --ssl-cert server.pem --ssl-key server.key
    echo
    echo "## fetch, run $run"
    "$BIN" bench fetch --dir "$DIR" --total-mib 128 --rounds 3 \
        --command-config ssl.properties --ssl-cert server.pem --ssl-key server.key
done

# --- 2. OffsetCommit: SASL_SSL + 10,000 ACLs against plaintext without an authorizer ---
port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # NAME ARGS...: starts a broker, prints its pid once it listens
    local name=$1; shift
    "$BIN" serve --data-dir "$DIR/$name" --http 127.0.0.1:0 "$@" > "$DIR/$name.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 200); do
        grep -q "cohort listening" "$DIR/$name.log" && break
        sleep 0.1
    done
    grep -q "cohort listening" "$DIR/$name.log" || { cat "$DIR/$name.log" >&2; exit 1; }
    echo "$pid"
}
PLAIN_PORT=$(port)
SASL_PORT=$(port)
PLAIN_PID=$(start plain --listen "127.0.0.1:$PLAIN_PORT")
PIDS+=("$PLAIN_PID")
SASL_PID=$(start sasl --listeners "SASL_SSL://127.0.0.1:$SASL_PORT" \
    --ssl-cert server.pem --ssl-key server.key --authorizer acl --super-users User:admin \
    --scram-user admin:SCRAM-SHA-512:admin-secret \
    --scram-user alice256:SCRAM-SHA-256:alice-secret \
    --scram-user alice512:SCRAM-SHA-512:alice-secret)
PIDS+=("$SASL_PID")
sleep 2
"$PY" - "127.0.0.1:$SASL_PORT" "$DIR/ca.pem" <<'PYACLS'
import sys
from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,
                                   ResourcePatternType, ResourceType)
admin = AdminClient({"bootstrap.servers": sys.argv[1], "security.protocol": "SASL_SSL",
                     "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "admin",
                     "sasl.password": "admin-secret", "ssl.ca.location": sys.argv[2]})
acls = []
for user in ("alice256", "alice512"):
    acls += [
        AclBinding(ResourceType.GROUP, "cohort-bench", ResourcePatternType.PREFIXED,
                   f"User:{user}", "*", AclOperation.READ, AclPermissionType.ALLOW),
        AclBinding(ResourceType.TOPIC, "cohort-bench", ResourcePatternType.PREFIXED,
                   f"User:{user}", "*", AclOperation.ALL, AclPermissionType.ALLOW),
    ]
# The rest: other principals' ACLs on other topics and groups, literal and prefixed, so the
# authorizer's index holds 10,000 entries.
i = 0
while len(acls) < 10_000:
    rtype = ResourceType.TOPIC if i % 2 == 0 else ResourceType.GROUP
    pattern = ResourcePatternType.LITERAL if i % 3 else ResourcePatternType.PREFIXED
    acls.append(AclBinding(rtype, f"app-{i % 997}-{i}", pattern, f"User:user{i % 500}", "*",
                           AclOperation.READ, AclPermissionType.ALLOW))
    i += 1
for start in range(0, len(acls), 1000):
    for f in admin.create_acls(acls[start:start + 1000]).values():
        f.result(60)
print(f"created {len(acls)} ACLs")
PYACLS

commits() { # LABEL BOOTSTRAP [--command-config FILE]
    local label=$1 bootstrap=$2; shift 2
    "$BIN" bench commits --bootstrap-server "$bootstrap" --baseline false \
        --duration-secs "$DURATION_S" --warmup-secs 3 --fsync-probe-writes 200 --dir "$DIR" "$@" > "$DIR/commits.out"
    local row
    row=$(grep '^| cohort' "$DIR/commits.out" | head -1)
    echo "$label: $row" >&2
    echo "$row" | awk -F'|' '{gsub(/ /, "", $3); print $3}'
}
echo
echo "## OffsetCommit requests/s"
for run in 1 2; do
    plain=$(commits "run $run plaintext, no authorizer" "127.0.0.1:$PLAIN_PORT")
    acl=$(commits "run $run SASL_SSL SCRAM-SHA-512, 10,000 ACLs" "127.0.0.1:$SASL_PORT" \
        --command-config alice-512.properties)
    echo "run $run: plaintext $plain commits/s, SASL_SSL + ACLs $acl commits/s, ratio $(
        awk -v a="$acl" -v p="$plain" 'BEGIN { printf "%.2f", a / p }')"
done

# --- 3. SCRAM authentications per second and per broker CPU second ---
echo
echo "## SCRAM authentications"
for run in 1 2; do
    for mech in 256 512; do
        echo "run $run, SCRAM-SHA-$mech:"
        "$BIN" bench auth --bootstrap-server "127.0.0.1:$SASL_PORT" \
            --command-config "alice-$mech.properties" --broker-pid "$SASL_PID" \
            --connections 4 --duration-secs "$DURATION_S"
    done
done
