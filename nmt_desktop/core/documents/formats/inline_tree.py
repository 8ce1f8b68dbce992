"""Inline XML content <-> runs, shared by the lxml-based adapters (html, epub, odt).

A block is a stretch of an element's mixed content (its text, inline children and their tails). Reading
walks it into runs: text under the same chain of inline ancestors (b, a[href], text:span...) is one run,
keyed by the chain's tags and attributes. Writing rebuilds the stretch in the translation's order, each
run's text under a fresh copy of its chain, so a bold word's translation stays bold wherever it moves.
Elements without text of their own (br, img, text:bookmark, a footnote, a frame) and verbatim ones
(inline code, a field) are *moved*, never copied or re-created, so they come back byte-for-byte and any
block inside them (a footnote's paragraph) keeps its identity for its own write. Such an element goes with
the run before it, unless it sits inside an element that run is not in (a <span> that starts with
<br><br>): then with the run after it, so the span is not split in two when the runs are reordered.
Plain text that such an element follows is a look of its own (`before_marker`), so it is aligned and the
element lands after the translation of the words it followed, not at the end of the sentence. An element
whose runs the translation puts apart is written once, around what lies between them (`whole_elements`).

A "break" (ODF's text:tab and text:line-break, HTML's br) cuts the stretch into segments, each a block of
its own (`segment_blocks`): a tab or a line break handed to the model vanished or glued two words, and the
segments on either side of it are usually separate phrases (a label and its value, two lines of an
address). Breaks are written back where they stood, between the segments' translations. A break inside an
inline element (a tab in a bold span) does not cut: the element would come back as two copies when the
translation reorders its segment's runs; it is text (a tab) or an element moved with its run instead.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Literal

from lxml import etree

from nmt_desktop.core.documents.blocks import (
    Block,
    Run,
    TranslatedRun,
    check_translated,
)

Element = etree._Element
Kind = Literal["chain", "verbatim", "atom", "chars", "break"]
_TEXT = None  # an item's payload standing for the run's (translated) text


def append_text(parent: Element, text: str) -> None:
    """Append text after everything already in `parent` (its text, or its last child's tail)."""
    if not text:
        return
    if len(parent):
        last = parent[-1]
        last.tail = (last.tail or "") + text
    else:
        parent.text = (parent.text or "") + text


@dataclass(frozen=True)
class InlineRules:
    """What a format's inline elements are. kind(el): "chain" (formatting: descend, copy on write),
    "verbatim" (its text is one verbatim run; moved whole), "atom" (no translatable text; moved whole),
    "chars" (stands for characters, e.g. ODF text:s: its text is chars(el), re-encoded by write_text),
    "break" (ends a segment: ODF text:tab and text:line-break, HTML br; stays where it is; inside an inline
    element, where a cut would split that element in two, it is chars(el) if that is not empty, else an atom
    after a space)."""
    kind: Callable[[Element], Kind]
    chars: Callable[[Element], str] = lambda el: ""
    read_text: Callable[[str], str] = lambda text: text
    write_text: Callable[[Element, str], None] = append_text


@dataclass
class _Run:
    style: Hashable
    chain: tuple[Element, ...]
    text: str = ""
    verbatim: bool = False
    # (chain, payload) in order: payload _TEXT for the text, or an element to move
    items: list[tuple[tuple[Element, ...], Element | None]] = field(default_factory=list)
    closed: bool = False  # an atom followed: the next text starts a new run
    marker: bool = False  # an element without text (a note, an image, a line break) follows its text


def style_key(chain: Sequence[Element]) -> Hashable:
    """A chain's look: its tags and attributes (a link's href, a span's class or style name)."""
    return tuple((el.tag, tuple(sorted(el.attrib.items()))) for el in chain)


class InlineSpan:
    """parent's content after `prev` (a child splitting parent into blocks; None: from parent.text) up to
    the next splitter: `nodes` are the inline children in between."""

    def __init__(self, parent: Element, prev: Element | None, nodes: list[Element], rules: InlineRules):
        self.parent, self.prev, self.nodes, self.rules = parent, prev, nodes, rules
        self._runs: list[_Run] = []
        self._leading: list[tuple[tuple[Element, ...], Element]] = []
        self._pending: list[tuple[tuple[Element, ...], Element]] = []  # atoms waiting for the next run
        self._breaks: list[tuple[int, list[tuple[tuple[Element, ...], Element]]]] = []  # (runs before, items)
        self._written: dict[int, Sequence[TranslatedRun]] = {}  # segment -> its translation, until all came
        self._add_text((), parent.text if prev is None else prev.tail)
        for node in nodes:
            self._walk(node, ())
            self._add_text((), node.tail)
        self._flush()
        if self._leading and self._runs:
            self._runs[0].items[:0] = self._leading

    # reading ----------------------------------------------------------------------------------------
    def _add_text(self, chain: tuple[Element, ...], text: str | None, raw: bool = False) -> None:
        if not text:
            return
        text = text if raw else self.rules.read_text(text)
        style = style_key(chain)
        last = self._runs[-1] if self._runs else None
        if last is not None and not last.verbatim and not last.closed and last.style == style and not self._pending:
            last.text += text
        else:
            self._start(_Run(style, chain, text, items=[(chain, _TEXT)]))

    def _start(self, run: _Run) -> None:
        """A new run; the atoms waiting for it lead it when it is inside their elements too."""
        if self._pending and all(run.chain[:len(c)] == c for c, _el in self._pending):
            run.items[:0] = self._pending
            self._pending = []
        self._flush()
        self._runs.append(run)

    def _flush(self) -> None:
        """Atoms still waiting go with the run before them (or lead the stretch)."""
        if self._pending and self._runs:
            self._runs[-1].items += self._pending
            self._runs[-1].closed = self._runs[-1].marker = True
        else:
            self._leading += self._pending
        self._pending = []

    def _add_element(self, chain: tuple[Element, ...], el: Element, text: str | None) -> None:
        if text is not None:  # verbatim: a run of its own
            self._start(_Run(style_key(chain + (el,)), chain, text, True, [(chain, el)]))
        elif self._runs and self._runs[-1].chain[:len(chain)] == chain and not self._pending:
            self._runs[-1].items.append((chain, el))
            self._runs[-1].closed = self._runs[-1].marker = True
        else:
            self._pending.append((chain, el))

    def _add_break(self, chain: tuple[Element, ...], el: Element) -> None:
        """A segment ends here: what waits for a run stays before the break, which stays in place."""
        items = self._leading + self._pending if not self._runs else self._pending
        if not self._runs:
            self._leading = []
        self._pending = []
        if self._runs:
            self._runs[-1].closed = True
        if self._breaks and self._breaks[-1][0] == len(self._runs):
            self._breaks[-1][1].extend(items + [(chain, el)])
        else:
            self._breaks.append((len(self._runs), items + [(chain, el)]))

    def _walk(self, el: Element, chain: tuple[Element, ...]) -> None:
        kind = self.rules.kind(el) if isinstance(el.tag, str) else "atom"
        if kind == "chars":
            self._add_text(chain, self.rules.chars(el), raw=True)
        elif kind == "break" and not chain:
            self._add_break(chain, el)
        elif kind == "break":  # inside a span or a link: a segment cut there would split the element in two
            text = self.rules.chars(el)
            if text:
                self._add_text(chain, text, raw=True)
            else:
                last = self._runs[-1] if self._runs else None
                if last is not None and not last.verbatim and last.text[-1:].strip() and (el.tail or "")[:1].strip():
                    last.text += " "  # the words on either side are never glued ("onSundays")
                self._add_element(chain, el, None)
        elif kind == "chain" and "".join(el.itertext()):
            inner = chain + (el,)
            self._add_text(inner, el.text)
            for child in el:
                self._walk(child, inner)
                self._add_text(inner, child.tail)
        elif kind == "verbatim" and "".join(el.itertext()):
            self._add_element(chain, el, "".join(el.itertext()))
        else:
            self._add_element(chain, el, None)

    @property
    def runs(self) -> list[Run]:
        """The runs; plain text that an element without text follows, with more text after it in its
        segment, is a look of its own (`before_marker`), so the marker goes where its words go."""
        segment_end = {i: seg.stop for seg in self.segments() for i in seg}
        out = []
        for i, r in enumerate(self._runs):
            style = r.style if r.chain or r.verbatim else None
            if style is None and r.marker and r.text.strip() and any(
                    self._runs[j].text.strip() for j in range(i + 1, segment_end[i])):
                style = before_marker(i)
            out.append(Run(r.text, style, r.verbatim))
        return out

    @property
    def blank(self) -> bool:
        """Nothing to translate: no run has more than white space."""
        return not any(r.text.strip() for r in self._runs)

    @property
    def verbatim(self) -> bool:
        """Only verbatim text (a paragraph that is a code span): listed but written back as it is."""
        return all(r.verbatim or not r.text.strip() for r in self._runs)

    def block(self, where: str) -> Block:
        return Block(self.runs, where, self.verbatim)

    def segments(self) -> list[range]:
        """The runs of each segment (between breaks; an empty one where a break starts or follows one)."""
        bounds = [0] + [at for at, _items in self._breaks] + [len(self._runs)]
        return [range(a, b) for a, b in zip(bounds, bounds[1:])]

    def segment_blocks(self, where: str) -> list[tuple[int, Block]]:
        """(segment number, its block) for each segment with text: "WHERE, part N" when there are several."""
        runs = self.runs
        found = [(k, [runs[i] for i in seg]) for k, seg in enumerate(self.segments())
                 if any(runs[i].text.strip() for i in seg)]
        return [(k, Block(part, where if len(found) == 1 else f"{where}, part {n}",
                          all(r.verbatim or not r.text.strip() for r in part)))
                for n, (k, part) in enumerate(found, 1)]

    # writing ----------------------------------------------------------------------------------------
    def write_segment(self, k: int, translated: Sequence[TranslatedRun], expected: set[int]) -> None:
        """Segment k's translation (its own run numbers); the span is written once every segment in
        `expected` has come, the others as they were."""
        self._written[k] = translated
        if not expected <= set(self._written):
            return
        flat: list[TranslatedRun] = []
        for j, seg in enumerate(self.segments()):
            if j in self._written:
                flat += [TranslatedRun(seg.start + t.index, t.text) for t in self._written[j]]
            else:
                flat += [TranslatedRun(i, self._runs[i].text) for i in seg]
        self._written = {}
        self.write(flat)

    def write(self, translated: Sequence[TranslatedRun], where: str = "") -> None:
        """Replace the span's content by the runs in `translated` order (each with its new text), each
        segment's runs before the break that ends it."""
        check_translated(Block(self.runs, where), translated)
        if self.verbatim:
            return
        segment_of = {i: k for k, seg in enumerate(self.segments()) for i in seg}
        emitted: list[tuple[tuple[Element, ...], Element | None, str]] = []
        for k, (_at, items) in enumerate(self._breaks + [(len(self._runs), [])]):
            for t in translated:
                if segment_of[t.index] == k:
                    emitted += [(chain, payload, t.text) for chain, payload in self._runs[t.index].items
                                if payload is not _TEXT or t.text]
            emitted += [(chain, el, "") for chain, el in items]
        chains = whole_elements([chain for chain, _payload, _text in emitted])
        emitted = [(chain, payload, text) for chain, (_old, payload, text) in zip(chains, emitted)]
        parent = self.parent
        for node in self.nodes:
            parent.remove(node)  # its tail goes with it; atoms inside are moved out below
        holder = parent.makeelement(parent.tag, {})
        parent.append(holder)  # inside the tree, so new elements reuse the document's namespace prefixes
        stack: list[tuple[Element, Element]] = []  # (source chain element, its copy)
        for chain, payload, text in emitted:
            keep = 0
            while keep < min(len(stack), len(chain)) and stack[keep][0] is chain[keep]:
                keep += 1
            del stack[keep:]
            for source in chain[keep:]:
                target = stack[-1][1] if stack else holder
                copy = _empty_copy(source, target)
                target.append(copy)
                stack.append((source, copy))
            target = stack[-1][1] if stack else holder
            if payload is _TEXT:
                self.rules.write_text(target, text)
            else:
                payload.tail = None
                target.append(payload)
        parent.remove(holder)
        if self.prev is None:
            parent.text = holder.text
        else:
            self.prev.tail = holder.text
        at = 0 if self.prev is None else parent.index(self.prev) + 1
        for i, child in enumerate(list(holder)):
            parent.insert(at + i, child)


def whole_elements(chains: Sequence[tuple]) -> list[tuple]:
    """The chains (outermost element first) of what is written in order, each element that the order
    would write as two or more copies (a <strong> around "HTML <code>x</code> Element" whose words the
    translation put on both sides of another word) extended over what lies between its first and last
    stretch, outermost elements first: an element is never duplicated (a second <time datetime>, a link
    with a second id), at the price of a word or two between its parts taking its look."""
    chains = [tuple(chain) for chain in chains]
    done: set = set()
    depth = 0
    while any(len(chain) > depth for chain in chains):
        for n in range(len(chains)):
            if len(chains[n]) <= depth or chains[n][depth] in done:
                continue
            element = chains[n][depth]
            done.add(element)
            at = [i for i, c in enumerate(chains) if len(c) > depth and c[depth] == element]
            outer = chains[at[0]][:depth]
            level = [i for i, c in enumerate(chains) if len(c) > depth and c[:depth] == outer]
            lo, hi = at[0], at[-1]
            while True:  # an element partly inside the stretch is taken in whole, or it would be split
                inside = {chains[i][depth] for i in level if lo <= i <= hi}
                ends = [i for i in level if chains[i][depth] in inside]
                if (min(ends), max(ends)) == (lo, hi):
                    break
                lo, hi = min(ends), max(ends)
            for i in range(lo, hi + 1):
                if chains[i][:depth] == outer and not (len(chains[i]) > depth and chains[i][depth] == element):
                    chains[i] = outer + (element,) + chains[i][depth:]
        depth += 1
    return chains


def before_marker(n: int) -> Hashable:
    """The look of plain text that a marker without text of its own follows (a footnote reference, an inline
    image, a field, a line break): a look of its own makes the translator align the block, so the text is
    cut where the marker's words went and the marker, which moves with the text before it, lands after the
    words aligned to the ones it followed, not at the end of the sentence."""
    return ("before a marker", n)


def is_before_marker(style: Hashable) -> bool:
    return isinstance(style, tuple) and len(style) == 2 and style[0] == "before a marker"


def _empty_copy(source: Element, target: Element) -> Element:
    """source's tag and attributes without its content; a tag lxml will not create by name (Word's <o:p>
    in an HTML page, which the HTML parser read as it is) is copied whole and emptied."""
    try:
        return target.makeelement(source.tag, dict(source.attrib))
    except ValueError:
        copy = deepcopy(source)
        for child in list(copy):
            copy.remove(child)
        copy.text = copy.tail = None
        return copy


def spans_of(parent: Element, splits: Callable[[Element], bool], rules: InlineRules) -> list[InlineSpan]:
    """parent's mixed content cut at the children for which `splits` is true (nested block elements);
    stretches with nothing to translate are left out, so they are never touched."""
    spans, prev, nodes = [], None, []
    for child in parent:
        if isinstance(child.tag, str) and splits(child):
            spans.append(InlineSpan(parent, prev, nodes, rules))
            prev, nodes = child, []
        else:
            nodes.append(child)
    spans.append(InlineSpan(parent, prev, nodes, rules))
    return [s for s in spans if not s.blank]
