"""A text of a request as blocks for the document pipeline, and the answer back from their results.

`format=text`: each line is a block (the models read single sentences; line breaks come back where they
were). `format=html`: the fragment is parsed by core/documents/formats/html.py's reader inside a <div>,
so a <b> or <a> inside a sentence lands on the translation's words aligned to it (inline_transfer.py),
<code> stays verbatim, alt and title texts are translated, and the fragment is written back the same way.
A page the reader cannot parse is answered in one sentence (400)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from nmt_desktop.core.documents.blocks import Block, Run

if TYPE_CHECKING:
    from nmt_desktop.core.decoding.results import Translation
    from nmt_desktop.core.documents.translate_document import BlockResult


@dataclass
class Segment:
    """One text of a request: its blocks and how their results become the answer's text."""
    source: str
    blocks: list[Block]
    assemble: Callable[[list["BlockResult"]], str]
    characters: int = field(init=False)

    def __post_init__(self) -> None:
        self.characters = len(self.source)


def text_segment(text: str) -> Segment:
    lines = text.split("\n")
    blocks = [Block([Run(line)], f"line {n}") for n, line in enumerate(lines, 1)]
    return Segment(text, blocks, lambda results: "\n".join(r.target for r in results))


def html_segment(text: str) -> Segment:
    """The fragment's blocks; its answer is the fragment with every block's translation written in."""
    import lxml.html
    from lxml import etree

    from nmt_desktop.core.documents.formats.html import html_slots
    from nmt_desktop.server.errors import ApiError

    def parsed() -> etree._Element:
        try:
            return lxml.html.fragment_fromstring(text, create_parent="div")
        except (etree.ParserError, etree.XMLSyntaxError, ValueError) as exc:
            raise ApiError(400, f"Invalid request: q is not HTML the server can read ({exc})") from None

    if not text.strip():
        return Segment(text, [], lambda results: text)
    root = parsed()
    blocks = [slot.block for slot in html_slots(root)]

    def assemble(results: list["BlockResult"]) -> str:
        fresh = parsed()  # written into a fresh parse, as the document adapters do
        for slot, result in sorted(zip(html_slots(fresh), results), key=lambda pair: pair[0].order):
            slot.write(result.runs)
        return _text(fresh.text) + "".join(etree.tostring(child, encoding="unicode", method="html") for child in fresh)

    return Segment(text, blocks, assemble)


def _text(text: str | None) -> str:
    from html import escape

    return escape(text, quote=False) if text else ""


def sentences(results: list["BlockResult"]) -> list["Translation"]:
    """The sentence translations behind a segment's blocks, in reading order (trust, alignment, alternatives)."""
    return [s for r in results for s in r.sentences]
