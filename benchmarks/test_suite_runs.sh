#!/usr/bin/env bash
# The README's test command on a fresh clone, quiet or beside `stress-ng --cpu N` (issue 41): wall time, the
# pass/fail line and the 20 slowest tests of each run, for benchmarks/RESULTS.md "Test suite".
#
#   benchmarks/test_suite_runs.sh [--stress N] [--runs K] [--rev REV] [--out DIR]
#
# Each run clones REV (default HEAD) of this repository into a fresh folder beside it (so ../shared/data is
# found as in CI), runs `bash .ci/setup.sh` there
# (not timed: the pip cache makes it a minute), then times exactly the command .ci/run calls, with
# --durations=20 appended. With --stress N, `stress-ng --cpu N` runs for the whole of each timed run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
STRESS=0; RUNS=1; REV=HEAD; OUT=${TMPDIR:-/tmp}/test-suite-runs
while (($#)); do
    case $1 in
        --stress) STRESS=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --rev) REV=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        *) echo "usage: $0 [--stress N] [--runs K] [--rev REV] [--out DIR]" >&2; exit 2 ;;
    esac
done
mkdir -p "$OUT"
COMMAND=$(tail -n 1 "$HERE/.ci/run" | sed 's/^bash .ci\/setup.sh && //')
for run in $(seq 1 "$RUNS"); do
    clone="$(dirname "$HERE")/test-suite-clone-$run"
    rm -rf "$clone"
    git clone -q "$HERE" "$clone"
    git -C "$clone" checkout -q "$(git -C "$HERE" rev-parse "$REV")"
    (cd "$clone" && bash .ci/setup.sh >"$OUT/setup-$run.log" 2>&1)
    stress_pid=
    if ((STRESS > 0)); then
        stress-ng --cpu "$STRESS" --quiet & stress_pid=$!
    fi
    start=$(date +%s)
    set +e
    (cd "$clone" && CI=true eval "$COMMAND --durations=20 --junitxml=$OUT/junit-$run.xml") >"$OUT/run-$run.log" 2>&1
    code=$?
    set -e
    seconds=$(($(date +%s) - start))
    [[ -n $stress_pid ]] && kill "$stress_pid" && wait "$stress_pid" 2>/dev/null || true
    summary=$(grep -E '(passed|failed|error)' "$OUT/run-$run.log" | tail -n 1)
    printf 'run %d: stress-ng --cpu %d, exit %d, %d min %02d s: %s\n' "$run" "$STRESS" "$code" \
        $((seconds / 60)) $((seconds % 60)) "$summary" | tee -a "$OUT/summary.txt"
    rm -rf "$clone"
done
