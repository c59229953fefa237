#!/usr/bin/env bash
# Coverage-guided fuzzing of the decoders for a bounded time, on the stable toolchain:
# libFuzzer (libfuzzer-sys) with the sanitizer-coverage instrumentation that rustc's stable -C
# flags give (no cargo-fuzz, no nightly). protocol/fuzz/README.md says what each target feeds.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   default: 15 s, every target
#   FUZZ_MERGE=1 scripts/fuzz.sh ...                    also fold new finds into the kept corpus
#
# The kept corpus (protocol/fuzz/corpus/TARGET) is only read; a crash exits non-zero with the
# input saved under protocol/fuzz/artifacts/TARGET and the command that replays it.
set -euo pipefail
cd "$(dirname "$0")/../protocol/fuzz"

seconds=${1:-15}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(decode_request record_batch)
fi
host=$(rustc -vV | sed -n 's/^host: //p')
# --target keeps the instrumentation off build scripts and proc macros (they run on the host).
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
bins=()
for t in "${targets[@]}"; do bins+=(--bin "$t"); done
cargo build --release --locked --target "$host" "${bins[@]}"

for t in "${targets[@]}"; do
    bin="target/$host/release/$t"
    finds=$(mktemp -d)
    mkdir -p "corpus/$t" "artifacts/$t"
    log="$finds.log"
    echo "fuzz: $t for ${seconds}s (corpus/$t: $(ls "corpus/$t" | wc -l) seeds)"
    if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="artifacts/$t/" "$finds" "corpus/$t" >"$log" 2>&1; then
        tail -n 40 "$log"
        echo "fuzz: $t FAILED; replay with: protocol/fuzz/$bin protocol/fuzz/artifacts/$t/<file>"
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    echo "fuzz: $t ok: ${runs:-?} runs, $cov, $(ls "$finds" | wc -l) new inputs"
    if [ "${FUZZ_MERGE:-0}" = 1 ]; then
        "$bin" -merge=1 "corpus/$t" "$finds" >>"$log" 2>&1
        echo "fuzz: $t merged into corpus/$t ($(ls "corpus/$t" | wc -l) files)"
    fi
    rm -rf "$finds" "$log"
done
