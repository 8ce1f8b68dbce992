"""Issue 29, point 9, on the real window through its own controls: Compare offers the model list for model B
and says what is missing instead of showing empty axes, its B − A colour bar is symmetric around 0 and
labelled; the Beam tree is never blank axes; in the dark theme the alignment links and the check box and
radio button rings are readable (WCAG contrast measured on the colours painted); n-best rows wrap; in
Translate text file a translated line stays level with its source line however it wraps."""

from __future__ import annotations

import copy

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QRect, Qt  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import (QCheckBox, QFileDialog, QRadioButton, QStyle, QStyleOptionButton,  # noqa: E402
                               QTabWidget, QWidget)

from nmt_desktop.core.formats.model_folder import save_model  # noqa: E402
from nmt_desktop.gui import theme  # noqa: E402
from nmt_desktop.gui.documents.table import SOURCE, TARGET  # noqa: E402
from nmt_desktop.gui.translate.nbest_list import NBestList  # noqa: E402
from colour_contrast import contrast  # noqa: E402
from tiny_models import perturbed_model  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

TEXT = "red cat runs"


def click_tab(tabs: QTabWidget, title: str) -> QWidget:
    bar = tabs.tabBar()
    index = next(i for i in range(tabs.count()) if tabs.tabText(i) == title)
    QTest.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(index).center())
    assert tabs.currentIndex() == index
    return tabs.currentWidget()


def translate_by_click(qtbot, window, text: str) -> None:
    panel = window.translate_panel
    panel.source.setPlainText(text)
    QTest.mouseClick(panel.translate_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not panel.running and panel.document.current() is not None, timeout=TIMEOUT_MS)


def analysis_view(window, title: str) -> QWidget:
    click_tab(window.tabs, "Analysis")
    return click_tab(window.analysis_panel.tabs, title)


@pytest.fixture(scope="module")
def nudged_model(tiny_trained, tmp_path_factory):
    """The tiny model with its weights nudged: the same tokens for TEXT, a different attention (B − A ≠ 0)."""
    import torch

    model, tokenizers = tiny_trained
    nudged = copy.deepcopy(model)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for p in nudged.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=generator))
    return save_model(tmp_path_factory.mktemp("nudged") / "tiny-nudged", nudged.eval(), tokenizers,
                      {"name": "tiny nudged"})


@pytest.fixture(scope="module")
def other_model(tiny_trained, tmp_path_factory):
    """A model of the same shape that translates TEXT into other tokens (no B − A)."""
    model, tokenizers = tiny_trained
    return save_model(tmp_path_factory.mktemp("other") / "tiny-other", perturbed_model(model.config, seed=3),
                      tokenizers, {"name": "tiny other"})


def test_compare_offers_the_model_list_says_what_is_missing_and_has_a_diverging_bar(
        open_main_window, tiny_model_dir, nudged_model, other_model, qtbot, monkeypatch, tmp_path):
    window = open_main_window(tiny_model_dir)
    translate_by_click(qtbot, window, TEXT)
    view = analysis_view(window, "Compare models")
    # the same list as the Translate tab's model picker, nothing chosen yet
    picker = view.picker
    offered = [picker.itemData(i) for i in range(picker.count())]
    translate_picker = window.translate_panel.model_picker
    assert offered == [translate_picker.itemData(i) for i in range(translate_picker.count())] != []
    assert str(tiny_model_dir.resolve()) in offered
    assert picker.currentIndex() == -1 and picker.placeholderText() == "Choose model B…"
    # an empty state that says what to do, not three blank axes
    assert view.empty.isVisible() and view.empty.title.text() == "Choose model B"
    assert not any(v.isVisible() for v in (view.view_a, view.view_b, view.view_diff))
    assert not view.run_button.isEnabled()

    # pick the loaded model itself from the list with the keyboard (Down on the closed combo activates it)
    with qtbot.waitSignal(view.otherLoaded, timeout=TIMEOUT_MS):
        QTest.keyClick(picker, Qt.Key_Down)
    assert picker.currentData() == offered[0] and view.other_path == offered[0]
    assert view.empty.isVisible() and "Click Compare" in view.empty.hint.text()
    with qtbot.waitSignal(view.compared, timeout=TIMEOUT_MS):
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    assert view.view_a.isVisible() and view.view_diff.isVisible() and not view.empty.isVisible()
    low, high = view.view_diff.colorbar.levels()
    assert high > 0 and low == -high  # identical models: all white, on a readable symmetric scale

    # Browse… for a folder that is not listed: a nudged copy, same tokens, other attention
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(nudged_model))
    with qtbot.waitSignal(view.otherLoaded, timeout=TIMEOUT_MS):
        QTest.mouseClick(view.open_button, Qt.LeftButton)
    assert picker.currentText() == nudged_model.name and view.empty.isVisible()  # B changed: compare again
    with qtbot.waitSignal(view.compared, timeout=TIMEOUT_MS) as blocker:
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    a, b = blocker.args
    assert a.target_tokens == b.target_tokens
    diff = view.view_diff.matrix()
    top = float(np.abs(diff).max())
    assert top > 0.01 and diff.min() < 0 < diff.max()
    assert view.view_diff.colorbar.levels() == pytest.approx((-top, top))  # symmetric around 0, not 0..1
    assert tuple(view.view_diff.image.levels) == pytest.approx((-top, top))
    assert "B − A" in view.view_diff.colorbar.getAxis("right").labelText

    # a folder that holds no model: said in one line, and the picker still shows the model B in use
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(tmp_path))
    QTest.mouseClick(view.open_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not view.running, timeout=TIMEOUT_MS)
    assert view.status.text().startswith("Failed:") and view.other_path == str(nudged_model)
    assert picker.currentText() == nudged_model.name and view.view_diff.isVisible()

    # a model B with other tokens: A and B side by side, and a sentence in place of the B − A map
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(other_model))
    with qtbot.waitSignal(view.otherLoaded, timeout=TIMEOUT_MS):
        QTest.mouseClick(view.open_button, Qt.LeftButton)
    with qtbot.waitSignal(view.compared, timeout=TIMEOUT_MS):
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    assert view.view_a.isVisible() and view.view_b.isVisible()
    assert not view.view_diff.isVisible() and view.no_diff.isVisible()
    assert "differ" in view.no_diff.hint.text()

    # another input: the old comparison no longer belongs on screen
    translate_by_click(qtbot, window, "blue dog sleeps")
    analysis_view(window, "Compare models")
    assert view.empty.isVisible() and not view.view_a.isVisible()


def test_beam_tree_is_never_blank_axes(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    translate_by_click(qtbot, window, TEXT)
    view = analysis_view(window, "Beam tree")
    assert view.empty.isVisible() and "Decode with beam search" in view.empty.hint.text()
    assert not view.focus.isVisible()
    with qtbot.waitSignal(view.decoded, timeout=TIMEOUT_MS):
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    # the best hypothesis's last node is selected and its attention shown, before any click on the tree
    assert view.focus.isVisible() and not view.empty.isVisible()
    node = view.state.tree[view.selected]
    assert node.status == "finished"
    tokens = list(view.state.node_tokens(node.id))
    assert view.result.target_ids[: len(tokens)] == tokens[: len(view.result.target_ids)]
    rows, cols = view.focus.matrix().shape
    assert rows == len(tokens) and cols == len(view.result.source_tokens)
    assert view.node_label.text().startswith(f"Node {node.id} (finished")


def test_dark_theme_alignment_links_have_contrast(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    translate_by_click(qtbot, window, TEXT)
    window.menus.theme_actions["dark"].trigger()
    view = analysis_view(window, "Alignments")
    qtbot.waitUntil(lambda: bool(view.lines), timeout=TIMEOUT_MS)

    def worst_link_contrast() -> float:
        background = view.graphics.backgroundBrush().color()
        ratios = []
        for line in view.lines:
            pen = line.pen().color()
            alpha = pen.alphaF()  # the link as painted: blended over the background
            painted = QColor.fromRgbF(*(alpha * f + (1 - alpha) * g for f, g in zip(
                (pen.redF(), pen.greenF(), pen.blueF()), (background.redF(), background.greenF(), background.blueF()))))
            ratios.append(contrast(painted, background))
        return min(ratios)

    assert view.graphics.backgroundBrush().color() == QColor(theme.DARK.plot_background)
    assert worst_link_contrast() >= 3.0  # WCAG 2 non-text contrast
    window.menus.theme_actions["light"].trigger()  # drawn links follow the theme
    assert view.graphics.backgroundBrush().color() == QColor(theme.LIGHT.plot_background)
    assert worst_link_contrast() >= 3.0


def _indicator_contrast(window: QWidget, button: QCheckBox | QRadioButton) -> float:
    """The largest contrast between a pixel of the button's indicator as painted in the window and the
    background just left of the button (what the ring and box must stand out from)."""
    option = QStyleOptionButton()
    button.initStyleOption(option)
    element = (QStyle.SE_RadioButtonIndicator if isinstance(button, QRadioButton)
               else QStyle.SE_CheckBoxIndicator)
    rect = button.style().subElementRect(element, option, button)
    origin = button.mapTo(window, rect.topLeft())
    image = window.grab(QRect(origin - QPoint(3, 0), rect.size() + QRect(0, 0, 3, 0).size())).toImage()
    background = QColor(image.pixel(0, image.height() // 2))
    return max(contrast(QColor(image.pixel(x, y)), background)
               for x in range(3, image.width()) for y in range(image.height()))


def test_dark_theme_check_box_and_radio_rings_are_visible(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    window.menus.theme_actions["dark"].trigger()
    int8 = window.translate_panel.options.int8
    assert int8.isVisible() and not int8.isChecked()
    assert _indicator_contrast(window, int8) >= 3.0
    click_tab(window.tabs, "Train")
    radio = next(r for r in window.train_panel.findChildren(QRadioButton) if r.isVisible() and not r.isChecked())
    assert _indicator_contrast(window, radio) >= 3.0
    # the colours behind it: the ring's colour stands out from the window and the box fill in both themes
    for look in (theme.LIGHT, theme.DARK):
        assert contrast(look.control_border, look.window) >= 3.0 and contrast(look.control_border, look.base) >= 3.0


def test_nbest_rows_wrap_instead_of_scrolling(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)  # the default window size
    panel = window.translate_panel
    panel.options.set_beam(4, 4)
    translate_by_click(qtbot, window, "red cat runs big house blue dog sleeps small tree green bird eats water sun")
    shown = panel.nbest_list
    assert isinstance(shown, NBestList)  # the window's own list is the wrapping one
    click_tab(panel.inspect_tabs, panel.inspect_tabs.tabText(1))
    texts = [shown.item(i).text() for i in range(shown.count())]
    assert len(texts) == 4
    # the tiny model translates seven words at most: add a row as long as a real model's sentence, made the same way
    texts.append(f"5.  -1.402   {' '.join(texts[0].split()[2:] * 4)}")
    assert shown.fontMetrics().horizontalAdvance(texts[-1]) > 2 * shown.viewport().width()
    rows = NBestList()  # the n-best list, at the width the window gives its tab
    qtbot.addWidget(rows)
    rows.addItems(texts)
    rows.resize(shown.size())
    rows.show()
    qtbot.waitExposed(rows)
    line = rows.fontMetrics().height()

    # the delegate draws text inside the row less a focus-frame margin on each side (QStyledItemDelegate)
    margin = 2 * (rows.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, rows) + 1)

    def laid_out() -> list[tuple[str, QRect, bool | None]]:
        """Each row, its rectangle and whether its text is wider than the room the delegate gives it (None
        within 3 px of it, where rounding decides); a list view lays its rows out on a timer, so a loaded
        machine can read them before the last layout, at the width before the resize."""
        rects = [rows.visualItemRect(rows.item(i)) for i in range(len(texts))]
        overs = [rows.fontMetrics().horizontalAdvance(text) - (rect.width() - margin)
                 for text, rect in zip(texts, rects)]
        return [(text, rect, None if abs(over) <= 3 else over > 0) for text, rect, over in zip(texts, rects, overs)]

    def wrapped_as_wide() -> bool:
        return all(rect.width() <= rows.viewport().width() and (wide is None or (rect.height() >= 2 * line) == wide)
                   for _, rect, wide in laid_out())

    qtbot.waitUntil(wrapped_as_wide, timeout=TIMEOUT_MS)
    assert not rows.horizontalScrollBar().isVisible() and rows.horizontalScrollBar().maximum() == 0
    assert laid_out()[-1][2] is True  # the row made as long as a real sentence is wider than the list
    for text, rect, wide in laid_out():
        assert wide is None or (rect.height() >= 2 * line) == wide, (text, rect)  # a long hypothesis wraps


def test_translated_line_stays_level_with_its_source_line(open_main_window, tiny_model_dir, qtbot, tmp_path):
    window = open_main_window(tiny_model_dir)
    long_line = "red cat runs big house blue dog sleeps small tree green bird eats water"
    source = tmp_path / "doc.txt"
    source.write_text(f"red cat\n{long_line}\n\nblue dog sleeps\nbig house\n", encoding="utf-8")
    dialog = window.translate_file(source)
    dialog.resize(640, 520)  # narrow: the long line's translation wraps
    qtbot.waitUntil(lambda: not dialog.running, timeout=TIMEOUT_MS)
    table = dialog.table
    qtbot.waitUntil(lambda: table.rowHeight(1) > table.rowHeight(0), timeout=TIMEOUT_MS)
    model = table.model()
    assert model.rowCount() == 5 and table.column_text(TARGET).split("\n") == dialog.lines
    line = table.fontMetrics().height()
    assert table.rowHeight(1) >= 2 * line  # the long line wrapped
    bottom = None
    for row in range(model.rowCount()):
        src, tgt = (table.visualRect(model.index(row, c)) for c in (SOURCE, TARGET))
        assert src.top() == tgt.top() and src.height() == tgt.height(), row  # level, and as tall
        assert tgt.left() >= src.right()  # side by side
        if bottom is not None:
            assert src.top() > bottom  # rows follow each other: line i+1 below line i in both columns
        bottom = src.bottom()
        for column in (SOURCE, TARGET):  # every cell tall enough for its wrapped text: nothing is cut
            hint = table.itemDelegate().sizeHint(_view_option(table, column), model.index(row, column))
            assert table.rowHeight(row) >= hint.height() - 1, (row, column)
    dialog.close()


def _view_option(table, column: int):
    from PySide6.QtWidgets import QStyleOptionViewItem

    option = QStyleOptionViewItem()
    table.initViewItemOption(option)
    option.rect = QRect(0, 0, table.columnWidth(column), 1)
    option.features |= QStyleOptionViewItem.ViewItemFeature.WrapText
    return option


def test_forced_prefix_is_never_blank_axes(open_main_window, tiny_model_dir, qtbot):
    """Before anything was forced the view says how to force a token (it showed empty axes with a 0-1 bar);
    a forced re-decoding replaces the message with the texts and the difference map."""
    window = open_main_window(tiny_model_dir)
    translate_by_click(qtbot, window, TEXT)
    view = analysis_view(window, "Forced prefix")
    assert view.empty.isVisible() and "Force this token" in view.empty.hint.text()
    assert not view.diff.isVisible() and not view.texts.isVisible()
    panel = window.translate_panel
    unit = panel.document.current()
    panel.show_alternatives(unit.steps[0])  # what a click on the first token does
    with qtbot.waitSignal(view.forcedDone, timeout=TIMEOUT_MS):
        assert panel.force_alternative(1)  # the Alternatives table's "Force this token" on its second row
    assert view.diff.isVisible() and not view.empty.isVisible()
    assert view.diff.matrix().shape[1] == len(unit.translation.source_tokens)
    window.analysis_panel.set_translator(window.translate_panel.translator)  # a model (re)loaded: no stale result
    assert view.empty.isVisible()
