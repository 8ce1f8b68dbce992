"""The glossary editor, by clicks and typing: a typed row exported as TSV and TBX and imported back (appended
or replacing), a bad file is the core's one sentence, Save as the model's glossary puts it under the config
dir where the Translate file dialog offers it; and Tools > Glossary… opens it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QFileDialog, QLineEdit  # noqa: E402

from nmt_desktop.core.documents.glossary import Glossary, Term  # noqa: E402
from nmt_desktop.gui.documents.glossary_editor import GlossaryEditor  # noqa: E402
from nmt_desktop.gui.documents.glossary_store import model_glossary_path, saved_model_glossary  # noqa: E402


def answer(monkeypatch, method: str, path: Path) -> None:
    monkeypatch.setattr(QFileDialog, method, staticmethod(lambda *a, **k: (str(path), "")))


def cell_editor(editor: GlossaryEditor, row: int = 0, column: int = 0) -> QLineEdit | None:
    """The editor open on the cell (a closed one may linger until it is deleted)."""
    table = editor.table
    centre = table.visualRect(table.model().index(row, column)).center()
    return next((e for e in table.findChildren(QLineEdit) if e.isVisible() and e.geometry().contains(centre)), None)


def type_cell(qtbot, editor: GlossaryEditor, row: int, column: int, text: str) -> None:
    """Click the cell, F2 to edit it, type `text` into its editor, then Enter."""
    table = editor.table
    table.scrollTo(table.model().index(row, column))
    rect = table.visualRect(table.model().index(row, column))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert table.currentRow() == row and table.currentColumn() == column
    qtbot.keyClick(table, Qt.Key.Key_F2)
    qtbot.waitUntil(lambda: cell_editor(editor, row, column) is not None)
    line = cell_editor(editor, row, column)
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: table.item(row, column).text() == text)  # the delegate commits on a queued call


def rows(editor: GlossaryEditor) -> list[tuple[str, ...]]:
    t = editor.table
    return [tuple(t.item(r, c).text() if t.item(r, c) else "" for c in range(3)) for r in range(t.rowCount())]


def test_typed_row_exported_and_imported_back(qtbot, config_dir, tmp_path, monkeypatch) -> None:
    editor = GlossaryEditor(tmp_path / "model-en-de", "en", "de")
    qtbot.addWidget(editor)
    editor.show()
    qtbot.mouseClick(editor.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: cell_editor(editor) is not None)
    qtbot.keyClicks(cell_editor(editor), "power supply")  # the new row's source cell is open to type into
    qtbot.keyClick(cell_editor(editor), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: editor.table.item(0, 0).text() == "power supply")
    type_cell(qtbot, editor, 0, 1, "Netzteil")
    type_cell(qtbot, editor, 0, 2, "hardware")
    assert rows(editor) == [("power supply", "Netzteil", "hardware")]

    tsv, tbx = tmp_path / "terms.tsv", tmp_path / "terms.tbx"
    for path in (tsv, tbx):
        answer(monkeypatch, "getSaveFileName", path)
        qtbot.mouseClick(editor.export_button, Qt.MouseButton.LeftButton)
        assert path.exists() and "Exported" in editor.status.text()
    assert Glossary.read(tsv).terms == [Term("power supply", "Netzteil", "hardware")]
    assert b"<martif" in tbx.read_bytes() and Glossary.read(tbx).terms == Glossary.read(tsv).terms

    answer(monkeypatch, "getOpenFileName", tbx)  # appended (the default)
    qtbot.mouseClick(editor.import_button, Qt.MouseButton.LeftButton)
    assert rows(editor) == [("power supply", "Netzteil", "hardware")] * 2
    qtbot.mouseClick(editor.replace_check, Qt.MouseButton.LeftButton)  # replacing
    assert editor.replace_check.isChecked()
    answer(monkeypatch, "getOpenFileName", tsv)
    qtbot.mouseClick(editor.import_button, Qt.MouseButton.LeftButton)
    assert rows(editor) == [("power supply", "Netzteil", "hardware")]
    assert "Read 1 term from terms.tsv" in editor.status.text()

    editor.table.selectRow(0)
    qtbot.mouseClick(editor.remove_button, Qt.MouseButton.LeftButton)
    assert rows(editor) == []


@pytest.mark.parametrize("name, content, words", [
    ("bad.tsv", "only one field\n", "bad.tsv, line 1: a glossary line needs a source term and a target term"),
    ("bad.tbx", "<martif><text><body><termEntry>", "the glossary bad.tbx is not valid TBX"),
])
def test_bad_import_is_one_sentence(qtbot, config_dir, tmp_path, monkeypatch, name, content, words) -> None:
    editor = GlossaryEditor(None)
    qtbot.addWidget(editor)
    editor.set_glossary(Glossary([Term("cat", "Katze")]))
    bad = tmp_path / name
    bad.write_text(content, encoding="utf-8")
    answer(monkeypatch, "getOpenFileName", bad)
    qtbot.mouseClick(editor.import_button, Qt.MouseButton.LeftButton)
    assert editor.status.text().startswith(f"⚠ {words}") and "\n" not in editor.status.text()
    assert rows(editor) == [("cat", "Katze", "")]  # the table is as it was
    assert not editor.save_model_button.isEnabled()  # no model: nothing to keep it with


def test_saved_as_models_glossary_is_offered_for_that_model(qtbot, open_main_window, tiny_model_dir, config_dir,
                                                           tmp_path, monkeypatch) -> None:
    window = open_main_window(tiny_model_dir)
    assert saved_model_glossary(tiny_model_dir) is None
    window.menus.actions["glossary"].trigger()  # Tools > Glossary…
    editor = window.findChild(GlossaryEditor)
    assert editor is not None and editor.isVisible() and editor.save_model_button.isEnabled()
    editor.set_glossary(Glossary([Term("cat", "Mieze"), Term("house", "Villa")]))
    qtbot.mouseClick(editor.save_model_button, Qt.MouseButton.LeftButton)
    path = model_glossary_path(tiny_model_dir)
    assert path.is_file() and config_dir in path.parents and "Saved as the model's glossary" in editor.status.text()
    editor.close()

    doc = tmp_path / "doc.txt"
    doc.write_text("red cat runs\n", encoding="utf-8")
    answer(monkeypatch, "getOpenFileName", doc)
    window.menus.actions["translate_file"].trigger()
    dialog = window.document_dialog
    combo = dialog.options.glossary_combo
    assert combo.currentText() == "Model's glossary (2 terms)"  # chosen by default for this model
    qtbot.mouseClick(dialog.options.edit_glossary_button, Qt.MouseButton.LeftButton)
    inner = dialog.glossary_editor
    assert inner is not None and len(rows(inner)) == 2
    inner.table.selectRow(1)
    qtbot.mouseClick(inner.remove_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(inner.save_model_button, Qt.MouseButton.LeftButton)
    assert combo.currentText() == "Model's glossary (1 term)"
