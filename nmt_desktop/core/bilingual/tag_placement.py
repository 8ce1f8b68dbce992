"""A person's plain text put into a segment that has inline tags (issue 44): the source's tags placed on the
words they belong to, the text written exactly as typed.

The translator typed words, not tags (the desk keeps the text plain; its markup is never parsed). Which of
the typed words each run of the source segment (inline_segments.py: a pair of tags is a look, a standalone
tag a verbatim run) holds is decided as for the model's output, by inline_transfer.transfer, from a word
alignment of the source and the typed text: with a translator, the model's own reading of the text forced
through its decoder (Translator.score, teacher forcing; the alignment translate-file uses, core/analysis/
alignment.py); without one, or where the model cannot read the pair (too long), by relative position. A
standalone tag (x, ph, a lone half of a pair) goes after the words aligned to the source word before it (else
before those of the word after it). The transfer's stretches then only decide in which run each typed
character falls, so nothing is added, dropped or respaced, and write_segment puts every tag back once,
paired and in the source's nesting. A software placeholder (%d) left out is not put back (confirmed.py
reports it); a span not to translate (mrk protected, translate="no") is its element, holding the typed copy
of its text where the text has one, else kept whole beside the typed words (its text then reads back too).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
from lxml import etree

from nmt_desktop.core.bilingual.inline_segments import Segment, write_segment, written_order
from nmt_desktop.core.documents.blocks import TranslatedBlock, TranslatedRun
from nmt_desktop.core.documents.given_translation import given_alignments, run_infos
from nmt_desktop.core.documents.inline_transfer import transfer

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.translator import Translator


def has_tags(segment: Segment) -> bool:
    """Whether the segment has inline tags (pairs or standalone elements), not only text and placeholders."""
    return bool(segment.spans) or any(slot.marker is not None for slot in segment.slots)


def write_plain(element: etree._Element, text: str) -> None:
    """`element`'s content replaced by `text` (a segment without tags)."""
    for kid in list(element):
        element.remove(kid)
    element.text = text or None


@dataclass
class _Job:
    segment: Segment
    text: str
    element: etree._Element


class TagPlacer:
    """Collects the confirmed texts of segments (`place`, the Place hook the formats call) and writes them
    (`write_all`): the tagged ones' alignments read by the model in batches, or by position.

    by: "alignment" (the model aligned every tagged segment), "position" (none given, or a pair the model
    could not read), or "none" (no tagged segment)."""

    def __init__(self, translator: "Translator | None" = None):
        self.translator = translator
        self.jobs: list[_Job] = []
        self.by = "none"

    def place(self, segment: Segment, text: str, element: etree._Element) -> None:
        if has_tags(segment):
            self.jobs.append(_Job(segment, text, element))
        else:
            write_plain(element, text)

    def write_all(self) -> None:
        layouts = [_Layout(job.segment, job.text) for job in self.jobs]
        alignments = self._alignments(layouts)
        for job, layout, (matrix, links) in zip(self.jobs, layouts, alignments):
            runs = layout.place(matrix, links)
            write_segment(job.segment, runs, job.element, settle=False)
            if not any(job.segment.slots[r.index].marker is None for r in runs) and job.text:
                _append(job.element, job.text)  # only tags in the source: the text after them
        self.jobs = []

    def _alignments(self, layouts: Sequence["_Layout"]) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
        """Each layout's (evidence (Wt, Ws), links): the model's where it can read the pair, else by position."""
        if not layouts:
            return []
        found = given_alignments(self.translator, [(l.source_words, l.target_words) for l in layouts])
        self.by = "alignment" if all(aligned for _m, _l, aligned in found) else "position"
        return [(matrix, links) for matrix, links, _aligned in found]


def _append(element: etree._Element, text: str) -> None:
    if len(element):
        element[-1].tail = (element[-1].tail or "") + text
    else:
        element.text = (element.text or "") + text


class _Layout:
    """A segment's runs against a typed text: the source's words (tags taken out) and the run of each, the
    typed words, which runs are tags to insert, and which verbatim runs the text holds."""

    def __init__(self, segment: Segment, text: str):
        self.segment, self.text = segment, text
        runs, slots = segment.runs, segment.slots
        self.keep = {r for r, slot in enumerate(slots) if slot.marker is not None and runs[r].text.strip()
                     and "".join(slot.marker.itertext()) == runs[r].text}  # a span not to translate, with text
        spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        self.target_words = [text[a:b] for a, b in spans]
        self.typed: dict[int, int] = {}  # verbatim run -> the typed word where its text starts
        self.occurrence: dict[int, tuple[int, int]] = {}  # verbatim run -> where the text holds its text
        for r, run in enumerate(runs):
            own = run.text.strip()
            if not (run.verbatim and (slots[r].marker is None or r in self.keep) and own):
                continue
            at = text.find(own)
            while at >= 0 and any(a < at + len(own) and at < b for a, b in self.occurrence.values()):
                at = text.find(own, at + 1)
            if at < 0:
                continue
            self.occurrence[r] = (at, at + len(own))
            j = next(j for j, (a, b) in enumerate(spans) if a <= at < b)
            if j not in self.typed.values():
                self.typed[r] = j
        self.inserted = [r for r, slot in enumerate(slots) if slot.marker is not None and r not in self.occurrence]
        chars: list[str] = []
        owners: list[int | None] = []
        self.anchor: dict[int, int] = {}  # inserted run -> its character offset in the source without tags
        for r, run in enumerate(runs):
            if r in self.inserted:
                self.anchor[r] = len(chars)
                chars.append(" ")
                owners.append(None)
            else:
                chars += list(run.text)
                owners += [r] * len(run.text)
        source = "".join(chars)
        self.source_words, self.source_runs, starts = [], [], []
        for m in re.finditer(r"\S+", source):
            own = [o for o in owners[m.start():m.end()] if o is not None]
            self.source_words.append(m.group())
            self.source_runs.append(max(set(own), key=own.count))
            starts.append(m.start())
        self.before = {r: sum(1 for s in starts if s < at) for r, at in self.anchor.items()}  # source words before it

    def place(self, matrix: np.ndarray, links: Sequence[tuple[int, int]]) -> TranslatedBlock:
        """The runs with their stretches of the typed text (see the module docstring)."""
        runs, n_s, n_t = self.segment.runs, len(self.source_words), len(self.target_words)
        gaps = {r: self._gap(self.before[r], links, n_s, n_t) for r in self.inserted}
        if self.segment.source_order:  # tags that may not be reordered keep the source's order
            last = 0
            for r in self.inserted:
                gaps[r] = last = max(last, gaps[r])
        words, new_index, fixed = [], {}, {}
        for j in range(n_t + 1):
            for r in sorted((r for r in self.inserted if gaps[r] == j), key=lambda r: (gaps[r], r)):
                fixed[len(words)] = r
                words.append("".join(runs[r].text.split()) or f"TAG{r}")  # one word: the tag's own run
            if j < n_t:
                new_index[j] = len(words)
                words.append(self.target_words[j])
        fixed.update({new_index[j]: r for r, j in self.typed.items()})
        evidence = np.zeros((len(words), n_s))  # (target words with the tags, source words)
        for j, k in new_index.items():
            evidence[k, :] = matrix[j, :]
        moved = [(i, new_index[j]) for i, j in links if j in new_index]
        cut = transfer(run_infos(runs), self.source_runs, words, evidence, moved, fixed)
        return self._typed_text(written_order(self.segment, cut))

    @staticmethod
    def _gap(before: int, links: Sequence[tuple[int, int]], n_s: int, n_t: int) -> int:
        """Where among the typed words a tag goes that follows `before` source words."""
        after_word = [j for i, j in links if i == before - 1]
        if after_word:
            return max(after_word) + 1
        next_word = [j for i, j in links if i == before]
        if next_word:
            return min(next_word)
        return round(before * n_t / n_s) if n_s else 0

    def _typed_text(self, cut: TranslatedBlock) -> TranslatedBlock:
        """`cut` (the transfer's runs in the order they are written) with the typed text exactly: each typed
        character in the run where the transfer put it (matched in order; a span not to translate holds its
        typed copy), a space between runs where the transfer had it, else on the plain side."""
        slots, runs = self.segment.slots, self.segment.runs
        holds = [slots[t.index].marker is None for t in cut]  # a run whose text is written (not a tag's element)
        seen: list[tuple[str, int, int | None]] = []  # the transfer's non-space characters: (char, entry, space's entry)
        space: int | None = None
        for k, t in enumerate(cut):
            if t.index in self.inserted or not (holds[k] or t.index in self.keep):
                continue
            for ch in t.text:
                if ch.isspace():
                    space = k if space is None else space
                else:
                    seen.append((ch, k, space))
                    space = None
        typed = [(p, ch) for p, ch in enumerate(self.text) if not ch.isspace()]
        owner: list[int | None] = [None] * len(typed)
        match: list[int | None] = [None] * len(typed)
        matcher = difflib.SequenceMatcher(None, [c for c, _k, _s in seen], [c for _p, c in typed], autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            for d in range(size):
                owner[b + d], match[b + d] = seen[a + d][1], a + d
        for k in {k for k in owner if k is not None and not holds[k]}:  # a protected span: only its typed copy
            for q in (q for q, o in enumerate(owner) if o == k):
                owner[q] = None
        for k, t in enumerate(cut):
            if t.index in self.occurrence and not holds[k]:
                start, end = self.occurrence[t.index]
                for q, (p, _ch) in enumerate(typed):
                    if start <= p < end:
                        owner[q] = k
                    elif owner[q] is not None and (owner[q] > k if p < start else owner[q] < k):
                        owner[q] = None  # the typed copy wins over a neighbour put out of order
        last = -1
        for q, o in enumerate(owner):  # in the written order: a character matched out of it is placed anew
            if o is not None and o < last:
                owner[q] = None
            elif o is not None:
                last = o
        holders = [k for k in range(len(cut)) if holds[k]]
        if not holders:
            return cut
        for q in range(len(typed)):  # a character the transfer did not have: with the one before it
            if owner[q] is None:
                lo = next((o for o in reversed(owner[:q]) if o is not None), -1)
                hi = next((o for o in owner[q + 1:] if o is not None), len(cut))
                between = [k for k in holders if lo <= k <= hi]
                owner[q] = between[0] if between else min(holders, key=lambda k: abs(k - max(lo, 0)))
        texts = ["" for _ in cut]
        for q, (p, ch) in enumerate(typed):
            if q == 0:
                lead = self.text[:p]
                if lead:
                    texts[max([k for k in holders if k <= owner[0]] or holders[:1])] += lead
            else:
                gap = self.text[typed[q - 1][0] + 1:p]
                if gap:
                    texts[self._space_entry(cut, holds, owner[q - 1], owner[q], match, seen, q)] += gap
            if holds[owner[q]]:
                texts[owner[q]] += ch
        if typed:
            tail = self.text[typed[-1][0] + 1:]
            if tail:
                texts[min([k for k in holders if k >= owner[-1]] or holders[-1:])] += tail
        else:
            texts[holders[0]] += self.text
        return [TranslatedRun(t.index, texts[k] if holds[k] else t.text) for k, t in enumerate(cut)]

    def _space_entry(self, cut: TranslatedBlock, holds: list[bool], a: int, b: int, match: list[int | None],
                     seen: list[tuple[str, int, int | None]], q: int) -> int:
        """The entry that holds the space between typed characters q - 1 (in entry a) and q (in entry b)."""
        if a == b and holds[a]:
            return a
        candidates = [k for k in range(min(a, b), max(a, b) + 1) if holds[k]]
        if match[q] is not None and match[q - 1] is not None and match[q] == match[q - 1] + 1:
            where = seen[match[q]][2]
            if where is not None and where in candidates:
                return where
        runs = self.segment.runs
        plain = [k for k in candidates if runs[cut[k].index].style is None and not runs[cut[k].index].verbatim]
        other = [k for k in candidates if not runs[cut[k].index].verbatim]
        return (plain or other or candidates or [a if holds[a] else b])[0]
