"""Links from word evidence: the decisions and the growing step of core/analysis/alignment.py, and symmetrisation.

`decide_links(matrix, decision, threshold, grow)` reads links (source word i, target word j) from evidence
(Wt, Ws): "argmax" (each target word's best source word), "mutual" (only the pairs that are each other's best,
SimAlign's ArgMax), "threshold" (every pair whose evidence reaches `threshold`). Then, with `grow` > 0, the
links are grown (`grow_links`).

Why grow: "mutual" links at most one word to one word, and its recall falls on long sentences, where the
evidence is noisier and a word's best is more often wrong (benchmarks/RESULTS.md, "Alignments for long
sentences (issue 31)"): there a correct pair is often the best of one of its words only, next to a link already
made (a German compound or separable verb beside its English words, a second target word of one source word).
Growing adds such pairs, as grow-diag does for two directions, but inside one matrix: a candidate must be

- next to a link (one word away on either side, diagonals included), and
- the best of one of its words: the best target word of its source word, or the best source word of its target
  word *when that source word has no link yet* (target words attaching to already linked source words, German
  articles to English nouns above all, were the least precise kind of candidate on every development set), and
- at least `grow` times the best evidence of its other word (a target word's best source word must be at least
  `grow` of that source word's best, and so on), so that a weak pair is not linked for being a neighbour.

Rounds repeat until nothing is added (a link grown in one round may make its neighbour a candidate).

`symmetrise` combines a forward alignment with one of a reverse-direction model (intersection, union,
grow-diag-final as in Moses).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

Links = list[tuple[int, int]]  # (source word i, target word j), 0-based, sorted
DECISIONS: tuple[str, ...] = ("argmax", "mutual", "threshold")
SYMMETRISATIONS: tuple[str, ...] = ("intersection", "union", "grow-diag-final")
_NEIGHBOURS = tuple((di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1) if di or dj)


def decide_links(matrix: np.ndarray, decision: str, threshold: float = 0.3, grow: float = 0.0) -> Links:
    """Links (i, j) from word evidence (Wt, Ws) by `decision`, grown by `grow` (0: not grown); module docstring."""
    if matrix.size == 0:
        return []
    if decision == "threshold":
        links = {(int(i), int(j)) for j, i in zip(*np.nonzero(matrix >= threshold))}
    elif decision in ("argmax", "mutual"):
        live = matrix.max(axis=1) > 0
        best_src = matrix.argmax(axis=1)  # (Wt,)
        links = {(int(best_src[j]), j) for j in range(matrix.shape[0]) if live[j]}
        if decision == "mutual":
            best_tgt = matrix.argmax(axis=0)  # (Ws,)
            links = {(i, j) for i, j in links if best_tgt[i] == j}
    else:
        raise ValueError(f"unknown alignment decision {decision!r}: use {', '.join(DECISIONS)}")
    return grow_links(matrix, links, grow) if grow > 0 else sorted(links)


def grow_links(matrix: np.ndarray, links: set[tuple[int, int]] | Links, ratio: float) -> Links:
    """`links` grown to neighbouring pairs that are one word's best and at least `ratio` of the other word's best
    evidence (module docstring)."""
    links = set(links)
    if matrix.size == 0:
        return sorted(links)
    best_src, best_tgt = matrix.argmax(axis=1), matrix.argmax(axis=0)  # (Wt,), (Ws,)
    row_max, col_max = matrix.max(axis=1), matrix.max(axis=0)

    def beside(i: int, j: int) -> bool:
        return any((i + di, j + dj) in links for di, dj in _NEIGHBOURS)

    while True:
        linked_src = {i for i, _ in links}
        added = set()
        for i in range(matrix.shape[1]):  # a source word's best target word
            j = int(best_tgt[i])
            if col_max[i] > 0 and (i, j) not in links and matrix[j, i] >= ratio * row_max[j] and beside(i, j):
                added.add((i, j))
        for j in range(matrix.shape[0]):  # a target word's best source word, when that has no link yet
            i = int(best_src[j])
            if (row_max[j] > 0 and i not in linked_src and (i, j) not in links
                    and matrix[j, i] >= ratio * col_max[i] and beside(i, j)):
                added.add((i, j))
        if not added:
            return sorted(links)
        links |= added


def symmetrise(forward: Sequence[tuple[int, int]], backward: Sequence[tuple[int, int]],
               how: str = "grow-diag-final") -> Links:
    """Combine links (i, j) of the forward model with links (i, j) of the reverse model (already in
    source-target order: a reverse model's (j, i) flipped). grow-diag-final: the intersection grown by
    neighbouring union links that align a still unaligned word, then any union link of an unaligned word."""
    f, b = set(map(tuple, forward)), set(map(tuple, backward))
    if how == "intersection":
        return sorted(f & b)
    if how == "union":
        return sorted(f | b)
    if how != "grow-diag-final":
        raise ValueError(f"unknown symmetrisation {how!r}: use {', '.join(SYMMETRISATIONS)}")
    union, links = f | b, set(f & b)
    src_done = {i for i, _ in links}
    tgt_done = {j for _, j in links}
    grown = True
    while grown:
        grown = False
        for i, j in sorted(links):
            for di, dj in _NEIGHBOURS:
                cand = (i + di, j + dj)
                if cand in union and cand not in links and (cand[0] not in src_done or cand[1] not in tgt_done):
                    links.add(cand)
                    src_done.add(cand[0])
                    tgt_done.add(cand[1])
                    grown = True
    for i, j in sorted(union - links):
        if i not in src_done or j not in tgt_done:
            links.add((i, j))
            src_done.add(i)
            tgt_done.add(j)
    return sorted(links)
