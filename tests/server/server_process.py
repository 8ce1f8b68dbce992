"""A real `nmt-desktop serve` child process on 127.0.0.1 for the server tests: started with `--port 0
--log-json`, its "listening" line read for the port, its stdout events kept, always killed at the end.

Imported as `from server_process import ...` (tests/server/ is on sys.path for its test files)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 180  # seconds: the child imports torch and loads the models
BUNDLED = [str(REPO_ROOT / "models" / "en-de"), str(REPO_ROOT / "models" / "en-fr")]


@dataclass
class ServerProcess:
    proc: subprocess.Popen
    port: int
    listening: dict[str, Any]
    events: "queue.Queue[dict[str, Any]]" = field(default_factory=queue.Queue)
    stderr: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=120, **kwargs)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        """Signal the server and wait for it; its exit code (killed after `timeout`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def next_events(self, count: int, timeout: float = 30) -> list[dict[str, Any]]:
        return [self.events.get(timeout=timeout) for _ in range(count)]

    def post_in_background(self, payload: dict[str, Any]) -> tuple[threading.Thread, dict[str, Any]]:
        """POST /translate on a thread of its own; (the thread, a dict that gets status and body)."""
        answer: dict[str, Any] = {}

        def send() -> None:
            with self.client() as c:
                r = c.post("/translate", json=payload)
                answer.update(status=r.status_code, body=r.json())

        sender = threading.Thread(target=send)
        sender.start()
        return sender, answer

    def wait_until_queued(self, segments: int = 1) -> None:
        """Until /nmt/stats says the decoders hold `segments` at least (bounded: 60 s)."""
        import time

        with self.client() as c:
            for _ in range(600):
                if c.get("/nmt/stats").json()["queued"] >= segments:
                    return
                time.sleep(0.1)
        raise AssertionError("the request never reached the decode queue")


def start_server(*args: str, models: list[str] | None = None, env_extra: dict[str, str] | None = None) -> ServerProcess:
    """`python -m nmt_desktop serve -m MODEL... --port 0 --log-json ARGS` once it says it is listening."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "OMP_NUM_THREADS": "1", **(env_extra or {})}
    model_args = [a for m in (models or BUNDLED) for a in ("-m", m)]
    proc = subprocess.Popen([sys.executable, "-m", "nmt_desktop", "serve", *model_args, "--port", "0", "--log-json",
                             "--threads", "1", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT,
                            env=env, text=True, encoding="utf-8")
    lines: "queue.Queue[str | None]" = queue.Queue()
    stderr: list[str] = []

    def read_out() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.put(line)
        lines.put(None)

    def read_err() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            stderr.append(line)

    threading.Thread(target=read_out, daemon=True).start()
    threading.Thread(target=read_err, daemon=True).start()
    try:
        first = lines.get(timeout=START_TIMEOUT)
        if first is None:
            proc.wait(10)
            raise AssertionError(f"the server exited {proc.returncode} before listening: {''.join(stderr)[-2000:]}")
        listening = json.loads(first)
        assert listening["event"] == "listening", first
    except BaseException:
        proc.kill()
        proc.wait(10)
        raise
    server = ServerProcess(proc, int(listening["port"]), listening, stderr=stderr)

    def forward() -> None:
        while (line := lines.get()) is not None:
            server.events.put(json.loads(line))

    threading.Thread(target=forward, daemon=True).start()
    return server
