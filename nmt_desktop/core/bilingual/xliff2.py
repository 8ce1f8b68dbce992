"""XLIFF 2.x (OASIS 2.0 and 2.1, one namespace): unit, segment and ignorable, the inline tags pc, ph, sc/ec,
mrk, sm/em and cp (inline_segments.py) with originalData's native code, read and written with lxml.

A target filled by the model gets its segment's state="initial" (to be reviewed); the trust estimate goes
into the Translation Candidates module: an mtc:match (type "mt", origin "nmt-desktop", matchQuality the
estimated chrF) for the segment, first in its unit. A segment a translation memory gave (translate-file --tm,
an exact match) gets state="translated"; the memory's fuzzy matches are mtc:match elements of type "tm"
(similarity their score). The root's trgLang is set to the model's language where the file names none.

A segment a person confirmed (confirmed.py) gets state="final" (its subState removed), and the mtc:match
elements this app wrote for it are removed (the mtc:matches too, once empty); other tools' matches stay.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Mapping, Sequence

from lxml import etree

from nmt_desktop.core.bilingual.bilingual_document import (MEMORY_ORIGIN, ORIGIN, BilingualDocument, Pending, Place,
                                                            Review)
from nmt_desktop.core.bilingual.inline_segments import local, read_segment, write_segment
from nmt_desktop.core.bilingual.units import BilingualFile, BilingualUnit
from nmt_desktop.core.bilingual.xml_file import child, parse_file, translatable, where, write_file
from nmt_desktop.core.documents.blocks import Block, DocumentError, TranslatedBlock

NAME = "XLIFF 2"
CONFIRMED_STATES = ("final", "reviewed")
MTC = "urn:oasis:names:tc:xliff:matches:2.0"


def classify(element: etree._Element) -> tuple[str, str]:
    name = local(element)
    if name in ("pc", "mrk"):
        return ("keep" if element.get("translate") == "no" else "wrap"), ""
    if name == "sc" and element.get("isolated") != "yes":
        return "open", element.get("id") or ""
    if name == "ec" and element.get("startRef"):
        return "close", element.get("startRef")
    if name == "sm":  # the two ends of an annotation (mrk) that crosses other tags
        return "open", "sm:" + (element.get("id") or "")
    if name == "em" and element.get("startRef"):
        return "close", "sm:" + element.get("startRef")
    return "marker", ""



def open_document(path: str | Path) -> BilingualDocument:
    path = Path(path)
    tree, original = parse_file(path)
    root = tree.getroot()
    if local(root) != "xliff" or not root.get("version", "").startswith("2."):
        raise DocumentError(f"{path.name} is not an XLIFF 2 file (its root is <{local(root)} version="
                            f"\"{root.get('version', '')}\">)")
    if not root.get("srcLang"):
        raise DocumentError(f"{path.name}: the <xliff> element has no srcLang, which XLIFF 2 requires")
    units, pending = [], []
    for unit in (e for e in root.iter() if local(e) == "unit"):
        segments = [s for s in unit if local(s) == "segment"]
        data = _original_data(unit)
        for n, segment in enumerate(segments):
            if child(segment, "source") is None:
                raise DocumentError(f"{where(segment, path)}: a segment of unit \"{unit.get('id', '')}\" has no <source>")
            u, p = _segment(unit, segment, n, len(segments) > 1, data)
            units.append(u)
            pending.append(p)
    info = BilingualFile(path, NAME, root.get("srcLang", ""), root.get("trgLang", ""), units)

    def finish(out: Path, language: str | None) -> None:
        if language and not root.get("trgLang"):
            root.set("trgLang", language)
        write_file(tree, original, out)

    return BilingualDocument(path, info, pending, finish)


def _original_data(unit: etree._Element) -> dict[str, str]:
    block = child(unit, "originalData")
    if block is None:
        return {}
    return {d.get("id", ""): "".join(d.itertext()) for d in block if local(d) == "data"}


def _segment(unit: etree._Element, segment: etree._Element, n: int, several: bool,
             data: dict[str, str]) -> tuple[BilingualUnit, Pending]:
    def code(element: etree._Element, end: str) -> str:
        ref = element.get("dataRefEnd" if end == "close" and local(element) == "pc" else
                          "dataRefStart" if local(element) == "pc" else "dataRef")
        return data.get(ref or "", "")

    source = read_segment(child(segment, "source"), classify, code)
    target_el = child(segment, "target")
    target = read_segment(target_el, classify, code) if target_el is not None else None
    state = segment.get("state", "initial" if target_el is not None else "")
    filled = bool(target and target.text.strip())
    notes_el = child(unit, "notes")
    notes = [t.text.strip() for t in (notes_el if notes_el is not None else []) if local(t) == "note" and t.text and t.text.strip()]
    context = " | ".join([unit.get("name", "")] * bool(unit.get("name")) + notes)
    unit_id = unit.get("id", "") + (f"/{segment.get('id') or n + 1}" if several else "")
    info = BilingualUnit(unit_id, source.text, target.text if target else "", filled and state in CONFIRMED_STATES,
                         state, context, source.tags, target.tags if target else [], translatable(unit))
    blocks = [Block(source.runs, f"unit {unit_id}")] if source.text.strip() else []

    def write(translated: Sequence[TranslatedBlock], review: Review) -> None:
        element = _target_of(segment)
        write_segment(source, translated[0], element)
        segment.set("state", "translated" if review.from_memory else "initial")
        segment.attrib.pop("subState", None)
        _matches(unit, segment, n, element, review)

    def confirm(texts: Mapping[str, str], place: Place) -> None:
        place(source, texts[unit_id], _target_of(segment))
        segment.set("state", "final")
        segment.attrib.pop("subState", None)
        matches = next((c for c in unit if c.tag == f"{{{MTC}}}matches"), None)
        if matches is not None and segment.get("id"):
            _drop_ours(matches, f"#{segment.get('id')}")
            if not len(matches):
                unit.remove(matches)

    return info, Pending(info, blocks, write, confirm=confirm)


def _target_of(segment: etree._Element) -> etree._Element:
    """The segment's target, made after its source where missing."""
    element = child(segment, "target")
    if element is None:
        src = child(segment, "source")
        element = segment.makeelement(etree.QName(src).text.replace("source", "target"), {})
        src.addnext(element)
        element.tail = src.tail
    return element


def _drop_ours(matches: etree._Element, ref: str) -> None:
    """The mtc:match elements this app wrote for the segment `ref` ("#s1"): removed."""
    for old in [m for m in matches if m.get("origin") in (ORIGIN, MEMORY_ORIGIN) and m.get("ref") == ref]:
        matches.remove(old)


def _matches(unit: etree._Element, segment: etree._Element, n: int, written: etree._Element, review: Review) -> None:
    """The machine translation and its trust (type "mt", matchQuality), and the translation memory's matches
    (type "tm", similarity their score), as mtc:match elements for the segment, first in its unit; those of an
    earlier run replaced."""
    if review.trust is None and not review.matches:
        return
    if not segment.get("id"):
        taken = {e.get("id") for e in unit.iter() if isinstance(e.tag, str)}
        name = next(f"nmt-s{k}" for k in range(n + 1, n + 10_000) if f"nmt-s{k}" not in taken)
        segment.set("id", name)
    ref = f"#{segment.get('id')}"
    matches = next((c for c in unit if c.tag == f"{{{MTC}}}matches"), None)
    if matches is None:
        matches = unit.makeelement(f"{{{MTC}}}matches", {}, nsmap={"mtc": MTC})
        unit.insert(0, matches)
        matches.tail = unit.text
    _drop_ours(matches, ref)
    ns = etree.QName(unit).namespace
    if review.trust is not None:
        match = etree.SubElement(matches, f"{{{MTC}}}match", {"ref": ref, "type": "mt", "origin": ORIGIN,
                                                              "matchQuality": f"{review.trust.qe:.0f}", "similarity": "100"})
        for name, content in (("source", child(segment, "source")), ("target", written)):
            element = etree.SubElement(match, f"{{{ns}}}{name}")
            element.text = content.text
            element.extend(copy.deepcopy(c) for c in content)
    for found in review.matches:
        match = etree.SubElement(matches, f"{{{MTC}}}match", {"ref": ref, "type": "tm", "origin": MEMORY_ORIGIN,
                                                              "similarity": f"{found.score:.0f}"})
        etree.SubElement(match, f"{{{ns}}}source").text = found.source
        etree.SubElement(match, f"{{{ns}}}target").text = found.target
