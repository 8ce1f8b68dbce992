"""Build a test fixture once and keep it on disk by the content of what built it: the pytest-xdist workers of
one run share it (a file lock: the first builds, the others wait and read), and so do later runs on the same
machine while nothing that went into it has changed.

A fixture that trains a model costs seconds to minutes; with one copy per worker and per run the suite paid for
it again and again. The key is a hash of the sources that define the build (the test helper that trains, the
model code it runs) and its arguments, so a change to any of them builds anew instead of reading a stale copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Callable

from filelock import FileLock

REPO = Path(__file__).resolve().parent.parent
COMPLETE = "BUILT"  # written last: a folder without it is a build that died half-way, built again


def cache_root() -> Path:
    """`.test-cache/` in the repository (git-ignored), or NMT_DESKTOP_TEST_CACHE."""
    return Path(os.environ.get("NMT_DESKTOP_TEST_CACHE") or REPO / ".test-cache")


def content_key(name: str, sources: list[Path], **arguments) -> str:
    """`name-<hash>`: the hash of each source file's bytes, the arguments and the torch version."""
    import torch

    digest = hashlib.sha256()
    for path in sorted(sources):
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(json.dumps(arguments, sort_keys=True, default=str).encode())
    digest.update(torch.__version__.encode())
    return f"{name}-{digest.hexdigest()[:16]}"


def python_sources(*folders: str) -> list[Path]:
    """Every .py file under the given repository folders (or the file itself), for `content_key`."""
    paths: list[Path] = []
    for folder in folders:
        root = REPO / folder
        paths.extend([root] if root.is_file() else sorted(root.rglob("*.py")))
    return paths


def built_once(key: str, build: Callable[[Path], None], root: Path | None = None) -> Path:
    """The folder `root/key`, made by `build(folder)` unless a complete one is there already.

    `build` writes into a fresh staging folder, renamed into place when it returns, so a reader never sees a
    half-built folder and a killed build leaves nothing that passes for a finished one."""
    root = root or cache_root()
    root.mkdir(parents=True, exist_ok=True)
    folder = root / key
    with FileLock(str(root / f"{key}.lock")):
        if (folder / COMPLETE).is_file():
            return folder
        staging = root / f"{key}.building"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
        staging.mkdir()
        build(staging)
        (staging / COMPLETE).write_text("complete\n", encoding="utf-8")
        staging.rename(folder)
    return folder
