"""Issue 22 point 5 and 7: the model card is a readable page (no JSON, no null) with the honest limits."""

from __future__ import annotations

import json
import re

import pytest
from cli_runner import REPO_ROOT

from nmt_desktop.gui.models.card_html import card_html

BUNDLED_EN_DE = REPO_ROOT / "models" / "en-de"
PULLED = {
    "name": "opus-mt-en-fr", "source": "Hugging Face Hub", "hub_repo": "Helsinki-NLP/opus-mt-en-fr",
    "revision": "0123456789abcdef0123456789abcdef01234567", "url": "https://huggingface.co/Helsinki-NLP/opus-mt-en-fr",
    "license": "apache-2.0", "attribution": "Helsinki-NLP/opus-mt-en-fr: OPUS-MT by the University of Helsinki",
    "downloaded": "2025-01-02 10:00 UTC", "weights": "int8 (per-row scales)", "fine_tuned_from": None,
    "note": "Pulled with nmt-desktop pull Helsinki-NLP/opus-mt-en-fr",
    "eval": {"newstest2014": {"sentences": 3003, "beam": 5, "bleu": 38.1, "chrf": 63.25}},
    "benchmark": {"tatoeba": {"bleu": 50.5}, "flores": None}, "tags": ["marian", None, "translation"],
}


def _json_free(page: str) -> str:
    text = re.sub(r"<[^>]*>", " ", page)  # the text a reader sees, without tags
    for marker in ("null", "None", "{", "}", "[", "]"):
        assert marker not in text, (marker, text)
    return text


def test_bundled_en_de_card_is_readable_and_honest() -> None:
    card = json.loads((BUNDLED_EN_DE / "card.json").read_text(encoding="utf-8"))
    text = _json_free(card_html(card))
    for expected in ("en-de", "English → German", "3 encoder + 3 decoder layers", "4 attention heads",
                     "d_model 192", "4,651,008 parameters", "vocabulary of 8,000", "Tatoeba Project",
                     "CC-BY 2.0 FR", "164,179", "44.28", "62.29", "dev-multiref", "short everyday sentences",
                     "Get models…"):
        assert expected in text, expected
    assert "Fine-tuned from" not in text  # null in the card: not known, not shown


def test_pulled_model_card_shows_source_and_readable_extras() -> None:
    page = card_html(PULLED, src_lang="en", tgt_lang="fr", layers=6, heads=8)
    text = _json_free(page)
    for expected in ("opus-mt-en-fr", "English → French", "6 decoder layers", "8 attention heads",
                     "Helsinki-NLP/opus-mt-en-fr", "0123456789ab", "apache-2.0", "2025-01-02", "38.1", "63.25",
                     "Benchmark Tatoeba: BLEU: 50.5", "Tags marian, translation"):
        assert expected in " ".join(text.split()), expected
    assert "href='https://huggingface.co/Helsinki-NLP/opus-mt-en-fr'" in page
    assert "short everyday sentences" not in text and "Fine-tuned from" not in text
    assert "Fine-tuned from" in card_html({**PULLED, "fine_tuned_from": "models/en-de"})
    kept = card_html({**PULLED, "fine_tuned_from": "models/en-de",  # as training writes it (issue 41)
                      "glossary": "kept from the parent model models/en-de (glossary.tsv)"})
    assert "Glossary</td><td>kept from the parent model models/en-de (glossary.tsv)" in kept
    assert "Other details" not in _json_free(kept) or "Glossary:" not in _json_free(kept)


def test_models_tab_shows_the_rendered_card(qtbot, monkeypatch, tmp_path) -> None:
    pytest.importorskip("pytestqt")
    from nmt_desktop.gui.models.panel import ModelsPanel

    monkeypatch.setenv("NMT_DESKTOP_MODELS_DIR", str(tmp_path / "no-bundled-models"))
    panel = ModelsPanel()
    qtbot.addWidget(panel)
    try:
        panel.load(BUNDLED_EN_DE)
        qtbot.waitUntil(lambda: panel.info is not None, timeout=60000)
        text = panel.info_view.toPlainText()
        for expected in ("English → German", "4,651,008 parameters", "Tatoeba Project", "44.28",
                         "short everyday sentences", "Size on disk", str(BUNDLED_EN_DE)):
            assert expected in text, expected
        for marker in ("null", "None", "{", "["):
            assert marker not in text, marker
    finally:
        panel.shutdown()


def test_a_runs_best_model_card_says_both_steps(qtbot, monkeypatch, tmp_path) -> None:
    """Issue 41: the card of a 60-step run's best model said "Steps 20" (the best checkpoint's step). Trained
    here with the tiny preset (the first evaluation made best), loaded in the Models tab: both are said."""
    pytest.importorskip("pytestqt")
    from nmt_desktop.core.config import TrainConfig
    from nmt_desktop.core.training.train import Trainer
    from nmt_desktop.gui.models.panel import ModelsPanel
    from tiny_models import synthetic_pairs, write_tsv

    evaluate = Trainer.evaluate
    monkeypatch.setattr(Trainer, "evaluate", lambda self: {**evaluate(self), "bleu": 100.0 - self.state.step})
    pairs = synthetic_pairs(400, seed=5)
    cfg = TrainConfig(train=str(write_tsv(tmp_path / "train.tsv", pairs[:360])),
                      dev=str(write_tsv(tmp_path / "dev.tsv", pairs[360:])), out=str(tmp_path / "run"),
                      preset="tiny", vocab_size=400, batch_tokens=600, max_steps=60, eval_every=20, threads=1,
                      eval_sentences=20)
    Trainer(cfg, lambda e: None).run()
    monkeypatch.setenv("NMT_DESKTOP_MODELS_DIR", str(tmp_path / "no-bundled-models"))
    panel = ModelsPanel()
    qtbot.addWidget(panel)
    try:
        panel.load(tmp_path / "run" / "best")
        qtbot.waitUntil(lambda: panel.info is not None, timeout=60000)
        text = " ".join(panel.info_view.toPlainText().split())
        assert "Steps 60 (best checkpoint at step 20" in text, text
        assert "Run steps" not in text
    finally:
        panel.shutdown()
