"""Word documents (.docx) through python-docx, editing the WordprocessingML it parsed.

Blocks, in order: the core title and subject, then per part (body, each header and footer, footnotes,
endnotes) every w:p in document order (table cells and nested tables, text boxes as their own
paragraphs) and every image's alt text (wp:docPr descr/title). A run is a w:r with text (w:t, with
w:tab as "\t" and w:br/w:cr as "\n"); runs of fields (w:fldSimple, w:fldChar ... w:instrText ...) are
left out so the fields keep working, and deleted text (w:delText) is not text. python-docx has no API
for footnotes and endnotes: their parts are parsed here and written back as the part's blob.
`save` opens the source again and writes only texts and run order, so images, styles, relationships
and numbering are copied as they were.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.part import Part, XmlPart
from lxml import etree

from nmt_desktop.core.documents.blocks import Block, DocumentError, Run, TranslatedBlock, write_blocks
from nmt_desktop.core.documents.formats.ooxml_runs import RunSlot, clipped_property, is_monospace, style_key, write_runs

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
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
    """An XML part of the package and how its edited tree gets back into the file."""
    label: str
    part: Part
    root: etree._Element
    finish: Callable[[], None] = lambda: None


def _xml_parts(document: docx.document.Document) -> list[_Part]:
    """The body, then headers and footers in section order (each once), footnotes and endnotes."""
    main = document.part
    parts = [_Part("body", main, main.element)]
    seen: set[int] = set()
    counts = {"header": 0, "footer": 0}
    for ref in main.element.iter(w("headerReference"), w("footerReference")):
        related = main.related_parts.get(ref.get(R_ID))
        if related is None or id(related) in seen or not isinstance(related, XmlPart):
            continue
        seen.add(id(related))
        kind = "header" if ref.tag == w("headerReference") else "footer"
        counts[kind] += 1
        parts.append(_Part(f"{kind} {counts[kind]}", related, related.element))
    for reltype, label in ((RT.FOOTNOTES, "footnotes"), (RT.ENDNOTES, "endnotes")):
        for rel in main.rels.values():
            if rel.reltype == reltype and not rel.is_external:
                parts.append(_blob_part(label, rel.target_part))
    return parts


def _blob_part(label: str, part: Part) -> _Part:
    """A part python-docx keeps as bytes: parse it (no entities, no network) and write it back on save."""
    if isinstance(part, XmlPart):
        return _Part(label, part, part.element)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    root = etree.fromstring(part.blob, parser)

    def finish() -> None:
        part._blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)

    return _Part(label, part, root, finish)


def _has_core_properties(package: object) -> bool:
    try:
        package.part_related_by(RT.CORE_PROPERTIES)
    except KeyError:
        return False
    return True


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
    texts[0].text = piece
    if piece != piece.strip():
        texts[0].set(XML_SPACE, "preserve")
    for extra in texts[1:]:
        extra.text = ""


@dataclass
class _Reader:
    """Reads one document's blocks, with a writer per block that puts a translation back."""
    document: docx.document.Document
    blocks: list[Block] = field(default_factory=list)
    writers: list[Writer] = field(default_factory=list)
    finishers: list[Callable[[], None]] = field(default_factory=list)
    code_styles: set[str] = field(default_factory=set)

    def read(self) -> None:
        # Parts are looked up, not asked for: python-docx adds default styles and core properties parts
        # to a package that has none when they are asked for.
        main = self.document.part
        for styles in (rel.target_part for rel in main.rels.values() if rel.reltype == RT.STYLES):
            for style in _blob_part("styles", styles).root.iter(w("style")):
                sid, name = style.get(w("styleId")) or "", style.find(w("name"))
                if sid and CODE_STYLE.search(f"{sid} {name.get(w('val')) if name is not None else ''}"):
                    self.code_styles.add(sid)
        if _has_core_properties(main.package):
            self._read_core_properties()
        for part in _xml_parts(self.document):
            self._read_part(part)

    def _read_core_properties(self) -> None:
        props = self.document.core_properties
        for name in ("title", "subject"):
            if getattr(props, name).strip():
                self._add([Run(getattr(props, name))], f"document {name}",
                          lambda t, name=name: setattr(props, name, clipped_property("".join(r.text for r in t))))

    def _add(self, runs: list[Run], where: str, writer: Writer, verbatim: bool = False) -> None:
        self.blocks.append(Block(runs, where, verbatim))
        self.writers.append(writer)

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
                                  lambda t, e=element, a=attr: e.set(a, "".join(r.text for r in t)))
                continue
            number += 1
            slots = self._slots(element, fields)
            runs = [self._run(slot, part.part) for slot in slots]
            if not "".join(r.text for r in runs).strip():
                continue
            targets = [(element, slots)]
            if element in mirrors:
                twin = self._slots(mirrors[element], _field_runs(mirrors[element]))
                if [run_text(s.run) for s in twin] == [r.text for r in runs]:
                    targets.append((mirrors[element], twin))
            style = element.find(f"{w('pPr')}/{w('pStyle')}")
            verbatim = style is not None and style.get(w("val")) in self.code_styles
            self._add(runs, f"{part.label}, {_place(element, number)}", _para_writer(targets), verbatim)
        self.finishers.append(part.finish)

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

    def _run(self, slot: RunSlot, part: Part) -> Run:
        text = run_text(slot.run)
        props = slot.run.find(w("rPr"))
        key: object = style_key(props, RPR_NOISE)
        link = slot.unit if slot.unit.tag == w("hyperlink") else None
        if link is not None:
            rid = link.get(R_ID)
            target = part.rels[rid].target_ref if rid in part.rels else f"#{link.get(w('anchor'))}"
            key = ("link", target, key)
        fonts = props.find(w("rFonts")) if props is not None else None
        char_style = props.find(w("rStyle")) if props is not None else None
        verbatim = (not text.strip("\t\n")
                    or (fonts is not None and any(is_monospace(v) for v in fonts.attrib.values()))
                    or (char_style is not None and char_style.get(w("val")) in self.code_styles))
        return Run(text, key, verbatim)


def _para_writer(targets: list[tuple[etree._Element, list[RunSlot]]]) -> Writer:
    def write(translated: TranslatedBlock) -> None:
        for _, slots in targets:
            write_runs(slots, translated, set_run_text)
    return write


def _load(path: Path) -> _Reader:
    try:
        document = docx.Document(str(path))
    except Exception as error:  # python-docx raises KeyError, ValueError, zipfile and lxml errors alike
        raise DocumentError(f"{path.name} cannot be read as a Word document: {error}") from error
    reader = _Reader(document)
    try:
        reader.read()
    except etree.XMLSyntaxError as error:
        raise DocumentError(f"{path.name} cannot be read as a Word document: {error}") from error
    return reader


class WordDocument:
    """An open .docx: its blocks; `save` re-reads the source so the open copy is never modified."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.blocks = _load(path).blocks

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        reader = _load(self.path)
        write_blocks(self.path.name, reader.blocks, reader.writers, translated)
        for finish in reader.finishers:
            finish()
        reader.document.save(str(path))


def open_document(path: Path) -> WordDocument:
    return WordDocument(Path(path))


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
