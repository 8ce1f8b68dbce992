"""Online learning (issue 45): the model takes optimizer steps on each confirmed segment, so the next sentence
is translated by weights that have read every post-edit so far; kept beside the memory (learned_weights.py).

Two Adam steps (lr 1e-4) on the confirmed pair with `replay` earlier memory pairs in the same batch, plus an
L2-SP pull toward the parent weights (`l2sp` * sum (w - w0)^2) that limits what everyday text loses: the trade-off
chosen in benchmarks/online_learning.py (RESULTS, "Online learning from each confirmed segment"); the learned
weights translate only text like the memory's segments (`wants_learned`), which is what met both of issue 45's
quality goals on the test split for every replay draw tried (round 9); the second step lifted the gain on the dev
split past +3 too (round 11). Model-agnostic: it reads the model's parameters and turns text
into ids through the callables it is given (a `Translator`'s, see `attach`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from nmt_desktop.core.adaptation.kept_states import drop_kept_states
from nmt_desktop.core.adaptation.learned_weights import LearnedWeights, fingerprint, learned_beside

__all__ = ["OnlineLearner", "OnlineLearning"]


@dataclass(frozen=True)
class OnlineLearning:
    """enabled: learn from confirmed segments (what was learned before is used whenever its file is beside the
    memory); lr, steps: Adam's per confirmation; replay: earlier memory pairs in each step's batch; l2sp: the
    pull toward the parent weights; smoothing: label smoothing of the token loss; gate: the learned weights only
    for a text like the memory's segments (`wants_learned`: a memory match at the kNN min score, and at least as
    many words as the memory's shortest tenth of segments, or an exact match), the others with the parent's, so that everyday text
    loses little (benchmarks/RESULTS.md, "Online learning", round 9)."""

    enabled: bool = True
    lr: float = 1e-4
    steps: int = 2
    replay: int = 3
    l2sp: float = 3e-2
    smoothing: float = 0.1
    gate: bool = True


@dataclass(frozen=True)
class Ids:
    """How the learner reads text: a Translator's `source_ids`, target ids without </s>, `batch_ids` (padding)."""

    source: Callable[[str], list[int]]
    target: Callable[[str], list[int]]
    batch: Callable[[Sequence[Sequence[int]]], Tensor]
    pad: int
    eos: int
    start: int


class OnlineLearner:
    """Updates `model` in place on confirmed pairs; `save()` keeps the update (and Adam's moments) in `store`,
    `clear()` brings the parent back and drops it. Created by `attach`, which loads what the store holds."""

    def __init__(self, model: nn.Module, ids: Ids, settings: OnlineLearning, store: LearnedWeights | None = None,
                 earlier: Sequence[tuple[str, str]] = ()):
        self.model, self.ids, self.settings, self.store = model, ids, settings, store
        self.params = dict(model.named_parameters())
        self.parent = {n: p.detach().clone() for n, p in self.params.items()}
        self._optimizer: torch.optim.Adam | None = None  # made at the first update (torch.optim imports slowly)
        self._moments: dict[nn.Parameter, dict[str, Tensor]] = {}  # Adam's state loaded before it is made
        self.seen = list(earlier)  # the memory's pairs so far: what is replayed
        self.learned = 0  # confirmations learned from (the replay's seed: a resumed run draws the same pairs)
        self._set_aside: dict[str, Tensor] | None = None  # the learned weights while the parent's are used (`use`)
        self._short: tuple[int, int] = (-1, 0)  # (len(seen) it was computed at, the memory's 10th-percentile length)
        self.loaded_fingerprint: str | None = None  # of the learned weights read from the store: names their states

    @property
    def optimizer(self) -> torch.optim.Adam:
        if self._optimizer is None:
            self._optimizer = torch.optim.Adam(list(self.params.values()), lr=self.settings.lr)
            self._optimizer.state.update(self._moments)
            self._moments = {}
        return self._optimizer

    def moments(self) -> dict[nn.Parameter, dict[str, Tensor]]:
        """Adam's state by parameter (loaded or made), without making the optimizer."""
        return self._moments if self._optimizer is None else self._optimizer.state  # type: ignore[return-value]

    def batch(self, pairs: Sequence[tuple[str, str]]) -> tuple[Tensor, Tensor, Tensor]:
        """Source ids (B, S), decoder input (B, T) and targets (B, T), padded."""
        ids = self.ids
        src = ids.batch([ids.source(s) for s, _ in pairs])  # (B, S)
        targets = [ids.target(t) + [ids.eos] for _, t in pairs]
        tgt_in = torch.full((len(pairs), max(map(len, targets))), ids.pad, dtype=torch.long)  # (B, T)
        tgt_out = tgt_in.clone()  # (B, T)
        for r, t in enumerate(targets):
            tgt_in[r, : len(t)] = torch.tensor([ids.start, *t[:-1]])
            tgt_out[r, : len(t)] = torch.tensor(t)
        return src.to(tgt_in.device), tgt_in.to(src.device), tgt_out.to(src.device)

    def loss(self, pairs: Sequence[tuple[str, str]]) -> Tensor:
        """Mean label-smoothed token loss of pairs plus the L2-SP pull."""
        src, tgt_in, tgt_out = self.batch(pairs)
        keep = tgt_out != self.ids.pad  # (B, T)
        logits = self.model(src, tgt_in, keep)  # (N, V)
        loss = F.cross_entropy(logits.float(), tgt_out[keep], label_smoothing=self.settings.smoothing)
        if self.settings.l2sp:
            loss = loss + self.settings.l2sp * sum(((p - self.parent[n]) ** 2).sum() for n, p in self.params.items())
        return loss

    def learn(self, pairs: Sequence[tuple[str, str]]) -> bool:
        """`steps` Adam steps on confirmed pairs with `replay` earlier ones; the model is left in eval mode.
        False when nothing was learned (learning off, or no pair with both sides)."""
        pairs = [(s.strip(), t.strip()) for s, t in pairs if s.strip() and t.strip()]
        if not pairs or not self.settings.enabled:
            return False
        self.use(True)
        rng = random.Random(self.learned)
        batch = [*pairs, *rng.sample(self.seen, min(self.settings.replay, len(self.seen)))]
        self.seen.extend(pairs)
        self.learned += 1
        self.model.eval()  # no dropout: a single pair's step is already noisy
        with torch.enable_grad():
            for _ in range(self.settings.steps):
                self.optimizer.zero_grad(set_to_none=True)
                self.loss(batch).backward()
                self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return True

    def wants_learned(self, text: str, matched: bool, exact: bool = False) -> bool:
        """Whether `text` (with a memory match or not; `exact`: the memory holds its source) is translated with the
        learned weights: with the gate, only a text like the memory's segments, with a match and at least as many
        words as the memory's shortest tenth (any length while the memory holds fewer than 10). The weights
        learned from long parliamentary segments cost short everyday sentences that happen to match them 0.4-0.8
        chrF; this gate, 0.2 (RESULTS). An exact match of any length takes the learned weights: the repeat rule
        gives the memory's translation under either weights, and the learned model's states of the segments are
        the ones a learning run kept (the parent's would be decoded again)."""
        if not self.settings.gate:
            return True
        return exact or (matched and len(text.split()) >= self.short_length())

    def short_length(self) -> int:
        """The memory's 10th-percentile segment length in words (0 while it holds fewer than 10 segments)."""
        if self._short[0] != len(self.seen):
            lengths = sorted(len(s.split()) for s, _ in self.seen)
            self._short = (len(self.seen), lengths[int(0.1 * (len(lengths) - 1))] if len(lengths) >= 10 else 0)
        return self._short[1]

    # --- kept with the memory -----------------------------------------------------------------------

    def state(self) -> dict[str, Tensor]:
        """The learned weights (whole, not a difference: they reload bit for bit) and Adam's moments, by name."""
        out: dict[str, Tensor] = {}
        for n, p in self.params.items():
            out[f"weight.{n}"] = (p.detach() if self._set_aside is None else self._set_aside[n]).contiguous()
            moments = self.moments().get(p, {})
            for key in ("exp_avg", "exp_avg_sq"):
                if key in moments:
                    out[f"{key}.{n}"] = moments[key].contiguous()
        return out

    def load_state(self, tensors: dict[str, Tensor], learned: int, steps: int) -> None:
        with torch.no_grad():
            for n, p in self.params.items():
                if f"weight.{n}" in tensors:
                    p.copy_(tensors[f"weight.{n}"])
                if f"exp_avg.{n}" in tensors and f"exp_avg_sq.{n}" in tensors:
                    self.moments()[p] = {"step": torch.tensor(float(steps)),
                                               "exp_avg": tensors[f"exp_avg.{n}"].to(p.device).clone(),
                                               "exp_avg_sq": tensors[f"exp_avg_sq.{n}"].to(p.device).clone()}
        self.learned = learned

    def save(self) -> None:
        """Write the update beside the memory (atomically); nothing when learning is off or nothing was learned."""
        if self.store is not None and self.learned and self.settings.enabled:
            steps = max((int(s["step"]) for s in self.moments().values() if "step" in s), default=0)
            self.store.save(self.state(), {"learned": str(self.learned), "steps": str(steps)})

    def use(self, learned: bool) -> bool:
        """Decode with the learned weights (True) or the parent's (False: adaptation switched off, or a text the
        gate sends to the parent), keeping both; True when the weights changed (the backend must prepare them)."""
        if learned == (self._set_aside is None):
            return False
        with torch.no_grad():
            if learned:
                for n, p in self.params.items():
                    p.copy_(self._set_aside[n])  # type: ignore[index]
                self._set_aside = None
            else:
                self._set_aside = {n: p.detach().clone() for n, p in self.params.items()}
                for n, p in self.params.items():
                    p.copy_(self.parent[n])
        return True

    def clear(self) -> None:
        """The parent weights back, nothing learned, the kept update deleted."""
        with torch.no_grad():
            for n, p in self.params.items():
                p.copy_(self.parent[n])
        self.moments().clear()
        self.seen, self.learned, self._set_aside = [], 0, None
        if self.store is not None:
            self.store.drop()
            self.drop_loaded_states()

    def drop_loaded_states(self) -> None:
        """Delete the memory states kept for the learned weights that were read from the store (replaced by a
        learning run's, or cleared): no model will ask for them again."""
        if self.store is not None and self.loaded_fingerprint is not None:
            drop_kept_states(self.store.memory_path, self.loaded_fingerprint)
            self.loaded_fingerprint = None

    @classmethod
    def attach(cls, translator: Any, memory_path: Path, earlier: Sequence[tuple[str, str]],
               settings: OnlineLearning | None = None) -> "OnlineLearner | None":
        """A learner for a float `Translator` with what the store beside `memory_path` holds for this model loaded
        into its weights; `earlier`: the memory's pairs; settings None: only load what was kept (the app, which
        does not learn). None for int8 (its quantized layers do not learn) and when learning is off and nothing was
        learned (no file beside the memory: the model is not even read)."""
        settings = settings or OnlineLearning(enabled=False)
        memory_path = Path(memory_path)
        if getattr(translator, "int8", False) or not (
                settings.enabled or learned_beside(memory_path)):
            return None
        store = LearnedWeights(memory_path, fingerprint(translator.model))
        if not settings.enabled and not store.path.is_file():
            return None
        cfg = translator.config
        ids = Ids(translator.source_ids, translator._target_ids, translator.batch_ids, cfg.pad_id, cfg.eos_id,
                  cfg.decoder_start_id)
        learner = cls(translator.model, ids, settings, store, earlier)
        kept = store.load()
        if kept is not None:
            tensors, meta = kept
            learner.load_state(tensors, int(meta.get("learned", "0")), int(meta.get("steps", "0")))
            translator.weights_replaced()  # the learned model's own states beside the memory
            learner.loaded_fingerprint = fingerprint(translator.model)
        return learner
