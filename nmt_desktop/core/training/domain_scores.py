"""Scores of a memory fine-tune (issue 45) on two kinds of text: the memory's domain (its held-out dev part) and
general text (the parent's dev file), before the first step and at each evaluation, so the card can say what the
model gained on the memory and what it lost elsewhere.

The "before" scores are the parent's, taken once when the run starts and kept in `RUN/memory_before.json`: a
resumed run reads them there instead of scoring its own half-trained model as the parent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from nmt_desktop.core.config import DecodeConfig, TrainConfig
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.model.transformer import Transformer
from nmt_desktop.core.tokenizer import TokenizerPair
from nmt_desktop.core.training.corpus_formats import Pair
from nmt_desktop.core.training.evaluation import decode_in_batches, decoded_pairs
from nmt_desktop.core.training.metrics import corpus_bleu, corpus_chrf

BEFORE_FILE = "memory_before.json"
DOMAINS = ("memory", "general")  # the keys of every scores dict: the memory's domain, general text


@torch.no_grad()
def bleu_chrf(model: Transformer, tokenizers: TokenizerPair, pairs: list[Pair], cfg: TrainConfig) -> dict[str, Any]:
    """BLEU and chrF of the model's decodes of (up to `eval_sentences` of) `pairs`, as a dev evaluation decodes
    them; {} when there are none. The model is left in the mode it was in."""
    pairs = decoded_pairs(pairs, cfg)
    if not pairs:
        return {}
    training = model.training
    model.eval()
    hyps = decode_in_batches(Translator(model, tokenizers), [s for s, _ in pairs],
                             DecodeConfig(beam_size=cfg.eval_beam, attention=False, alternatives=1))
    model.train(training)
    refs = [r for _, r in pairs]
    return {"bleu": round(corpus_bleu(hyps, refs), 3), "chrf": round(corpus_chrf(hyps, refs), 3),
            "sentences": len(pairs)}


def parent_scores(run: Path, model: Transformer, tokenizers: TokenizerPair, memory_dev: list[Pair],
                  general_dev: list[Pair], cfg: TrainConfig) -> dict[str, Any]:
    """The parent's scores on both domains: read from the run folder if this run took them already, else taken
    now (the model must still be the parent's) and written there."""
    saved = run / BEFORE_FILE
    if saved.is_file():
        return json.loads(saved.read_text(encoding="utf-8"))
    scores = {"memory": bleu_chrf(model, tokenizers, memory_dev, cfg),
              "general": bleu_chrf(model, tokenizers, general_dev, cfg)}
    saved.write_text(json.dumps(scores), encoding="utf-8")
    return scores


def before_after(before: dict[str, Any], memory_metrics: dict[str, Any], general: dict[str, Any],
                 step: int) -> dict[str, Any]:
    """The card's and end event's `memory.scores`: per domain the parent's BLEU/chrF and this checkpoint's."""
    after = {"memory": {k: memory_metrics[k] for k in ("bleu", "chrf", "sentences") if k in memory_metrics},
             "general": general}
    return {"step": step, **{d: {"before": before.get(d) or {}, "after": after[d]} for d in DOMAINS}}
