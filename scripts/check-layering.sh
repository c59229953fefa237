#!/usr/bin/env bash
# Checks the layering from the code, not from goodwill:
# 1. DESIGN.md §2 between crates, from `cargo metadata`: protocol, compaction and coordinator
#    are leaves; raft-meta may use coordinator and compaction; only the binary (cohort) depends
#    on everything.
# 2. Inside coordinator/, from its `crate::` paths: its modules form layers that only import
#    downward (see `COORDINATOR_LAYERS` below and coordinator/src/lib.rs).
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

python3 - coordinator/src <<'PY'
# coordinator/'s module layers, lowest first. A module may use only modules of lower layers
# (its own submodules are free); two modules of one layer know nothing of each other. A new
# top-level module must be given a layer here, or this check fails.
COORDINATOR_LAYERS = [
    # What everything speaks: newtypes, settings, the ConsumerProtocol subscription bytes.
    {"ids", "config", "subscription"},
    # Records, their values and their codec: know nothing of group state.
    {"record"},
    # The machine's vocabulary: timers, replies (and the domain error kinds).
    {"timer", "reply"},
    # Its inputs and outputs: commands, outcomes.
    {"command", "outcome"},
    # The group model (classic protocol rules, effects of a handler) and the indexes the
    # state keeps groups and offsets in. `assignor` (server-side assignors) goes here.
    {"group", "index", "assignor",
     # Per-group config overrides: their validation (the record value is `record::group_config`).
     "group_config"},
    # One module per concern: takes the part of the state it needs, returns an Outcome.
    # The consumer protocol (KIP-848) and transactions are concerns of this layer too.
    {"membership", "offsets", "admin", "expiry", "consumer_group", "transactions"},
    # Online migration between the two group protocols: uses both of their concerns.
    {"migration"},
    # Dispatches commands to the concerns and replays records: the top.
    {"state"},
]
import os, re, sys
root = sys.argv[1]
rank = {m: i for i, layer in enumerate(COORDINATOR_LAYERS) for m in layer}
path_re = re.compile(r"\bcrate::(\{[^}]*\}|\w+)")
bad = []
for dirpath, _, files in os.walk(root):
    for name in files:
        if not name.endswith(".rs"):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, root)
        top = rel.split(os.sep)[0].removesuffix(".rs")
        if top == "lib":
            continue  # the crate root declares and re-exports every module
        if top not in rank:
            bad.append(f"{rel}: module `{top}` has no layer in scripts/check-layering.sh")
            continue
        with open(path, encoding="utf-8") as f:
            code = "\n".join(line.split("//", 1)[0] for line in f)
        for m in path_re.finditer(code):
            lineno = code.count("\n", 0, m.start()) + 1
            used = m.group(1)
            names = re.findall(r"(?:^|[{,])\s*(\w+)", used) if used.startswith("{") else [used]
            for dep in names:
                if dep == top or dep == "self":
                    continue
                if dep not in rank:
                    bad.append(f"{rel}:{lineno}: uses `crate::{dep}`, which is not a module with a layer (name the module, not a crate-root re-export)")
                elif rank[dep] >= rank[top]:
                    bad.append(f"{rel}:{lineno}: `{top}` (layer {rank[top]}) uses `{dep}` (layer {rank[dep]}): imports go downward only")
if bad:
    print("coordinator module layering violated:\n  " + "\n  ".join(bad)); sys.exit(1)
print("coordinator module layering ok")
PY

# 3. Every file of a package's tests/ is a module of its suite binary (decision 0180): with
#    `autotests = false` a file left out would compile into nothing and its tests never run.
for suite in tests/suite.rs raft-meta/tests/suite.rs coordinator/tests/suite.rs compaction/tests/suite.rs; do
    dir=$(dirname "$suite")
    for f in "$dir"/*.rs; do
        name=$(basename "$f" .rs)
        [ "$name" = suite ] && continue
        grep -qx "mod $name;" "$suite" || { echo "tests: $f is not declared in $suite (add \`mod $name;\`)"; exit 1; }
    done
done
echo "test suites ok"
