"""Teacher forcing: feed a given target through the decoder and report how the model reads it.

`forced_steps` is a search that chooses nothing: step t feeds the given token t-1 (the decoder
start token first) and reports the given token t with its log-probability, the model's top-k
alternatives at that position and every layer's and head's attention, exactly as a greedy step
reports the token it chose. It runs on any `StepBackend` (backend.py), one position at a time on
the K/V cache, over a batch of sources with targets of different lengths: a row leaves the batch
once its final </s> is scored. So a forced step and a greedy step that see the same prefix give
the same log-probabilities (tests/core/decoding/test_forcing.py), and `pipeline.Search` collects the steps
into `Hypothesis`es like any search's.

No token is masked except <pad> (never a real target token): a given translation may end before
`DecodeConfig.min_length`, and its </s> is scored as the model sees it.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import torch

from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.decoding.backends.step_backend import StepBackend
from nmt_desktop.core.decoding.backends.choice import choose_backend
from nmt_desktop.core.decoding.results import Step
from nmt_desktop.core.decoding.search import _attn, _prepare, keep_rows, step_list
from nmt_desktop.core.decoding.selection import chosen_and_alternatives, log_probs
from nmt_desktop.core.model.transformer import Transformer

__all__ = ["check_target", "forced_steps"]


def check_target(model: Transformer, target: Sequence[int]) -> list[int]:
    """The target ids with </s> appended; ValueError when it holds </s> or cannot fit the model."""
    ids = [int(t) for t in target]
    if model.config.eos_id in ids:
        raise ValueError("a target to score cannot contain </s> (it is added at the end)")
    if len(ids) + 1 > model.config.max_positions - 1:
        raise ValueError(f"the target has {len(ids)} tokens but this model scores at most "
                         f"{model.config.max_positions - 2}; split it into shorter sentences")
    return ids + [model.config.eos_id]


def forced_steps(model: Transformer, src: torch.Tensor, targets: Sequence[Sequence[int]], cfg: DecodeConfig,
                 backend: StepBackend | None = None) -> Iterator[list[Step]]:
    """Teacher-forced decoding of sources (B, S) with one target per row (ids without </s>).

    Yields each target position's `Step`s for the rows still being scored; returns (as the
    generator's value) the encoder self-attention when cfg.self_attention, as the searches do.
    """
    if len(targets) != src.shape[0]:
        raise ValueError(f"{src.shape[0]} sources but {len(targets)} targets")
    backend = backend if backend is not None else choose_backend(model)
    eos, pad = model.config.eos_id, model.config.pad_id
    rows = [check_target(model, t) for t in targets]
    max_len = max((len(r) for r in rows), default=0)
    masked = (pad if pad != eos else -1, -1)
    with torch.inference_mode():
        state, tokens, enc_attn = _prepare(model, backend, src, cfg, 1, max_len)
    alive = list(range(src.shape[0]))  # batch rows still being scored, in state order
    for index in range(max_len):
        with torch.inference_mode():
            out = backend.step(state, tokens, cfg.attention, cfg.self_attention)
            logprobs = log_probs(out.logits, masked)  # (R, V)
            given = torch.tensor([rows[r][index] for r in alive], dtype=torch.long, device=logprobs.device)  # (R,)
            k = max(1, min(cfg.alternatives, logprobs.shape[-1]))
            tokens, chosen, alt_ids, alt_lp = chosen_and_alternatives(logprobs, given, k, greedy=False)
            steps = step_list(index, alive, tokens.tolist(), chosen[:, 0].tolist(), alt_ids, alt_lp,
                              _attn(out.cross_attention), _attn(out.self_attention), eos)
        yield steps
        keep = [i for i, row in enumerate(alive) if index + 1 < len(rows[row])]
        if not keep:
            break
        tokens, alive = keep_rows(backend, state, tokens, alive, keep)
    return enc_attn
