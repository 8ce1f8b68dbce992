"""The quiet hint under a translation (gui/translate/quality_hint.py) in a real offscreen Translate panel."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QDialog  # noqa: E402

from nmt_desktop.core.config import DecodeConfig  # noqa: E402
from nmt_desktop.core.decoding.translator import Translator  # noqa: E402
from nmt_desktop.core.model.transformer import build_model  # noqa: E402

from tiny_models import SOURCE_WORDS, tiny_config  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

CFG = DecodeConfig(max_len_b=8, attention=True, alternatives=3)
TRAINED_ON = {"data": {"train": "synthetic", "source_words": {"median": 4, "p95": 7, "p99": 7, "max": 7}}}
LONG = " ".join(SOURCE_WORDS[i % len(SOURCE_WORDS)] for i in range(20))  # 20 words, well within max_positions


def translate_and_wait(qtbot, panel, text: str) -> None:
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate(text, CFG)


def info(card: dict) -> SimpleNamespace:
    return SimpleNamespace(src_lang="en", tgt_lang="de", card=card)


def test_long_input_gets_a_quiet_hint_and_a_short_one_none(qtbot, panel, tiny_translator) -> None:
    panel.set_translator(tiny_translator, info(TRAINED_ON))
    translate_and_wait(qtbot, panel, "red cat runs")
    assert panel.quality_hint.isHidden() and panel.quality_hint.text() == ""

    translate_and_wait(qtbot, panel, LONG)
    hint = panel.quality_hint
    from PySide6.QtWidgets import QSizePolicy

    # muted; it wraps to the pane's width instead of being cut at its right edge, and never widens the pane
    assert hint.isVisible() and hint.objectName() == "hint" and hint.wordWrap()
    assert hint.sizePolicy().horizontalPolicy() == QSizePolicy.Policy.Ignored
    assert hint.text().startswith("Long input (20 words): this model was trained on sentences of up to ~7 words")
    assert "OPUS-MT" in hint.text() and "Get models" in hint.text()
    assert not [w for w in panel.findChildren(QDialog) if w.isVisible()]  # never a dialog

    translate_and_wait(qtbot, panel, "blue dog")  # a new request clears it
    assert panel.quality_hint.isHidden()


def test_no_length_hint_for_a_model_without_the_statistic(qtbot, panel, tiny_translator) -> None:
    panel.set_translator(tiny_translator, info({"hub_repo": "Helsinki-NLP/opus-mt-en-de"}))  # an OPUS-MT card
    translate_and_wait(qtbot, panel, LONG)
    assert panel.quality_hint.isHidden()


def test_diffuse_attention_gets_a_hint(qtbot, panel, tiny_trained) -> None:
    _, pair = tiny_trained
    untrained = Translator(build_model(tiny_config(pair), seed=5), pair, name="untrained")  # attends everywhere
    panel.set_translator(untrained, info(TRAINED_ON))
    translate_and_wait(qtbot, panel, "red cat runs")
    assert panel.quality_hint.isVisible()
    assert panel.quality_hint.text().startswith("Diffuse attention: for most words the model looked everywhere")
    assert "Get models" in panel.quality_hint.text()
    panel.set_translator(untrained, info({"hub_repo": "Helsinki-NLP/opus-mt-en-de"}))  # already an OPUS-MT model
    translate_and_wait(qtbot, panel, "red cat runs")
    assert panel.quality_hint.text().startswith("Diffuse attention") and "Get models" not in panel.quality_hint.text()
