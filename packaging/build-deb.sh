#!/usr/bin/env bash
# Build the Debian package from the one-folder app: OUT/nmt-desktop_<version>_<arch>.deb.
#
#   bash packaging/build.sh && bash packaging/build-deb.sh [DIST] [OUT]    # defaults: <repo>/dist for both
#
# DIST holds nmt-desktop/ from packaging/build.sh. The tree is staged by packaging/debian_package.py
# (layout, Depends from the bundle's ELF files, DEP-5 copyright, man page, icons, metainfo) and packed with
# dpkg-deb. Reproducible: SOURCE_DATE_EPOCH (default: the last commit's time) dates the changelog, man page
# and metainfo and clamps every mtime; umask 022, sorted entries (dpkg-deb), root:root owners, gzip -n.
# Needs dpkg-deb, objdump (binutils) and the build venv (PYTHON=... overrides .venv/bin/python).
set -euo pipefail
umask 022
export LC_ALL=C.UTF-8 TZ=UTC

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
DIST="$(cd "${1:-$ROOT/dist}" && pwd)"
OUT="$(mkdir -p "${2:-$ROOT/dist}" && cd "${2:-$ROOT/dist}" && pwd)"
APP="$DIST/nmt-desktop"
[[ -x "$APP/nmt-desktop" ]] || { echo "[deb] no $APP/nmt-desktop: run packaging/build.sh first" >&2; exit 1; }

if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
    SOURCE_DATE_EPOCH="$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)"
fi
export SOURCE_DATE_EPOCH

VERSION="$("$PY" "$ROOT/packaging/debian_package.py" --print-version)"
ARCH="$(dpkg --print-architecture)"
STAGE="$(mktemp -d "${TMPDIR:-/tmp}/nmt-desktop-deb.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT

start=$(date +%s)
QT_QPA_PLATFORM=offscreen "$PY" "$ROOT/packaging/debian_package.py" --arch "$ARCH" "$APP" "$STAGE/root" \
    | sed 's/^/[deb] control: /'
# every mtime at SOURCE_DATE_EPOCH: the bundle's files carry the build's time, the staged ones now
find "$STAGE/root" -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +
DEB="$OUT/nmt-desktop_${VERSION}_${ARCH}.deb"
# NMT_DEB_COMPRESSION=none: the tests' second build, compared by its uncompressed data.tar. NMT_DEB_LEVEL=1: the
# tests' first build, the same xz format at its fastest preset (3.5x faster than the release's default 6, 11% larger)
dpkg-deb --build --root-owner-group "-Z${NMT_DEB_COMPRESSION:-xz}" "-z${NMT_DEB_LEVEL:-6}" "$STAGE/root" "$DEB" >/dev/null
end=$(date +%s)
echo "[deb] built $DEB in $((end - start)) s: $(du -h "$DEB" | cut -f1); sha256 $(sha256sum "$DEB" | cut -d' ' -f1)"
