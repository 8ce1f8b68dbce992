"""PowerPoint presentations (.pptx) through python-pptx, editing the DrawingML it parsed.

Blocks, in order: the core title and subject, then per slide every a:p of its XML in document order
(shapes, placeholders, groups, table cells) and every shape's alt text (p:cNvPr descr/title), then the
slide's notes. A run is an a:r; an a:br between runs is a verbatim "\n" run so the line break moves
with the words around it; a:fld (slide number, date) is left out and keeps working. Layouts and
masters (template prompts), charts and SmartArt (parts of their own) are not translated. `save` opens
the source again and writes only texts and run order, so media and relationships are copied as they
were.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pptx
from lxml import etree
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.opc.package import Part

from nmt_desktop.core.documents.blocks import Block, DocumentError, Run, TranslatedBlock, write_blocks
from nmt_desktop.core.documents.formats.ooxml_runs import RunSlot, clipped_property, is_monospace, style_key, write_runs

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P_CNVPR = "{http://schemas.openxmlformats.org/presentationml/2006/main}cNvPr"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
RPR_NOISE = ("lang", "altLang", "dirty", "err", "noProof", "smtClean", "smtId", "bmk")

Writer = Callable[[TranslatedBlock], None]


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


@dataclass
class _Reader:
    """Reads one presentation's blocks, with a writer per block that puts a translation back."""
    presentation: pptx.presentation.Presentation
    blocks: list[Block] = field(default_factory=list)
    writers: list[Writer] = field(default_factory=list)

    def read(self) -> None:
        try:  # looked up, not asked for: python-pptx adds a default core properties part when asked
            props = self.presentation.part.package.part_related_by(RT.CORE_PROPERTIES)
        except KeyError:
            props = None
        for name in ("title", "subject") if props is not None else ():
            if (getattr(props, name) or "").strip():
                self._add([Run(getattr(props, name))], f"presentation {name}",
                          lambda t, name=name: setattr(props, name, clipped_property("".join(r.text for r in t))))
        for number, slide in enumerate(self.presentation.slides, 1):
            self._read_part(f"slide {number}", slide.part)
            if slide.has_notes_slide:
                self._read_part(f"slide {number} notes", slide.notes_slide.part)

    def _add(self, runs: list[Run], where: str, writer: Writer) -> None:
        self.blocks.append(Block(runs, where))
        self.writers.append(writer)

    def _read_part(self, label: str, part: Part) -> None:
        number = 0
        for element in part._element.iter(a("p"), P_CNVPR):
            if any(ancestor.tag == MC_FALLBACK for ancestor in element.iterancestors()):
                continue
            if element.tag == P_CNVPR:
                for attr in ("descr", "title"):
                    if (element.get(attr) or "").strip():
                        self._add([Run(element.get(attr))], f"{label}, {element.get('name')} alt text",
                                  lambda t, e=element, at=attr: e.set(at, "".join(r.text for r in t)))
                continue
            number += 1
            slots = [RunSlot(child, child) for child in element if child.tag in (a("r"), a("br"))]
            runs = [self._run(slot.run, part) for slot in slots]
            if "".join(r.text for r in runs).strip():
                self._add(runs, f"{label}, paragraph {number}",
                          lambda t, slots=slots: write_runs(slots, t, set_run_text))

    @staticmethod
    def _run(run: etree._Element, part: Part) -> Run:
        if run.tag == a("br"):
            return Run("\n", None, True)
        props = run.find(a("rPr"))
        key: object = style_key(props, noise_attrs=RPR_NOISE)
        click = props.find(a("hlinkClick")) if props is not None else None
        if click is not None:
            rid = click.get(R_ID)
            key = ("link", part.rels[rid].target_ref if rid in part.rels else click.get("action"), key)
        fonts = [f.get("typeface") for f in props.iter(a("latin"), a("cs"), a("ea"))] if props is not None else []
        return Run(run.findtext(a("t")) or "", key, any(is_monospace(f) for f in fonts))


def _load(path: Path) -> _Reader:
    try:
        reader = _Reader(pptx.Presentation(str(path)))
        reader.read()
    except Exception as error:  # python-pptx raises KeyError, ValueError, zipfile and lxml errors alike
        raise DocumentError(f"{path.name} cannot be read as a PowerPoint presentation: {error}") from error
    return reader


class PowerPointDocument:
    """An open .pptx: its blocks; `save` re-reads the source so the open copy is never modified."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.blocks = _load(path).blocks

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        reader = _load(self.path)
        write_blocks(self.path.name, reader.blocks, reader.writers, translated)
        reader.presentation.save(str(path))


def open_document(path: Path) -> PowerPointDocument:
    return PowerPointDocument(Path(path))
