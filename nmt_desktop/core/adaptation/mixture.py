"""The kNN-MT mixture of one step: p = (1 - λ) p_model + λ p_kNN, row by row.

p_kNN puts softmax(-d / T) of the k nearest keys (squared L2 distance d to the step's hidden state, among the
keys of the row's own sentence) on the tokens that followed them. λ is fixed, or adaptive as in SK-MT
(Dai et al. 2023): λ = max(0, 1 - d_nearest / T), so a state far from every memory state keeps the model's
distribution and an exact repeat (d = 0) follows the memory. A row whose sentence has no keys, or whose λ
is 0, keeps the model's logits untouched (the plain path, bit for bit). A state at distance ~0 from a stored one
(`EXACT`: the same source and prefix as a confirmed segment) follows that segment: λ = 1.

The mixed rows' scores are log-probabilities, which every backend's token choice takes as logits
(log_softmax of a log-distribution is itself), so greedy, sampling and beam search on any backend apply it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from nmt_desktop.core.adaptation.datastore import Datastore
from nmt_desktop.core.adaptation.memory_use import MemorySource, MemoryUse

__all__ = ["EXACT", "KnnMixture", "Mixed"]

# squared L2 distance, as a share of the state's own squared norm, under which a state is the stored one (the same
# source and prefix; float rounding between the forced pass and the search's step keeps them ~1e-7 apart, int8's
# per-batch activation scales ~1e-3): λ = 1 and only such neighbours vote, so a confirmed segment comes back whole
# when its source does, whatever k, T and λ say. On parliamentary en-de, 99% of other steps' nearest keys lie farther
# than 3% (benchmarks/adaptive.py's streams).
EXACT = 0.01


@dataclass
class Mixed:
    """One step's scores after the mixture and what provenance needs of it."""

    logits: Tensor  # (R, V): mixed log-probs on the adapted rows, the model's logits elsewhere
    rows: dict[int, int] = field(default_factory=dict)  # row in R -> its index m among the adapted rows
    weight: np.ndarray | None = None  # (M,) λ
    knn_weight: np.ndarray | None = None  # (M, k) softmax(-d / T) of the neighbours
    knn_value: np.ndarray | None = None  # (M, k) the tokens they vote for
    knn_match: np.ndarray | None = None  # (M, k) their memory match (index into `sources`)
    sources: tuple[MemorySource, ...] = ()

    def use(self, row: int, token: int) -> MemoryUse | None:
        """How row `row`'s chosen `token` used the memory (None: the row was not adapted at this step)."""
        return self.uses([row], [token])[0]

    def uses(self, rows: Sequence[int], tokens: Sequence[int]) -> list[MemoryUse | None]:
        """`use` of each (row, token), the array work done once for all of them (a step's rows: every decoded
        token asks, so its cost counts in the decode time with a memory)."""
        out: list[MemoryUse | None] = [None] * len(rows)
        at = [(i, m) for i, m in enumerate(map(self.rows.get, rows)) if m is not None]
        if not at:
            return out
        picked = np.fromiter((m for _i, m in at), dtype=np.int64, count=len(at))  # (A,) index among adapted rows
        token = np.fromiter((tokens[i] for i, _m in at), dtype=np.int64, count=len(at))  # (A,)
        weights, matches = self.knn_weight[picked], self.knn_match[picked]  # (A, k) each
        votes = (self.knn_value[picked] == token[:, None]) & (weights > 0)  # (A, k) a weightless one never votes
        where = torch.as_tensor(np.fromiter((rows[i] for i, _m in at), dtype=np.int64, count=len(at)))
        final = torch.exp(self.logits[where, torch.as_tensor(token)]).tolist()  # (A,) the token's probability
        for a, (i, m) in enumerate(at):
            voted = votes[a]
            mass = float(weights[a][voted].sum())
            if mass <= 0:  # the neighbours voted for other tokens: the model's own choice, mixed down by (1 - λ)
                out[i] = MemoryUse(0.0, ())
                continue
            share = min(1.0, float(self.weight[m]) * mass / final[a]) if final[a] > 0 else 0.0
            by_match: dict[int, float] = {}
            for match, w in zip(matches[a][voted].tolist(), weights[a][voted].tolist()):
                by_match[match] = by_match.get(match, 0.0) + w
            out[i] = MemoryUse(share, tuple(
                MemorySource(self.sources[j].entry_id, self.sources[j].source, self.sources[j].target, w / mass)
                for j, w in sorted(by_match.items(), key=lambda kv: -kv[1])))
        return out


class KnnMixture:
    """A search's datastore and the mixture's settings (k, temperature T, λ fixed or None: adaptive)."""

    def __init__(self, store: Datastore, k: int, temperature: float, weight: float | None = None,
                 max_weight: float = 1.0, reach: float | None = None):
        self.store, self.k, self.temperature = store, max(1, k), float(temperature)
        self.reach = float(temperature if reach is None else reach)
        self.weight, self.max_weight = weight, max_weight
        self._has_keys = store.has_keys()  # (B,)
        self._with_keys = int(self._has_keys.sum())
        self._rows: Tensor | None = None

    def _all_rows(self, n: int) -> Tensor:
        """arange(n), made once per row count."""
        if self._rows is None or self._rows.shape[0] != n:
            self._rows = torch.arange(n)
        return self._rows

    def _distances(self, h: Tensor, hh: Tensor, sentences: Tensor | None) -> Tensor:
        """Squared L2 distances of states h (M, D) (squared norms hh (M,)) of rows of `sentences` (M,) (None: the
        store's one sentence) to their own sentence's keys: (M, K), inf on padding. The rows are laid out as (B, r, D), r the most rows of one
        sentence, so one batched product per sentence block replaces an (M, B*K) product whose other-sentence
        columns were masked out. The product reads every key it compares (memory-bound: ~5 MB of keys for 16
        sentences of the bundled model), so only the blocks of sentences still decoding are read."""
        store = self.store
        if sentences is None:  # one block, every row in it
            return torch.baddbmm(store.norms[:, None, :] + hh[None, :, None], h[None], store.keys_t,
                                 alpha=-2.0)[0].clamp_min_(0.0)
        counts = torch.bincount(sentences, minlength=store.sentences)  # (B,) rows per sentence
        keys_t, norms = store.keys_t, store.norms  # (B, D, K), (B, K)
        active = counts.nonzero().squeeze(1)  # (U,) the sentences with rows at this step
        if 2 * len(active) <= self._with_keys:  # most steps of a batch: a few long sentences left, the others
            # done; a copy of their blocks alone, trimmed to the longest of them, is cheaper than reading them all
            width = int(store.counts.index_select(0, active).max())
            keys_t = keys_t.index_select(0, active)[:, :, :width]  # (U, D, K')
            norms = norms.index_select(0, active)[:, :width]  # (U, K')
            sentences = (counts > 0).cumsum(0).sub_(1).index_select(0, sentences)  # (M,) index into `active`
            counts = counts.index_select(0, active)  # (U,)
        order = torch.argsort(sentences, stable=True)  # (M,)
        slot = torch.empty_like(sentences)  # (M,) each row's place among its sentence's rows
        slot[order] = self._all_rows(len(order)) - (counts.cumsum(0) - counts).index_select(0, sentences[order])
        blocks, rows = keys_t.shape[0], int(counts.max())
        laid = h.new_zeros(blocks, rows, h.shape[1])  # (U, r, D)
        laid[sentences, slot] = h
        row_norms = h.new_zeros(blocks, rows)  # (U, r)
        row_norms[sentences, slot] = hh
        d = torch.baddbmm(norms[:, None, :] + row_norms[:, :, None], laid, keys_t, alpha=-2.0)  # (U, r, K')
        return d[sentences, slot].clamp_min_(0.0)  # (M, K')

    def mix(self, logits: Tensor, hidden: Tensor, sentences: Tensor) -> Mixed:
        """logits (R, V) and hidden states (R, D) of the rows of sentences (R,) (batch indices) -> `Mixed`."""
        store = self.store
        if store.sentences == 1:  # one sentence (a stream, the CLI's lines): every row has every key
            adapted = self._all_rows(logits.shape[0])
            h = hidden.float()  # (M, D)
            own = None
        else:
            adapted = self._has_keys.index_select(0, sentences).nonzero().squeeze(1)  # (M,)
            if adapted.numel() == 0:
                return Mixed(logits)
            h = hidden.index_select(0, adapted).float()  # (M, D)
            own = sentences.index_select(0, adapted)  # (M,)
        hh = torch.linalg.vecdot(h, h)  # (M,)
        d = self._distances(h, hh, own)  # (M, K)
        dist, nearest = torch.topk(d, min(self.k, d.shape[1]), dim=-1, largest=False)  # (M, k) each
        near = EXACT * hh[:, None]  # (M, 1)
        exact = dist[:, 0] <= near[:, 0]  # (M,) the state of a confirmed segment's own source and prefix
        if self.weight is None:
            lam = (1.0 - dist[:, 0] / self.reach).clamp(0.0, self.max_weight)  # (M,)
        else:
            lam = torch.full((h.shape[0],), float(self.weight), device=logits.device)
        lam = lam.masked_fill(exact, 1.0)
        if not bool(lam.any()):  # every row far from the memory: the model's logits, nothing more computed
            return Mixed(logits)
        keep = lam > 0  # (M,) rows whose neighbours are too far keep the model's own logits: dropped here
        if not bool(keep.all()):
            kept = keep.nonzero().squeeze(1)  # (M',)
            adapted, lam, dist, nearest, near = (t.index_select(0, kept) for t in (adapted, lam, dist, nearest, near))
            exact = exact.index_select(0, kept)
            own = None if own is None else own.index_select(0, kept)
        knn_w = torch.softmax(-dist / self.temperature, -1)  # (M, k); a padded slot (d = inf): 0
        if bool(exact.any()):  # a repeat follows the memory: only its exact neighbours vote
            same = (dist <= near).float()  # (M, k)
            knn_w = torch.where(exact[:, None], same / same.sum(-1, keepdim=True).clamp_min(1.0), knn_w)
        if own is None:
            values, matched = store.values[0][nearest], store.match[0][nearest]  # (M, k) each
        else:
            values, matched = store.values[own[:, None], nearest], store.match[own[:, None], nearest]  # (M, k) each
        if bool(torch.isinf(dist[:, -1]).any()):  # a padded slot votes (weight 0) for the row's nearest token,
            values = torch.where(torch.isinf(dist), values[:, :1], values)  # so no other token is rewritten
        # p_kNN is zero but at the k neighbours' tokens: (1 - λ) p_model everywhere (in log space), then those
        # k tokens rewritten, so only two operations span the vocabulary
        whole = len(adapted) == logits.shape[0]  # every row adapted (adapted is then 0..R-1 in order)
        logp = torch.log_softmax((logits if whole else logits.index_select(0, adapted)).float(), -1)  # (M, V)
        p_knn = torch.bmm((values[:, :, None] == values[:, None, :]).float(), knn_w[:, :, None]).squeeze(2)  # (M, k)
        at_knn = torch.log((1.0 - lam[:, None]) * logp.gather(1, values).exp() + lam[:, None] * p_knn)  # (M, k)
        mixed = logp.add_(torch.log1p(-lam)[:, None])  # (M, V)
        mixed.scatter_(1, values, at_knn)  # a token voted twice gets the same value twice
        if whole:
            out = mixed
        else:
            out = logits.float().clone()
            out.index_copy_(0, adapted, mixed)
        return Mixed(out, {r: m for m, r in enumerate(adapted.tolist())}, lam.numpy(), knn_w.numpy(), values.numpy(),
                     matched.numpy(), store.sources)
