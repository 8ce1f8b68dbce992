"""A Word paragraph cut at its tabs and line breaks (w:tab, w:br, w:cr) into segments, each a block of its own.

A break handed to the model vanished: its words came back as one line, so the text after a w:br (the
second line) was left empty, and a tab between a label and its value became a space or nothing. The
stretches between breaks are usually separate phrases (two lines of an address, a label and its value), so
each is translated on its own and the breaks stay where they are. A run that holds a break and text
(`<w:t>Line one</w:t><w:br/><w:t>line two</w:t>`) gives a piece of text to each side; when a translation
is written, such a run is first split into runs of the same properties, one per stretch and one per break,
so a piece moves with its segment and the break never moves. A paragraph without breaks is one segment
of whole runs, written as before; an untranslated paragraph is left exactly as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, Run, TranslatedBlock, untranslated
from nmt_desktop.core.documents.formats.ooxml_runs import RunSlot, never_emptied, write_runs

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
BREAKS = {f"{{{W}}}tab", f"{{{W}}}br", f"{{{W}}}cr"}
T, RPR = f"{{{W}}}t", f"{{{W}}}rPr"

# How the adapter reads a run's look: (style key, verbatim by its style or font, marked: never emptied).
Look = Callable[[RunSlot], tuple[object, bool, bool]]


@dataclass(frozen=True)
class Piece:
    """Stretch `stretch` (between the run's breaks) of a run, with its text."""
    slot: RunSlot
    stretch: int
    text: str


@dataclass
class Paragraph:
    """A w:p read as segments of pieces; `breaks`: whether any run holds a break (else one segment of
    whole runs)."""
    element: etree._Element
    segments: list[list[Piece]]
    breaks: bool

    def texts(self) -> list[list[str]]:
        return [[p.text for p in segment] for segment in self.segments]


def stretches(run: etree._Element) -> list[list[etree._Element]]:
    """A run's children (w:rPr aside) between its breaks."""
    out: list[list[etree._Element]] = [[]]
    for child in run:
        if child.tag in BREAKS:
            out.append([])
        elif child.tag != RPR:
            out[-1].append(child)
    return out


def _text(children: Sequence[etree._Element]) -> str:
    return "".join(c.text or "" for c in children if c.tag == T)


def read_paragraph(element: etree._Element, slots: Sequence[RunSlot]) -> Paragraph:
    segments: list[list[Piece]] = [[]]
    breaks = False
    for slot in slots:
        for k, children in enumerate(stretches(slot.run)):
            if k:
                segments.append([])
                breaks = True
            text = _text(children)
            if text:
                segments[-1].append(Piece(slot, k, text))
    return Paragraph(element, segments, breaks)


@dataclass
class ParagraphWriter:
    """Writes a paragraph (and its mc:Fallback twins) once every segment's translation has come."""
    paragraphs: list[Paragraph]  # the paragraph, then its twins with the same segments
    blocks: dict[int, Block]  # segment -> its block (segments with text only)
    marked: dict[int, list[bool]]
    set_text: Callable[[etree._Element, str], None]
    on_changed: Callable[[etree._Element], None]  # a run whose text changed (its language mark)
    _written: dict[int, TranslatedBlock] = field(default_factory=dict)

    def writer(self, segment: int) -> Callable[[TranslatedBlock], None]:
        def write(translated: TranslatedBlock) -> None:
            self._written[segment] = translated
            if set(self._written) >= set(self.blocks):
                self._write_all()
        return write

    def _write_all(self) -> None:
        changed = any(list(self._written[k]) != untranslated(block) for k, block in self.blocks.items())
        if not changed:
            return
        for paragraph in self.paragraphs:
            slots = _split(paragraph) if paragraph.breaks else [[p.slot for p in s] for s in paragraph.segments]
            spanning = _spanning_units(paragraph, slots)
            for k, block in self.blocks.items():
                kept = never_emptied(block, self._written[k], self.marked[k])
                if any(s.unit in spanning for s in slots[k]):  # a link across a break: texts only, in place
                    kept = sorted(kept, key=lambda t: t.index)
                write_runs(slots[k], kept, self.set_text)
                for t in kept:
                    if t.text != block.runs[t.index].text:
                        self.on_changed(slots[k][t.index].run)
        self._written = {}


def _split(paragraph: Paragraph) -> list[list[RunSlot]]:
    """The paragraph's runs that hold a break split into runs of one stretch or one break each (same
    properties); the pieces' slots on the new runs, segment by segment."""
    new_run: dict[tuple[int, int], etree._Element] = {}  # (id of the source run, stretch) -> its run
    done: set[int] = set()
    for piece in (p for segment in paragraph.segments for p in segment):
        run = piece.slot.run
        if id(run) in done or not any(c.tag in BREAKS for c in run):
            continue
        done.add(id(run))
        props = run.find(RPR)
        parts: list[tuple[int | None, list[etree._Element]]] = [(0, [])]  # (stretch or None: a break, children)
        for child in run:
            if child.tag in BREAKS:
                number = sum(1 for k, _ in parts if k is not None)
                parts += [(None, [child]), (number, [])]
            elif child.tag != RPR:
                parts[-1][1].append(child)
        made = []
        for k, children in parts:
            if not children:
                continue
            new = run.makeelement(run.tag, dict(run.attrib))
            if props is not None:
                new.append(copy.deepcopy(props))
            new.extend(children)
            made.append(new)
            if k is not None:
                new_run[(id(run), k)] = new
        for new in reversed(made):
            run.addnext(new)
        run.getparent().remove(run)
    out = []
    for segment in paragraph.segments:
        slots = []
        for piece in segment:
            run = new_run.get((id(piece.slot.run), piece.stretch), piece.slot.run)
            unit = piece.slot.unit if piece.slot.unit is not piece.slot.run else run
            slots.append(RunSlot(run, unit))
        out.append(slots)
    return out


def _spanning_units(paragraph: Paragraph, slots: list[list[RunSlot]]) -> set[etree._Element]:
    """Units (a hyperlink, a tracked insertion) with pieces in two segments or a break inside: moving one
    would carry a break or another segment's words with it."""
    seen: dict[int, int] = {}
    spanning = set()
    for k, segment in enumerate(slots):
        for slot in segment:
            if slot.unit is slot.run:
                continue
            if seen.setdefault(id(slot.unit), k) != k or any(c.tag in BREAKS for c in slot.unit.iter()):
                spanning.add(slot.unit)
    return spanning


def segment_blocks(paragraph: Paragraph, look: Look, where: str) -> tuple[dict[int, Block], dict[int, list[bool]]]:
    """Each segment with text as a block ("WHERE, line N" when there are several) and its marked runs."""
    found = [k for k, segment in enumerate(paragraph.segments) if "".join(p.text for p in segment).strip()]
    blocks, marked = {}, {}
    for n, k in enumerate(found, 1):
        runs, marks = [], []
        for piece in paragraph.segments[k]:
            key, verbatim, mark = look(piece.slot)
            runs.append(Run(piece.text, key, verbatim))
            marks.append(mark)
        blocks[k] = Block(runs, where if len(found) == 1 else f"{where}, line {n}")
        marked[k] = marks
    return blocks, marked

