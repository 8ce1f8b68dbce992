"""What the model says about a (source, target) pair, read in two teacher-forced passes: the raw material of
quality estimation (quality.py turns it into a sentence score and word flags; issue 31).

Per target token t (its pieces and the final </s>):
- `logprob`: log p(y_t | x, y_<t), the model's own confidence in the given token;
- `prior_logprob`: log p(y_t | x0, y_<t) with x0 an EMPTY source (only the >>lang<< token, if any, and </s>):
  what the decoder would say from the prefix alone. `logprob - prior_logprob` is the source's pointwise
  mutual information with the token (how much the source supports it): near or below zero for a target
  token the source does not explain (a detached target, a hallucinated word);
- `entropy`: of the model's full next-token distribution at t, in nats.
Per source token s: `coverage`, the cross-attention it receives summed over the target tokens (all layers'
and heads' mean), as core/analysis/coverage.py reads omissions.

Both passes are batched (right-padded, length-sorted) and run without gradients in eval mode on whatever
backend weights the translator holds (int8 included: the scores are read from `Transformer.decode`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
import torch

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator


@dataclass
class PairReading:
    """The two passes' readings of one (source, target) pair."""

    source_ids: list[int]
    target_ids: list[int]  # y_0 .. y_{T-1}, </s> last
    logprob: np.ndarray  # (T,) float64
    prior_logprob: np.ndarray  # (T,) float64
    entropy: np.ndarray  # (T,) float64, nats
    coverage: np.ndarray  # (S,) float64: attention received, summed over target tokens (layer/head mean)
    attention: np.ndarray  # (T, S) float32: the cross-attention averaged over layers and heads
    preferred: np.ndarray  # (T,) int64: the model's first choice at each position

    @property
    def support(self) -> np.ndarray:
        """(T,) the source's pointwise mutual information with each target token, in nats."""
        return self.logprob - self.prior_logprob


def empty_source(translator: "Translator", source_ids: Sequence[int]) -> list[int]:
    """The source with its words removed: a leading >>lang<< token kept (it steers a multilingual model),
    </s> kept when the model adds one."""
    cfg = translator.config
    ids: list[int] = []
    if source_ids and translator.target_languages and translator.source_pieces([source_ids[0]])[0].startswith(">>"):
        ids.append(int(source_ids[0]))
    if cfg.src_add_eos or not ids:
        ids.append(cfg.eos_id)
    return ids


def _pad(rows: Sequence[Sequence[int]], pad: int) -> torch.Tensor:
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), pad, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(list(r), dtype=torch.long)
    return out


def _teacher_forced(translator: "Translator", sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]],
                    want_attention: bool) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]]:
    """Per pair: (logprob (T,), entropy (T,), attention (T, S) or None, first choice (T,)), one batched pass."""
    cfg, model = translator.config, translator.model
    src = _pad(sources, cfg.pad_id).to(translator.device)  # (B, S)
    tgt_in = _pad([[cfg.decoder_start_id] + list(t[:-1]) for t in targets], cfg.pad_id).to(translator.device)  # (B, T)
    gold = _pad(targets, cfg.pad_id).to(translator.device)  # (B, T)
    out = model.decode(tgt_in, model.encode(src), need_cross=want_attention)
    logp = torch.log_softmax(out.logits.float(), dim=-1)  # (B, T, V)
    token = logp.gather(-1, gold[..., None])[..., 0].double().cpu().numpy()  # (B, T)
    entropy = -(logp.exp() * logp).sum(-1).double().cpu().numpy()  # (B, T)
    first = logp.argmax(-1).cpu().numpy()  # (B, T)
    attn = None
    if want_attention:
        attn = out.cross_attention.float().mean(dim=(1, 2)).cpu().numpy()  # (B, T, S)
    results = []
    for i, (s, t) in enumerate(zip(sources, targets)):
        a = None if attn is None else attn[i, : len(t), : len(s)]
        results.append((token[i, : len(t)], entropy[i, : len(t)], a, first[i, : len(t)]))
    return results


def read_pairs(translator: "Translator", pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
               batch_size: int = 32, progress: Callable[[int, int], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> list[PairReading]:
    """`PairReading`s of (source ids, target ids without </s>) pairs, in input order, in length-sorted batches.
    `progress(done, total)` after each batch; `cancelled()` checked between batches (a partial list comes back)."""
    eos = translator.config.eos_id
    full = [(list(s), list(t) + [eos]) for s, t in pairs]
    order = sorted(range(len(full)), key=lambda i: (len(full[i][0]), len(full[i][1])))
    found: dict[int, PairReading] = {}
    model = translator.model
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(order), batch_size):
                if cancelled is not None and cancelled():
                    break
                chunk = order[start:start + batch_size]
                sources = [full[i][0] for i in chunk]
                targets = [full[i][1] for i in chunk]
                given = _teacher_forced(translator, sources, targets, want_attention=True)
                prior = _teacher_forced(translator, [empty_source(translator, s) for s in sources], targets,
                                        want_attention=False)
                for i, (lp, ent, attn, first), (lp0, _, _, _) in zip(chunk, given, prior):
                    found[i] = PairReading(full[i][0], full[i][1], lp, lp0, ent,
                                           attn.sum(axis=0).astype(np.float64), attn, first)
                if progress is not None:
                    progress(min(start + batch_size, len(order)), len(order))
    finally:
        model.train(was_training)
    return [found[i] for i in range(len(full)) if i in found]
