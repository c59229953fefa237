#!/usr/bin/env bash
# Runs every test Cohort has, on a fresh machine too: installs the real clients the suite
# drives, then formatting, lints, layering, the whole workspace's tests, and a bounded fuzzing
# run of the decoders (scripts/fuzz.sh). Prints how long each phase took (building the tests
# apart from running them), the slowest test binaries, and the total, even when one fails.
#
#   FUZZ_SECONDS=N      seconds per fuzz target (default 15); 0 skips the fuzz phase
#   COHORT_TEST_JOBS=N  test binaries run at once (default 2; the binaries run-tests.py lists in
#                       ALONE never share the machine; 1 gives `cargo test`'s order; decision 0139)
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
timings=()
current=""
phase_started=0
tests_log=$(mktemp)

report() {
    echo
    echo "== scripts/test.sh phases =="
    for t in "${timings[@]}"; do echo "$t"; done
    if [ -n "$current" ]; then
        printf '%-10s %6ss  FAILED\n' "$current" $((SECONDS - phase_started))
    fi
    printf '%-10s %6ss\n' total $((SECONDS - started))
    slowest_test_binaries
    rm -f "$tests_log"
}

# The test binaries that ran longest (cargo prints "Running X" then "finished in Ns").
slowest_test_binaries() {
    [ -s "$tests_log" ] || return 0
    echo "== slowest test binaries =="
    # "Running tests/x.rs (target/.../x-HASH)" -> "tests/x.rs (x)"; "Doc-tests protocol" as is.
    awk '/^ *(Running|Doc-tests) / {
             name = $0; sub(/^ *(Running|Doc-tests) /, "", name)
             if (match(name, /\(.*\)$/)) {
                 bin = substr(name, RSTART + 1, RLENGTH - 2); sub(/.*\//, "", bin)
                 sub(/-[0-9a-f]+$/, "", bin); sub(/ \(.*$/, "", name); name = name " (" bin ")"
             }
         }
         /^test result: .* finished in / { sub(/s$/, "", $NF); printf "%8.1fs  %s\n", $NF, name }' \
        "$tests_log" | sort -rn | awk 'NR <= 8'
    # Not `head`: it exits after eight lines, and once sort's output outgrows one stdio buffer
    # (about a hundred binaries) sort dies of SIGPIPE, which pipefail and set -e in this EXIT
    # trap turned into the script's status (141) after every test had passed.
}
trap report EXIT

# phase NAME COMMAND...: runs the command and records its wall time.
phase() {
    current=$1
    shift
    phase_started=$SECONDS
    "$@"
    timings+=("$(printf '%-10s %6ss' "$current" $((SECONDS - phase_started)))")
    current=""
}

phase setup scripts/setup-clients.sh
phase fmt cargo fmt --all -- --check
phase clippy cargo clippy --workspace --all-targets -- -D warnings
phase layering scripts/check-layering.sh
# The test binaries only: examples and benches are not built here (clippy --all-targets has
# checked they compile, and no test runs them; raft-meta's bake-off example alone was ~5 % of a
# cold build). run-tests.py asks cargo for the same targets, so nothing builds twice.
phase build cargo test --workspace --lib --bins --tests --no-run
# Test binaries run COHORT_TEST_JOBS (default 2) at a time, those whose deadlines need the two
# cores alone (ALONE in run-tests.py) with nothing beside them (decision 0139).
# Through tee for the slowest-binaries summary; pipefail keeps the runner's exit status.
run_tests() { scripts/run-tests.py 2>&1 | tee "$tests_log"; }
phase tests run_tests
if [ "${FUZZ_SECONDS:-15}" != 0 ]; then
    phase fuzz scripts/fuzz.sh "${FUZZ_SECONDS:-15}"
fi
