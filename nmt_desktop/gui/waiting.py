"""What headless runs (`gui --screenshot`, benchmarks, screenshot scripts) share: the error that ends
one with an exit code, and waiting for the event loop to reach a state."""

from __future__ import annotations

import time
from typing import Callable

from PySide6.QtCore import QEventLoop, QThread
from PySide6.QtWidgets import QApplication, QWidget

from .lifetime import raise_if_interrupted


class HeadlessError(Exception):
    """The headless (`--screenshot`) run failed; `code` is the exit code (1 bad model/input, 2 usage)."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


class WindowClosed(HeadlessError):
    """The user closed the window while a run was still waiting for it: a normal end (exit code 0)."""

    def __init__(self) -> None:
        super().__init__("the window was closed", code=0)


def wait_until(predicate: Callable[[], bool], timeout_s: float, what: str, window: QWidget | None = None) -> None:
    """Process events until `predicate()` is true (HeadlessError after `timeout_s`; WindowClosed as soon as
    `window`, when given, has been closed: nothing is left to wait for)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if window is not None and not window.isVisible():
            raise WindowClosed()
        if time.monotonic() > deadline:
            raise HeadlessError(f"timed out after {timeout_s:.0f}s waiting for {what}")
        QApplication.processEvents(QEventLoop.AllEvents, 50)
        raise_if_interrupted()  # Ctrl+C or SIGTERM during a headless run
        QThread.msleep(5)
