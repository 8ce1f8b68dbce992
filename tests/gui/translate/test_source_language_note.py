"""The Translate tab says, inline under the translation, when the text typed is not in the model's language
(gui/translate/source_language_note.py over core/decoding/source_language.py), and still translates it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QInputMethodEvent  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QDialog  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

CHINESE = "我今天很累，想早点睡觉。"
ENGLISH = "The red cat runs to the big house."


def type_text(panel, text: str) -> None:
    """Type as a user does: key by key, or through the input method for Chinese (QTest's key clicks abort on
    characters outside Latin-1)."""
    panel.source.clear()
    panel.source.setFocus()
    if text.isascii():
        QTest.keyClicks(panel.source, text)
    else:
        event = QInputMethodEvent()
        event.setCommitString(text)
        QApplication.sendEvent(panel.source, event)
    assert panel.source.toPlainText() == text


def click_translate(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(panel.translate_button, Qt.LeftButton)


def test_chinese_typed_for_an_english_model_is_said_inline(qtbot, panel, tiny_translator) -> None:
    panel.set_translator(tiny_translator, SimpleNamespace(src_lang="en", tgt_lang="de"))
    note = panel.language_note
    type_text(panel, CHINESE)
    click_translate(qtbot, panel)
    assert note.isVisible()
    assert note.text().startswith("⚠ This looks like Chinese (zh), not English (en): the model only reads English")
    assert panel.output_text()  # translated all the same
    # inline in the output pane, under the translation; no dialog
    assert note.parentWidget() is panel.output.parentWidget()
    assert note.geometry().top() >= panel.output.geometry().bottom()
    assert not any(isinstance(w, QDialog) and w.isVisible() for w in QApplication.topLevelWidgets())

    type_text(panel, ENGLISH)
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        QTest.keyClick(panel.source, Qt.Key_Return, Qt.ControlModifier)  # the Translate shortcut
    assert note.isHidden() and note.text() == ""

    for short in ("Tom", "42", "你好"):  # a name, a number, two characters: too little to judge
        type_text(panel, short)
        click_translate(qtbot, panel)
        assert note.isHidden(), short


def test_the_note_belongs_to_the_text_and_model_shown(qtbot, panel, tiny_translator) -> None:
    panel.set_translator(tiny_translator, SimpleNamespace(src_lang="en", tgt_lang="de"))
    type_text(panel, CHINESE)
    click_translate(qtbot, panel)
    assert panel.language_note.isVisible()
    # a model that reads Chinese: the same text translated again, no warning
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.set_translator(tiny_translator, SimpleNamespace(src_lang="zh", tgt_lang="en"))
    assert panel.language_note.isHidden()
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.set_translator(tiny_translator, SimpleNamespace(src_lang="en", tgt_lang="de"))
    assert panel.language_note.isVisible()
    panel.source.clear()  # no text: a model switch leaves nothing of the old text on screen
    panel.set_translator(tiny_translator, SimpleNamespace(src_lang="en", tgt_lang="de"))
    assert panel.language_note.isHidden()
