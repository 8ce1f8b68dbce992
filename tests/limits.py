"""Test helpers for time: how long the Qt tests wait for a signal or a state (`TIMEOUT_MS`), and
`time_limit`, to fail instead of hanging when a block runs too long (SIGALRM, main thread, POSIX).

Imported as `from limits import TIMEOUT_MS` (tests/ is on sys.path: tests/conftest.py's folder)."""

from __future__ import annotations

import signal
from contextlib import contextmanager

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
