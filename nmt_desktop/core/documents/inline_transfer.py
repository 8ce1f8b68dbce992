"""Formatting inside a sentence carried over by word alignment (as Bergamot moves HTML tags).

Each target word gets the run of the source words it aligns to (a formatted run wins over plain text when
a target word aligns to both), a placeholder's word gets its own run, and a formatted run that nothing
aligns to takes its best-evidence target word, so a bold word is never lost. Formatted runs are put in the
order of their words in the translation, the plain runs (which look alike) placed between them every way
they can be, and for each such order the target words are cut into one contiguous stretch per run by
dynamic programming: the order and cut that give the most words to a run of their look win, while a
formatted run never spreads over words aligned elsewhere. Every run gets exactly one stretch (possibly empty), so run
counts survive, and every target word lands in exactly one run, so no text is lost.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nmt_desktop.core.documents.blocks import TranslatedBlock, TranslatedRun

MAX_WORDS = 400  # longer blocks are cut by proportion (the DP is quadratic in words)


@dataclass(frozen=True)
class RunInfo:
    """A source run as the transfer sees it: formatted (a style or verbatim) or plain, and whether it has
    words to place."""
    formatted: bool
    has_text: bool


def target_labels(runs: Sequence[RunInfo], source_runs: Sequence[int], evidence: np.ndarray,
                  links: Sequence[tuple[int, int]], fixed: dict[int, int]) -> list[int | None]:
    """The run of each target word: evidence (target words, source words), links (source i, target j),
    source_runs[i] the run of source word i, fixed: target word -> run (placeholders)."""
    n_target = evidence.shape[0]
    linked: list[list[int]] = [[] for _ in range(n_target)]
    for i, j in links:
        if 0 <= j < n_target and 0 <= i < len(source_runs):
            linked[j].append(source_runs[i])
    labels: list[int | None] = []
    for j in range(n_target):
        if j in fixed:
            labels.append(fixed[j])
            continue
        candidates = linked[j]
        formatted = [r for r in candidates if runs[r].formatted]
        pool = formatted or candidates
        labels.append(max(set(pool), key=pool.count) if pool else None)
    for r, run in enumerate(runs):  # a formatted run nothing aligns to takes its best-evidence word
        if not (run.formatted and run.has_text) or r in labels:
            continue
        columns = [i for i, owner in enumerate(source_runs) if owner == r]
        if not columns or n_target == 0:
            continue
        free = [j for j in range(n_target) if j not in fixed and (labels[j] is None or not runs[labels[j]].formatted)]
        if free:
            labels[max(free, key=lambda j: evidence[j, columns].sum())] = r
    return labels


def run_order(runs: Sequence[RunInfo], labels: Sequence[int | None]) -> list[int]:
    """The runs in the order the translation puts their words; a run with no word keeps its place
    relative to its neighbours in the source."""
    keys: list[float | None] = []
    for r in range(len(runs)):
        at = [j for j, label in enumerate(labels) if label == r]
        keys.append(float(np.mean(at)) if at else None)
    filled: list[float] = []
    for r, key in enumerate(keys):  # a run without words: just after the run before it
        filled.append(key if key is not None else (filled[-1] + 1e-3 if filled else -1.0))
    return sorted(range(len(runs)), key=lambda r: (filled[r], r))


def cut(order: Sequence[int], runs: Sequence[RunInfo], labels: Sequence[int | None]) -> tuple[float, list[tuple[int, int]]]:
    """One contiguous [start, end) of target words per run of `order` (same order), maximising words
    placed in their own run (see the module docstring); with the score of that cut."""
    m, k = len(labels), len(order)

    def gain(r: int, j: int) -> int:
        label = labels[j]
        if label == r or (label is not None and not runs[label].formatted and not runs[r].formatted):
            return 2  # its own word, or plain text in a plain run (plain runs look alike)
        if label is None:
            return 0 if not runs[r].formatted else -1
        return -1

    # prefix[k][j]: gain of words [0, j) given to run order[k]
    prefix = np.zeros((k, m + 1))
    for a, r in enumerate(order):
        prefix[a, 1:] = np.cumsum([gain(r, j) for j in range(m)])
    best = np.full((k + 1, m + 1), -np.inf)
    back = np.zeros((k + 1, m + 1), dtype=np.int64)
    best[0, 0] = 0.0
    for a in range(1, k + 1):
        row = prefix[a - 1]
        for end in range(m + 1):
            starts = np.arange(end + 1)
            values = best[a - 1, : end + 1] + (row[end] - row[: end + 1])
            s = int(np.argmax(values))
            best[a, end], back[a, end] = values[s], starts[s]
    spans, end = [], m
    for a in range(k, 0, -1):
        start = int(back[a, end])
        spans.append((start, end))
        end = start
    return float(best[k, m]), spans[::-1]


MAX_ORDERS = 64  # interleavings of plain runs among formatted ones tried; more: the order by position only


def best_cut(runs: Sequence[RunInfo], labels: Sequence[int | None]) -> tuple[list[int], list[tuple[int, int]]]:
    """The run order and cut with the best score. Formatted runs keep the order of their words in the
    translation; plain runs look alike, so every way of placing them (in their source order) between the
    formatted ones is tried: a bold word in the middle of a sentence then gets plain text on both sides
    whichever plain runs those are."""
    by_position = run_order(runs, labels)
    formatted = [r for r in by_position if runs[r].formatted]
    plain = [r for r in range(len(runs)) if not runs[r].formatted]
    orders = [by_position]
    if formatted and plain and math.comb(len(runs), len(plain)) <= MAX_ORDERS:
        orders = []
        for slots in itertools.combinations(range(len(runs)), len(plain)):
            order, p, f = [], iter(plain), iter(formatted)
            orders.append([next(p) if i in slots else next(f) for i in range(len(runs))])
    scored = [(cut(order, runs, labels), n, order) for n, order in enumerate(orders)]
    (_score, spans), _n, order = max(scored, key=lambda item: (item[0][0], -item[1]))
    return order, spans


def split_punctuation(words: Sequence[str]) -> tuple[list[str], list[bool], list[int]]:
    """Whitespace words cut into leading punctuation, the word, and trailing punctuation, so that a full
    stop or a quote after a bold word stays plain: (parts, glued: no space before the part, the word each
    part came from)."""
    parts, glued, owner = [], [], []
    for w, word in enumerate(words):
        m = _PUNCTUATION.fullmatch(word)
        pieces = [p for p in m.groups() if p] if m and m.group(2) else [word]
        for k, piece in enumerate(pieces):
            parts.append(piece)
            glued.append(k > 0)
            owner.append(w)
    return parts, glued, owner


_PUNCTUATION = re.compile(r"([\"'“‘«¿¡(\[]*)(.*?)([\"'”’».,;:!?…)\]]*)", re.S)


def transfer(runs: Sequence[RunInfo], source_runs: Sequence[int], target_words: Sequence[str], evidence: np.ndarray,
             links: Sequence[tuple[int, int]], fixed: dict[int, int], lead: str = "", trail: str = "") -> TranslatedBlock:
    """The translated block: every run once, in target order, with its stretch of `target_words` (the
    space between two stretches goes with the plain one; punctuation around a word goes with plain text
    when the word is formatted). lead/trail: the block's own leading and trailing white space, kept."""
    if len(target_words) > MAX_WORDS:  # too long to cut optimally: by position only
        evidence = np.zeros((len(target_words), len(source_runs)))
        links = [(round(j * len(source_runs) / len(target_words)), j) for j in range(len(target_words))
                 if source_runs]
    parts, glued, owner = split_punctuation(target_words)
    word_labels = target_labels(runs, source_runs, evidence, links, fixed)
    labels = [word_labels[w] if not _is_punctuation(p) or w in fixed else None for p, w in zip(parts, owner)]
    order, spans = best_cut(runs, labels)
    texts = ["".join(("" if glued[j] or j == s else " ") + parts[j] for j in range(s, e)) for s, e in spans]
    filled = [i for i, text in enumerate(texts) if text]
    for a, b in zip(filled, filled[1:]):  # the space between two stretches: on the plain side
        if glued[spans[b][0]]:
            continue
        if runs[order[a]].formatted and not runs[order[b]].formatted:
            texts[b] = " " + texts[b]
        else:
            texts[a] += " "
    if filled:
        texts[filled[0]] = lead + texts[filled[0]]
        texts[filled[-1]] += trail
    elif texts:
        texts[0] = lead + trail
    return [TranslatedRun(r, text) for r, text in zip(order, texts)]


def _is_punctuation(part: str) -> bool:
    return not any(ch.isalnum() for ch in part)
