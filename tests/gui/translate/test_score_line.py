"""The line under the translation ("log-prob -3.21 (length-normalised -0.412) · 13 tokens") is one sentence's
hypothesis, not the whole text's (issue 41): with several sentences it says which one it is about, and it follows
the sentence picked in the Sentences list (real window, tiny model, clicks on the real controls)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from limits import TIMEOUT_MS  # noqa: E402


def translate_by_click(qtbot, panel, text: str) -> None:
    QTest.mouseClick(panel.source.viewport(), Qt.LeftButton)
    panel.source.insertPlainText(text)  # a paste
    QTest.mouseClick(panel.translate_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not panel.running and all(u.translation is not None for u in panel.document.units)
                    and panel.document.units != [], timeout=TIMEOUT_MS)


def test_the_score_line_names_its_sentence(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    translate_by_click(qtbot, panel, "red cat runs\nblue dog sleeps\nbig cat runs")
    units = panel.document.units
    assert len(units) == 3
    shown = panel.document.shown
    best = units[shown].translation.best
    assert panel.score_label.text().startswith(f"Sentence {shown + 1} of 3: log-prob {best.logprob:.2f}")

    panel.inspect_tabs.setCurrentWidget(panel.sentence_list)
    item = panel.sentence_list.item(1)
    QTest.mouseClick(panel.sentence_list.viewport(), Qt.LeftButton,
                     pos=panel.sentence_list.visualItemRect(item).center())
    best = units[1].translation.best
    assert panel.score_label.text().startswith(f"Sentence 2 of 3: log-prob {best.logprob:.2f}")
    assert f"{len(best.tokens)} tokens" in panel.score_label.text()
    assert "this sentence" in panel.score_label.toolTip()


def test_one_sentence_needs_no_number(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    translate_by_click(qtbot, panel, "red cat runs")
    best = panel.document.units[0].translation.best
    assert panel.score_label.text().startswith(f"log-prob {best.logprob:.2f}")
