#!/usr/bin/env bash
# Retrain, export and score one bundled model from scratch:
#
#   bash resources/training/retrain.sh en-de      (or en-fr)
#
# 1. trains with resources/training/PAIR.toml into runs/PAIR (resumes if interrupted: rerun it),
# 2. exports the best checkpoint (by dev BLEU) to models/PAIR as float16 with card.json + README.md,
# 3. scores it on the Tatoeba dev set with `nmt-desktop eval` (beam 5) and records that in the card.
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
"$NMT" export "runs/$PAIR/best" --out "models/$PAIR" --dtype float16 --max-file-mb 16 \
    --attribution "Tatoeba Project (tatoeba.org) via manythings.org/anki" --license "CC-BY 2.0 FR" \
    --retrain "bash resources/training/retrain.sh $PAIR"
"$NMT" eval -m "models/$PAIR" --test "../shared/data/tatoeba/$PAIR/dev.tsv" --beam 5 --write-card dev
