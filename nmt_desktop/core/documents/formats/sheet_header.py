"""A worksheet's printed headers and footers (<headerFooter>: oddHeader, oddFooter, evenHeader, ...) as
blocks. Their text is Excel's code language: &L, &C and &R start the left, centre and right sections;
&P (page), &N (pages), &D, &T, &A (sheet), &F, &Z, &G and && stand for content, and &B, &I, &U, &S, &E,
&X, &Y, &"font,style", &12 (size) and &KRRGGBB switch formatting. Each section with words is a block:
a content code is a verbatim run (never emptied: one the translation drops is put back), and the
formatting codes before a stretch of words are that run's style and are written back in front of it
wherever it goes, so no code is ever lost; the section codes are never part of a block, so a translated
section stays in its place."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, Run, TranslatedBlock
from nmt_desktop.core.documents.formats.ooxml_runs import never_emptied
from nmt_desktop.core.documents.formats.xml_parts import Slot

KINDS = ("oddHeader", "oddFooter", "evenHeader", "evenFooter", "firstHeader", "firstFooter")
SECTION = re.compile(r"(&[LCR])")
CODE = re.compile(r'(&(?:"[^"]*"|\d+|K[0-9A-Fa-f]{6}|K\d\d[+-]\d{3}|[PNDTAFZGBIUESXYH&+-]))')
CONTENT = re.compile(r"&[PNDTAFZG&+-]")
SECTION_NAMES = {"&L": "left", "&C": "centre", "&R": "right"}


@dataclass
class _Section:
    """A section's runs, the formatting codes written before each, and those after the last."""
    runs: list[Run]
    prefixes: list[str]
    suffix: str

    def text(self, translated: TranslatedBlock) -> str:
        kept = never_emptied(Block(self.runs), translated, [run.verbatim for run in self.runs])
        return "".join(self.prefixes[t.index] + t.text for t in kept) + self.suffix


def _section(text: str) -> _Section:
    runs: list[Run] = []
    prefixes: list[str] = []
    pending = ""
    for piece in CODE.split(text):
        if not piece:
            continue
        if CODE.fullmatch(piece) and not CONTENT.fullmatch(piece):
            pending += piece
            continue
        runs.append(Run(piece, pending or None, bool(CONTENT.fullmatch(piece))))
        prefixes.append(pending)
        pending = ""
    return _Section(runs, prefixes, pending)


def header_footer_slots(sheet: etree._Element, sheet_name: str) -> list[Slot]:
    """A block per header or footer section with words, in the order the sheet holds them."""
    ns = etree.QName(sheet).namespace
    slots: list[Slot] = []
    for holder in sheet.iterchildren(f"{{{ns}}}headerFooter"):
        for element in holder:
            if not isinstance(element.tag, str) or etree.QName(element).localname not in KINDS:
                continue
            pieces = SECTION.split(element.text or "")  # text before any section code, then code, text, ...
            kind = etree.QName(element).localname
            for k in range(0, len(pieces), 2):
                section = _section(pieces[k])
                if not "".join(r.text for r in section.runs if not r.verbatim).strip():
                    continue
                name = SECTION_NAMES.get(pieces[k - 1], "centre") if k else "centre"

                def write(t: TranslatedBlock, element: etree._Element = element, k: int = k,
                          pieces: list[str] = pieces, section: _Section = section) -> None:
                    pieces[k] = section.text(t)
                    element.text = "".join(pieces)
                slots.append(Slot(Block(section.runs, f"{sheet_name} {kind}, {name}"), write))
    return slots
