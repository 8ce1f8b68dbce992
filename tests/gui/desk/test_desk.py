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


def _in_file(path: Path) -> dict[str, str]:
    """The confirmed units of the file as it is on disk: id -> target."""
    from nmt_desktop.core.bilingual import read_bilingual

    return {u.id: u.target for u in read_bilingual(path).units if u.confirmed}


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
    assert again.replayed == 2
    qtbot.waitUntil(lambda: not again.isWindowModified(), timeout=600_000)  # the reopening saved them
    assert _in_file(path) == {"u1": "Guten Morgen.", "u2": "Danke.", "u3": "Bis morgen."}
    assert Journal(path, tmp_path / "journal").entries() == []


def test_ctrl_shift_u_and_ctrl_down_copy_the_suggestion_and_move(qtbot, tmp_path, desk):
    path = tmp_path / "file.po"
    path.write_text(PO, encoding="utf-8")
    first = desk(path)
    _type_and_confirm(qtbot, first, "Datei oeffnen")
    first.close()
    (tmp_path / "other.po").write_text(PO.replace("Close file", "Open files"), encoding="utf-8")
    window = desk(tmp_path / "other.po")
    qtbot.waitUntil(lambda: not window.suggestions_running, timeout=600_000)  # the lookups, on their thread
    qtbot.keyClick(window.editor, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    assert window.table.item(window.table.currentRow(), 0).text() == "Open files"
    assert window.table.item(1, 1).text().startswith("Datei oeffnen  [memory ")  # a fuzzy match with its score
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
while not (window.isActiveWindow() and window.editor.hasFocus()):  # the shortcuts work in the active window
    app.processEvents()
saves = []
window.saver.saved.connect(saves.append)
def confirm(texts):
    for text in texts:
        QTest.keyClicks(window.editor, text)
        QTest.keyClick(window.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
confirm([f"Satz {i}." for i in range(10)])
while not saves:  # the autosave of the first ten, a moment after the tenth
    app.processEvents()
confirm([f"Satz {i}." for i in range(10, 20)])
os.kill(os.getpid(), signal.SIGKILL)  # before the autosave of the next ten
"""


def test_kill_9_after_confirming_20_loses_nothing(qtbot, tmp_path, desk):
    import signal
    import subprocess
    import sys

    path = tmp_path / "file.xlf"
    path.write_text(_xliff([f"Sentence {i}." for i in range(25)]), encoding="utf-8")
    child = subprocess.run([sys.executable, "-c", KILLED_CHILD, str(tmp_path)], capture_output=True, text=True,
                           timeout=600)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert _in_file(path) == {f"u{i}": f"Satz {i}." for i in range(10)}  # autosaved before the kill
    assert len(Journal(path, tmp_path / "journal").entries()) == 10  # the other ten, journalled only
    window = desk(path)
    assert window.replayed == 10
    assert [window.table.item(r, 2).text() for r in range(21)] == [f"Satz {i}." for i in range(20)] + [""]
    qtbot.waitUntil(lambda: not window.isWindowModified(), timeout=600_000)  # the reopening saves them
    assert _in_file(path) == {f"u{i}": f"Satz {i}." for i in range(20)}
    assert _memory(tmp_path, "en", "de") == {f"Sentence {i}.": (f"Satz {i}.", "confirmed") for i in range(20)}
    assert Journal(path, tmp_path / "journal").entries() == []


def test_ctrl_s_and_the_autosave_write_the_file_and_the_journal_forgets_only_that(qtbot, tmp_path, desk):
    path = tmp_path / "file.xlf"
    path.write_text(XLIFF2, encoding="utf-8")
    window = desk(path)
    _type_and_confirm(qtbot, window, "Guten Morgen.")
    assert window.isWindowModified() and window.windowTitle() == "Post-edit file.xlf[*]"
    with qtbot.waitSignal(window.saver.saved, timeout=600_000) as saved:
        qtbot.keyClick(window.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert saved.args[0].written == 1 and not window.isWindowModified()
    assert _in_file(path) == {"u1": "Guten Morgen.", "u2": "Danke."}
    assert Journal(path, tmp_path / "journal").entries() == []
    assert window.statusBar().currentMessage().startswith("Saved 1 confirmed segment(s) into file.xlf")
    with qtbot.waitSignal(window.saver.saved, timeout=600_000):  # no key: the autosave after a confirmation
        _type_and_confirm(qtbot, window, "Bis morgen.")
    assert _in_file(path) == {"u1": "Guten Morgen.", "u2": "Danke.", "u3": "Bis morgen."}


def test_a_crash_between_the_save_and_the_journal_applies_nothing_twice(qtbot, tmp_path, desk):
    from nmt_desktop.core.bilingual.confirmed import save_confirmed
    from nmt_desktop.gui.desk.journal import Confirmation

    path = tmp_path / "file.xlf"
    path.write_text(XLIFF2, encoding="utf-8")
    journal = Journal(path, tmp_path / "journal")
    journal.append(Confirmation("u1", "Guten Morgen."))
    journal.append(Confirmation("u3", "Bis morgen."))
    save_confirmed(path, {"u1": "Guten Morgen."})  # the save wrote u1, then the crash: the journal holds both
    window = desk(path)
    assert window.replayed == 1  # u3 only; u1 is in the file already
    qtbot.waitUntil(lambda: not window.isWindowModified(), timeout=600_000)
    assert _in_file(path) == {"u1": "Guten Morgen.", "u2": "Danke.", "u3": "Bis morgen."}
    assert journal.entries() == []


def test_a_failed_save_is_one_sentence_keeps_the_journal_and_close_saves(qtbot, tmp_path, desk):
    import shutil

    folder = tmp_path / "docs"
    folder.mkdir()
    path = folder / "file.xlf"
    path.write_text(XLIFF2, encoding="utf-8")
    window = desk(path)
    _type_and_confirm(qtbot, window, "Guten Morgen.")
    moved = shutil.move(folder, tmp_path / "away")  # the file is gone from where the desk saves it
    with qtbot.waitSignal(window.saver.failed, timeout=600_000):
        qtbot.keyClick(window.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    message = window.statusBar().currentMessage()
    assert message.startswith("Could not save file.xlf: ") and "kept in the journal" in message
    assert "\n" not in message and "Traceback" not in message
    assert window.isWindowModified() and [c.target for c in Journal(path, tmp_path / "journal").entries()] == \
        ["Guten Morgen."]
    window.actions_by_name["close"].trigger()  # the save fails again: the window stays, saying why
    assert window.isVisible() and window.statusBar().currentMessage().startswith("Could not save file.xlf")
    shutil.move(moved, folder)  # back: closing now saves
    window.actions_by_name["close"].trigger()
    assert not window.isVisible()
    assert _in_file(path) == {"u1": "Guten Morgen.", "u2": "Danke."}
    assert Journal(path, tmp_path / "journal").entries() == []


def _xliff(sources: list[str]) -> str:
    units = "\n".join(f'  <unit id="u{i}"><segment><source>{s}</source></segment></unit>' for i, s in enumerate(sources))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" '
            f'version="2.0" srcLang="en" trgLang="de">\n <file id="f1">\n{units}\n </file>\n</xliff>\n')


def test_the_table_shows_5000_segments_before_the_memory_lookups_end(qtbot, tmp_path):
    from nmt_desktop.core.memory.entries import Entry

    sources = [f"Segment number {i} of the long file." for i in range(5000)]
    path = tmp_path / "long.xlf"
    path.write_text(_xliff(sources), encoding="utf-8")
    with TranslationMemory(tmp_path / "memory.sqlite") as memory:
        memory.add([Entry(sources[4999], "Das letzte Segment.", Pair.of("en", "de"))])
    window = DeskWindow(path, tmp_path / "memory.sqlite", tmp_path / "journal")
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.suggestionsDone, timeout=600_000) as done:
        window.show()
        # shown with every row, and no lookup's result applied yet: they come from the worker thread
        assert window.isVisible() and window.table.rowCount() == 5000 and window.suggestions_running
        assert window.table.item(4999, 1).text() == "" and window.stop_button.isVisibleTo(window)
    assert done.args == [False]
    assert window.table.item(4999, 1).text() == "Das letzte Segment.  [memory 100%]"
    assert not window.stop_button.isVisibleTo(window)


def test_machine_suggestions_where_the_memory_has_none_with_trust_and_the_low_trust_filter(qtbot, tmp_path,
                                                                                        tiny_translator):
    from nmt_desktop.core.memory.entries import Entry

    sources = ["red cat runs", "big dog sleeps", "small bird eats", "green house %s"]
    path = tmp_path / "file.xlf"
    path.write_text(_xliff(sources), encoding="utf-8")
    with TranslationMemory(tmp_path / "memory.sqlite") as memory:
        memory.add([Entry("red cat runs", "rot katze rennt", Pair.of("en", "de"))])
    window = DeskWindow(path, tmp_path / "memory.sqlite", tmp_path / "journal", translator=tiny_translator)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.suggestionsDone, timeout=600_000) as done:
        window.show()
    assert done.args == [False]
    assert window.table.item(0, 1).text() == "rot katze rennt  [memory 100%]"
    assert [window.table.item(r, 1).text().endswith("[machine]") for r in range(4)] == [False, True, True, True]
    for row in (1, 2, 3):
        suggestion = window.suggestions[row]
        assert suggestion.trust in ("high", "medium", "low") and suggestion.text
        assert window.table.item(row, 3).text().startswith(f"trust {suggestion.trust} (chrF {suggestion.qe:.0f})")
    assert "machine translations 3 of 3" not in window.statusBar().currentMessage()  # the final count replaced it
    assert "1 from the memory, 3 from the model" in window.statusBar().currentMessage()
    window.editor.setFocus()
    for _ in range(3):  # to the placeholder's segment
        qtbot.keyClick(window.editor, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    _type_and_confirm(qtbot, window, "gruen haus")
    assert "missing %s" in window.table.item(3, 3).text()
    window.filter_choice.setFocus()
    qtbot.keyClicks(window.filter_choice, "low")
    assert window.filter_choice.currentText() == "low trust"
    shown = [r for r in range(4) if not window.table.isRowHidden(r)]
    assert shown == [r for r in range(4) if r == 3 or window.suggestions[r].trust == "low"]


def _gated_desk(qtbot, tmp_path, translator, monkeypatch, batches: int, held: int):
    """A desk on `batches` batches of machine segments whose model holds its `held`-th batch (1-based) until the
    test sets the second event: (window, the batch is held, go on)."""
    import threading

    from nmt_desktop.gui.desk.suggestions import MACHINE_BATCH

    path = tmp_path / "file.xlf"
    path.write_text(_xliff(["red cat runs"] * (batches * MACHINE_BATCH)), encoding="utf-8")
    holding, go_on = threading.Event(), threading.Event()
    calls = []
    translate_batch = translator.translate_batch

    def gated(*args, **kwargs):
        calls.append(1)
        if len(calls) == held:
            holding.set()
            go_on.wait(600)
        return translate_batch(*args, **kwargs)

    monkeypatch.setattr(translator, "translate_batch", gated)
    window = DeskWindow(path, tmp_path / "memory.sqlite", tmp_path / "journal", translator=translator)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    window.editor.setFocus()
    qtbot.waitUntil(lambda: holding.is_set() and window.editor.hasFocus(), timeout=600_000)
    return window, go_on


def test_esc_stops_the_machine_suggestions_between_batches(qtbot, tmp_path, tiny_translator, monkeypatch):
    from nmt_desktop.gui.desk.suggestions import MACHINE_BATCH

    window, go_on = _gated_desk(qtbot, tmp_path, tiny_translator, monkeypatch, batches=3, held=2)
    with qtbot.waitSignal(window.suggestionsDone, timeout=600_000) as done:
        qtbot.keyClick(window.editor, Qt.Key.Key_Escape)
        go_on.set()
    assert done.args == [True]
    assert sorted(window.suggestions) == list(range(MACHINE_BATCH))  # the first batch only
    assert "Suggestions stopped: 0 from the memory, 8 from the model" in window.statusBar().currentMessage()


def test_ctrl_i_shows_the_segment_in_the_translate_tabs_views(qtbot, tmp_path, open_main_window, tiny_model_dir,
                                                              monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setenv("NMT_DESKTOP_DATA_DIR", str(tmp_path / "user-data"))
    window = open_main_window(tiny_model_dir)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    path = tmp_path / "file.xlf"
    path.write_text(_xliff(["red cat runs", "big dog"]), encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    [desk] = [w for w in window.findChildren(DeskWindow) if w.isVisible()]
    assert desk.translator is window.translate_panel.translator  # the main window's model suggests
    desk.activateWindow()
    desk.editor.setFocus()
    qtbot.waitUntil(desk.editor.hasFocus)
    qtbot.keyClicks(desk.editor, "rot katze rennt")
    inspect_box = window.translate_panel.inspect_box
    with qtbot.waitSignal(inspect_box.inspected, timeout=600_000) as inspected:
        qtbot.keyClick(desk.editor, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier)
    assert window.translate_panel.source.toPlainText() == "red cat runs"
    assert inspected.args[0].given.text == "rot katze rennt"
    assert window.tabs.currentWidget() is window.tab("translate")
    assert window.translate_panel.view._translation is inspected.args[0].given  # the attention grid shows it
    assert window.analysis_panel.translation is inspected.args[0].given  # and the Analysis tab's views
    qtbot.waitUntil(lambda: not desk.suggestions_running, timeout=600_000)
    desk.close()


def test_a_segment_confirmed_while_the_model_works_gets_no_machine_suggestion(qtbot, tmp_path, tiny_translator,
                                                                              monkeypatch):
    from nmt_desktop.gui.desk.suggestions import MACHINE_BATCH

    window, go_on = _gated_desk(qtbot, tmp_path, tiny_translator, monkeypatch, batches=2, held=1)
    for _ in range(MACHINE_BATCH):
        qtbot.keyClick(window.editor, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    _type_and_confirm(qtbot, window, "rot katze rennt")  # the second batch's first segment
    with qtbot.waitSignal(window.suggestionsDone, timeout=600_000) as done:
        go_on.set()
    assert done.args == [False]
    assert sorted(window.suggestions) == [r for r in range(2 * MACHINE_BATCH) if r != MACHINE_BATCH]
