"""DrawingML paragraphs (a:p of a:r and a:br) as blocks: the text of PowerPoint slides and notes and of
Excel's text boxes and shapes (xl/drawings/). A run is an a:r; an a:br (Shift+Enter) ends a line, and each
line with words is a block of its own, so a break is never handed to the translator (the model put every
word before one) and stays where it is; a:fld (slide number, date) is left out and keeps working. A link
(a:hlinkClick, its r:id resolved in the part's rels) or a superscript/subscript (a:rPr baseline) that the
translation leaves empty keeps its source text. A paragraph in mc:Choice (a shape PowerPoint writes for new
readers) is read once and its translation written to the same paragraph of mc:Fallback too (the copy older
readers show), where the Fallback holds the same text."""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, Run, TranslatedBlock
from nmt_desktop.core.documents.formats.ooxml_package import R_NS, Package
from nmt_desktop.core.documents.formats.ooxml_runs import (
    RunSlot,
    is_monospace,
    never_emptied,
    style_key,
    write_runs,
)
from nmt_desktop.core.documents.formats.xml_parts import Slot

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R_ID = f"{{{R_NS}}}id"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
MC_FALLBACK = f"{{{MC}}}Fallback"
RPR_NOISE = ("lang", "altLang", "dirty", "err", "noProof", "smtClean", "smtId", "bmk")


def a(tag: str) -> str:
    return f"{{{A}}}{tag}"


def set_run_text(run: etree._Element, text: str) -> None:
    """An a:r gets the text in its a:t."""
    node = run.find(a("t"))
    if node is None:
        node = etree.SubElement(run, a("t"))
    if (node.text or "") != text:  # an unchanged text stays as the source wrote it (<a:t/>)
        node.text = text


def _run(run: etree._Element, package: Package, part: str) -> tuple[Run, bool]:
    """The run, and whether it must never come back empty (a link, a superscript or subscript)."""
    props = run.find(a("rPr"))
    key: object = style_key(props, noise_attrs=RPR_NOISE)
    click = props.find(a("hlinkClick")) if props is not None else None
    if click is not None:
        rel = package.rels(part).get(click.get(R_ID) or "")
        key = ("link", rel.ref if rel is not None else click.get("action"), key)
    fonts = [f.get("typeface") for f in props.iter(a("latin"), a("cs"), a("ea"))] if props is not None else []
    raised = props is not None and (props.get("baseline") or "0") != "0"
    return Run(run.findtext(a("t")) or "", key, any(is_monospace(f) for f in fonts)), click is not None or raised


def paragraph_slots_of(paragraph: etree._Element, package: Package, part: str, where: str,
                       language: str | None = None, twins: Sequence[etree._Element] = ()) -> list[Slot]:
    """An a:p as blocks, one per line with words (a:br, Shift+Enter, ends a line: "paragraph 2, line 1"):
    the model put every word before a break handed to it, so a break never is; each line's runs move
    only among themselves, the breaks stay where they are. A run whose text changed gets `language`
    (a:rPr lang) when one is given. `twins`: the paragraph's copies in mc:Fallback, written alike where
    their lines hold the same runs' texts."""
    lines = _lines(paragraph)
    read = [[_run(slot.run, package, part) for slot in line] for line in lines]
    copies = [_lines(twin) for twin in twins]
    copies = [c for c in copies if [[s.run.findtext(a("t")) or "" for s in line] for line in c]
              == [[run.text for run, _ in line] for line in read]]
    kept = [k for k, runs in enumerate(read) if "".join(run.text for run, _ in runs).strip()]
    return [_line_slot([lines[k]] + [c[k] for c in copies], read[k],
                       where if len(kept) == 1 else f"{where}, line {n}", language)
            for n, k in enumerate(kept, 1)]


def _lines(paragraph: etree._Element) -> list[list[RunSlot]]:
    lines: list[list[RunSlot]] = [[]]
    for child in paragraph:
        if child.tag == a("br"):
            lines.append([])
        elif child.tag == a("r"):
            lines[-1].append(RunSlot(child, child))
    return lines


def _line_slot(targets: list[list[RunSlot]], read: list[tuple[Run, bool]], where: str, language: str | None) -> Slot:
    block = Block([run for run, _ in read], where)
    marked = [m for _, m in read]

    def write(translated: TranslatedBlock) -> None:
        kept = never_emptied(block, translated, marked)
        for slots in targets:
            write_runs(slots, kept, set_run_text)
            for t in kept if language else ():
                run = slots[t.index].run
                if t.text != block.runs[t.index].text:
                    props = run.find(a("rPr"))
                    if props is None:
                        props = run.makeelement(a("rPr"), {})
                        run.insert(0, props)
                    props.set("lang", language)
    return Slot(block, write)


def mirrors(root: etree._Element) -> dict[etree._Element, list[etree._Element]]:
    """a:p of each mc:Choice -> the same paragraph in its mc:Fallback (paired in order, where both hold
    as many)."""
    pairs: dict[etree._Element, list[etree._Element]] = {}
    for alternate in root.iter(f"{{{MC}}}AlternateContent"):
        choice, fallback = alternate.find(f"{{{MC}}}Choice"), alternate.find(MC_FALLBACK)
        if choice is None or fallback is None:
            continue
        ours, theirs = list(choice.iter(a("p"))), list(fallback.iter(a("p")))
        if len(ours) == len(theirs):
            for mine, twin in zip(ours, theirs):
                pairs.setdefault(mine, []).append(twin)
    return pairs


def in_fallback(element: etree._Element) -> bool:
    """Inside mc:Fallback: the copy for old readers of what mc:Choice holds, not read twice."""
    return any(ancestor.tag == MC_FALLBACK for ancestor in element.iterancestors())


def paragraph_slots(package: Package, part: str, label: str, language: str | None = None) -> list[Slot]:
    """Every a:p of a part with text, in document order, as "LABEL, paragraph N" (mc:Fallback copies
    written with their mc:Choice)."""
    slots: list[Slot] = []
    root = package.root(part)
    twins = mirrors(root)
    for number, paragraph in enumerate((p for p in root.iter(a("p")) if not in_fallback(p)), 1):
        slots += paragraph_slots_of(paragraph, package, part, f"{label}, paragraph {number}", language,
                                    twins.get(paragraph, ()))
    return slots
