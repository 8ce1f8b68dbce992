#!/usr/bin/env bash
# Install a built one-folder app for the current user, with its menu entry and icon.
#
#   bash packaging/install-linux.sh [APPDIR]     # default APPDIR: <repo>/dist/nmt-desktop
#
# Copies APPDIR to ~/.local/lib/nmt-desktop, links ~/.local/bin/nmt-desktop to its binary, installs
# the icon (hicolor PNG 256 px and SVG) and packaging/nmt-desktop.desktop into ~/.local/share.
# Rerunning replaces the previous install. Uninstall: delete those five paths.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
APPDIR="$(cd "${1:-$ROOT/dist/nmt-desktop}" && pwd)"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
[[ -x "$APPDIR/nmt-desktop" ]] || { echo "no nmt-desktop binary in $APPDIR: build it first" >&2; exit 1; }

rm -rf "$HOME/.local/lib/nmt-desktop"
mkdir -p "$HOME/.local/lib" "$HOME/.local/bin" "$DATA/applications" \
    "$DATA/icons/hicolor/256x256/apps" "$DATA/icons/hicolor/scalable/apps"
cp -a "$APPDIR" "$HOME/.local/lib/nmt-desktop"
ln -sfn "$HOME/.local/lib/nmt-desktop/nmt-desktop" "$HOME/.local/bin/nmt-desktop"
cp "$ROOT/resources/icons/nmt-desktop.png" "$DATA/icons/hicolor/256x256/apps/nmt-desktop.png"
cp "$ROOT/resources/icons/nmt-desktop.svg" "$DATA/icons/hicolor/scalable/apps/nmt-desktop.svg"
# Exec with the full path: ~/.local/bin is not on every desktop session's PATH
sed "s|^Exec=nmt-desktop|Exec=$HOME/.local/bin/nmt-desktop|; s|^TryExec=nmt-desktop|TryExec=$HOME/.local/bin/nmt-desktop|" \
    "$HERE/nmt-desktop.desktop" >"$DATA/applications/nmt-desktop.desktop"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$DATA/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$DATA/icons/hicolor" || true
echo "installed: $HOME/.local/bin/nmt-desktop -> $HOME/.local/lib/nmt-desktop; menu entry $DATA/applications/nmt-desktop.desktop"
