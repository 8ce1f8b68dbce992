"""QObject workers that run on QThreads: decoding (`TranslateWorker`; model loading is models/loader.py).

One signal set per worker: `started`, `step`, `unitFinished`, `finished`, `failed`; every signal carries the request
id first, so a panel can ignore what a cancelled or superseded request still sends. Payloads are the
core's own plain data (units, `Step`s with numpy arrays the core made fresh for each step, finished
`Translation`s) that the worker never touches again once sent: never a tensor still in use.

Cancellation is a thread-safe flag read between decoding steps (a queued slot could not run while
the worker thread is busy decoding).
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, QThread, Signal, Slot

from .decode_threads import end_decoding, start_decoding


if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.results import Translation
    from nmt_desktop.core.decoding.translator import DocumentStream, Translator

log = logging.getLogger("nmt_desktop.gui.workers")


class TranslateWorker(QObject):
    """Decodes a text with `Translator.stream_document` (core/decoding/document.py: one unit per sentence
    of each line) and forwards what the core yields as signals.

    - `started(request_id, units)`: the text's core `Unit`s, before the first step.
    - `step(request_id, unit index, step)`: a core `Step`, as it is.
    - `unitFinished(request_id, unit index, translation)`: a unit's final `Translation` (the model's glossary
      forced in), as soon as the unit is decoded (at the latest with the next unit's first step), so a
      stopped request keeps the sentences it finished.
    - `finished(request_id, translations)`: a list with one core `Translation` per unit, those
      `unitFinished` sent. Not emitted for a cancelled request.
    - `failed(request_id, message)`: one line.
    """

    started = Signal(int, object)
    step = Signal(int, int, object)
    unitFinished = Signal(int, int, object)
    finished = Signal(int, object)
    failed = Signal(int, str)

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._cancelled: set[int] = set()
        self._cancel_below = 0  # every request id below this is cancelled
        self._busy = threading.Event()

    # called from any thread --------------------------------------------------------------------

    def cancel(self, request_id: int) -> None:
        with self._lock:
            self._cancelled.add(request_id)

    def cancel_all_before(self, request_id: int) -> None:
        """Cancel every request with an id < request_id (a newer request supersedes them)."""
        with self._lock:
            self._cancel_below = max(self._cancel_below, request_id)

    def is_cancelled(self, request_id: int) -> bool:
        with self._lock:
            return request_id < self._cancel_below or request_id in self._cancelled

    @property
    def busy(self) -> bool:
        return self._busy.is_set()

    # runs in the worker thread ------------------------------------------------------------------

    @Slot(int, object, object, object)
    def run(self, request_id: int, translator: Translator, text: str, cfg: DecodeConfig) -> None:
        if self.is_cancelled(request_id):
            return
        self._busy.set()
        try:
            threads = start_decoding()  # the thread policy, on this thread (decode_threads.py)
            log.debug("decoding on %s", f"{threads} torch threads" if threads else "torch's own threads (OMP_NUM_THREADS)")
            self._run(request_id, translator, text, cfg)
        except Exception as exc:  # noqa: BLE001 - reported to the UI as one line
            log.exception("translation %d failed", request_id)
            if not self.is_cancelled(request_id):
                self.failed.emit(request_id, one_line(exc))
        finally:
            end_decoding()
            self._busy.clear()
            with self._lock:
                self._cancelled.discard(request_id)

    def _run(self, request_id: int, translator: Translator, text: str, cfg: DecodeConfig) -> None:
        t0 = time.perf_counter()
        document = translator.stream_document(text, cfg)
        self.started.emit(request_id, list(document.units))
        sent = SentUnits()
        try:
            for index, step in document:
                if self.is_cancelled(request_id):
                    return
                self._send_finished(request_id, translator, document, cfg, sent)  # units before `index`
                self.step.emit(request_id, index, step)
        finally:
            document.close()
        if self.is_cancelled(request_id) or not document.finished:
            return
        self._send_finished(request_id, translator, document, cfg, sent)
        if self.is_cancelled(request_id) or len(sent.translations) < len(document.units):
            return
        if sent.forced:
            log.info("glossary: %d of %d terms forced in", sent.forced, sent.asked)
        log.info("translated %d sentence(s) in %.2fs", len(document.units), time.perf_counter() - t0)
        self.finished.emit(request_id, sent.translations)

    def _send_finished(self, request_id: int, translator: Translator, document: DocumentStream, cfg: DecodeConfig,
                       sent: SentUnits) -> None:
        """Emit `unitFinished` for each unit the document has finished since the last call, in order, with the
        model's glossary (gui/documents/glossary_store.py) forced in; stops at a cancel."""
        glossary = getattr(translator, "glossary", None)
        while len(sent.translations) < len(document.units) and not self.is_cancelled(request_id):
            index = len(sent.translations)
            translation = document.results[index]
            if translation is None:
                return
            if glossary is not None and glossary.terms:
                from nmt_desktop.core.documents.constraints import apply_glossary

                [translation], report = apply_glossary(translator, [document.units[index]], [translation],
                                                       glossary.terms, cfg)
                sent.forced, sent.asked = sent.forced + report.forced, sent.asked + report.asked
            sent.translations.append(translation)
            self.unitFinished.emit(request_id, index, translation)


@dataclass
class SentUnits:
    """What a request's `unitFinished` signals have sent so far: each unit's translation, in order, and the
    glossary's count of terms forced in and asked for."""

    translations: list[Translation] = field(default_factory=list)
    forced: int = 0
    asked: int = 0


class WorkerThread:
    """A QObject worker living in its own QThread; `stop()` quits and joins the thread. Every one started
    is known to `stop_all_threads`, so the app's close-down joins those their owner did not stop."""

    _started: "weakref.WeakSet[WorkerThread]" = weakref.WeakSet()

    def __init__(self, worker: QObject, name: str):
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName(name)
        worker.moveToThread(self.thread)
        self.thread.start()
        WorkerThread._started.add(self)

    def stop(self, timeout_ms: int = 30000) -> bool:
        """Quit and join the thread. Work still running after `timeout_ms` cannot be cancelled (a model
        load, an analysis job): it is waited for, with a warning, because a QThread destroyed while
        running aborts the whole process at exit (SIGABRT)."""
        if not self.thread.isRunning():
            return True
        if isinstance(self.worker, TranslateWorker):
            self.worker.cancel_all_before(2**62)
        self.thread.quit()
        if not self.thread.wait(timeout_ms):
            log.warning("thread %s still busy after %d ms: waiting for it to finish", self.thread.objectName(),
                        timeout_ms)
            self.thread.wait()
        return True


def stop_all_threads() -> None:
    """Quit and join every WorkerThread still running (the app's close-down: `lifetime.close_down`)."""
    for worker_thread in list(WorkerThread._started):
        if shiboken6.isValid(worker_thread.thread):
            worker_thread.stop()


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    from nmt_desktop.core.formats.model_folder_layout import ModelFolderError

    if isinstance(exc, (ModelFolderError, ValueError, OSError)) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
