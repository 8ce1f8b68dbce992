"""The desk's window: a table of a bilingual file's segments (source | suggestion | your translation | state)
and one line to type the current segment's translation in, driven by the keyboard.

Ctrl+Enter confirms the current segment (journal first, then the translation memory with origin "confirmed")
and moves to the next unconfirmed one; Ctrl+Down/Ctrl+Up move; Ctrl+Shift+S copies the source and
Ctrl+Shift+U the suggestion into your translation. The translation line keeps the focus, so the table is
read-only and no cell editor swallows these keys. Suggestions are the memory's best match with its score.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLineEdit, QMainWindow, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from nmt_desktop.core.bilingual import BilingualFile, read_bilingual
from nmt_desktop.core.memory.entries import Entry, Pair
from nmt_desktop.core.memory.store import TranslationMemory
from nmt_desktop.gui.desk.journal import Confirmation, Journal

SOURCE, SUGGESTION, TRANSLATION, STATE = range(4)
FILTERS = ("all", "unconfirmed", "fuzzy")


class DeskWindow(QMainWindow):
    """The desk on one bilingual file (see the module docstring). DocumentError from read_bilingual is the
    caller's to show: the window is only made for a file that reads."""

    def __init__(self, path: Path, memory_path: Path | None = None, journal_folder: Path | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.file: BilingualFile = read_bilingual(path)
        self.units = [u for u in self.file.units if u.translatable and u.source.strip()]
        self.journal = Journal(self.file.path, journal_folder)
        self.memory = TranslationMemory(memory_path)
        self.pair = (Pair.of(self.file.source_language, self.file.target_language)
                     if self.file.source_language and self.file.target_language else None)
        self.setWindowTitle(f"Post-edit {self.file.path.name}")
        self._build()
        replayed = self._replay_journal()
        self._fill()
        self.table.setCurrentCell(self._next_unconfirmed(-1), TRANSLATION)
        if replayed:
            self.statusBar().showMessage(f"{replayed} confirmed segment(s) from the journal of an earlier session "
                                         f"applied; they are not in {self.file.path.name} until it is saved")
        elif self.pair is None:
            self.statusBar().showMessage(f"{self.file.path.name} names no source or target language: confirmations "
                                         "go to the journal, not the translation memory")

    def _build(self) -> None:
        self.filter_text = QLineEdit(placeholderText="Filter source or translation")
        self.filter_choice = QComboBox()
        self.filter_choice.addItems(FILTERS)
        top = QHBoxLayout()
        top.addWidget(self.filter_text, 1)
        top.addWidget(self.filter_choice)
        self.table = QTableWidget(len(self.units), 4)
        self.table.setHorizontalHeaderLabels(["Source", "Suggestion", "Your translation", "State"])
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)  # the current segment only
        self.table.horizontalHeader().setSectionResizeMode(TRANSLATION, QHeaderView.ResizeMode.Stretch)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.editor = QLineEdit(placeholderText="Your translation (Ctrl+Enter confirms)")
        layout = QVBoxLayout()
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.editor)
        body = QWidget()
        body.setLayout(layout)
        self.setCentralWidget(body)
        self.table.currentCellChanged.connect(lambda row, *_: self._show_row(row))
        self.editor.textEdited.connect(self._edited)
        self.filter_text.textChanged.connect(self._apply_filter)
        self.filter_choice.currentIndexChanged.connect(self._apply_filter)
        for keys, slot in ((("Ctrl+Return", "Ctrl+Enter"), self.confirm), (("Ctrl+Down",), lambda: self._move(1)),
                           (("Ctrl+Up",), lambda: self._move(-1)), (("Ctrl+Shift+S",), self.copy_source),
                           (("Ctrl+Shift+U",), self.copy_suggestion)):
            for key in keys:
                QShortcut(QKeySequence(key), self, slot)
        self.editor.setFocus()

    def _fill(self) -> None:
        for row, unit in enumerate(self.units):
            match = self.memory.search(unit.source, self.pair, limit=1) if self.pair else []
            suggestion = f"{match[0].entry.target}  [{match[0].score:.0f}%]" if match else ""
            self.table.setItem(row, SOURCE, QTableWidgetItem(unit.source))
            item = QTableWidgetItem(suggestion)
            item.setData(Qt.ItemDataRole.UserRole, match[0].entry.target if match else "")
            self.table.setItem(row, SUGGESTION, item)
            self.table.setItem(row, TRANSLATION, QTableWidgetItem(unit.target))
            self.table.setItem(row, STATE, QTableWidgetItem(self._state(unit)))
        self.table.resizeColumnsToContents()

    @staticmethod
    def _state(unit) -> str:
        return "confirmed" if unit.confirmed else unit.state or "new"

    def _replay_journal(self) -> int:
        """Apply confirmations the file does not hold yet (a crash came before the save)."""
        by_id = {u.id: u for u in self.units}
        applied = 0
        for entry in self.journal.entries():
            unit = by_id.get(entry.unit_id)
            if unit is not None and not (unit.confirmed and unit.target == entry.target):
                unit.target, unit.confirmed = entry.target, True
                applied += 1
        return applied

    def _row(self) -> int:
        return self.table.currentRow()

    def _show_row(self, row: int) -> None:
        self.editor.setText(self.units[row].target if 0 <= row < len(self.units) else "")

    def _edited(self, text: str) -> None:
        row = self._row()
        if 0 <= row < len(self.units):
            self.table.item(row, TRANSLATION).setText(text)

    def _move(self, step: int) -> None:
        row = self._row() + step
        while 0 <= row < len(self.units) and self.table.isRowHidden(row):
            row += step
        if 0 <= row < len(self.units):
            self.table.setCurrentCell(row, TRANSLATION)

    def _next_unconfirmed(self, after: int) -> int:
        order = list(range(after + 1, len(self.units))) + list(range(0, after + 1))
        return next((r for r in order if not self.units[r].confirmed and not self.table.isRowHidden(r)),
                    min(max(after, 0), len(self.units) - 1))

    def copy_source(self) -> None:
        self._set_translation(self.table.item(self._row(), SOURCE).text())

    def copy_suggestion(self) -> None:
        self._set_translation(self.table.item(self._row(), SUGGESTION).data(Qt.ItemDataRole.UserRole) or "")

    def _set_translation(self, text: str) -> None:
        self.editor.setText(text)
        self._edited(text)

    def confirm(self) -> None:
        """Confirm the current segment: the journal (fsync'd) first, then the memory; then the next one."""
        row = self._row()
        text = self.editor.text().strip()
        if not 0 <= row < len(self.units):
            return
        if not text:
            self.statusBar().showMessage("Type a translation (or Ctrl+Shift+U for the suggestion) before confirming")
            return
        unit = self.units[row]
        self.journal.append(Confirmation(unit.id, text))
        unit.target, unit.confirmed = text, True
        if self.pair is not None:
            self.memory.add([Entry(unit.source, text, self.pair, origin="confirmed", context=unit.context,
                                   document=self.file.path.name)])
        self.table.item(row, TRANSLATION).setText(text)
        self.table.item(row, STATE).setText(self._state(unit))
        self.table.setCurrentCell(self._next_unconfirmed(row), TRANSLATION)

    def _apply_filter(self) -> None:
        needle = self.filter_text.text().casefold()
        choice = self.filter_choice.currentText()
        for row, unit in enumerate(self.units):
            shown = (not needle or needle in unit.source.casefold() or needle in unit.target.casefold()) and (
                choice == "all" or (choice == "unconfirmed" and not unit.confirmed)
                or (choice == "fuzzy" and unit.state in ("fuzzy", "initial", "needs-review-translation")))
            self.table.setRowHidden(row, not shown)

    def closeEvent(self, event) -> None:
        self.memory.close()
        super().closeEvent(event)
