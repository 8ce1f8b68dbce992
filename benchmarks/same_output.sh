#!/usr/bin/env bash
# Output identity of a refactor (issue 30): the en-de dev set translated with beam 5 on every backend
# (and int8), scored and aligned, written to OUTDIR by the tree at TREE (its own package on PYTHONPATH).
# Run it on the old and the new tree, then `diff -r OLD NEW` must print nothing.
#   benchmarks/same_output.sh /tmp/before /tmp/out-before ; benchmarks/same_output.sh . /tmp/out-after
set -euo pipefail
TREE=$(cd "$1" && pwd); OUT=$2; mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$HERE/.venv/bin/python}
DEV=${DEV:-$HERE/../shared/data/tatoeba/en-de/dev.tsv}
cut -f1 "$DEV" > "$OUT/src.txt"
run() { (cd "$TREE" && NMT_DESKTOP_CONFIG_DIR=$(mktemp -d) PYTHONPATH="$TREE" "$PY" -m nmt_desktop "$@"); }
for backend in reference python compiled; do
  run translate -m en-de --beam 5 --threads 1 --backend $backend < "$OUT/src.txt" > "$OUT/beam5-$backend.txt"
done
run translate -m en-de --beam 5 --threads 1 --int8 < "$OUT/src.txt" > "$OUT/beam5-int8.txt"
head -300 < "$OUT/src.txt" > "$OUT/src300.txt"
run translate -m en-de --beam 5 --threads 1 --json < "$OUT/src300.txt" > "$OUT/beam5-json.txt"
run translate -m en-de --threads 1 --json < "$OUT/src300.txt" > "$OUT/greedy-json.txt"
run score -m en-de --threads 1 --alternatives 3 "$DEV" > "$OUT/score.txt" || true
run score -m en-de --threads 1 --format score --per-token "$DEV" > "$OUT/score-per-token.txt" || true
run align -m en-de --threads 1 "$DEV" > "$OUT/align.txt" 2> "$OUT/align-errors.txt" || true
rm "$OUT/src.txt" "$OUT/src300.txt"
