"""Issue 29's numbered points, each used through the window's own controls (clicks on Translate and Inspect).

Point 2, what a pane shows belongs to the model and text it names: loading another model re-translates the
text with it (the output, the attention grid and the pane's language title change together); a translation
that fails leaves no earlier input's attention on screen; reloading after an inspection leaves no "Showing
your translation (inspected)" over the model's tokens. Point 3: text without spaces never widens the window.
Point 8: a refusal is said inline. Point 9: the title names the model once, the two sentence scores say what
they measure, the head statistics explain their columns, the Models list marks the loaded model (test_app).
"""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.core.formats.model_folder import save_model  # noqa: E402
from tiny_models import perturbed_model  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402
from qt_layout import wait_laid_out  # noqa: E402

TEXT = "red cat runs"


@pytest.fixture(scope="module")
def french_model(tiny_trained, tmp_path_factory):
    """Another model of the same shape that translates into "fr" (and so differently from the tiny one)."""
    model, tokenizers = tiny_trained
    cfg = dataclasses.replace(model.config, src_lang="en", tgt_lang="fr")
    return save_model(tmp_path_factory.mktemp("fr") / "tiny-en-fr", perturbed_model(cfg, seed=7), tokenizers,
                      {"name": "tiny en-fr"})


def translate_by_click(qtbot, window, text: str) -> None:
    panel = window.translate_panel
    panel.source.setPlainText(text)
    QTest.mouseClick(panel.translate_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not panel.running, timeout=TIMEOUT_MS)


def notes_in_and_laid_out(qtbot, window) -> None:
    """The notes that come after a translation (the trust line's estimate, on its own thread) are in and the
    window is laid out with them."""
    qtbot.waitUntil(lambda: not window.translate_panel.trust_line.running, timeout=TIMEOUT_MS)
    wait_laid_out(qtbot, window)


def load_by_menu(qtbot, window, path) -> None:
    """What Models > Load selected / a drop does: the window's own load, then wait for the model."""
    old = window.info
    window.load_model(str(path))
    qtbot.waitUntil(lambda: window.info is not old and not window.models_panel.loading, timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: not window.translate_panel.running, timeout=TIMEOUT_MS)


def test_another_model_retranslates_what_the_pane_shows(open_main_window, tiny_model_dir, french_model, qtbot):
    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    translate_by_click(qtbot, window, TEXT)
    first = panel.output_text()
    load_by_menu(qtbot, window, french_model)
    expected = Translator.load(french_model).translate(TEXT, panel.last_config or DecodeConfig())
    assert panel.target_lang.text() == "French (fr)"
    assert panel.output_text() == expected.text != first  # the French model's own translation, not the old one
    shown = panel.view.data()
    assert shown.target_tokens == list(expected.best.tokens)[: len(shown.target_tokens)]
    assert len(shown.target_tokens) == len(expected.best.tokens)


def test_failed_translation_leaves_no_earlier_attention(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    translate_by_click(qtbot, window, TEXT)
    assert panel.view.painted_rows() > 0
    translate_by_click(qtbot, window, "a " * 2000)  # longer than the model can read
    # said inline under the translation, like the other refusals (point 8: it was a modal box)
    assert panel.error_label.isVisible() and "Cannot translate" in panel.error_label.text()
    assert window.shown_errors == []
    assert panel.view.painted_rows() == 0 and panel.view.data().target_tokens == []
    assert "failed" in panel.view.status_label.text()
    assert panel.output_text() == ""
    translate_by_click(qtbot, window, TEXT)  # the next translation clears the line
    assert not panel.error_label.isVisible()


def test_reload_after_inspect_shows_the_models_tokens(open_main_window, tiny_model_dir, qtbot):
    window = open_main_window(tiny_model_dir)
    panel, box = window.translate_panel, window.translate_panel.inspect_box
    translate_by_click(qtbot, window, TEXT)
    box.editor.setPlainText("rot katze")
    QTest.mouseClick(box.inspect_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: box.result is not None, timeout=TIMEOUT_MS)
    assert "inspected" in panel.view.status_label.text()
    load_by_menu(qtbot, window, tiny_model_dir)  # the same model again
    assert "inspected" not in panel.view.status_label.text()
    assert panel.view.data().target_tokens == list(panel.sentences[0].translation.best.tokens)
    assert box.result is None


def test_window_title_names_the_model_once(open_main_window, tiny_model_dir):
    """Issue 29, point 9: the platform appends the app's display name to the title ("… — NMT Desktop"), so the
    title itself must not start with it too ("NMT Desktop — tiny — NMT Desktop" in a real window)."""
    from nmt_desktop.gui.app import APP_TITLE

    window = open_main_window(tiny_model_dir)
    assert window.info.name in window.windowTitle()
    assert APP_TITLE not in window.windowTitle()


def test_text_without_spaces_never_widens_the_window(open_main_window, tiny_model_dir, qtbot):
    """A translation quoted in the Analysis title (Chinese, a URL, an OPUS-MT model's long pieces) is one
    unbreakable run: the window's minimum width grew to 6,117 px with an OPUS-MT-size model's output. It wraps
    instead, and the window keeps the size it had."""
    text = "redcatruns" * 18  # a run of 180 characters in the title
    window = open_main_window(tiny_model_dir)
    window.resize(1280, 820)
    translate_by_click(qtbot, window, "red cat runs")
    notes_in_and_laid_out(qtbot, window)
    before = window.minimumSizeHint().width()
    translate_by_click(qtbot, window, text)
    notes_in_and_laid_out(qtbot, window)
    assert window.minimumSizeHint().width() <= before, (window.minimumSizeHint(), before)  # it did not grow
    assert window.width() == 1280
    title = window.analysis_panel.title
    assert title.text().replace("\u200b", "").count(text[:10]) >= 1  # the whole source is still there


def test_models_score_and_inspect_score_say_the_same_measure(open_main_window, tiny_model_dir, qtbot):
    """Issue 29, point 9: "score −1.187" under the translation and "log-prob −3.56" in Inspect were the same
    sentence measured two ways without saying so: the pane now shows the log-prob Inspect shows, by name."""
    window = open_main_window(tiny_model_dir)
    panel, box = window.translate_panel, window.translate_panel.inspect_box
    translate_by_click(qtbot, window, TEXT)
    QTest.mouseClick(box.use_model_button, Qt.LeftButton)
    QTest.mouseClick(box.inspect_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: box.result is not None, timeout=TIMEOUT_MS)
    logprob = f"log-prob {box.result.model.best.logprob:.2f}"
    assert logprob in panel.score_label.text() and logprob in box.view.model_score.text()
    assert "length-normalised" in panel.score_label.text()


def test_head_statistics_say_what_each_column_measures(open_main_window, tiny_model_dir):
    """Issue 29, point 9: Head statistics did not explain Diagonality, Monotonicity or Coverage."""
    view = open_main_window(tiny_model_dir).analysis_panel.stats
    tips = {view.table.horizontalHeaderItem(c).text(): view.table.horizontalHeaderItem(c).toolTip()
            for c in range(2, view.table.columnCount())}
    assert "diagonal" in tips["Diagonality"] and "Spearman" in tips["Monotonicity"] and "0.5" in tips["Coverage"]
    assert all(len(tip) > 40 for tip in tips.values()), tips


PARAGRAPH = " ".join(["red cat runs and blue dog sleeps while big bird eats"] * 3)  # the tiny model's longest


@pytest.mark.parametrize("size", [(1024, 700), (1280, 820), (1600, 1000)])
def test_long_translation_never_runs_under_its_footer(open_main_window, tiny_model_dir, qtbot, monkeypatch, size):
    """Issue 29, point 3: a 60-word paragraph made the translation run under its own footer (the score line,
    a diffuse-attention warning listing ~80 tokens, the "Long input…" hint cut at the right edge). Now the
    translation scrolls, the footer keeps its place below it, and the warning is one short line with the list
    on hover. Geometries are compared at three window sizes."""
    from nmt_desktop.core.analysis.coverage import CoverageWarning
    from nmt_desktop.gui.translate import quality_hint

    many = [CoverageWarning("diffuse", i, f"▁tok{i}", 9.0) for i in range(80)]
    monkeypatch.setattr(quality_hint, "coverage_warnings", lambda translation, **kw: many)  # the worst case seen
    window = open_main_window(tiny_model_dir)
    window.resize(*size)
    width = window.width()  # the size asked for, or the window's own minimum width if that is larger
    panel = window.translate_panel
    panel.options.min_length.setValue(45)  # a long translation
    translate_by_click(qtbot, window, PARAGRAPH)
    qtbot.waitUntil(lambda: panel.trust_line.estimates != [], timeout=TIMEOUT_MS)  # the last note to arrive
    wait_laid_out(qtbot, window)  # the notes' layout done
    assert not panel.error_label.isVisible(), panel.error_label.text()
    footer = [w for w in (panel.score_label, panel.coverage_label, panel.quality_hint, panel.trust_line)
              if w.isVisible()]
    assert panel.trust_line in footer
    assert panel.coverage_label in footer and panel.score_label in footer
    assert "hover for the list" in panel.coverage_label.text() and "tok79" in panel.coverage_label.toolTip()
    output = panel.output
    top = output.mapTo(window, output.rect().bottomLeft()).y()
    assert output.viewport().height() >= 2 * output.fontMetrics().height()  # it still shows lines, and scrolls
    for label in footer:  # each note below the translation, below the one before, at its full wrapped height
        y = label.mapTo(window, label.rect().topLeft()).y()
        assert y > top, (label.objectName(), y, top)
        assert label.height() >= label.heightForWidth(label.width()) - 1, (label.objectName(), label.height())
        top = label.mapTo(window, label.rect().bottomLeft()).y()
    assert window.width() == width


def test_token_tooltips_keep_word_marks_and_never_say_zero_percent(open_main_window, tiny_model_dir, qtbot):
    """Issue 29, point 9: the hover tooltip on output tokens dropped the word-start marks and rounded to "0%"."""
    import re as _re

    from nmt_desktop.gui.formatting import format_prob

    window = open_main_window(tiny_model_dir)
    translate_by_click(qtbot, window, TEXT)
    tips = []  # what Qt shows on hover: each text fragment's tooltip in the output's document
    block = window.translate_panel.output.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            tip = it.fragment().charFormat().toolTip()
            if tip:
                tips.append(tip)
            it += 1
        block = block.next()
    assert tips
    assert not any(_re.search(r"(?<![\d.])0%", tip) for tip in tips), tips  # a nonzero probability is never "0%"
    assert any("·" in tip for tip in tips), tips  # word starts marked, as in every other view
    assert [format_prob(p) for p in (0.62, 0.032, 0.004, 0.00001, 0.0)] == ["62%", "3.2%", "0.4%", "<0.1%", "0%"]


def test_model_picker_on_the_translate_tab_switches_and_retranslates(open_main_window, tiny_model_dir, french_model,
                                                                      qtbot):
    """Issue 29, "a model picker on the Translate tab": recently used models first; picking one (stepping the
    combo as the keyboard does, then activating it) loads it and translates the text again with it."""
    window = open_main_window(tiny_model_dir)
    load_by_menu(qtbot, window, french_model)  # two recent models now: French first, the tiny one second
    load_by_menu(qtbot, window, tiny_model_dir)
    panel, picker = window.translate_panel, window.translate_panel.model_picker
    translate_by_click(qtbot, window, TEXT)
    labels = [picker.itemText(i) for i in range(picker.count())]
    assert labels[:2] == [tiny_model_dir.name, french_model.name], labels  # most recent first
    assert picker.currentIndex() == 0
    picker.setCurrentIndex(1)
    picker.activated.emit(1)  # what a click on the item or Enter on it sends
    qtbot.waitUntil(lambda: window.info is not None and window.info.path.name == french_model.name
                    and not window.models_panel.loading, timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: not panel.running and bool(panel.sentences) and panel.sentences[0].translation is not None,
                    timeout=TIMEOUT_MS)
    expected = Translator.load(french_model).translate(TEXT, panel.last_config or DecodeConfig())
    assert panel.output_text() == expected.text and panel.target_lang.text() == "French (fr)"
    assert picker.currentText() == french_model.name and picker.itemText(0) == french_model.name


def test_steps_arriving_while_the_view_shows_something_else_restart_the_stream(open_main_window, tiny_model_dir,
                                                                                 qtbot, monkeypatch):
    """Found by the monkey test: a step of the shown unit arriving while the attention view showed something
    else (an inspected translation, a grid cleared by a failure) raised "append_step() called without begin()"."""
    import threading

    _stream = Translator.stream_document
    cleared = threading.Event()

    class Slow:  # the core's document stream, held after its third step until the clear below: it lands mid-stream
        def __init__(self, document):  # however slow the machine
            self.document = document

        def __getattr__(self, name):
            return getattr(self.document, name)

        def __iter__(self):
            for n, item in enumerate(self.document):
                if n == 3:
                    cleared.wait(TIMEOUT_MS / 1000)
                yield item

    monkeypatch.setattr(Translator, "stream_document", lambda self, *a, **k: Slow(_stream(self, *a, **k)))
    window = open_main_window(tiny_model_dir)
    panel = window.translate_panel
    panel.options.min_length.setValue(20)
    panel.source.setPlainText(TEXT)
    QTest.mouseClick(panel.translate_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: panel.view.painted_rows() >= 2, timeout=TIMEOUT_MS)
    assert panel.running
    panel.view.clear()  # what a result shown meanwhile does to the streaming view
    cleared.set()
    qtbot.waitUntil(lambda: not panel.running, timeout=TIMEOUT_MS)
    assert panel.view.data().target_tokens == list(panel.sentences[0].translation.best.tokens)
