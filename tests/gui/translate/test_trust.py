"""Trust signals in the Translate tab (issue 31): after a translation finishes (typed and translated by click on
the real window with the tiny model), the quality estimate runs in the background; its line appears under the
translation, its flagged target words are underlined on their kind's colour with the reason on hover, and the
source words it finds left out are marked in the source box. A new request or model drops a late estimate.

The estimator is the core's `estimate_translation` when `core/analysis/quality.py` exists; these tests use a
fake with the same API, so they check the GUI's part whatever the estimator decides."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, QPoint, Qt  # noqa: E402
from PySide6.QtGui import QHelpEvent, QTextCursor  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from nmt_desktop.core.analysis.words import word_groups  # noqa: E402
from nmt_desktop.gui import theme  # noqa: E402
from nmt_desktop.gui.translate import trust  # noqa: E402
from colour_contrast import contrast  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

TEXT = "red cat runs"
REASON = "The model gave this word little probability and another reading is close."


@dataclass
class FakeFlag:
    side: str
    word: int
    text: str
    kind: str
    reason: str
    strength: float = 0.8


@dataclass
class FakeEstimate:
    qe: float
    trust: str
    summary: str
    source_groups: list
    target_groups: list
    source_words: list
    target_words: list
    flags: list = field(default_factory=list)
    untranslated: list = field(default_factory=list)


def fake_estimate(translator, translation, hold: threading.Event | None = None) -> FakeEstimate:
    """Flags the first target word (doubted) and the first source word (left out); waits for `hold` first."""
    if hold is not None:
        hold.wait(TIMEOUT_MS / 1000)
    src = [g for g in word_groups(translation.source_tokens) if translation.source_tokens[g[0]] != "</s>"]
    tgt = [g for g in word_groups(translation.target_tokens) if translation.target_tokens[g[0]] != "</s>"]
    words = lambda pieces, groups: ["".join(pieces[i] for i in g).lstrip("▁") for g in groups]  # noqa: E731
    source_words, target_words = words(translation.source_tokens, src), words(translation.target_tokens, tgt)
    flags = [FakeFlag("target", 0, target_words[0], "doubted", REASON),
             FakeFlag("source", 0, source_words[0], "untranslated", "No target word draws on this source word.")]
    return FakeEstimate(41.0, "low", f"Trust: low (qe 41) · 1 source word may be untranslated: {source_words[0]}",
                        src, tgt, source_words, target_words, flags, [source_words[0]])


@pytest.fixture
def calls(monkeypatch):
    class Calls(list):
        fn = None

    seen = Calls()

    def counting(translator, translation):
        seen.append(translation.text)
        return fake_estimate(translator, translation, hold=getattr(counting, "hold", None))

    monkeypatch.setattr(trust, "estimator", lambda: counting)
    seen.fn = counting
    return seen


def type_and_translate(qtbot, window, text: str) -> None:
    panel = window.translate_panel
    panel.source.clear()
    QTest.mouseClick(panel.source.viewport(), Qt.LeftButton)
    qtbot.keyClicks(panel.source, text)
    QTest.mouseClick(panel.translate_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not panel.running and panel.document.current() is not None
                    and panel.document.current().translation is not None, timeout=TIMEOUT_MS)


def fragment_tooltip(browser, word: str) -> tuple[str, int]:
    """The tooltip of the first fragment of the output reading `word`, and where it starts."""
    block = browser.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.text() == word:
                return fragment.charFormat().toolTip(), fragment.position()
            it += 1
        block = block.next()
    raise AssertionError(f"{word!r} not in the output")


def test_trust_line_flagged_word_tooltip_and_source_mark(open_main_window, tiny_model_dir, qtbot, calls):
    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    assert not panel.trust_line.isVisible()
    type_and_translate(qtbot, window, TEXT)
    qtbot.waitUntil(lambda: panel.trust_line.estimates != [], timeout=TIMEOUT_MS)
    est = panel.trust_line.estimates[0]
    assert panel.trust_line.isVisible() and panel.trust_line.status.text() == est.summary
    assert panel.trust_line.status.objectName() == "warning"  # low trust: the theme's warning colour
    assert REASON in panel.trust_line.status.toolTip()
    assert calls == [panel.document.units[0].translation.text]  # once, after the translation finished

    # the flagged target word: underlined on the doubted colour, the reason first in its tooltip
    translation = panel.document.units[0].translation
    first_piece = translation.target_tokens[est.target_groups[0][0]].lstrip("▁")
    tip, position = fragment_tooltip(panel.output, first_piece)
    assert tip.startswith(f"⚠ doubted: {REASON}")
    cursor = QTextCursor(panel.output.document())
    cursor.setPosition(position + 1)
    fmt = cursor.charFormat()
    assert fmt.fontUnderline() and fmt.background().color().name() == trust.FLAG_BACKGROUNDS["doubted"][0]
    rect = panel.output.cursorRect(cursor)  # hovering the word shows that tooltip
    QApplication.sendEvent(panel.output.viewport(), QHelpEvent(QEvent.ToolTip, rect.center(),
                                                               panel.output.viewport().mapToGlobal(rect.center())))
    qtbot.waitUntil(lambda: QToolTip.isVisible() and REASON in QToolTip.text(), timeout=TIMEOUT_MS)
    QToolTip.hideText()

    # the left-out source word, marked in the source box
    marks = panel.source.extraSelections()
    assert len(marks) == 1 and marks[0].cursor.selectedText() == est.untranslated[0]
    QTest.keyClick(panel.source, Qt.Key_End)
    qtbot.keyClicks(panel.source, " ")  # editing the source: the marks no longer match it
    assert panel.source.extraSelections() == []

    # "Your translation": the inspected text gets the same estimate, its flagged word marked, left-out words named
    box = panel.inspect_box
    QTest.mouseClick(box.use_model_button, Qt.LeftButton)
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS):
        QTest.mouseClick(box.inspect_button, Qt.LeftButton)
    assert len(box.estimates) == 1 and box.view.estimates == box.estimates
    given = box.estimates[0]
    assert f"Trust: {given.trust} (estimated chrF {given.qe:.0f})" in box.view.summary.toolTip() + box.view.summary.text()
    assert "⚠" in box.view.tokens.toPlainText() and "doubted" in box.view.tokens.toPlainText()
    assert f"may be left out: {given.untranslated[0]}" in box.view.summary.toolTip() + box.view.summary.text()
    marks = panel.source.extraSelections()  # the inspected translation's left-out words, in the source box
    assert [m.cursor.selectedText() for m in marks] == given.untranslated


def test_flag_colours_are_readable_in_both_themes():
    for look in (theme.LIGHT, theme.DARK):
        for kind in trust.FLAG_BACKGROUNDS:
            background = trust.flag_background(kind, look.dark)
            for text in (look.text, look.warning, look.error):  # the token colours by probability
                assert contrast(text, background) >= 4.5, (look.dark, kind, text, background)


def test_a_late_estimate_is_dropped(open_main_window, tiny_model_dir, qtbot, calls):
    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    calls.fn.hold = threading.Event()  # the first estimate runs until the second request is made, on any machine
    type_and_translate(qtbot, window, TEXT)
    qtbot.waitUntil(lambda: panel.trust_line.running, timeout=TIMEOUT_MS)
    old = panel.document.units[0].translation
    type_and_translate(qtbot, window, "blue dog sleeps")  # a new request while the first estimate runs
    calls.fn.hold.set()
    calls.fn.hold = None
    qtbot.waitUntil(lambda: len(calls) == 2 and panel.trust_line.estimates != [], timeout=TIMEOUT_MS)
    assert panel.trust_line.translations == [panel.document.units[0].translation]
    assert panel.trust_line.translations[0] is not old

    # a new model: the line goes at once (nothing to translate again here), and comes back for its own translation
    assert panel.trust_line.isVisible()
    panel.source.selectAll()
    QTest.keyClick(panel.source, Qt.Key_Delete)
    before = panel.translator
    window.load_model(str(tiny_model_dir))
    qtbot.waitUntil(lambda: panel.translator is not before, timeout=TIMEOUT_MS)
    assert not panel.trust_line.isVisible() and panel.trust_line.estimates == []
    type_and_translate(qtbot, window, TEXT)
    qtbot.waitUntil(lambda: panel.trust_line.estimates != [], timeout=TIMEOUT_MS)
    assert panel.trust_line.translations[0] is panel.document.units[0].translation
    assert panel.source.extraSelections()[0].cursor.selectedText() == "red"


def test_the_core_estimate_reaches_the_line(open_main_window, tiny_model_dir, qtbot):
    """With the real estimator (core/analysis/quality.py): the line is its summary of the shown translation."""
    from nmt_desktop.core.analysis.quality import estimate_translation

    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    type_and_translate(qtbot, window, TEXT)
    qtbot.waitUntil(lambda: panel.trust_line.estimates != [], timeout=TIMEOUT_MS)
    translation = panel.document.units[0].translation
    expected = estimate_translation(panel.translator, translation)
    assert panel.trust_line.status.text() == expected.summary
    assert [f.kind for f in panel.trust_line.estimates[0].flags] == [f.kind for f in expected.flags]


def test_a_long_trust_line_becomes_one_short_line():
    """A wrapped list of flagged words pushed the notes under the translation over it in a 1024 x 700 window."""
    from types import SimpleNamespace

    flag = SimpleNamespace(kind="untranslated")
    short = SimpleNamespace(untranslated=["mountains"], flags=[flag])
    assert trust.one_line("Trust: medium (estimated chrF 66) · may leave out: mountains", [short]) == \
        "Trust: medium (estimated chrF 66) · may leave out: mountains"
    many = SimpleNamespace(untranslated=[f"word{i}" for i in range(12)], flags=[flag] * 15)
    line = trust.one_line("Trust: low (estimated chrF 12) · may leave out: " + ", ".join(many.untranslated), [many])
    assert line == "Trust: low (estimated chrF 12) · 15 flagged: hover for the list"
    assert len(line) <= trust.SUMMARY_CHARS


def test_every_sentence_is_checked_with_progress(open_main_window, tiny_model_dir, qtbot, calls, monkeypatch):
    """Issue 41: the line checked only the first 40 sentences and did not say so. All 45 are checked now, in the
    background, the line counting them ("12 of 45 sentences") while it runs; the GUI thread stays free (the
    check waits here, mid-way, until the test has seen the count)."""
    import threading

    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    seen_progress = threading.Event()
    counting = calls.fn

    def paced(translator, translation):  # the second sentence waits until the line has shown "1 of 45"
        if len(calls) == 1:
            assert seen_progress.wait(TIMEOUT_MS / 1000)
        return counting(translator, translation)

    monkeypatch.setattr(trust, "estimator", lambda: paced)
    QTest.mouseClick(panel.source.viewport(), Qt.LeftButton)
    panel.source.insertPlainText("\n".join(["red cat runs", "blue dog sleeps", "big cat runs"] * 15))  # a paste
    QTest.mouseClick(panel.translate_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: "1 of 45 sentences" in panel.trust_line.status.text(), timeout=TIMEOUT_MS)
    assert panel.trust_line.isVisible() and panel.trust_line.running
    seen_progress.set()
    qtbot.waitUntil(lambda: panel.trust_line.estimates != [], timeout=TIMEOUT_MS)
    assert len(calls) == 45 and len(panel.trust_line.estimates) == 45
    assert panel.trust_line.status.text().startswith("Sentence 1 of 45")


def test_a_new_request_stops_the_check_between_sentences(open_main_window, tiny_model_dir, qtbot, calls,
                                                         monkeypatch):
    """A superseded check does not go on through every sentence of the old text (the worker is free sooner)."""
    import threading

    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    release = threading.Event()
    counting = calls.fn

    def held(translator, translation):  # the first sentence of the first text waits until the new request
        if len(calls) == 0 and translation.text != "":
            release.wait(TIMEOUT_MS / 1000)
        return counting(translator, translation)

    monkeypatch.setattr(trust, "estimator", lambda: held)
    QTest.mouseClick(panel.source.viewport(), Qt.LeftButton)
    panel.source.insertPlainText("\n".join(["red cat runs"] * 30))
    QTest.mouseClick(panel.translate_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: panel.trust_line.running, timeout=TIMEOUT_MS)
    type_and_translate(qtbot, window, "blue dog sleeps")  # the old check is dropped...
    release.set()
    qtbot.waitUntil(lambda: panel.trust_line.estimates != [], timeout=TIMEOUT_MS)
    assert len(calls) == 2  # ...after its first sentence: then the new text's one sentence
