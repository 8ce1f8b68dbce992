"""The desk's window: a table of a bilingual file's segments (source | suggestion | your translation | trust and
flags | state) and one line to type the current segment's translation in, driven by the keyboard.

Ctrl+Enter confirms the current segment (journal first, then the translation memory with origin "confirmed",
then the file a moment later: autosave.py) and moves to the next unconfirmed one; Ctrl+Down/Ctrl+Up move;
Ctrl+Shift+S copies the source and Ctrl+Shift+U the suggestion into your translation; Ctrl+S saves now;
Ctrl+I shows the segment in the main window's views (main_window_link.py); Esc stops the suggestions. The
translation line keeps the focus, so the table is read-only and no cell editor swallows these keys. The table
shows at once; the suggestions (the memory's best match, else the model's translation with its trust:
suggestions.py) fill in from a worker thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLineEdit, QMainWindow, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from nmt_desktop.core.bilingual import BilingualFile, BilingualUnit, read_bilingual
from nmt_desktop.core.memory.entries import Entry, Pair
from nmt_desktop.core.memory.store import TranslationMemory
from nmt_desktop.gui.desk.autosave import DeskSaver
from nmt_desktop.gui.desk.journal import Confirmation, Journal
from nmt_desktop.gui.desk.segment_flags import segment_flags
from nmt_desktop.gui.desk.suggestions import Suggestion, SuggestionRequest, SuggestionWorker, model_fits
from nmt_desktop.gui.workers import WorkerThread

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator
    from nmt_desktop.gui.window_api import WindowApi

SOURCE, SUGGESTION, TRANSLATION, FLAGS, STATE = range(5)
FILTERS = ("all", "unconfirmed", "fuzzy", "low trust")
FUZZY_STATES = ("fuzzy", "initial", "needs-review-translation")


class DeskWindow(QMainWindow):
    """The desk on one bilingual file (see the module docstring). DocumentError from read_bilingual is the
    caller's to show: the window is only made for a file that reads. `translator`: the model whose
    translations are suggested where the memory has no good match (None, or a model of other languages than
    `model_languages` says the file has: the memory's only);
    `main_window`: where Ctrl+I shows a segment (None: the action says it has none)."""

    suggestionsDone = Signal(bool)  # noqa: N815 - Qt signal name; True when stopped before the end
    _suggest = Signal(object)

    def __init__(self, path: Path, memory_path: Path | None = None, journal_folder: Path | None = None,
                 parent: QWidget | None = None, translator: Translator | None = None,
                 model_languages: tuple[str, str] = ("", ""), main_window: WindowApi | None = None):
        super().__init__(parent)
        self.file: BilingualFile = read_bilingual(path)
        self.units = [u for u in self.file.units if u.translatable and u.source.strip()]
        self.journal = Journal(self.file.path, journal_folder)
        self.memory = TranslationMemory(memory_path)
        self.pair = (Pair.of(self.file.source_language, self.file.target_language)
                     if self.file.source_language and self.file.target_language else None)
        languages = (self.file.source_language, self.file.target_language)
        self.model_refused = translator is not None and not model_fits(model_languages, languages)
        self.translator = None if self.model_refused else translator
        self.main_window = main_window
        self.suggestions: dict[int, Suggestion] = {}
        self.saver = DeskSaver(self.file.path, self.journal, translator, self)
        self._close_refused = False
        self.setWindowTitle(f"Post-edit {self.file.path.name}[*]")
        self._build()
        self.replayed = replayed = self._replay_journal()
        self._fill()
        self.table.setCurrentCell(self._next_unconfirmed(-1), TRANSLATION)
        if replayed:
            self.statusBar().showMessage(f"{replayed} confirmed segment(s) from the journal of an earlier session "
                                         f"applied; saving them into {self.file.path.name}")
            self.saver.save()
        elif self.model_refused:
            self.statusBar().showMessage(f"The model translates {' → '.join(model_languages)}, the file "
                                         f"{' → '.join(languages)}: suggestions from the memory only")
        elif self.pair is None:
            self.statusBar().showMessage(f"{self.file.path.name} names no source or target language: confirmations "
                                         "go to the journal, not the translation memory")
        self._start_suggestions()
        self._join_threads_when_destroyed()

    # -- building -------------------------------------------------------------------------------------

    def _build(self) -> None:
        self.filter_text = QLineEdit(placeholderText="Filter source or translation")
        self.filter_choice = QComboBox()
        self.filter_choice.addItems(FILTERS)
        top = QHBoxLayout()
        top.addWidget(self.filter_text, 1)
        top.addWidget(self.filter_choice)
        self.table = QTableWidget(len(self.units), 5)
        self.table.setHorizontalHeaderLabels(["Source", "Memory or machine", "Your translation", "Trust and flags",
                                              "State"])
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)  # the current segment only
        header = self.table.horizontalHeader()
        for column in (SOURCE, SUGGESTION, TRANSLATION):  # the texts share the width; no pass over every row
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(FLAGS, 260)
        header.resizeSection(STATE, 90)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.editor = QLineEdit(placeholderText="Your translation (Ctrl+Enter confirms)")
        layout = QVBoxLayout()
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.editor)
        body = QWidget()
        body.setLayout(layout)
        self.setCentralWidget(body)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop looking up and translating suggestions (Esc)")
        self.stop_button.clicked.connect(self.stop_suggestions)
        self.stop_button.hide()
        self.statusBar().addPermanentWidget(self.stop_button)
        self._build_menu()
        self.table.currentCellChanged.connect(lambda row, *_: self._show_row(row))
        self.editor.textEdited.connect(self._edited)
        self.filter_text.textChanged.connect(self._apply_filter)
        self.filter_choice.currentIndexChanged.connect(self._apply_filter)
        for keys, slot in ((("Ctrl+Return", "Ctrl+Enter"), self.confirm), (("Ctrl+Down",), lambda: self._move(1)),
                           (("Ctrl+Up",), lambda: self._move(-1)), (("Ctrl+Shift+S",), self.copy_source),
                           (("Ctrl+Shift+U",), self.copy_suggestion)):
            for key in keys:
                QShortcut(QKeySequence(key), self, slot)
        self.saver.changed.connect(self.setWindowModified)
        self.saver.saved.connect(self._saved)
        self.saver.failed.connect(lambda sentence: self.statusBar().showMessage(sentence))
        self.editor.setFocus()

    def _build_menu(self) -> None:
        menu = self.menuBar().addMenu("&File")
        self.actions_by_name: dict[str, QAction] = {}
        for name, text, keys, slot in (("save", "&Save", "Ctrl+S", self.save),
                                       ("show", "Show in the &main window", "Ctrl+I", self.show_in_main_window),
                                       ("stop", "S&top suggestions", "Esc", self.stop_suggestions),
                                       ("close", "&Close", "Ctrl+W", self.close)):
            action = menu.addAction(text)
            action.setShortcut(QKeySequence(keys))
            action.triggered.connect(slot)
            self.actions_by_name[name] = action

    def _fill(self) -> None:
        self.table.setUpdatesEnabled(False)
        for row, unit in enumerate(self.units):
            self.table.setItem(row, SOURCE, QTableWidgetItem(unit.source))
            item = QTableWidgetItem("")
            item.setData(Qt.ItemDataRole.UserRole, "")
            self.table.setItem(row, SUGGESTION, item)
            self.table.setItem(row, TRANSLATION, QTableWidgetItem(unit.target))
            self.table.setItem(row, FLAGS, QTableWidgetItem(""))
            self.table.setItem(row, STATE, QTableWidgetItem(self._state(unit)))
            self._show_flags(row)
        self.table.setUpdatesEnabled(True)

    @staticmethod
    def _state(unit: BilingualUnit) -> str:
        return "confirmed" if unit.confirmed else unit.state or "new"

    def _replay_journal(self) -> int:
        """Apply confirmations the file does not hold yet (a crash came before the save): to the units, the
        memory (a confirmation journalled just before a crash may not have reached it; adding again merges)
        and the unsaved ones. Those the file already holds (the crash came between a save and the journal's
        forgetting) are forgotten, not applied again."""
        by_id = {u.id: u for u in self.units}
        held: dict[str, str] = {}
        replayed: list[tuple[BilingualUnit, str]] = []
        for entry in self.journal.entries():
            unit = by_id.get(entry.unit_id)
            if unit is None:
                continue
            if unit.confirmed and unit.target == entry.target:
                held[entry.unit_id] = entry.target
            else:
                unit.target, unit.confirmed = entry.target, True
                replayed.append((unit, entry.target))
                self.saver.unsaved[unit.id] = entry.target
        if held:
            self.journal.forget(held)
        self._remember([unit for unit, _ in replayed])
        self.setWindowModified(bool(replayed))
        return len(replayed)

    def _remember(self, units: Sequence[BilingualUnit]) -> None:
        if self.pair is not None and units:
            self.memory.add([Entry(u.source, u.target, self.pair, origin="confirmed", context=u.context,
                                   document=self.file.path.name) for u in units])

    # -- suggestions ----------------------------------------------------------------------------------

    def _start_suggestions(self) -> None:
        self.suggester = SuggestionWorker()
        self._suggester_thread = WorkerThread(self.suggester, "desk-suggestions")
        self._suggest.connect(self.suggester.run)
        self.suggester.found.connect(self._found)
        self.suggester.progress.connect(self._progress)
        self.suggester.finished.connect(self._suggestions_finished)
        self.suggester.failed.connect(self._suggestions_failed)
        segments = [(row, unit.source) for row, unit in enumerate(self.units) if not unit.confirmed]
        self._request: SuggestionRequest | None = None
        if not segments or (self.pair is None and self.translator is None):
            self.suggestions_running = False
            return
        self.suggestions_running = True
        self.stop_button.show()
        self._request = SuggestionRequest(segments, self.memory.path, self.pair, self.translator)
        self._suggest.emit(self._request)

    def _join_threads_when_destroyed(self) -> None:
        """A window deleted without closing (dropped, as after a crash, or its close refused once) still
        joins its threads: a QThread destroyed while running aborts the process."""
        suggester, suggester_thread, saver = self.suggester, self._suggester_thread, self.saver

        def join(*_: object) -> None:
            suggester.stop()
            for worker_thread in (suggester_thread, saver.worker_thread):
                if shiboken6.isValid(worker_thread.thread):  # not at the interpreter's exit, when Qt went first
                    worker_thread.stop()
        self.destroyed.connect(join)

    def stop_suggestions(self) -> None:
        if self.suggestions_running:
            self.suggester.stop()
            self.statusBar().showMessage("Stopping the suggestions…")

    def _found(self, batch: list[Suggestion]) -> None:
        for suggestion in batch:
            self.suggestions[suggestion.row] = suggestion
            item = self.table.item(suggestion.row, SUGGESTION)
            item.setText(f"{suggestion.text}  [{suggestion.label}]")
            item.setData(Qt.ItemDataRole.UserRole, suggestion.text)
            self._show_flags(suggestion.row)
        if self.filter_choice.currentText() == "low trust":
            self._apply_filter()

    def _progress(self, stage: str, done: int, total: int) -> None:
        what = "memory lookups" if stage == "memory" else "machine translations"
        self.statusBar().showMessage(f"Suggestions: {what} {done} of {total} (Esc stops)")

    def _suggestions_finished(self, stopped: bool) -> None:
        self.suggestions_running = False
        self.stop_button.hide()
        machine = sum(s.origin == "machine" for s in self.suggestions.values())
        self.statusBar().showMessage(f"Suggestions {'stopped' if stopped else 'done'}: "
                                     f"{len(self.suggestions) - machine} from the memory, {machine} from the model")
        self.suggestionsDone.emit(stopped)

    def _suggestions_failed(self, sentence: str) -> None:
        self.suggestions_running = False
        self.stop_button.hide()
        self.statusBar().showMessage(f"Suggestions failed: {sentence}")
        self.suggestionsDone.emit(True)

    def _show_flags(self, row: int) -> None:
        flags = segment_flags(self.units[row], self.suggestions.get(row))
        item = self.table.item(row, FLAGS)
        item.setText(flags.text)
        item.setToolTip(flags.tooltip)
        item.setData(Qt.ItemDataRole.UserRole, flags.low_trust)

    # -- moving and editing ---------------------------------------------------------------------------

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
        """Confirm the current segment: the journal (fsync'd) first, then the memory, then the file a moment
        later (autosave); then the next one."""
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
        self._remember([unit])
        self.saver.confirmed(unit.id, text)
        if self._request is not None:
            self._request.confirmed.add(row)  # the model need not suggest for it any more
        self.table.item(row, TRANSLATION).setText(text)
        self.table.item(row, STATE).setText(self._state(unit))
        self._show_flags(row)
        self.table.setCurrentCell(self._next_unconfirmed(row), TRANSLATION)

    # -- saving, showing, filtering -------------------------------------------------------------------

    def save(self) -> None:
        """Ctrl+S: save the unsaved confirmations now (on the worker thread)."""
        if self.saver.save():
            self.statusBar().showMessage(f"Saving {self.file.path.name}…")
        else:
            self.statusBar().showMessage(f"{self.file.path.name} holds every confirmation already")

    def _saved(self, result) -> None:
        tags = f"; tags placed by {result.tags_placed_by}" if result.tags_placed_by not in ("", "none") else ""
        missing = (f"; {len(result.missing_placeholders)} segment(s) lack a placeholder of their source"
                   if result.missing_placeholders else "")
        self.statusBar().showMessage(f"Saved {result.written} confirmed segment(s) into {self.file.path.name}"
                                     f"{tags}{missing}")

    def show_in_main_window(self) -> None:
        """Ctrl+I: the current segment's source and translation in the main window's linked views."""
        from nmt_desktop.gui.desk.main_window_link import show_in_main_window

        row = self._row()
        if self.main_window is None or not 0 <= row < len(self.units):
            self.statusBar().showMessage("This desk was opened without the main window: nothing to show it in")
            return
        problem = show_in_main_window(self.main_window, self.units[row].source, self.editor.text())
        self.statusBar().showMessage(problem or "Shown in the main window's Translate tab (Inspect this translation)")

    def _apply_filter(self) -> None:
        needle = self.filter_text.text().casefold()
        choice = self.filter_choice.currentText()
        for row, unit in enumerate(self.units):
            shown = (not needle or needle in unit.source.casefold() or needle in unit.target.casefold()) and (
                choice == "all" or (choice == "unconfirmed" and not unit.confirmed)
                or (choice == "fuzzy" and (unit.state in FUZZY_STATES or self._fuzzy_match(row)))
                or (choice == "low trust" and bool(self.table.item(row, FLAGS).data(Qt.ItemDataRole.UserRole))))
            self.table.setRowHidden(row, not shown)

    def _fuzzy_match(self, row: int) -> bool:
        suggestion = self.suggestions.get(row)
        return suggestion is not None and suggestion.origin == "memory" and (suggestion.score or 0) < 100

    def closeEvent(self, event) -> None:
        """Closing saves what is unsaved (never a question about discarding confirmed work); a failed save
        keeps the window open once, the reason in the status bar; closing again leaves it in the journal."""
        if self.suggestions_running:
            self.suggester.stop()
        if not self.saver.save_here() and not self._close_refused:
            self._close_refused = True
            event.ignore()
            return
        self._suggester_thread.stop()
        self.saver.shutdown()
        self.memory.close()
        super().closeEvent(event)
