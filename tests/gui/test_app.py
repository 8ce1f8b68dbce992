"""The main window with the tiny model (pytest-qt, offscreen), settings, and `nmt-desktop gui --screenshot`."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject, Qt, Slot  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from nmt_desktop import __version__  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.gui.models import panel as models_panel  # noqa: E402
from nmt_desktop.gui.app import MainWindow, default_model_path  # noqa: E402
from nmt_desktop.gui.models.panel import attribution  # noqa: E402
from cli_runner import run_gui_cli  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

# config_dir and open_main_window (never a dialog: errors recorded in window.shown_errors): tests/gui/conftest.py


@pytest.fixture
def window(open_main_window, tiny_model_dir) -> MainWindow:
    window = open_main_window(tiny_model_dir)
    yield window
    window.close()
    assert not window.translate_panel._worker_thread.thread.isRunning()
    assert not window.models_panel._thread.thread.isRunning()


def translate_and_wait(qtbot, panel, text: str | None = None) -> int:
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS) as blocker:
        request = panel.translate(text)
    assert blocker.args[0] == request
    return request


class RowRecorder(QObject):
    """Connected to the worker's `step` after the panel: sees the view right after each step is shown."""

    def __init__(self, panel) -> None:
        super().__init__()
        self.panel, self.rows = panel, []

    @Slot(int, int, object)
    def on_step(self, request_id: int, index: int, step: object) -> None:
        if request_id == self.panel.request_id:
            self.rows.append(self.panel.view.painted_rows())


def test_no_model_shows_empty_state(open_main_window) -> None:
    window = open_main_window(None)
    assert window.translate_stack.currentWidget() is window.empty_state
    assert window.empty_state.title.text() == "No model loaded — Open model…"
    assert not window.translate_panel.translate_button.isEnabled()
    assert window.translate_panel.translate() == 0
    assert "Train" in [window.tabs.tabText(i) for i in range(window.tabs.count())]
    window.close()


def test_default_model_path_prefers_bundled_en_de(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("nmt_desktop.core.locations.bundled_models_dir", lambda: tmp_path)
    assert default_model_path() is None
    for name in ("aa-bb", "en-fr"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text("{}", encoding="utf-8")
    assert default_model_path() == tmp_path / "aa-bb"
    (tmp_path / "en-de").mkdir()
    (tmp_path / "en-de" / "config.json").write_text("{}", encoding="utf-8")
    assert default_model_path() == tmp_path / "en-de"


def test_opens_default_bundled_model_and_lists_it(qtbot, config_dir, tiny_model_dir, tmp_path, monkeypatch) -> None:
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    (bundled / "en-de").symlink_to(tiny_model_dir, target_is_directory=True)
    monkeypatch.setattr(models_panel, "bundled_models_dir", lambda: bundled)
    monkeypatch.setattr("nmt_desktop.core.locations.bundled_models_dir", lambda: bundled)
    monkeypatch.setattr(models_panel, "user_models_dir", lambda: tmp_path / "no-user-models")
    window = MainWindow()  # no model given, no settings: the bundled en-de
    window.show_error = lambda message, title="Error": pytest.fail(message)
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.info is not None, timeout=TIMEOUT_MS)
    assert window.info.name == "en-de"
    assert window.translate_stack.currentWidget() is window.translate_panel
    listed = window.models_panel.bundled_list
    items = [listed.item(i).text() for i in range(listed.count())]
    assert items == ["en-de  (loaded)"]  # the Models list marks the loaded model (issue 29, point 9)
    assert listed.item(0).font().bold()
    assert "tiny synthetic" in window.models_panel.info_view.toPlainText()
    window.close()


def test_ctrl_enter_streams_into_output_and_view(qtbot, window, tiny_translator) -> None:
    panel = window.translate_panel
    assert window.translate_stack.currentWidget() is panel
    recorder = RowRecorder(panel)
    panel.worker.step.connect(recorder.on_step)
    qtbot.keyClicks(panel.source, "red cat runs")
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        qtbot.keyClick(panel.source, Qt.Key_Return, Qt.ControlModifier)
    expected = tiny_translator.translate("red cat runs", DecodeConfig())
    T = len(expected.target_tokens)
    assert panel.output_text() == expected.text
    assert "tok:0:0" in panel.output.toHtml()  # tokens are clickable anchors
    assert panel.view.painted_rows() == T
    assert len(recorder.rows) == T
    assert recorder.rows == sorted(recorder.rows) and recorder.rows[-1] == T and recorder.rows[0] >= 1
    np.testing.assert_allclose(panel.view.data().weights, expected.attention, atol=1e-5)
    assert panel.source.toPlainText() == "red cat runs"  # Ctrl+Enter did not insert a newline
    # hovering a token shows that step's alternatives
    from PySide6.QtCore import QUrl

    from nmt_desktop.core.analysis.words import display_piece

    panel._token_hovered(QUrl("tok:0:1"))
    alts = expected.best.alternatives[1]
    assert panel.alternatives.rowCount() == len(alts)
    assert panel.alternatives.item(0, 0).text() == display_piece(alts[0].piece)  # ·katze, never ▁katze
    shown = [panel.alternatives.item(r, 1).text() for r in range(len(alts))]
    assert shown == [f"{a.prob:.1%}" if a.prob >= 0.001 else "<0.1%" for a in alts]
    assert "0.0%" not in shown  # a nonzero probability never reads as zero
    assert any(a.prob < 0.001 for a in alts)  # the trained tiny model is sure: its 5th choice is tiny
    assert panel.stop_button.isEnabled() is False and panel.translate_button.isEnabled()


def test_translate_button_click_translates_with_self_attention_views(qtbot, window, tiny_translator) -> None:
    panel = window.translate_panel
    qtbot.keyClicks(panel.source, "big dog sleeps")
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(panel.translate_button, Qt.LeftButton)
    assert panel.output_text() == tiny_translator.translate("big dog sleeps").text
    assert set(panel.view.available_kinds()) == {"cross", "encoder", "decoder"}


def test_stop_cancels_and_a_new_translation_works(qtbot, window) -> None:
    panel = window.translate_panel
    panel.options.set_beam(4, 1)
    panel.options.min_length.setValue(200)
    panel.options.max_len_b.setValue(250)
    finished: list[int] = []
    panel.translationFinished.connect(finished.append)

    sent: list[int] = []
    clicked = threading.Event()

    def slow_steps(*_) -> None:  # runs in the worker thread: decoding waits after 3 steps until the click below,
        sent.append(1)  # so it outlasts the click on any machine
        if len(sent) >= 3:
            clicked.wait(TIMEOUT_MS / 1000)

    panel.worker.step.connect(slow_steps, Qt.DirectConnection)
    request = panel.translate("red cat runs big dog sleeps")
    assert panel.stop_button.isEnabled() and panel.running
    qtbot.waitUntil(lambda: bool(panel.sentences) and len(panel.sentences[0].steps) >= 3, timeout=TIMEOUT_MS)
    qtbot.mouseClick(panel.stop_button, Qt.LeftButton)
    clicked.set()
    panel.worker.step.disconnect(slow_steps)
    assert not panel.running and not panel.stop_button.isEnabled() and panel.translate_button.isEnabled()
    shown = len(panel.sentences[0].steps)
    qtbot.waitUntil(lambda: not panel.worker.busy, timeout=TIMEOUT_MS)
    QApplication.sendPostedEvents()  # every signal the worker sent before it went idle, delivered
    assert request not in finished
    assert len(panel.sentences[0].steps) == shown  # stale steps were ignored
    panel.options.set_beam(1)
    panel.options.min_length.setValue(0)
    panel.options.max_len_b.setValue(10)
    new = translate_and_wait(qtbot, panel, "big dog sleeps")
    assert finished == [new] and panel.output_text()


def test_newer_request_supersedes_older(qtbot, window, tiny_translator) -> None:
    panel = window.translate_panel
    finished: list[int] = []
    panel.translationFinished.connect(finished.append)
    first = panel.translate("red cat runs")
    second = translate_and_wait(qtbot, panel, "big dog sleeps")
    QApplication.sendPostedEvents()  # the first request's signals came before the second's finished; then a
    qtbot.wait(100)  # negative check: no late `finished` of the first (fixed wait fine: nothing is awaited)
    assert finished == [second] and first != second
    assert panel.output_text() == tiny_translator.translate("big dog sleeps").text
    assert [s.text for s in panel.sentences] == ["big dog sleeps"]


def test_translate_as_you_type_debounces(qtbot, window, tiny_translator) -> None:
    panel = window.translate_panel
    panel.as_you_type.setChecked(True)
    started: list[int] = []
    panel.translationStarted.connect(started.append)
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        qtbot.keyClicks(panel.source, "green bird eats")
    assert len(started) == 1  # one request after typing stopped, not one per key
    assert panel.output_text() == tiny_translator.translate("green bird eats").text


def test_bad_model_shows_error_and_keeps_previous(qtbot, window, tiny_model_dir, tmp_path) -> None:
    bad = tmp_path / "broken"
    shutil.copytree(tiny_model_dir, bad)
    (bad / "config.json").write_text("{ this is not json", encoding="utf-8")
    before = window.info
    with qtbot.waitSignal(window.errorShown, timeout=TIMEOUT_MS) as blocker:
        window.load_model(bad)
    message = blocker.args[0]
    assert "config.json" in message and "\n" not in message
    assert window.shown_errors == [message]
    assert window.info is before and window.translate_panel.translator is not None
    translate_and_wait(qtbot, window.translate_panel, "red cat")
    assert window.translate_panel.output_text()


def test_beam_nbest_list_selects_hypothesis_attention(qtbot, window) -> None:
    panel = window.translate_panel
    panel.options.set_beam(4, 3)
    translate_and_wait(qtbot, panel, "red cat runs")
    translation = panel.sentences[0].translation
    assert len(translation.nbest) == 3 and panel.nbest_list.count() == 3
    np.testing.assert_allclose(panel.view.data().weights, translation.nbest[0].attention, atol=1e-6)
    panel.select_hypothesis(1)
    np.testing.assert_allclose(panel.view.data().weights, translation.nbest[1].attention, atol=1e-6)
    assert panel.view.painted_rows() == len(translation.nbest[1].tokens)
    assert [p.piece for p in panel.sentences[0].steps] == translation.nbest[1].tokens  # chips follow it
    panel.select_hypothesis(0)
    assert panel.output_text() == translation.nbest[0].text


def test_multi_line_input_lists_lines(qtbot, window, tiny_translator) -> None:
    """Each line is a unit, as in the CLI (core/decoding/document.py); a line that fits is translated whole."""
    panel = window.translate_panel
    translate_and_wait(qtbot, panel, "red cat runs.\n\nbig dog sleeps.")
    assert panel.sentence_list.count() == 2
    assert [s.text for s in panel.sentences] == ["red cat runs.", "big dog sleeps."]
    panel.select_sentence(0)
    first = panel.sentences[0].translation
    np.testing.assert_allclose(panel.view.data().weights, first.attention, atol=1e-6)
    panel.select_sentence(1)
    second = panel.sentences[1].translation
    assert second.text == tiny_translator.translate("big dog sleeps.").text
    np.testing.assert_allclose(panel.view.data().weights, second.attention, atol=1e-6)
    assert panel.view.painted_rows() == len(second.target_tokens)
    assert panel.output_text() == f"{first.text}\n\n{second.text}"  # the user's lines are kept
    assert [t.text for t in tiny_translator.translate_batch(["red cat runs.", "", "big dog sleeps."])] == \
        [first.text, "", second.text]  # as the CLI translates the same lines
    translate_and_wait(qtbot, panel, "red cat runs. big dog sleeps.")
    assert [s.text for s in panel.sentences] == ["red cat runs.", "big dog sleeps."]  # one line: a unit a sentence
    assert panel.output_text() == f"{first.text} {second.text}"  # joined back on the line, with a space


def test_settings_persist_across_windows(qtbot, config_dir, open_main_window, tiny_model_dir) -> None:
    window = open_main_window(tiny_model_dir)
    window.translate_panel.options.set_beam(5, 2)
    window.translate_panel.options.max_len_b.setValue(17)
    window.resize(1100, 700)
    window.close()
    assert (config_dir / "settings.json").is_file()
    again = open_main_window(None)
    options = again.translate_panel.options
    assert options.mode.currentIndex() == 1 and options.beam.value() == 5 and options.nbest.value() == 2
    assert options.max_len_b.value() == 17
    # geometry is saved (the offscreen platform's small virtual screen makes restored sizes unreliable)
    assert isinstance(again.settings.get("geometry"), str) and len(again.settings.get("geometry")) > 20
    assert options.config().beam_size == 5
    assert again.settings.get("last_model") == str(Path(tiny_model_dir))
    assert str(Path(tiny_model_dir)) in again.models_panel.recent
    again.close()
    third = MainWindow()  # no model given: reopens the last model
    qtbot.addWidget(third)
    qtbot.waitUntil(lambda: third.info is not None, timeout=TIMEOUT_MS)
    assert third.info.name == Path(tiny_model_dir).name
    third.close()


def test_int8_switch_reloads_the_model_and_persists(qtbot, open_main_window, tiny_model_dir, tiny_translator) -> None:
    window = open_main_window(tiny_model_dir)
    panel, switch = window.translate_panel, window.translate_panel.options.int8
    assert not switch.isChecked() and not window.info.int8 and not panel.translator.int8
    with qtbot.waitSignal(window.modelChanged, timeout=TIMEOUT_MS) as blocker:
        switch.setChecked(True)
    assert blocker.args[0].int8 and window.info.int8 and panel.translator.int8
    assert window.model_label.text().endswith("· int8")
    translate_and_wait(qtbot, panel, "red cat runs")
    expected = tiny_translator.translate("red cat runs", DecodeConfig()).text  # float32
    assert panel.output_text() == expected  # the tiny model's int8 tokens agree on this sentence
    weights = np.asarray(panel.view.data().weights)  # attention is still shown: every row sums to 1
    assert weights.size and panel.view.painted_rows() > 0
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-3)
    window.close()
    again = open_main_window(None)  # the setting persists: the last model reopens as int8
    assert again.translate_panel.options.int8.isChecked()
    again.close()
    third = MainWindow()
    qtbot.addWidget(third)
    qtbot.waitUntil(lambda: third.info is not None, timeout=TIMEOUT_MS)
    assert third.info.int8 and third.translate_panel.translator.int8
    with qtbot.waitSignal(third.modelChanged, timeout=TIMEOUT_MS):
        third.translate_panel.options.int8.setChecked(False)
    assert not third.info.int8 and not third.translate_panel.translator.int8
    assert "int8" not in third.model_label.text()
    third.close()


def test_about_shows_version_card_and_attribution(qtbot, window) -> None:
    text = window.about_html()
    assert __version__ in text and "tiny synthetic" in text
    assert "What it is" in text or "Architecture" in text  # the readable card page (gui/card_html.py), not raw rows
    assert "None" not in text and "null" not in text and "{" not in text
    card = {"data": "Tatoeba en-de pairs", "license": "CC-BY 2.0 FR"}
    assert "Tatoeba Project (tatoeba.org) via manythings.org/anki" in attribution(card)
    assert attribution({"attribution": "Some corpus"}) == "Some corpus"
    window.show_about()  # non-blocking (open(), not exec())
    assert window._about_box.isVisible() and __version__ in window._about_box.text()
    window._about_box.close()


def test_cli_gui_screenshot(tiny_model_dir, tmp_path) -> None:
    out = tmp_path / "out.png"
    proc = run_gui_cli("-m", str(tiny_model_dir), "--text", "red cat runs", "--focus", "L2H3",
                       "--screenshot", str(out), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    from PySide6.QtGui import QImage

    image = QImage(str(out))
    assert not image.isNull() and image.width() >= 800 and image.height() >= 500
    log_file = tmp_path / "log" / "nmt-desktop.log"
    assert log_file.is_file() and "translated 1 sentence" in log_file.read_text(encoding="utf-8")
    assert (tmp_path / "cfg" / "settings.json").is_file()


def test_cli_gui_bad_model_is_one_line(tmp_path) -> None:
    proc = run_gui_cli("-m", str(tmp_path / "missing-model"), "--text", "x", "--screenshot",
                       str(tmp_path / "x.png"), tmp_path=tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nmt-desktop: error: "), proc.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("args, message", [
    (["gui", "--view", "grid", "--focus", "L1H1"], "--focus chooses the focus view: drop --view grid"),
    (["gui", "--beam", "0"], "--beam"),
    (["gui", "--tab", "nope"], "--tab"),
    (["gui", "--layer", "1", "--head", "2"], "--layer 1 --head 2: the focused head is now --focus L3H2, counted "
                                             "from 1 (--layer 1 --head 2 in the old 0-based spelling is --focus L2H3)"),
    (["gui", "--layer", "2"], "(--layer 2 in the old 0-based spelling is --focus L3H1)"),
    (["gui", "--head", "-1"], "--head -1: the focused head is now --focus L3H2, counted from 1"),
    (["gui", "--focus", "1:2"], "--focus 1:2: heads are now written like L3H2, counted from 1 (1:2 in the old "
                                "0-based spelling is L2H3)"),
    (["gui", "--focus", "x"], "--focus 'x': expected"),
])
def test_cli_gui_usage_errors_exit_2(args, message, capsys) -> None:
    from nmt_desktop.cli.main import main

    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("nmt-desktop: error: ") and message in err[0]
