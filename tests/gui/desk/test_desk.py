"""The post-editing desk driven by keys: confirmations reach the memory and the journal, and a window dropped
without saving gives them back on reopening."""

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from nmt_desktop.core.memory.entries import Pair
from nmt_desktop.core.memory.store import TranslationMemory
from nmt_desktop.gui.desk.desk_window import STATE, DeskWindow
from nmt_desktop.gui.desk.journal import Journal

XLIFF2 = """<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="de">
 <file id="f1">
  <unit id="u1"><segment><source>Good morning.</source></segment></unit>
  <unit id="u2"><segment state="final"><source>Thank you.</source><target>Danke.</target></segment></unit>
  <unit id="u3"><segment><source>See you tomorrow.</source></segment></unit>
 </file>
</xliff>
"""

PO = """msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: de\\n"
"X-Source-Language: en\\n"

msgid "Open file"
msgstr ""

msgid "Close file"
msgstr ""
"""


@pytest.fixture
def desk(qtbot, tmp_path):
    def open_desk(path: Path) -> DeskWindow:
        window = DeskWindow(path, tmp_path / "memory.sqlite", tmp_path / "journal")
        qtbot.addWidget(window)
        window.show()
        window.activateWindow()
        window.editor.setFocus()
        qtbot.waitUntil(window.editor.hasFocus)
        return window
    return open_desk


def _type_and_confirm(qtbot, window: DeskWindow, text: str) -> None:
    qtbot.keyClicks(window.editor, text)
    qtbot.keyClick(window.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)


def _memory(tmp_path, source: str, target: str) -> dict[str, str]:
    with TranslationMemory(tmp_path / "memory.sqlite") as memory:
        return {e.source: (e.target, e.origin) for e in memory.entries(Pair.of(source, target))}


@pytest.mark.parametrize("name, text, first, second", [
    ("file.xlf", XLIFF2, "Good morning.", "See you tomorrow."),
    ("file.po", PO, "Open file", "Close file"),
])
def test_ctrl_enter_confirms_into_memory_and_journal_and_moves_on(qtbot, tmp_path, desk, name, text, first, second):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    window = desk(path)
    assert window.table.item(window.table.currentRow(), 0).text() == first
    _type_and_confirm(qtbot, window, "Erste")
    # it skipped the confirmed "Thank you." (XLIFF) and stands on the next unconfirmed segment
    assert window.table.item(window.table.currentRow(), 0).text() == second
    assert window.table.item(0, STATE).text() == "confirmed"
    assert [i.row() for i in window.table.selectionModel().selectedRows()] == [window.table.currentRow()]
    assert _memory(tmp_path, "en", "de") == {first: ("Erste", "confirmed")}
    assert [c.target for c in Journal(path, tmp_path / "journal").entries()] == ["Erste"]


def test_a_dropped_window_gives_its_confirmations_back_from_the_journal(qtbot, tmp_path, desk):
    path = tmp_path / "file.xlf"
    path.write_text(XLIFF2, encoding="utf-8")
    window = desk(path)
    _type_and_confirm(qtbot, window, "Guten Morgen.")
    _type_and_confirm(qtbot, window, "Bis morgen.")
    window.memory.close()
    window.deleteLater()  # dropped: no save, as after a crash
    qtbot.wait(10)
    again = desk(path)
    assert [again.table.item(r, 2).text() for r in range(3)] == ["Guten Morgen.", "Danke.", "Bis morgen."]
    assert [again.table.item(r, STATE).text() for r in range(3)] == ["confirmed"] * 3
    assert "2 confirmed segment(s) from the journal" in again.statusBar().currentMessage()


def test_ctrl_shift_u_and_ctrl_down_copy_the_suggestion_and_move(qtbot, tmp_path, desk):
    path = tmp_path / "file.po"
    path.write_text(PO, encoding="utf-8")
    first = desk(path)
    _type_and_confirm(qtbot, first, "Datei oeffnen")
    first.close()
    (tmp_path / "other.po").write_text(PO.replace("Close file", "Open files"), encoding="utf-8")
    window = desk(tmp_path / "other.po")
    qtbot.keyClick(window.editor, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    assert window.table.item(window.table.currentRow(), 0).text() == "Open files"
    assert "[" in window.table.item(1, 1).text()  # a fuzzy match with its score
    qtbot.keyClick(window.editor, Qt.Key.Key_U, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.editor.text() == "Datei oeffnen"
    qtbot.keyClick(window.editor, Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier)
    assert window.table.currentRow() == 0


def test_ctrl_shift_e_opens_the_desk_and_a_broken_file_is_one_sentence(qtbot, tmp_path, open_main_window,
                                                                         monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path / "user-data"))
    window = open_main_window()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    broken, good = tmp_path / "broken.xlf", tmp_path / "good.po"
    broken.write_text("<xliff version='2.0'><file>", encoding="utf-8")
    good.write_text(PO, encoding="utf-8")
    chosen = iter([str(broken), str(good)])
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (next(chosen), ""))
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert len(window.shown_errors) == 1 and "broken.xlf" in window.shown_errors[0]
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    desks = [w for w in window.findChildren(DeskWindow) if w.isVisible()]
    assert [d.file.path.name for d in desks] == ["good.po"]
    assert desks[0].memory.path.is_relative_to(tmp_path / "user-data")
    desks[0].close()


def test_the_filter_text_and_choice_hide_rows(qtbot, tmp_path, desk):
    path = tmp_path / "file.xlf"
    path.write_text(XLIFF2, encoding="utf-8")
    window = desk(path)
    qtbot.keyClicks(window.filter_text, "morn")
    assert [window.table.isRowHidden(r) for r in range(3)] == [False, True, True]
    window.filter_text.clear()
    window.filter_choice.setFocus()
    qtbot.keyClick(window.filter_choice, Qt.Key.Key_Down)  # "unconfirmed"
    assert window.filter_choice.currentText() == "unconfirmed"
    assert [window.table.isRowHidden(r) for r in range(3)] == [False, True, False]


KILLED_CHILD = """
import os, signal, sys
from pathlib import Path
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from nmt_desktop.gui.desk.desk_window import DeskWindow
app = QApplication([])
folder = Path(sys.argv[1])
window = DeskWindow(folder / "file.xlf", folder / "memory.sqlite", folder / "journal")
window.show()
window.activateWindow()
window.editor.setFocus()
for _ in range(50):
    app.processEvents()
for text in ("Guten Morgen.", "Bis morgen."):
    QTest.keyClicks(window.editor, text)
    QTest.keyClick(window.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_kill_9_after_confirming_loses_nothing(qtbot, tmp_path, desk):
    import signal
    import subprocess
    import sys

    path = tmp_path / "file.xlf"
    path.write_text(XLIFF2, encoding="utf-8")
    child = subprocess.run([sys.executable, "-c", KILLED_CHILD, str(tmp_path)], capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    window = desk(path)
    assert [window.table.item(r, 2).text() for r in range(3)] == ["Guten Morgen.", "Danke.", "Bis morgen."]
    assert set(_memory(tmp_path, "en", "de")) == {"Good morning.", "See you tomorrow."}
