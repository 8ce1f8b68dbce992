"""Naming a search's results: the searches know ids only; this fills in the readable pieces and text
(the target tokenizer) and cuts attention to a unit's own source length, in place, so a `Step` or a
`Hypothesis` travels on as the same object (results.py)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from nmt_desktop.core.decoding.results import Alternative, Hypothesis, Step, Translation, Unit
from nmt_desktop.core.tokenizer import Tokenizer


def _name_alternatives(target: Tokenizer, alternatives: list[Alternative]) -> None:
    for alt, piece in zip(alternatives, target.pieces([a.token_id for a in alternatives])):
        alt.piece = piece


def name_step(target: Tokenizer, step: Step, source_len: int) -> Step:
    """A streamed step, named: its piece, its alternatives' pieces, attention (L, H, source_len) (a view)."""
    step.piece = target.pieces([step.token_id])[0]
    _name_alternatives(target, step.alternatives)
    if step.cross_attention is not None:
        step.cross_attention = step.cross_attention[..., :source_len]
    return step


def name_hypothesis(target: Tokenizer, hyp: Hypothesis, source_len: int) -> Hypothesis:
    """A finished hypothesis, named: text, pieces, alternatives' pieces, attention (L, H, T, source_len)."""
    hyp.text = target.decode(hyp.token_ids)
    hyp.tokens = target.pieces(hyp.token_ids)
    for alternatives in hyp.alternatives:
        _name_alternatives(target, alternatives)
    if hyp.attention is not None:
        hyp.attention = hyp.attention[..., :source_len]
    return hyp


def translation_of(target: Tokenizer, unit: Unit, hyps: Sequence[Hypothesis],
                   encoder_attention: np.ndarray | None) -> Translation:
    """A unit's `Translation` from its search row: n-best named, encoder attention (L, H, B-wide S, S) cut to
    (L, H, S, S) for this unit's S."""
    S = len(unit.source_ids)
    enc = None if encoder_attention is None else encoder_attention[:, :, :S, :S]
    return Translation(unit.text, unit.source_ids, unit.source_tokens, [name_hypothesis(target, h, S) for h in hyps],
                       enc)
