"""Attention analysis: head statistics, head ablation and ranking, word alignments, coverage.

Everything here reads the decoder's cross-attention `(layers, heads, target_len, source_len)` of a
`Translation` (rows sum to 1 over the source) or re-translates with heads switched off. Heads are
addressed 0-based as (layer, head) of the decoder's cross-attention; people read and type them as
`L3 H2`, counted from 1 (head_names.py).

- `head_stats` / `probe_head_stats`: per-head entropy, attention sinks, diagonality, coverage.
- `ablation_mask` (zeroing, through `head_mask`), `head_means` + `HeadOverride` (mean ablation).
- `rank_heads`: BLEU drop on a probe set when each head is zeroed, greedy and deterministic.
- `to_pharaoh` / `parse_pharaoh`: the Pharaoh format of word alignments (the alignments: alignment.py).
- `coverage_warnings`: possible omissions and diffuse attention.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal, Sequence

import numpy as np
import torch

from nmt_desktop.core.analysis.head_names import head_name
from nmt_desktop.core.analysis.words import join_word, real_words
from nmt_desktop.core.config import DecodeConfig
from nmt_desktop.core.tokenizer import WORD_START
from nmt_desktop.core.model.transformer import HeadOverride

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translation, Translator

EOS_PIECE = "</s>"


# --- head statistics ---------------------------------------------------------------------------

@dataclass
class HeadStats:
    """Statistics of one cross-attention head (layer, head) over a translation's target rows."""

    layer: int
    head: int
    entropy: float  # mean over target rows of the row's entropy, in nats
    eos_share: float  # mean share of a row's attention on source </s>
    punct_share: float  # mean share of a row's attention on punctuation pieces
    diagonality: float  # mean share of a row's mass within +-1 source position of the rescaled diagonal
    monotonicity: float  # Spearman correlation of each row's argmax source position with the target position
    coverage: float  # share of source tokens (</s> excluded) receiving total attention >= 0.5

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def is_punctuation(piece: str) -> bool:
    """A piece made only of punctuation (after removing the word-start marker)."""
    text = piece.replace(WORD_START, "").strip()
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks with ties averaged (for Spearman)."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x), np.float64)
    ranks[order] = np.arange(len(x), dtype=np.float64)
    for value in np.unique(x):
        tie = x == value
        ranks[tie] = ranks[tie].mean()
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation; 0.0 when either side is constant or shorter than 2."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if len(x) < 2:
        return 0.0
    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def attention_stats(attn: np.ndarray, source_tokens: Sequence[str]) -> list[HeadStats]:
    """HeadStats of every head of attention (L, H, T, S) over source pieces `source_tokens` (S)."""
    L, H, T, S = attn.shape
    a = attn.astype(np.float64)
    eos = np.array([t == EOS_PIECE for t in source_tokens])  # (S,)
    punct = np.array([is_punctuation(t) for t in source_tokens])  # (S,)
    entropy = -(a * np.log(np.clip(a, 1e-12, None))).sum(-1).mean(-1)  # (L, H)
    eos_share = a[..., eos].sum(-1).mean(-1)  # (L, H)
    punct_share = a[..., punct].sum(-1).mean(-1)  # (L, H)
    centre = (np.arange(T) + 0.5) * S / T - 0.5  # (T,) diagonal source position of each target row
    near = np.abs(np.arange(S)[None, :] - centre[:, None]) <= 1.0  # (T, S)
    diagonality = (a * near).sum(-1).mean(-1)  # (L, H)
    received = a.sum(2)  # (L, H, S)
    content = ~eos
    coverage = (received[..., content] >= 0.5).mean(-1) if content.any() else np.zeros((L, H))  # (L, H)
    argmax = a.argmax(-1)  # (L, H, T)
    rows = []
    for layer in range(L):
        for head in range(H):
            rows.append(HeadStats(layer, head, float(entropy[layer, head]), float(eos_share[layer, head]),
                                  float(punct_share[layer, head]), float(diagonality[layer, head]),
                                  spearman(argmax[layer, head], np.arange(T)), float(coverage[layer, head])))
    return rows


def head_stats(translation: "Translation") -> list[HeadStats]:
    """HeadStats of every cross-attention head for one translation (its best hypothesis)."""
    if translation.attention is None or translation.attention.shape[2] == 0:
        raise ValueError("head statistics need a translation decoded with attention")
    return attention_stats(translation.attention, translation.source_tokens)


def average_stats(per_sentence: Sequence[list[HeadStats]]) -> list[HeadStats]:
    """Mean of each field over sentences, per (layer, head)."""
    if not per_sentence:
        return []
    fields = ("entropy", "eos_share", "punct_share", "diagonality", "monotonicity", "coverage")
    out = []
    for rows in zip(*per_sentence):
        means = {f: float(np.mean([getattr(r, f) for r in rows])) for f in fields}
        out.append(HeadStats(rows[0].layer, rows[0].head, **means))
    return out


def probe_head_stats(translator: "Translator", sources: Sequence[str], batch_size: int = 16) -> list[HeadStats]:
    """HeadStats averaged over a probe set, each sentence greedily translated with attention."""
    cfg = DecodeConfig(attention=True, alternatives=0)
    translations = translator.translate_batch([s for s in sources if s.strip()], cfg, batch_size=batch_size)
    return average_stats([head_stats(t) for t in translations if t.attention is not None and t.attention.shape[2]])


# --- ablation ------------------------------------------------------------------------------------

def all_heads(translator: "Translator") -> list[tuple[int, int]]:
    """Every decoder cross-attention head as (layer, head)."""
    return [(l, h) for l in range(translator.config.decoder_layers) for h in range(translator.config.n_heads)]


def ablation_mask(translator: "Translator", heads: Sequence[tuple[int, int]]) -> torch.Tensor:
    """A head_mask (L, H) with 0 at `heads` (zeroing ablation) and 1 elsewhere."""
    cfg = translator.config
    mask = torch.ones(cfg.decoder_layers, cfg.n_heads)
    for layer, head in heads:
        if not (0 <= layer < cfg.decoder_layers and 0 <= head < cfg.n_heads):
            raise ValueError(f"no cross-attention head {head_name(layer, head)} in a model with {cfg.decoder_layers} "
                             f"decoder layers of {cfg.n_heads} heads")
        mask[layer, head] = 0.0
    return mask.to(translator.device)


def head_means(translator: "Translator", probe_sources: Sequence[str], batch_size: int = 16) -> torch.Tensor:
    """Mean cross-attention context (L, H, dh) of each head over a probe set.

    Each source is translated greedily, then its translation is teacher-forced once with
    `decode(..., need_context=True)`; the mean runs over every real target position.
    """
    model, cfg = translator.model, translator.config
    sources = [s for s in probe_sources if s.strip()]
    if not sources:
        raise ValueError("head means need at least one non-empty probe sentence")
    decode_cfg = DecodeConfig(attention=False, alternatives=0)
    total, count = None, 0
    for start in range(0, len(sources), batch_size):
        chunk = sources[start: start + batch_size]
        targets = [t.target_ids for t in translator.translate_batch(chunk, decode_cfg, batch_size=batch_size)]
        src = translator._batch([translator.source_ids(s) for s in chunk])  # (B, S)
        tgt_in = translator._batch([[cfg.decoder_start_id] + t[:-1] if t else [cfg.decoder_start_id]
                                    for t in targets])  # (B, T) right-padded with pad_id
        real = torch.zeros(tgt_in.shape, dtype=torch.bool, device=tgt_in.device)  # (B, T)
        for i, t in enumerate(targets):
            real[i, : max(1, len(t))] = True
        with torch.inference_mode():
            ctx = model.decode(tgt_in, model.encode(src), need_context=True).cross_context  # (B, L, H, T, dh)
        ctx = ctx.float() * real[:, None, None, :, None]
        part = ctx.sum(dim=(0, 3))  # (L, H, dh)
        total = part if total is None else total + part
        count += int(real.sum())
    return total / count


def mean_override(means: torch.Tensor, heads: Sequence[tuple[int, int]]) -> HeadOverride:
    """A HeadOverride replacing `heads` by their means (L, H, dh)."""
    use = torch.zeros(means.shape[:2], dtype=torch.bool, device=means.device)
    for layer, head in heads:
        use[layer, head] = True
    return HeadOverride(means, use)


@dataclass
class HeadImportance:
    """BLEU of the probe set with one head zeroed, and the drop from the intact model's BLEU."""

    layer: int
    head: int
    bleu: float
    bleu_drop: float  # intact BLEU - ablated BLEU (positive: the head helps)

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def probe_subset(pairs: Sequence[tuple[str, str]], max_sentences: int | None, seed: int = 0) -> list[tuple[str, str]]:
    """All pairs, or a seeded random subset of `max_sentences` in file order."""
    pairs = list(pairs)
    if max_sentences is None or max_sentences >= len(pairs):
        return pairs
    keep = sorted(random.Random(seed).sample(range(len(pairs)), max_sentences))
    return [pairs[i] for i in keep]


def rank_heads(translator: "Translator", pairs: Sequence[tuple[str, str]], max_sentences: int | None = None,
               seed: int = 0, batch_size: int = 16) -> list[HeadImportance]:
    """Every cross-attention head's BLEU drop when zeroed, greedy decoding, largest drop first.

    Ties keep (layer, head) order. Deterministic: greedy search, and the probe subset (when
    max_sentences is set) is drawn with `seed`.
    """
    from nmt_desktop.core.training.metrics import corpus_bleu

    probe = probe_subset(pairs, max_sentences, seed)
    if not probe:
        raise ValueError("ranking heads needs at least one probe pair")
    sources, refs = [s for s, _ in probe], [t for _, t in probe]
    cfg = DecodeConfig(attention=False, alternatives=0)

    def bleu(mask: torch.Tensor | None) -> float:
        return corpus_bleu([t.text for t in translator.translate_batch(sources, cfg, batch_size, head_mask=mask)], refs)

    base = bleu(None)
    rows = []
    for layer, head in all_heads(translator):
        score = bleu(ablation_mask(translator, [(layer, head)]))
        rows.append(HeadImportance(layer, head, score, base - score))
    return sorted(rows, key=lambda r: -r.bleu_drop)  # stable: ties stay in (layer, head) order


# --- word alignments -----------------------------------------------------------------------------

def to_pharaoh(links: Sequence[tuple[int, int]]) -> str:
    """Links -> Pharaoh format "i-j i-j ..." (source word i, target word j), sorted."""
    return " ".join(f"{i}-{j}" for i, j in sorted(set(links)))


def parse_pharaoh(text: str) -> set[tuple[int, int]]:
    """Pharaoh "i-j ..." -> {(i, j)}; ValueError on a malformed link."""
    links = set()
    for item in text.split():
        parts = item.split("-")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(f"not a Pharaoh link (i-j): {item!r}")
        links.add((int(parts[0]), int(parts[1])))
    return links


# --- coverage warnings ---------------------------------------------------------------------------

@dataclass
class CoverageWarning:
    """A source word that received little attention, or a target token whose attention is diffuse."""

    kind: Literal["omission", "diffuse"]
    index: int  # source word index (omission) or target token index (diffuse), 0-based
    token: str  # the source word (pieces joined) or the target piece
    value: float  # total attention received (omission) or the sharpest head's row entropy in nats (diffuse)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def coverage_warnings(translation: "Translation", low: float = 0.3,
                      diffuse_entropy: float | None = None) -> list[CoverageWarning]:
    """Possible omissions and diffuse attention.

    omission: a source word (pieces summed, </s> excluded) whose total received attention over
    all target rows, averaged over layers and heads, is below `low`. diffuse: a target token for
    which no head of any layer attends sharply: even the sharpest head's row has an entropy above
    `diffuse_entropy` nats (default 0.4 * ln(source_len)). (The entropy of the average over heads
    is no test: heads that each look at a different word average to a spread row. The default is
    set so that a good model's translations are rarely flagged while mistranslations are, as
    measured on the bundled models in benchmarks/RESULTS.md.)
    """
    attn = translation.attention
    if attn is None or attn.shape[2] == 0:
        return []
    a = attn.astype(np.float64).mean(axis=(0, 1))  # (T, S)
    warnings: list[CoverageWarning] = []
    pieces = translation.source_tokens
    received = a.sum(0)  # (S,)
    for w, members in enumerate(real_words(pieces)):
        total = float(received[members].sum())
        if total < low:
            warnings.append(CoverageWarning("omission", w, join_word([pieces[j] for j in members]), total))
    limit = 0.4 * np.log(max(a.shape[1], 2)) if diffuse_entropy is None else diffuse_entropy
    per_head = attn.astype(np.float64)  # (L, H, T, S)
    entropy = (-(per_head * np.log(np.clip(per_head, 1e-12, None))).sum(-1)).min(axis=(0, 1))  # (T,)
    for t, value in enumerate(entropy):
        if value > limit:
            warnings.append(CoverageWarning("diffuse", t, translation.target_tokens[t], float(value)))
    return warnings
