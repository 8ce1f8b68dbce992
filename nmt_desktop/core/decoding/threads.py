"""How many torch threads a decoding process uses when the user does not say (`--threads` overrides).

torch's own default is one thread per core. On a 2-core machine with other work running, that default
oversubscribes the cores: the threads of one matrix multiplication wait for each other at every barrier
while the scheduler hands their cores to the other processes, and a document that took 9 s idle took
112 s beside two busy processes (19 s with `--threads 1`; issue 42, benchmarks/RESULTS.md "Threads under
contention"). The policy: the cores this process may run on less the cores the rest of the machine keeps busy (the
1-minute load average, rounded), at most 4 (decoding small models gains little beyond), at least 1.
OMP_NUM_THREADS, where set, is the user's word.

The load is read again while a long job runs (`follow_load`/`refresh`, at most every REFRESH_S, between
batches): a count chosen on an idle machine collapses when other work starts (a book on two threads did
not finish in 16 minutes once the load rose to 3-7; on one thread it takes 4). The 1-minute load average
counts this process's own decoding too, so that is taken out (`OwnLoad`: the process's CPU seconds per
second, averaged as the kernel averages the load).
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

MAX_THREADS = 4


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def busy_cores() -> float:
    """The 1-minute load average: how many cores other processes keep busy (0 where the OS has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def default_threads(cores: int | None = None, load: float | None = None) -> int:
    """The cores not busy with other work (cores less the rounded load), at most MAX_THREADS, at least 1."""
    cores = usable_cores() if cores is None else cores
    load = busy_cores() if load is None else load
    return max(1, min(MAX_THREADS, cores - int(load + 0.5)))


LOAD_WINDOW_S = 60.0  # the 1-minute load average's time constant


@dataclass
class OwnLoad:
    """The app's own share of the 1-minute load average: its CPU seconds per wall second, averaged
    exponentially over LOAD_WINDOW_S between samples (taken when a job starts and ends; between jobs the app is
    mostly idle). `cpu` and `wall` are the clocks (process CPU time of all threads, monotonic wall time)."""
    cpu: Callable[[], float] = time.process_time
    wall: Callable[[], float] = time.monotonic
    average: float = 0.0
    _last: tuple[float, float] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def sample(self) -> float:
        """Fold the CPU used since the last sample into the average; the average now."""
        with self._lock:
            wall, cpu = self.wall(), self.cpu()
            if self._last is not None and wall > self._last[0]:
                elapsed = wall - self._last[0]
                rate = max(0.0, cpu - self._last[1]) / elapsed
                decay = math.exp(-elapsed / LOAD_WINDOW_S)
                self.average = self.average * decay + rate * (1.0 - decay)
            self._last = (wall, cpu)
            return self.average


_own = OwnLoad()


def decoding_threads(own: OwnLoad | None = None) -> int | None:
    """The thread count for a job starting now (None: OMP_NUM_THREADS is set, torch's own choice stands)."""
    if os.environ.get("OMP_NUM_THREADS", "").strip():  # the user's word
        return None
    others = max(0.0, busy_cores() - (own or _own).sample())
    return default_threads(load=others)


def start_decoding(own: OwnLoad | None = None) -> int | None:
    """On the decoding thread, before a job: torch's intra-op threads set by the policy; the count, or None."""
    n = decoding_threads(own)
    if n is not None:
        import torch

        if torch.get_num_threads() != n:
            torch.set_num_threads(n)
    return n


def end_decoding(own: OwnLoad | None = None) -> None:
    """After a job: its CPU use folded into the app's own load."""
    (own or _own).sample()


REFRESH_S = 20.0  # how often a long job reads the machine's load again
_following: dict[int, float] = {}  # decoding thread id -> when it last read the policy


def follow_load() -> None:
    """From now on, `refresh` on this thread (between a long job's batches) reads the policy again: the
    CLI's default when neither --threads nor OMP_NUM_THREADS is given."""
    _following[threading.get_ident()] = time.monotonic()


def refresh() -> None:
    """Between batches: on a thread that follows the load, the policy read again once REFRESH_S have passed
    (torch's count is per OS thread, so it is set on the decoding thread itself); else nothing."""
    ident = threading.get_ident()
    last = _following.get(ident)
    if last is not None and time.monotonic() - last >= REFRESH_S:
        _following[ident] = time.monotonic()
        start_decoding()
