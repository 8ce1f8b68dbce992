"""Issue 41: Stop during beam search keeps only whole, finished sentences (pytest-qt, offscreen, bundled en-de).

The user's case: many sentences, beam 4, Esc while the translation runs. Before the fix the pane kept what had
streamed, each position's best live token ("gekauft.. Wo ist der nächste Bahnhof??"), and the cut sentence's
half, and "Use model's translation" copied them. The worker is held (not timed) inside sentence CUT + 1, so the
Stop lands there on any machine.
"""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from limits import SLOW_TIMEOUT_MS, TIMEOUT_MS  # noqa: E402

SENTENCES = ["I bought a new car yesterday.", "Where is the nearest train station?",
             "The cat sleeps in front of the bed.", "Before going to bed, I read a book.",
             "We went to the market and bought fruit.", "My sister lives in a small house near the river.",
             "The children are playing in the garden.", "He is my brother."] * 2
CUT = 5  # 0-based: sentences 1-5 finish, the sixth is cut by the Stop


class HoldInside:
    """A step slot run on the worker thread (a direct connection): at step `at` of unit `unit` it blocks until
    `release()`, so the request is surely mid-sentence when the test stops it."""

    def __init__(self, unit: int, at: int = 2):
        self.unit, self.at = unit, at
        self.reached, self._gate = threading.Event(), threading.Event()

    def __call__(self, request_id: int, index: int, step) -> None:
        if index == self.unit and step.index >= self.at and not self.reached.is_set():
            self.reached.set()
            self._gate.wait(TIMEOUT_MS / 1000)

    def release(self) -> None:
        self._gate.set()


def test_stop_mid_sentence_keeps_only_finished_sentences(qtbot, open_main_window):
    from nmt_desktop.core.locations import bundled_models_dir

    window = open_main_window(bundled_models_dir() / "en-de")
    panel = window.translate_panel
    statuses: list[str] = []
    panel.statusMessage.connect(statuses.append)
    panel.options.set_beam(4, 2)
    for k, sentence in enumerate(SENTENCES):  # typed, a line each
        qtbot.keyClicks(panel.source, sentence)
        if k + 1 < len(SENTENCES):
            QTest.keyClick(panel.source, Qt.Key_Return)
    assert panel.source.toPlainText().split("\n") == SENTENCES
    hold = HoldInside(CUT)
    panel.worker.step.connect(hold, Qt.DirectConnection)
    try:
        qtbot.mouseClick(panel.translate_button, Qt.LeftButton)
        cut = lambda: panel.sentences[CUT].steps if len(panel.sentences) > CUT else []  # noqa: E731
        qtbot.waitUntil(lambda: hold.reached.is_set() and len(cut()) > hold.at, timeout=SLOW_TIMEOUT_MS)
        finished = [u.translation is not None for u in panel.sentences]
        assert finished == [True] * CUT + [False] * (len(SENTENCES) - CUT)  # each sentence is kept as it finishes
        # while it streams, the cut sentence shows one hypothesis of the search, attention and tokens alike
        assert panel.shown_sentence == CUT and panel.view.data().target_tokens == [s.piece for s in cut()]
        assert [s.token_id for s in cut()] == cut()[-1].prefix_ids
        partial = panel.output_text().split("\n")[CUT]
        assert partial  # the cut sentence's partial hypothesis is on screen until the Stop
        window.activateWindow()
        QTest.keyClick(panel.source, Qt.Key_Escape)  # Translate > Stop's shortcut
        assert not panel.running and not panel.stop_button.isEnabled()
    finally:
        hold.release()
        panel.worker.step.disconnect(hold)
    qtbot.waitUntil(lambda: not panel.worker.busy, timeout=TIMEOUT_MS)

    cfg = panel.last_config
    expected = [panel.translator.translate(s, cfg).text for s in SENTENCES[:CUT]]
    assert panel.output_text().rstrip("\n").split("\n") == expected  # whole sentences only, the model's final ones
    assert partial not in panel.output_text() and all(".." not in t and "??" not in t for t in expected)
    report = f"Stopped: {CUT} of {len(SENTENCES)} sentences translated; sentence {CUT + 1} was cut"
    assert statuses[-1].startswith(report) and report in panel.stop_note.text()
    assert panel.stop_note.isVisible()
    assert "cut" in panel.sentence_list.item(CUT).text()
    # the attention view and the alternatives show a finished sentence the pane shows, not the cut one
    shown = panel.sentences[panel.shown_sentence]
    assert panel.shown_sentence == CUT - 1 and shown.translation is not None
    assert panel.view.data().target_tokens == shown.translation.best.tokens
    # "Use model's translation" copies what the pane shows: the finished sentences
    qtbot.mouseClick(panel.inspect_box.use_model_button, Qt.LeftButton)
    assert panel.inspect_box.editor.toPlainText() == "\n".join(expected)
    # a cut sentence chosen in the list says why it shows no attention
    panel.select_sentence(CUT)
    assert panel.view.data().target_tokens == [] and "Stop" in panel.view.status_label.text()
    # a new translation clears the note
    with qtbot.waitSignal(panel.translationFinished, timeout=SLOW_TIMEOUT_MS):
        panel.translate("He is my brother.")
    assert panel.stop_note.isHidden() and panel.output_text() == panel.translator.translate("He is my brother.",
                                                                                             cfg).text
