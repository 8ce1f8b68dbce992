"""Test helpers: running the `nmt-desktop` command line, in process (`run`) or in a child process (`run_cli`,
`run_gui_cli` for `nmt-desktop gui`), and reading what it printed; REPO_ROOT, the repository root.

Imported as `from cli_runner import run` (tests/ is on sys.path: tests/conftest.py's folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TIMEOUT = 180  # seconds a child process may take (it imports torch: a few seconds)
REPO_ROOT = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    """`nmt-desktop ARGS` in this process (cli/main.py's `main`): (exit code, stdout, stderr)."""
    from nmt_desktop.cli.main import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_cli(*args: str, stdin: bytes | str | None = None, env_extra: dict[str, str] | None = None,
            timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """`python -m nmt_desktop ARGS` in a child process (stdin empty unless given, `env_extra` added to the
    environment); stdout/stderr decoded as UTF-8."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", **(env_extra or {})}
    env.pop("PYTHONBREAKPOINT", None)
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    proc = subprocess.run([sys.executable, "-m", "nmt_desktop", *args], input=data if data is not None else b"",
                          capture_output=True, timeout=timeout, cwd=REPO_ROOT, env=env)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8"),
                                       proc.stderr.decode("utf-8"))


def run_gui_cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`python -m nmt_desktop gui ARGS` in a child process (offscreen, one thread), its settings in
    `tmp_path/cfg` and its log in `tmp_path/log`; stdout/stderr as text."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", OMP_NUM_THREADS="1", PYTHONIOENCODING="utf-8",
               NMT_DESKTOP_CONFIG_DIR=str(tmp_path / "cfg"), NMT_DESKTOP_LOG_DIR=str(tmp_path / "log"))
    return subprocess.run([sys.executable, "-m", "nmt_desktop", "gui", *args], capture_output=True, text=True,
                          timeout=240, cwd=REPO_ROOT, env=env)


def stdout_lines(proc: subprocess.CompletedProcess) -> list[str]:
    assert proc.stdout.endswith("\n") or proc.stdout == ""
    return proc.stdout.split("\n")[:-1]


def stderr_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return proc.stderr.splitlines()


def assert_one_error_line(proc: subprocess.CompletedProcess, code: int) -> str:
    """The run exited with `code` and printed one line, `nmt-desktop: error: ...`, and no traceback."""
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = stderr_lines(proc)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("nmt-desktop: error: ")
    return lines[0]
