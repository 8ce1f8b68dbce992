"""EPUB books (.epub): the XHTML content documents of the OPF spine (and the EPUB 3 nav document) read
with html.py's block logic, the OPF's dc:title and the EPUB 2 toc.ncx labels; every other member (images,
CSS, fonts, the manifest) is copied byte-identical. A translation's dc:language and its chapters' lang and
xml:lang say the target language.

Not ebooklib: its write regenerates the package (OPF, nav, ncx, ids), more change than a translation
should make.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from urllib.parse import unquote

from lxml import etree

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.formats.html import html_slots
from nmt_desktop.core.documents.formats.xml_parts import (
    Loaded,
    Slot,
    SlotDocument,
    XML_LANG,
    mark_language,
    member,
    parse_xml,
    read_zip,
    serialise_xml,
    text_slot,
    write_zip,
)

CONTAINER = "urn:oasis:names:tc:opendocument:xmlns:container"
OPF = "http://www.idpf.org/2007/opf"
NCX = "http://www.daisy.org/z3986/2005/ncx/"
DC = "http://purl.org/dc/elements/1.1/"
XHTML_TYPES = ("application/xhtml+xml", "text/html")


def _opf_path(members: dict[str, bytes], path: Path) -> str:
    container = parse_xml(member(members, "META-INF/container.xml", path, "EPUB"), f"{path.name} container")
    rootfile = container.getroot().find(f".//{{{CONTAINER}}}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise DocumentError(f"{path.name} is not a valid EPUB: its container.xml names no package file")
    return rootfile.get("full-path")


def _parts(opf: etree._Element, base: str) -> tuple[list[str], list[str]]:
    """The XHTML documents to translate in reading order (spine, then a nav outside it) and the NCX files."""
    items = {}
    for item in opf.iter(f"{{{OPF}}}item"):
        href = posixpath.normpath(posixpath.join(base, unquote(item.get("href", "").split("#")[0])))
        items[item.get("id")] = (href, item.get("media-type", ""), (item.get("properties") or "").split())
    xhtml = [items[ref.get("idref")][0] for ref in opf.iter(f"{{{OPF}}}itemref")
             if ref.get("idref") in items and items[ref.get("idref")][1] in XHTML_TYPES]
    xhtml += [href for href, _, props in items.values() if "nav" in props and href not in xhtml]
    ncx = [href for href, kind, _ in items.values() if kind == "application/x-dtbncx+xml"]
    return list(dict.fromkeys(xhtml)), ncx


def _load(path: Path) -> Loaded:
    members = read_zip(path, "EPUB")
    opf_name = _opf_path(members, path)
    opf = parse_xml(member(members, opf_name, path, "EPUB"), f"{path.name} {opf_name}")
    trees = {opf_name: opf}
    slots: list[Slot] = []
    for title in opf.getroot().iter(f"{{{DC}}}title"):
        if (title.text or "").strip():
            slots.append(text_slot(title, "book title"))
    xhtml, ncx = _parts(opf.getroot(), posixpath.dirname(opf_name))
    for name in xhtml:
        tree = trees[name] = parse_xml(member(members, name, path, "EPUB"), f"{path.name} {name}")
        for slot in html_slots(tree.getroot()):
            slot.block.where = f"{name}: {slot.block.where}"
            slots.append(slot)
    for name in ncx:
        tree = trees[name] = parse_xml(member(members, name, path, "EPUB"), f"{path.name} {name}")
        for i, text in enumerate(tree.getroot().iter(f"{{{NCX}}}text"), 1):
            if (text.text or "").strip():
                slots.append(text_slot(text, f"{name}: label {i}"))

    def serialise(target: Path, language: str | None) -> None:
        if language:  # the book and its chapters say they are in the translation's language
            for code in opf.getroot().iter(f"{{{DC}}}language"):
                code.text = language
                break
            for name in xhtml:
                root = trees[name].getroot()
                mark_language(root, language)
                if root.get("lang") is None and root.get(XML_LANG) is None:
                    root.set(XML_LANG, language)
        write_zip(path, target, {name: serialise_xml(tree, members[name]) for name, tree in trees.items()})

    return slots, serialise


def open_document(path: Path) -> SlotDocument:
    return SlotDocument(Path(path), _load)
