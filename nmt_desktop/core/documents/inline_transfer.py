"""Formatting inside a sentence carried over by word alignment (as Bergamot moves HTML tags).

Each target word gets the run of the source words it aligns to (a formatted run wins over plain text when
a target word aligns to both), a placeholder's word gets its own run, and a formatted run that nothing
aligns to takes its best-evidence target word, so a bold word is never lost. Formatted runs are put in the
order of their words in the translation, the plain runs (which look alike) placed between them every way
they can be, and for each such order the target words are cut into one contiguous stretch per run by
dynamic programming: the order and cut that give the most words to a run of their look win, while a
formatted run never spreads over words aligned elsewhere. Every run gets exactly one stretch, so run
counts survive, and every target word lands in exactly one run, so no text is lost.

Nothing of the source is lost either (issue 42), when the runs' source texts are given (`RunInfo.text`):
a word the source split between runs (H<sub>2</sub>O, 10<sup>23</sup>) is split the same way where the
translation copies it; a verbatim run (inline code, a note reference), whose text the adapters write from
the source, holds only its own text, never a neighbour's word, comma or space; a formatted run that still
gets no words (a superscript digit, a note marker, a link the model left out) keeps its source text, so its
element is never emptied and dropped; and two verbatim runs the translation puts side by side keep the
separator the source had between them (`apt`, `yum`). The space between two formatted stretches goes
where the source had it (" car" after <b>red</b> starts with it). A run of white space only takes no words:
plain (a cell's indentation before a <span>), words there would split the element beside it in two; formatted
(a tracked insertion of a space, Word's run properties on every run), they would give its element text.
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
    words to place; verbatim (written from the source by the adapters) and its source text, where known,
    so that nothing of it is lost (see the module docstring)."""
    formatted: bool
    has_text: bool
    verbatim: bool = False
    text: str | None = None


def target_labels(runs: Sequence[RunInfo], source_runs: Sequence[int], evidence: np.ndarray,
                  links: Sequence[tuple[int, int]], fixed: dict[int, int], fallback: bool = True) -> list[int | None]:
    """The run of each target word: evidence (target words, source words), links (source i, target j),
    source_runs[i] the run of source word i, fixed: target word -> run (placeholders). fallback: a
    formatted run nothing aligns to takes its best-evidence word (transfer does that after cutting words
    at source texts, `best_words`)."""
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
        candidates = [r for r in linked[j] if not runs[r].verbatim]  # a verbatim run holds its own text only
        formatted = [r for r in candidates if runs[r].formatted]
        pool = formatted or candidates
        labels.append(max(set(pool), key=pool.count) if pool else None)
    return best_words(runs, source_runs, evidence, fixed, labels, list(range(n_target))) if fallback else labels


def best_words(runs: Sequence[RunInfo], source_runs: Sequence[int], evidence: np.ndarray, fixed: dict[int, int],
               labels: list[int | None], owner: Sequence[int], parts: Sequence[str] | None = None) -> list[int | None]:
    """labels (of target words, or of their parts: `owner` the word of each) where each formatted run
    nothing aligns to takes its best-evidence word (a part that is not punctuation), so a bold word is
    never lost."""
    labels = list(labels)
    for r, run in enumerate(runs):
        if not (run.formatted and run.has_text) or run.verbatim or r in labels:
            continue
        columns = [i for i, o in enumerate(source_runs) if o == r]
        if not columns or not labels:
            continue
        free = [k for k in range(len(labels)) if owner[k] not in fixed
                and (labels[k] is None or not runs[labels[k]].formatted)
                and (parts is None or not _is_punctuation(parts[k]))]
        if free:
            labels[max(free, key=lambda k: evidence[owner[k], columns].sum())] = r
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
        if runs[r].verbatim and label != r:
            return -len(labels) - 1  # worse than any other placement: its text would be lost
        if not runs[r].has_text:  # white space only, formatted or not: never a place for words
            # plain, between elements: words there would split the element around it; formatted (Word writes
            # rPr on every run), inside a w:ins or a link: words there give an element text it did not have
            return -len(labels) - 1
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
    word_labels = target_labels(runs, source_runs, evidence, links, fixed, fallback=False)
    labels: list[int | None] = []
    for p, w in zip(parts, owner):
        kept = w in fixed and not runs[fixed[w]].verbatim  # a verbatim run's punctuation goes with plain text
        labels.append(word_labels[w] if not _is_punctuation(p) or kept else None)
        if labels[-1] is not None and runs[labels[-1]].verbatim and w not in fixed:
            labels[-1] = None
    parts, glued, labels, owner = _split_anchors(runs, parts, glued, labels, owner)
    labels = best_words(runs, source_runs, evidence, fixed, labels, owner, parts)
    order, spans = best_cut(runs, labels)
    pieces = [_Piece("".join(("" if glued[j] or j == s else " ") + parts[j] for j in range(s, e)),
                     glued[s] if e > s else False) for s, e in spans]
    order, pieces = _never_emptied(runs, order, pieces)
    texts = [piece.text for piece in pieces]
    filled = [i for i, text in enumerate(texts) if text]
    for a, b in zip(filled, filled[1:]):  # the space between two stretches: on the plain side, never verbatim
        if pieces[b].glued or pieces[a].exact or pieces[b].exact:
            continue
        if runs[order[a]].verbatim and runs[order[b]].verbatim:
            continue  # neither can hold a space (adapters write a verbatim run from its source)
        if runs[order[b]].verbatim and runs[order[a]].formatted and _glued_in_source(runs, order[b]):
            continue  # a note reference glued to the text before it ("second.<sup>1</sup>"): no space in a <sup>
        first, second = runs[order[a]], runs[order[b]]
        both = first.formatted and second.formatted  # where the source had the space: " car" after <b>red</b>
        if (first.formatted and not second.formatted) or first.verbatim \
                or (both and (second.text or "")[:1].isspace() and not (first.text or "")[-1:].isspace()):
            texts[b] = " " + texts[b]
        else:
            texts[a] += " "
    if filled:
        texts[filled[0]] = lead + texts[filled[0]]
        texts[filled[-1]] += trail
    elif texts:
        texts[0] = lead + trail
    return [TranslatedRun(r, text) for r, text in zip(order, texts)]


def _glued_in_source(runs: Sequence[RunInfo], r: int) -> bool:
    """Whether run r's source text followed the run before it with no white space between them."""
    before, text = (runs[r - 1].text if r else None), runs[r].text
    return bool(before) and bool(text) and not before[-1:].isspace() and not text[:1].isspace()


@dataclass
class _Piece:
    """A run's stretch as text: glued (no space before it) and exact (a source text put back: no space
    added on either side)."""
    text: str
    glued: bool = False
    exact: bool = False


def _source_words(runs: Sequence[RunInfo]) -> list[list[tuple[str, int]]]:
    """The source's whitespace words that cross runs (H<sub>2</sub>O), each as its (text, run) pieces."""
    if any(run.text is None for run in runs):
        return []
    words: list[list[tuple[str, int]]] = [[]]
    for r, run in enumerate(runs):
        for chunk in re.split(r"(\s+)", run.text or ""):
            if not chunk:
                continue
            if chunk.isspace():
                words.append([])
            else:
                words[-1].append((chunk, r))
    return [w for w in words if len(w) > 1 and any(runs[r].formatted for _text, r in w)]


def _split_anchors(runs: Sequence[RunInfo], parts: list[str], glued: list[bool], labels: list[int | None],
                   owner: list[int]) -> tuple[list[str], list[bool], list[int | None], list[int]]:
    """Target parts cut where they hold a source text that belongs to a run of its own: a verbatim run's
    text inside a word labelled with it ("apt-Paket"), or two or more pieces of a word the source split
    between runs ("H2O", "1023"), each piece then labelled with its run."""
    crossing = _source_words(runs)
    tokens = {r: run.text.strip() for r, run in enumerate(runs)  # a URL, number or marker of its own run
              if run.formatted and not run.verbatim and run.text and run.text.strip()
              and not any(ch.isspace() for ch in run.text.strip()) and not run.text.strip().isalpha()}
    matched: dict[int, int] = {}  # part -> the run whose token it holds (the first such part per run)
    for j, (part, label) in enumerate(zip(parts, labels)):
        for r, text in tokens.items():
            if r not in matched.values() and (label is None or not runs[label].formatted or label == r) \
                    and (part == text or (len(text) >= 4 and text in part)):
                matched[j] = r
                break
    labels = [None if label in matched.values() and j not in matched else label for j, label in enumerate(labels)]
    out_parts, out_glued, out_labels, out_owner = [], [], [], []
    for j, (part, glue, label) in enumerate(zip(parts, glued, labels)):
        cuts: list[tuple[str, int | None]] = [(part, label)]
        token = matched.get(j)
        if token is not None:
            at = part.find(tokens[token])
            cuts = [(part[:at], label), (tokens[token], token), (part[at + len(tokens[token]):], label)]
        elif label is not None and runs[label].verbatim and runs[label].text:
            own = runs[label].text.strip()
            at = part.find(own) if own else -1
            if at >= 0 and part != own:  # what is glued to it ("-Element") goes with its source neighbour
                cuts = [(part[:at], _neighbour(runs, label - 1)), (own, label),
                        (part[at + len(own):], _neighbour(runs, label + 1))]
        elif crossing and not _is_punctuation(part):
            best: list[tuple[str, int]] = []
            for word in crossing:
                for a in range(len(word)):
                    for b in range(a + 2, len(word) + 1):
                        if b - a > len(best) and "".join(t for t, _r in word[a:b]) in part:
                            best = word[a:b]
            if best:
                at = part.find("".join(t for t, _r in best))
                rest = part[at + sum(len(t) for t, _r in best):]
                cuts = [(part[:at], label)] + [(t, r) for t, r in best] + [(rest, label)]
        first = True
        for text, cut_label in cuts:
            if not text:
                continue
            out_parts.append(text)
            out_glued.append(glue if first else True)
            out_labels.append(cut_label)
            out_owner.append(owner[j])
            first = False
    return out_parts, out_glued, out_labels, out_owner


def _neighbour(runs: Sequence[RunInfo], r: int) -> int | None:
    """Run r as the label of a word glued to a verbatim run beside it: a formatted run (the bold around a
    code span), else None (plain text)."""
    return r if 0 <= r < len(runs) and runs[r].formatted and not runs[r].verbatim else None


def _never_emptied(runs: Sequence[RunInfo], order: list[int],
                   pieces: list[_Piece]) -> tuple[list[int], list[_Piece]]:
    """Runs the cut left empty move next to the run before them (the last formatted one: alignment placed
    it), a formatted one keeping its source text (glued where the source glued it); two verbatim runs side
    by side get an empty plain run between them holding the source's separator (", "), else a space."""
    order, pieces = list(order), list(pieces)
    for r in range(1, len(runs)):  # a run with no words goes just after the last run before it with words
        i = order.index(r)
        before = [p for p in range(r) if pieces[order.index(p)].text]
        before = [p for p in before if runs[p].formatted] or before  # formatted runs are placed by alignment
        if pieces[i].text or not before:
            continue
        piece = pieces.pop(i)
        order.pop(i)
        at = order.index(before[-1]) + 1
        order.insert(at, r)
        pieces.insert(at, piece)
    for i, r in enumerate(order):
        run = runs[r]
        if run.formatted and run.has_text and run.text and not pieces[i].text.strip():
            before = runs[r - 1].text if r > 0 else " "
            glue = bool(before) and not before[-1:].isspace() and not run.text[:1].isspace()
            pieces[i] = _Piece(run.text.strip(), glue)
    while True:  # two verbatim runs side by side (empty runs between): a plain run between them
        filled = [k for k in range(len(order)) if pieces[k].text]
        empty = [p for p in range(len(runs)) if not runs[p].formatted and not pieces[order.index(p)].text]
        pair = next(((order[x], order[y]) for x, y in zip(filled, filled[1:])
                     if runs[order[x]].verbatim and runs[order[y]].verbatim), None)
        if pair is None or not empty:
            break
        a, b = pair
        between = [p for p in empty if min(a, b) < p < max(a, b)]
        sep = (between or empty)[0]
        source = "".join(runs[p].text or "" for p in range(min(a, b) + 1, max(a, b)))
        text = source if source.strip() and not any(ch.isalnum() for ch in source) else " "
        k = order.index(sep)
        order.pop(k)
        pieces.pop(k)
        at = order.index(b)
        order.insert(at, sep)
        pieces.insert(at, _Piece(text, True, True))
    return order, pieces


def _is_punctuation(part: str) -> bool:
    return not any(ch.isalnum() for ch in part)
