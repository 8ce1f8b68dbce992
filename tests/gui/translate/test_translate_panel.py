"""The Translate tab's target-language box for multilingual (OPUS-MT style) models (pytest-qt, offscreen)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nmt_desktop.core.config import DecodeConfig  # noqa: E402

from tiny_models import multilingual_translator  # noqa: E402
from limits import TIMEOUT_MS  # noqa: E402

CODES = [">>fra<<", ">>spa<<", ">>por<<"]
CFG = DecodeConfig(max_len_b=5, attention=True, alternatives=3)


def translate_and_wait(qtbot, panel, text: str) -> None:
    with qtbot.waitSignal(panel.translationFinished, timeout=TIMEOUT_MS):
        panel.translate(text, CFG)


def shown_codes(panel) -> list[str]:
    box = panel.target_language_box
    return [box.itemData(i) for i in range(box.count())]


def test_box_is_hidden_for_an_ordinary_model(qtbot, panel, tiny_translator) -> None:
    panel.set_translator(tiny_translator, SimpleNamespace(src_lang="en", tgt_lang="de"))
    assert panel.target_language_box.isHidden() and panel.target_language_label.isHidden()
    assert panel.chosen_target_language() is None
    translate_and_wait(qtbot, panel, "red cat runs")
    assert panel.sentences[0].translation.source_ids == tiny_translator.source_ids("red cat runs")
    assert tiny_translator.target_language is None


def test_box_defaults_to_the_models_target_language(qtbot, panel, tiny_trained, tiny_translator) -> None:
    tr = multilingual_translator(tiny_trained, CODES)
    panel.set_translator(tr, SimpleNamespace(src_lang="en", tgt_lang="spa"))
    box = panel.target_language_box
    assert not box.isHidden() and not panel.target_language_label.isHidden()
    assert shown_codes(panel) == CODES and box.toolTip()
    assert box.currentData() == ">>spa<<" and box.currentText() == "Spanish (spa)"
    other = multilingual_translator(tiny_trained, CODES)
    panel.set_translator(other, SimpleNamespace(src_lang="en", tgt_lang="ROMANCE"))
    assert box.currentData() == ">>spa<<"  # the same languages (a reload): the choice is kept
    panel.set_translator(tiny_translator, None)
    assert box.isHidden()
    panel.set_translator(other, SimpleNamespace(src_lang="en", tgt_lang="ROMANCE"))
    assert box.currentData() == ">>fra<<"  # not among the codes: the first


def test_choice_applies_to_the_next_translation(qtbot, panel, tiny_trained) -> None:
    tr = multilingual_translator(tiny_trained, CODES)
    panel.set_translator(tr, SimpleNamespace(src_lang="en", tgt_lang="fra"))
    token_id = {c: tr.tokenizers.source.token_to_id(c) for c in CODES}
    translate_and_wait(qtbot, panel, "red cat runs")
    first = panel.sentences[0].translation
    assert first.source_ids[0] == token_id[">>fra<<"] and first.source_tokens[0] == ">>fra<<"
    panel.target_language_box.setCurrentIndex(CODES.index(">>por<<"))
    assert tr.target_language == ">>fra<<" and panel.target_lang.text() == "French (fra)"  # until the next one
    translate_and_wait(qtbot, panel, "red cat runs")
    assert panel.target_lang.text() == "Portuguese (por)"
    second = panel.sentences[0].translation
    assert second.source_ids == [token_id[">>por<<"]] + first.source_ids[1:]
    assert second.target_ids == tr.translate("red cat runs", CFG).target_ids
    translate_and_wait(qtbot, panel, ">>spa<< red cat runs")  # a code typed by the user wins
    assert panel.sentences[0].translation.source_ids[0] == token_id[">>spa<<"]
