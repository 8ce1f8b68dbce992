"""What the server reports: one JSON line per event on stdout with --log-json (the app's Tools > Local
server… reads them), else a short line on stderr; and the counters of GET /nmt/stats.

Events: {"event": "listening", "host", "port", "models": [{"name", "source", "target"}]} once bound,
{"event": "request", "time", "client", "method", "path", "status", "segments", "characters", "ms", "model"}
per request, {"event": "stopped"} at shutdown."""

from __future__ import annotations

import datetime as dt
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, TextIO


@dataclass
class Stats:
    """Counters since the server started (GET /nmt/stats)."""
    requests: int = 0
    segments: int = 0
    characters: int = 0
    errors: int = 0
    started: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, status: int, segments: int, characters: int) -> None:
        with self._lock:
            self.requests += 1
            self.segments += segments
            self.characters += characters
            self.errors += status >= 400

    def as_dict(self, queued: int, models: list[dict[str, Any]]) -> dict[str, Any]:
        with self._lock:
            return {"requests": self.requests, "segments": self.segments, "characters": self.characters,
                    "errors": self.errors, "queued": queued, "uptime_s": round(time.monotonic() - self.started, 3),
                    "models": models}


class EventLog:
    """Writes events as JSON lines (json=True, stdout) or as readable lines (stderr); flushed each time, so a
    parent process reading the pipe sees each at once."""

    def __init__(self, json_lines: bool, out: TextIO | None = None, err: TextIO | None = None):
        self.json_lines = json_lines
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self._lock = threading.Lock()

    def _write(self, event: dict[str, Any], human: str) -> None:
        with self._lock:
            if self.json_lines:
                self.out.write(json.dumps(event, ensure_ascii=False) + "\n")
                self.out.flush()
            else:
                self.err.write(human + "\n")
                self.err.flush()

    def listening(self, host: str, port: int, models: list[dict[str, Any]]) -> None:
        shown = f"[{host}]" if ":" in host else host
        names = ", ".join(f"{m['name']} ({m['source']}->{m['target']})" for m in models)
        self._write({"event": "listening", "host": host, "port": port, "models": models},
                    f"nmt-desktop serve: listening on http://{shown}:{port} with {names}; Ctrl+C stops it")

    def request(self, client: str, method: str, path: str, status: int, segments: int, characters: int,
                ms: float, model: str | None) -> None:
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        self._write({"event": "request", "time": now, "client": client, "method": method, "path": path,
                     "status": status, "segments": segments, "characters": characters, "ms": round(ms, 2),
                     "model": model},
                    f"{now} {client} {method} {path} {status} {segments} segments {characters} chars "
                    f"{ms:.0f} ms{f' {model}' if model else ''}")

    def stopped(self) -> None:
        self._write({"event": "stopped"}, "nmt-desktop serve: stopped")
