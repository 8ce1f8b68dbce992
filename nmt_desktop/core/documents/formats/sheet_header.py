"""A worksheet's printed headers and footers (<headerFooter>: oddHeader, oddFooter, evenHeader, ...) as
blocks. Their text is Excel's code language: &L, &C and &R start the left, centre and right sections, and
&P (page), &N, &D, &T, &A (sheet), &F, &Z, &G, &B, &I, &U, &"font,style", &12 (size), &KRRGGBB and && are
codes. Each section with words is a block whose codes are verbatim runs; the section codes themselves are
never part of a block, so a translated section stays in its place."""

from __future__ import annotations

import re

from lxml import etree

from nmt_desktop.core.documents.blocks import Block, Run, TranslatedBlock
from nmt_desktop.core.documents.formats.xml_parts import Slot

KINDS = ("oddHeader", "oddFooter", "evenHeader", "evenFooter", "firstHeader", "firstFooter")
SECTION = re.compile(r"(&[LCR])")
CODE = re.compile(r'(&(?:"[^"]*"|\d+|K[0-9A-Fa-f]{6}|K\d\d[+-]\d{3}|[PNDTAFZGBIUESXYH&+-]))')
SECTION_NAMES = {"&L": "left", "&C": "centre", "&R": "right"}


def _section_runs(text: str) -> list[Run]:
    return [Run(piece, None, bool(CODE.fullmatch(piece))) for piece in CODE.split(text) if piece]


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
                runs = _section_runs(pieces[k])
                if not "".join(r.text for r in runs if not r.verbatim).strip():
                    continue
                name = SECTION_NAMES.get(pieces[k - 1], "centre") if k else "centre"
                block = Block(runs, f"{sheet_name} {kind}, {name}")

                def write(t: TranslatedBlock, element: etree._Element = element, k: int = k,
                          pieces: list[str] = pieces) -> None:
                    pieces[k] = "".join(run.text for run in t)
                    element.text = "".join(pieces)
                slots.append(Slot(block, write))
    return slots
