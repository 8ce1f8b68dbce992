"""A segment's inline content (XLIFF's tags around and between words) as the runs of a Block, and back.

A pair of tags (XLIFF 1.2 g, mrk, bpt/ept, bx/ex; XLIFF 2 pc, mrk, sc/ec) is a look: every stretch of text
inside it is a run whose style is the chain of pairs around it, so inline_transfer.py puts it on the words
aligned to it. A standalone tag (x, ph, it, a lone half of a pair, an empty span) or a span not to translate is a verbatim
run: the model sees a placeholder name, the translation puts it beside the words it belongs to, and the
writer puts the element back, never its label. Software placeholders in the text (%d, %(name)s, {0},
%1$s) are verbatim runs too (placeholders.py protects every verbatim run), so they come back unchanged.

Written back, the runs in the translation's order are gathered under their pairs (a pair's runs that the
translation separated go where its first run is), so every tag comes back once, paired and in the
source's nesting. A segment whose pairs overlap in the source (sc/ec may), or with a code XLIFF 2 says may not
be reordered (canReorder="no"/"firstNo"), keeps its runs in source order.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from lxml import etree

from nmt_desktop.core.bilingual.units import InlineTag
from nmt_desktop.core.documents.blocks import Run, TranslatedBlock, TranslatedRun

# printf (%d, %s, %1$s, %(name)s, %.2f, %%), Qt/ICU-like %1, and brace placeholders ({0}, {name}, {})
PLACEHOLDER = re.compile(r"%(?:\d+\$)?(?:\([A-Za-z_]\w*\))?[-+#0]*\d*(?:\.\d+)?(?:hh|h|ll|l|L|q|j|z|t)?"
                         r"[diouxXeEfFgGcrsaAp%@]|%\d+|\{\d*\}|\{[A-Za-z_][\w.]*\}")

# what a child element of a segment is: "wrap" (a pair that holds its content: g, pc, mrk), "keep" (one not
# to translate: mrk mtype="protected", translate="no"), "open"/"close" (one end of a pair of empty
# elements: bpt/ept, bx/ex, sc/ec) with the key that pairs them, or "marker"
Classify = Callable[[etree._Element], tuple[str, str]]


@dataclass
class Span:
    """A pair of tags: `open` alone (a wrapping element, written with the span's content inside) or `open`
    and `close` (two empty elements written around the content)."""
    open: etree._Element
    close: etree._Element | None
    id: str
    name: str


@dataclass
class Slot:
    """What run `i` of the block is: text (plain or a software placeholder) inside the pairs of `chain`, or
    a standalone element (`marker`)."""
    chain: tuple[int, ...]
    text: str = ""
    marker: etree._Element | None = None


@dataclass
class Segment:
    """A segment's content: its runs (the Block's), what each run is, the pairs, whether its runs keep the
    source's order, its plain text and its tags."""
    runs: list[Run]
    slots: list[Slot]
    spans: list[Span]
    source_order: bool  # written in the source's order: its pairs overlap, or a code may not be reordered
    text: str
    tags: list[InlineTag] = field(default_factory=list)


def label(element: etree._Element, tag_id: str) -> str:
    """A standalone tag's run text ("TAGx2"): one word without punctuation, so that the transfer never cuts
    it (the model sees a placeholder name instead; the writer puts the element back, never this)."""
    return f"TAG{local(element)}{tag_id}"


def local(element: etree._Element) -> str:
    """An element's name without its namespace ("" for comments and processing instructions)."""
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def native_code(element: etree._Element, end: str) -> str:
    """The native code an inline element holds as its content (XLIFF 1.2 bpt, ept, ph, it); "" for a pair
    that wraps text (g, mrk). `end`: "open", "close" or "standalone"."""
    return "" if local(element) in ("g", "mrk") else "".join(element.itertext())


def read_segment(element: etree._Element | None, classify: Classify,
                 code_of: Callable[[etree._Element, str], str] = native_code) -> Segment:
    """The runs, pairs and plain text of `element`'s content (a source, target or mrk seg)."""
    events: list[tuple] = []  # ("text", s) / ("open"|"close", el, key) / ("marker", el) / ("wrap", el) / ("end",)
    if element is not None:
        _flatten(element, classify, events, top=True)
    paired = _pairs(events)
    spans, slots, runs, stack, text, tags = [], [], [], [], [], []
    ends = set(paired) | set(paired.values())
    overlapping = any(e[0] in ("open", "close") and i not in ends and _other_half(events, i) for i, e in enumerate(events))
    position = 0
    for i, event in enumerate(events):
        kind = event[0]
        chain = tuple(stack)
        if kind == "text":
            for piece, verbatim in text_pieces(event[1]):
                slots.append(Slot(chain, piece))
                runs.append(Run(piece, chain or None, verbatim))
            text.append(event[1])
            position += len(event[1])
        elif kind in ("wrap", "open") and (kind == "wrap" or i in paired):
            el = event[1]
            shallow = el.makeelement(el.tag, dict(el.attrib), el.nsmap) if kind == "wrap" else _alone(el)
            close = _alone(events[paired[i]][1]) if kind == "open" else None
            tag_id = el.get("id") or el.get("rid") or str(len(spans) + 1)
            spans.append(Span(shallow, close, tag_id, local(el)))
            stack.append(len(spans) - 1)
            tags.append(InlineTag("open", tag_id, local(el), position, code_of(el, "open")))
        elif kind == "end" or (kind == "close" and i in paired.values()):
            span = spans[stack.pop()]
            closing = event[1] if kind == "close" else span.open
            tags.append(InlineTag("close", span.id, local(closing), position, code_of(closing, "close")))
        elif kind == "keep":  # a span not to translate: its element as it is, its text part of the text
            el, inner = event[1], "".join(event[1].itertext())
            tag_id = el.get("id") or el.get("mid") or ""
            slots.append(Slot(chain, marker=_alone(el)))
            runs.append(Run(inner if inner.strip() else label(el, tag_id), chain or None, True))
            tags.append(InlineTag("open", tag_id, local(el), position, code_of(el, "open")))
            text.append(inner)
            position += len(inner)
            tags.append(InlineTag("close", tag_id, local(el), position, code_of(el, "close")))
        else:  # a marker, or a half of a pair without its other half here
            el = event[1]
            tag_id = el.get("id") or el.get("startRef") or el.get("rid") or ""
            slots.append(Slot(chain, marker=_alone(el)))
            runs.append(Run(label(el, tag_id), chain or None, True))
            tags.append(InlineTag("standalone", tag_id, local(el), position, code_of(el, "standalone")))
    fixed = element is not None and any(e.get("canReorder") in ("no", "firstNo") for e in element.iter())
    return Segment(runs, slots, spans, overlapping or fixed, "".join(text), tags)


def _flatten(element: etree._Element, classify: Classify, events: list, top: bool = False) -> None:
    if element.text:
        events.append(("text", element.text))
    for child in element:
        if isinstance(child.tag, str):
            kind, key = classify(child)
            if kind == "wrap" and (child.text or len(child)):
                events.append(("wrap", child))
                _flatten(child, classify, events)
                events.append(("end",))
            elif kind in ("open", "close"):
                events.append((kind, child, key))
            elif kind == "keep":
                events.append(("keep", child))
            else:
                events.append(("marker", child))
        if child.tail:
            events.append(("text", child.tail))


def _pairs(events: Sequence[tuple]) -> dict[int, int]:
    """open event index -> its close's index, for the pairs that nest with everything around them."""
    stack: list[tuple[str, int, str]] = []  # (kind, index, key)
    paired: dict[int, int] = {}
    for i, event in enumerate(events):
        if event[0] in ("wrap", "open"):
            stack.append((event[0], i, event[2] if event[0] == "open" else ""))
        elif event[0] == "end":
            while stack and stack[-1][0] != "wrap":
                stack.pop()  # an open marker not closed inside this element stays alone
            if stack:
                stack.pop()
        elif event[0] == "close":
            if stack and stack[-1][0] == "open" and stack[-1][2] == event[2]:
                paired[stack.pop()[1]] = i
    return paired


def _other_half(events: Sequence[tuple], i: int) -> bool:
    kind, key = events[i][0], events[i][2]
    other = "close" if kind == "open" else "open"
    return any(e[0] == other and e[2] == key for e in events)


def _alone(element: etree._Element) -> etree._Element:
    """A copy of an element without its tail (its content, native code or sub, kept)."""
    twin = copy.deepcopy(element)
    twin.tail = None
    return twin


def text_pieces(text: str) -> list[tuple[str, bool]]:
    """Text cut into plain stretches and software placeholders (verbatim)."""
    out, last = [], 0
    for m in PLACEHOLDER.finditer(text):
        if m.start() > last:
            out.append((text[last:m.start()], False))
        out.append((m.group(), True))
        last = m.end()
    if last < len(text) or not out:
        out.append((text[last:], False))
    return out


def settled(runs: Sequence[Run], translated: TranslatedBlock) -> TranslatedBlock:
    """The translated runs with each verbatim text (a placeholder, a tag's label) no more often in the other
    runs than the source had it there (a model that wrote a placeholder's name twice gave "%d%s in %s"),
    and with printf's argument order (`in_printf_order`)."""
    plain_source = "".join(run.text for run in runs if not run.verbatim)
    out = []
    for t in translated:
        text = t.text
        if not runs[t.index].verbatim:
            for verbatim in {run.text for run in runs if run.verbatim and run.text.strip()}:
                while text.count(verbatim) > plain_source.count(verbatim):
                    at = text.rindex(verbatim)
                    before, after = text[:at], text[at + len(verbatim):]
                    text = before + (after[1:] if before.endswith(" ") and after.startswith(" ") else after)
        out.append(TranslatedRun(t.index, text))
    return in_printf_order(runs, out)


def in_printf_order(runs: Sequence[Run], translated: TranslatedBlock) -> TranslatedBlock:
    """The translated runs with the printf placeholders that name no argument (%s, %d: not %1$s, %(name)s)
    in the source's order wherever the translation moved them: printf takes its arguments in that order,
    so "%s ... %d" for "%d ... %s" would break the program (msgfmt -c refuses it)."""
    def anonymous(text: str) -> bool:
        return text.startswith("%") and "$" not in text and "(" not in text and text != "%%" and not text[1:].isdigit()

    source = [i for i, run in enumerate(runs) if run.verbatim and anonymous(run.text)]
    moved = [t.index for t in translated if t.index in source]
    if moved == source:
        return list(translated)
    swap = dict(zip(moved, source))
    return [TranslatedRun(swap.get(t.index, t.index), runs[swap[t.index]].text if t.index in swap else t.text)
            for t in translated]


def write_segment(segment: Segment, translated: TranslatedBlock, target: etree._Element, settle: bool = True) -> None:
    """`target`'s content replaced by the translated runs, with every tag of the segment once, paired and
    nested as in the source (see the module docstring); its attributes are kept. settle: the model's
    placeholders `settled` (off for a person's text, written as typed)."""
    if settle:
        translated = settled(segment.runs, translated)
    root = _gathered(segment, translated)
    for child in list(target):
        target.remove(child)
    target.text = None
    _emit(target, root, segment)


def written_order(segment: Segment, translated: TranslatedBlock) -> TranslatedBlock:
    """The runs in the order write_segment writes them (a pair's runs gathered where its first run is)."""
    out: list[TranslatedRun] = []

    def walk(nodes: list) -> None:
        for node in nodes:
            if node[0] == "run":
                out.append(node[1])
            else:
                walk(node[2])

    walk(_gathered(segment, translated))
    return out


def _gathered(segment: Segment, translated: TranslatedBlock) -> list:
    """The runs as a tree of ("run", run) and ("span", span index, children) nodes, in the translation's order
    (the source's where it must keep it), each pair's runs under it."""
    order = sorted(translated, key=lambda r: r.index) if segment.source_order else list(translated)
    root: list = []
    nodes: dict[int, list] = {}
    for run in order:
        slot, children = segment.slots[run.index], root
        for span in slot.chain:
            if span not in nodes:
                nodes[span] = []
                children.append(("span", span, nodes[span]))
            children = nodes[span]
        children.append(("run", run))
    return root


def _emit(parent: etree._Element, nodes: list, segment: Segment) -> None:
    for node in nodes:
        if node[0] == "run":
            marker = segment.slots[node[1].index].marker
            if marker is not None:
                parent.append(copy.deepcopy(marker))
            else:
                _append_text(parent, node[1].text)
        else:
            span = segment.spans[node[1]]
            if span.close is None:
                element = copy.deepcopy(span.open)
                parent.append(element)
                _emit(element, node[2], segment)
            else:
                parent.append(copy.deepcopy(span.open))
                _emit(parent, node[2], segment)
                parent.append(copy.deepcopy(span.close))


def _append_text(parent: etree._Element, text: str) -> None:
    if not text:
        return
    if len(parent):
        parent[-1].tail = (parent[-1].tail or "") + text
    else:
        parent.text = (parent.text or "") + text
