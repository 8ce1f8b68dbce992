"""What the lxml-based adapters (html, odt, epub) share besides inline runs: blocks as slots in parsed
XML, a document that re-reads its source on every save, safe parsing, and zip packages rewritten member
by member (only the parts holding text are re-serialised; every other member is copied as it was)."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from nmt_desktop.core.documents.blocks import (
    Block,
    DocumentError,
    Run,
    TranslatedBlock,
    check_translated,
)
from nmt_desktop.core.documents.formats.inline_tree import InlineSpan


@dataclass
class Slot:
    """A block and how to write its translation into the parsed tree it was read from. Slots with a lower
    `order` are written first: attributes before inline spans, whose write copies chain attributes."""
    block: Block
    write: Callable[[TranslatedBlock], None]
    order: int = 1


def span_slots(span: InlineSpan, where: str) -> list[Slot]:
    """A stretch of inline content as slots, one per segment with text (inline_tree.py: a tab or a line
    break ends one); the stretch is written when all of them are."""
    blocks = span.segment_blocks(where)
    expected = {k for k, _block in blocks}
    return [Slot(block, lambda t, k=k: span.write_segment(k, t, expected)) for k, block in blocks]


def text_slot(el: etree._Element, where: str) -> Slot:
    """An element whose whole content is one plain text (dc:title, an alt text, an NCX label)."""
    def write(t: TranslatedBlock) -> None:
        el.text = "".join(r.text for r in t)
    return Slot(Block([Run(el.text or "")], where), write, order=0)


def attr_slot(el: etree._Element, attr: str, where: str) -> Slot:
    def write(t: TranslatedBlock) -> None:
        el.set(attr, "".join(r.text for r in t))
    return Slot(Block([Run(el.get(attr, ""))], where), write, order=0)


# A loaded file: its slots in reading order, and how to serialise it once they are written (with the
# translation's language, or None to leave the source's language marks as they are).
Loaded = tuple[list[Slot], Callable[[Path, "str | None"], None]]


class SlotDocument:
    """A Document over a loader. save() loads the source again and writes into that fresh copy, so a
    document can be saved any number of times and the source file is only ever read. `target_language`
    (set by translate_document from the model, e.g. "de"): what the copy says its language is (HTML lang,
    EPUB dc:language, ODF fo:language and dc:language); None keeps the source's."""

    def __init__(self, path: Path, load: Callable[[Path], Loaded]):
        self.path, self._load = path, load
        self.blocks: list[Block] = [s.block for s in load(path)[0]]
        self.target_language: str | None = None

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        slots, serialise = self._load(self.path)
        if [s.block for s in slots] != self.blocks:
            raise DocumentError(f"{self.path.name} changed on disk since it was opened")
        if len(translated) != len(slots):
            raise DocumentError(f"{self.path.name}: got {len(translated)} translated blocks for "
                                f"{len(slots)} blocks")
        for slot, t in zip(slots, translated):
            try:
                check_translated(slot.block, t)
            except ValueError as e:
                raise DocumentError(f"{self.path.name}: {e}") from None
        for i in sorted(range(len(slots)), key=lambda i: slots[i].order):
            slots[i].write(translated[i])
        serialise(Path(path), self.target_language)


_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, remove_blank_text=False)


def parse_xml(data: bytes, name: str) -> etree._ElementTree:
    """A part's XML, entities unresolved and nothing fetched; DocumentError (one sentence) if malformed."""
    try:
        return etree.fromstring(data, _PARSER).getroottree()
    except etree.XMLSyntaxError as e:
        raise DocumentError(f"{name} is not well-formed XML ({e.msg})") from None


_DECLARATION = re.compile(rb"\s*<\?xml[^>]*\?>\s*")


def serialise_xml(tree: etree._ElementTree, original: bytes) -> bytes:
    """The tree in the source's encoding, after the source's own XML declaration (or none) and doctype."""
    encoding = tree.docinfo.encoding or "UTF-8"
    declared = _DECLARATION.match(original)
    if declared is None and original.lstrip().startswith(b"<?xml"):  # not ASCII-compatible (UTF-16)
        return etree.tostring(tree, encoding=encoding, xml_declaration=True)
    body = etree.tostring(tree, encoding=encoding, xml_declaration=False)
    return (declared.group(0) if declared else b"") + body


def read_zip(path: Path, what: str) -> dict[str, bytes]:
    """Every member of a zip package by name; DocumentError if it is not a readable zip."""
    try:
        with zipfile.ZipFile(path) as z:
            return {info.filename: z.read(info) for info in z.infolist()}
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError) as e:
        raise DocumentError(f"{path.name} is not a readable {what} zip package ({e})") from None


def member(members: dict[str, bytes], name: str, path: Path, what: str) -> bytes:
    if name not in members:
        raise DocumentError(f"{path.name} is not a valid {what}: it has no {name}")
    return members[name]


def write_zip(source: Path, target: Path, replaced: dict[str, bytes]) -> None:
    """Copy `source` to `target` member by member, `replaced` members with new bytes, all others with the
    bytes they had; `mimetype` first and stored (ODF and EPUB readers sniff it at a fixed offset)."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        infos = sorted(zin.infolist(), key=lambda i: i.filename != "mimetype")
        for info in infos:
            data = replaced.get(info.filename)
            if data is None:
                data = zin.read(info)
            if info.filename == "mimetype":
                info.compress_type = zipfile.ZIP_STORED
            zout.writestr(info, data)


XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def mark_language(root: etree._Element, language: str, attributes: Sequence[str] = ("lang", XML_LANG)) -> None:
    """The root element's language attributes that are set (HTML lang, XHTML xml:lang) say `language`."""
    for attr in attributes:
        if root.get(attr) is not None:
            root.set(attr, language)
