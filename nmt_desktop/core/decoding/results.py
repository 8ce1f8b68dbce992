"""What decoding gives back, one type per concept: a `Unit` (a piece of text the model translates in one
go, with its token ids), a `Step` (one target token of one unit, as soon as it is chosen), a `Hypothesis`
(a whole target sequence) and a `Translation` (a unit's n-best hypotheses).

The searches (search.py, forcing.py) make `Step`s and `Hypothesis`es from ids alone; `naming.py` fills
in what needs the tokenizers (pieces, text) and cuts attention to the unit's own source length, so the
same objects travel from the search to the CLI's JSON and the GUI's views without being copied into
parallel types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nmt_desktop.core.adaptation.memory_use import MemorySource, MemoryUse


@dataclass
class Unit:
    """One piece of a text the model translates in one go (a line, or a sentence of a line), tokenized once."""

    line: int  # index of the text's line it belongs to
    text: str
    source_ids: list[int]
    source_tokens: list[str]  # readable source pieces, as `Translation.source_tokens`


@dataclass
class Alternative:
    token_id: int
    piece: str  # "" until named (naming.py)
    prob: float


@dataclass
class Step:
    """One generated target token, as soon as it is chosen."""

    index: int  # 0-based target position
    token_id: int
    piece: str  # readable display text of the token ("" until named)
    logprob: float
    alternatives: list[Alternative]  # the step's top-k tokens, most probable first
    cross_attention: np.ndarray | None  # (layers, heads, source_len) float32
    self_attention: np.ndarray | None = None  # (layers, heads, index + 1) float32, on request
    prefix_ids: list[int] | None = None  # beam search: the current best hypothesis, ending in this token
    is_eos: bool = False
    forced: bool = False  # a token of a forced prefix or a scored target (fed, not chosen)
    row: int = 0  # the sentence of the search's batch it belongs to
    # beam search, where the best live hypothesis is not the one this sentence's previous step showed: that
    # hypothesis' own steps before this one, oldest first (see `shown_after`)
    earlier_steps: list[Step] | None = None
    memory: MemoryUse | None = None  # how the token used the memory (core/adaptation); None: it did not

    def shown_after(self, shown: list[Step]) -> list[Step]:
        """The hypothesis this step ends, given `shown` (its unit's steps shown so far): `shown` plus this step,
        or, where beam search's best hypothesis changed, that hypothesis' own earlier steps plus this one. The
        one rule a stream's consumer follows, so what it shows is always one real hypothesis, never a mix of
        beams."""
        return [*(shown if self.earlier_steps is None else self.earlier_steps), self]


@dataclass
class Hypothesis:
    token_ids: list[int]
    token_logprobs: list[float]
    score: float  # length-normalised log-probability
    alternatives: list[list[Alternative]]  # per target position
    attention: np.ndarray | None  # (layers, heads, target_len, source_len)
    self_attention: np.ndarray | None = None  # (layers, heads, target_len, target_len), lower-triangular
    finished: bool = True  # False when cut off at the maximum length
    forced: bool = False  # a given translation scored by teacher forcing (scoring.py), not the model's choice
    text: str = ""  # detokenized (naming.py)
    tokens: list[str] = field(default_factory=list)  # readable pieces, "</s>" included when it ended normally
    memory: list[MemoryUse | None] | None = None  # per target position, as `Step.memory`; None: no memory used

    @property
    def logprob(self) -> float:
        """The sentence log-probability: the sum of the token log-probabilities (</s> included)."""
        return float(sum(self.token_logprobs))

    @property
    def perplexity(self) -> float:
        """exp(-logprob / tokens): 1 when every token was certain."""
        n = len(self.token_logprobs)
        return float(np.exp(-self.logprob / n)) if n else float("nan")

    def steps(self, eos_id: int | None = None) -> list[Step]:
        """This hypothesis as the `Step`s of a stream (for beam search: the final hypothesis, where the
        streamed steps followed the best one of each moment). eos_id: else "</s>" marks the end."""
        out = []
        for t, (token_id, piece) in enumerate(zip(self.token_ids, self.tokens)):
            cross = None if self.attention is None or t >= self.attention.shape[2] else self.attention[:, :, t]
            out.append(Step(t, int(token_id), piece, self.token_logprobs[t] if t < len(self.token_logprobs) else 0.0,
                            self.alternatives[t] if t < len(self.alternatives) else [], cross,
                            is_eos=int(token_id) == eos_id if eos_id is not None else piece == "</s>",
                            memory=self.memory[t] if self.memory is not None and t < len(self.memory) else None))
        return out

    def to_json(self, attention: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"translation": self.text, "score": round(self.score, 6), "tokens": self.tokens,
                               "token_logprobs": [round(float(x), 6) for x in self.token_logprobs]}
        if attention:
            out["attention"] = None if self.attention is None else np.round(self.attention.astype(np.float64), 5).tolist()
        return out


@dataclass
class Translation:
    source: str
    source_ids: list[int]
    source_tokens: list[str]
    nbest: list[Hypothesis]  # best first
    encoder_attention: np.ndarray | None = None  # (layers, heads, source_len, source_len)
    segments: list["Translation"] = field(default_factory=list)  # set when a line was translated in units
    # the memory segments whose forced decode built this unit's datastore (weight: match score / 100); empty: none
    memory_matches: list[MemorySource] = field(default_factory=list)

    @classmethod
    def joined(cls, text: str, parts: list["Translation"]) -> "Translation":
        """One line's translation from its units' (document.py's policy): a single unit is itself; several are
        joined with a space and kept as `segments` (the joined text has no token ids of its own)."""
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls(text, [], [], [Hypothesis([], [], 0.0, [], None)])
        joined = Hypothesis([], [], sum(p.score for p in parts), [], None, text=" ".join(p.text for p in parts))
        return cls(text, [], [], [joined], segments=parts)

    @property
    def best(self) -> Hypothesis:
        return self.nbest[0]

    @property
    def text(self) -> str:
        return self.best.text

    @property
    def target_tokens(self) -> list[str]:
        return self.best.tokens

    @property
    def target_ids(self) -> list[int]:
        return self.best.token_ids

    @property
    def score(self) -> float:
        return self.best.score

    @property
    def attention(self) -> np.ndarray | None:
        return self.best.attention

    def to_json(self, attention: bool = True) -> dict[str, Any]:
        """The CLI's `--json` object. Each array appears once: the top level holds the best hypothesis'
        scalar and token shortcuts, its attention ([layers][heads][target][source]) is only in `nbest[0]`."""
        out: dict[str, Any] = {
            "source": self.source,
            "translation": self.text,
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "score": round(self.score, 6),
            "nbest": [h.to_json(attention) for h in self.nbest],
        }
        if self.segments:
            out["segments"] = [s.to_json(attention) for s in self.segments]
        return out
