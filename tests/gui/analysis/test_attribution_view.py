"""The Attribution view (issue 31) on the real window and the tiny model, used through its own controls: a
sentence typed into the source editor and translated by click, a method chosen with the keyboard on the combo,
Explain / Words / Faithfulness / Cancel clicked. What it paints is the core's `attribute(...)`, Cancel really
stops the worker, and a new model leaves nothing of the old one on screen."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QComboBox, QFileDialog, QTabWidget, QWidget  # noqa: E402

from nmt_desktop.core.analysis.attribution import METHODS, attribute  # noqa: E402
from nmt_desktop.gui.analysis import attribution_job as job  # noqa: E402
from nmt_desktop.gui.analysis import attribution_view  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

TEXT = "red cat runs"


def click_tab(tabs: QTabWidget, title: str) -> QWidget:
    bar = tabs.tabBar()
    index = next(i for i in range(tabs.count()) if tabs.tabText(i) == title)
    QTest.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(index).center())
    return tabs.currentWidget()


def type_and_translate(qtbot, window, text: str) -> None:
    panel = window.translate_panel
    panel.source.clear()
    QTest.mouseClick(panel.source.viewport(), Qt.LeftButton)
    qtbot.keyClicks(panel.source, text)
    QTest.mouseClick(panel.translate_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not panel.running and panel.document.current() is not None
                    and panel.document.current().translation is not None, timeout=TIMEOUT_MS)


def choose(combo: QComboBox, data: str) -> None:
    """Step the closed combo with the arrow keys (as a user does) until `data` is chosen."""
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key_Home)
    for _ in range(combo.count()):
        if combo.currentData() == data:
            return
        QTest.keyClick(combo, Qt.Key_Down)
    assert combo.currentData() == data


def attribution_page(window):
    click_tab(window.tabs, "Analysis")
    return click_tab(window.analysis_panel.tabs, "Attribution")


def test_every_core_method_is_offered_with_a_description(qtbot):
    view = attribution_view.AttributionView()
    qtbot.addWidget(view)
    offered = [view.method.itemData(i) for i in range(view.method.count())]
    assert tuple(offered) == tuple(METHODS)
    for i, method in enumerate(offered):
        assert view.method.itemData(i, Qt.ToolTipRole) == job.description(method)
    assert view.empty.title.text() == "No model loaded" and not view.run_button.isEnabled()
    view.shutdown()


def test_explain_paints_the_core_attribution_words_and_faithfulness(open_main_window, tiny_model_dir, qtbot, tmp_path,
                                                                     monkeypatch):
    window = open_main_window(tiny_model_dir)
    view = attribution_page(window)
    assert view.pages.currentWidget() is view.empty and view.empty.title.text() == "No translation yet"
    type_and_translate(qtbot, window, TEXT)
    view = attribution_page(window)
    assert view.pages.currentWidget() is view.empty and "Click Explain" in view.empty.hint.text()

    choose(view.method, "leave_one_out")
    assert view.about.text() == job.description("leave_one_out")
    with qtbot.waitSignal(view.explained, timeout=TIMEOUT_MS):
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    translation = window.analysis_panel.translation
    expected = attribute(window.translate_panel.translator, translation, "leave_one_out")
    assert view.pages.currentWidget() is view.result_page
    np.testing.assert_allclose(view.source_view.matrix(), expected.source, atol=1e-5)
    np.testing.assert_allclose(view.prefix_view.matrix(), expected.prefix, atol=1e-5)
    assert view.source_view.tokens() == (expected.source_tokens, expected.target_tokens)
    assert view.source_view.diverging  # signed: a symmetric blue-white-red scale
    share = job.source_share(expected)
    assert "share of |attribution| on the source" in view.share.toPlainText()
    assert f"{share.values[0]:.0%}" in view.share.toPlainText()
    assert "leave one out:" in view.cost.text() and " s for " in view.cost.text()

    QTest.mouseClick(view.words, Qt.LeftButton)  # word level: the core's own .words()
    words = expected.words()
    np.testing.assert_allclose(view.source_view.matrix(), words.source, atol=1e-5)
    assert view.source_view.tokens()[0] == words.source_tokens
    QTest.mouseClick(view.words, Qt.LeftButton)

    with qtbot.waitSignal(view.faithfulnessDone, timeout=TIMEOUT_MS) as blocker:
        QTest.mouseClick(view.faith_button, Qt.LeftButton)
    faith = blocker.args[0]
    assert "Comprehensiveness AOPC" in view.cost.text() and f"{faith.aopc_comprehensiveness:.3f}" in view.cost.text()

    view.export("record", str(tmp_path / "a.json"))
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert data["method"] == "leave_one_out" and data["target_tokens"] == expected.target_tokens
    np.testing.assert_allclose(np.array(data["source"]), expected.source, atol=1e-5)
    assert "faithfulness" in data
    chosen = "Prefix matrix, CSV table (*.csv)"  # the Export… button: the file type picked in its dialog decides
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(tmp_path / "b"), chosen)))
    QTest.mouseClick(view.export_button, Qt.LeftButton)
    assert (tmp_path / "b.csv").read_text(encoding="utf-8").splitlines()[0].split(",")[1:] == [
        t for t in expected.target_tokens]
    view.export("source", str(tmp_path / "s.png"))
    view.export("prefix", str(tmp_path / "p.csv"))
    assert (tmp_path / "s.png").stat().st_size > 1000 and (tmp_path / "p.csv").read_text().count("\n") == len(
        expected.target_tokens) + 1

    # another method: not computed yet, so the view says so instead of showing leave-one-out's heatmaps
    choose(view.method, "saliency")
    assert view.pages.currentWidget() is view.empty
    with qtbot.waitSignal(view.explained, timeout=TIMEOUT_MS):
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    expected = attribute(window.translate_panel.translator, translation, "saliency")
    np.testing.assert_allclose(view.source_view.matrix(), expected.source, rtol=1e-4, atol=1e-5)
    assert not view.source_view.diverging

    # ALTI+: its own source share (source + prefix + start rows are one distribution), labelled as such
    choose(view.method, "alti_plus")
    with qtbot.waitSignal(view.explained, timeout=TIMEOUT_MS):
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    expected = attribute(window.translate_panel.translator, translation, "alti_plus")
    np.testing.assert_allclose(view.source_view.matrix(), expected.source, atol=1e-5)
    share = view.shown_share()
    assert share.own and share.label == "ALTI+ source contribution"
    np.testing.assert_allclose(share.values, expected.source_share, atol=1e-6)
    assert "ALTI+ source contribution" in view.share.toPlainText()


def test_cancel_stops_the_job(open_main_window, tiny_model_dir, qtbot, monkeypatch):
    window = open_main_window(tiny_model_dir)
    type_and_translate(qtbot, window, TEXT)
    view = attribution_page(window)
    outcomes: list[str] = []
    real_explain, real_tick = job.explain, job.Progress.tick

    import threading

    clicked = threading.Event()

    def slow_tick(self, expected):  # after a decoder pass the job waits for the Cancel click, on any machine
        real_tick(self, expected)
        clicked.wait(TIMEOUT_MS / 1000)

    def recorded(*args):
        try:
            result = real_explain(*args)
        except job.Cancelled:
            outcomes.append("cancelled")
            raise
        outcomes.append("finished")
        return result

    monkeypatch.setattr(job.Progress, "tick", slow_tick)
    monkeypatch.setattr(job, "explain", recorded)
    choose(view.method, "integrated_gradients")
    QTest.mouseClick(view.run_button, Qt.LeftButton)
    assert view.running and view.cancel_button.isEnabled() and not view.run_button.isEnabled()
    qtbot.waitUntil(lambda: view.bar.maximum() > 0 and view.bar.value() >= 1, timeout=TIMEOUT_MS)
    assert view.bar.isVisible() and view.bar.maximum() == len(window.analysis_panel.translation.target_ids)
    QTest.mouseClick(view.cancel_button, Qt.LeftButton)
    clicked.set()
    assert not view.running and view.status.text() == "Cancelled." and not view.bar.isVisible()
    assert view.run_button.isEnabled() and view.pages.currentWidget() is view.empty
    qtbot.waitUntil(lambda: outcomes == ["cancelled"], timeout=TIMEOUT_MS)  # the thread stopped mid-way
    assert "integrated_gradients" not in view.results

    monkeypatch.setattr(job.Progress, "tick", real_tick)
    with qtbot.waitSignal(view.explained, timeout=TIMEOUT_MS):  # the worker is free again
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    assert outcomes == ["cancelled", "finished"]


def test_a_new_model_clears_the_view(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    type_and_translate(qtbot, window, TEXT)
    view = attribution_page(window)
    with qtbot.waitSignal(view.explained, timeout=TIMEOUT_MS):
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    old = window.translate_panel.translator
    assert view.pages.currentWidget() is view.result_page

    window.load_model(str(tiny_model_dir))  # the same folder loaded anew: another Translator
    qtbot.waitUntil(lambda: window.translate_panel.translator is not old, timeout=TIMEOUT_MS)
    assert view.results == {} and view.pages.currentWidget() is view.empty
    assert not view.export_button.isEnabled() and not view.faith_button.isEnabled()
    qtbot.waitUntil(lambda: view.translation is not None, timeout=TIMEOUT_MS)  # the text translated again
    assert view.pages.currentWidget() is view.empty and "Click Explain" in view.empty.hint.text()
    assert view.translator is window.translate_panel.translator

    with qtbot.waitSignal(view.explained, timeout=TIMEOUT_MS):  # another sentence: cleared again
        QTest.mouseClick(view.run_button, Qt.LeftButton)
    type_and_translate(qtbot, window, "blue dog sleeps")
    assert view.results == {} and view.pages.currentWidget() is view.empty


def test_headless_screenshot_computes_the_default_method(app_dirs, tiny_model_dir, monkeypatch):
    """`gui --analysis-view attribution --screenshot F.png`: ALTI+ computed and shown before the PNG is saved."""
    from nmt_desktop.cli.main import main as cli_main
    from nmt_desktop.gui.headless import screenshot

    seen: dict = {}
    real = screenshot.prepare_analysis_view

    def spy(window, args) -> None:
        real(window, args)
        view = window.analysis_panel.attribution
        seen.update(current=window.analysis_panel.tabs.currentWidget() is view, method=view.chosen_method(),
                    shown=view.pages.currentWidget() is view.result_page, matrix=view.source_view.matrix().copy(),
                    expected=attribute(window.translate_panel.translator, window.analysis_panel.translation,
                                       "alti_plus").source)

    monkeypatch.setattr(screenshot, "prepare_analysis_view", spy)
    out = app_dirs / "attribution.png"
    assert cli_main(["gui", "-m", str(tiny_model_dir), "--text", TEXT, "--analysis-view", "attribution",
                     "--screenshot", str(out)]) == 0
    assert seen["current"] and seen["shown"] and seen["method"] == "alti_plus"
    np.testing.assert_allclose(seen["matrix"], seen["expected"], atol=1e-5)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
