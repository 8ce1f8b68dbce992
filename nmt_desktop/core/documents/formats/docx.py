"""Word documents (.docx): the WordprocessingML of the body, headers, footers, footnotes and endnotes
edited with lxml inside the zip (ooxml_package.py); every other member is copied byte for byte, in its
order and compression.

Not python-docx: it re-serialises every part it models on save. Blocks, in order: the core title and
subject, then per part (body, each header and footer in section order, footnotes, endnotes) every w:p in
document order (table cells and nested tables, text boxes as their own paragraphs) and every image's alt
text (wp:docPr descr/title). A run is a w:r with text (w:t); a paragraph is cut at its tabs and line
breaks (w:tab, w:br, w:cr) into segments, each a block (word_segments.py), so neither reaches the model;
plain text that a footnote reference, image or field follows is a look of its own, and the marker moves
with it, so it lands after the translation of the words it followed.
Runs of fields (w:fldSimple, w:fldChar ... w:instrText ...) are left out, so a field's instruction and
result stay verbatim and it keeps working; a run without text (a w:footnoteReference, a drawing) is no
run and stays where it is; deleted text (w:delText in w:del) is not text and stays as it was. Runs inside
a w:hyperlink (r:id or w:anchor kept), a tracked insertion (w:ins) or a smart tag move with it. A text box
(w:txbxContent) in mc:AlternateContent is read in its mc:Choice and written to the paragraphs of its
mc:Fallback too, so old readers see the same translation. A superscript or subscript (w:vertAlign), a
link's run or a tracked insertion that the translation leaves empty keeps its source text, so a marker or
a link never vanishes. Comments (word/comments.xml) are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, Run, TranslatedBlock
from nmt_desktop.core.documents.formats.ooxml_package import (
    R_NS,
    OoxmlDocument,
    Package,
    core_slots,
    mark_core_language,
)
from nmt_desktop.core.documents.formats.ooxml_runs import RunSlot, is_monospace, style_key
from nmt_desktop.core.documents.formats.word_segments import ParagraphWriter, read_paragraph, segment_blocks
from nmt_desktop.core.documents.formats.xml_parts import Loaded, Slot

WHAT = "a Word document"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_ID = f"{{{R_NS}}}id"
WP_DOCPR = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}docPr"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


def w(tag: str) -> str:
    return f"{{{W}}}{tag}"


SEPARATORS = {w("tab"): "\t", w("br"): "\n", w("cr"): "\n"}
# Paragraph children whose runs belong to the paragraph (w:del holds only deleted text, w:fldSimple a field).
RUN_CONTAINERS = {w(t) for t in ("hyperlink", "ins", "moveTo", "smartTag", "sdt", "sdtContent", "customXml")}
RPR_NOISE = [w(t) for t in ("lang", "noProof", "rtl", "webHidden", "specVanish")]
CODE_STYLE = re.compile(r"code|verbatim|preformatted", re.IGNORECASE)

Writer = Callable[[TranslatedBlock], None]


@dataclass
class _Part:
    """A text-bearing part: its member name, the label blocks are named by, its parsed root."""
    label: str
    name: str
    root: etree._Element


def _xml_parts(package: Package, main: str) -> list[_Part]:
    """The body, then headers and footers in section order (each once), footnotes and endnotes."""
    parts = [_Part("body", main, package.root(main))]
    seen: set[str] = {main}
    counts = {"header": 0, "footer": 0}
    rels = package.rels(main)
    for ref in package.root(main).iter(w("headerReference"), w("footerReference")):
        rel = rels.get(ref.get(R_ID) or "")
        if rel is None or rel.target is None or rel.target in seen:
            continue
        seen.add(rel.target)
        kind = "header" if ref.tag == w("headerReference") else "footer"
        counts[kind] += 1
        parts.append(_Part(f"{kind} {counts[kind]}", rel.target, package.root(rel.target)))
    for kind in ("footnotes", "endnotes"):
        for name in package.related(main, kind):
            if name not in seen:
                seen.add(name)
                parts.append(_Part(kind, name, package.root(name)))
    return parts


def _in_fallback(element: etree._Element) -> bool:
    return any(a.tag == f"{{{MC}}}Fallback" for a in element.iterancestors())


def _field_runs(root: etree._Element) -> set[etree._Element]:
    """Runs of fields: inside w:fldSimple, or from a w:fldChar begin to its end (instruction and result)."""
    runs: set[etree._Element] = set()
    depth = 0
    for run in root.iter(w("r")):
        chars = [c.get(w("fldCharType")) for c in run.iter(w("fldChar"))]
        if depth or chars or any(a.tag == w("fldSimple") for a in run.iterancestors()):
            runs.add(run)
        depth = max(0, depth + chars.count("begin") - chars.count("end"))
    return runs


def _mirrors(root: etree._Element) -> dict[etree._Element, etree._Element]:
    """Text box paragraphs of mc:Choice -> the same paragraphs in mc:Fallback (VML for old readers)."""
    pairs: dict[etree._Element, etree._Element] = {}
    for alternate in root.iter(f"{{{MC}}}AlternateContent"):
        choice, fallback = alternate.find(f"{{{MC}}}Choice"), alternate.find(f"{{{MC}}}Fallback")
        if choice is None or fallback is None:
            continue
        ours, theirs = list(choice.iter(w("p"))), list(fallback.iter(w("p")))
        if len(ours) == len(theirs):
            pairs.update(zip(ours, theirs))
    return pairs


def run_text(run: etree._Element) -> str:
    return "".join((c.text or "") if c.tag == w("t") else SEPARATORS.get(c.tag, "") for c in run)


def set_run_text(run: etree._Element, text: str) -> None:
    """Put `text` into the run's w:t elements (the first of each stretch between tabs and breaks gets it,
    the rest are emptied); tabs and breaks stay unless the text no longer has them where they were."""
    seps = [c for c in run if c.tag in SEPARATORS]
    stretches: list[list[etree._Element]] = [[]]
    for child in run:
        if child.tag in SEPARATORS:
            stretches.append([])
        elif child.tag == w("t"):
            stretches[-1].append(child)
    if re.findall(r"[\t\n]", text) == [SEPARATORS[s.tag] for s in seps]:
        pieces = re.split(r"[\t\n]", text)
        for k, (stretch, piece) in enumerate(zip(stretches, pieces)):
            _fill(run, stretch, piece, seps[k - 1] if k else None)
    else:
        _fill(run, [t for s in stretches for t in s], re.sub(r"[\t\n]", " ", text), None)


def _fill(run: etree._Element, texts: list[etree._Element], piece: str, after: etree._Element | None) -> None:
    if not texts:
        if not piece:
            return
        new = run.makeelement(w("t"), {})
        if after is not None:
            after.addnext(new)
        else:
            run.insert(1 if len(run) and run[0].tag == w("rPr") else 0, new)
        texts = [new]
    if "".join(t.text or "" for t in texts) == piece:  # an unchanged text stays as the source wrote it
        return
    texts[0].text = piece
    if piece != piece.strip():
        texts[0].set(XML_SPACE, "preserve")
    for extra in texts[1:]:
        extra.text = ""


@dataclass
class _Reader:
    """Reads one document's blocks as slots whose writers put a translation back into the parsed parts."""
    package: Package
    language: str | None = None
    slots: list[Slot] = field(default_factory=list)
    code_styles: set[str] = field(default_factory=set)

    def read(self) -> None:
        main = self.package.main_part("word/document.xml")
        if etree.QName(self.package.root(main)).localname != "document":
            raise self.package.refuse(f"{main} is not a WordprocessingML document")
        for styles in self.package.related(main, "styles")[:1]:
            root = self.package.root(styles)
            default = root.find(f"{w('docDefaults')}/{w('rPrDefault')}/{w('rPr')}/{w('lang')}")
            if default is not None and self.language:
                default.set(w("val"), self.language)
            for style in root.iter(w("style")):
                sid, name = style.get(w("styleId")) or "", style.find(w("name"))
                if sid and CODE_STYLE.search(f"{sid} {name.get(w('val')) if name is not None else ''}"):
                    self.code_styles.add(sid)
        self.slots += core_slots(self.package, "document")
        mark_core_language(self.package, self.language)
        for part in _xml_parts(self.package, main):
            self._read_part(part)

    def _add(self, runs: list[Run], where: str, writer: Writer, verbatim: bool = False, order: int = 1) -> None:
        self.slots.append(Slot(Block(runs, where, verbatim), writer, order))

    def _read_part(self, part: _Part) -> None:
        fields, mirrors = _field_runs(part.root), _mirrors(part.root)
        number = 0
        for element in part.root.iter(w("p"), WP_DOCPR):
            if _in_fallback(element):
                continue
            if element.tag == WP_DOCPR:
                for attr in ("descr", "title"):
                    if (element.get(attr) or "").strip():
                        self._add([Run(element.get(attr))], f"{part.label}, image {element.get('id')} alt text",
                                  lambda t, e=element, a=attr: e.set(a, "".join(r.text for r in t)), order=0)
                continue
            number += 1
            paragraph = read_paragraph(element, self._slots(element, fields))
            blocks, marked = segment_blocks(paragraph, lambda slot: self._look(slot, part),
                                            f"{part.label}, {_place(element, number)}")
            if not blocks:
                continue
            paragraphs = [paragraph]
            if element in mirrors:
                twin = read_paragraph(mirrors[element], self._slots(mirrors[element], _field_runs(mirrors[element])))
                if twin.texts() == paragraph.texts():
                    paragraphs.append(twin)
            style = element.find(f"{w('pPr')}/{w('pStyle')}")
            verbatim = (style is not None and style.get(w("val")) in self.code_styles
                        and not all(_set_in_proportional_font(p.slot.run) for s in paragraph.segments for p in s))
            language = self.language
            writer = ParagraphWriter(paragraphs, blocks, marked, set_run_text,
                                     lambda run: _set_language(run, language) if language else None)
            for k, block in blocks.items():
                block.verbatim = verbatim
                self.slots.append(Slot(block, writer.writer(k)))

    def _slots(self, paragraph: etree._Element, fields: set[etree._Element]) -> list[RunSlot]:
        slots: list[RunSlot] = []

        def walk(parent: etree._Element, unit: etree._Element | None) -> None:
            for child in parent:
                if child.tag == w("r"):
                    if child not in fields and any(c.tag == w("t") or c.tag in SEPARATORS for c in child):
                        slots.append(RunSlot(child, unit if unit is not None else child))
                elif child.tag in RUN_CONTAINERS:
                    walk(child, unit if unit is not None else child)

        walk(paragraph, None)
        return slots

    def _look(self, slot: RunSlot, part: _Part) -> tuple[object, bool, bool]:
        """A run's style key, whether its style or font makes it code (verbatim), and whether it must
        never come back empty (a superscript or subscript, a link, a tracked insertion)."""
        props = slot.run.find(w("rPr"))
        key: object = style_key(props, RPR_NOISE)
        link = slot.unit if slot.unit.tag == w("hyperlink") else None
        if link is not None:
            rel = self.package.rels(part.name).get(link.get(R_ID) or "")
            key = ("link", rel.ref if rel is not None else f"#{link.get(w('anchor'))}", key)
        fonts = props.find(w("rFonts")) if props is not None else None
        char_style = props.find(w("rStyle")) if props is not None else None
        align = props.find(w("vertAlign")) if props is not None else None
        verbatim = ((fonts is not None and any(is_monospace(v) for v in fonts.attrib.values()))
                    or (char_style is not None and char_style.get(w("val")) in self.code_styles))
        marked = (link is not None or (align is not None and align.get(w("val")) in ("superscript", "subscript"))
                  or any(a.tag == w("ins") for a in slot.run.iterancestors()))
        return key, verbatim, marked


def _set_in_proportional_font(run: etree._Element) -> bool:
    """Whether the run sets its own font and it is no code font: Word's "HTML Preformatted" paragraphs of
    pasted web pages often hold prose set in Times New Roman, which is text, not code."""
    fonts = run.find(f"{w('rPr')}/{w('rFonts')}")
    names = [fonts.get(w(a)) for a in ("ascii", "hAnsi")] if fonts is not None else []
    return any(names) and not any(is_monospace(name) for name in names if name)


# w:rPr children that come after w:lang in the schema's order
AFTER_LANG = {w(t) for t in ("eastAsianLayout", "specVanish", "oMath", "rPrChange")}


def _set_language(run: etree._Element, language: str) -> None:
    """The run's w:lang w:val (its Latin-script language; eastAsia and bidi kept) set to `language`."""
    props = run.find(w("rPr"))
    if props is None:
        props = run.makeelement(w("rPr"), {})
        run.insert(0, props)
    lang = props.find(w("lang"))
    if lang is None:
        lang = props.makeelement(w("lang"), {})
        after = next((c for c in props if c.tag in AFTER_LANG), None)
        if after is not None:
            after.addprevious(lang)
        else:
            props.append(lang)
    lang.set(w("val"), language)


def _load(path: Path, language: str | None = None) -> Loaded:
    reader = _Reader(Package.open(path, WHAT), language)
    reader.read()
    return reader.slots, reader.package.save


def open_document(path: Path) -> OoxmlDocument:
    return OoxmlDocument(Path(path), _load)


def _place(paragraph: etree._Element, number: int) -> str:
    """Where a paragraph is, for the preview: "table 2, row 1, cell 3" inside a table (the outermost
    table counted in its part), else "paragraph N"."""
    cell = next(paragraph.iterancestors(w("tc")), None)
    if cell is None:
        return f"paragraph {number}"
    row = cell.getparent()
    table = row.getparent()
    while next(table.iterancestors(w("tbl")), None) is not None:
        table = next(table.iterancestors(w("tbl")))
    body = table.getparent()
    tables = [t for t in body.iter(w("tbl")) if next(t.iterancestors(w("tbl")), None) is None]
    t = tables.index(table) + 1 if table in tables else 0
    r = list(row.getparent().iterchildren(w("tr"))).index(row) + 1
    c = list(row.iterchildren(w("tc"))).index(cell) + 1
    return f"table {t}, row {r}, cell {c}"
