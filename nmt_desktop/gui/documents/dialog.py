"""File > Translate text file…: a whole .txt document translated in a worker thread, with progress, ETA,
Cancel and Save.

The text is cut into units by the core's one policy (core/decoding/document.py, as the Translate tab and
`nmt-desktop translate` cut it): each line on its own, so N source lines give N translated lines and a
blank line stays blank. They are shown as a table, a row per line, the translation beside its source line
(document_table.py), so a line that wraps never puts the two out of step. The worker is the Translate tab's
`TranslateWorker` (same cancellation and error handling) reporting each finished unit instead of each token.
Cancel stops between decoding steps; nothing is written until Save, and Save writes the whole file at once
(gui/document_file.py).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QFileDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from nmt_desktop.core.decoding.document import document_lines

from .file import DocumentFileError, read_document, translation_name, write_translation
from .table import LineTable
from ..formatting import format_eta
from ..train.eta import EtaEstimator
from ..workers import TranslateWorker, WorkerThread

if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.results import Unit
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.decoding.results import Translation

log = logging.getLogger("nmt_desktop.gui.document")


class DocumentWorker(TranslateWorker):
    """`TranslateWorker` for a whole file: `unitDone(request id, unit index, text)` as each unit is finished,
    then `finished(request id, translations)` with one core `Translation` per line of the text."""

    unitDone = Signal(int, int, str)

    def _run(self, request_id: int, translator: Translator, text: str, cfg: DecodeConfig) -> None:
        document = translator.stream_document(text, cfg)
        self.started.emit(request_id, list(document.units))
        done = 0
        try:
            for index, _step in document:
                if self.is_cancelled(request_id):
                    return
                for done in range(done, index):  # a step of unit `index`: the units before it are finished
                    self.unitDone.emit(request_id, done, document.results[done].text)
                done = index
        finally:
            document.close()
        if self.is_cancelled(request_id) or not document.finished:
            return
        for i in range(done, len(document.units)):
            self.unitDone.emit(request_id, i, document.results[i].text)
        self.finished.emit(request_id, document.translations())


class DocumentDialog(QDialog):
    """Translate one text file with the loaded model; `translationFinished(lines)` when it is done."""

    translationFinished = Signal(object)  # the translated lines
    _request = Signal(int, object, object, object)

    def __init__(self, translator: Translator, cfg: DecodeConfig, target_lang: str = "",
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Translate text file")
        self.resize(980, 620)
        self.translator, self.cfg, self.target_lang = translator, cfg, target_lang
        self.path: Path | None = None
        self.request_id = 0
        self._next_id = 1
        self.units: list[Unit] = []
        self.unit_texts: list[str | None] = []
        self.lines: list[str] | None = None  # the finished translation, a line per source line
        self._weights: list[int] = []
        self._eta = EtaEstimator(half_life_steps=200.0)
        self._t0 = 0.0

        self.worker = DocumentWorker()
        self._thread = WorkerThread(self.worker, "document-worker")
        self._request.connect(self.worker.run)
        self.worker.started.connect(self._on_started)
        self.worker.unitDone.connect(self._on_unit_done)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self._build_ui()

    def _build_ui(self) -> None:
        self.title = QLabel("")
        self.title.setObjectName("paneTitle")
        self.table = LineTable()
        self.table.setToolTip("The file, a row per line, and its translation beside each line as it is translated "
                              "(blank lines kept)")
        self.progress = QProgressBar()
        self.progress.setToolTip("Share of the file's source tokens translated")
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.open_button = QPushButton("Open file…")
        self.open_button.setToolTip("Choose another UTF-8 .txt file to translate")
        self.open_button.clicked.connect(self.choose_file)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop translating (nothing is saved)")
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button = QPushButton("Save…")
        self.save_button.setObjectName("primaryButton")
        self.save_button.setToolTip("Save the translation as a UTF-8 .txt file, a line per line of the source")
        self.save_button.clicked.connect(lambda: self.save())
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip("Close this window (a translation under way is cancelled)")
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        for b in (self.cancel_button, self.save_button, self.close_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self._set_running(False)

    # -- state -------------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.request_id != 0

    def _set_running(self, running: bool) -> None:
        self.cancel_button.setEnabled(running)
        self.open_button.setEnabled(not running)
        self.save_button.setEnabled(not running and self.lines is not None)

    # -- starting ----------------------------------------------------------------------------------

    def choose_file(self) -> None:
        start = str(self.path.parent) if self.path else ""
        name, _ = QFileDialog.getOpenFileName(self, "Translate text file", start, "Text files (*.txt);;All files (*)")
        if name:
            error = self.translate_file(name)
            if error:
                self.status.setText(f"⚠ {error}")

    def translate_file(self, path: str | Path) -> str | None:
        """Read `path` and start translating it; returns the one-sentence error for a bad file (nothing starts)."""
        try:
            text = read_document(path)
        except DocumentFileError as exc:
            return str(exc)
        self.cancel()
        self.path, self.lines = Path(path), None
        self.title.setText(f"{self.path.name} → {self.target_lang or 'translation'}")
        self.table.pairs.set_source(document_lines(text))
        self.progress.setValue(0)
        self.status.setText("Starting…")
        self.request_id, self._next_id = self._next_id, self._next_id + 1
        self.worker.cancel_all_before(self.request_id)
        self._eta.reset()
        self._t0 = time.perf_counter()
        self._set_running(True)
        log.info("translating file %s (%d characters)", self.path, len(text))
        self._request.emit(self.request_id, self.translator, text, self.cfg)
        return None

    def cancel(self) -> None:
        """Stop the translation under way (the worker stops before its next decoding step)."""
        if self.request_id:
            self.worker.cancel(self.request_id)
            self.request_id = 0
            self.status.setText("Cancelled: nothing was saved.")
        self._set_running(False)

    # -- worker signals ------------------------------------------------------------------------------

    def _on_started(self, request_id: int, units: list[Unit]) -> None:
        if request_id != self.request_id:
            return
        self.units = list(units)
        self.unit_texts = [None] * len(self.units)
        self._weights = [max(1, len(u.source_ids)) for u in self.units]
        self.progress.setRange(0, sum(self._weights) or 1)
        self._show_progress()

    def _on_unit_done(self, request_id: int, index: int, text: str) -> None:
        if request_id != self.request_id or not 0 <= index < len(self.unit_texts):
            return
        self.unit_texts[index] = text
        self.table.pairs.set_target(self._preview_lines())
        self._show_progress()

    def _preview_lines(self) -> list[str]:
        """The translated lines so far: every line up to the first unit still to come."""
        pending = next((u.line for u, t in zip(self.units, self.unit_texts) if t is None), len(self.table.pairs.source))
        parts: list[list[str]] = [[] for _ in range(pending)]
        for unit, text in zip(self.units, self.unit_texts):
            if text is not None and unit.line < pending:
                parts[unit.line].append(text)
        return [" ".join(p) for p in parts]

    def _show_progress(self) -> None:
        done = sum(w for w, t in zip(self._weights, self.unit_texts) if t is not None)
        self.progress.setValue(done)
        finished = sum(t is not None for t in self.unit_texts)
        eta = self._eta.update(done, time.perf_counter() - self._t0, self.progress.maximum()) if done else None
        self.status.setText(f"{finished} of {len(self.units)} sentences translated · about {format_eta(eta)} left")

    def _on_finished(self, request_id: int, translations: list[Translation]) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.lines = [t.text for t in translations]
        self.table.pairs.set_target(self.lines)
        self.progress.setValue(self.progress.maximum())
        seconds = time.perf_counter() - self._t0
        self.status.setText(f"Done: {len(self.lines)} lines ({len(self.units)} sentences) in {format_eta(seconds)}. "
                            "Save… writes the translation.")
        self._set_running(False)
        self.translationFinished.emit(list(self.lines))

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.status.setText(f"⚠ Translation failed: {message}")
        self._set_running(False)

    # -- saving and closing ----------------------------------------------------------------------------

    def save(self, path: str | Path | None = None) -> Path | None:
        """Write the finished translation (asks where when `path` is None); None if nothing was written."""
        if self.lines is None or self.path is None:
            return None
        if path is None:
            suggested = str(self.path.with_name(translation_name(self.path, self.target_lang)))
            path, _ = QFileDialog.getSaveFileName(self, "Save translation", suggested, "Text files (*.txt)")
            if not path:
                return None
        try:
            saved = write_translation(path, self.lines)
        except DocumentFileError as exc:
            self.status.setText(f"⚠ {exc}")
            return None
        self.status.setText(f"Saved {saved}")
        return saved

    def shutdown(self) -> None:
        """Cancel and join the worker thread (the main window calls this when it closes)."""
        self.cancel()
        self._thread.stop()

    def reject(self) -> None:
        """Esc, Close or the window's close button: the translation under way is cancelled, not left running."""
        self.cancel()
        super().reject()
