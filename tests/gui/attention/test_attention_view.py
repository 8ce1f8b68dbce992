"""AttentionView: streaming grid, averages, kinds, word merging, colour scales, focus view, exports.

Real attention comes from the tiny trained model (2 layers x 4 heads) decoding "red cat runs".
"""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtCore import QObject, Signal

from nmt_desktop.core.analysis.attention_data import AttentionData
from nmt_desktop.core.analysis.words import display_piece, word_groups
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.gui.attention.grid import AttentionView
from nmt_desktop.gui.attention.heatmap import LOG_FLOOR
from limits import TIMEOUT_MS


@pytest.fixture(scope="module")
def av_decoded(tiny_translator):
    """(steps, translation) of a streamed decode with encoder and decoder self-attention."""
    stream = tiny_translator.stream("red cat runs", DecodeConfig(self_attention=True))
    steps = list(stream)
    return steps, stream.result


@pytest.fixture
def av_view(qtbot):
    view = AttentionView()
    qtbot.addWidget(view)
    view.resize(1000, 600)
    view.show()
    return view


def _cell(view, layer, head):
    return view.cell_item(layer, head).image


def _move_mouse(widget, local: QtCore.QPointF) -> None:
    event = QtGui.QMouseEvent(QtCore.QEvent.Type.MouseMove, local, QtCore.QPointF(widget.mapToGlobal(local)),
                              QtCore.Qt.MouseButton.NoButton, QtCore.Qt.MouseButton.NoButton,
                              QtCore.Qt.KeyboardModifier.NoModifier)
    QtWidgets.QApplication.sendEvent(widget, event)


def test_streaming_fills_the_grid_row_by_row(av_view, av_decoded):
    steps, tr = av_decoded
    L, H, S = steps[0].cross_attention.shape
    av_view.begin(tr.source_tokens, L, H)
    assert av_view.painted_rows() == 0
    for k, step in enumerate(steps):
        av_view.append_step(step.piece, step.cross_attention)
        rows = k + 1
        assert av_view.painted_rows() == rows
        expected = np.stack([s.cross_attention for s in steps[:rows]], axis=2)  # (L, H, rows, S)
        for layer in range(L):
            for head in range(H):
                np.testing.assert_array_equal(_cell(av_view, layer, head).image, expected[layer, head])
            np.testing.assert_allclose(_cell(av_view, layer, -1).image, expected[layer].mean(axis=0), atol=1e-6)
        np.testing.assert_allclose(_cell(av_view, -1, -1).image, expected.mean(axis=(0, 1)), atol=1e-6)
    data = av_view.data()
    assert data.target_tokens == [s.piece for s in steps]
    np.testing.assert_array_equal(data.weights, tr.attention)  # the streamed rows are the final tensor
    assert av_view.available_kinds() == ["cross"]


def test_set_translation_shows_cells_and_averages(av_view, av_decoded):
    _, tr = av_decoded
    av_view.set_translation(tr)
    L, H, T, S = tr.attention.shape
    assert av_view.painted_rows() == T
    for layer in range(L):
        for head in range(H):
            np.testing.assert_array_equal(_cell(av_view, layer, head).image, tr.attention[layer, head])
        np.testing.assert_allclose(_cell(av_view, layer, -1).image, tr.attention[layer].mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(_cell(av_view, -1, -1).image, tr.attention.mean(axis=(0, 1)), atol=1e-6)
    per_layer, overall = AttentionData.from_translation(tr).averages()
    np.testing.assert_allclose(per_layer, tr.attention.mean(axis=1), atol=1e-6)
    np.testing.assert_allclose(overall, tr.attention.mean(axis=(0, 1)), atol=1e-6)
    assert av_view.data().source_tokens == tr.source_tokens
    assert av_view.data().target_tokens == tr.target_tokens


def test_kind_selector_shows_self_attention_and_disables_missing_kinds(av_view, av_decoded, tiny_translator):
    _, tr = av_decoded
    av_view.set_translation(tr)
    assert av_view.available_kinds() == ["cross", "encoder", "decoder"]
    av_view.set_kind("encoder")
    assert av_view.kind_combo.currentData() == "encoder"
    np.testing.assert_array_equal(av_view.data().weights, tr.encoder_attention)
    assert av_view.data().target_tokens == tr.source_tokens == av_view.data().source_tokens
    np.testing.assert_array_equal(_cell(av_view, 1, 3).image, tr.encoder_attention[1, 3])
    av_view.kind_combo.setCurrentIndex(av_view.kind_combo.findData("decoder"))  # through the selector
    assert av_view.kind() == "decoder"
    np.testing.assert_array_equal(av_view.data().weights, tr.best.self_attention)
    assert av_view.data().source_tokens == tr.target_tokens
    av_view.set_translation(tr)  # the selected kind is kept when available
    assert av_view.kind() == "decoder"

    plain = tiny_translator.translate("red cat runs")  # no self-attention asked for
    av_view.set_translation(plain)
    assert av_view.kind() == "cross"
    model = av_view.kind_combo.model()
    assert [model.item(i).isEnabled() for i in range(3)] == [True, False, False]
    av_view.set_kind("encoder")  # unavailable: ignored
    assert av_view.kind() == "cross"
    np.testing.assert_array_equal(av_view.data().weights, plain.attention)
    with pytest.raises(ValueError):
        av_view.set_kind("nonsense")


def _handmade() -> AttentionData:
    rng = np.random.default_rng(0)
    w = rng.random((2, 3, 4, 4)).astype(np.float32)
    w /= w.sum(axis=-1, keepdims=True)
    return AttentionData("cross", ["▁New", "▁Yo", "rk", "</s>"], ["▁Nue", "va", "▁York", "</s>"], w)


def test_merge_sums_source_pieces_and_averages_target_pieces(av_view):
    data = _handmade()
    w = data.weights
    merged = data.merged()
    assert merged.source_tokens == ["New", "York", "</s>"]
    assert merged.target_tokens == ["Nueva", "York", "</s>"]
    expected = np.zeros((2, 3, 3, 3), dtype=np.float32)
    src = {0: [0], 1: [1, 2], 2: [3]}
    tgt = {0: [0, 1], 1: [2], 2: [3]}
    for r, trows in tgt.items():
        for c, scols in src.items():
            expected[:, :, r, c] = sum(w[:, :, t, s] for t in trows for s in scols) / len(trows)
    np.testing.assert_allclose(merged.weights, expected, atol=1e-6)
    np.testing.assert_allclose(merged.weights.sum(axis=-1), 1.0, atol=1e-5)  # rows still sum to 1

    # the view merges while streaming too (toggle on mid-stream, rows grow as pieces arrive)
    av_view.begin(data.source_tokens, 2, 3)
    av_view.append_step(data.target_tokens[0], w[:, :, 0])
    av_view.set_merge_words(True)
    assert av_view.merge_check.isChecked()
    for t in range(1, 4):
        av_view.append_step(data.target_tokens[t], w[:, :, t])
    shown = av_view.data()
    assert shown.source_tokens == merged.source_tokens and shown.target_tokens == merged.target_tokens
    np.testing.assert_allclose(shown.weights, expected, atol=1e-6)
    np.testing.assert_allclose(_cell(av_view, 1, 2).image, expected[1, 2], atol=1e-6)
    assert av_view.painted_rows() == 3
    av_view.merge_check.setChecked(False)  # back to pieces through the checkbox
    np.testing.assert_array_equal(av_view.data().weights, w)


def test_word_groups_specials_are_words_of_their_own():
    assert word_groups(["<s>", "Hel", "lo", "▁world", "</s>", "x"]) == [[0], [1, 2], [3], [4], [5]]
    merged = AttentionData("cross", [">>fra<<", "▁New", "▁Yo", "rk", "</s>"], ["▁Nue", "va", "</s>"],
                           np.full((1, 1, 3, 5), 0.2, np.float32)).merged()
    assert merged.source_tokens == [">>fra<<", "New", "York", "</s>"]  # a language token is never joined


def test_colour_scales_set_levels(av_view, av_decoded):
    _, tr = av_decoded
    av_view.set_translation(tr)
    L, H = tr.attention.shape[:2]
    keys = [(l, h) for l in range(L) for h in range(-1, H)] + [(-1, -1)]

    def levels(key):
        return tuple(float(x) for x in _cell(av_view, *key).getLevels())

    assert av_view.color_scale() == "cell"  # default: each cell 0..its own max
    for key in keys:
        assert levels(key) == pytest.approx((0.0, float(av_view.data().matrix(*key).max())))
    av_view.set_color_scale("shared")  # one 0..max over the whole grid
    assert av_view.scale_combo.currentData() == "shared"
    for key in keys:
        assert levels(key) == pytest.approx((0.0, float(tr.attention.max())))
    av_view.scale_combo.setCurrentIndex(av_view.scale_combo.findData("log"))  # log10 image, fixed levels
    assert av_view.color_scale() == "log"
    for key in keys:
        assert levels(key) == pytest.approx((np.log10(LOG_FLOOR), 0.0))
    np.testing.assert_allclose(_cell(av_view, 0, 1).image, np.log10(np.maximum(tr.attention[0, 1], LOG_FLOOR)),
                               atol=1e-6)
    np.testing.assert_array_equal(av_view.data().weights, tr.attention)  # data stays raw weights
    with pytest.raises(ValueError):
        av_view.set_color_scale("rainbow")


def test_click_opens_focus_view_and_hover_highlights_everywhere(av_view, av_decoded, qtbot):
    _, tr = av_decoded
    av_view.set_translation(tr)
    qtbot.waitExposed(av_view)
    assert av_view.focus_view.isHidden()
    box = av_view.cell_item(1, 2).box
    pos = av_view.grid.mapFromScene(box.sceneBoundingRect().center())
    with qtbot.waitSignal(av_view.cellActivated, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(av_view.grid.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [1, 2]
    assert not av_view.focus_view.isHidden()
    np.testing.assert_array_equal(av_view.focus_view.matrix(), tr.attention[1, 2])

    av_view.focus(0, -1)  # layer average
    np.testing.assert_allclose(av_view.focus_view.matrix(), tr.attention[0].mean(axis=0), atol=1e-6)
    av_view.focus(-1, -1)  # overall average
    np.testing.assert_allclose(av_view.focus_view.matrix(), tr.attention.mean(axis=(0, 1)), atol=1e-6)

    focus = av_view.focus_view
    with qtbot.waitSignal(focus.hovered, timeout=TIMEOUT_MS) as blocker:
        focus.hover(1, 2)
    assert blocker.args == [1, 2]
    value = tr.attention.mean(axis=(0, 1))[1, 2]
    assert focus.value_label.text() == (f"value under cursor: target '{display_piece(tr.target_tokens[1])}' / "
                                        f"source '{display_piece(tr.source_tokens[2])}' = {value:.3f}")
    assert av_view.highlight() == (1, 2)
    for key in [(0, 0), (1, 3), (1, -1), (-1, -1)]:
        cell = av_view.cell_item(*key)
        assert cell.row_mark.isVisible() and cell.row_mark.rect().top() == 1
        assert cell.col_mark.isVisible() and cell.col_mark.rect().left() == 2

    # a real mouse move over the focus heatmap, on (row 2, col 0)
    scene_pos = focus.plot.vb.mapViewToScene(QtCore.QPointF(0.5, 2.5))
    _move_mouse(focus.graphics.viewport(), QtCore.QPointF(focus.graphics.mapFromScene(scene_pos)))
    assert focus.hovered_cell() == (2, 0)
    assert f"target '{display_piece(tr.target_tokens[2])}'" in focus.value_label.text()
    assert av_view.cell_item(0, 1).row_mark.rect().top() == 2
    focus.hover(-1, -1)
    assert not av_view.cell_item(0, 1).row_mark.isVisible()
    assert focus.value_label.text() == "value under cursor: –"


def _check_png(path):
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) > 2000
    image = QtGui.QImage(str(path))
    assert not image.isNull() and image.width() > 100 and image.height() > 100


def _check_svg(path):
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    assert len(list(root.iter())) > 10


def test_exports_match_the_translation(av_view, av_decoded, tmp_path):
    _, tr = av_decoded
    av_view.set_translation(tr)
    av_view.focus(1, 3)
    for name in ("grid.png", "focus.png"):
        (av_view.export_grid if name.startswith("grid") else av_view.export_focus)(str(tmp_path / name))
        _check_png(tmp_path / name)
    for name in ("grid.svg", "focus.svg"):
        (av_view.export_grid if name.startswith("grid") else av_view.export_focus)(str(tmp_path / name))
        _check_svg(tmp_path / name)

    av_view.export_tensors(str(tmp_path / "t.npz"))
    with np.load(tmp_path / "t.npz", allow_pickle=False) as npz:
        assert npz["weights"].dtype == np.float32
        np.testing.assert_array_equal(npz["weights"], tr.attention)
        assert npz["source_tokens"].dtype.kind == "U" and npz["target_tokens"].dtype.kind == "U"
        assert npz["source_tokens"].tolist() == tr.source_tokens
        assert npz["target_tokens"].tolist() == tr.target_tokens
        assert str(npz["kind"]) == "cross"
        assert "L3 H2 (decoder layer 3, head 2) is weights[2][1]" in str(npz["index"])

    av_view.export_tensors(str(tmp_path / "t.json"))
    obj = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert obj["kind"] == "cross" and obj["source_tokens"] == tr.source_tokens and "weights[2][1]" in obj["index"]
    assert obj["target_tokens"] == tr.target_tokens
    np.testing.assert_array_equal(np.array(obj["weights"], dtype=np.float32), tr.attention)

    av_view.export_focus(str(tmp_path / "focus.csv"))
    with open(tmp_path / "focus.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["Cross-attention · L2 H4", *tr.source_tokens]  # focus(1, 3), as the view titles it
    assert [r[0] for r in rows[1:]] == tr.target_tokens
    numbers = np.array([[float(x) for x in r[1:]] for r in rows[1:]])
    np.testing.assert_allclose(numbers, tr.attention[1, 3], atol=1e-6)

    with pytest.raises(ValueError):
        av_view.export_grid(str(tmp_path / "grid.bmp"))


def test_exports_work_before_the_view_is_shown(qtbot, av_decoded, tmp_path):
    _, tr = av_decoded
    view = AttentionView()  # never shown
    qtbot.addWidget(view)
    view.set_translation(tr)
    view.export_grid(str(tmp_path / "g.png"))
    _check_png(tmp_path / "g.png")
    view.export_focus(str(tmp_path / "f.png"))  # the focus view defaults to the overall average
    _check_png(tmp_path / "f.png")


class _Emitter(QObject):
    step = Signal(str, object)


def test_ten_thousand_steps_through_a_signal(av_view, qtbot):
    emitter = _Emitter()
    emitter.step.connect(av_view.append_step)
    source = ["▁a", "▁b", "c", "▁d", "e", "</s>"]
    att = np.full((2, 4, 6), 1 / 6, dtype=np.float32)
    n = 10_000
    av_view.begin(source, 2, 4, max_rows=n)
    for i in range(n):
        emitter.step.emit("▁x", att)
        if i % 1000 == 999:
            qtbot.wait(1)  # pacing only: paints happen now and then; painted_rows() is set by append_step itself
            assert av_view.painted_rows() == i + 1
    assert av_view.painted_rows() == n
    assert av_view.data().weights.shape == (2, 4, n, 6)

    av_view.begin(source, 2, 4, max_rows=50)  # rows beyond max_rows are counted, not drawn
    for _ in range(80):
        emitter.step.emit("▁x", att)
    assert av_view.painted_rows() == 50 and av_view.dropped_steps == 30


def test_empty_translation_and_nbest_hypotheses(av_view, tiny_translator, tmp_path):
    av_view.set_translation(tiny_translator.translate(""))  # no tokens, no attention: an empty grid
    assert av_view.painted_rows() == 0 and av_view.data().weights.size == 0
    av_view.export_tensors(str(tmp_path / "empty.npz"))
    with np.load(tmp_path / "empty.npz", allow_pickle=False) as npz:
        assert npz["weights"].size == 0

    tr = tiny_translator.translate("red cat runs", DecodeConfig(beam_size=2, nbest=2))
    av_view.set_translation(tr, hypothesis=1)
    np.testing.assert_array_equal(av_view.data().weights, tr.nbest[1].attention)
    assert av_view.data().target_tokens == tr.nbest[1].tokens


def test_hovering_a_grid_cell_highlights_row_and_column_everywhere(av_view, av_decoded, qtbot):
    _, tr = av_decoded
    av_view.set_translation(tr)
    qtbot.waitExposed(av_view)
    box = av_view.cell_item(1, 0).box
    local = QtCore.QPointF(av_view.grid.mapFromScene(box.mapViewToScene(QtCore.QPointF(2.5, 1.5))))
    _move_mouse(av_view.grid.viewport(), local)  # over row 1, column 2 of cell L2 H1
    assert av_view.highlight() == (1, 2)
    mark = av_view.cell_item(0, 3).col_mark
    assert mark.isVisible() and mark.rect().left() == 2


def _matrices(path):
    """(a, d, tags below) of every SVG group with a matrix transform."""
    found = []
    for g in ET.parse(path).getroot().iter():
        transform = g.get("transform", "")
        if g.tag.endswith("}g") and transform.startswith("matrix("):
            a, _b, _c, d, _e, _f = (float(v) for v in transform[7:-1].split(","))
            found.append((a, d, {child.tag.rsplit("}", 1)[-1] for child in g.iter()} - {"g"}))
    return found


def test_focus_svg_draws_heatmap_and_axes_in_one_scale(av_view, av_decoded, tmp_path):
    """Issue 29, point 6: the focus view's SVG had its axes and labels in groups scaled 0.75 (QSvgGenerator's
    72 dpi) beside the heatmap at 1.0, so the heatmap came out 4/3 the size of its axes."""
    _, tr = av_decoded
    av_view.set_translation(tr)
    av_view.focus(1, 3)
    for which in ("focus", "grid"):
        path = tmp_path / f"{which}.svg"
        (av_view.export_focus if which == "focus" else av_view.export_grid)(str(path))
        groups = _matrices(path)
        drawn = [(a, d, tags) for a, d, tags in groups if tags & {"text", "path", "polyline"} and "image" not in tags]
        assert drawn, which
        assert {(a, d) for a, d, _ in drawn} == {(1.0, 1.0)}, (which, sorted({(a, d) for a, d, _ in drawn}))


def test_a_new_48_head_grid_is_built_a_slice_at_a_time_while_streaming(av_view, qtbot, monkeypatch):
    """An OPUS-MT-size grid (6 layers x 8 heads: 55 cells) took ~120 ms of the GUI thread to build when its
    first step arrived; while streaming it is built a slice per event-loop turn, every cell then showing
    the rows streamed so far."""
    from nmt_desktop.gui.attention import grid as attention_view

    monkeypatch.setattr(attention_view, "GRID_BUILD_SLICE_S", 0.0)  # one cell per turn
    layers, heads, source = 6, 8, ["▁a", "▁b", "▁c", "</s>"]
    rng = np.random.default_rng(0)
    rows = [rng.dirichlet(np.ones(len(source)), size=(layers, heads)).astype(np.float32) for _ in range(3)]
    av_view.begin(source, layers, heads)
    av_view.append_step("▁x", rows[0])
    assert 0 < len(av_view.heatmaps.cells) < layers * (heads + 1) + 1  # part of the grid now, the rest later
    av_view.append_step("▁y", rows[1])
    qtbot.waitUntil(lambda: len(av_view.heatmaps.cells) == layers * (heads + 1) + 1, timeout=TIMEOUT_MS)
    av_view.append_step("▁z", rows[2])
    expected = np.stack(rows, axis=2)  # (L, H, 3, S)
    for layer in range(layers):
        for head in range(heads):
            np.testing.assert_array_equal(_cell(av_view, layer, head).image, expected[layer, head])
    assert av_view.cell_item(5, 7).title == "L6 H8"


# --- the finished translation extends what streamed (issue 30, point 2) -----------------------------------

BEAM_TEXTS = ["red cat runs", "cat dog red", "the big red dog sees a small cat", "a b c d e f",
              "small big small big", "red red red cat"]


def _stream_into(view, translator, text, cfg, focus=None):
    """Stream `text` into `view` as the Translate tab does, the focus view open on `focus` if given; (steps,
    Translation, full repaints after the grid was built)."""
    stream = translator.stream(text, cfg)
    steps = list(stream)
    tr = stream.result
    L, H, _ = steps[0].cross_attention.shape
    view.begin(tr.source_tokens, L, H)
    if focus is not None:
        view.focus(*focus)
    built = view.full_repaints
    for step in steps:
        view.append_step(step.piece, step.cross_attention)
    assert view.full_repaints == built  # streamed rows are added, never a full repaint
    return steps, tr, built


def _assert_shows(view, tr):
    T = tr.attention.shape[2]
    assert view.painted_rows() == T and view.data().target_tokens == tr.target_tokens
    np.testing.assert_array_equal(view.data().weights, tr.attention)
    for layer in range(tr.attention.shape[0]):
        for head in range(tr.attention.shape[1]):
            np.testing.assert_array_equal(_cell(view, layer, head).image, tr.attention[layer, head])
        np.testing.assert_allclose(_cell(view, layer, -1).image, tr.attention[layer].mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(_cell(view, -1, -1).image, tr.attention.mean(axis=(0, 1)), atol=1e-6)
    assert all(cell.y_extent == T for cell in view.heatmaps.cells)  # fitted to the final rows


@pytest.mark.parametrize("merge", [False, True])
def test_full_repaints_a_streamed_greedy_translation_finishes_with_none(av_view, tiny_translator, merge):
    """Greedy search streams every row of its translation: the finish paints nothing (0 full repaints after the
    grid was first built, no row painted), it only fits the cells to the rows and offers the other kinds."""
    av_view.set_merge_words(merge)
    _, tr, built = _stream_into(av_view, tiny_translator, "the big red dog sees a small cat",
                                DecodeConfig(self_attention=True), focus=(0, 1))  # an open focus view too
    rows_painted = av_view.row_paints
    av_view.set_translation(tr)
    assert not av_view.streaming
    assert av_view.full_repaints == built and av_view.row_paints == rows_painted
    assert av_view.available_kinds() == ["cross", "encoder", "decoder"]
    if not merge:
        _assert_shows(av_view, tr)
        np.testing.assert_array_equal(av_view.focus_view.matrix(), tr.attention[0, 1])
    else:
        assert av_view.data().target_tokens == AttentionData.from_translation(tr).merged().target_tokens
    av_view.set_translation(tr)  # the same translation again (its sentence selected anew): still nothing
    assert av_view.full_repaints == built
    av_view.set_kind("encoder")  # other content: one full repaint
    assert av_view.full_repaints == built + 1


def test_full_repaints_a_beam_translation_rebuilds_only_when_its_final_best_differs(av_view, tiny_translator):
    """Beam search streams the best live hypothesis of each moment. When the final best is that one (plus its
    "</s>"), the finish adds its last row (no full repaint); when it is another, the grid is repainted then."""
    seen = set()
    for text in BEAM_TEXTS:
        steps, tr, built = _stream_into(av_view, tiny_translator, text, DecodeConfig(beam_size=2))
        n = len(steps)
        extends = ([s.piece for s in steps] == tr.target_tokens[:n]
                   and np.array_equal(np.stack([s.cross_attention for s in steps], axis=2), tr.attention[:, :, :n]))
        rows_painted = av_view.row_paints
        av_view.set_translation(tr)
        if extends:
            seen.add("extends")
            assert av_view.full_repaints == built and av_view.row_paints == rows_painted + 1
        else:
            seen.add("differs")
            assert av_view.full_repaints == built + 1
        _assert_shows(av_view, tr)
    assert seen == {"extends", "differs"}  # the inputs show both cases
