"""Test helper: fail instead of hanging when a block runs too long (SIGALRM, main thread, POSIX)."""

from __future__ import annotations

import signal
from contextlib import contextmanager


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
