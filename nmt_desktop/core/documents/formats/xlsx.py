"""Excel workbooks (.xlsx): the text of string cells, edited with lxml inside the zip; every other member
is copied byte-identical.

Not openpyxl: it reads a workbook into its own model and writes a whole new package from that model on
save, so whatever it does not model (shapes, text boxes, form controls, some chart, drawing and data
validation details, extension lists) is changed or lost. Here only the parts that hold the text are
parsed and re-serialised: the shared strings (xl/sharedStrings.xml), the worksheets that hold inline
strings, and docProps/core.xml (title, subject); images, drawings, charts, styles and every other
worksheet are copied as they were, in their order and with their compression.

Blocks, in order: the workbook's title and subject, then the string cells of the worksheets in the
workbook's sheet order, row by row. A shared string (`<si>`) is one block, named after the first cell
that uses it: a text in several cells is translated once and every one of them shows the translation.
An inline string (`<c t="inlineStr"><is>`) is a block of its own; shared strings that no cell uses come
last ("shared string N"). A plain `<t>` is one run; rich text is one run per `<r>`, styled by its
serialised `<rPr>` (a monospace font is verbatim); phonetic guides (`<rPh>`) are not text. Formulas
(`<f>`), their cached results, numbers, dates and booleans are not text and stay as they are; a
translation that starts with "=" is still a string, not a formula. Sheet names are not translated
because formulas refer to them by name. Excel's `_xHHHH_` escapes are read as the characters they stand
for and written back for characters XML cannot hold.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, DocumentError, Run, TranslatedBlock
from nmt_desktop.core.documents.formats.ooxml_runs import (
    RunSlot,
    is_monospace,
    style_key,
    write_runs,
)
from nmt_desktop.core.documents.formats.xml_parts import (
    Loaded,
    Slot,
    SlotDocument,
    member,
    parse_xml,
    read_zip,
    serialise_xml,
    text_slot,
    write_zip,
)

WHAT = "Excel workbook"
DC = "http://purl.org/dc/elements/1.1/"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
RELATIONSHIP = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"

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


def _rels(members: dict[str, bytes], part: str, path: Path) -> dict[str, tuple[str, str]]:
    """A part's relationships (the package's for part ""): id -> (type, member name of the target)."""
    folder, name = posixpath.split(part)
    rels_name = posixpath.join(folder, "_rels", f"{name}.rels")
    if rels_name not in members:
        return {}
    found: dict[str, tuple[str, str]] = {}
    for rel in parse_xml(members[rels_name], f"{path.name} {rels_name}").getroot().iter(RELATIONSHIP):
        if rel.get("TargetMode") == "External":
            continue
        target = rel.get("Target", "")
        target = target[1:] if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        found[rel.get("Id", "")] = (rel.get("Type", ""), target)
    return found


def _target(rels: dict[str, tuple[str, str]], kind: str, members: dict[str, bytes], default: str) -> str:
    """The member a relationship of type `.../kind` points to, if it is in the package; else `default`."""
    return next((t for k, t in rels.values() if k.endswith("/" + kind) and t in members), default)


def _sheets(workbook: etree._Element, rels: dict[str, tuple[str, str]],
            members: dict[str, bytes]) -> list[tuple[str, str]]:
    """(sheet name, member) of each worksheet in the workbook's order, then any worksheet it does not list."""
    ns = etree.QName(workbook).namespace
    sheets: list[tuple[str, str]] = []
    for sheet in workbook.iter(f"{{{ns}}}sheet"):
        rid = next((v for k, v in sheet.attrib.items() if k.startswith("{") and etree.QName(k).localname == "id"),
                   "")
        kind, target = rels.get(rid, ("", ""))
        if kind.endswith("/worksheet") and target in members:
            sheets.append((sheet.get("name") or target, target))
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


def _run(item: etree._Element, ns: str) -> Run:
    t = _text_element(item, ns)
    text = _unescape(t.text or "") if t is not None else ""
    if item.tag == f"{{{ns}}}t":
        return Run(text)
    props = item.find(f"{{{ns}}}rPr")
    font = props.find(f"{{{ns}}}rFont") if props is not None else None
    return Run(text, style_key(props), font is not None and is_monospace(font.get("val")))


def _set_text(item: etree._Element, text: str, ns: str) -> None:
    t = _text_element(item, ns)
    if t is None:
        t = etree.SubElement(item, f"{{{ns}}}t")
    t.text = _escape(text)
    if text != text.strip():
        t.set(XML_SPACE, "preserve")


def _string_slot(string: etree._Element, ns: str, where: str) -> Slot | None:
    """A string item as a block (None when it has no text); its writer moves the <r>s and sets the texts."""
    items = _items(string, ns)
    runs = [_run(item, ns) for item in items]
    if not "".join(run.text for run in runs).strip():
        return None

    def write(translated: TranslatedBlock) -> None:
        write_runs([RunSlot(item, item) for item in items], translated, lambda el, text: _set_text(el, text, ns))
    return Slot(Block(runs, where), write)


def _load(path: Path) -> Loaded:
    members = read_zip(path, WHAT)
    package_rels = _rels(members, "", path)
    workbook_name = _target(package_rels, "officeDocument", members, "xl/workbook.xml")
    workbook = parse_xml(member(members, workbook_name, path, WHAT), f"{path.name} {workbook_name}").getroot()
    if etree.QName(workbook).localname != "workbook":
        raise DocumentError(f"{path.name} is not a valid {WHAT}: {workbook_name} is not a workbook")
    workbook_rels = _rels(members, workbook_name, path)
    trees: dict[str, etree._ElementTree] = {}
    slots: list[Slot] = []

    core_name = _target(package_rels, "core-properties", members, "docProps/core.xml")
    if core_name in members:
        core = parse_xml(members[core_name], f"{path.name} {core_name}")
        for name in ("title", "subject"):
            el = core.getroot().find(f"{{{DC}}}{name}")
            if el is not None and (el.text or "").strip():
                slots.append(text_slot(el, f"workbook {name}"))
                trees[core_name] = core

    shared: dict[int, Slot] = {}
    shared_name = _target(workbook_rels, "sharedStrings", members, "xl/sharedStrings.xml")
    if shared_name in members:
        table = parse_xml(members[shared_name], f"{path.name} {shared_name}")
        ns = etree.QName(table.getroot()).namespace
        for index, si in enumerate(table.getroot().iterchildren(f"{{{ns}}}si")):
            slot = _string_slot(si, ns, f"shared string {index + 1}")
            if slot is not None:
                shared[index] = slot
        if shared:
            trees[shared_name] = table

    for sheet_name, part in _sheets(workbook, workbook_rels, members):
        sheet = parse_xml(members[part], f"{path.name} {part}")
        ns = etree.QName(sheet.getroot()).namespace
        for cell, ref in _cells(sheet.getroot(), ns):
            kind = cell.get("t")
            if kind == "s" and shared:
                value = cell.findtext(f"{{{ns}}}v") or ""
                slot = shared.pop(int(value), None) if value.strip().isdigit() else None
                if slot is not None:
                    slot.block.where = f"{sheet_name}!{ref}"
                    slots.append(slot)
            elif kind == "inlineStr" and (string := cell.find(f"{{{ns}}}is")) is not None:
                slot = _string_slot(string, ns, f"{sheet_name}!{ref}")
                if slot is not None:
                    slots.append(slot)
                    trees[part] = sheet
    slots += [shared[index] for index in sorted(shared)]  # shared strings that no cell uses

    def serialise(target: Path) -> None:
        write_zip(path, target, {name: serialise_xml(tree, members[name]) for name, tree in trees.items()})

    return slots, serialise


def open_document(path: Path) -> SlotDocument:
    return SlotDocument(Path(path), _load)
