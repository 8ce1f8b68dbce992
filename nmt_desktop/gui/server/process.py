"""`nmt-desktop serve` as a child process of the app (gui/child_process.py), reporting JSON lines.

The server runs in its own process, not on a thread of the window: its decoding never competes with the
window's event loop or GIL, it keeps serving while the window translates, and a crash of either leaves the
other standing. It is exactly the command a terminal runs, with `--log-json`:

    {"event": "listening", "host": H, "port": P, "models": [...]}   once it accepts connections
    {"event": "request", "time": ..., "status": 200, "segments": n, ...}   per request
    {"event": "stopped"}   at shutdown

`stop()` sends SIGTERM (in-flight requests finish, the child exits 0) and kills the child if it is still
running after the grace period. A child that ends without being asked to (port in use, a bad model) is
`failed(one sentence)`: its `nmt-desktop: error: ...` line, or the last line it wrote.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from ..child_process import EventProcess

ERROR_PREFIX = "nmt-desktop: error: "
GRACE_MS = 5000  # SIGTERM lets in-flight requests finish; a child still running after this is killed


def failure_sentence(stderr_lines: list[str], exit_code: int) -> str:
    """The one sentence that says why the server stopped: the CLI's error line, else the last line it wrote."""
    for line in reversed(stderr_lines):
        if line.startswith(ERROR_PREFIX):
            return line[len(ERROR_PREFIX):].strip()
    for line in reversed(stderr_lines):
        if line.strip() and not line.startswith(("Traceback", "  ")):
            return line.strip()
    return f"the server exited with code {exit_code} before it was listening"


class ServerProcess(EventProcess):
    """One server child at a time; its signals arrive on the GUI thread."""

    listening = Signal(dict)  # the "listening" event: host, port, models
    request = Signal(dict)  # one "request" event
    failed = Signal(str)  # the child could not start or serve, in one sentence
    stopped = Signal()  # the child ended (after a stop, a failure or a crash)

    def __init__(self, parent: QObject | None = None, grace_ms: int = GRACE_MS):
        super().__init__(parent, kill_timeout_ms=grace_ms)
        self.address: tuple[str, int] | None = None  # (host, port) once listening
        self.models: list[dict[str, Any]] = []  # the listening event's models: name, source, target

    def start(self, arguments: list[str]) -> None:
        """Start `nmt-desktop ARGUMENTS...` (ServerOptions.serve_arguments())."""
        self.address, self.models = None, []
        self.launch(arguments)

    def stop_and_wait(self) -> bool:
        """Stop and block until the child is gone (the app is closing): SIGTERM, then kill after the grace."""
        self.stop()
        return self.wait(self.kill_timeout_ms)

    def on_event(self, event: dict[str, Any]) -> None:
        if event["event"] == "listening":
            self.address = (str(event.get("host", "")), int(event.get("port", 0) or 0))
            self.models = [m for m in event.get("models", []) if isinstance(m, dict)]
            self.listening.emit(event)
        elif event["event"] == "request":
            self.request.emit(event)

    def on_failed_to_start(self, message: str) -> None:
        self.failed.emit(message)
        self.stopped.emit()

    def on_exit(self, exit_code: int, crashed: bool) -> None:
        if not self.stop_requested:
            self.failed.emit(failure_sentence(list(self.stderr_tail), exit_code))
        self.address = None
        self.stopped.emit()
