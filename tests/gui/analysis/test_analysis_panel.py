"""The Analysis tab with the tiny model (pytest-qt, offscreen): head statistics, ablation, coverage (the
Alignments view: test_alignment_view.py).

Every number shown is checked against the core (`nmt_desktop.core.analysis.head_statistics`,
`ablation`, `coverage`) on the same translation.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from nmt_desktop.core.analysis import ablation as head_ablation  # noqa: E402
from nmt_desktop.core.analysis import coverage, head_statistics  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.gui.analysis.head_stats import STAT_FIELDS, HeadStatsView  # noqa: E402
from nmt_desktop.gui.analysis.panel import AnalysisPanel  # noqa: E402
from nmt_desktop.gui.analysis.tokens import token_diff  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402
from qt_layout import wait_laid_out  # noqa: E402

TEXT = "red cat runs"
CFG = DecodeConfig(attention=True, alternatives=5)


@pytest.fixture
def panel(qtbot, tiny_translator):
    panel = AnalysisPanel()
    qtbot.addWidget(panel)
    panel.set_translator(tiny_translator)
    panel.resize(1100, 700)
    panel.show()
    yield panel
    panel.shutdown()
    assert not panel.ablation._thread.thread.isRunning()


@pytest.fixture(scope="module")
def translation(tiny_translator):
    return tiny_translator.translate(TEXT, CFG)


def test_head_stats_table_matches_core(panel, translation, tiny_translator) -> None:
    panel.set_translation(translation, CFG)
    expected = head_statistics.head_stats(translation)
    cfg = tiny_translator.config
    table = panel.stats.table
    assert table.rowCount() == len(expected) == cfg.decoder_layers * cfg.n_heads
    shown = {}
    for r in range(table.rowCount()):
        key = next((s.layer, s.head) for s in expected if table.item(r, 1).text() == f"L{s.layer + 1} H{s.head + 1}")
        assert table.item(r, 0).text() == f"L{key[0] + 1}"  # counted from 1, like every view
        shown[key] = [table.item(r, 2 + c).text() for c in range(len(STAT_FIELDS))]
    for s in expected:
        assert shown[(s.layer, s.head)] == [f"{getattr(s, f):.3f}" for f in STAT_FIELDS]
    for field in ("entropy", "diagonality", "coverage"):
        column = 2 + STAT_FIELDS.index(field)
        panel.stats.sort_by(field, descending=True)
        values = panel.stats.column_values(column)
        assert values == sorted(values, reverse=True)
        assert values == pytest.approx(sorted((getattr(s, field) for s in expected), reverse=True))
        panel.stats.sort_by(field, descending=False)
        assert panel.stats.column_values(column) == sorted(values)


def test_grid_is_ordered_by_statistic(panel, translation) -> None:
    panel.set_translation(translation, CFG)
    expected = head_statistics.head_stats(translation)
    for field in ("entropy", "monotonicity", "eos_share"):
        panel.stats.set_grid_statistic(field)
        order = panel.stats.grid_order
        assert len(order) == len(expected) == len(panel.stats.grid_images)
        by_key = {(s.layer, s.head): getattr(s, field) for s in expected}
        values = [by_key[k] for k in order]
        assert values == sorted(values, reverse=True)
        first = panel.stats.grid_images[0].image
        np.testing.assert_allclose(first, translation.attention[order[0][0], order[0][1]], rtol=1e-6)


def test_hidden_grid_is_built_only_when_shown(qtbot, translation) -> None:
    """A translation finishing while the Analysis tab is hidden must neither compute the statistics nor build
    the heatmap grid (for an OPUS-MT-size model ~20 ms and ~290 ms of the GUI thread, measured as stalls)."""
    view = HeadStatsView()
    qtbot.addWidget(view)
    view.set_translation(translation)
    heads = translation.attention.shape[0] * translation.attention.shape[1]
    assert not view.grid_order and view.table.rowCount() == 0  # nothing computed yet
    assert not view.graphics.ci.items  # nothing built yet
    view.show()
    qtbot.waitExposed(view)
    assert len(view.grid_order) == heads and view.table.rowCount() == heads
    assert not view._grid_dirty and len(view._grid_images) == heads
    box = view.graphics.ci.items and next(iter(view.graphics.ci.items))
    # one view box holds every head's image, side by side and never overlapping
    rects = [image.mapRectToParent(image.boundingRect()) for image in view._grid_images]
    assert all(image.getViewBox() is box for image in view._grid_images)
    assert not any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])


def test_ablating_all_heads_changes_the_translation(qtbot, panel, translation, tiny_translator) -> None:
    panel.set_translation(translation, CFG)
    ablation = panel.ablation
    ablation.set_all(True)
    assert len(ablation.selected_heads()) == len(head_ablation.all_heads(tiny_translator))
    with qtbot.waitSignal(ablation.retranslated, timeout=TIMEOUT_MS) as blocker:
        assert ablation.retranslate()
        assert not ablation.run_button.isEnabled()  # running on the worker, the UI thread is free
    result = blocker.args[0]
    expected = tiny_translator.translate(TEXT, CFG, head_mask=head_ablation.ablation_mask(
        tiny_translator, head_ablation.all_heads(tiny_translator)))
    assert result.target_tokens == expected.target_tokens
    assert result.target_tokens != translation.target_tokens
    _, changed = token_diff(translation.target_tokens, result.target_tokens)
    assert changed
    assert "changed" in ablation.status.text()
    assert ablation.run_button.isEnabled()


def test_mean_ablation_of_one_head_uses_probe_means(qtbot, panel, translation, tiny_translator) -> None:
    panel.set_translation(translation, CFG)
    ablation = panel.ablation
    ablation.set_heads([(1, 2)])
    ablation.mode.setCurrentIndex(1)
    ablation.probe.setPlainText("red cat runs\nblue dog sleeps")
    with qtbot.waitSignal(ablation.retranslated, timeout=TIMEOUT_MS) as blocker:
        ablation.retranslate()
    means = head_ablation.head_means(tiny_translator, ["red cat runs", "blue dog sleeps"])
    expected = tiny_translator.translate(TEXT, CFG, head_override=head_ablation.mean_override(means, [(1, 2)]))
    assert blocker.args[0].target_tokens == expected.target_tokens


def test_token_diff() -> None:
    assert token_diff(["a", "b", "c"], ["a", "x", "c", "d"]) == ({1}, {1, 3})
    assert token_diff(["a"], ["a"]) == (set(), set())


def test_coverage_list_matches_core(panel, translation) -> None:
    panel.set_translation(translation, CFG)
    view = panel.coverage
    assert view.warnings == coverage.coverage_warnings(translation, low=0.3)
    view.low.setValue(5.0)  # every source word is a possible omission
    expected = coverage.coverage_warnings(translation, low=5.0)
    assert view.warnings == expected
    assert sum(w.kind == "omission" for w in expected) == len(TEXT.split())
    assert view.list.count() == len(expected)
    assert "red" in view.list.item(0).text()


def test_forced_alternative_redecodes_with_the_prefix(qtbot, panel, translation, tiny_translator) -> None:
    panel.set_translation(translation, CFG)
    step = 1
    alt = translation.best.alternatives[step][1]  # the second most probable token at step 1
    assert alt.token_id != translation.target_ids[step]
    view = panel.forced
    with qtbot.waitSignal(view.forcedDone, timeout=TIMEOUT_MS) as blocker:
        assert panel.force_alternative(translation, step, alt.token_id, CFG)
    new = blocker.args[0]
    prefix = translation.target_ids[:step] + [alt.token_id]
    assert new.target_ids[: step + 1] == prefix == view.prefix
    assert new.target_ids == tiny_translator.translate(TEXT, CFG, prefix=prefix).target_ids
    assert panel.tabs.currentWidget() is view
    rows = min(len(new.target_ids), len(translation.target_ids))
    expected = new.attention[-1].mean(0)[:rows] - translation.attention[-1].mean(0)[:rows]
    np.testing.assert_allclose(view.diff.matrix(), expected, atol=1e-6)
    np.testing.assert_allclose(view.diff.matrix()[:step + 1], 0.0, atol=1e-5)  # same inputs up to the forced token
    view.layer.setCurrentIndex(1)  # all layers
    expected = new.attention.mean((0, 1))[:rows] - translation.attention.mean((0, 1))[:rows]
    np.testing.assert_allclose(view.diff.matrix(), expected, atol=1e-6)


def test_beam_tree_draws_every_node_and_shows_node_attention(qtbot, panel, translation, tiny_translator) -> None:
    panel.set_translation(translation, CFG)
    view = panel.beam_tree
    view.beam.setValue(3)
    with qtbot.waitSignal(view.decoded, timeout=TIMEOUT_MS) as blocker:
        assert view.decode()
    state = blocker.args[0]
    assert len(view.items) == len(state.tree) > 0
    statuses = {n.status for n in state.tree}
    assert {"kept", "finished", "pruned"} <= statuses
    pruned = next(n for n in state.tree if n.status == "pruned")
    assert view.items[pruned.id].brush().color().name() == "#f3f4f6"  # greyed
    expected_best = tiny_translator.translate(TEXT, DecodeConfig(beam_size=3, attention=True)).target_ids
    assert view.result.target_ids == expected_best

    node = max((n for n in state.tree if n.status == "finished"), key=lambda n: n.step)
    item = view.items[node.id]
    view.graphics.centerOn(item)
    wait_laid_out(qtbot, view)  # scrolled and laid out: the node is where mapFromScene says
    point = view.graphics.mapFromScene(item.rect().center())
    qtbot.mouseClick(view.graphics.viewport(), Qt.LeftButton, pos=point)  # a real click on the node
    assert view.selected == node.id
    attn = state.node_attention(node.id)
    np.testing.assert_allclose(view.focus.matrix(), attn[-1].mean(0), rtol=1e-6)
    assert view.focus.tokens()[1] == tiny_translator.target_pieces(state.node_tokens(node.id))
    view.head.setCurrentIndex(view.head.count() - 1)  # the last layer's last head
    L, H = attn.shape[:2]
    np.testing.assert_allclose(view.focus.matrix(), attn[L - 1, H - 1], rtol=1e-6)


def test_compare_two_models(qtbot, panel, translation, tiny_translator, tiny_model_dir) -> None:
    from tiny_models import perturbed_model  # tests/ is on sys.path (conftest.py)

    from nmt_desktop.core.decoding.translator import Translator

    panel.set_translation(translation, CFG)
    view = panel.compare
    assert not view.run_button.isEnabled()  # no model B yet
    with qtbot.waitSignal(view.otherLoaded, timeout=TIMEOUT_MS):
        view.load_other(str(tiny_model_dir))  # the same weights from disk: identical tokens, zero difference
    view.layer.setValue(2)  # L2 H3, counted from 1: attention[1, 2]
    view.head.setValue(3)
    with qtbot.waitSignal(view.compared, timeout=TIMEOUT_MS) as blocker:
        assert view.compare()
    a, b = blocker.args
    assert a.target_tokens == b.target_tokens == translation.target_tokens
    np.testing.assert_allclose(view.view_a.matrix(), a.attention[1, 2], rtol=1e-6)
    np.testing.assert_allclose(view.view_b.matrix(), b.attention[1, 2], rtol=1e-6)
    np.testing.assert_allclose(view.view_diff.matrix(), b.attention[1, 2] - a.attention[1, 2], atol=1e-6)

    other = Translator(perturbed_model(tiny_translator.config, seed=3), tiny_translator.tokenizers, name="untrained")
    view.set_other(other)
    with qtbot.waitSignal(view.compared, timeout=TIMEOUT_MS) as blocker:
        view.compare()
    a, b = blocker.args
    assert a.target_tokens != b.target_tokens
    np.testing.assert_allclose(view.view_b.matrix(), b.attention[1, 2], rtol=1e-6)
    assert view.view_diff.matrix().size == 0 and "differ" in view.status.text()


def test_compare_models_with_different_vocabularies(qtbot, panel, translation) -> None:
    """Like en-de against en-fr: model B has its own tokenizers (vocabulary sizes), fewer layers and heads.
    Both attentions are shown with their own tokens; no B - A map, and the view says why."""
    from tiny_models import perturbed_model, synthetic_pairs, tiny_config

    from nmt_desktop.core.tokenizer import TokenizerPair
    from nmt_desktop.core.decoding.translator import Translator

    pairs = synthetic_pairs(300, seed=7)
    tokenizers = TokenizerPair.train([s for s, _ in pairs], [t for _, t in pairs], vocab_size=300, joint=False)
    cfg = tiny_config(tokenizers, d_model=32, n_heads=2, decoder_layers=1, ffn_dim=64)
    panel.set_translation(translation, CFG)
    view = panel.compare
    view.set_other(Translator(perturbed_model(cfg, seed=4), tokenizers, name="other vocabulary"))
    assert (view.layer.maximum(), view.head.maximum()) == (1, 2)  # what both models have: L1, H1..H2
    view.head.setValue(2)
    with qtbot.waitSignal(view.compared, timeout=TIMEOUT_MS) as blocker:
        assert view.compare()
    a, b = blocker.args
    assert a.source_tokens != b.source_tokens or a.target_tokens != b.target_tokens
    np.testing.assert_allclose(view.view_a.matrix(), a.attention[0, 1], rtol=1e-6)
    np.testing.assert_allclose(view.view_b.matrix(), b.attention[0, 1], rtol=1e-6)
    assert view.view_a.tokens() == (a.source_tokens, a.target_tokens)
    assert view.view_b.tokens() == (b.source_tokens, b.target_tokens)
    assert "A (" in view.texts.toPlainText() and "B (other vocabulary)" in view.texts.toPlainText()
    assert view.view_diff.matrix().size == 0
    assert "only computed where the token sequences match" in view.status.text()


def test_window_feeds_the_analysis_tab(qtbot, tmp_path, monkeypatch, tiny_model_dir) -> None:
    from nmt_desktop.gui.app import MainWindow

    monkeypatch.setenv("NMT_DESKTOP_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("NMT_DESKTOP_LOG_DIR", str(tmp_path / "logs"))
    window = MainWindow(model=str(tiny_model_dir))
    window.show_error = lambda message, title="Error": pytest.fail(message)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.info is not None, timeout=TIMEOUT_MS)
    try:
        panel = window.translate_panel
        with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
            panel.translate(TEXT)
        analysis_panel = window.tab("analysis")
        assert analysis_panel is window.analysis_panel
        shown = panel.sentences[0].translation
        assert analysis_panel.translation is shown
        assert analysis_panel.stats.table.rowCount() == 0  # the hidden page computes nothing yet
        window.show_tab("analysis")
        analysis_panel.tabs.setCurrentWidget(analysis_panel.stats)
        assert analysis_panel.stats.table.rowCount() == shown.attention.shape[0] * shown.attention.shape[1]
        window.show_tab("translate")
        # right-click an alternative on the Translate tab: the Analysis tab re-decodes with it forced
        state = panel.sentences[0]
        panel.show_alternatives(state.steps[1])
        alt = shown.best.alternatives[1][2]
        with qtbot.waitSignal(analysis_panel.forced.forcedDone, timeout=TIMEOUT_MS) as blocker:
            panel.alternatives.setCurrentCell(2, 0)
            panel.force_action.trigger()
        assert blocker.args[0].target_ids[:2] == shown.target_ids[:1] + [alt.token_id]
        assert window.tabs.currentWidget() is analysis_panel

        # coverage warnings under the Translate tab's output equal the core's for what was shown
        window.show_tab("translate")
        assert not panel.coverage_label.isVisible() and panel.coverage == [[]]
        with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
            panel.translate("red red red red red red red red red")
        shown = panel.sentences[0].translation
        expected = coverage.coverage_warnings(shown)
        assert panel.coverage == [expected] and expected == analysis_panel.coverage.warnings
        assert panel.coverage_label.isVisible() == bool(expected)
        # an omission is spelled out (whether this tiny model omits a word depends on its training
        # threads, so the warning itself is given here)
        omission = coverage.CoverageWarning("omission", 0, shown.source_tokens[0], 0.1)
        from nmt_desktop.gui.translate import quality_hint

        monkeypatch.setattr(quality_hint, "coverage_warnings", lambda translation, **kw: [omission])
        panel._show_coverage([shown])
        assert panel.coverage_label.isVisible() and "“red” (possible omission)" in panel.coverage_label.text()
        from nmt_desktop.gui import theme

        panel._render_output()  # coverage holds the omission only (the model's own warnings depend on its threads)
        assert theme.current().diffuse_background not in panel.output.toHtml().lower()  # an omission paints no token
        panel.coverage = [[coverage.CoverageWarning("diffuse", 2, shown.target_tokens[2], 9.0)]]
        panel._render_output()  # a diffuse token is highlighted in the output
        assert theme.current().diffuse_background in panel.output.toHtml().lower()

        # two sentences: the analysis follows the sentence selected on the Translate tab
        with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
            panel.translate("red cat runs.\nblue dog sleeps.")
        assert len(panel.sentences) == 2
        assert analysis_panel.translation is panel.sentences[panel.shown_sentence].translation
        panel.select_sentence(1)
        assert analysis_panel.translation is panel.sentences[1].translation
        assert analysis_panel.stats.rows == head_statistics.head_stats(panel.sentences[1].translation)
    finally:
        window.close()
    assert not window.analysis_panel.ablation._thread.thread.isRunning()
