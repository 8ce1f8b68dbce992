"""One numbering in every view (issue 22 point 3): each layer or head label a person sees is written `L3 H2`
(or `L3`), counted from 1, on the tiny model (2 decoder layers x 4 heads).

The views are walked as a person would meet them (grid, focus view, head statistics, ablation, compare, beam
tree, alignments, forced prefix, the Train tab's probe); every text they show (labels, check boxes, combo
items, spin boxes, table cells, tooltips, plot titles) is collected and checked.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import (QAbstractSpinBox, QCheckBox, QComboBox, QLabel, QPushButton, QTableWidget,  # noqa: E402
                               QWidget)

from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.gui.analysis.panel import AnalysisPanel  # noqa: E402
from nmt_desktop.gui.attention.grid import AttentionView  # noqa: E402
from nmt_desktop.gui.train.plots import ProbeView  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

TEXT = "red cat runs big dog"
CFG = DecodeConfig(attention=True, alternatives=5)
LAYERS, HEADS = 2, 4  # the tiny model's decoder
NAME = re.compile(r"\bL(\d+)(?: H(\d+))?\b")
# spellings of a layer or head that are not L3 H2: 0-based pairs, "Layer 0", "head 1" (except in "decoder
# layer 3, cross-attention head 2", the tooltip's words), L0, H0
OLD = re.compile(r"\b\d+:\d+\b|\bLayer \d|(?<!decoder )\blayer \d|(?<!cross-attention )\bhead \d|\b[LH]0\b")


def shown_texts(widget: QWidget) -> list[str]:
    """Every text `widget` and its children show a person, tooltips and plot titles included."""
    texts: list[str] = []
    for w in [widget, *widget.findChildren(QWidget)]:
        texts.append(w.toolTip())
        if isinstance(w, (QLabel, QCheckBox, QPushButton)):
            texts.append(w.text())
        elif isinstance(w, QComboBox):
            for i in range(w.count()):
                texts += [w.itemText(i), str(w.itemData(i, Qt.ToolTipRole) or "")]
        elif isinstance(w, QAbstractSpinBox):
            texts.append(w.text())
        elif isinstance(w, QTableWidget):
            for c in range(w.columnCount()):
                texts.append(w.horizontalHeaderItem(c).text() if w.horizontalHeaderItem(c) else "")
                for r in range(w.rowCount()):
                    item = w.item(r, c)
                    texts += [item.text(), item.toolTip()] if item is not None else []
        elif isinstance(w, pg.GraphicsView):
            texts += [item.text for item in w.scene().items() if isinstance(item, pg.LabelItem)]
            texts += [item.toPlainText() for item in w.scene().items() if isinstance(item, pg.TextItem)]
    return [t for t in texts if t]


def names_in(texts: list[str]) -> set[str]:
    """The L3 H2 / L3 names in `texts`, each checked against the model's size and the old spellings."""
    found = set()
    for text in texts:
        assert not OLD.search(text), f"old or 0-based spelling in {text!r}"
        for match in NAME.finditer(text):
            layer, head = int(match.group(1)), match.group(2)
            assert 1 <= layer <= LAYERS and (head is None or 1 <= int(head) <= HEADS), text
            found.add(match.group(0))
    return found


EVERY_HEAD = {f"L{l} H{h}" for l in range(1, LAYERS + 1) for h in range(1, HEADS + 1)}
EVERY_LAYER = {f"L{l}" for l in range(1, LAYERS + 1)}


@pytest.fixture
def panel(qtbot, tiny_translator):
    panel = AnalysisPanel()
    qtbot.addWidget(panel)
    panel.set_translator(tiny_translator)
    panel.set_translation(tiny_translator.translate(TEXT, CFG), CFG)
    panel.resize(1100, 700)
    panel.show()
    yield panel
    panel.shutdown()


def test_grid_and_focus_view(qtbot, tiny_translator) -> None:
    view = AttentionView()
    qtbot.addWidget(view)
    view.resize(1000, 600)
    view.show()
    view.set_translation(tiny_translator.translate(TEXT, CFG))
    view.focus(1, 2)  # 0-based (layer, head): L2 H3
    assert names_in(shown_texts(view)) >= EVERY_HEAD | EVERY_LAYER
    assert view.cell_item(1, 2).title == "L2 H3" and view.cell_item(0, -1).title == "L1 avg"
    assert view.focus_view.plot.titleLabel.text.endswith("· L2 H3")


def test_head_statistics(panel) -> None:
    panel.tabs.setCurrentWidget(panel.stats)
    texts = shown_texts(panel.stats)
    assert names_in(texts) >= EVERY_HEAD | EVERY_LAYER
    table = panel.stats.table
    assert {table.item(r, 1).text() for r in range(table.rowCount())} == EVERY_HEAD
    assert {table.item(r, 0).text() for r in range(table.rowCount())} == EVERY_LAYER
    grid = {t.split(" · ")[0] for t in texts if re.fullmatch(r"L\d H\d · -?\d+\.\d{3}", t)}
    assert grid == EVERY_HEAD  # the titles of the grid's small heatmaps
    row = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == "L2 H3")
    assert table.item(row, 1).toolTip() == "decoder layer 2, cross-attention head 3"


def test_ablation_check_boxes(panel) -> None:
    boxes = panel.ablation.boxes
    assert {box.text() for box in boxes.values()} == EVERY_HEAD
    assert boxes[(1, 2)].text() == "L2 H3" and boxes[(1, 2)].toolTip() == "decoder layer 2, cross-attention head 3"
    names_in(shown_texts(panel.ablation))


def test_compare_counts_from_1(qtbot, panel, tiny_model_dir) -> None:
    view = panel.compare
    with qtbot.waitSignal(view.otherLoaded, timeout=TIMEOUT_MS):
        view.load_other(str(tiny_model_dir))
    assert (view.layer.minimum(), view.layer.maximum(), view.head.minimum(), view.head.maximum()) == (1, 2, 1, 4)
    view.layer.setValue(2)
    view.head.setValue(3)
    with qtbot.waitSignal(view.compared, timeout=TIMEOUT_MS) as blocker:
        assert view.compare()
    a, _ = blocker.args
    assert (view.layer.text(), view.head.text()) == ("L2", "H3")
    assert view.view_a.plot.titleLabel.text == "A · L2 H3"
    assert (view.view_a.matrix() == a.attention[1, 2]).all()  # L2 H3 is attention[1][2]
    assert "L2 H3" in names_in(shown_texts(view))


def test_beam_tree_combo(qtbot, panel) -> None:
    view = panel.beam_tree
    items = [view.head.itemText(i) for i in range(view.head.count())]
    assert items == ["L2 (avg heads)", "L1 (avg heads)", *sorted(EVERY_HEAD)]
    tips = [view.head.itemData(i, Qt.ToolTipRole) for i in range(view.head.count())]
    assert tips[0] == "decoder layer 2" and tips[-1] == "decoder layer 2, cross-attention head 4"
    with qtbot.waitSignal(view.decoded, timeout=TIMEOUT_MS):
        assert view.decode()
    view.select_node(next(n.id for n in view.state.tree if n.status == "finished"))
    view.head.setCurrentIndex(items.index("L1 H2"))
    assert view.focus.plot.titleLabel.text == "L1 H2" and view.head_choice() == (0, 1)
    names_in(shown_texts(view))


def test_forced_layer_combo(panel) -> None:
    view = panel.forced
    items = [view.layer.itemText(i) for i in range(view.layer.count())]
    assert items[2:] == ["L1 (avg heads)", "L2 (avg heads)"], items
    view.layer.setCurrentIndex(items.index("L1 (avg heads)"))
    assert view.layer_choice() == 0  # L1 is index 0
    names_in(shown_texts(view))


def test_alignment_heads_combo(panel) -> None:
    view = panel.alignment
    view.set_model(LAYERS, {"alignment": {"reading": "shift", "heads": ["L1 H2", "L2 H4"]}})  # a card's heads
    combo = view.picker.heads
    items = [combo.itemText(i) for i in range(combo.count())]
    assert items == ["Recommended: L1 H2 + L2 H4", "L1 (heads averaged)", "L2 (heads averaged)",
                     "All layers (heads averaged)"]
    assert view.method().heads == ((0, 1), (1, 3))  # L2 H4 is attention[1][3]
    assert "L1 H2 + L2 H4" in view.picker.description.text()
    names_in(shown_texts(view))
    combo.setCurrentText("L1 (heads averaged)")
    assert view.method().layer == 0 and view.method().heads is None  # L1 is layer 0
    assert names_in(shown_texts(view)) >= {"L1", "L1 H2", "L2 H4"}


def test_train_probe_view(qtbot, tiny_translator) -> None:
    translation = tiny_translator.translate(TEXT, CFG)
    view = ProbeView()
    qtbot.addWidget(view)
    view.show_probe({"source": TEXT, "translation": translation.text, "source_tokens": translation.source_tokens,
                     "target_tokens": translation.target_tokens, "attention": translation.attention.tolist()}, 100)
    view.head.setValue(3)
    assert (view.layer.text(), view.head.text()) == ("L2", "H3")
    assert view.view.plot.titleLabel.text == "step 100: L2 H3"
    names_in(shown_texts(view))


@pytest.mark.parametrize("spelt, cell, title", [("L2H3", (1, 2), "L2 H3"), ("l1", (0, -1), "L1 avg")])
def test_cli_focus_opens_that_head(monkeypatch, tmp_path, tiny_model_dir, spelt, cell, title) -> None:
    """`gui --focus L2H3` opens the focus view on 0-based cell (1, 2), titled as the grid spells it."""
    from nmt_desktop.cli.main import main as cli_main
    from nmt_desktop.gui.headless import screenshot

    monkeypatch.setenv("NMT_DESKTOP_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("NMT_DESKTOP_LOG_DIR", str(tmp_path / "log"))
    seen = {}
    real = screenshot.focus

    def spy(view, ref) -> None:
        real(view, ref)
        seen.update(cell=view.focused_cell(), title=view.focus_view.plot.titleLabel.text)

    monkeypatch.setattr(screenshot, "focus", spy)
    out = tmp_path / "focus.png"
    assert cli_main(["gui", "-m", str(tiny_model_dir), "--text", TEXT, "--focus", spelt, "--screenshot", str(out)]) == 0
    assert seen["cell"] == cell and seen["title"].endswith(f"· {title}") and out.is_file()
