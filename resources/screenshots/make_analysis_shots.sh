#!/usr/bin/env bash
# Regenerate the Analysis tab's screenshots in the user guide (docs/guide/analysis.md), made by the app itself:
# resources/screenshots/analysis.png and analysis-<view>.png for each of its seven views.
#
#   resources/screenshots/make_analysis_shots.sh [MODEL [MODEL_B]]   # default: the bundled en-de, and en-fr
#
# MODEL_B is the second model of "Compare models" (same English source; its target tokens differ, so the
# view shows both attentions side by side without a B - A map). Runs offscreen; NMT_DESKTOP overrides
# the app command (default .venv/bin/nmt-desktop).
set -euo pipefail
cd "$(dirname "$0")/../.."
MODEL=${1:-en-de}
MODEL_B=${2:-en-fr}
APP=${NMT_DESKTOP:-.venv/bin/nmt-desktop}
OUT=resources/screenshots
TEXT="The old man gave his daughter a book yesterday."
export QT_QPA_PLATFORM=offscreen

shot() {  # shot FILE ARGS...: one screenshot of the Analysis tab
    local file=$OUT/$1
    shift
    "$APP" gui -m "$MODEL" --tab analysis "$@" --screenshot "$file"
    echo "$file"
}

shot analysis.png --text "$TEXT"
shot analysis-stats.png --text "$TEXT" --analysis-view stats
shot analysis-ablation.png --text "$TEXT" --analysis-view ablation   # every head of the last decoder layer off
shot analysis-alignments.png --text "$TEXT" --analysis-view alignments
shot analysis-coverage.png --text "$TEXT" --analysis-view coverage
shot analysis-forced.png --text "$TEXT" --analysis-view forced --force-step 2
shot analysis-beam-tree.png --text "The old man reads a book." --analysis-view beam-tree --beam 4
shot analysis-compare.png --text "$TEXT" --analysis-view compare --compare "$MODEL_B"
