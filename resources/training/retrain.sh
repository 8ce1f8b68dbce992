#!/usr/bin/env bash
# Retrain, export and score one bundled model from scratch:
#
#   bash resources/training/retrain.sh en-de      (or en-fr)
#
# 1. trains with resources/training/PAIR.toml into runs/PAIR (resumes if interrupted: rerun it),
# 2. exports to models/PAIR as float16 with card.json + README.md the average of the run's last
#    AVERAGE evaluated snapshots (runs/PAIR/checkpoints, kept by keep_checkpoints; AVERAGE below was
#    chosen on dev with resources/training/choose_average.py), or with AVERAGE=1 the best checkpoint,
# 3. scores it on the Tatoeba dev set with `nmt-desktop eval` (beam 5; one reference per row, and
#    --multi-ref: all references of a repeated source) and records both in the card.
# Run from the repository root after `bash .ci/setup.sh`; ../shared/data/tatoeba must exist.
set -euo pipefail
PAIR="${1:?usage: retrain.sh en-de|en-fr}"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
NMT=".venv/bin/nmt-desktop"
CONFIG="resources/training/$PAIR.toml"
[[ -f "$CONFIG" ]] || { echo "retrain.sh: no training config $CONFIG" >&2; exit 2; }
RESUME=()
[[ -d "runs/$PAIR/last" ]] && RESUME=(--resume)
"$NMT" train --config "$CONFIG" "${RESUME[@]}"
case "$PAIR" in
    en-de) AVERAGE=${AVERAGE:-4} ;;
    en-fr) AVERAGE=${AVERAGE:-12} ;;
    *) AVERAGE=${AVERAGE:-1} ;;
esac
if [[ "$AVERAGE" -gt 1 ]]; then
    mapfile -t MODELS < <(ls -d "runs/$PAIR"/checkpoints/step-* | grep -E '/step-[0-9]+$' | sort | tail -n "$AVERAGE")
else
    MODELS=("runs/$PAIR/best")
fi
"$NMT" export "${MODELS[@]}" --out "models/$PAIR" --dtype float16 --max-file-mb 16 \
    --attribution "Tatoeba Project (tatoeba.org) via manythings.org/anki" --license "CC-BY 2.0 FR" \
    --retrain "bash resources/training/retrain.sh $PAIR"
"$NMT" eval -m "models/$PAIR" --test "../shared/data/tatoeba/$PAIR/dev.tsv" --beam 5 --write-card dev
"$NMT" eval -m "models/$PAIR" --test "../shared/data/tatoeba/$PAIR/dev.tsv" --beam 5 --multi-ref \
    --write-card dev-multiref
