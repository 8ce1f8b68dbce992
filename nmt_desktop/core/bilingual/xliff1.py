"""XLIFF 1.2 (OASIS, 2008): trans-unit source and target, seg-source's mrk mtype="seg" segments, and the
inline tags g, x, bx/ex, ph, bpt/ept, it and mrk (inline_segments.py), read and written with lxml.

A target filled by the model gets state="needs-review-translation" and state-qualifier="leveraged-mt"; the
trust estimate goes into an alt-trans (origin "nmt-desktop", match-quality the estimated chrF) beside it. One
a translation memory gave (translate-file --tm, an exact match) gets state="translated" and
state-qualifier="exact-match"; the memory's fuzzy matches are alt-trans too (origin "nmt-desktop translation
memory", match-quality their score).
file/@target-language is set to the model's language where the file names none.

A segment a person confirmed (confirmed.py) gets state="final" without a state-qualifier, and this app's
alt-trans for it (the machine's and the memory's) are removed; other tools' alt-trans stay. The state is the
whole target's, so a trans-unit cut into seg-source segments turns final once every segment is confirmed.
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

NAME = "XLIFF 1.2"
CONFIRMED_STATES = ("final", "signed-off")
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def classify(element: etree._Element) -> tuple[str, str]:
    name = local(element)
    if name == "mrk" and element.get("mtype") == "protected" or name in ("g", "mrk") and element.get("translate") == "no":
        return "keep", ""
    if name == "g" or (name == "mrk" and element.get("mtype") != "seg"):
        return "wrap", ""
    if name in ("bpt", "bx"):
        return "open", element.get("rid") or element.get("id") or ""
    if name in ("ept", "ex"):
        return "close", element.get("rid") or element.get("id") or ""
    return "marker", ""



def _segments(unit: etree._Element) -> list[tuple[str, etree._Element, etree._Element | None]]:
    """(mid or "", source segment element, target segment element or None) of a trans-unit."""
    source, target = child(unit, "source"), child(unit, "target")
    seg_source = child(unit, "seg-source")
    marks = [m for m in seg_source.iter() if local(m) == "mrk" and m.get("mtype") == "seg"] if seg_source is not None else []
    if not marks:
        return [("", source, target)]
    targets = {m.get("mid"): m for m in target.iter() if local(m) == "mrk" and m.get("mtype") == "seg"} if target is not None else {}
    return [(m.get("mid") or "", m, targets.get(m.get("mid"))) for m in marks]


def open_document(path: str | Path) -> BilingualDocument:
    path = Path(path)
    tree, original = parse_file(path)
    root = tree.getroot()
    if local(root) != "xliff" or not (root.get("version") or "1.2").startswith("1."):
        raise DocumentError(f"{path.name} is not an XLIFF 1.2 file (its root is <{local(root)} version="
                            f"\"{root.get('version', '')}\">)")
    files = [f for f in root if local(f) == "file"]
    if not files:
        raise DocumentError(f"{path.name}: an XLIFF 1.2 file needs at least one <file> element")
    units, pending, machine_filled = [], [], set()
    for file in files:
        for tu in (e for e in file.iter() if local(e) == "trans-unit"):
            if child(tu, "source") is None:
                raise DocumentError(f"{where(tu, path)}: trans-unit \"{tu.get('id', '')}\" has no <source>")
            segments = _segments(tu)
            for mid, src, tgt in segments:
                unit, p = _unit(path, tu, mid, src, tgt, len(segments) > 1, machine_filled)
                units.append(unit)
                pending.append(p)
    first = files[0]
    info = BilingualFile(path, NAME, first.get("source-language", ""), first.get("target-language", ""), units)

    def finish(out: Path, language: str | None) -> None:
        if language:
            for file in files:
                if not file.get("target-language"):
                    file.set("target-language", language)
        write_file(tree, original, out)

    return BilingualDocument(path, info, pending, finish)


def _unit(path: Path, tu: etree._Element, mid: str, src: etree._Element, tgt: etree._Element | None,
          several: bool, machine_filled: set) -> tuple[BilingualUnit, Pending]:
    """A segment's unit and its writer; `machine_filled` (shared by the file's writers) holds the trans-units
    a segment of which the model filled."""
    source = read_segment(src, classify)
    target = read_segment(tgt, classify) if tgt is not None else None
    whole_target = child(tu, "target")
    state = whole_target.get("state", "") if whole_target is not None else ""
    filled = bool(target and target.text.strip())
    confirmed = filled and (state in CONFIRMED_STATES or tu.get("approved") == "yes")
    notes = [n.text.strip() for n in tu if local(n) == "note" and n.text and n.text.strip()]
    context = " | ".join([tu.get("resname", "")] * bool(tu.get("resname")) + notes)
    unit_id = tu.get("id", "") + (f"/{mid}" if several else "")
    unit = BilingualUnit(unit_id, source.text, target.text if target else "", confirmed, state, context,
                         source.tags, target.tags if target else [], translatable(tu))
    blocks = [Block(source.runs, f"trans-unit {unit_id}")] if source.text.strip() else []

    def write(translated: Sequence[TranslatedBlock], review: Review) -> None:
        element = _target_of(tu, mid)
        write_segment(source, translated[0], element)
        whole = child(tu, "target")
        if not review.from_memory:
            machine_filled.add(tu)
        if tu not in machine_filled:  # one target for all its segments: one the model filled makes it for review
            whole.set("state", "translated")
            whole.set("state-qualifier", "exact-match")
        else:
            whole.set("state", "needs-review-translation")
            whole.set("state-qualifier", "leveraged-mt")
        if tu.get("approved") == "yes":
            tu.set("approved", "no")
        _alt_trans(tu, mid, element, review)

    def confirm(texts: Mapping[str, str], place: Place) -> None:
        place(source, texts[unit_id], _target_of(tu, mid))
        whole = child(tu, "target")
        parts = _segments(tu)
        ids = [tu.get("id", "") + (f"/{m}" if len(parts) > 1 else "") for m, _s, _t in parts]
        if all(i in texts for i in ids) or whole.get("state") in CONFIRMED_STATES:
            whole.set("state", "final")
            whole.attrib.pop("state-qualifier", None)
        _drop_ours(tu, mid)

    return unit, Pending(unit, blocks, write, confirm=confirm)


def _target_of(tu: etree._Element, mid: str) -> etree._Element:
    """The element the segment's translation goes into, made where missing: the target (after source or
    seg-source), or its mrk mtype="seg" with `mid` (the target built after seg-source's shape)."""
    target = child(tu, "target")
    ns = etree.QName(tu).namespace
    if target is None:
        target = tu.makeelement(f"{{{ns}}}target" if ns else "target", {})
        after = child(tu, "seg-source") if child(tu, "seg-source") is not None else child(tu, "source")
        after.addnext(target)
        target.tail, after.tail = after.tail, after.tail
    if not mid:
        return target
    marks = {m.get("mid"): m for m in target.iter() if local(m) == "mrk" and m.get("mtype") == "seg"}
    if mid not in marks:  # no segmented target yet: seg-source's shape, segments empty, other targets kept
        skeleton = copy.deepcopy(child(tu, "seg-source"))
        for mark in (m for m in skeleton.iter() if local(m) == "mrk" and m.get("mtype") == "seg"):
            kept = marks.get(mark.get("mid"))
            for kid in list(mark):
                mark.remove(kid)
            mark.text = None
            if kept is not None:
                mark.text = kept.text
                mark.extend(copy.deepcopy(c) for c in kept)
        for kid in list(target):
            target.remove(kid)
        target.text = skeleton.text
        target.extend(list(skeleton))
        marks = {m.get("mid"): m for m in target.iter() if local(m) == "mrk" and m.get("mtype") == "seg"}
    return marks[mid]


def _alt_trans(tu: etree._Element, mid: str, written: etree._Element, review: Review) -> None:
    """After the target: an alt-trans with the machine translation and its trust (match-quality), and one per
    translation memory match (its score, source and target); those of an earlier run replaced."""
    ns = etree.QName(tu).namespace
    q = (lambda name: f"{{{ns}}}{name}") if ns else (lambda name: name)
    _drop_ours(tu, mid)
    alternatives = []
    if review.trust is not None:
        alt = tu.makeelement(q("alt-trans"), {"match-quality": f"{review.trust.qe:.0f}", "origin": ORIGIN})
        target = etree.SubElement(alt, q("target"))
        target.text = written.text
        target.extend(copy.deepcopy(c) for c in written)
        etree.SubElement(alt, q("note")).text = review.trust.note
        alternatives.append(alt)
    for match in review.matches:
        alt = tu.makeelement(q("alt-trans"), {"match-quality": f"{match.score:.0f}", "origin": MEMORY_ORIGIN})
        etree.SubElement(alt, q("source")).text = match.source
        etree.SubElement(alt, q("target")).text = match.target
        alternatives.append(alt)
    whole = child(tu, "target")
    for alt in reversed(alternatives):
        if mid:
            alt.set("mid", mid)
        whole.addnext(alt)
        alt.tail = whole.tail


def _drop_ours(tu: etree._Element, mid: str) -> None:
    """The alt-trans this app wrote for the segment (the machine's, the memory's matches): removed."""
    for old in [a for a in tu if local(a) == "alt-trans" and a.get("origin") in (ORIGIN, MEMORY_ORIGIN)
                and (a.get("mid") or "") == mid]:
        tu.remove(old)
