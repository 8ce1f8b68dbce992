"""The one background-job base of the views that run model work: a worker thread, a request id, a busy state.

Here, not in `analysis/`, because both tabs use it: the Analysis views that re-translate, re-decode,
beam-search or load a model, and the Translate tab's `InspectBox`. Such a view runs that work on its own
`CallWorker` thread, one job at a time. Every job gets a request id; a result (or failure) whose id is
not the view's current `request_id` belongs to a superseded request and is dropped, so a view whose
input changed (a new translator, a new translation) never shows an older request's result. A failure
is shown as one sentence in the view's status line.
"""

from __future__ import annotations

import logging
from typing import Callable, TypeVar

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QLabel, QWidget

from .workers import WorkerThread, one_line

log = logging.getLogger("nmt_desktop.gui.job_view")

R = TypeVar("R")


class CallWorker(QObject):
    """Runs `fn()` calls in its worker thread: `finished(id, result)` or `failed(id, message)`."""

    finished = Signal(int, object)
    failed = Signal(int, str)

    @Slot(int, object)
    def run(self, request_id: int, fn: Callable[[], object]) -> None:
        try:
            result = fn()
        except Exception as exc:  # noqa: BLE001 - reported to the UI as one line
            log.exception("job %d failed", request_id)
            self.failed.emit(request_id, one_line(exc))
            return
        self.finished.emit(request_id, result)


class JobView(QWidget):
    """A view running one background job at a time on its own thread (`thread_name`).

    Subclasses start work with `run_job(job, done, message)`: `job()` runs on the worker thread, `done(result)`
    on the GUI thread if the request is still current. `failure` prefixes the one-line error shown by
    `show_status`, which writes to `status_label()`; `_update_enabled` refreshes buttons on busy changes."""

    failure = "Failed"
    _job = Signal(int, object)

    def __init__(self, thread_name: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.request_id = 0  # the request whose result is awaited; 0: idle
        self._next_id = 1
        self._done: Callable[[object], None] | None = None
        self.worker = CallWorker()
        self._thread = WorkerThread(self.worker, thread_name)
        self._job.connect(self.worker.run)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)

    @property
    def running(self) -> bool:
        return self.request_id != 0

    def status_label(self) -> QLabel:
        return self.status  # type: ignore[attr-defined] - every job view has one

    def show_status(self, text: str) -> None:
        self.status_label().setText(text)

    def _update_enabled(self) -> None:
        """Enable the view's controls for the busy state (`running`)."""

    def run_job(self, job: Callable[[], R], done: Callable[[R], None], message: str) -> int:
        """Run `job` on the worker thread, then `done(result)` here unless superseded; returns the request id."""
        self.request_id = self._next_id
        self._next_id += 1
        self._done = done  # type: ignore[assignment] - called only with this job's result
        self.show_status(message)
        self._update_enabled()
        self._job.emit(self.request_id, job)
        return self.request_id

    def forget_job(self) -> None:
        """Drop the result of the job under way (its inputs changed); the thread cannot cancel it."""
        self.request_id = 0

    def _on_finished(self, request_id: int, result: object) -> None:
        if request_id != self.request_id or self._done is None:
            return
        self.request_id = 0
        self._update_enabled()
        self._done(result)

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.show_status(f"{self.failure}: {message}")
        self._update_enabled()

    def shutdown(self) -> None:
        self.forget_job()
        self._thread.stop()
