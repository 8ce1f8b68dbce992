"""The headless core (``nmt_desktop.core``) must never import Qt or pyqtgraph.

Checked two ways: statically (every import statement in every file under
``nmt_desktop/core``) and dynamically (importing every core module in a fresh
interpreter and looking at ``sys.modules``).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FORBIDDEN = frozenset(
    {"PySide6", "PySide2", "PyQt5", "PyQt6", "shiboken6", "pyqtgraph", "qtpy"}
)


def _core_dir(repo_root: Path) -> Path:
    core = repo_root / "nmt_desktop" / "core"
    if not core.is_dir():
        pytest.skip(f"{core} does not exist yet")
    return core


def _top(name: str | None) -> str:
    return (name or "").split(".", 1)[0]


def _forbidden_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    hits: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            hits += [(node.lineno, a.name) for a in node.names if _top(a.name) in FORBIDDEN]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and _top(node.module) in FORBIDDEN:
                hits.append((node.lineno, node.module or ""))
        elif isinstance(node, ast.Call):
            # importlib.import_module("PySide6...") / __import__("PySide6...")
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if fname in {"import_module", "__import__"} and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    if _top(arg.value) in FORBIDDEN:
                        hits.append((node.lineno, arg.value))
    return hits


def test_core_has_no_qt_imports_static(repo_root: Path) -> None:
    core = _core_dir(repo_root)
    offenders = []
    for path in sorted(core.rglob("*.py")):
        for lineno, module in _forbidden_imports(path):
            offenders.append(f"{path.relative_to(repo_root)}:{lineno}: imports {module}")
    assert not offenders, "nmt_desktop/core must stay Qt-free:\n" + "\n".join(offenders)


_CHILD = r"""
import importlib, json, pkgutil, sys, traceback

forbidden = set(json.loads(sys.argv[1]))
errors = {}

def record(name):
    errors[name] = traceback.format_exc()

try:
    import nmt_desktop.core as core
except Exception:
    record("nmt_desktop.core")
    core = None

names = []
if core is not None:
    names.append(core.__name__)
    # walk_packages imports subpackages itself; onerror records any that fail.
    for info in pkgutil.walk_packages(core.__path__, core.__name__ + ".", onerror=record):
        names.append(info.name)

for name in names:
    if name in errors:
        continue
    try:
        importlib.import_module(name)
    except BaseException:
        record(name)

loaded = sorted(m for m in sys.modules if m.split(".", 1)[0] in forbidden)
print(json.dumps({"modules": names, "errors": errors, "loaded": loaded}))
"""


def test_core_has_no_qt_imports_dynamic(repo_root: Path) -> None:
    _core_dir(repo_root)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(repo_root), env.get("PYTHONPATH", "")) if p
    )
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(sorted(FORBIDDEN))],
        cwd=repo_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"child interpreter failed:\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])

    errors = result["errors"]
    assert not errors, "core modules that exist failed to import:\n" + "\n".join(
        f"--- {name}\n{tb}" for name, tb in errors.items()
    )
    loaded = result["loaded"]
    if loaded:
        print("Qt/pyqtgraph modules loaded by importing nmt_desktop.core:", ", ".join(loaded))
    assert not loaded, (
        f"importing {len(result['modules'])} core modules loaded forbidden modules: "
        + ", ".join(loaded)
    )
