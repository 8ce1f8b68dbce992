"""The glossary editor (Tools > Glossary…, and Edit glossary… in the Translate file dialog): a table of
source term, target term and note, with Import and Export (TSV or TBX, by the file's suffix) and Save as the
model's glossary (glossary_store.py), which the Translate file dialog then offers for that model.

Reading and writing are the core's (`Glossary.read/write`), so a file the editor exports is one the CLI's
--glossary reads, and a bad file is the core's one sentence naming the file and line.

Nothing typed is lost: a line at the top says where the rows apply (the loaded model, once saved as its
glossary); the title's `*` marks unsaved rows; a draft of them is kept on disk a moment after each change
(glossary_draft.py) and restored, with a note, on the next open after a crash; and Close, Esc or the window's
close with unsaved rows asks Save / Discard / Cancel (window-modal but not blocking, like a sheet).
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QCheckBox, QDialog, QFileDialog, QHBoxLayout,
                               QHeaderView, QLabel, QMessageBox, QPushButton, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.glossary import Glossary, Term

from .glossary_draft import GlossaryDraft, Row
from .glossary_store import model_glossary, model_glossary_path, saved_model_glossary
from .options import terms_text

if TYPE_CHECKING:
    from ..window_api import WindowApi

COLUMNS = ("Source term", "Target term", "Note")
IMPORT_FILTER = "Glossaries (*.tsv *.tbx *.txt);;All files (*)"
EXPORT_FILTER = "Tab-separated (*.tsv);;TBX (*.tbx)"
DRAFT_DELAY_MS = 400  # a burst of edits (an import) writes the draft once
Answer = QMessageBox.StandardButton


def rows_text(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


class GlossaryEditor(QDialog):
    """Edit a glossary; `savedAsModel(path)` after Save as the model's glossary. `glossary_file`: open that
    file rather than the model's glossary (the Translate file dialog's chosen one)."""

    savedAsModel = Signal(str)

    def __init__(self, model_path: str | os.PathLike | None = None, source_lang: str = "", target_lang: str = "",
                 parent: QWidget | None = None, glossary_file: str | os.PathLike | None = None):
        super().__init__(parent)
        name = Path(model_path).name if model_path is not None else ""
        self.setWindowTitle(f"Glossary — {name}[*]" if name else "Glossary[*]")
        self.resize(720, 520)
        self.model_path = model_path
        self.draft = GlossaryDraft.for_model(model_path)
        self.prompt: QMessageBox | None = None
        self._clean: list[Row] = []  # the rows as last opened or saved: anything else is unsaved
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_DELAY_MS)
        self._draft_timer.timeout.connect(self.keep_draft)
        self.applies_label = QLabel(self._applies_text(name))
        self.applies_label.setWordWrap(True)
        self.applies_label.setTextFormat(Qt.TextFormat.RichText)
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
        self.close_button = self._button("Close", "Close the editor (with unsaved rows it asks whether to save "
                                         "them first)", self.close)
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
        layout.addWidget(self.applies_label)
        layout.addLayout(rows)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addLayout(bottom)
        self._open(glossary_file)
        model = self.table.model()
        for signal in (model.dataChanged, model.rowsInserted, model.rowsRemoved):
            signal.connect(self._rows_changed)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.keep_draft)  # quitting with the editor open keeps the draft

    def _applies_text(self, name: str) -> str:
        if self.model_path is None:
            return ("No model is loaded: these rows apply to no translation. Export… writes them to a file "
                    "(for Translate file… or <code>nmt-desktop translate --glossary</code>); load a model to "
                    "keep them as its glossary.")
        return (f"These rows apply to the model <b>{html.escape(name)}</b> once you click Save as model's "
                "glossary: the Translate tab and Translate file… then use their target terms. Unsaved rows are "
                "kept as a draft until you save or discard them.")

    def _open(self, glossary_file: str | os.PathLike | None) -> None:
        """The chosen file, else the model's glossary, as the saved state; then an unsaved draft on top."""
        opened = glossary_file if glossary_file is not None else saved_model_glossary(self.model_path)
        if opened is not None:
            self.import_file(opened, replace=True)
            if self.model_path is not None and glossary_file is None and Path(opened) != model_glossary_path(
                    self.model_path):
                self.status.setText(f"Opened the glossary this model carries (kept from the model it was fine-tuned "
                                    f"from, {Path(opened)}): Save as model's glossary keeps your own copy")
        self._clean = self.rows()
        draft = self.draft.read()
        if draft is None or draft.rows == self._clean:
            self.draft.remove()
            return
        self.table.setRowCount(0)
        for row in draft.rows:
            self.add_row(Term(*row))
        self.status.setText(f"Restored the unsaved changes ({rows_text(len(draft.rows))}) from "
                            f"{draft.written or 'your last session'}: Save as model's glossary applies them; Close, "
                            "then Discard, drops them")
        self.setWindowModified(True)
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

    def rows(self) -> list[Row]:
        """What the table holds, cell by cell (blank rows left out), half-filled rows too."""
        rows = []
        for row in range(self.table.rowCount()):
            cells = tuple((self.table.item(row, c).text() if self.table.item(row, c) else "").strip()
                          for c in range(len(COLUMNS)))
            if any(cells):
                rows.append(cells)
        return rows  # type: ignore[return-value]

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

    # -- unsaved rows ----------------------------------------------------------------------------------

    def is_modified(self) -> bool:
        return self.rows() != self._clean

    def _rows_changed(self, *_args: object) -> None:
        self.setWindowModified(self.is_modified())
        self._draft_timer.start()

    def keep_draft(self) -> None:
        """Write the unsaved rows to the draft (or remove it when nothing is unsaved)."""
        self._draft_timer.stop()
        if self.is_modified():
            self.draft.write(self.rows())
        else:
            self.draft.remove()

    def _mark_saved(self) -> None:
        self._clean = self.rows()
        self.setWindowModified(False)
        self._draft_timer.stop()
        self.draft.remove()

    def _commit_open_cell(self) -> None:
        """A cell still being typed into counts: moving the current cell commits its editor."""
        if self.table.state() == QAbstractItemView.State.EditingState:
            current = self.table.currentIndex()
            self.table.setCurrentIndex(QModelIndex())
            self.table.setCurrentIndex(current)

    def reject(self) -> None:  # Esc, Close and the window's close all come here (QDialog.closeEvent)
        self._commit_open_cell()
        if not self.is_modified():
            super().reject()
            return
        self.keep_draft()
        self.ask_to_save()

    def ask_to_save(self) -> QMessageBox:
        """Save / Discard / Cancel for the unsaved rows, as a window-modal box that does not block."""
        if self.prompt is not None and self.prompt.isVisible():
            self.prompt.raise_()
            return self.prompt
        where = (f"Save keeps them as the glossary of the model {Path(self.model_path).name}, where translations "
                 "use them." if self.model_path is not None else
                 "Save exports them to a file (no model is loaded to keep them with).")
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved glossary rows",
                          f"This glossary ({rows_text(len(self.rows()))}) has changes that are not saved. "
                          "Save them?",
                          Answer.Save | Answer.Discard | Answer.Cancel, self)
        box.setInformativeText(f"{where} Discard drops them; Cancel goes back to the editor.")
        box.setDefaultButton(Answer.Save)
        box.setEscapeButton(Answer.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.buttonClicked.connect(lambda button: self._answered(box.standardButton(button)))
        self.prompt = box
        box.open()
        return box

    def _answered(self, answer: QMessageBox.StandardButton) -> None:
        if answer == Answer.Save:
            saved = self.save_as_model() if self.model_path is not None else self.choose_export()
            if saved is None:
                return  # the status line says why; the rows stay
        elif answer == Answer.Discard:
            self._clean = self.rows()
            self.setWindowModified(False)
            self.draft.remove()
        else:
            return
        super().reject()

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

    def choose_export(self) -> Path | None:
        name, chosen = QFileDialog.getSaveFileName(self, "Export glossary", "glossary.tsv", EXPORT_FILTER)
        if not name:
            return None
        if Path(name).suffix.lower() not in (".tsv", ".tbx", ".txt"):
            name += ".tbx" if "tbx" in chosen.lower() else ".tsv"
        return self.export_file(name)

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
        if self.model_path is None:  # no model to keep them with: the file is where they are saved
            self._mark_saved()
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
            self._mark_saved()
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
