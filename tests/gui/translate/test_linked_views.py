"""Linked views (issue 29): hovering a word in the source box, a token of the translation or a heatmap lights
up the same tokens in every view of the Translate tab (the grid's cells, the focus view, the source box, the
translation, the Alternatives tab), with real mouse events on the real window; a click selects, and the
selection survives the pointer leaving and switching tabs, until a new translation."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtCore import QEvent  # noqa: E402
from PySide6.QtGui import QMouseEvent, QTextCursor  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from nmt_desktop.gui.translate.output_html import token_link  # noqa: E402
from nmt_desktop.gui.translate.word_links import anchor_span  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402
from qt_layout import wait_laid_out  # noqa: E402

SOURCE = "red cat runs"


@pytest.fixture
def window(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    window.resize(1300, 850)
    panel = window.translate_panel
    panel.options.mode.setCurrentIndex(0)
    panel.source.setPlainText(SOURCE)
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    qtbot.waitExposed(window)
    return window


def move_to(widget, point: QPoint) -> None:
    """A pointer move onto `point` of `widget`, delivered by Qt as the platform's would be (from beside it).

    Not QTest.mouseMove: after an in-process headless run (`cli_main(["gui", ..., "--screenshot"])` in an
    earlier test) its synthetic moves stopped reaching widgets of later windows in the offscreen platform."""
    for at in (point + QPoint(7, 9), point):
        event = QMouseEvent(QEvent.Type.MouseMove, QPointF(at), QPointF(widget.mapToGlobal(at)), Qt.NoButton,
                            Qt.NoButton, Qt.NoModifier)
        QApplication.sendEvent(widget, event)


def point_at(edit, position: int) -> QPoint:
    """The viewport point in the middle of character `position` of a text editor."""
    cursor = QTextCursor(edit.document())
    cursor.setPosition(position)
    rect = edit.cursorRect(cursor)
    return QPoint(rect.x() + 3, rect.center().y())


def test_hovering_a_source_word_lights_it_up_everywhere(qtbot, window) -> None:
    panel = window.translate_panel
    unit = panel.sentences[0]
    cat = next(i for i, t in enumerate(unit.source_tokens) if t.strip("▁") == "cat")
    panel.view.focus(0, 1)  # the focus view open on L1 H2
    move_to(panel.source.viewport(), point_at(panel.source, SOURCE.index("cat") + 1))
    qtbot.waitUntil(lambda: panel.view.highlight() == (-1, cat), timeout=TIMEOUT_MS)
    assert panel.links.highlighted_text() == ("cat", "")
    assert all(cell.col_mark.isVisible() and not cell.row_mark.isVisible() for cell in panel.view._cells)
    assert panel.view.focus_view.col_mark.isVisible()

    move_to(panel.source.viewport(), point_at(panel.source, SOURCE.index("runs") + 1))
    runs = next(i for i, t in enumerate(unit.source_tokens) if t.strip("▁") == "runs")
    qtbot.waitUntil(lambda: panel.view.highlight() == (-1, runs), timeout=TIMEOUT_MS)
    assert panel.links.highlighted_text() == ("runs", "")


def test_a_clicked_translation_token_stays_selected_across_views(qtbot, window) -> None:
    panel = window.translate_panel
    unit = panel.sentences[0]
    row = 1  # the second target token
    span = anchor_span(panel.output, token_link(0, row))
    assert span is not None
    where = point_at(panel.output, span[0] + 1)
    move_to(panel.output.viewport(), where)
    qtbot.waitUntil(lambda: panel.view.highlight() == (row, -1), timeout=TIMEOUT_MS)
    shown = unit.translation.best.tokens[row].strip("▁")
    assert panel.links.highlighted_text() == ("", shown)
    assert panel.alternatives_view.step.index == row  # its alternatives
    QTest.mouseClick(panel.output.viewport(), Qt.LeftButton, pos=where)
    assert panel.links.tokens.selected.row == row

    # the pointer goes to an empty part of the source box: the selection shows again
    move_to(panel.source.viewport(), QPoint(panel.source.viewport().width() - 5,
                                                    panel.source.viewport().height() - 5))
    qtbot.waitUntil(lambda: panel.view.highlight() == (row, -1), timeout=TIMEOUT_MS)
    window.show_tab("analysis")
    window.show_tab("translate")
    assert panel.view.highlight() == (row, -1) and panel.links.highlighted_text() == ("", shown)

    # a new translation: nothing selected
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    assert panel.view.highlight() == (-1, -1) and panel.links.highlighted_text() == ("", "")


def test_hovering_a_heatmap_cell_lights_the_words(qtbot, window) -> None:
    panel = window.translate_panel
    view = panel.view
    view.focus(0, 0)
    qtbot.waitUntil(lambda: view.focus_view.isVisible(), timeout=TIMEOUT_MS)
    wait_laid_out(qtbot, view)  # the focus view lays out its axes
    focus = view.focus_view
    vb = focus.plot.vb
    # the middle of cell (row 1, source 1) of the focus view, in the graphics view's coordinates
    scene_point = vb.mapViewToScene(QPointF(1.5, 1.5))
    where = focus.graphics.mapFromScene(scene_point)
    move_to(focus.graphics.viewport(), where)
    qtbot.waitUntil(lambda: view.highlight() == (1, 1), timeout=TIMEOUT_MS)
    unit = panel.sentences[0]
    source_word = unit.source_tokens[1].strip("▁")
    target_word = unit.translation.best.tokens[1].strip("▁")
    assert panel.links.highlighted_text() == (source_word, target_word)
    assert all(cell.row_mark.isVisible() and cell.col_mark.isVisible() for cell in view._cells)


def test_the_alignment_links_of_a_selected_word_light_up(qtbot, window) -> None:
    panel, analysis = window.translate_panel, window.analysis_panel
    unit = panel.sentences[0]
    move_to(panel.source.viewport(), point_at(panel.source, SOURCE.index("cat") + 1))
    cat = next(i for i, t in enumerate(unit.source_tokens) if t.strip("▁") == "cat")
    qtbot.waitUntil(lambda: panel.view.highlight() == (-1, cat), timeout=TIMEOUT_MS)
    panel.links.tokens.select(-1, cat)  # what a click in the focus view's column does
    viewport = panel.source.viewport()
    move_to(viewport, QPoint(viewport.width() - 12, viewport.height() - 12))  # the pointer leaves the word
    window.show_tab("analysis")
    analysis.tabs.setCurrentWidget(analysis.alignment)
    qtbot.waitUntil(lambda: bool(analysis.alignment.links), timeout=TIMEOUT_MS)
    lit = analysis.alignment.lit_links()
    assert lit and all(i == 1 for i, _j in lit)  # "cat" is source word 1; the selection survived the tab switch
    pens = {line.pen().width() for line in analysis.alignment.lines}
    assert 4 in pens  # the lit links are drawn thick
    panel.links.tokens.select(-1, cat)  # the same again: nothing selected
    assert not analysis.alignment.lit_links()


def test_pointing_at_a_word_of_another_sentence_shows_that_sentence(qtbot, window) -> None:
    panel = window.translate_panel
    text = "red cat runs\nblue dog sleeps"
    panel.source.setPlainText(text)
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    assert panel.shown_sentence == 1  # the view followed the stream to the last line
    move_to(panel.source.viewport(), point_at(panel.source, text.index("cat") + 1))
    qtbot.waitUntil(lambda: panel.shown_sentence == 0 and panel.view.highlight()[1] >= 0, timeout=TIMEOUT_MS)
    assert panel.links.highlighted_text() == ("cat", "")
    assert panel.view.data().source_tokens == panel.sentences[0].source_tokens
    # a click on a token of the second line's translation shows that line and selects the token
    span = anchor_span(panel.output, token_link(1, 0))
    QTest.mouseClick(panel.output.viewport(), Qt.LeftButton, pos=point_at(panel.output, span[0] + 1))
    qtbot.waitUntil(lambda: panel.shown_sentence == 1, timeout=TIMEOUT_MS)
    assert panel.links.tokens.selected.row == 0


def test_select_flag_selects_a_word_for_a_screenshot(monkeypatch, tmp_path, tiny_model_dir, capsys) -> None:
    from nmt_desktop.cli.main import main as cli_main
    from nmt_desktop.gui.headless import screenshot

    monkeypatch.setenv("NMT_DESKTOP_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("NMT_DESKTOP_LOG_DIR", str(tmp_path / "log"))
    seen: dict = {}
    real = screenshot.select_word

    def spy(window, word) -> None:
        real(window, word)
        panel = window.translate_panel
        seen.update(selected=panel.links.tokens.selected, lit=panel.links.highlighted_text(),
                    highlight=panel.view.highlight())

    monkeypatch.setattr(screenshot, "select_word", spy)
    out = tmp_path / "linked.png"
    assert cli_main(["gui", "-m", str(tiny_model_dir), "--text", SOURCE, "--select", "cat",
                     "--screenshot", str(out)]) == 0
    assert out.is_file() and seen["lit"] == ("cat", "") and seen["highlight"] == (-1, seen["selected"].col)
    assert cli_main(["gui", "-m", str(tiny_model_dir), "--text", SOURCE, "--select", "katze",
                     "--screenshot", str(out)]) == 0
    assert seen["lit"] == ("", "katze") and seen["selected"].row >= 0  # a word of the translation
    capsys.readouterr()
    assert cli_main(["gui", "-m", str(tiny_model_dir), "--text", SOURCE, "--select", "bus",
                     "--screenshot", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "--select bus: no such word in the source (red, cat, runs)" in err[0]


def test_unit_spans_follow_sentences_and_lines() -> None:
    from types import SimpleNamespace

    from nmt_desktop.gui.translate.word_links import unit_spans

    def unit(line, text, tokens):
        return SimpleNamespace(unit=SimpleNamespace(line=line), text=text, source_tokens=tokens)

    text = "Go home. Go home.\nred cat"
    units = [unit(0, "Go home.", ["▁Go", "▁home", "."]), unit(0, "Go home.", ["▁Go", "▁home", "."]),
             unit(1, "red cat", ["▁red", "▁cat", "</s>"]), unit(2, "gone", ["▁gone"])]
    spans = unit_spans(text, units)
    assert spans[0] == [(0, 2), (3, 8), (3, 8)] and spans[1] == [(9, 11), (12, 17), (12, 17)]  # the second one
    assert spans[2] == [(18, 21), (22, 25), None] and spans[3] == [None]  # </s> has no characters; line 3 is gone
