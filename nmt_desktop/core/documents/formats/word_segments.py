"""A Word paragraph cut at its tabs and line breaks (w:tab, w:br, w:cr) into segments, each a block of its own.

A break handed to the model vanished: its words came back as one line, so the text after a w:br (the
second line) was left empty, and a tab between a label and its value became a space or nothing. The
stretches between breaks are usually separate phrases (two lines of an address, a label and its value), so
each is translated on its own and the breaks stay where they are. A run that holds a break and text
(`<w:t>Line one</w:t><w:br/><w:t>line two</w:t>`) gives a piece of text to each side; when a translation
is written, such a run is first split into runs of the same properties, one per stretch and one per break,
so a piece moves with its segment and the break never moves. A paragraph without breaks is one segment
of whole runs, written as before; an untranslated paragraph is left exactly as it was.

A marker between two pieces of plain text (a footnote reference, an inline image, a field) was left at its
place among the runs, so with the whole translation given to the first run it ended the sentence. The
piece it follows is now a look of its own (inline_tree.before_marker), so the translation is aligned and
cut there, and the marker moves with that piece's run: it lands after the words aligned to the ones it
followed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, Run, TranslatedBlock, untranslated
from nmt_desktop.core.documents.formats.inline_tree import before_marker, is_before_marker
from nmt_desktop.core.documents.formats.ooxml_runs import RunSlot, never_emptied, write_runs

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
BREAKS = {f"{{{W}}}tab", f"{{{W}}}br", f"{{{W}}}cr"}
T, RPR = f"{{{W}}}t", f"{{{W}}}rPr"
# what shows in the text without being text: a note's number, an image, an object, a field
MARKERS = {f"{{{W}}}{t}" for t in ("footnoteReference", "endnoteReference", "drawing", "pict", "object", "fldSimple",
                                   "fldChar")}

# How the adapter reads a run's look: (style key, verbatim by its style or font, marked: never emptied).
Look = Callable[[RunSlot], tuple[object, bool, bool]]


@dataclass(frozen=True)
class Piece:
    """Stretch `stretch` (between the run's breaks) of a run, with its text."""
    slot: RunSlot
    stretch: int
    text: str
    marker: bool = False  # a marker follows it before the next piece


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
    everything = list(element.iter())  # kept, so that ids stay unique while they are used
    order = {id(el): k for k, el in enumerate(everything)}
    tags = [el.tag for el in everything]
    for n, slot in enumerate(slots):
        last = max(order[id(el)] for el in slot.run.iter())
        upto = order[id(slots[n + 1].run)] if n + 1 < len(slots) else len(tags)
        marker = any(tag in MARKERS for tag in tags[last + 1:upto])
        parts = stretches(slot.run)
        for k, children in enumerate(parts):
            if k:
                segments.append([])
                breaks = True
            text = _text(children)
            if text:
                segments[-1].append(Piece(slot, k, text, marker and k == len(parts) - 1))
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
                anchored = [s.unit for s, run in zip(slots[k], block.runs) if is_before_marker(run.style)]
                write_runs(slots[k], kept, self.set_text, _followers(anchored, slots))
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


def _followers(units: Sequence[etree._Element], slots: list[list[RunSlot]]) -> dict[etree._Element, list]:
    """The markers after each unit (its following siblings up to the next text, break or unit): they move
    with it."""
    runs = {id(s.run) for segment in slots for s in segment} | {id(s.unit) for segment in slots for s in segment}
    found = {}
    for unit in units:
        after = []
        for sibling in unit.itersiblings():
            if id(sibling) in runs or any(c.tag in BREAKS for c in sibling) \
                    or any(id(d) in runs for d in sibling.iter()):
                break
            after.append(sibling)
        found[unit] = after
    return found


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
        segment = paragraph.segments[k]
        for n_piece, piece in enumerate(segment):
            key, verbatim, mark = look(piece.slot)
            if key is None and not verbatim and piece.marker and piece.text.strip() \
                    and any(p.text.strip() for p in segment[n_piece + 1:]):
                key = before_marker(n_piece)
            runs.append(Run(piece.text, key, verbatim))
            marks.append(mark)
        blocks[k] = Block(runs, where if len(found) == 1 else f"{where}, line {n}")
        marked[k] = marks
    return blocks, marked

