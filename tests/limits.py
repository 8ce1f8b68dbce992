"""Test helpers for time: how long the Qt tests wait for a signal or a state (`TIMEOUT_MS`), `time_limit`, to
fail instead of hanging when a block runs too long (SIGALRM, main thread, POSIX), and `measured_work`, the
bound a test may put on how much work a block does (CPU time of its thread, memory): never a wall-clock bound,
which a busy machine breaks (issue 41).

Imported as `from limits import TIMEOUT_MS` (tests/ is on sys.path: tests/conftest.py's folder)."""

from __future__ import annotations

import signal
import time
import tracemalloc
from contextlib import contextmanager
from dataclasses import dataclass

# qtbot.waitSignal / waitUntil: a translation or a model load on the tiny model, generous for a loaded machine
TIMEOUT_MS = 30000
# the same for work over a whole window or document (every control, a many-line document, a dropped model)
SLOW_TIMEOUT_MS = 60000


@contextmanager
def time_limit(seconds: int, what: str = "the operation"):
    """Raise TimeoutError in the body if it is still running after `seconds`."""
    def on_alarm(signum, frame):
        raise TimeoutError(f"{what} still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Work:
    """What a block did, measured so that a loaded machine cannot change the verdict: the CPU time of this
    thread (not wall time, which counts the moments other processes held the cores) and the peak of the
    memory Python allocated (tracemalloc)."""

    cpu_s: float = 0.0
    peak_bytes: int = 0


@contextmanager
def measured_work(cpu_s: float | None = None, peak_bytes: int | None = None, what: str = "the block"):
    """Measure the body's `Work` and, at its end, assert it stayed within `cpu_s` seconds of this thread's CPU
    time and `peak_bytes` of Python allocations (either bound may be None). For the "refused before any real
    work" checks: a zip bomb inflated or a 4 TB tensor allocated shows in both, whatever else runs beside."""
    work = Work()
    tracing = peak_bytes is not None and not tracemalloc.is_tracing()
    if tracing:
        tracemalloc.start()
    began = time.thread_time()
    try:
        yield work
    finally:
        work.cpu_s = time.thread_time() - began
        if tracing:
            work.peak_bytes = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    if cpu_s is not None:
        assert work.cpu_s < cpu_s, f"{what} took {work.cpu_s:.2f} s of CPU time (bound {cpu_s} s)"
    if peak_bytes is not None:
        assert work.peak_bytes < peak_bytes, f"{what} allocated {work.peak_bytes:,} bytes at peak (bound {peak_bytes:,})"


def wait_for(condition, what: str, polls: int = 1200, every_s: float = 0.05) -> None:
    """Poll `condition` (outside Qt: a child process's exit) until it holds; fail naming `what` when it still
    does not after `polls` polls. A hang guard as generous as SLOW_TIMEOUT_MS, not a bound on speed: no clock is
    read, and a slow machine only takes more of the polls."""
    for _ in range(polls):
        if condition():
            return
        time.sleep(every_s)
    assert condition(), f"{what} (still not after {polls} polls {every_s} s apart)"
