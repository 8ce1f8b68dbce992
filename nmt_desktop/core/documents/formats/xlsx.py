"""Excel workbooks (.xlsx): the text of string cells, text boxes and printed headers and footers, edited
with lxml inside the zip (ooxml_package.py); every other member is copied byte-identical.

Not openpyxl: it reads a workbook into its own model and writes a whole new package from that model on
save, so whatever it does not model (shapes, text boxes, form controls, some chart, drawing and data
validation details, extension lists) is changed or lost. Here only the parts that hold the text are
parsed, and only those whose text changed are re-serialised: the shared strings (xl/sharedStrings.xml),
the worksheets (inline strings, headers and footers), the drawings with text boxes (xl/drawings/) and
docProps/core.xml (title, subject); images, charts, styles and every other member are copied as they
were, in their order and with their compression.

Blocks, in order: the workbook's title and subject, then per worksheet in the workbook's sheet order its
string cells row by row, its headers and footers (sheet_header.py: a block per &L/&C/&R section, no code
ever lost) and its drawings' text boxes (drawingml_text.py, as in PowerPoint). A shared string (`<si>`)
is one block, named after the first cell that uses it: a text in several cells is translated once and
every one of them shows the translation. An inline string (`<c t="inlineStr"><is>`) is a block of its
own; shared strings that no cell uses come last ("shared string N"). A plain `<t>` is one run; rich text
is one run per `<r>`, styled by its serialised `<rPr>` (a monospace font is verbatim). A cell with line
breaks ("\n" in a `<t>`, Alt+Enter) is a block per line with words ("Sheet!A1, line 2"): the model lost
every break handed to it, as text or as a verbatim run, so none is handed to it; the breaks are put back
between the translated lines, and a `<t>` holding one keeps xml:space="preserve". A superscript or
subscript run the translation leaves empty keeps its source text; phonetic guides (`<rPh>`) are not
text. Formulas (`<f>`), their cached results, numbers, dates and booleans are not text and stay as they are; a
translation that starts with "=" is still a string, not a formula. Sheet names are not translated
because formulas refer to them by name. Excel's `_xHHHH_` escapes are read as the characters they stand
for and written back for characters XML cannot hold.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, Run, TranslatedBlock
from nmt_desktop.core.documents.formats.drawingml_text import paragraph_slots
from nmt_desktop.core.documents.formats.ooxml_package import (
    OoxmlDocument,
    Package,
    Relationship,
    core_slots,
    mark_core_language,
)
from nmt_desktop.core.documents.formats.ooxml_runs import is_monospace, never_emptied, permute, style_key
from nmt_desktop.core.documents.formats.sheet_header import header_footer_slots
from nmt_desktop.core.documents.formats.xml_parts import Loaded, Slot

WHAT = "an Excel workbook"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"

_ESCAPED = re.compile(r"_x([0-9A-Fa-f]{4})_")
_LOOKS_ESCAPED = re.compile(r"_(?=x(?![dD][89a-fA-F])[0-9A-Fa-f]{4}_)")  # a literal "_x0041_" in a text
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CELL_REF = re.compile(r"([A-Za-z]{1,3})(\d*)$")


def _unescape(text: str) -> str:
    def char(m: re.Match[str]) -> str:
        code = int(m.group(1), 16)
        return m.group(0) if 0xD800 <= code <= 0xDFFF else chr(code)
    return _ESCAPED.sub(char, text)


def _escape(text: str) -> str:
    text = _LOOKS_ESCAPED.sub("_x005F_", text)
    return _NOT_XML.sub(lambda m: f"_x{ord(m.group()):04X}_", text)


def _sheets(workbook: etree._Element, rels: dict[str, Relationship],
            members: dict[str, bytes]) -> list[tuple[str, str]]:
    """(sheet name, member) of each worksheet in the workbook's order, then any worksheet it does not list."""
    ns = etree.QName(workbook).namespace
    sheets: list[tuple[str, str]] = []
    for sheet in workbook.iter(f"{{{ns}}}sheet"):
        rid = next((v for k, v in sheet.attrib.items() if k.startswith("{") and etree.QName(k).localname == "id"),
                   "")
        rel = rels.get(rid)
        if rel is not None and rel.is_kind("worksheet") and rel.target is not None:
            sheets.append((sheet.get("name") or rel.target, rel.target))
    listed = {target for _, target in sheets}
    sheets += [(posixpath.basename(name), name) for name in members
               if re.fullmatch(r"xl/worksheets/[^/]+\.xml", name) and name not in listed]
    return sheets


def _column_letters(number: int) -> str:
    letters = ""
    while number > 0:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _cells(sheet: etree._Element, ns: str) -> Iterator[tuple[etree._Element, str]]:
    """Each cell of a worksheet with its reference (A1), counted where the file leaves `r` out."""
    row_number = 0
    for row in sheet.iter(f"{{{ns}}}row"):
        r = row.get("r", "")
        row_number = int(r) if r.isdigit() else row_number + 1
        column = 0
        for cell in row.iterchildren(f"{{{ns}}}c"):
            ref = cell.get("r")
            letters = _CELL_REF.match(ref or "")
            if ref and letters:
                column = 0
                row_number = int(letters.group(2)) if letters.group(2) else row_number
                for ch in letters.group(1).upper():
                    column = column * 26 + ord(ch) - 64
            else:
                column += 1
                ref = f"{_column_letters(column)}{row_number}"
            yield cell, ref


def _items(string: etree._Element, ns: str) -> list[etree._Element]:
    """What holds a string item's (<si>, <is>) runs: its plain <t>, or its rich text <r>s."""
    return [el for el in string if el.tag in (f"{{{ns}}}t", f"{{{ns}}}r")]


def _text_element(item: etree._Element, ns: str) -> etree._Element | None:
    return item if item.tag == f"{{{ns}}}t" else item.find(f"{{{ns}}}t")


def _runs(item: etree._Element, ns: str) -> list[tuple[Run, bool]]:
    """An item's runs, a line break inside the cell ("\n" in its <t>) a verbatim run of its own so it
    stays where the words around it go; with each, whether it must never come back empty (a
    superscript or subscript: a marker)."""
    t = _text_element(item, ns)
    text = _unescape(t.text or "") if t is not None else ""
    style, verbatim, marked = None, False, False
    if item.tag == f"{{{ns}}}r":
        props = item.find(f"{{{ns}}}rPr")
        font = props.find(f"{{{ns}}}rFont") if props is not None else None
        align = props.find(f"{{{ns}}}vertAlign") if props is not None else None
        style, verbatim = style_key(props), font is not None and is_monospace(font.get("val"))
        marked = align is not None and align.get("val") in ("superscript", "subscript")
    pieces = [piece for piece in re.split(r"(\n)", text) if piece] or [""]
    return [(Run("\n", None, True), False) if piece == "\n" else (Run(piece, style, verbatim), marked)
            for piece in pieces]


def _set_text(item: etree._Element, text: str, ns: str) -> None:
    t = _text_element(item, ns)
    if t is None:
        t = etree.SubElement(item, f"{{{ns}}}t")
    if (t.text or "") != _escape(text):  # an unchanged text stays as the source wrote it
        t.text = _escape(text)
        if text != text.strip() or "\n" in text:
            t.set(XML_SPACE, "preserve")


@dataclass
class _String:
    """A string item (<si>, <is>) being written: its pieces (runs, a line break a piece of its own), which
    <t>/<r> holds each, and the translation's texts and order, put into the XML once every line is in."""
    items: list[etree._Element]
    ns: str
    owner: list[int]
    texts: list[str]
    order: list[int]
    waiting: int = 0

    def line_written(self) -> None:
        self.waiting -= 1
        if self.waiting:
            return
        sequence = [self.owner[i] for i in self.order]
        texts: dict[int, list[str]] = {}
        for i in self.order:
            texts.setdefault(self.owner[i], []).append(self.texts[i])
        for number, item in enumerate(self.items):
            _set_text(item, "".join(texts.get(number, [])), self.ns)
        runs_of = [n for k, n in enumerate(sequence) if k == 0 or sequence[k - 1] != n]
        if sorted(runs_of) == list(range(len(self.items))):  # else each <r> keeps its place, texts set
            permute(self.items, runs_of)


def _string_slots(string: etree._Element, ns: str, where: str) -> list[Slot]:
    """A string item as blocks, one per line of the cell with words: a line break (Alt+Enter) is never
    handed to the translator, so it cannot be lost, and each line is translated on its own. Each <t>/<r>
    gets the texts of its runs in the translation's order; the <r>s move into the order their runs
    come in when each one's runs stay together."""
    items = _items(string, ns)
    pieces = [(number, run, mark) for number, item in enumerate(items) for run, mark in _runs(item, ns)]
    state = _String(items, ns, [n for n, _, _ in pieces], [run.text for _, run, _ in pieces],
                    list(range(len(pieces))))
    lines: list[list[int]] = [[]]
    for index, (_, run, _) in enumerate(pieces):
        if run.text == "\n" and run.verbatim:
            lines.append([])
        else:
            lines[-1].append(index)
    lines = [line for line in lines if "".join(pieces[i][1].text for i in line).strip()]
    slots = []
    for k, line in enumerate(lines, 1):
        block = Block([pieces[i][1] for i in line], where if len(lines) == 1 else f"{where}, line {k}")
        marked = [pieces[i][2] for i in line]

        def write(translated: TranslatedBlock, block: Block = block, line: list[int] = line,
                  marked: list[bool] = marked) -> None:
            kept = never_emptied(block, translated, marked)
            for t in kept:
                state.texts[line[t.index]] = t.text
            state.order[line[0]: line[-1] + 1] = [line[t.index] for t in kept]
            state.line_written()
        slots.append(Slot(block, write))
    state.waiting = len(slots)
    return slots


def _load(path: Path, language: str | None = None) -> Loaded:
    package = Package.open(path, WHAT)
    members = package.members
    workbook_name = package.main_part("xl/workbook.xml")
    workbook = package.root(workbook_name)
    if etree.QName(workbook).localname != "workbook":
        raise package.refuse(f"{workbook_name} is not a workbook")
    workbook_rels = package.rels(workbook_name)
    slots = core_slots(package, "workbook")
    mark_core_language(package, language)

    shared: dict[int, list[Slot]] = {}
    for shared_name in package.related(workbook_name, "sharedStrings")[:1]:
        table = package.root(shared_name)
        ns = etree.QName(table).namespace
        for index, si in enumerate(table.iterchildren(f"{{{ns}}}si")):
            found = _string_slots(si, ns, f"shared string {index + 1}")
            if found:
                shared[index] = found

    for sheet_name, part in _sheets(workbook, workbook_rels, members):
        sheet = package.root(part)
        ns = etree.QName(sheet).namespace
        for cell, ref in _cells(sheet, ns):
            kind = cell.get("t")
            if kind == "s" and shared:
                value = cell.findtext(f"{{{ns}}}v") or ""
                found = shared.pop(int(value), []) if value.strip().isdigit() else []
                for slot in found:  # named after the first cell that shows it ("Sheet!A1, line 2")
                    line = slot.block.where.partition(", ")[2]
                    slot.block.where = f"{sheet_name}!{ref}" + (f", {line}" if line else "")
                slots += found
            elif kind == "inlineStr" and (string := cell.find(f"{{{ns}}}is")) is not None:
                slots += _string_slots(string, ns, f"{sheet_name}!{ref}")
        slots += header_footer_slots(sheet, sheet_name)
        for number, drawing in enumerate(package.related(part, "drawing"), 1):
            slots += paragraph_slots(package, drawing, f"{sheet_name} drawing {number}", language)
    slots += [slot for index in sorted(shared) for slot in shared[index]]  # shared strings no cell uses
    return slots, package.save


def open_document(path: Path) -> OoxmlDocument:
    return OoxmlDocument(Path(path), _load)
