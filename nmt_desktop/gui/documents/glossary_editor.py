"""The glossary editor (Tools > Glossary…, and Edit glossary… in the Translate file dialog): a table of
source term, target term and note, with Import and Export (TSV or TBX, by the file's suffix) and Save as the
model's glossary (glossary_store.py), which the Translate file dialog then offers for that model.

Reading and writing are the core's (`Glossary.read/write`), so a file the editor exports is one the CLI's
--glossary reads, and a bad file is the core's one sentence naming the file and line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QDialog, QFileDialog, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.glossary import Glossary, Term

from .glossary_store import model_glossary, model_glossary_path
from .options import terms_text

if TYPE_CHECKING:
    from ..window_api import WindowApi

COLUMNS = ("Source term", "Target term", "Note")
IMPORT_FILTER = "Glossaries (*.tsv *.tbx *.txt);;All files (*)"
EXPORT_FILTER = "Tab-separated (*.tsv);;TBX (*.tbx)"


class GlossaryEditor(QDialog):
    """Edit a glossary; `savedAsModel(path)` after Save as the model's glossary."""

    savedAsModel = Signal(str)

    def __init__(self, model_path: str | os.PathLike | None = None, source_lang: str = "", target_lang: str = "",
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Glossary")
        self.resize(720, 520)
        self.model_path = model_path
        self.source_lang, self.target_lang = source_lang or "en", target_lang or "de"
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setToolTip("Each row: a source term, the target term the translation must use for it, and an "
                              "optional note (double-click a cell to edit it)")
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.add_button = self._button("Add row", "Add an empty row and edit its source term", self.add_row)
        self.remove_button = self._button("Remove rows", "Remove the selected rows", self.remove_selected)
        self.import_button = self._button("Import…", "Read a .tsv or .tbx glossary into the table",
                                          self.choose_import)
        self.replace_check = QCheckBox("Import replaces the rows")
        self.replace_check.setToolTip("On: Import replaces the table's rows; off: it appends to them")
        self.export_button = self._button("Export…", "Write the table as a .tsv or .tbx file (by its suffix)",
                                          self.choose_export)
        self.save_model_button = self._button("Save as model's glossary", "Keep this glossary with the loaded "
                                              "model: the Translate file dialog offers it", self.save_as_model)
        self.save_model_button.setEnabled(model_path is not None)
        self.close_button = self._button("Close", "Close the editor (unsaved rows are dropped)", self.close)
        rows = QHBoxLayout()
        for b in (self.add_button, self.remove_button):
            rows.addWidget(b)
        rows.addStretch(1)
        rows.addWidget(self.import_button)
        rows.addWidget(self.replace_check)
        rows.addWidget(self.export_button)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.save_model_button)
        bottom.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addLayout(rows)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addLayout(bottom)
        if model_path is not None and model_glossary_path(model_path).is_file():
            self.import_file(model_glossary_path(model_path), replace=True)

    def _button(self, text: str, tip: str, slot) -> QPushButton:  # noqa: ANN001 - a bound method
        button = QPushButton(text)
        button.setToolTip(tip)
        button.clicked.connect(lambda *_: slot())
        return button

    # -- rows ------------------------------------------------------------------------------------------

    def add_row(self, term: Term | None = None) -> int:
        """Append a row (empty, ready to type into, when `term` is None); its index."""
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column, text in enumerate((term.source, term.target, term.note) if term else ("", "", "")):
            self.table.setItem(row, column, QTableWidgetItem(text))
        if term is None:
            self.table.setCurrentCell(row, 0)
            self.table.editItem(self.table.item(row, 0))
        return row

    def remove_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        for row in rows or ([self.table.currentRow()] if self.table.currentRow() >= 0 else []):
            self.table.removeRow(row)

    def set_glossary(self, glossary: Glossary, replace: bool = True) -> None:
        if replace:
            self.table.setRowCount(0)
        for term in glossary.terms:
            self.add_row(term)

    def glossary(self) -> Glossary:
        """The table as a glossary (blank rows skipped); DocumentError naming a row with only one term."""
        terms = []
        for row in range(self.table.rowCount()):
            cells = [(self.table.item(row, c).text() if self.table.item(row, c) else "").strip()
                     for c in range(len(COLUMNS))]
            if not any(cells):
                continue
            if not cells[0] or not cells[1]:
                raise DocumentError(f"row {row + 1} needs both a source term and a target term")
            terms.append(Term(*cells))
        return Glossary(terms)

    # -- files -----------------------------------------------------------------------------------------

    def choose_import(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Import glossary", "", IMPORT_FILTER)
        if name:
            self.import_file(name, self.replace_check.isChecked())

    def import_file(self, path: str | os.PathLike, replace: bool = False) -> bool:
        """Read a .tsv/.tbx glossary into the table (appended or replacing); False with the sentence shown."""
        try:
            glossary = Glossary.read(path)
        except DocumentError as exc:
            self.status.setText(f"⚠ {exc}")
            return False
        self.set_glossary(glossary, replace)
        verb = "Read" if replace else "Appended"
        self.status.setText(f"{verb} {terms_text(len(glossary.terms))} from {Path(path).name}")
        return True

    def choose_export(self) -> None:
        name, chosen = QFileDialog.getSaveFileName(self, "Export glossary", "glossary.tsv", EXPORT_FILTER)
        if name:
            if Path(name).suffix.lower() not in (".tsv", ".tbx", ".txt"):
                name += ".tbx" if "tbx" in chosen.lower() else ".tsv"
            self.export_file(name)

    def export_file(self, path: str | os.PathLike) -> Path | None:
        """Write the table as TBX (a .tbx name) or TSV; None with the sentence shown when it cannot."""
        path = Path(path)
        try:
            self.glossary().write(path, self.source_lang, self.target_lang)
        except DocumentError as exc:
            self.status.setText(f"⚠ {exc}")
            return None
        except OSError as exc:
            self.status.setText(f"⚠ cannot write {path.name}: {exc.strerror or exc}")
            return None
        self.status.setText(f"Exported {self.table.rowCount()} rows to {path}")
        return path

    def save_as_model(self) -> Path | None:
        """Save the table as the loaded model's glossary (glossary_store.py)."""
        if self.model_path is None:
            self.status.setText("⚠ no model is loaded: load one to keep a glossary with it")
            return None
        path = model_glossary_path(self.model_path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.status.setText(f"⚠ cannot create {path.parent}: {exc.strerror or exc}")
            return None
        saved = self.export_file(path)
        if saved is not None:
            self.status.setText(f"Saved as the model's glossary ({terms_text(len(self.glossary().terms))}): {path}")
            self.savedAsModel.emit(str(path))
        return saved


def open_glossary_editor(window: WindowApi) -> GlossaryEditor:
    """Tools > Glossary…: the editor on the loaded model's glossary, over the main window."""
    info = window.info
    editor = GlossaryEditor(info.path if info is not None else None, getattr(info, "src_lang", "") or "",
                            getattr(info, "tgt_lang", "") or "", window)  # type: ignore[arg-type]
    editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    editor.savedAsModel.connect(lambda _path: use_model_glossary(window))
    editor.show()
    return editor


def use_model_glossary(window: WindowApi) -> None:
    """Give the loaded model its saved glossary (after a load, after Save as model's glossary): the
    Translate tab forces its terms in."""
    translator, info = window.translate_panel.translator, window.info
    if translator is not None:
        translator.glossary = model_glossary(info.path if info is not None else None)
