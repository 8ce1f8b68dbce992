"""The package's layers (pyproject.toml [tool.importlinter]), checked by import-linter in a child
process: core imports no Qt, GUI or CLI; the GUI never imports the CLI; the CLI's command modules
never import the `nmt_desktop.cli` package's __init__ or `cli/main.py` back, nor each other (they share
`cli/common.py`); no import cycles among the core's or the GUI's modules."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _lint_imports() -> list[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    return [str(exe)] if exe.is_file() else [shutil.which("lint-imports") or "lint-imports"]


def test_import_contracts_are_kept():
    proc = subprocess.run([*_lint_imports(), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "8 kept, 0 broken" in proc.stdout


def test_a_broken_contract_is_reported(tmp_path):
    """The check can fail: a config forbidding what the GUI really imports (the core) is broken."""
    config = tmp_path / "contracts.toml"
    config.write_text('[tool.importlinter]\nroot_package = "nmt_desktop"\n\n[[tool.importlinter.contracts]]\n'
                      'name = "gui without core"\ntype = "forbidden"\nsource_modules = ["nmt_desktop.gui"]\n'
                      'forbidden_modules = ["nmt_desktop.core"]\n', encoding="utf-8")
    proc = subprocess.run([*_lint_imports(), "--no-cache", str(config)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode != 0 and "BROKEN" in proc.stdout.upper()


def test_a_new_cli_module_is_checked_without_editing_the_contracts(tmp_path):
    """The CLI contracts name cli/'s modules by wildcard: in a copy of the package, a new module in cli/ that
    imports cli/main.py back and a command breaks both, though pyproject.toml does not name it."""
    shutil.copytree(REPO / "nmt_desktop", tmp_path / "nmt_desktop", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "nmt_desktop" / "cli" / "zz_new_command.py").write_text(
        "import nmt_desktop.cli.main  # noqa: F401\nimport nmt_desktop.cli.translate  # noqa: F401\n",
        encoding="utf-8")
    # lint-imports puts its working folder first on sys.path: the copy is the package it reads
    proc = subprocess.run([*_lint_imports(), "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode != 0, proc.stdout[-4000:]
    assert "6 kept, 2 broken" in proc.stdout
    assert "nmt_desktop.cli.zz_new_command is not allowed to import nmt_desktop.cli.main" in proc.stdout
    assert "nmt_desktop.cli.zz_new_command -> nmt_desktop.cli.translate" in proc.stdout


SIZE_WARNING = 600  # lines: look again at what the module holds (docs/ARCHITECTURE.md, section 2)
SIZE_LIMIT = 900  # lines: a module this long holds more than one concept


def module_sizes() -> dict[str, int]:
    return {str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines())
            for p in sorted((REPO / "nmt_desktop").rglob("*.py"))}


def test_modules_are_sized_by_concept_with_a_warning_at_600_lines():
    """Modules are cut by concept, not to fit a line count: over SIZE_WARNING lines a module is named in a
    warning (pytest's summary shows it) for a reviewer to look at; only over SIZE_LIMIT does it fail."""
    import warnings

    sizes = module_sizes()
    assert len(sizes) > 100 and sizes["nmt_desktop/core/decoding/translator.py"] > 100  # the real tree was read
    for path, lines in sizes.items():
        if lines > SIZE_WARNING:
            warnings.warn(f"{path} has {lines} lines (over {SIZE_WARNING}): does it hold one concept?", stacklevel=1)
    too_long = {path: lines for path, lines in sizes.items() if lines > SIZE_LIMIT}
    assert not too_long, f"modules over {SIZE_LIMIT} lines: {too_long}"
