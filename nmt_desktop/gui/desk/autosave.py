"""Saving the desk's confirmations into the file, in the file's own confirmed state
(core/bilingual/confirmed.py `save_confirmed`, which writes atomically), on a worker thread a moment after the
last confirmation (debounced) or at once on Ctrl+S.

Why the journal survives a crash at any point: a save writes a snapshot of the unsaved confirmations; only
after the file holds them does the journal forget exactly those (`Journal.forget`), so a confirmation made
while the save ran stays journalled for the next save; a crash between the save and the forgetting leaves
entries the reopened file already holds, which the replay skips (nothing applied twice) and forgets.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from nmt_desktop.gui.desk.journal import Journal
from nmt_desktop.gui.job_view import CallWorker
from nmt_desktop.gui.workers import WorkerThread, one_line

if TYPE_CHECKING:
    from nmt_desktop.core.bilingual.confirmed import ConfirmedSave
    from nmt_desktop.core.decoding.translator import Translator

log = logging.getLogger("nmt_desktop.gui.desk.autosave")

DEBOUNCE_MS = 1500  # a save this long after the last confirmation: a run of quick confirmations saves once


class DeskSaver(QObject):
    """The unsaved confirmations of one file (`unsaved`: unit id -> translation) and their saving.

    `confirmed(id, text)` after each confirmation (it is journalled already) starts the debounce; `save()`
    saves now on the worker thread; `save_here()` saves on the calling thread (closing). `saved(ConfirmedSave)`
    after each save, `failed(sentence)` after a failed one (the journal keeps everything), `changed(bool)`
    when whether anything is unsaved changes."""

    saved = Signal(object)
    failed = Signal(str)
    changed = Signal(bool)
    _job = Signal(int, object)

    def __init__(self, path: Path, journal: Journal, translator: Translator | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.path, self.journal, self.translator = path, journal, translator
        self.unsaved: dict[str, str] = {}
        self._snapshot: dict[str, str] | None = None  # what the save in flight writes
        self._request = 0
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self.save)
        self._start_thread()

    def _start_thread(self) -> None:
        self._worker = CallWorker()
        self._thread = WorkerThread(self._worker, "desk-save")
        self._job.connect(self._worker.run)
        self._worker.finished.connect(self._on_saved)
        self._worker.failed.connect(self._on_failed)

    @property
    def worker_thread(self) -> WorkerThread:
        return self._thread

    @property
    def saving(self) -> bool:
        return self._snapshot is not None

    def confirmed(self, unit_id: str, text: str) -> None:
        self.unsaved[unit_id] = text
        self.changed.emit(True)
        self._timer.start()

    def save(self) -> bool:
        """Save the unsaved confirmations on the worker thread; False when there is nothing to save. A save
        asked for while one runs follows it."""
        self._timer.stop()
        if not self.unsaved:
            return False
        if self._snapshot is not None:
            self._timer.start()  # after the one in flight
            return True
        self._snapshot = dict(self.unsaved)
        self._request += 1
        self._job.emit(self._request, self._writer(self._snapshot))
        return True

    def _writer(self, snapshot: dict[str, str]) -> Callable[[], ConfirmedSave]:
        path, translator = self.path, self.translator

        def write() -> ConfirmedSave:
            from nmt_desktop.core.bilingual.confirmed import save_confirmed

            return save_confirmed(path, snapshot, translator)
        return write

    def _on_saved(self, request: int, result: ConfirmedSave) -> None:
        if request != self._request or self._snapshot is None:
            return
        snapshot, self._snapshot = self._snapshot, None
        self._written(snapshot, result)
        if self.unsaved:
            self._timer.start()

    def _on_failed(self, request: int, message: str) -> None:
        if request != self._request:
            return
        self._snapshot = None
        self.failed.emit(self._failure(message))

    def _written(self, snapshot: dict[str, str], result: ConfirmedSave) -> None:
        """The file holds `snapshot`: forget it in the journal, keep what was confirmed since."""
        self.journal.forget(snapshot)
        for unit_id, text in snapshot.items():
            if self.unsaved.get(unit_id) == text:
                del self.unsaved[unit_id]
        self.changed.emit(bool(self.unsaved))
        self.saved.emit(result)

    def _failure(self, message: str) -> str:
        return (f"Could not save {self.path.name}: {message}; your confirmations are kept in the journal and "
                "the memory")

    def save_here(self) -> bool:
        """Save what is unsaved on this thread, after the save in flight (closing); True when nothing is left
        unsaved, False after a failure (said through `failed`)."""
        self._timer.stop()
        self._request += 1  # the save in flight, if any, is superseded: this one writes all it wrote
        self._snapshot = None
        self._thread.stop()
        self._job.disconnect(self._worker.run)
        if not self.unsaved:
            return True
        snapshot = dict(self.unsaved)
        try:
            from nmt_desktop.core.bilingual.confirmed import save_confirmed

            result = save_confirmed(self.path, snapshot, self.translator)
        except Exception as exc:  # noqa: BLE001 - one sentence in the status bar; the journal keeps all
            log.exception("saving %s failed", self.path)
            self.failed.emit(self._failure(one_line(exc)))
            self._start_thread()  # the window stays open: Ctrl+S and autosave work again
            return False
        self._written(snapshot, result)
        return True

    def shutdown(self) -> None:
        self._timer.stop()
        self._thread.stop()
