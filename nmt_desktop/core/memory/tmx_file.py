"""TMX 1.4 in and out: `read_tmx` streams a file's translation units as entries (lxml iterparse: entities never
resolved, no network, a file declaring entities refused), `write_tmx` writes entries as a TMX 1.4 file
(lxml's incremental writer, through a temporary file renamed into place).

Inline markup is kept as tags (entries.Tag) at offsets into the plain text: bpt/ept become the two ends of a
pair, ph/it/ut standalone tags, hi a pair around its text; each with its native code where the file gives it.
Written back, a pair is bpt/ept (an end without its other half is an it), a standalone tag a ph. A unit's
context, origin and source file travel as props x-context, x-origin and x-document.
"""

from __future__ import annotations

import calendar
import os
import tempfile
import time
from pathlib import Path
from typing import Iterable, Iterator

from lxml import etree

from nmt_desktop.core.memory.entries import ORIGINS, Entry, Pair, Tag, TranslationMemoryError, normal_language

_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_STANDALONE = {"ph", "it", "ut", "x"}


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _date(text: str | None) -> int:
    """TMX's "20260101T120000Z" as Unix seconds; 0 when absent or not that form."""
    try:
        return calendar.timegm(time.strptime(text or "", "%Y%m%dT%H%M%SZ"))
    except ValueError:
        return 0


def _tmx_date(seconds: int) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(seconds))


def segment(seg: etree._Element) -> tuple[str, list[Tag]]:
    """A <seg>'s plain text and its inline tags (see the module docstring)."""
    parts: list[str] = []
    tags: list[Tag] = []
    made = [0]

    def walk(element: etree._Element) -> None:
        if element.text:
            parts.append(element.text)
        for child in element:
            name, at = _local(child.tag), len("".join(parts))
            code = "".join(child.itertext())
            if name == "bpt":
                tags.append(Tag("open", child.get("i") or child.get("x") or "", name, at, code))
            elif name == "ept":
                tags.append(Tag("close", child.get("i") or "", name, at, code))
            elif name == "hi":
                made[0] += 1
                pair_id = f"hi{made[0]}"
                tags.append(Tag("open", pair_id, name, at))
                walk(child)
                tags.append(Tag("close", pair_id, name, len("".join(parts))))
            elif name in _STANDALONE:
                tags.append(Tag("standalone", child.get("x") or child.get("i") or "", name, at, code))
            if child.tail:
                parts.append(child.tail)

    walk(seg)
    return "".join(parts), tags


def _refuse_entities(path: Path) -> None:
    with open(path, "rb") as f:
        head = f.read(65536)
    for text in (head, head.decode("utf-16", "ignore").encode("utf-8") if head[:2] in (b"\xff\xfe", b"\xfe\xff") else b""):
        if b"<!ENTITY" in text:
            raise TranslationMemoryError(f"{path}: declares XML entities, which a TMX file never needs: refused")


def read_tmx(path: Path | str, source: str | None = None, target: str | None = None) -> Iterator[Entry]:
    """Every (source, target) entry of a TMX file. The source language is `source` (matching "en-US" for "en"),
    else the header's srclang, else each unit's first variant; each other variant (or the one `target` names)
    gives an entry. TranslationMemoryError names the file and line of what is wrong."""
    path = Path(path)
    _refuse_entities(path)
    want_source = normal_language(source) if source else None
    want_target = normal_language(target) if target else None
    header_source: str | None = None
    name = path.name
    try:
        for event, element in etree.iterparse(str(path), events=("end",), resolve_entities=False, no_network=True,
                                              load_dtd=False, huge_tree=False, remove_comments=True):
            tag = _local(element.tag)
            if tag == "header":
                lang = element.get("srclang") or ""
                header_source = normal_language(lang) if lang and lang != "*all*" else None
            elif tag == "tu":
                yield from _unit_entries(element, path, name, want_source or header_source, want_target)
                element.clear(keep_tail=False)
                parent = element.getparent()
                while parent is not None and element.getprevious() is not None:
                    del parent[0]
    except etree.XMLSyntaxError as exc:
        raise TranslationMemoryError(f"{path}: line {exc.lineno}: not well-formed XML ({exc.msg})") from None


def _unit_entries(tu: etree._Element, path: Path, name: str, source: str | None, target: str | None) -> Iterator[Entry]:
    variants: list[tuple[str, str, list[Tag], int]] = []
    for tuv in tu:
        if _local(tuv.tag) != "tuv":
            continue
        lang = tuv.get(_XML_LANG) or tuv.get("lang")
        if not lang:
            raise TranslationMemoryError(f"{path}: line {tuv.sourceline}: a <tuv> without xml:lang")
        seg = next((c for c in tuv if _local(c.tag) == "seg"), None)
        if seg is None:
            raise TranslationMemoryError(f"{path}: line {tuv.sourceline}: a <tuv> without <seg>")
        text, tags = segment(seg)
        variants.append((normal_language(lang), text, tags, _date(tuv.get("changedate"))))
    if len(variants) < 2:
        return
    if source:
        first = next((v for v in variants if v[0] == source or v[0].startswith(source + "-")), None)
    else:
        first = variants[0]
    if first is None or not first[1].strip():
        return
    props = [(p.get("type") or "", p.text or "") for p in tu if _local(p.tag) == "prop"]
    context = " ".join(text for kind, text in props if "context" in kind.lower())
    notes = " ".join(p.text or "" for p in tu if _local(p.tag) == "note")
    origin = next((text for kind, text in props if kind == "x-origin" and text in ORIGINS), "file")
    document = next((text for kind, text in props if kind == "x-document"), name)
    created = _date(tu.get("creationdate"))
    changed = _date(tu.get("changedate")) or created
    for lang, text, tags, tuv_changed in variants:
        if lang == first[0] or not text.strip() or (target and not (lang == target or lang.startswith(target + "-"))):
            continue
        yield Entry(first[1], text, Pair(first[0], lang), origin, (context or notes).strip(), document, first[2], tags,
                    created, max(changed, tuv_changed))


# --- writing -------------------------------------------------------------------------------------

def _seg(parent: etree._Element, text: str, tags: list[Tag]) -> None:
    """A <seg> of `text` with `tags` at their positions: pairs as bpt/ept with one i per pair, a half without
    its other half as it, standalone tags as ph."""
    seg = etree.SubElement(parent, "seg")
    opened = {t.id for t in tags if t.kind == "open"}
    closed = {t.id for t in tags if t.kind == "close"}
    numbers: dict[str, int] = {}
    last: etree._Element | None = None
    cursor = 0
    for tag in sorted(tags, key=lambda t: t.position):  # stable: tags at one position keep their order
        position = min(max(tag.position, cursor), len(text))
        chunk = text[cursor:position]
        if last is None:
            seg.text = (seg.text or "") + chunk
        else:
            last.tail = (last.tail or "") + chunk
        cursor = position
        paired = tag.id in opened and tag.id in closed
        if tag.kind in ("open", "close") and paired:
            number = numbers.setdefault(tag.id, len(numbers) + 1)
            last = etree.SubElement(seg, "bpt" if tag.kind == "open" else "ept", i=str(number))
        elif tag.kind in ("open", "close"):
            last = etree.SubElement(seg, "it", pos="begin" if tag.kind == "open" else "end")
        else:
            last = etree.SubElement(seg, "ph")
        last.text = tag.code or None
    rest = text[cursor:]
    if last is None:
        seg.text = (seg.text or "") + rest
    else:
        last.tail = (last.tail or "") + rest


def _unit(entry: Entry) -> etree._Element:
    tu = etree.Element("tu", creationdate=_tmx_date(entry.created), changedate=_tmx_date(entry.changed))
    for kind, value in (("x-context", entry.context), ("x-origin", entry.origin), ("x-document", entry.document)):
        if value:
            etree.SubElement(tu, "prop", type=kind).text = value
    for lang, text, tags in ((entry.pair.source, entry.source, entry.source_tags),
                             (entry.pair.target, entry.target, entry.target_tags)):
        tuv = etree.SubElement(tu, "tuv")
        tuv.set(_XML_LANG, lang)
        _seg(tuv, text, tags)
    return tu


def write_tmx(path: Path | str, entries: Iterable[Entry], source_language: str, progress=None) -> int:
    """Write entries as TMX 1.4 (srclang `source_language`, "*all*" for several); the number written.
    Through a temporary file in the same folder, renamed into place: an interrupted export leaves nothing."""
    from nmt_desktop import __version__

    path = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    os.close(fd)
    written = 0
    try:
        with etree.xmlfile(temporary, encoding="UTF-8") as xf:
            xf.write_declaration()
            with xf.element("tmx", version="1.4"):
                xf.write("\n")
                xf.write(etree.Element("header", creationtool="nmt-desktop", creationtoolversion=__version__,
                                       segtype="sentence", adminlang="en", srclang=source_language,
                                       datatype="plaintext", **{"o-tmf": "nmt-desktop"}))
                xf.write("\n")
                with xf.element("body"):
                    for entry in entries:
                        xf.write("\n")
                        xf.write(_unit(entry))
                        written += 1
                        if progress:
                            progress(1)
                    xf.write("\n")
                xf.write("\n")
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return written
