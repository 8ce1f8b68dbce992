"""Evaluation on the dev set during training: teacher-forced loss, then BLEU and chrF of real decodes.

The decodes go in batches of `DECODE_BATCH` sentences (shortest first, as `Translator.translate_batch` orders
them) and `progress(done, total)` is called after each, so the Train tab can show how far an evaluation is.
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any, Callable

import torch
import torch.nn.functional as F

from nmt_desktop.core.config import DecodeConfig, TrainConfig
from nmt_desktop.core.decoding.translator import Translator
from nmt_desktop.core.model.transformer import Transformer
from nmt_desktop.core.tokenizer import TokenizerPair
from nmt_desktop.core.training.batching import make_batches
from nmt_desktop.core.training.corpus_formats import Pair
from nmt_desktop.core.training.encoding import EncodedCorpus
from nmt_desktop.core.training.metrics import corpus_bleu, corpus_chrf

DECODE_BATCH = 64  # sentences per decoding batch, and between two progress reports
Progress = Callable[[int, int], None]  # (sentences decoded, sentences to decode)


@torch.no_grad()
def evaluate_dev(model: Transformer, tokenizers: TokenizerPair, dev_data: EncodedCorpus, dev_pairs: list[Pair],
                 cfg: TrainConfig, device: torch.device, autocast: contextlib.AbstractContextManager,
                 progress: Progress | None = None) -> dict[str, Any]:
    """Dev loss and perplexity (teacher forced), BLEU and chrF of decodes, samples, probe attention.

    The model is left in train mode: this runs between optimizer steps.
    """
    model.eval()
    ntok = 0
    summed = torch.zeros((), device=device)  # () summed dev NLL, read once after the last batch
    for batch in make_batches(dev_data, cfg.batch_tokens, shuffle=False):
        src, tgt_in, tgt_out = (t.to(device) for t in (batch.src, batch.tgt_in, batch.tgt_out))
        keep = tgt_out != model.config.pad_id  # (B, T): only these positions reach the output projection
        with autocast:
            logits = model(src, tgt_in, keep)  # (N, V)
        summed += F.cross_entropy(logits.float(), tgt_out[keep], reduction="sum")
        ntok += batch.n_tgt_tokens
    dev_loss = float(summed) / max(ntok, 1)
    pairs = decoded_pairs(dev_pairs, cfg)
    translator = Translator(model, tokenizers)
    t0 = time.perf_counter()
    decode_cfg = DecodeConfig(beam_size=cfg.eval_beam, attention=False, alternatives=1)
    hyps = decode_in_batches(translator, [s for s, _ in pairs], decode_cfg, progress)
    refs = [r for _, r in pairs]
    out: dict[str, Any] = {
        "dev_loss": round(dev_loss, 5), "dev_ppl": round(math.exp(min(dev_loss, 50.0)), 3),
        "bleu": round(corpus_bleu(hyps, refs), 3), "chrf": round(corpus_chrf(hyps, refs), 3),
        "decode_s": round(time.perf_counter() - t0, 2), "sentences": len(pairs),
        "samples": [{"source": s, "reference": r, "hypothesis": h}
                    for (s, r), h in list(zip(pairs, hyps))[: cfg.samples]],
    }
    if cfg.probe:
        probe = translator.translate(cfg.probe, DecodeConfig(beam_size=1))
        out["probe"] = {"source": cfg.probe, "translation": probe.text, "source_tokens": probe.source_tokens,
                        "target_tokens": probe.target_tokens,
                        "attention": None if probe.attention is None else probe.attention.round(4).tolist()}
    model.train()
    return out


def decoded_pairs(dev_pairs: list[Pair], cfg: TrainConfig) -> list[Pair]:
    """The dev pairs an evaluation decodes for BLEU and chrF (the first `eval_sentences`; 0: all)."""
    return dev_pairs[: cfg.eval_sentences] if cfg.eval_sentences else dev_pairs


def decode_in_batches(translator: Translator, sources: list[str], cfg: DecodeConfig,
                      progress: Progress | None = None) -> list[str]:
    """`translate_batch` in its own length-sorted batches, one call per batch so that `progress` hears of each;
    the translations come back in input order."""
    order = sorted(range(len(sources)), key=lambda i: len(translator.source_ids(sources[i])))
    hyps = [""] * len(sources)
    for start in range(0, len(order), DECODE_BATCH):
        picked = order[start: start + DECODE_BATCH]
        for i, t in zip(picked, translator.translate_batch([sources[i] for i in picked], cfg,
                                                           batch_size=DECODE_BATCH)):
            hyps[i] = t.text
        if progress is not None:
            progress(min(start + DECODE_BATCH, len(order)), len(order))
    return hyps
