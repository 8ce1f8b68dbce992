"""Inspect this translation (gui/translate/inspect_box.py, inspect_view.py) on the real main window, offscreen,
with the tiny seeded model: a translation of one's own is scored off the GUI thread, its tokens shown
coloured by probability with the model's own choices marked, its scores beside the model's, and the
attention grid, focus view and Analysis tab show its tokens; a refused or failed scoring is one sentence."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nmt_desktop.core.analysis.words import display_pieces, words_of  # noqa: E402
from nmt_desktop.core.decoding.scoring import disagreements  # noqa: E402
from nmt_desktop.gui import theme  # noqa: E402
from nmt_desktop.gui.shortcuts import shortcut_rows  # noqa: E402
from nmt_desktop.gui.translate.inspect_box import SCORE_CONFIG  # noqa: E402
from nmt_desktop.gui.translate.inspect_view import (BAND_FLOORS, DARK_BANDS, GIVEN, LIGHT_BANDS, MODEL,  # noqa: E402
                                                    band, model_choice)

from colour_contrast import contrast  # noqa: E402
from tiny_models import LEXICON, TARGET_WORDS  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402
from qt_layout import wait_laid_out  # noqa: E402

SOURCE = "red cat runs"


@pytest.fixture
def window(open_main_window, tiny_model_dir):
    window = open_main_window(tiny_model_dir)
    window.translate_panel.options.mode.setCurrentIndex(0)  # greedy: its log-probs are the forced ones
    return window


def translated(qtbot, window, source: str = SOURCE):
    panel = window.translate_panel
    panel.source.setPlainText(source)
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    return panel.sentences[0].translation


def one_word_changed(text: str) -> str:
    """The model's translation with its second word replaced by another target word."""
    words = text.split()
    words[1] = next(w for w in TARGET_WORDS if w != words[1] and w not in words)
    return " ".join(words)


def test_inspecting_a_changed_translation(qtbot, window) -> None:
    panel, box, analysis = window.translate_panel, window.translate_panel.inspect_box, window.analysis_panel
    model_tr = translated(qtbot, window)
    assert model_tr.text == " ".join(LEXICON[w] for w in SOURCE.split())  # the trained model gets it right
    box.use_model_button.click()
    assert box.editor.toPlainText() == panel.output_text() == model_tr.text
    mine = one_word_changed(model_tr.text)
    box.editor.setPlainText(mine)
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS) as inspected:
        box.inspect_button.click()
        assert box.running and not box.inspect_button.isEnabled()  # scoring runs on the worker thread
    result = inspected.args[0]
    expected = panel.translator.score(SOURCE, mine, SCORE_CONFIG)
    assert result.given.best.forced and result.given.best.token_ids == expected.best.token_ids
    assert result.given.best.logprob == pytest.approx(expected.best.logprob, abs=1e-5)

    # the coloured tokens: the given target's pieces as a person reads them, "▁" nowhere
    shown = display_pieces(expected.best.tokens)
    assert box.view.pieces == shown and shown[-1] == "</s>"
    text = box.view.tokens.toPlainText()
    assert "▁" not in text and all(piece in text for piece in shown)
    html = box.view.tokens.toHtml().lower()
    for i, logprob in enumerate(result.given.best.token_logprobs):
        assert LIGHT_BANDS[band(math.exp(logprob))] in html
    assert box.view.legend.colours() == list(LIGHT_BANDS) and box.view.legend.toolTip()

    # the changed word is where the model disagrees, marked with its own choice
    marks = disagreements(result.given.best)
    changed = next(i for i, t in enumerate(result.given.best.tokens) if t.strip("▁") == mine.split()[1])
    assert changed in [d.index for d in marks]
    mark = next(d for d in marks if d.index == changed)
    assert mark.preferred.strip("▁") == model_tr.text.split()[1]
    assert model_choice(mark) in text and model_choice(mark).startswith("model: ·")
    assert f"{len(marks)} of {len(shown)} tokens" in box.view.summary.text()

    # both sentence scores, the model's from its own translation (greedy: equal to the decoded log-probs)
    assert result.model.best.token_ids == model_tr.best.token_ids
    assert result.model.best.logprob == pytest.approx(model_tr.best.logprob, abs=1e-4)
    assert f"log-prob {result.given.best.logprob:.2f}" in box.view.your_score.text()
    assert f"perplexity {result.given.best.perplexity:.2f}" in box.view.your_score.text()
    assert f"log-prob {result.model.best.logprob:.2f}" in box.view.model_score.text()
    assert result.model.best.logprob > result.given.best.logprob  # the model prefers its own

    # the attention grid and focus view show the given tokens, and say whose they are
    assert panel.view.data().target_tokens == result.given.best.tokens
    assert panel.view.status_label.text() == f"Showing {GIVEN}"
    panel.view.focus(0, 0)
    assert panel.view.focus_view.axes["left"].labels == shown
    assert panel.view.available_kinds() == ["cross", "encoder", "decoder"]
    # the Analysis tab received the scored translation
    assert analysis.translation is result.given
    assert analysis.title.text().startswith("Your translation (inspected):")
    assert analysis.alignment.translation is result.given  # the Alignments view links its words
    window.show_tab("analysis")
    analysis.tabs.setCurrentWidget(analysis.alignment)
    qtbot.waitUntil(lambda: bool(analysis.alignment.links), timeout=TIMEOUT_MS)
    assert max(j for _, j in analysis.alignment.links) < len(words_of(result.given.best.tokens))
    window.show_tab("translate")

    # the Alternatives tab shows the first disagreement; hovering a token lists the model's alternatives there
    assert panel.alternatives_view.step.index == marks[0].index
    box.view.tokenHovered.emit(0, changed)
    assert panel.alternatives_view.step.index == changed
    assert panel.alternatives_view.step.alternatives[0].piece == mark.preferred
    assert shown[changed] in panel.alternatives_view.title.text()

    # switch to the model's own translation and back
    buttons = box.view.show_buttons
    assert buttons[GIVEN].isChecked() and not buttons[MODEL].isChecked()
    buttons[MODEL].click()
    assert box.shown == MODEL and panel.view.status_label.text() == f"Showing {MODEL}"
    assert buttons[MODEL].isChecked() and not buttons[GIVEN].isChecked()
    assert panel.view.data().target_tokens == result.model.best.tokens and analysis.translation is result.model
    buttons[GIVEN].click()
    assert box.shown == GIVEN and analysis.translation is result.given and buttons[GIVEN].isChecked()


def test_menu_action_shortcut_and_a_new_translation(qtbot, window) -> None:
    panel, box = window.translate_panel, window.translate_panel.inspect_box
    assert ("Inspect this translation", "Ctrl+I") in shortcut_rows(window)
    assert box.inspect_button.toolTip() and box.use_model_button.toolTip()
    assert all(b.toolTip() for b in box.view.show_buttons.values())
    panel.source.setPlainText("blue dog sleeps")  # nothing translated: the model's translation is decoded greedily
    box.editor.setPlainText("blau hund isst")
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS) as inspected:
        window.menus.actions["inspect"].trigger()
    result = inspected.args[0]
    assert result.model_source == "greedy decoding" and "greedy decoding" in box.view.model_score.toolTip()
    assert result.model.text == "blau hund schlaeft"
    assert result.model.best.logprob == pytest.approx(
        panel.translator.translate("blue dog sleeps").best.logprob, abs=1e-4)
    translated(qtbot, window, "green bird")  # a new translation: the views show the model's tokens again
    assert panel.view.status_label.text() == "" and not any(b.isChecked() for b in box.view.show_buttons.values())
    assert panel.view.data().target_tokens == panel.sentences[0].translation.best.tokens
    assert window.analysis_panel.translation is panel.sentences[0].translation


def test_refusals_and_failures_are_one_sentence_and_the_gui_stays_usable(qtbot, window) -> None:
    panel, box = window.translate_panel, window.translate_panel.inspect_box
    assert not box.use_model_translation() and "Translate the source first" in box.status.text()
    panel.source.setPlainText(SOURCE)
    assert box.inspect() == 0  # nothing typed
    assert box.status.text() == "Cannot inspect: your translation is empty: type or paste one, or use the " \
                                "model's translation."
    panel.source.setPlainText("  ")
    box.editor.setPlainText("rot katze rennt")
    assert box.inspect() == 0 and "the source is empty" in box.status.text()

    panel.source.setPlainText(SOURCE)
    box.editor.setPlainText(" ".join(["rot"] * 200))  # more tokens than the tiny model's 64 positions
    with qtbot.waitSignal(box.failed, timeout=TIMEOUT_MS) as failed:
        box.inspect_button.click()
    message = failed.args[0]
    assert "200 tokens" in message and "\n" not in message and "Traceback" not in message
    assert box.status.text() == f"Cannot inspect: {message}"
    assert window.shown_errors == [message]  # the window's usual error box
    assert not box.running and box.inspect_button.isEnabled() and box.view.result is None

    box.editor.setPlainText("rot katze rennt")  # still usable: inspecting and translating work
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS):
        box.inspect_button.click()
    assert box.status.text() == "" and box.view.pieces
    translated(qtbot, window)


def test_colours_read_in_both_themes(qtbot, window) -> None:
    box = window.translate_panel.inspect_box
    for scheme, fills in ((theme.LIGHT, LIGHT_BANDS), (theme.DARK, DARK_BANDS)):
        assert len(fills) == len(BAND_FLOORS)
        assert all(contrast(scheme.text, fill) >= 4.5 for fill in fills), scheme
    window.translate_panel.source.setPlainText(SOURCE)
    box.editor.setPlainText("rot hund rennt")
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS):
        box.inspect()
    window.menus.theme_actions["dark"].trigger()
    html = box.view.tokens.toHtml().lower()
    assert any(fill in html for fill in DARK_BANDS) and not any(fill in html for fill in LIGHT_BANDS)
    assert box.view.legend.colours() == list(DARK_BANDS)


# -- `nmt-desktop gui --text SOURCE --inspect TRANSLATION --screenshot FILE.png` ------------------------------


def test_screenshot_of_an_inspected_translation(monkeypatch, app_dirs, tiny_model_dir) -> None:
    from PySide6.QtGui import QImage

    from nmt_desktop.cli.main import main as cli_main
    from nmt_desktop.gui.headless import screenshot

    seen: dict = {}
    real = screenshot.inspect

    def spy(window, translation) -> None:
        real(window, translation)
        box, panel = window.translate_panel.inspect_box, window.translate_panel
        seen.update(result=box.result, editor=box.editor.toPlainText(), pieces=box.view.pieces,
                    text=box.view.tokens.toPlainText(), shown=panel.view.status_label.text(),
                    rows=panel.view.painted_rows(), analysis=window.analysis_panel.translation)

    monkeypatch.setattr(screenshot, "inspect", spy)
    out = app_dirs / "inspect.png"
    assert cli_main(["gui", "-m", str(tiny_model_dir), "--text", SOURCE, "--inspect", "rot hund rennt",
                     "--screenshot", str(out)]) == 0
    result = seen["result"]
    assert seen["editor"] == "rot hund rennt" and seen["pieces"] == display_pieces(result.given.best.tokens)
    marks = disagreements(result.given.best)
    assert marks and all(model_choice(d) in seen["text"] for d in marks)  # a disagreement is marked
    assert seen["shown"] == f"Showing {GIVEN}" and seen["rows"] == len(result.given.best.tokens)
    assert seen["analysis"] is result.given
    image = QImage(str(out))
    assert not image.isNull() and image.width() >= 800 and image.height() >= 500


@pytest.mark.parametrize("args, code, message", [
    (["--inspect", "rot"], 2, "--inspect needs --text TEXT"),
    (["--text", SOURCE, "--inspect", " "], 1, "Cannot inspect: your translation is empty"),
    (["--text", SOURCE, "--inspect", "rot " * 200], 1, "has 200 tokens but this model scores at most"),
])
def test_screenshot_errors_are_one_line(args, code, message, capsys, app_dirs, tiny_model_dir) -> None:
    from nmt_desktop.cli.main import main as cli_main

    out = app_dirs / "x.png"
    assert cli_main(["gui", "-m", str(tiny_model_dir), *args, "--screenshot", str(out)]) == code
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("nmt-desktop: error: ") and message in err[0], err
    assert not out.exists()


def test_ctrl_enter_in_the_box_inspects_and_does_not_translate(qtbot, window) -> None:
    from PySide6.QtCore import Qt

    panel, box = window.translate_panel, window.translate_panel.inspect_box
    panel.source.setPlainText(SOURCE)
    box.editor.setPlainText("rot hund rennt")
    window.activateWindow()
    box.editor.setFocus()
    qtbot.waitUntil(box.editor.hasFocus)
    started: list[int] = []
    panel.translationStarted.connect(started.append)
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS):
        qtbot.keyClick(box.editor, Qt.Key_Return, Qt.ControlModifier)
    assert not started and box.editor.toPlainText() == "rot hund rennt"  # no line break typed either


# -- several lines: scored line by line, as the Translate tab translated them (issue 29, point 5) ------------

LINES = "red cat runs\nblue dog sleeps\ngreen bird eats"


@pytest.mark.parametrize("mode", [0, 1])  # greedy, beam search
def test_the_models_own_multi_line_translation_scores_what_it_scored(qtbot, window, mode) -> None:
    panel, box, analysis = window.translate_panel, window.translate_panel.inspect_box, window.analysis_panel
    panel.options.mode.setCurrentIndex(mode)
    panel.source.setPlainText(LINES)
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    units = [u.translation for u in panel.sentences]
    assert len(units) == 3
    box.use_model_button.click()
    assert box.editor.toPlainText() == "\n".join(t.text for t in units)
    window.resize(1280, 820)
    wait_laid_out(qtbot, window)
    width = window.width()
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS) as inspected:
        box.inspect_button.click()
    result = inspected.args[0]
    box.view.tokenHovered.emit(2, 0)  # the longest status: "…, sentence 3 of 3"
    wait_laid_out(qtbot, window)  # the window laid out with it
    assert window.width() == width  # the score lines and the "Showing …" line never widen the window
    assert [p.line for p in result.pairs] == [0, 1, 2] and result.model_source == "the Translate tab"
    assert [p.given.best.token_ids for p in result.pairs] == [t.best.token_ids for t in units]
    decoded = sum(t.best.logprob for t in units)  # what the model scored its own translation when it made it
    given, model = result.score("given"), result.score("model")
    assert given.logprob == pytest.approx(decoded, abs=1e-3) and model.logprob == pytest.approx(decoded, abs=1e-3)
    assert given.tokens == sum(len(t.best.token_logprobs) for t in units)
    assert box.view.your_score.text().split(": ", 1)[1] == box.view.model_score.text().split(": ", 1)[1]
    assert "in 3 sentences" in box.view.your_score.text()
    if mode == 0:  # greedy: every token was the model's first choice
        assert not result.disagreements and "agrees with all" in box.view.summary.text()
    # each line's tokens on a line of their own
    assert box.view.tokens.toPlainText().count("\n") == 2

    # hovering a token of the third line shows that line's attention, and says which of the three it is
    box.view.tokenHovered.emit(2, 0)
    assert panel.view.data().target_tokens == result.pairs[2].given.best.tokens
    assert panel.view.status_label.text() == f"Showing {GIVEN}, sentence 3 of 3"
    assert panel.alternatives_view.step.index == 0
    # "Show" beside the model's score: the Analysis title says whose translation it shows
    box.view.show_buttons[MODEL].click()
    assert analysis.translation is result.pairs[2].model
    assert analysis.title.text().startswith("The model's translation (scored):")
    box.view.show_buttons[GIVEN].click()
    assert analysis.title.text().startswith("Your translation (inspected):")


def test_a_translation_with_other_line_breaks_is_one_pair_and_says_so(qtbot, window) -> None:
    panel, box = window.translate_panel, window.translate_panel.inspect_box
    panel.source.setPlainText("red cat runs\nblue dog sleeps")
    box.editor.setPlainText("rot katze rennt blau hund schlaeft")
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS) as inspected:
        box.inspect_button.click()
    result = inspected.args[0]
    assert len(result.pairs) == 1 and result.model_source == "greedy decoding"
    assert "has 1 lines and the source 2: scored as one sentence pair" in box.view.summary.text()
    assert result.given.source == "red cat runs blue dog sleeps"


def test_an_edited_line_is_rescored_and_the_others_keep_the_models_ids(qtbot, window) -> None:
    panel, box = window.translate_panel, window.translate_panel.inspect_box
    panel.source.setPlainText("red cat runs\nblue dog sleeps")
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate_button.click()
    first, second = (u.translation for u in panel.sentences)
    box.editor.setPlainText(f"{one_word_changed(first.text)}\n{second.text}")
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS) as inspected:
        box.inspect_button.click()
    result = inspected.args[0]
    assert result.pairs[1].given.best.token_ids == second.best.token_ids
    assert result.pairs[0].given.best.token_ids != first.best.token_ids
    assert result.disagreements and {p for p, _ in result.disagreements} == {0}
    assert result.shown == 0 and panel.view.data().target_tokens == result.pairs[0].given.best.tokens


def test_sentences_that_do_not_line_up_are_one_pair_with_the_models_whole_line(qtbot, window) -> None:
    panel, box = window.translate_panel, window.translate_panel.inspect_box
    panel.source.setPlainText("red cat runs. blue dog sleeps.")  # two sentences: two units
    box.editor.setPlainText("rot katze rennt blau hund schlaeft")  # one: the line is one pair
    with qtbot.waitSignal(box.inspected, timeout=TIMEOUT_MS) as inspected:
        box.inspect_button.click()
    result = inspected.args[0]
    assert len(result.pairs) == 1 and result.model_source == "greedy decoding"
    whole = panel.translator.translate_batch(["red cat runs. blue dog sleeps."], whole_lines=True)[0]
    assert result.model.best.token_ids == whole.best.token_ids and result.model.best.token_ids  # never empty
