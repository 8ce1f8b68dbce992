"""`nmt-desktop train` as a child process (`QProcess`) reporting JSON lines.

The GUI trains through exactly the command a terminal runs:

    python -m nmt_desktop train --config RUN/train_config.toml [--resume] --progress json

(in a packaged app: `nmt-desktop train ...`, the app binary itself; see `core.locations.cli_command`).

stdout is read line by line (partial lines are buffered until their newline): a line holding a
JSON object with an "event" key becomes an `event(dict)` signal; anything else, and every stderr
line, goes to `logLine(str)`. `stop()` sends SIGTERM (the child saves `RUN/last` and exits 0) and
kills the child if it has not exited after a timeout. A crash of the child never reaches the window:
`finished(exit_code, crashed)` reports it, with the last stderr lines kept in `stderr_tail`.
"""

from __future__ import annotations

import json
import os
import shlex
from collections import deque
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

import nmt_desktop
from nmt_desktop.core.config import TrainConfig
from nmt_desktop.core.locations import cli_command, is_frozen
from nmt_desktop.core.training.train_flags import train_command_line

_PACKAGE_PARENT = str(Path(nmt_desktop.__file__).resolve().parents[1])


def train_command(config_path: str | os.PathLike, resume: bool = False) -> list[str]:
    """The `train` arguments (after `nmt-desktop`) for a run described by a TOML file."""
    args = ["train", "--config", str(config_path)]
    if resume:
        args.append("--resume")
    return args + ["--progress", "json"]


def flag_command(cfg: TrainConfig) -> str:
    """`nmt-desktop train --flag value ... --progress json`: what the Train tab runs, as flags."""
    return train_command_line(cfg) + " --progress json"


def command_lines(cfg: TrainConfig, resume: bool = False) -> tuple[str, str]:
    """(`nmt-desktop train --config RUN/train_config.toml ...`, the same run as flags)."""
    toml = Path(cfg.out or "RUN") / "train_config.toml"
    short = " ".join(["nmt-desktop", *(shlex.quote(a) for a in train_command(toml, resume))])
    return short, flag_command(cfg)


class LineBuffer:
    """Bytes in, complete decoded lines out; a trailing partial line waits for its newline."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> list[str]:
        self._pending += data
        *lines, self._pending = self._pending.split(b"\n")
        return [line.decode("utf-8", errors="replace").rstrip("\r") for line in lines]

    def flush(self) -> list[str]:
        rest, self._pending = self._pending, b""
        return [rest.decode("utf-8", errors="replace").rstrip("\r")] if rest.strip() else []


def parse_event(line: str) -> dict[str, Any] | None:
    """The progress event on `line`, or None if the line is not one."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("event"), str) else None


class TrainProcess(QObject):
    """One `train` child at a time; signals arrive on the GUI thread (QProcess is event driven)."""

    event = Signal(dict)
    logLine = Signal(str)  # non-JSON stdout lines and stderr lines
    started = Signal()
    finished = Signal(int, bool)  # exit code, crashed (killed or died of a signal)

    def __init__(self, parent: QObject | None = None, kill_timeout_ms: int = 20000):
        super().__init__(parent)
        self.kill_timeout_ms = kill_timeout_ms
        self.extra_env: dict[str, str] = {}
        self.stderr_tail: deque[str] = deque(maxlen=40)
        self.last_error: str | None = None  # message of the child's `error` event
        self.stop_requested = False
        self._proc: QProcess | None = None
        self._out, self._err = LineBuffer(), LineBuffer()
        self._kill_timer = QTimer(self)
        self._kill_timer.setSingleShot(True)
        self._kill_timer.timeout.connect(self.kill)

    @property
    def program(self) -> str:
        return cli_command()[0]

    def arguments(self, config_path: str | os.PathLike, resume: bool = False) -> list[str]:
        return cli_command(*train_command(config_path, resume))[1:]

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.state() != QProcess.NotRunning

    def pid(self) -> int:
        return int(self._proc.processId()) if self._proc is not None else 0

    def start(self, config_path: str | os.PathLike, resume: bool = False, workdir: str | None = None) -> None:
        if self.running:
            raise RuntimeError("a training process is already running")
        self.stderr_tail.clear()
        self.last_error = None
        self.stop_requested = False
        self._out, self._err = LineBuffer(), LineBuffer()
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        if not is_frozen():  # a frozen child imports from its own bundle
            path = env.value("PYTHONPATH", "")
            env.insert("PYTHONPATH", _PACKAGE_PARENT + (os.pathsep + path if path else ""))
        env.insert("PYTHONIOENCODING", "utf-8")
        env.insert("PYTHONUNBUFFERED", "1")
        for key, value in self.extra_env.items():
            env.insert(key, value)
        proc.setProcessEnvironment(env)
        if workdir:
            proc.setWorkingDirectory(workdir)
        proc.readyReadStandardOutput.connect(self._read_stdout)
        proc.readyReadStandardError.connect(self._read_stderr)
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_error)
        proc.started.connect(self.started)
        self._proc = proc
        proc.start(self.program, self.arguments(config_path, resume))

    def stop(self) -> None:
        """SIGTERM: the child saves its checkpoint and exits 0; killed after `kill_timeout_ms`."""
        if not self.running:
            return
        self.stop_requested = True
        self._proc.terminate()
        self._kill_timer.start(self.kill_timeout_ms)

    def kill(self) -> None:
        if self.running:
            self._proc.kill()

    def wait(self, timeout_ms: int = 30000) -> bool:
        """Block until the child exits (used when the window closes); kill it if it does not."""
        if self._proc is None:
            return True
        if not self._proc.waitForFinished(timeout_ms) and self.running:
            self._proc.kill()
            self._proc.waitForFinished(5000)
        return not self.running

    # -- reading -----------------------------------------------------------------------------------

    def _handle_stdout_line(self, line: str) -> None:
        ev = parse_event(line)
        if ev is None:
            if line.strip():
                self.logLine.emit(line)
            return
        if ev["event"] == "error":
            self.last_error = str(ev.get("message", ""))
        self.event.emit(ev)

    def _handle_stderr_line(self, line: str) -> None:
        if line.strip():
            self.stderr_tail.append(line)
            self.logLine.emit(line)

    def _read_stdout(self) -> None:
        if self._proc is not None:
            for line in self._out.feed(bytes(self._proc.readAllStandardOutput())):
                self._handle_stdout_line(line)

    def _read_stderr(self) -> None:
        if self._proc is not None:
            for line in self._err.feed(bytes(self._proc.readAllStandardError())):
                self._handle_stderr_line(line)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.FailedToStart:
            message = f"cannot start {self.program}: {self._proc.errorString() if self._proc else error}"
            self.stderr_tail.append(message)
            self.logLine.emit(message)
            self._kill_timer.stop()
            self.finished.emit(-1, True)

    def _on_finished(self, exit_code: int, status: QProcess.ExitStatus) -> None:
        self._read_stdout()
        self._read_stderr()
        for line in self._out.flush():
            self._handle_stdout_line(line)
        for line in self._err.flush():
            self._handle_stderr_line(line)
        self._kill_timer.stop()
        self.finished.emit(int(exit_code), status == QProcess.CrashExit)
