#!/usr/bin/env bash
# Set up nmt-desktop on a fresh Debian machine (or bring an existing setup up to date).
#
#   bash .ci/setup.sh
#
# Idempotent: every step is skipped when its result is already in place, so a rerun is fast.
# Runnable from any working directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VENV="$ROOT/.venv"
PY="$VENV/bin/python"
TORCH_VERSION="2.13.0"

log() { printf '[setup] %s\n' "$*"; }

# --- 1. System libraries: Python venv support, a C++ compiler, Qt's xcb/EGL/font runtime, Xvfb, .deb tools ---
APT_PACKAGES=(
    python3-venv
    g++
    libgl1 libegl1 libxkbcommon0 libfontconfig1 libglib2.0-0 libdbus-1-3
    xvfb
    libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0 libxcb-shape0
    libxcb-image0 libxcb-render-util0 libxcb-randr0 libxcb-xinerama0 libxcb-xfixes0
    libwayland-cursor0 libwayland-egl1  # Qt's Wayland plugins: the .deb's Depends are computed from what is installed
    # the Debian package (packaging/build-deb.sh, tests/test_deb.py): objdump and patchelf for the spec, its checkers
    binutils patchelf lintian desktop-file-utils appstream
)

if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
    missing=()
    for pkg in "${APT_PACKAGES[@]}"; do
        status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
        [[ "$status" == "installed" ]] || missing+=("$pkg")
    done
    if ((${#missing[@]})); then
        SUDO=()
        if [[ "$(id -u)" -ne 0 ]]; then
            if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
                SUDO=(sudo -n)
            else
                SUDO=(none)
            fi
        fi
        if [[ "${SUDO[*]-}" == "none" ]]; then
            log "WARNING: not root and no passwordless sudo; skipping apt. Missing: ${missing[*]}"
        else
            log "apt: installing ${missing[*]}"
            export DEBIAN_FRONTEND=noninteractive
            "${SUDO[@]}" apt-get update -qq
            "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
        fi
    else
        log "apt: all system packages already installed"
    fi
else
    log "apt-get not found; skipping system packages (install Qt's xcb/EGL runtime libraries yourself)"
fi

# --- 2. Virtual environment ---------------------------------------------------------------------
if [[ -x "$PY" ]] && "$PY" -c 'import sys; assert sys.version_info >= (3, 10)' 2>/dev/null \
    && "$PY" -m pip --version >/dev/null 2>&1; then
    log "venv: $VENV exists"
else
    log "venv: creating $VENV"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$PY" -m pip install -q --upgrade pip
fi

# --- 3. PyTorch, pinned, before anything that depends on it ------------------------------------
# Installing torch first with an exact pin keeps pip from resolving `torch>=2.2` to the newest
# release with several GB of CUDA wheels. On these machines pip's configuration (find-links)
# provides a local CPU wheel of exactly this version, which `torch==2.13.0` picks up.
# On a machine with an NVIDIA GPU (nvidia-smi present) the same pin is used and pip takes the
# CUDA build of 2.13.0 from PyPI (unless a local +cpu wheel is offered by pip's configuration,
# in which case that one wins, as it has the higher PEP 440 version).
if "$PY" -c "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == '$TORCH_VERSION' else 1)" \
    >/dev/null 2>&1; then
    log "torch: $TORCH_VERSION already installed"
else
    if command -v nvidia-smi >/dev/null 2>&1; then
        log "torch: installing torch==$TORCH_VERSION (NVIDIA GPU found: CUDA build)"
    else
        log "torch: installing torch==$TORCH_VERSION (no NVIDIA GPU: CPU build)"
    fi
    "$PY" -m pip install -q "torch==$TORCH_VERSION"
fi

# --- 4. The project itself, editable, with test and packaging extras -----------------------------------------
# Skipped when pyproject.toml (and the repo location) are unchanged since the last install and
# the package still imports from this checkout.
STAMP="$VENV/.nmt-desktop-install-stamp"
want_stamp="$(cat pyproject.toml; echo "$ROOT")"
want_stamp="$(printf '%s' "$want_stamp" | sha256sum | cut -d' ' -f1)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want_stamp" ]] \
    && "$PY" - "$ROOT" >/dev/null 2>&1 <<'PYEOF'
import pathlib, sys
import nmt_desktop, PySide6, pyqtgraph, tokenizers, safetensors, sacrebleu, platformdirs, tqdm, numpy
import huggingface_hub, sentencepiece, transformers, py3langid
import pytest, pytestqt, hypothesis, pytest_timeout, xdist, filelock, mkdocs, PyInstaller, importlinter
root = pathlib.Path(sys.argv[1]).resolve()
assert pathlib.Path(nmt_desktop.__file__).resolve().is_relative_to(root)
PYEOF
then
    log "pip: nmt-desktop[test,package] already installed (editable)"
else
    log "pip: installing -e .[test,package]"
    "$PY" -m pip install -q -e ".[test,package]"
    printf '%s\n' "$want_stamp" >"$STAMP"
fi

# --- 5. The compiled decoding step (nmt_desktop/core/decoding/backends/native/decode_step.cpp) ---------------------
# Built against the installed torch (~15 s; skipped when the library for this source and torch
# exists). Optional: without it decoding runs the Python fused step (same results, slower).
if "$PY" -c "from nmt_desktop.core.decoding.backends.native_library import library_path; import sys; sys.exit(library_path() is None)" \
    >/dev/null 2>&1; then
    log "native: compiled decoding step already built"
elif built="$("$PY" -m nmt_desktop.core.decoding.backends.native_library)"; then
    log "native: built $built"
else
    log "WARNING: could not build the compiled decoding step (see above); decoding uses the Python step"
fi

"$PY" -c "
import sys, torch, PySide6
print(f'setup done: python {sys.version.split()[0]}, torch {torch.__version__}, '
      f'PySide6 {PySide6.__version__}, venv {sys.prefix}')
"
