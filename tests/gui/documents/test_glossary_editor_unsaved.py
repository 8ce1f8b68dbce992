"""Nothing typed into the glossary editor is lost: Close, Esc or the window's close with unsaved rows asks
Save / Discard / Cancel (Cancel keeps the editor open, Save keeps them as the model's glossary); rows typed
before a crash come back from the draft on the next open, with a note; and the editor says where its rows
apply (which model, once saved) and what it opened (a glossary kept from the parent model)."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from nmt_desktop.core.documents.glossary import Glossary, Term  # noqa: E402
from nmt_desktop.gui.documents.glossary_editor import GlossaryEditor  # noqa: E402
from nmt_desktop.gui.documents.glossary_store import model_glossary_path  # noqa: E402

from test_glossary_editor import cell_editor, rows, type_cell  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

TYPED = ("power supply", "Netzteil", "")


def open_editor(qtbot, model) -> GlossaryEditor:
    editor = GlossaryEditor(model, "en", "de")
    qtbot.addWidget(editor)
    editor.show()
    qtbot.waitExposed(editor)
    return editor


def type_row(qtbot, editor: GlossaryEditor, source: str, target: str) -> None:
    """Add row, type the source term into the opened cell, then the target term into its cell."""
    row = editor.table.rowCount()
    qtbot.mouseClick(editor.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: cell_editor(editor, row, 0) is not None)
    qtbot.keyClicks(cell_editor(editor, row, 0), source)
    qtbot.keyClick(cell_editor(editor, row, 0), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: editor.table.item(row, 0).text() == source)
    type_cell(qtbot, editor, row, 1, target)


def prompt(qtbot) -> QMessageBox:
    """The Save / Discard / Cancel question the editor shows (window-modal, not blocking)."""
    qtbot.waitUntil(lambda: isinstance(QApplication.activeModalWidget(), QMessageBox), timeout=TIMEOUT_MS)
    box = QApplication.activeModalWidget()
    assert {box.standardButton(b) for b in box.buttons()} == {QMessageBox.StandardButton.Save,
                                                               QMessageBox.StandardButton.Discard,
                                                               QMessageBox.StandardButton.Cancel}
    return box


def answer(qtbot, box: QMessageBox, button: QMessageBox.StandardButton) -> None:
    qtbot.mouseClick(box.button(button), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not box.isVisible())


def test_close_asks_and_cancel_keeps_the_rows_then_save_keeps_them_with_the_model(qtbot, config_dir,
                                                                                tiny_model_dir) -> None:
    editor = open_editor(qtbot, tiny_model_dir)
    type_row(qtbot, editor, "power supply", "Netzteil")
    assert editor.isWindowModified()

    qtbot.mouseClick(editor.close_button, Qt.MouseButton.LeftButton)
    box = prompt(qtbot)
    assert "model" in box.informativeText() and tiny_model_dir.name in box.informativeText()
    answer(qtbot, box, QMessageBox.StandardButton.Cancel)
    assert editor.isVisible() and rows(editor) == [TYPED]

    editor.close()  # the window's own close (title bar, Alt+F4)
    answer(qtbot, prompt(qtbot), QMessageBox.StandardButton.Save)
    qtbot.waitUntil(lambda: not editor.isVisible())
    assert Glossary.read(model_glossary_path(tiny_model_dir)).terms == [Term("power supply", "Netzteil")]
    again = open_editor(qtbot, tiny_model_dir)
    assert rows(again) == [TYPED] and not again.isWindowModified()
    qtbot.mouseClick(again.close_button, Qt.MouseButton.LeftButton)  # nothing unsaved: it just closes
    qtbot.waitUntil(lambda: not again.isVisible())


def test_esc_asks_and_discard_drops_the_rows_and_the_draft(qtbot, config_dir, tiny_model_dir) -> None:
    editor = open_editor(qtbot, tiny_model_dir)
    type_row(qtbot, editor, "power supply", "Netzteil")
    qtbot.waitUntil(lambda: editor.draft.path.is_file())
    qtbot.keyClick(editor.table, Qt.Key.Key_Escape)
    answer(qtbot, prompt(qtbot), QMessageBox.StandardButton.Discard)
    qtbot.waitUntil(lambda: not editor.isVisible())
    assert not editor.draft.path.exists() and not model_glossary_path(tiny_model_dir).exists()
    assert rows(open_editor(qtbot, tiny_model_dir)) == []


def test_a_cell_still_being_typed_into_counts_on_close(qtbot, config_dir, tiny_model_dir) -> None:
    editor = open_editor(qtbot, tiny_model_dir)
    qtbot.mouseClick(editor.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: cell_editor(editor) is not None)
    qtbot.keyClicks(cell_editor(editor), "fan")  # no Enter: the cell's editor is still open
    editor.close()
    answer(qtbot, prompt(qtbot), QMessageBox.StandardButton.Cancel)
    assert rows(editor) == [("fan", "", "")]


def test_a_bad_row_on_save_keeps_the_editor_open_with_the_sentence(qtbot, config_dir, tiny_model_dir) -> None:
    editor = open_editor(qtbot, tiny_model_dir)
    type_row(qtbot, editor, "power supply", "Netzteil")
    type_row(qtbot, editor, "fan", "")
    qtbot.mouseClick(editor.close_button, Qt.MouseButton.LeftButton)
    answer(qtbot, prompt(qtbot), QMessageBox.StandardButton.Save)
    assert editor.isVisible() and rows(editor) == [TYPED, ("fan", "", "")]
    assert editor.status.text() == "⚠ row 2 needs both a source term and a target term"


def test_rows_typed_before_a_crash_come_back_with_a_note(qtbot, config_dir, tiny_model_dir) -> None:
    editor = open_editor(qtbot, tiny_model_dir)
    type_row(qtbot, editor, "power supply", "Netzteil")
    type_row(qtbot, editor, "fan", "")  # half typed: kept as it is
    qtbot.waitUntil(lambda: editor.draft.read() is not None and len(editor.draft.read().rows) == 2)
    editor.hide()  # the app dies: no Close, no question

    again = open_editor(qtbot, tiny_model_dir)
    assert rows(again) == [TYPED, ("fan", "", "")] and again.isWindowModified()
    assert again.status.text().startswith("Restored the unsaved changes (2 rows) from")
    qtbot.mouseClick(again.close_button, Qt.MouseButton.LeftButton)  # still unsaved: asked again
    answer(qtbot, prompt(qtbot), QMessageBox.StandardButton.Cancel)
    assert again.isVisible()


def test_the_editor_says_where_its_rows_apply(qtbot, config_dir, tiny_model_dir, tmp_path) -> None:
    editor = open_editor(qtbot, tiny_model_dir)
    text = editor.applies_label.text()
    assert editor.applies_label.isVisible()
    assert tiny_model_dir.name in text and "once you click Save as model's glossary" in text
    assert tiny_model_dir.name in editor.windowTitle()

    none = open_editor(qtbot, None)
    assert none.applies_label.text().startswith("No model is loaded: these rows apply to no translation")

    child = tmp_path / "fine-tuned"  # a model that carries the glossary kept from its parent
    shutil.copytree(tiny_model_dir, child)
    Glossary([Term("cat", "Mieze")]).write(child / "glossary.tsv", "en", "de")
    kept = open_editor(qtbot, child)
    assert rows(kept) == [("cat", "Mieze", "")] and not kept.isWindowModified()
    assert "the glossary this model carries" in kept.status.text()
