"""Choosing tokens from a step's logits in plain torch: the reference for the compiled kernels.

A search asks its backend for the greedy pick (with the top-k alternatives) or for beam search's best
expansions; the reference and Python backends answer with these functions (`PythonSelection`), the
compiled backend with native/search_ops.cpp, which gives the same tokens (tests/core/decoding/backends/test_backends.py).
Forced-prefix and sampled steps need every log-probability and use these functions on any backend.

`masked`: the ids never chosen at this step, (pad, eos) with -1 for none (see search.masked_ids).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

__all__ = ["PythonSelection", "alternatives", "beam_candidates", "chosen_and_alternatives", "log_probs"]


def log_probs(logits: Tensor, masked: tuple[int, int]) -> Tensor:
    """(R, V) logits -> float32 log-probabilities with the `masked` ids at -inf."""
    logprobs = torch.log_softmax(logits if logits.dtype == torch.float32 else logits.float(), dim=-1)
    for token in masked:
        if token >= 0:
            logprobs.select(1, token).fill_(float("-inf"))
    return logprobs


def alternatives(logprobs: Tensor, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k token ids and log-probs per row: two (R, k) arrays."""
    k = max(1, min(k, logprobs.shape[-1]))
    top = torch.topk(logprobs, k, dim=-1)
    return top.indices.cpu().numpy(), top.values.cpu().numpy().astype(np.float32)


def chosen_and_alternatives(logprobs: Tensor, tokens: Tensor, k: int, greedy: bool
                            ) -> tuple[Tensor, Tensor, np.ndarray, np.ndarray]:
    """tokens (R,), their log-probs (R, 1) and the top-k alternatives (R, k) from logprobs (R, V);
    `greedy`: the tokens are the argmax, so with k == 1 they are their own alternatives."""
    chosen = logprobs.gather(1, tokens[:, None])  # (R, 1)
    if k <= 1 and greedy:
        return tokens, chosen, tokens[:, None].cpu().numpy(), chosen.cpu().numpy()
    return (tokens, chosen, *alternatives(logprobs, k))


def beam_candidates(logprobs: Tensor, scores: Tensor, k_alt: int
                    ) -> tuple[Tensor, Tensor, Tensor, np.ndarray, np.ndarray]:
    """The best 2K expansions of each sentence and every row's top alternatives, from one top-k per row.

    logprobs (B*K, V), scores (B, K) -> candidate scores, flat indices into K*V (beam * V + token)
    and token log-probs, each (B, 2K), best first, and the alternatives as in `alternatives`. A
    sentence's best 2K expansions are among its beams' own best 2K tokens, so one top-k over (B*K, V)
    replaces a top-k over (B, K*V) plus a second one for the alternatives.
    """
    B, K = scores.shape
    V = logprobs.shape[-1]
    n = min(2 * K, V)
    k_alt = max(1, min(k_alt, V))
    row_lp, row_ids = torch.topk(logprobs, max(n, k_alt), dim=-1)  # (B*K, m) each
    cand = (scores.view(-1, 1) + row_lp[:, :n]).view(B, K * n)  # (B, K*n)
    top_scores, pos = torch.topk(cand, min(2 * K, K * n), dim=-1)  # (B, 2K)
    beam = torch.div(pos, n, rounding_mode="floor")  # (B, 2K) beam within the sentence
    picked = row_ids[:, :n].reshape(B, K * n).gather(1, pos)  # (B, 2K) token ids
    top_lps = row_lp[:, :n].reshape(B, K * n).gather(1, pos)  # (B, 2K) each candidate token's log-prob
    return (top_scores, beam * V + picked, top_lps,
            row_ids[:, :k_alt].cpu().numpy(), row_lp[:, :k_alt].cpu().numpy().astype(np.float32))


class PythonSelection:
    """The `StepBackend` selection methods in plain torch (reference and Python backends)."""

    def pick(self, logits: Tensor, k: int, masked: tuple[int, int]) -> tuple[Tensor, Tensor, np.ndarray, np.ndarray]:
        """The greedy pick from logits (R, V): tokens (R,), their log-probs (R, 1), top-k alternatives (R, k)."""
        logprobs = log_probs(logits, masked)  # (R, V)
        return chosen_and_alternatives(logprobs, logprobs.argmax(-1), k, greedy=True)

    def beam_candidates(self, logits: Tensor, scores: Tensor, k_alt: int, masked: tuple[int, int]
                        ) -> tuple[Tensor, Tensor, Tensor, np.ndarray, np.ndarray]:
        """`beam_candidates` from logits (B*K, V)."""
        return beam_candidates(log_probs(logits, masked), scores, k_alt)
