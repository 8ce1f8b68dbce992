"""AttentionRows (core/analysis/attention_rows.py): the one stacked buffer the attention grid paints from.

Streamed rows and finished translations fill it through the same code (`head_averages` for the layer and
overall means); a finished translation extends what streamed instead of replacing it; everything read out
of it is a read-only view. Real attention comes from the tiny trained model (2 layers x 4 heads).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from nmt_desktop.core.analysis import attention_rows
from nmt_desktop.core.analysis.attention_data import AttentionData
from nmt_desktop.core.analysis.attention_data import head_averages
from nmt_desktop.core.analysis.attention_rows import AttentionRows, cell_count
from nmt_desktop.core.config import DecodeConfig

TEXTS = ["red cat runs", "cat dog red", "the big red dog sees a small cat", "a b c d e f", "small big small big",
         "red red red cat"]


def _streamed(translator, text: str, cfg: DecodeConfig) -> tuple[AttentionRows, object]:
    """(rows filled step by step as the GUI streams them, the finished Translation)."""
    stream = translator.stream(text, cfg)
    steps = list(stream)
    L, H, _ = steps[0].cross_attention.shape
    rows = AttentionRows()
    rows.begin(stream.result.source_tokens, L, H)
    for step in steps:
        assert rows.append(step.piece, step.cross_attention)
    return rows, stream.result


def _random(layers=2, heads=3, rows=5, cols=4, seed=0) -> np.ndarray:
    w = np.random.default_rng(seed).random((layers, heads, rows, cols)).astype(np.float32)
    return w / w.sum(axis=-1, keepdims=True)


def test_head_averages_are_the_layer_and_overall_means():
    w = _random()
    per_layer, overall = head_averages(w)
    assert per_layer.dtype == overall.dtype == np.float32
    np.testing.assert_allclose(per_layer, w.mean(axis=1), atol=1e-7)
    np.testing.assert_allclose(overall, w.mean(axis=(0, 1)), atol=1e-7)
    empty_layer, empty_all = head_averages(np.zeros((0, 0, 3, 2), np.float32))
    assert empty_layer.shape == (0, 3, 2) and empty_all.shape == (3, 2) and not empty_all.any()


def test_cells_are_heads_then_their_mean_per_layer_and_the_overall_mean_last():
    w = _random()
    data = AttentionData("cross", list("abcd"), list("vwxyz"), w)
    rows = AttentionRows()
    rows.show(data)
    assert (rows.layers, rows.heads, rows.rows, rows.cols, rows.cells) == (2, 3, 5, 4, cell_count(2, 3)) == \
        (2, 3, 5, 4, 9)
    stack = rows.stack()
    per_layer, overall = data.averages()  # AttentionData's averages are head_averages too
    for layer in range(2):
        for head in range(3):
            np.testing.assert_array_equal(stack[rows.cell_index(layer, head)], w[layer, head])
        np.testing.assert_array_equal(stack[rows.cell_index(layer, -1)], per_layer[layer])
        np.testing.assert_array_equal(data.matrix(layer, -1), per_layer[layer])
    np.testing.assert_array_equal(stack[rows.cell_index(-1, -1)], overall)
    np.testing.assert_array_equal(rows.weights(), w)
    _, top = rows.shown()
    np.testing.assert_array_equal(top, stack.max(axis=(1, 2)))
    with pytest.raises(IndexError):
        rows.cell_index(2, 0)
    with pytest.raises(IndexError):
        rows.cell_index(0, 3)


def test_streamed_rows_equal_the_finished_translation_bit_for_bit(tiny_translator):
    """Streaming and a finished translation go through the same writes: the same cells, averages included."""
    streamed, tr = _streamed(tiny_translator, "the big red dog sees a small cat", DecodeConfig())
    finished = AttentionRows()
    finished.show(AttentionData.from_translation(tr))
    np.testing.assert_array_equal(streamed.stack(), finished.stack())
    np.testing.assert_array_equal(streamed.shown()[1], finished.shown()[1])
    assert streamed.target_tokens == finished.target_tokens == tr.target_tokens


def test_a_greedy_translation_extends_what_streamed_by_nothing(tiny_translator):
    rows, tr = _streamed(tiny_translator, "red cat runs", DecodeConfig())
    before = rows.stack()
    assert rows.extend(AttentionData.from_translation(tr)) == 0
    after = rows.stack()
    assert np.shares_memory(before, after)  # the same buffer: nothing rebuilt
    np.testing.assert_array_equal(rows.weights(), tr.attention)


def test_a_beam_translation_extends_its_stream_only_when_its_best_is_what_streamed(tiny_translator):
    """Beam search streams the best live hypothesis of each moment: the final best is often that one plus its
    "</s>" row (extended by one row), sometimes another one (None: nothing is changed, the caller rebuilds)."""
    seen = set()
    for text in TEXTS:
        rows, tr = _streamed(tiny_translator, text, DecodeConfig(beam_size=2))
        held, tokens = rows.stack().copy(), list(rows.target_tokens)
        data = AttentionData.from_translation(tr)
        added = rows.extend(data)
        if added is None:
            seen.add("differs")
            np.testing.assert_array_equal(rows.stack(), held)  # untouched
            assert rows.target_tokens == tokens
            rows.show(data)
        else:
            seen.add("extends")
            assert added == data.rows - len(tokens) >= 1
            np.testing.assert_array_equal(rows.stack()[:, : len(tokens)], held)
        np.testing.assert_array_equal(rows.weights(), tr.attention)
        assert rows.target_tokens == tr.target_tokens
    assert seen == {"differs", "extends"}  # the inputs show both cases


def test_extend_refuses_other_content():
    w = _random()
    rows = AttentionRows()
    rows.show(AttentionData("cross", list("abcd"), list("vwxyz"), w[:, :, :3]))
    other = w.copy()
    other[1, 2, 0] = np.roll(other[1, 2, 0], 1)
    for data in (AttentionData("cross", list("abcd"), list("vwXyz"), w),  # another token
                 AttentionData("cross", list("abcd"), list("vwxyz"), other),  # other weights
                 AttentionData("cross", list("abce"), list("vwxyz"), w),  # another source
                 AttentionData("decoder", list("abcd"), list("vwxyz"), w),  # another kind
                 AttentionData("cross", list("abcd"), list("vw"), w[:, :, :2])):  # fewer rows
        assert rows.extend(data) is None
        assert rows.rows == 3
    assert rows.extend(AttentionData("cross", list("abcd"), list("vwxyz"), w)) == 2
    np.testing.assert_array_equal(rows.weights(), w)


def test_views_are_read_only_and_outlive_new_content():
    w = _random()
    rows = AttentionRows()
    rows.show(AttentionData("cross", list("abcd"), list("vwxyz"), w))
    weights, stack = rows.weights(), rows.stack()
    for view in (weights, stack, rows.shown()[0]):
        with pytest.raises(ValueError):
            view[0, 0, 0] = 1.0
    rows.show(AttentionData("cross", list("abcd"), list("vwxyz"), _random(seed=1)))  # new content: a new buffer
    np.testing.assert_array_equal(weights, w)
    rows.begin(list("ab"), 2, 3)
    rows.append("x", np.full((2, 3, 2), 0.5, np.float32))
    np.testing.assert_array_equal(weights, w)


def test_max_rows_drops_streamed_steps_and_the_finish_adds_them():
    w = _random(rows=40)
    rows = AttentionRows()
    rows.begin(list("abcd"), 2, 3, max_rows=25)
    kept = [rows.append(f"t{r}", w[:, :, r]) for r in range(40)]
    assert kept == [True] * 25 + [False] * 15 and rows.rows == 25 and rows.dropped == 15
    with pytest.raises(ValueError):
        rows.append("x", w[:, :, 0, :3])
    assert rows.extend(AttentionData("cross", list("abcd"), [f"t{r}" for r in range(40)], w)) == 15
    assert rows.rows == 40 and rows.dropped == 0
    np.testing.assert_array_equal(rows.weights(), w)


def test_merged_words_are_made_for_the_paint_from_the_pieces():
    w = _random(rows=4, cols=4)
    data = AttentionData("cross", ["▁New", "▁Yo", "rk", "</s>"], ["▁Nue", "va", "▁York", "</s>"], w)
    rows = AttentionRows()
    rows.show(data)
    merged = data.merged()
    cells, top = rows.shown(merged=True)
    assert rows.tokens(merged=True) == (merged.source_tokens, merged.target_tokens) == \
        (["New", "York", "</s>"], ["Nueva", "York", "</s>"])
    per_layer, overall = merged.averages()
    np.testing.assert_allclose(cells[rows.cell_index(1, 2)], merged.weights[1, 2], atol=1e-6)
    np.testing.assert_allclose(cells[rows.cell_index(0, -1)], per_layer[0], atol=1e-6)
    np.testing.assert_allclose(cells[rows.cell_index(-1, -1)], overall, atol=1e-6)
    np.testing.assert_array_equal(top, cells.max(axis=(1, 2)))
    assert rows.tokens() == (data.source_tokens, data.target_tokens)  # the pieces are what is held


def test_empty_content():
    rows = AttentionRows()
    rows.clear("encoder")
    assert rows.kind == "encoder" and rows.cells == 0 and rows.weights().shape == (0, 0, 0, 0)
    rows.show(AttentionData("cross", ["a"], [], np.zeros((2, 3, 0, 1), np.float32)))
    assert rows.rows == 0 and rows.stack().shape == (9, 0, 1) and rows.weights().shape == (2, 3, 0, 1)


def test_the_model_imports_numpy_and_the_core_only():
    """No Qt, no torch in the model itself (the layering contract keeps Qt out of the core as a whole)."""
    tree = ast.parse(Path(attention_rows.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"__future__", "collections.abc", "numpy", "nmt_desktop.core.analysis.words",
                        "nmt_desktop.core.analysis.attention_data"}  # no Qt, no torch
