#!/usr/bin/env bash
# Regenerate the Translate tab's screenshots in the user guide (docs/guide/desktop-app.md), made by the app itself:
# translate.png (grid, beam 4, two sentences), focus.png (the focus view of a 20-token sentence, every
# label readable), translate-dark.png (the dark theme), translate-file.png (File > Translate text file…) and
# inspect.png (a human translation inspected: one word the model would not choose, the focus view on its tokens)
# translate-long.png (a 62-word paragraph: the translation scrolls above its notes) and linked.png (linked views:
# the word "Auto" selected, lit up in the translation, as a row of every heatmap and in the Alternatives tab).
#
#   resources/screenshots/make_translate_shots.sh [MODEL]   # default: the bundled en-de
#
# Runs offscreen; NMT_DESKTOP overrides the app command (default .venv/bin/nmt-desktop).
set -euo pipefail
cd "$(dirname "$0")/../.."
MODEL=${1:-en-de}
APP=${NMT_DESKTOP:-.venv/bin/nmt-desktop}
OUT=resources/screenshots
LONG="My brother bought a new car last week, and now he drives his children to school every morning."
export QT_QPA_PLATFORM=offscreen

"$APP" gui -m "$MODEL" --theme light --beam 4 \
    --text "My brother bought a new car last week. Where is the nearest train station?" \
    --screenshot $OUT/translate.png
"$APP" gui -m "$MODEL" --theme light --focus L3H2 --text "$LONG" --screenshot $OUT/focus.png
"$APP" gui -m "$MODEL" --theme dark --focus L3H2 \
    --text "My brother bought a new car last week. Where is the nearest train station?" \
    --screenshot $OUT/translate-dark.png
"$APP" gui -m "$MODEL" --theme light --beam 4 --focus L3H2 --text "My brother bought a new bicycle last week." \
    --inspect "Mein Bruder hat letzte Woche ein neues Rad gekauft." --screenshot $OUT/inspect.png
PARAGRAPH="The committee met on Tuesday to discuss the budget for the coming year and agreed that the new library \
should open in the spring, although several members argued that the money would be better spent on repairing the \
roads and the old bridge near the station, which has been closed for months because of the floods that damaged its \
foundations last winter."
"$APP" gui -m "$MODEL" --theme light --text "$PARAGRAPH" --screenshot $OUT/translate-long.png
"$APP" gui -m "$MODEL" --theme light --text "My brother bought a new car last week." --select Auto \
    --screenshot $OUT/linked.png
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DOC=$TMP/holiday.txt
printf '%s\n' "The weather is nice today." "We are going to the lake." "" \
    "My sister reads a book in the garden." "The children are playing with the dog." "" \
    "Where is the nearest train station?" > "$DOC"
"$APP" gui -m "$MODEL" --theme light --translate-file "$DOC" --screenshot $OUT/translate-file.png
ls -l $OUT/translate.png $OUT/focus.png $OUT/translate-dark.png $OUT/translate-file.png $OUT/inspect.png \
    $OUT/translate-long.png $OUT/linked.png
