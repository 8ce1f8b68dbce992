#!/usr/bin/env bash
# Build the one-folder app with PyInstaller: dist/nmt-desktop/nmt-desktop (+ _internal/).
#
#   bash packaging/build.sh [DISTDIR]      # default DISTDIR: <repo>/dist
#
# Installs PyInstaller (the pin of pyproject's `package` extra) into .venv if it is missing,
# builds from packaging/nmt-desktop.spec with the models found in models/ now, and prints the
# build time and the bundle's size. PYTHON=/path/to/python overrides the venv's interpreter;
# PyInstaller's work folder is build/pyinstaller (NMT_BUILD_WORKDIR overrides it). Afterwards
# packaging/notices.py writes THIRD_PARTY_NOTICES.txt into the bundle from what it actually holds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
DIST="$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)"
WORK="${NMT_BUILD_WORKDIR:-$ROOT/build/pyinstaller}"

if ! "$PY" -c "import PyInstaller" >/dev/null 2>&1; then
    pin="$(grep -o '"pyinstaller==[^"]*"' "$ROOT/pyproject.toml" | tr -d '"')"
    echo "[build] installing ${pin:?no pyinstaller pin in pyproject.toml}"
    "$PY" -m pip install -q "$pin"
fi

# Reproducible bundles: PyInstaller orders base_library.zip and the PYZ archive by walking its module graph,
# whose sets iterate in hash order; a fixed hash seed makes two builds of the same tree byte-identical.
export PYTHONHASHSEED="${PYTHONHASHSEED:-0}"

start=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$DIST" --workpath "$WORK" "$ROOT/packaging/nmt-desktop.spec"
end=$(date +%s)

APP="$DIST/nmt-desktop"
[[ -x "$APP/nmt-desktop" || -x "$APP/nmt-desktop.exe" ]] || { echo "[build] no binary in $APP" >&2; exit 1; }
"$PY" "$ROOT/packaging/notices.py" "$APP"
size="$(du -sh "$APP" | cut -f1)"
echo "[build] built $APP in $((end - start)) s; size $size (du -sh)"
