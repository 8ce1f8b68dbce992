"""OpenDocument text (.odt): content.xml, styles.xml (master pages' headers and footers) and meta.xml's
dc:title edited with lxml inside the zip; every other member is copied byte-identical.

Not odfpy: it re-serialises the whole package (every part, its own manifest), which is more change than
a translation should make. Blocks are text:p and text:h wherever they are (tables, lists, text boxes,
notes); a footnote or a frame inside a paragraph is moved whole and its own paragraphs are blocks of
their own; text:span and text:a are run styles; fields (page number, dates) and spans or paragraphs in
a code style ("Source Text", "Preformatted Text") are verbatim. svg:title/svg:desc (alt text) are blocks.
A translation's meta.xml dc:language and the styles' fo:language (with fo:country) say the target language.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import etree

from nmt_desktop.core.documents.formats.inline_tree import (
    InlineRules,
    InlineSpan,
    Kind,
    append_text,
)
from nmt_desktop.core.documents.formats.xml_parts import (
    Loaded,
    Slot,
    SlotDocument,
    member,
    parse_xml,
    read_zip,
    serialise_xml,
    span_slots,
    text_slot,
    write_zip,
)

ODF = "urn:oasis:names:tc:opendocument:xmlns:"
TEXT, STYLE, DRAW, TABLE, OFFICE = (ODF + n for n in ("text:1.0", "style:1.0", "drawing:1.0", "table:1.0",
                                                     "office:1.0"))
SVG = ODF + "svg-compatible:1.0"
FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
COUNTRIES = {"de": "DE", "fr": "FR", "es": "ES", "it": "IT", "nl": "NL", "pt": "PT", "pl": "PL", "sv": "SE",
             "da": "DK", "fi": "FI", "cs": "CZ", "ru": "RU", "uk": "UA", "ja": "JP", "zh": "CN", "en": "GB"}
DC = "http://purl.org/dc/elements/1.1/"
CHAIN = {f"{{{TEXT}}}span", f"{{{TEXT}}}a", f"{{{TEXT}}}meta", f"{{{TEXT}}}ruby", f"{{{TEXT}}}ruby-base"}
BREAKS = {f"{{{TEXT}}}tab", f"{{{TEXT}}}line-break"}  # each ends a segment (inline_tree.py), outside a span
ATOMS = {f"{{{TEXT}}}note", f"{{{TEXT}}}soft-page-break",
         f"{{{OFFICE}}}annotation", f"{{{OFFICE}}}annotation-end"}
CODE_STYLES = {"source_20_text", "source text", "code", "teletype", "preformatted_20_text",
               "preformatted text", "example"}
_STYLE_NAME = f"{{{TEXT}}}style-name"


def _chars(el: etree._Element) -> str:
    """The characters an element stands for: a text:s its spaces; a tab (read as text only inside a span,
    inline_tree.py) "\t"; a line break nothing (inside a span it is moved with its run)."""
    if el.tag == f"{{{TEXT}}}tab":
        return "\t"
    if el.tag == f"{{{TEXT}}}line-break":
        return ""
    count = el.get(f"{{{TEXT}}}c") or "1"
    return " " * (int(count) if count.isdigit() else 1)


def _write_text(parent: etree._Element, text: str) -> None:
    """Text back as ODF stores it: tabs as text:tab, runs of spaces as a space and a text:s."""
    for piece in re.split(r"(\t|  +)", text):
        if piece == "\t":
            etree.SubElement(parent, f"{{{TEXT}}}tab")
        elif piece.startswith("  "):
            append_text(parent, " ")
            s = etree.SubElement(parent, f"{{{TEXT}}}s")
            if len(piece) > 2:
                s.set(f"{{{TEXT}}}c", str(len(piece) - 1))
        else:
            append_text(parent, piece)


class _Styles:
    """Which styles are code: by name, or through their parent (an automatic P1 over Preformatted Text)."""

    def __init__(self, *roots: etree._Element):
        self.parent: dict[str, str] = {}
        for root in roots:
            for st in root.iter(f"{{{STYLE}}}style"):
                self.parent[st.get(f"{{{STYLE}}}name", "")] = st.get(f"{{{STYLE}}}parent-style-name", "")

    def is_code(self, name: str | None) -> bool:
        for _ in range(10):
            if not name:
                return False
            if name.lower() in CODE_STYLES:
                return True
            name = self.parent.get(name)
        return False


def _rules(styles: _Styles) -> InlineRules:
    def kind(el: etree._Element) -> Kind:
        if el.tag == f"{{{TEXT}}}s":
            return "chars"
        if el.tag in BREAKS:
            return "break"
        if el.tag in ATOMS or etree.QName(el).namespace == DRAW:
            return "atom"
        if el.tag in CHAIN:
            return "verbatim" if styles.is_code(el.get(_STYLE_NAME)) else "chain"
        return "verbatim"  # a field (page number, date, reference): its text is its value
    return InlineRules(kind, _chars, lambda t: re.sub(r"[ \t\r\n]+", " ", t), _write_text)


def _where(el: etree._Element, part: str, n: int) -> str:
    for anc in el.iterancestors():
        name = etree.QName(anc).localname
        if anc.tag == f"{{{TEXT}}}note":
            return f"{anc.get(f'{{{TEXT}}}note-class', 'foot')}note {n}"
        if anc.tag == f"{{{DRAW}}}text-box":
            return f"text box, paragraph {n}"
        if anc.tag == f"{{{TABLE}}}table-cell":
            return f"table cell, paragraph {n}"
        if etree.QName(anc).namespace == STYLE and name.split("-")[0] in ("header", "footer"):
            page = anc.getparent().get(f"{{{STYLE}}}name", "")
            return f"{page} page {name.replace('-', ' ')}, paragraph {n}"
    return f"{part} paragraph {n}"


def _part_slots(root: etree._Element, rules: InlineRules, styles: _Styles, part: str) -> list[Slot]:
    slots: list[Slot] = []
    n = 0
    wanted = (f"{{{TEXT}}}p", f"{{{TEXT}}}h", f"{{{SVG}}}title", f"{{{SVG}}}desc")
    for el in root.iter(*wanted):
        if any(a.tag == f"{{{TEXT}}}tracked-changes" for a in el.iterancestors()):
            continue  # deleted text kept for change tracking: not part of the document's text
        if el.tag.startswith(f"{{{SVG}}}"):
            if (el.text or "").strip():
                slots.append(text_slot(el, f"{part} alt text ({etree.QName(el).localname})"))
            continue
        span = InlineSpan(el, None, list(el), rules)
        if span.blank:
            continue
        n += 1
        for slot in span_slots(span, _where(el, part, n)):
            if styles.is_code(el.get(_STYLE_NAME)):
                slot.block.verbatim = True  # a code paragraph: listed, written back as it is
                slot.write = lambda t: None
            slots.append(slot)
    return slots


def _load(path: Path) -> Loaded:
    members = read_zip(path, "OpenDocument")
    content = parse_xml(member(members, "content.xml", path, "OpenDocument text"), f"{path.name} content.xml")
    trees = {"content.xml": content}
    for name in ("styles.xml", "meta.xml"):
        if name in members:
            trees[name] = parse_xml(members[name], f"{path.name} {name}")
    styles = _Styles(*(t.getroot() for t in trees.values()))
    rules = _rules(styles)
    slots: list[Slot] = []
    if "meta.xml" in trees:
        for title in trees["meta.xml"].getroot().iter(f"{{{DC}}}title"):
            if (title.text or "").strip():
                slots.append(text_slot(title, "document title"))
    if "styles.xml" in trees:
        for masters in trees["styles.xml"].getroot().iter(f"{{{OFFICE}}}master-styles"):
            slots += _part_slots(masters, rules, styles, "header/footer")
    for body in content.getroot().iter(f"{{{OFFICE}}}body"):
        slots += _part_slots(body, rules, styles, "body")

    def serialise(target: Path, language: str | None) -> None:
        if language:
            _mark_language(trees, language)
        write_zip(path, target, {name: serialise_xml(tree, members[name]) for name, tree in trees.items()})

    return slots, serialise


def _mark_language(trees: dict[str, etree._ElementTree], language: str) -> None:
    """The document says it is in `language`: meta.xml's dc:language and every fo:language the styles set
    (with its fo:country), except text marked as in no language (zxx: code, names)."""
    for tree in trees.values():
        for el in tree.getroot().iter():
            if el.tag == f"{{{DC}}}language":
                el.text = language
            current = el.get(f"{{{FO}}}language") if isinstance(el.tag, str) else None
            if current is not None and current != "zxx":
                el.set(f"{{{FO}}}language", language)
                if el.get(f"{{{FO}}}country") is not None:
                    el.set(f"{{{FO}}}country", COUNTRIES.get(language, "none"))


def open_document(path: Path) -> SlotDocument:
    return SlotDocument(Path(path), _load)
