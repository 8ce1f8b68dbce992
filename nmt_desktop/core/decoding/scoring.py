"""Scoring a given translation: `Translator.score` / `score_batch` (teacher forcing, forcing.py).

The result is an ordinary `Translation` whose one hypothesis is the given target (`forced=True`), so
every view, export and analysis that works on a decoded translation works on a scored one: per-token
log-probabilities (`token_logprobs`), the model's top-k alternatives at each position (`alternatives`;
`disagreements` lists where its first choice is another token), cross- and self-attention for every
layer and head, the sentence log-probability (`logprob`) and perplexity.

Pairs are scored in length-sorted batches like `translate_batch`; a pair too long for the model is
refused with `InputTooLongError` (a given target cannot be split at sentence ends the way a source can:
its sentences need not line up with the source's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.document import InputTooLongError, check_length
from nmt_desktop.core.decoding.forcing import forced_steps
from nmt_desktop.core.decoding.search import capture_return, collect_greedy

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Hypothesis, Translation, Translator

__all__ = ["Disagreement", "disagreements", "score_batch"]


def _target_ids(translator: "Translator", target: str | Sequence[int]) -> list[int]:
    """A target given as text (tokenized with the model's target tokenizer) or as ids; </s> dropped at the end."""
    ids = translator.target_prefix_ids(target) if isinstance(target, str) else [int(t) for t in target]
    eos = translator.config.eos_id
    while ids and ids[-1] == eos:
        ids = ids[:-1]
    if eos in ids:
        raise ValueError("a target to score cannot contain </s> before its end")
    limit = translator.config.max_positions - 2
    if len(ids) > limit:
        text = target if isinstance(target, str) else translator.tokenizers.target.decode(ids)
        raise InputTooLongError(f"the translation \"{text[:40]}{'…' if len(text) > 40 else ''}\" has {len(ids)} "
                                f"tokens but this model scores at most {limit}; split the pair into shorter sentences")
    return ids


def score_batch(translator: "Translator", pairs: Sequence[tuple[str, str | Sequence[int]]],
                cfg: DecodeConfig | None = None, batch_size: int = 16) -> list["Translation"]:
    """Score (source text, target text or ids) pairs; results in input order.

    cfg: `alternatives` (top-k per position), `attention`, `self_attention` and `length_penalty` (for
    `score`, as in a search) apply; the search options do not.
    """
    cfg = cfg or DecodeConfig()
    units = []
    for source, target in pairs:
        ids = translator.source_ids(source)
        check_length(ids, source, translator.config.max_positions)
        units.append((source, ids, _target_ids(translator, target)))
    out: dict[int, "Translation"] = {}
    order = sorted(range(len(units)), key=lambda u: (len(units[u][1]), len(units[u][2])))
    for start in range(0, len(order), max(1, batch_size)):
        picked = order[start: start + max(1, batch_size)]
        src = translator._batch([units[u][1] for u in picked])
        steps = forced_steps(translator.model, src, [units[u][2] for u in picked], cfg, translator.backend)
        holder: list = []
        hyps = collect_greedy(capture_return(steps, holder), len(picked), cfg, translator.config.eos_id)
        enc = holder[0] if holder else None
        for b, (u, hyp) in enumerate(zip(picked, hyps)):
            text, ids, _ = units[u]
            enc_b = None if enc is None else enc[b, :, :, : len(ids), : len(ids)]
            tr = translator._translation(text, ids, [hyp], enc_b)
            tr.best.forced = True
            out[u] = tr
    return [out[u] for u in range(len(units))]


@dataclass
class Disagreement:
    """A position where the model's first choice is not the given token."""

    index: int  # 0-based target position
    given: str  # the given piece
    given_prob: float
    preferred: str  # the model's first choice
    preferred_prob: float


def disagreements(hyp: "Hypothesis") -> list[Disagreement]:
    """Where the model would have said something else, in order."""
    out = []
    for t, (token_id, piece, alts) in enumerate(zip(hyp.token_ids, hyp.tokens, hyp.alternatives)):
        if alts and alts[0].token_id != token_id:
            out.append(Disagreement(t, piece, math.exp(hyp.token_logprobs[t]), alts[0].piece, alts[0].prob))
    return out
