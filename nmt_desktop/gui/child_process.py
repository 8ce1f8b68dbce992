"""An `nmt-desktop COMMAND` child process (`QProcess`) that reports JSON lines: the Train tab's `train` and
Tools > Local server…'s `serve` (train/process.py, server/process.py) share it.

The GUI runs exactly the command a terminal runs (in a packaged app: the app binary itself; see
`core.locations.cli_command`), so what it does is what the CLI does, and a crash of the child never reaches the
window. stdout is read line by line (partial lines wait for their newline): a line holding a JSON object with an
"event" key goes to `on_event(dict)`, any other stdout line to `on_text`, every stderr line to `on_stderr` (the
last 40 kept in `stderr_tail`). `stop()` sends SIGTERM and kills the child if it has not exited after
`kill_timeout_ms`. Subclasses turn the hooks into their signals.
"""

from __future__ import annotations

import json
import os
from collections import deque
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer

import nmt_desktop
from nmt_desktop.core.locations import cli_command, is_frozen

_PACKAGE_PARENT = str(Path(nmt_desktop.__file__).resolve().parents[1])


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


class EventProcess(QObject):
    """One child at a time; its output arrives on the GUI thread (QProcess is event driven)."""

    def __init__(self, parent: QObject | None = None, kill_timeout_ms: int = 20000):
        super().__init__(parent)
        self.kill_timeout_ms = kill_timeout_ms
        self.extra_env: dict[str, str] = {}
        self.stderr_tail: deque[str] = deque(maxlen=40)
        self.stop_requested = False
        self._proc: QProcess | None = None
        self._out, self._err = LineBuffer(), LineBuffer()
        self._kill_timer = QTimer(self)
        self._kill_timer.setSingleShot(True)
        self._kill_timer.timeout.connect(self.kill)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.state() != QProcess.ProcessState.NotRunning

    def pid(self) -> int:
        return int(self._proc.processId()) if self._proc is not None else 0

    def launch(self, arguments: list[str], workdir: str | None = None) -> QProcess:
        """Start `nmt-desktop ARGUMENTS...` (unbuffered UTF-8 output, `extra_env` added)."""
        if self.running:
            raise RuntimeError(f"`nmt-desktop {arguments[0]}` is already running")
        self.stderr_tail.clear()
        self.stop_requested = False
        self._out, self._err = LineBuffer(), LineBuffer()
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        if not is_frozen():  # a frozen child imports from its own bundle
            path = env.value("PYTHONPATH", "")
            env.insert("PYTHONPATH", _PACKAGE_PARENT + (os.pathsep + path if path else ""))
        env.insert("PYTHONIOENCODING", "utf-8")
        env.insert("PYTHONUNBUFFERED", "1")  # each line reaches the window when the child writes it
        for key, value in self.extra_env.items():
            env.insert(key, value)
        proc.setProcessEnvironment(env)
        if workdir:
            proc.setWorkingDirectory(workdir)
        proc.readyReadStandardOutput.connect(self._read_stdout)
        proc.readyReadStandardError.connect(self._read_stderr)
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_error)
        proc.started.connect(self.on_started)
        self._proc = proc
        command = cli_command(*arguments)
        proc.start(command[0], command[1:])
        return proc

    def stop(self) -> None:
        """SIGTERM (the child finishes cleanly and exits 0); killed after `kill_timeout_ms`."""
        if not self.running:
            return
        self.stop_requested = True
        self._proc.terminate()
        self._kill_timer.start(self.kill_timeout_ms)

    def kill(self) -> None:
        if self.running:
            self._proc.kill()

    def wait(self, timeout_ms: int = 30000) -> bool:
        """Block until the child exits (the window is closing); kill it if it does not."""
        if self._proc is None:
            return True
        if not self._proc.waitForFinished(timeout_ms) and self.running:
            self._proc.kill()
            self._proc.waitForFinished(5000)
        return not self.running

    # -- what subclasses make of the output ---------------------------------------------------------

    def on_started(self) -> None:
        """The program is running."""

    def on_event(self, event: dict[str, Any]) -> None:
        """A JSON event line on stdout."""

    def on_text(self, line: str) -> None:
        """A non-empty stdout line that is not an event."""

    def on_stderr(self, line: str) -> None:
        """A non-empty stderr line (already kept in `stderr_tail`)."""

    def on_failed_to_start(self, message: str) -> None:
        """The program could not be started at all (`message`: one line)."""

    def on_exit(self, exit_code: int, crashed: bool) -> None:
        """The child ended, every line of its output handled."""

    # -- reading -----------------------------------------------------------------------------------

    def _stdout_line(self, line: str) -> None:
        event = parse_event(line)
        if event is not None:
            self.on_event(event)
        elif line.strip():
            self.on_text(line)

    def _stderr_line(self, line: str) -> None:
        if line.strip():
            self.stderr_tail.append(line)
            self.on_stderr(line)

    def _read_stdout(self) -> None:
        if self._proc is not None:
            for line in self._out.feed(bytes(self._proc.readAllStandardOutput())):
                self._stdout_line(line)

    def _read_stderr(self) -> None:
        if self._proc is not None:
            for line in self._err.feed(bytes(self._proc.readAllStandardError())):
                self._stderr_line(line)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._kill_timer.stop()
            self.on_failed_to_start(f"cannot start {cli_command()[0]}: "
                                    f"{self._proc.errorString() if self._proc is not None else error}")

    def _on_finished(self, exit_code: int, status: QProcess.ExitStatus) -> None:
        self._read_stdout()
        self._read_stderr()
        for line in self._out.flush():
            self._stdout_line(line)
        for line in self._err.flush():
            self._stderr_line(line)
        self._kill_timer.stop()
        self.on_exit(int(exit_code), status == QProcess.ExitStatus.CrashExit)
