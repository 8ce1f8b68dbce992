"""Scoring a given translation: what `Translator.score` / `score_batch` (teacher forcing, forcing.py) read.

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
from typing import Sequence

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.decoding.document import InputTooLongError
from nmt_desktop.core.decoding.results import Hypothesis
from nmt_desktop.core.tokenizer import Tokenizer

__all__ = ["Disagreement", "disagreements", "target_ids"]


def target_ids(target_tokenizer: Tokenizer, config: ModelConfig, target: str | Sequence[int]) -> list[int]:
    """A target given as text (tokenized with the model's target tokenizer) or as ids; </s> dropped at the end.
    InputTooLongError when it cannot fit the model."""
    ids = target_tokenizer.encode(target) if isinstance(target, str) else [int(t) for t in target]
    eos = config.eos_id
    while ids and ids[-1] == eos:
        ids = ids[:-1]
    if eos in ids:
        raise ValueError("a target to score cannot contain </s> before its end")
    limit = config.max_positions - 2
    if len(ids) > limit:
        text = target if isinstance(target, str) else target_tokenizer.decode(ids)
        raise InputTooLongError(f"the translation \"{text[:40]}{'…' if len(text) > 40 else ''}\" has {len(ids)} "
                                f"tokens but this model scores at most {limit}; split the pair into shorter sentences")
    return ids


@dataclass
class Disagreement:
    """A position where the model's first choice is not the given token."""

    index: int  # 0-based target position
    given: str  # the given piece
    given_prob: float
    preferred: str  # the model's first choice
    preferred_prob: float


def disagreements(hyp: Hypothesis) -> list[Disagreement]:
    """Where the model would have said something else, in order."""
    out = []
    for t, (token_id, piece, alts) in enumerate(zip(hyp.token_ids, hyp.tokens, hyp.alternatives)):
        if alts and alts[0].token_id != token_id:
            out.append(Disagreement(t, piece, math.exp(hyp.token_logprobs[t]), alts[0].piece, alts[0].prob))
    return out
