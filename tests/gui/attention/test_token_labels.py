"""Every token labelled, readably, on every heatmap and image export (issue 22 point 1), pieces shown without
"▁" in every view (point 4), and the plots following the theme (point 6). Tiny real model, real widgets.

"Drawn" means what the axes painted (`TokenAxis.painted`) when the whole plot is rendered, as an export
renders it: the labels must equal the tokens (display_piece, elided), not overlap each other, fit the
axis and use at least the floor font size.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtGui  # noqa: E402

from nmt_desktop.core.analysis.words import display_pieces  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.tokenizer import WORD_START  # noqa: E402
from nmt_desktop.gui import theme  # noqa: E402
from nmt_desktop.gui.attention.grid import AttentionView  # noqa: E402
from nmt_desktop.gui.attention.focus import FocusView  # noqa: E402
from nmt_desktop.gui.attention.token_axis import FLOOR_PT, elide  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402
from qt_layout import wait_laid_out  # noqa: E402

TEXT = ("red cat runs big dog sleeps small bird eats green tree water sun moon house blue cat runs big dog "
        "sleeps small")  # 22 words: 22 source pieces and </s>
CFG = DecodeConfig(attention=True, alternatives=5)


@pytest.fixture(scope="module")
def long_tr(tiny_translator):
    from tiny_models import reference

    tr = tiny_translator.translate(TEXT, CFG, prefix_text=reference(TEXT))  # the tiny model stops early on its own
    assert len(tr.source_tokens) > 20 and len(tr.target_tokens) > 20
    assert any(t.startswith(WORD_START) for t in tr.source_tokens + tr.target_tokens)
    return tr


@pytest.fixture
def light_theme():
    yield
    theme.apply("light", theme.DEFAULT_COLORMAP)


def drawn(view: FocusView) -> tuple[list[str], list[str]]:
    """Render the whole plot (scrolled out parts too, as an export does) and return the (source, target)
    labels its axes painted, after checking they are readable: no overlap, inside the axis, >= FLOOR_PT."""
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)
    for axis in view.axes.values():
        axis.painted, axis.picture = [], None
    rect = view.graphics.ci.sceneBoundingRect()
    if view.isVisible():  # the plot fits its widget (which scrolls): nothing cut off at the right or bottom
        assert view.colorbar.sceneBoundingRect().right() <= view.graphics.width() + 1
        assert view.axes["bottom"].sceneBoundingRect().bottom() <= view.graphics.height() + 1
    image = QtGui.QImage(int(rect.width()) + 1, int(rect.height()) + 1, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    view.graphics.scene().render(painter, QtCore.QRectF(image.rect()), rect)
    painter.end()
    out = []
    for name in ("bottom", "left"):
        axis = view.axes[name]
        assert axis.fit.point_size >= FLOOR_PT
        boxes = sorted((b for _, b in axis.painted), key=lambda b: b.left() if name == "bottom" else b.top())
        for a, b in zip(boxes, boxes[1:]):
            assert (b.left() >= a.right() - 0.5) if name == "bottom" else (b.top() >= a.bottom() - 0.5), name
        room = axis.height() if name == "bottom" else axis.width()
        assert all((b.height() if name == "bottom" else b.width()) <= room for b in boxes), name
        out.append([text for text, _ in axis.painted])
    return out[0], out[1]


def shown_widget(qtbot, widget, size: tuple[int, int]):
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    return widget


def shown(tokens: list[str]) -> list[str]:
    return [elide(t) for t in display_pieces(tokens)]


def assert_all_labelled(view: FocusView, source: list[str], target: list[str]) -> None:
    src, tgt = drawn(view)
    assert src == shown(source)
    assert tgt == shown(target)
    assert not any(WORD_START in t for t in src + tgt)


def test_old_axis_dropped_labels_and_the_new_one_draws_all(qtbot, long_tr):
    """The reproduction: pyqtgraph's own axis kept 8 of 22 source ticks in a 600 px focus view."""
    import pyqtgraph as pg

    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(600, 500)
    plot.show()
    ticks = [(i + 0.5, t) for i, t in enumerate(long_tr.source_tokens)]
    plot.getAxis("bottom").setTicks([ticks, []])
    plot.setXRange(0, len(ticks), padding=0)
    wait_laid_out(qtbot, plot)
    axis = plot.getAxis("bottom")
    specs = axis.generateDrawSpecs(QtGui.QPainter(QtGui.QImage(10, 10, QtGui.QImage.Format.Format_ARGB32)))
    assert len(specs[2]) < len(ticks)  # labels dropped
    view = shown_widget(qtbot, FocusView(), (600, 500))
    view.set_matrix(long_tr.attention[-1, 0], long_tr.source_tokens, long_tr.target_tokens)
    wait_laid_out(qtbot, view)
    assert_all_labelled(view, long_tr.source_tokens, long_tr.target_tokens)


@pytest.mark.parametrize("size", [(680, 560), (1300, 800), (380, 320), (200, 160)])
def test_focus_view_labels_every_token_at_any_size(qtbot, long_tr, size):
    view = FocusView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_matrix(long_tr.attention[-1].mean(0), long_tr.source_tokens, long_tr.target_tokens, title="L2 avg")
    wait_laid_out(qtbot, view)
    assert_all_labelled(view, long_tr.source_tokens, long_tr.target_tokens)
    bottom = view.axes["bottom"].fit
    if size[0] <= 400:  # too narrow for horizontal labels: rotated, and the plot keeps room to scroll
        assert bottom.rotated
        assert view.graphics.minimumWidth() >= len(long_tr.source_tokens) * bottom.min_px
    if size[1] <= 200:
        assert view.scroll.verticalScrollBar().maximum() > 0  # scrolls rather than dropping a label


def test_focus_view_hover_names_tokens_without_marker(qtbot, long_tr):
    view = FocusView()
    qtbot.addWidget(view)
    view.set_matrix(long_tr.attention[0, 0], long_tr.source_tokens, long_tr.target_tokens)
    view.hover(1, 1)
    assert WORD_START not in view.value_label.text() and "·" in view.value_label.text()


def test_attention_view_focus_and_image_exports_label_every_token(qtbot, long_tr, tmp_path, light_theme):
    view = shown_widget(qtbot, AttentionView(), (1360, 700))
    view.set_translation(long_tr)
    view.focus(1, 2)
    wait_laid_out(qtbot, view)
    assert_all_labelled(view.focus_view, long_tr.source_tokens, long_tr.target_tokens)
    theme.apply("dark", "magma")
    for name in ("focus.png", "focus.svg"):
        for axis in view.focus_view.axes.values():
            axis.painted, axis.picture = [], None
        view.export_focus(str(tmp_path / name))
        axes = view.focus_view.axes
        assert [t for t, _ in axes["bottom"].painted] == shown(long_tr.source_tokens)
        assert [t for t, _ in axes["left"].painted] == shown(long_tr.target_tokens)
    svg = (tmp_path / "focus.svg").read_text(encoding="utf-8")
    assert WORD_START not in svg
    assert all(label.replace("<", "&lt;").replace(">", "&gt;") in svg for label in shown(long_tr.source_tokens))
    # a figure for a paper: light background, the chosen colour map; the screen keeps its dark theme
    png = QtGui.QImage(str(tmp_path / "focus.png"))
    assert QtGui.QColor(png.pixel(2, 2)).name() == theme.LIGHT.plot_background
    assert view.focus_view.graphics.backgroundBrush().color().name() == theme.DARK.plot_background


def test_hidden_view_exports_every_label(qtbot, long_tr, tmp_path):
    view = AttentionView()  # never shown: the export lays it out by itself
    qtbot.addWidget(view)
    view.set_translation(long_tr)
    view.focus(0, 0)
    view.export_focus(str(tmp_path / "f.png"))
    assert [t for t, _ in view.focus_view.axes["bottom"].painted] == shown(long_tr.source_tokens)
    assert [t for t, _ in view.focus_view.axes["left"].painted] == shown(long_tr.target_tokens)


def test_train_probe_labels_every_token(qtbot, long_tr):
    from nmt_desktop.gui.train.plots import ProbeView

    probe = shown_widget(qtbot, ProbeView(), (520, 420))
    probe.show_probe({"source": TEXT, "translation": long_tr.text, "attention": long_tr.attention.tolist(),
                      "source_tokens": long_tr.source_tokens, "target_tokens": long_tr.target_tokens}, step=100)
    wait_laid_out(qtbot, probe)
    assert_all_labelled(probe.view, long_tr.source_tokens, long_tr.target_tokens)


def test_compare_labels_every_token_in_all_three_views(qtbot, long_tr, tiny_translator):
    from nmt_desktop.gui.analysis.compare import CompareView

    view = shown_widget(qtbot, CompareView(), (1300, 600))
    view.set_translator(tiny_translator)
    view.set_other(tiny_translator, "same")
    view.set_source(TEXT)
    with qtbot.waitSignal(view.compared, timeout=TIMEOUT_MS):
        assert view.compare()
    wait_laid_out(qtbot, view)
    for focus in (view.view_a, view.view_b, view.view_diff):
        assert_all_labelled(focus, long_tr.source_tokens, view.a.target_tokens)
    view.shutdown()


def test_forced_prefix_and_beam_tree_label_every_token(qtbot, long_tr, tiny_translator):
    from nmt_desktop.gui.analysis.beam_tree import BeamTreeView
    from nmt_desktop.gui.analysis.forced_prefix import ForcedPrefixView

    forced = shown_widget(qtbot, ForcedPrefixView(), (900, 600))
    forced.set_translator(tiny_translator)
    alt = long_tr.best.alternatives[1][1]
    with qtbot.waitSignal(forced.forcedDone, timeout=TIMEOUT_MS):
        assert forced.force(long_tr, 1, alt.token_id, CFG)
    wait_laid_out(qtbot, forced)
    src, tgt = drawn(forced.diff)
    assert src == shown(long_tr.source_tokens)
    assert tgt == [elide(t) for t in forced.diff.token_labels()[1]] and len(tgt) == forced.diff.matrix().shape[0]
    assert any("→" in t for t in tgt) and not any(WORD_START in t for t in tgt)
    assert WORD_START not in forced.texts.toPlainText() + forced.info.text()
    forced.shutdown()

    tree = shown_widget(qtbot, BeamTreeView(), (900, 700))
    tree.set_translator(tiny_translator)
    tree.set_source(TEXT)
    with qtbot.waitSignal(tree.decoded, timeout=TIMEOUT_MS) as blocker:
        assert tree.decode()
    state = blocker.args[0]
    node = max((n for n in state.tree if n.status == "finished"), key=lambda n: n.step)
    tree.select_node(node.id)
    wait_laid_out(qtbot, tree)
    pieces = tiny_translator.target_pieces(state.node_tokens(node.id))
    assert_all_labelled(tree.focus, long_tr.source_tokens, pieces)
    texts = [i.text() for i in tree.scene.items() if hasattr(i, "text")]
    assert texts and not any(WORD_START in t for t in texts)
    assert WORD_START not in tree.node_label.text()
    tree.shutdown()


def test_no_raw_marker_in_tables_chips_and_alignments(qtbot, long_tr, tiny_translator):
    from nmt_desktop.gui.analysis.ablation import AblationView
    from nmt_desktop.gui.analysis.alignment import AlignmentView
    from nmt_desktop.gui.analysis.coverage import CoverageView
    from nmt_desktop.gui.translate.alternatives import AlternativesView

    alts = AlternativesView()
    qtbot.addWidget(alts)
    seen = []
    for step in long_tr.best.steps():
        alts.show_step(step)
        seen += [alts.title.text()] + [alts.table.item(r, 0).text() for r in range(alts.table.rowCount())]
    assert len(seen) > 20 and not any(WORD_START in t for t in seen)
    assert any(t.startswith("·") for t in seen)
    assert "·word starts a word" in alts.table.horizontalHeaderItem(0).toolTip()  # the legend of the mark

    ablation, coverage, alignment = AblationView(), CoverageView(), AlignmentView()
    for w in (ablation, coverage, alignment):
        qtbot.addWidget(w)
    ablation.set_translator(tiny_translator)
    ablation.set_translation(long_tr, CFG)
    coverage.set_translation(long_tr)
    alignment.set_translation(long_tr)
    coverage.low.setValue(5.0)  # every source word flagged, so the list names words too
    texts = [ablation.original.toPlainText(), coverage.tokens.toPlainText()]
    texts += [coverage.list.item(i).text() for i in range(coverage.list.count())]
    texts += [i.text() for i in alignment.scene.items() if hasattr(i, "text")]
    assert all(texts) and not any(WORD_START in t for t in texts)
    ablation.shutdown()
    alignment.shutdown()


def test_a_hidden_focus_view_takes_the_theme_when_shown(qtbot, long_tr, light_theme):
    view = FocusView()
    qtbot.addWidget(view)
    theme.apply("light", "viridis")
    theme.apply("dark", "cividis")  # while hidden: nothing is repainted yet
    assert view.graphics.backgroundBrush().color().name() != theme.DARK.plot_background
    view.show()
    qtbot.waitExposed(view)
    assert view.graphics.backgroundBrush().color().name() == theme.DARK.plot_background
    assert view.axes["bottom"].pen().color().name() == theme.DARK.plot_text


def test_theme_restyles_plots(qtbot, long_tr, light_theme):
    from nmt_desktop.gui.train.plots import LivePlots

    view = FocusView()
    plots = LivePlots()
    grid = AttentionView()
    for w in (view, plots, grid):
        qtbot.addWidget(w)
        w.show()  # a hidden focus view takes a new look when shown (below)
    theme.apply("light", "viridis")
    view.set_matrix(long_tr.attention[0, 0], long_tr.source_tokens, long_tr.target_tokens)
    grid.set_translation(long_tr)
    lut = np.array(view.image.lut, copy=True)
    assert view.graphics.backgroundBrush().color().name() == theme.LIGHT.plot_background
    theme.apply("dark", "cividis")
    assert view.graphics.backgroundBrush().color().name() == theme.DARK.plot_background
    assert view.axes["bottom"].pen().color().name() == theme.DARK.plot_text
    assert view.axes["left"].textPen().color().name() == theme.DARK.plot_text
    assert not np.array_equal(np.asarray(view.image.lut), lut)
    assert view.colorbar.colorMap().name == "cividis"
    assert plots.plots["loss"].backgroundBrush().color().name() == theme.DARK.plot_background
    assert grid.grid.backgroundBrush().color().name() == theme.DARK.plot_background
    assert grid.cell_item(0, 0).image.getColorMap().name == "cividis"
    from nmt_desktop.gui.analysis.alignment import AlignmentView
    from nmt_desktop.gui.analysis.beam_tree import BeamTreeView
    from nmt_desktop.gui.analysis.head_stats import HeadStatsView

    stats, tree, align = HeadStatsView(), BeamTreeView(), AlignmentView()
    for w in (stats, tree, align):
        qtbot.addWidget(w)
    assert stats.graphics.backgroundBrush().color().name() == theme.DARK.plot_background
    assert tree.graphics.backgroundBrush().color().name() == theme.DARK.plot_background
    assert align.graphics.backgroundBrush().color().name() == theme.DARK.plot_background
    tree.shutdown()
    align.shutdown()
    diff = FocusView(diverging=True)
    qtbot.addWidget(diff)
    diff.show()
    assert diff.colorbar.colorMap().name == "CET-D1"  # differences keep their blue-white-red map
