"""PowerPoint presentations (.pptx): the DrawingML of slides and notes edited with lxml inside the zip
(ooxml_package.py), every other member copied byte for byte.

Not python-pptx: it re-serialises the whole package on save and drops hyperlink relationships with an
internal target ('#_ftn1'), leaving a:hlinkClick r:ids that no relationship resolves (PowerPoint then
offers a repair). Here a slide's relationships are never rewritten, and runs only move within their
paragraph, so every r:id still resolves in its slide's rels.

Blocks, in order: the core title and subject, then per slide (the presentation's order) every a:p of its
XML in document order (shapes, placeholders, groups, table cells) and every shape's alt text (p:cNvPr
descr/title), then the slide's notes; a paragraph with line breaks (a:br) is a block per line
(drawingml_text.py); a:fld (slide number, date) is left out and keeps working. A superscript/subscript
run (a:rPr baseline) or a link that the translation leaves empty keeps its source text. A shape in
mc:AlternateContent is read in mc:Choice and its translation written to mc:Fallback too (what older readers
show). Then the layouts the slides use and their masters: only their shapes that are no placeholder (a text
box with a company name or a logo caption, shown on every slide of that layout); a placeholder's text there
is a prompt ("Click to edit Master title style", never shown in a slide show) or a default that each slide
holds its own copy of (a footer), so it is left as it is. Charts and SmartArt (parts of their own) are not
translated.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, Run
from nmt_desktop.core.documents.formats.drawingml_text import a, in_fallback, mirrors, paragraph_slots_of
from nmt_desktop.core.documents.formats.ooxml_package import (
    R_NS,
    OoxmlDocument,
    Package,
    core_slots,
    mark_core_language,
)
from nmt_desktop.core.documents.formats.xml_parts import Loaded, Slot

WHAT = "a PowerPoint presentation"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
P_CNVPR = f"{{{P}}}cNvPr"
R_ID = f"{{{R_NS}}}id"


def _part_slots(package: Package, part: str, label: str, language: str | None, template: bool = False) -> list[Slot]:
    """The blocks of a slide or notes part; of a layout or master (`template`) only the shapes that are no
    placeholder, since a placeholder's text there is a prompt ("Click to edit Master title style") or a
    default that slides hold their own copy of (a footer)."""
    slots: list[Slot] = []
    number = 0
    root = package.root(part)
    twins = mirrors(root)
    for element in root.iter(a("p"), P_CNVPR):
        if in_fallback(element) or (template and _in_placeholder(element)):
            continue
        if element.tag == P_CNVPR:
            for attr in ("descr", "title"):
                if (element.get(attr) or "").strip():
                    block = Block([Run(element.get(attr))], f"{label}, {element.get('name')} alt text")
                    slots.append(Slot(block, lambda t, e=element, at=attr: e.set(at, "".join(r.text for r in t))))
            continue
        number += 1
        slots += paragraph_slots_of(element, package, part, f"{label}, paragraph {number}", language,
                                    twins.get(element, ()))
    return slots


SHAPES = {f"{{{P}}}{t}" for t in ("sp", "pic", "graphicFrame", "cxnSp")}


def _in_placeholder(element: etree._Element) -> bool:
    """Inside a placeholder shape (its p:nvPr has a p:ph)."""
    shape = next((anc for anc in ([element] if element.tag in SHAPES else []) + list(element.iterancestors())
                  if anc.tag in SHAPES), None)
    return shape is not None and shape.find(f"./*/{{{P}}}nvPr/{{{P}}}ph") is not None


def _load(path: Path, language: str | None = None) -> Loaded:
    package = Package.open(path, WHAT)
    presentation = package.main_part("ppt/presentation.xml")
    if etree.QName(package.root(presentation)).localname != "presentation":
        raise package.refuse(f"{presentation} is not a presentation")
    slots = core_slots(package, "presentation")
    mark_core_language(package, language)
    rels = package.rels(presentation)
    slide_ids = package.root(presentation).find(f"{{{P}}}sldIdLst")
    number = 0
    templates: list[str] = []  # the layouts the slides use and their masters, in first use
    for slide_id in slide_ids if slide_ids is not None else ():
        rel = rels.get(slide_id.get(R_ID) or "")
        if rel is None or rel.target is None:
            continue
        number += 1
        slots += _part_slots(package, rel.target, f"slide {number}", language)
        for notes in package.related(rel.target, "notesSlide")[:1]:
            slots += _part_slots(package, notes, f"slide {number} notes", language)
        for layout in package.related(rel.target, "slideLayout")[:1]:
            templates += [name for name in [layout, *package.related(layout, "slideMaster")[:1]]
                          if name not in templates]
    counts = {"layout": 0, "master": 0}
    for name in templates:
        kind = "master" if "slideMaster" in name.rsplit("/", 1)[-1] else "layout"
        counts[kind] += 1
        slots += _part_slots(package, name, f"{kind} {counts[kind]}", language, template=True)
    return slots, package.save


def open_document(path: Path) -> OoxmlDocument:
    return OoxmlDocument(Path(path), _load)

