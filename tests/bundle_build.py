"""Build the one-folder app once per test session (tests/conftest.py's `frozen_bundle` fixture).

test_packaging.py's frozen-app test and test_deb.py's package test both need dist/nmt-desktop; PyInstaller
takes minutes, so the first test that asks builds it and the other reuses it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BUILD_TIMEOUT_S = 2000
# The tests that share the bundle run on one xdist worker (`--dist loadgroup`, `@pytest.mark.xdist_group`), so
# it is built once per run; xdist schedules the largest group first.
BUNDLE_GROUP = "frozen_bundle"


def build_bundle(repo_root: Path, out: Path) -> Path:
    """Run packaging/build.sh into `out`/dist; returns `out`/dist/nmt-desktop (asserts the build worked)."""
    dist = out / "dist"
    env = dict(os.environ, PYTHON=sys.executable, NMT_BUILD_WORKDIR=str(out / "work"), QT_QPA_PLATFORM="offscreen")
    build = subprocess.run(["bash", str(repo_root / "packaging" / "build.sh"), str(dist)], capture_output=True,
                           text=True, env=env, timeout=BUILD_TIMEOUT_S)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-5000:]
    print(build.stdout.strip().splitlines()[-1])  # "[build] built ... in N s; size M (du -sh)": in -rP logs
    return dist / "nmt-desktop"
