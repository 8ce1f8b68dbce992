"""A model decoded in a process of its own (decode_child.py), fed by the server's process over a socket pair.

Why a process: the HTTP side (uvicorn's h11, Starlette, the middlewares, JSON, the request log: about 1 ms
a request) and a decode thread in one process share one interpreter lock, so at 32 clients the server spent
twice the offline CPU per sentence on one core's worth of Python (benchmarks/RESULTS.md, issue 43). With
the decoding in a child, the event loop and the search run on two cores at once.

Why a socket pair and marshal rather than multiprocessing's spawn context and pickle: the child is an
ordinary `nmt-desktop serve --decode-child SPEC` (core.locations.cli_command: the frozen app starts itself;
no resource tracker process is started; `ps` names it), and the framing is multiprocessing.connection's
(a length, then the bytes) around `marshal`, which encodes only None, bools, numbers, texts, bytes, tuples,
lists and dicts: nothing decoded on either side can make an object or run code, whatever a user's text or
file holds. Only this process and its own child ever write to the pair. Messages: ("job", number, request)
(decode_requests.to_wire) and ("stop",) to the child; ("ready", model) or ("failed", sentence) once, then
("done", [(number, ok, answer or failure)]) per batch from it.

The queue's bound (batcher.Admission) is kept here, so a request past it gets 429 at once. A reader thread
takes each batch's answers and resolves their asyncio futures with one `loop.call_soon_threadsafe`. A child
that dies (killed, out of memory) fails the requests it held with one sentence (answered 500), is said on
stderr, and is started again; the requests that arrive meanwhile wait for the new one."""

from __future__ import annotations

import asyncio
import itertools
import json
import marshal
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from nmt_desktop.core.locations import cli_command
from nmt_desktop.server.batcher import Admission, resolve_all
from nmt_desktop.server.decode_requests import FileRequest, TextRequest, to_wire
from nmt_desktop.server.errors import ApiError

if TYPE_CHECKING:
    from nmt_desktop.server.segments import Segment


class ModelLoadError(ValueError):
    """A decode process could not load its model (one sentence)."""


class DecodeFailure(Exception):
    """A decode process's failure with a request, or its death, in one sentence (answered 500)."""


@dataclass(frozen=True)
class ModelLoad:
    """How a decode process loads its model: `serve -m MODEL --int8 --backend --threads`."""
    path: str
    int8: bool = False
    backend: str = "auto"
    threads: int | None = None


def _failure(value: tuple) -> Exception:
    return ApiError(value[1], value[2]) if value[0] == "api" else DecodeFailure(value[1])


def _ended(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class DecodeProcess:
    """The server's side of one model's decode process (module docstring). Made in two steps so that
    several models load at once: the constructor starts the child, `ready()` waits for its model."""

    def __init__(self, load: ModelLoad, name: str, batch_size: int = 32, window_s: float = 0.05,
                 max_queue: int = 1024, halves: bool = False, continuous: bool = True):
        self.load, self.name, self.batch_size, self.window_s, self.halves = load, name, batch_size, window_s, halves
        self.continuous = continuous
        self.admission = Admission(max_queue)
        self._pending: dict[int, tuple[asyncio.Future, asyncio.AbstractEventLoop, int]] = {}
        self._numbers = itertools.count()
        self._send_lock = threading.Lock()
        self._held: list[bytes] | None = None  # messages for a child being started again
        self._stopping = False
        self._gone: str | None = None  # why no child runs and none will (a restart that failed)
        self.restarts = 0
        self.proc, self.conn = self._spawn()
        self._reader: threading.Thread | None = None

    # --- starting --------------------------------------------------------------------------------

    def _spawn(self) -> tuple[subprocess.Popen, Connection]:
        mine, theirs = socket.socketpair()
        spec = {"fd": theirs.fileno(), "model": self.load.path, "int8": self.load.int8, "backend": self.load.backend,
                "threads": self.load.threads, "name": self.name, "batch_size": self.batch_size,
                "window_s": self.window_s, "halves": self.halves, "continuous": self.continuous}
        try:
            proc = subprocess.Popen(cli_command("serve", "--decode-child", json.dumps(spec)),
                                    pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=2)
        finally:
            theirs.close()
        return proc, Connection(mine.detach())

    def _wait_ready(self) -> dict[str, Any]:
        try:
            kind, value = marshal.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            code = self.proc.wait()
            raise ModelLoadError(f"model '{self.load.path}': its decode process ended while loading it "
                                 f"({_ended(code)})") from None
        if kind == "failed":
            self.proc.wait()
            raise ModelLoadError(value if self.load.path in value else f"model '{self.load.path}': {value}")
        return value

    def ready(self) -> dict[str, Any]:
        """Wait for the model (ModelLoadError in one sentence when it cannot load); what it serves:
        {"stem", "name", "source", "targets", "multilingual"}."""
        described = self._wait_ready()
        self._reader = threading.Thread(target=self._read, name=f"decode-answers-{self.name}", daemon=True)
        self._reader.start()
        return described

    # --- the event loop's side --------------------------------------------------------------------

    @property
    def waiting(self) -> int:
        return self.admission.waiting

    def submit(self, request: TextRequest, segments: list["Segment"]) -> asyncio.Future:
        """A route's request: the future gets decode_requests.answers(...). QueueFull when the queue is full."""
        return self._submit(request, sum(len(s.blocks) for s in segments))

    def submit_file(self, request: FileRequest) -> asyncio.Future:
        """An uploaded document, translated alone in the child: the future gets its download name."""
        return self._submit(request, 1)

    def _submit(self, request: TextRequest | FileRequest, size: int) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if self._gone is not None:
            future.set_exception(DecodeFailure(self._gone))
            return future
        self.admission.admit(size)
        number = next(self._numbers)
        self._pending[number] = (future, loop, size)
        self._send(marshal.dumps(("job", number, to_wire(request))))
        return future

    def _send(self, data: bytes) -> None:
        with self._send_lock:
            if self._held is not None:  # a child is being started again: sent once it is ready
                self._held.append(data)
                return
            try:
                self.conn.send_bytes(data)
            except OSError:  # the child died: the reader fails the job with the others it held
                pass

    def stop(self, timeout: float | None = 30.0) -> None:
        """Let the child finish what it holds, then end it (killed after `timeout`)."""
        self._stopping = True
        with self._send_lock:
            try:
                self.conn.send_bytes(marshal.dumps(("stop",)))
            except OSError:
                pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(10)
        self.conn.close()

    # --- the reader thread ------------------------------------------------------------------------

    def _read(self) -> None:
        while True:
            try:
                kind, items = marshal.loads(self.conn.recv_bytes())
            except (EOFError, OSError):
                if self._stopping or not self._restart():
                    return
                continue
            if kind != "done":
                continue
            settled: dict[asyncio.AbstractEventLoop, list] = {}
            for number, ok, value in items:
                entry = self._pending.pop(number, None)
                if entry is None:
                    continue
                future, loop, size = entry
                self.admission.release(size)
                settled.setdefault(loop, []).append((future, ok, value if ok else _failure(value)))
            _hand_over(settled)

    def _restart(self) -> bool:
        """The child died: fail what it held, say so, start another. False when none could be started."""
        with self._send_lock:
            self._held = []
            lost, self._pending = self._pending, {}
        code = self.proc.wait()
        why = (f"the decode process of {self.name} ended unexpectedly ({_ended(code)}) while translating this; "
               f"it is being restarted")
        self._fail(lost.values(), why)
        print(f"nmt-desktop serve: the decode process of {self.name} (pid {self.proc.pid}) ended unexpectedly "
              f"({_ended(code)}); {len(lost)} requests answered 500; starting it again", file=sys.stderr, flush=True)
        self.conn.close()
        try:
            self.proc, self.conn = self._spawn()
            self._wait_ready()
        except (ModelLoadError, OSError) as exc:
            self._gone = f"the decode process of {self.name} could not be started again: {exc}"
            print(f"nmt-desktop serve: {self._gone}", file=sys.stderr, flush=True)
            with self._send_lock:
                held, self._held = self._held, None
                lost, self._pending = self._pending, {}
            self._fail(lost.values(), self._gone)
            return False
        self.restarts += 1
        print(f"nmt-desktop serve: the decode process of {self.name} is running again (pid {self.proc.pid})",
              file=sys.stderr, flush=True)
        with self._send_lock:
            held, self._held = self._held or [], None
            try:
                for data in held:
                    self.conn.send_bytes(data)
            except OSError:
                pass
        return True

    def _fail(self, entries: Any, why: str) -> None:
        settled: dict[asyncio.AbstractEventLoop, list] = {}
        for future, loop, size in entries:
            self.admission.release(size)
            settled.setdefault(loop, []).append((future, False, DecodeFailure(why)))
        _hand_over(settled)


def _hand_over(settled: dict[asyncio.AbstractEventLoop, list]) -> None:
    """Each loop's futures resolved on it, in one call."""
    for loop, batch in settled.items():
        try:
            loop.call_soon_threadsafe(resolve_all, batch)
        except RuntimeError:  # the loop has closed: nobody waits for these any more
            pass
