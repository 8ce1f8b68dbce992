"""The Analysis tab's Alignments view (pytest-qt, offscreen, tiny seeded model): the reading the model's card
recommends is the default, each reading / heads / decision a person picks gives the links
`core.analysis.alignment.align` computes, the method in use is stated, a scored (teacher-forced)
translation is aligned like any other, and the masking reading runs on the view's thread when shown."""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QGuiApplication  # noqa: E402

from nmt_desktop.core.analysis.alignment import AlignMethod, align, default_method  # noqa: E402
from nmt_desktop.core.analysis.pharaoh import to_pharaoh  # noqa: E402
from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.gui.analysis.align_method_picker import reads_heads  # noqa: E402
from nmt_desktop.gui.analysis.panel import AnalysisPanel  # noqa: E402
from nmt_desktop.gui.models.loader import ModelInfo  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

TEXT = "red cat runs big dog"
HUMAN = "katze rot rennt gross hund"  # a given translation (words reordered), not the model's own
CFG = DecodeConfig(attention=True, alternatives=5)
LAYERS = 2  # the tiny model's decoder
CARD = {"name": "tiny", "alignment": {"reading": "shift", "heads": ["L1 H2", "L2 H3"], "decision": "argmax",
                                      "chosen_on": "tiny synthetic dev set, 20 sentences", "aer": 0.25}}
MASKING_CARD = {"name": "tiny", "alignment": {"reading": "masking", "decision": "mutual"}}


def carded_translator(tiny_trained, card) -> Translator:
    """The tiny model with a card (as a model folder's card.json would give it)."""
    model, tokenizers = tiny_trained
    translator = Translator(model, tokenizers, name="tiny")
    translator.card = card
    return translator


@pytest.fixture(scope="module")
def carded(tiny_trained) -> Translator:
    return carded_translator(tiny_trained, CARD)


@pytest.fixture
def make_panel(qtbot):
    """make_panel(translator, info=None) -> a shown Analysis panel on its Alignments page (shut down after)."""
    panels: list[AnalysisPanel] = []

    def make(translator: Translator, info: ModelInfo | None = None, show_alignments: bool = True) -> AnalysisPanel:
        panel = AnalysisPanel()
        qtbot.addWidget(panel)
        panel.set_translator(translator, info)
        panel.resize(1100, 700)
        panel.show()
        if show_alignments:
            panel.tabs.setCurrentWidget(panel.alignment)
        panels.append(panel)
        return panel

    yield make
    for panel in panels:
        panel.shutdown()


@pytest.fixture
def panel(make_panel, carded):
    return make_panel(carded)


@pytest.fixture(scope="module")
def translation(carded):
    return carded.translate(TEXT, CFG)


def assert_shows(qtbot, view, translation, method: AlignMethod) -> list[tuple[int, int]]:
    """The view uses `method`, its links and lines are core's for it (once its job, if any, is done), and its
    one line describes it."""
    qtbot.waitUntil(lambda: not view.running, timeout=TIMEOUT_MS)
    expected = align(translation, method, translator=view.translator)
    assert view.method() == method
    assert view.links == expected and len(view.lines) == len(expected)
    assert view.pharaoh_label.text() == f"Pharaoh: {to_pharaoh(expected)}"
    assert method.describe(LAYERS) in view.picker.description.text()
    return expected


def test_the_cards_reading_is_the_default(qtbot, panel, translation) -> None:
    panel.set_translation(translation, CFG)
    view = panel.alignment
    default = default_method(CARD, LAYERS)
    assert default.heads == ((0, 1), (1, 2))  # the card's heads, counted from 1 there
    assert not view.running  # an attention reading needs no job
    assert len(assert_shows(qtbot, view, translation, default)) > 0
    assert view.picker.heads.currentText() == "Recommended: L1 H2 + L2 H3"
    line = view.picker.description
    assert line.text() == f"Alignment: {default.describe(LAYERS)}  (recommended)" and line.isVisible()
    tip = line.toolTip()
    assert "Chen et al. 2020" in tip and "tiny synthetic dev set, 20 sentences" in tip and "25.0%" in tip
    assert "development set of human alignments" in tip
    assert not view.picker.reset_button.isEnabled()  # already the recommended reading


def test_each_choice_gives_cores_links_and_recommended_returns(qtbot, panel, translation, tmp_path) -> None:
    panel.set_translation(translation, CFG)
    view, picker = panel.alignment, panel.alignment.picker
    default = default_method(CARD, LAYERS)
    seen = [assert_shows(qtbot, view, translation, default)]

    picker.reading.setCurrentIndex(picker.reading.findData("predict"))
    assert picker.reading.currentText() == "Predict: where a token is predicted"
    method = replace(default, reading="predict")
    seen.append(assert_shows(qtbot, view, translation, method))
    assert picker.reset_button.isEnabled() and "(recommended)" not in picker.description.text()
    assert f"Recommended: {default.describe(LAYERS)}." in picker.description.toolTip()

    picker.decision.setCurrentIndex(picker.decision.findData("mutual"))
    method = replace(method, decision="mutual")
    seen.append(assert_shows(qtbot, view, translation, method))

    picker.heads.setCurrentText("L1 (heads averaged)")
    method = replace(method, layer=0, heads=None)
    seen.append(assert_shows(qtbot, view, translation, method))

    picker.heads.setCurrentText("All layers (heads averaged)")
    picker.decision.setCurrentIndex(picker.decision.findData("threshold"))
    assert picker.threshold.isEnabled()
    picker.threshold.setValue(0.1)
    method = replace(method, layer=None, decision="threshold", threshold=0.1)
    seen.append(assert_shows(qtbot, view, translation, method))
    assert "≥ 0.1" in picker.description.text()

    picker.reading.setCurrentIndex(picker.reading.findData("shift"))
    seen.append(assert_shows(qtbot, view, translation, replace(method, reading="shift")))
    assert len({tuple(links) for links in seen}) > 1  # the choices matter on this sentence

    view.copy_pharaoh()
    assert QGuiApplication.clipboard().text() == to_pharaoh(seen[-1])
    view.export(tmp_path / "a.txt")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == to_pharaoh(seen[-1]) + "\n"

    picker.reading.setCurrentIndex(picker.reading.findData("masking"))  # the model's passes, on the thread
    masking = replace(method, reading="masking")
    if not reads_heads(masking):  # masking without attention added keeps the default's (unused) heads
        masking = replace(masking, layer=default.layer, heads=default.heads)
    assert picker.heads.isEnabled() == reads_heads(masking)
    seen.append(assert_shows(qtbot, view, translation, masking))

    picker.reset_button.click()
    assert_shows(qtbot, view, translation, default)
    assert picker.heads.currentText() == "Recommended: L1 H2 + L2 H3" and not picker.threshold.isEnabled()


def test_a_scored_translation_is_aligned_too(qtbot, panel, carded, translation) -> None:
    scored = carded.score(TEXT, HUMAN, CFG)
    assert scored.best.forced and scored.target_tokens != translation.target_tokens
    panel.set_translation(scored, CFG)
    view = panel.alignment
    assert view.translation is scored
    default = default_method(CARD, LAYERS)
    links = assert_shows(qtbot, view, scored, default)
    assert {j for _, j in links} == set(range(len(HUMAN.split())))  # argmax: every given word is linked
    shown = {item.text() for item in view.scene.items() if hasattr(item, "text")}
    assert set(HUMAN.split()) <= shown  # the given words, not the model's
    for reading in ("predict", "masking"):
        view.picker.reading.setCurrentIndex(view.picker.reading.findData(reading))
        assert_shows(qtbot, view, scored, replace(default, reading=reading))


def test_masking_runs_on_the_views_thread_once_shown(qtbot, make_panel, tiny_trained, translation) -> None:
    panel = make_panel(carded_translator(tiny_trained, MASKING_CARD), show_alignments=False)
    view = panel.alignment
    default = default_method(MASKING_CARD, LAYERS)
    assert default.reading == "masking" and not default.uses_attention
    panel.set_translation(translation, CFG)
    assert not view.running and view.links == []  # not shown: nothing computed yet
    assert "when this view is shown" in view.pharaoh_label.text()
    assert set(TEXT.split()) <= {i.text() for i in view.scene.items() if hasattr(i, "text")}  # the words are
    panel.tabs.setCurrentWidget(view)
    assert view.running and not view.copy_button.isEnabled()
    links = assert_shows(qtbot, view, translation, default)
    assert len(links) > 0 and view.copy_button.isEnabled()
    view.picker.decision.setCurrentIndex(view.picker.decision.findData("argmax"))
    assert not view.running  # the same evidence, another decision: no new pass
    assert_shows(qtbot, view, translation, replace(default, decision="argmax"))


def test_without_a_card_entry_the_apps_default_is_said(qtbot, make_panel, tiny_translator, translation) -> None:
    info = ModelInfo(path=None, name="tiny", src_lang="en", tgt_lang="xx", size_bytes=0, layers=LAYERS, heads=4,
                     card={"name": "tiny"})
    panel = make_panel(tiny_translator, info)
    panel.set_translation(translation, CFG)
    view = panel.alignment
    assert_shows(qtbot, view, translation, default_method({"name": "tiny"}, LAYERS))
    items = [view.picker.heads.itemText(i) for i in range(view.picker.heads.count())]
    assert items == ["L1 (heads averaged)", "L2 (heads averaged)", "All layers (heads averaged)"]
    assert "recommends no reading" in view.picker.description.toolTip()


def test_the_main_window_reads_the_card_of_the_loaded_model(qtbot, open_main_window, tiny_trained,
                                                            tmp_path) -> None:
    from nmt_desktop.core.formats.model_folder import save_model

    model, tokenizers = tiny_trained
    folder = save_model(tmp_path / "tiny-carded", model, tokenizers, CARD)
    window = open_main_window(folder)
    view = window.analysis_panel.alignment
    assert view.picker.default == default_method(CARD, LAYERS) == view.method()
    assert view.picker.heads.currentText() == "Recommended: L1 H2 + L2 H3"
    assert view.translator is not None
