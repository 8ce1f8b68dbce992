"""File > Translate file…: a document of any format the core reads (Word, OpenDocument, PowerPoint, Excel,
HTML, Markdown, subtitles, EPUB, plain text) translated with its formatting kept, in a worker thread, with
progress, ETA, Cancel and Save.

The file is read by the core (`open_document`: a hostile or broken file is one sentence, shown here, and
nothing starts) and shown as a side-by-side table, a row per block (table.py). Translate runs the core's
`translate_document` with the dialog's options (options.py: glossary, do-not-translate pattern, Keep
formatting) in `DocumentWorker` (worker.py); the core reports progress in sentences only, so the translated
blocks fill the table when it ends. Cancel stops between batches and leaves nothing to save; Save writes
through `save_translation` (a temporary file renamed into place, never over the source). A bilingual file
(XLIFF, PO) shows the options' overwrite box: ticked, every translatable segment is listed and translated
again (translate-file --overwrite), else only the empty ones.

Trust signals (per-sentence confidence) are not shown here: the preview is per block, and a block's signal
would need quality estimation per block, which is not cheap; the Translate tab shows them per sentence.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QFileDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.formats import FORMATS, SUFFIXES, format_of, open_document
from nmt_desktop.core.documents.translate_document import output_path, save_translation

from ..formatting import format_eta, format_time_left
from ..train.eta import EtaEstimator
from ..workers import WorkerThread, one_line
from .glossary_editor import GlossaryEditor
from .options import DocumentOptionsBox
from .summary import formatting_note, glossary_line
from .table import LineTable
from .worker import DocumentJob, DocumentWorker, work_done

if TYPE_CHECKING:
    from nmt_desktop.core.config import DecodeConfig
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.core.documents.blocks import Document
    from nmt_desktop.core.documents.glossary import Glossary
    from nmt_desktop.core.documents.translate_document import DocumentTranslation

log = logging.getLogger("nmt_desktop.gui.document")
ETA_HALF_LIFE_CHARS = 16_000.0  # the ETA's speed forgets over about this many characters (~200 sentences)


def open_filter() -> str:
    """The file dialog's filter: every format the core reads, then each by name."""
    every = " ".join(f"*{s}" for s in SUFFIXES)
    named = [f"{f.name} ({' '.join(f'*{s}' for s in f.suffixes)})" for f in FORMATS]
    return ";;".join([f"All supported ({every})", *named, "All files (*)"])


class DocumentDialog(QDialog):
    """Translate one document with the loaded model; `translationFinished(lines)` (a text per block) when done."""

    translationFinished = Signal(object)
    _request = Signal(int, object, object, object)

    def __init__(self, translator: Translator, cfg: DecodeConfig, target_lang: str = "",
                 parent: QWidget | None = None, model_path: str | os.PathLike | None = None, source_lang: str = ""):
        super().__init__(parent)
        self.setWindowTitle("Translate file")
        self.resize(1040, 680)
        self.translator, self.cfg, self.target_lang, self.source_lang = translator, cfg, target_lang, source_lang
        self.model_path = model_path
        self.path: Path | None = None
        self.document: Document | None = None
        self.result: DocumentTranslation | None = None
        self.lines: list[str] | None = None  # the finished translation, a text per block
        self.glossary: Glossary | None = None  # the glossary of the translation under way or done
        self.request_id = 0
        self._next_id = 1
        self._eta = EtaEstimator(half_life_steps=ETA_HALF_LIFE_CHARS)  # fed characters: worker.work_curve
        self._work: list[int] = []  # the running document's work curve (worker.work_curve)
        self._t0 = 0.0
        self.glossary_editor: GlossaryEditor | None = None

        self.worker = DocumentWorker()
        self._thread = WorkerThread(self.worker, "document-worker")
        self._request.connect(self.worker.run)
        self.worker.weighed.connect(self._on_weighed)
        self.worker.progressed.connect(self._on_progress)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self._build_ui()

    def _build_ui(self) -> None:
        self.title = QLabel("Open a file to translate")
        self.title.setObjectName("paneTitle")
        self.options = DocumentOptionsBox(self.model_path)
        self.options.changed.connect(lambda: self._set_running(self.running))
        self.options.edit_glossary_button.clicked.connect(self.edit_glossary)
        self.options.overwrite.toggled.connect(self._on_overwrite)
        self.table = LineTable()
        self.table.setToolTip("The document, a row per paragraph, cell or cue, and its translation beside it "
                              "(greyed rows are kept as they are)")
        self.progress = QProgressBar()
        self.progress.setToolTip("Sentences of the document translated")
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.open_button = QPushButton("Open file…")
        self.open_button.setToolTip("Choose a document to translate (" + ", ".join(SUFFIXES) + ")")
        self.open_button.clicked.connect(self.choose_file)
        self.translate_button = QPushButton("Translate")
        self.translate_button.setObjectName("primaryButton")
        self.translate_button.setToolTip("Translate the whole document with these options")
        self.translate_button.clicked.connect(lambda: self._show_error(self.start()))
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop translating (nothing is saved)")
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button = QPushButton("Save…")
        self.save_button.setToolTip("Save the translation as a copy of the file with its formatting")
        self.save_button.clicked.connect(lambda: self.save())
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip("Close this window (a translation under way is cancelled)")
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        for b in (self.translate_button, self.cancel_button, self.save_button, self.close_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.options)
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
        self.options.setEnabled(not running)
        self.translate_button.setEnabled(not running and self.document is not None and bool(self.document.blocks)
                                         and self.options.valid)
        self.save_button.setEnabled(not running and self.result is not None)

    def _show_error(self, message: str | None) -> None:
        if message:
            self.status.setText(f"⚠ {message}")

    # -- opening -------------------------------------------------------------------------------------

    def choose_file(self) -> None:
        """Open file…: the system's file dialog, then the file read (not yet translated: options first)."""
        start = str(self.path.parent) if self.path else ""
        name, _ = QFileDialog.getOpenFileName(self, "Translate file", start, open_filter())
        if name:
            self._show_error(self.open_file(name))

    def open_file(self, path: str | os.PathLike) -> str | None:
        """Read `path` into the table; its one-sentence error if it cannot be read (the open file stays)."""
        try:
            document = open_document(path)
        except DocumentError as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - a format module's bug must not take the app down
            log.exception("cannot read %s", path)
            return f"{Path(path).name} cannot be read: {one_line(exc)}"
        bilingual = hasattr(document, "select")  # core/bilingual: segments with a target are left unless overwritten
        if bilingual:
            document.select(overwrite=True)
        if not any(block.text.strip() for block in document.blocks):
            return f"{Path(path).name} has no text to translate"
        if bilingual:
            document.select(overwrite=False)
        self.cancel()
        self.path, self.document, self.result, self.lines = Path(path), document, None, None
        self.title.setText(f"{self.path.name} ({format_of(self.path).name}) → {self.target_lang or 'translation'}")
        self.options.overwrite.blockSignals(True)
        self.options.overwrite.setChecked(False)
        self.options.overwrite.blockSignals(False)
        self.options.overwrite.setVisible(bilingual)
        self._show_blocks()
        return None

    def _show_blocks(self) -> None:
        """The open document's blocks in the table, not yet translated."""
        blocks = self.document.blocks
        self.table.pairs.set_source([b.text for b in blocks], [b.where for b in blocks], [b.verbatim for b in blocks])
        self.progress.setValue(0)
        if blocks or not hasattr(self.document, "select"):
            self.status.setText(f"{len(blocks)} blocks read: choose the options and click Translate.")
        else:
            self.status.setText("Every segment has a target: tick \u201cTranslate segments that have a target "
                                "again\u201d to translate them.")
        self._set_running(False)

    def _on_overwrite(self, checked: bool) -> None:
        """The overwrite box: the bilingual file's segments to translate chosen again (a translation done is dropped)."""
        if self.document is None or not hasattr(self.document, "select") or self.running:
            return
        self.document.select(overwrite=checked)
        self.result, self.lines = None, None
        self._show_blocks()

    def translate_file(self, path: str | os.PathLike) -> str | None:
        """Read `path` and start translating it with the current options; the one-sentence error for a bad file."""
        return self.open_file(path) or self.start()

    # -- translating ---------------------------------------------------------------------------------

    def start(self) -> str | None:
        """Translate the open document with the dialog's options; the one-sentence reason when it cannot."""
        if self.document is None or self.path is None:
            return "open a file first"
        try:
            options = self.options.options()
        except (DocumentError, ValueError) as exc:
            return str(exc)
        self.cancel()
        self.result, self.lines, self.glossary = None, None, options.glossary
        self.table.pairs.set_source(self.table.pairs.source, self.table.pairs.where, self.table.pairs.verbatim)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.status.setText("Starting…")
        self.request_id, self._next_id = self._next_id, self._next_id + 1
        self.worker.cancel_all_before(self.request_id)
        self._eta.reset()
        self._work = []
        self._t0 = time.perf_counter()
        self._set_running(True)
        log.info("translating file %s (%d blocks)", self.path, len(self.document.blocks))
        self._request.emit(self.request_id, self.translator, DocumentJob(self.document, options), self.cfg)
        return None

    def cancel(self) -> None:
        """Stop the translation under way (the core stops before its next batch); nothing is kept to save."""
        if self.request_id:
            self.worker.cancel(self.request_id)
            self.request_id = 0
            self.result, self.lines = None, None
            self.status.setText("Cancelled: nothing was saved.")
        self._set_running(False)

    def _on_weighed(self, request_id: int, curve: list[int]) -> None:
        if request_id == self.request_id:
            self._work = curve

    def _on_progress(self, request_id: int, done: int, total: int) -> None:
        if request_id != self.request_id:
            return
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)
        if done >= total > 0:  # the sentences are done; alignment and inline formatting still run, unmeasured
            self.status.setText(f"{total} of {total} sentences translated · carrying the formatting over…")
            return
        work = self._work[-1] if self._work else total
        eta = self._eta.update(work_done(self._work, done, total), time.perf_counter() - self._t0, work) if done else None
        left = format_time_left(eta) or "estimating the time left…"  # not "about unknown left", nor a clock time
        self.status.setText(f"{done} of {total} sentences translated · {left}")

    def _on_finished(self, request_id: int, result: DocumentTranslation) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.result = result
        self.lines = [block.target for block in result.blocks]
        self.table.pairs.set_target(self.lines)
        self.table.pairs.notes = [formatting_note(b, r) for b, r in zip(result.document.blocks, result.blocks)]
        self.progress.setRange(0, max(1, result.sentences))
        self.progress.setValue(self.progress.maximum())
        seconds = time.perf_counter() - self._t0
        parts = [f"Done: {len(self.lines)} blocks ({result.sentences} sentences) in {format_eta(seconds)}.",
                 glossary_line(result, self.glossary), result.cut_line(), "Save… writes the translation."]
        self.status.setText(" ".join(p.rstrip(".") + "." for p in parts if p))
        self._set_running(False)
        self.translationFinished.emit(list(self.lines))

    def _on_failed(self, request_id: int, message: str) -> None:
        if request_id != self.request_id:
            return
        self.request_id = 0
        self.status.setText(f"⚠ Translation failed: {message}")
        self._set_running(False)

    # -- glossary ------------------------------------------------------------------------------------

    def edit_glossary(self) -> GlossaryEditor:
        """Edit glossary…: the editor on the chosen glossary (or the model's); saving it as the model's glossary
        chooses that here. An editor still open is brought forward, never replaced: its rows may be unsaved."""
        if self.glossary_editor is not None and self.glossary_editor.isVisible():
            self.glossary_editor.raise_()
            self.glossary_editor.activateWindow()
            return self.glossary_editor
        if self.glossary_editor is not None:
            self.glossary_editor.deleteLater()
        editor = GlossaryEditor(self.model_path, self.source_lang, self.target_lang, self,
                                glossary_file=self.options.glossary_path())
        editor.savedAsModel.connect(lambda: self.options.refresh_glossaries(select_model=True))
        self.glossary_editor = editor
        editor.show()
        return editor

    # -- saving and closing ----------------------------------------------------------------------------

    def save(self, path: str | os.PathLike | None = None) -> Path | None:
        """Write the finished translation (asks where when `path` is None); None if nothing was written."""
        if self.result is None or self.path is None:
            return None
        if path is None:
            info = format_of(self.path)
            suggested = output_path(self.path, self.target_lang or None)  # a filled .pot template is a .po file
            name, _ = QFileDialog.getSaveFileName(self, "Save translation", str(suggested),
                                                  f"{info.name} (*{suggested.suffix})")
            if not name:
                return None
            path = name
        try:
            saved = save_translation(self.result, path)
        except DocumentError as exc:
            self.status.setText(f"⚠ {exc}")
            return None
        self.status.setText(f"Saved {saved}")
        log.info("saved the translation of %s as %s", self.path.name, saved)
        return saved

    def shutdown(self) -> None:
        """Cancel and join the worker thread (the main window calls this when it closes)."""
        self.cancel()
        self._thread.stop()

    def reject(self) -> None:
        """Esc, Close or the window's close button: the translation under way is cancelled, not left running."""
        self.cancel()
        super().reject()
