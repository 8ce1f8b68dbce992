"""The Translate file dialog's options: glossary, do-not-translate pattern and Keep formatting, read into the
core's `DocumentOptions` when Translate is clicked; for a bilingual file (XLIFF, PO), whether segments that
have a target are translated again (translate-file --overwrite: the dialog re-chooses the document's blocks).

The glossary combo offers "No glossary", the loaded model's saved glossary (glossary_store.py) and any
.tsv/.tbx chosen for this document ("Choose file…"). A glossary is read again at each Translate, so an edit
saved in the glossary editor counts without re-choosing it. A do-not-translate pattern that does not compile
is one sentence under the field and Translate stays off (`valid`), rather than an error after clicking it.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QWidget)

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.glossary import Glossary
from nmt_desktop.core.documents.placeholders import compile_dnt
from nmt_desktop.core.documents.translate_document import DocumentOptions

from .glossary_store import saved_model_glossary

NONE, MODEL, FILE, CHOOSE = "none", "model", "file", "choose"
GLOSSARY_FILTER = "Glossaries (*.tsv *.tbx);;All files (*)"


def _data(kind: str, path: str | os.PathLike = "") -> str:
    """A combo item's data: "kind:path" (plain strings, which QComboBox.findData compares reliably)."""
    return f"{kind}:{path}"


def _parse(data: object) -> tuple[str, str]:
    kind, _, path = str(data or f"{NONE}:").partition(":")
    return kind, path


def terms_text(count: int) -> str:
    return f"{count} term" if count == 1 else f"{count} terms"


def _terms(path: Path) -> str:
    try:
        return terms_text(len(Glossary.read(path).terms))
    except DocumentError:
        return "unreadable"


class DocumentOptionsBox(QWidget):
    """The options; `changed()` whenever `valid` or the choice may have changed."""

    changed = Signal()

    def __init__(self, model_path: str | os.PathLike | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.model_path = model_path
        self.glossary_combo = QComboBox()
        self.glossary_combo.setToolTip("Terms the translation must use: the model's saved glossary, or a .tsv/.tbx "
                                       "file for this document")
        self.edit_glossary_button = QPushButton("Edit glossary…")
        self.edit_glossary_button.setToolTip("Edit the glossary, import or export it (TSV, TBX), save it as the "
                                             "model's glossary")
        self.dnt = QLineEdit()
        self.dnt.setPlaceholderText(r"e.g. \bACME-\d+\b (URLs, e-mail addresses, numbers and emoji are kept anyway)")
        self.dnt.setToolTip("A regular expression: text it matches is kept exactly as it is (names, product codes)")
        self.keep_formatting = QCheckBox("Keep formatting")
        self.keep_formatting.setChecked(True)
        self.keep_formatting.setToolTip("Carry bold, italic, links and code spans onto the words of the translation "
                                        "aligned to them (off: each paragraph's translation takes its first look)")
        self.overwrite = QCheckBox("Translate segments that have a target again")
        self.overwrite.setToolTip("Bilingual files (XLIFF, PO): translate every segment again, confirmed ones "
                                  "included, as translate-file --overwrite does (off: only empty segments are "
                                  "filled; machine output is marked for review either way)")
        self.overwrite.hide()  # shown for bilingual files (dialog.py)
        self.error = QLabel("")
        self.error.setObjectName("hint")
        self.error.setWordWrap(True)
        self.error.hide()
        self.dnt_error = ""
        self._previous = 0

        glossary_row = QHBoxLayout()
        glossary_row.addWidget(self.glossary_combo, 1)
        glossary_row.addWidget(self.edit_glossary_button)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Glossary:", glossary_row)
        form.addRow("Do not translate:", self.dnt)
        form.addRow("", self.keep_formatting)
        form.addRow("", self.overwrite)
        form.addRow("", self.error)
        self.refresh_glossaries()
        self.glossary_combo.activated.connect(self._on_glossary_activated)
        self.dnt.textChanged.connect(self._check_dnt)

    # -- glossary ------------------------------------------------------------------------------------

    def refresh_glossaries(self, select_model: bool = False) -> None:
        """Rebuild the combo (the model's glossary may have been saved since); the choice is kept."""
        files = [_parse(self.glossary_combo.itemData(i))[1] for i in range(self.glossary_combo.count())
                 if _parse(self.glossary_combo.itemData(i))[0] == FILE]
        current = self.glossary_combo.currentData()
        self.glossary_combo.blockSignals(True)
        self.glossary_combo.clear()
        self.glossary_combo.addItem("No glossary", _data(NONE))
        saved = saved_model_glossary(self.model_path)
        if saved is not None:
            self.glossary_combo.addItem(f"Model's glossary ({_terms(saved)})", _data(MODEL, saved))
        for path in files:
            self.glossary_combo.addItem(f"{Path(path).name} ({_terms(Path(path))})", _data(FILE, path))
        self.glossary_combo.addItem("Choose file…", _data(CHOOSE))
        wanted = _data(MODEL, saved) if select_model and saved is not None else current
        index = self.glossary_combo.findData(wanted) if wanted is not None else -1
        if index < 0 and current is None and saved is not None:  # first build: the model's glossary by default
            index = self.glossary_combo.findData(_data(MODEL, saved))
        self.glossary_combo.setCurrentIndex(max(0, index))
        self._previous = self.glossary_combo.currentIndex()
        self.glossary_combo.blockSignals(False)
        self.changed.emit()

    def _on_glossary_activated(self, index: int) -> None:
        kind = _parse(self.glossary_combo.itemData(index))[0]
        if kind != CHOOSE:
            self._previous = index
            self._show_error("")
            return
        self.glossary_combo.setCurrentIndex(self._previous)  # until a file is chosen and read
        name, _ = QFileDialog.getOpenFileName(self, "Choose a glossary", "", GLOSSARY_FILTER)
        if name:
            self._show_error(self.add_glossary_file(name) or "")

    def add_glossary_file(self, path: str | os.PathLike) -> str | None:
        """Offer the glossary at `path` for this document and choose it; its one-sentence error if unreadable."""
        try:
            count = len(Glossary.read(path).terms)
        except DocumentError as exc:
            return str(exc)
        data = _data(FILE, Path(path))
        index = self.glossary_combo.findData(data)
        if index < 0:
            index = self.glossary_combo.count() - 1  # before "Choose file…"
            self.glossary_combo.insertItem(index, f"{Path(path).name} ({terms_text(count)})", data)
        self.glossary_combo.setCurrentIndex(index)
        self._previous = index
        self._show_error("")
        return None

    def glossary_path(self) -> Path | None:
        """The chosen glossary's file (None: no glossary)."""
        kind, path = _parse(self.glossary_combo.currentData())
        return Path(path) if kind in (MODEL, FILE) and path else None

    # -- do-not-translate ------------------------------------------------------------------------------

    def _check_dnt(self) -> None:
        try:
            compile_dnt(self.dnt.text())
            self.dnt_error = ""
        except ValueError as exc:
            self.dnt_error = str(exc).removeprefix("--dnt ")
        self._show_error(self.dnt_error and f"Do not translate: {self.dnt_error}")
        self.changed.emit()

    @property
    def valid(self) -> bool:
        return not self.dnt_error

    def _show_error(self, message: str) -> None:
        if not message and self.dnt_error:
            message = f"Do not translate: {self.dnt_error}"
        self.error.setText(f"⚠ {message}" if message else "")
        self.error.setVisible(bool(message))  # no empty row under the options

    # -- the options -----------------------------------------------------------------------------------

    def options(self) -> DocumentOptions:
        """The core's options; DocumentError (a glossary) or ValueError (the pattern) in one sentence."""
        path = self.glossary_path()
        glossary = Glossary.read(path) if path is not None else None
        return DocumentOptions(glossary=glossary, dnt=compile_dnt(self.dnt.text()),
                               keep_formatting=self.keep_formatting.isChecked())
