#!/usr/bin/env bash
# Checks DESIGN.md §2's layering from `cargo metadata`, not from goodwill:
# protocol, compaction and coordinator are leaves; raft-meta may use coordinator and compaction;
# only the binary (cohort) depends on everything.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
allowed = {
    "protocol": set(),
    "compaction": set(),
    "coordinator": set(),
    "raft-meta": {"coordinator", "compaction"},
    "cohort": {"protocol", "compaction", "coordinator", "raft-meta"},
}
meta = json.load(sys.stdin)
ours = {p["name"] for p in meta["packages"]}
bad = []
for p in meta["packages"]:
    for d in p["dependencies"]:
        if d["name"] in ours and d.get("kind") != "dev" and d["name"] not in allowed.get(p["name"], set()):
            bad.append(p["name"] + " -> " + d["name"])
if bad:
    print("layering violated: " + ", ".join(bad)); sys.exit(1)
print("layering ok")
'
