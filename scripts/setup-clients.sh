#!/usr/bin/env bash
# Installs the real Kafka clients the test suite drives: kcat and openssl (Debian), confluent-kafka and
# kafka-python (a venv in .venv), kafkajs and kafka-ts (npm, tests/clients/node). Idempotent: a second run
# only checks what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing_debs=()
command -v kcat >/dev/null 2>&1 || missing_debs+=(kcat)
command -v chromium >/dev/null 2>&1 || missing_debs+=(chromium)
# mkfs.btrfs: the EDQUOT test makes a btrfs with a quota (tests/disk_quota.rs).
command -v mkfs.btrfs >/dev/null 2>&1 || missing_debs+=(btrfs-progs)
# tests/security.rs makes its throwaway certificates with the openssl tool.
command -v openssl >/dev/null 2>&1 || missing_debs+=(openssl)
if [ ${#missing_debs[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing_debs[*]}"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing_debs[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating the Python venv in .venv"
  python3 -m venv .venv
fi
if ! .venv/bin/pip freeze 2>/dev/null | sort | diff -q - <(grep -v '^#' scripts/requirements.txt | sort) >/dev/null 2>&1; then
  .venv/bin/pip install -q --disable-pip-version-check -r scripts/requirements.txt
fi

if [ ! -d tests/clients/node/node_modules/kafkajs ] || [ ! -d tests/clients/node/node_modules/kafka-ts ] || [ tests/clients/node/package-lock.json -nt tests/clients/node/node_modules/.package-lock.json ]; then
  echo "setup: installing the Node clients"
  (cd tests/clients/node && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "setup: clients ready (kcat $(kcat -V 2>/dev/null | head -n1 | awk '{print $2}'), $(.venv/bin/python -c 'import confluent_kafka,kafka; print("confluent-kafka", confluent_kafka.version()[0], "kafka-python", kafka.__version__)'), kafkajs $(node -p 'require("./tests/clients/node/node_modules/kafkajs/package.json").version'), kafka-ts $(node -p 'require("./tests/clients/node/node_modules/kafka-ts/package.json").version'))"
