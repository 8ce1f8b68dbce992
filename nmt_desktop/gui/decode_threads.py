"""The app's torch thread count for decoding: core/decoding/threads.py's policy (the usable cores less the
cores other processes keep busy, at most 4), applied by `TranslateWorker.run` on its worker thread at the
start of every job (the Translate tab's text, File > Translate file…'s document; issue 42).

Two things differ from the CLI, which reads the load once as its process starts:
- The app lives for hours, and the 1-minute load average counts the app's own decoding: after a minute of
  two-thread decoding an idle 2-core machine shows a load near 2, and the policy read plainly would give the
  next document one thread. So the load less the app's own recent CPU use (process CPU seconds per second,
  averaged as the kernel averages the load: exponentially, over a minute) is what counts as other work.
- torch's intra-op thread count is per OS thread under OpenMP (`torch.set_num_threads` on the GUI thread
  would not reach a worker thread that has already decoded), so it is set on the thread that decodes.

The user's word wins: OMP_NUM_THREADS, where set, leaves torch's own choice (`chosen_threads`). The app has no
decoding threads setting; the Train tab's "CPU threads" is the training child process's, never touched here.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from nmt_desktop.core.decoding import threads

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
    if os.environ.get("OMP_NUM_THREADS", "").strip():  # the user's word (threads.chosen_threads's rule)
        return None
    others = max(0.0, threads.busy_cores() - (own or _own).sample())
    return threads.default_threads(load=others)


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
