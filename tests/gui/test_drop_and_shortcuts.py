"""Drag and drop onto the real main window (QDropEvent with file URLs), and Help > Keyboard shortcuts
listing every shortcut the window's actions have."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl  # noqa: E402
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from nmt_desktop.gui.shortcuts import action_label, shortcut_text  # noqa: E402
from limits import SLOW_TIMEOUT_MS as TIMEOUT_MS  # noqa: E402



def file_mime(*paths) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def drop(widget, mime: QMimeData) -> bool:
    """Drag `mime` over `widget` and drop it, as Qt delivers a drop; returns whether the drag was accepted."""
    enter = QDragEnterEvent(QPoint(20, 20), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(widget, enter)
    event = QDropEvent(QPointF(20, 20), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(widget, event)
    return enter.isAccepted()


def test_dropping_a_model_folder_loads_it(qtbot, open_main_window, tiny_model_dir, tmp_path) -> None:
    window = open_main_window(tiny_model_dir)
    other = shutil.copytree(tiny_model_dir, tmp_path / "other-model")
    with qtbot.waitSignal(window.modelChanged, timeout=TIMEOUT_MS):
        assert drop(window, file_mime(other))
    assert window.info.path == other and window.shown_errors == []


def test_dropping_a_broken_model_shows_the_usual_error(qtbot, open_main_window, tiny_model_dir, tmp_path) -> None:
    window = open_main_window(tiny_model_dir)
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    drop(window, file_mime(broken))
    qtbot.waitUntil(lambda: bool(window.shown_errors), timeout=TIMEOUT_MS)
    assert len(window.shown_errors) == 1 and "\n" not in window.shown_errors[0]
    assert window.info.path == tiny_model_dir  # the loaded model stays


def test_dropping_a_txt_file_on_the_source_box_opens_translate_text_file(qtbot, open_main_window, tiny_model_dir,
                                                                        tmp_path) -> None:
    window = open_main_window(tiny_model_dir)
    doc = tmp_path / "notes.txt"
    doc.write_text("red cat\n\nblue dog\n", encoding="utf-8")
    source = window.translate_panel.source
    assert drop(source.viewport(), file_mime(doc))  # the text box would paste the path: the window takes it
    assert source.toPlainText() == ""
    dialog = window.document_dialog
    assert dialog is not None and dialog.isVisible() and dialog.path == doc
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    assert len(dialog.lines) == 3 and dialog.lines[1] == ""


@pytest.mark.parametrize("what, message", [
    ("image", "Cannot open picture.png: drop a model folder, a model .zip or a document (.docx, .odt, .pptx, .xlsx, .html, .md, .srt, .vtt, .epub, .txt)"),
    ("two", "2 items dropped: drop one model folder or one document at a time"),
    ("web", "https://example.org/model.zip is not a file on this computer: download it first"),
])
def test_anything_else_is_one_sentence_in_the_status_bar(qtbot, open_main_window, tiny_model_dir, tmp_path, what,
                                                         message) -> None:
    window = open_main_window(tiny_model_dir)
    picture, doc = tmp_path / "picture.png", tmp_path / "a.txt"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n")
    doc.write_text("red\n", encoding="utf-8")
    if what == "web":
        mime = QMimeData()
        mime.setUrls([QUrl("https://example.org/model.zip")])
    else:
        mime = file_mime(picture) if what == "image" else file_mime(picture, doc)
    drop(window, mime)
    assert window.statusBar().currentMessage() == message
    assert window.shown_errors == [] and window.document_dialog is None
    assert window.info.path == tiny_model_dir


def test_shortcuts_dialog_lists_every_action_shortcut(qtbot, open_main_window, tiny_model_dir) -> None:
    window = open_main_window(tiny_model_dir)
    actions = [a for a in window.findChildren(QAction) if not a.shortcut().isEmpty()]
    keys = {a.shortcut().toString() for a in actions}
    expected = {"Ctrl+O", "Ctrl+Shift+O", "Ctrl+Return", "Esc", "Ctrl+1", "Ctrl+2", "Ctrl+3", "Ctrl+4", "F1",
                "Ctrl+Q"}
    assert expected <= keys
    window.menus.actions["shortcuts"].trigger()
    dialog = window._shortcuts
    assert dialog.isVisible()
    text = dialog.text()
    for action in actions:
        assert shortcut_text(action) in text and action_label(action) in text, action.text()
    assert "Ctrl+Return or Ctrl+Enter" in text
    dialog.close()


def test_tab_shortcuts_switch_tabs(qtbot, open_main_window, tiny_model_dir) -> None:
    window = open_main_window(tiny_model_dir)
    for n, key in enumerate(("translate", "models", "train", "analysis"), start=1):
        window.menus.actions[f"tab_{key}"].trigger()
        assert window.tabs.currentWidget() is window.tab(key)
        assert window.menus.actions[f"tab_{key}"].shortcut().toString() == f"Ctrl+{n}"
