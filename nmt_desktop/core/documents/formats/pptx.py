"""PowerPoint presentations (.pptx): the DrawingML of slides and notes edited with lxml inside the zip
(ooxml_package.py), every other member copied byte for byte.

Not python-pptx: it re-serialises the whole package on save and drops hyperlink relationships with an
internal target ('#_ftn1'), leaving a:hlinkClick r:ids that no relationship resolves (PowerPoint then
offers a repair). Here a slide's relationships are never rewritten, and runs only move within their
paragraph, so every r:id still resolves in its slide's rels.

Blocks, in order: the core title and subject, then per slide (the presentation's order) every a:p of its
XML in document order (shapes, placeholders, groups, table cells) and every shape's alt text (p:cNvPr
descr/title), then the slide's notes. A run is an a:r; an a:br between runs is a verbatim "\\n" run so
the line break moves with the words around it; a:fld (slide number, date) is left out and keeps working.
A superscript/subscript run (a:rPr baseline) or a link that the translation leaves empty keeps its
source text. Layouts and masters (template prompts), charts and SmartArt (parts of their own) are not
translated.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, Run, TranslatedBlock
from nmt_desktop.core.documents.formats.ooxml_package import DC, R_NS, Package
from nmt_desktop.core.documents.formats.ooxml_runs import (
    RunSlot,
    clipped_property,
    is_monospace,
    never_emptied,
    style_key,
    write_runs,
)
from nmt_desktop.core.documents.formats.xml_parts import Loaded, Slot, SlotDocument

WHAT = "a PowerPoint presentation"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
P_CNVPR = f"{{{P}}}cNvPr"
R_ID = f"{{{R_NS}}}id"
MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
RPR_NOISE = ("lang", "altLang", "dirty", "err", "noProof", "smtClean", "smtId", "bmk")


def a(tag: str) -> str:
    return f"{{{A}}}{tag}"


def set_run_text(run: etree._Element, text: str) -> None:
    """An a:r gets the text in its a:t; an a:br (a line break between runs) has none to set."""
    if run.tag != a("r"):
        return
    node = run.find(a("t"))
    if node is None:
        node = etree.SubElement(run, a("t"))
    node.text = text


def _run(run: etree._Element, package: Package, part: str) -> tuple[Run, bool]:
    """The run, and whether it must never come back empty (a link, a superscript or subscript)."""
    if run.tag == a("br"):
        return Run("\n", None, True), False
    props = run.find(a("rPr"))
    key: object = style_key(props, noise_attrs=RPR_NOISE)
    click = props.find(a("hlinkClick")) if props is not None else None
    if click is not None:
        rel = package.rels(part).get(click.get(R_ID) or "")
        key = ("link", rel.ref if rel is not None else click.get("action"), key)
    fonts = [f.get("typeface") for f in props.iter(a("latin"), a("cs"), a("ea"))] if props is not None else []
    raised = props is not None and (props.get("baseline") or "0") not in ("0", "")
    return Run(run.findtext(a("t")) or "", key, any(is_monospace(f) for f in fonts)), click is not None or raised


def _paragraph_slot(paragraph: etree._Element, package: Package, part: str, where: str) -> Slot | None:
    slots = [RunSlot(child, child) for child in paragraph if child.tag in (a("r"), a("br"))]
    read = [_run(slot.run, package, part) for slot in slots]
    block = Block([run for run, _ in read], where)
    if not block.text.strip():
        return None
    marked = [m for _, m in read]
    return Slot(block, lambda t: write_runs(slots, never_emptied(block, t, marked), set_run_text))


def _part_slots(package: Package, part: str, label: str) -> list[Slot]:
    slots: list[Slot] = []
    number = 0
    for element in package.root(part).iter(a("p"), P_CNVPR):
        if any(ancestor.tag == MC_FALLBACK for ancestor in element.iterancestors()):
            continue
        if element.tag == P_CNVPR:
            for attr in ("descr", "title"):
                if (element.get(attr) or "").strip():
                    block = Block([Run(element.get(attr))], f"{label}, {element.get('name')} alt text")
                    slots.append(Slot(block, lambda t, e=element, at=attr: e.set(at, "".join(r.text for r in t))))
            continue
        number += 1
        slot = _paragraph_slot(element, package, part, f"{label}, paragraph {number}")
        if slot is not None:
            slots.append(slot)
    return slots


def _core_slots(package: Package, label: str) -> list[Slot]:
    """The title and subject of docProps/core.xml, clipped as Office's 255-character limit wants."""
    core = package.core_properties()
    slots = []
    for name in ("title", "subject"):
        el = core.find(f"{{{DC}}}{name}") if core is not None else None
        if el is not None and (el.text or "").strip():
            def write(t: TranslatedBlock, el: etree._Element = el) -> None:
                el.text = clipped_property("".join(r.text for r in t))
            slots.append(Slot(Block([Run(el.text)], f"{label} {name}"), write, order=0))
    return slots


def _load(path: Path) -> Loaded:
    package = Package.open(path, WHAT)
    presentation = package.main_part()
    if etree.QName(package.root(presentation)).localname != "presentation":
        raise package.refuse(f"{presentation} is not a presentation")
    slots = _core_slots(package, "presentation")
    rels = package.rels(presentation)
    slide_ids = package.root(presentation).find(f"{{{P}}}sldIdLst")
    number = 0
    for slide_id in slide_ids if slide_ids is not None else ():
        rel = rels.get(slide_id.get(R_ID) or "")
        if rel is None or rel.target is None:
            continue
        number += 1
        slots += _part_slots(package, rel.target, f"slide {number}")
        for notes in package.related(rel.target, "notesSlide")[:1]:
            slots += _part_slots(package, notes, f"slide {number} notes")
    return slots, package.save


def open_document(path: Path) -> SlotDocument:
    return SlotDocument(Path(path), _load)

