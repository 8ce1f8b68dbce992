"""Reading an XLIFF file's XML safely (no DTD, no entity, nothing fetched) and writing it back in its own
encoding after its own declaration: what both XLIFF versions share."""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from nmt_desktop.core.bilingual.inline_segments import local
from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.formats.xml_parts import serialise_xml
from nmt_desktop.core.documents.safety import read_capped

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                          remove_blank_text=False)


def parse_file(path: Path) -> tuple[etree._ElementTree, bytes]:
    """The parsed tree and the file's bytes; DocumentError (one sentence) for a missing, huge, malformed or
    entity-declaring file."""
    data = read_capped(path, "an XLIFF file")
    try:
        tree = etree.fromstring(data, _PARSER).getroottree()
    except etree.XMLSyntaxError as exc:
        raise DocumentError(f"{path.name} is not well-formed XML (line {exc.lineno}: {exc.msg})") from None
    dtd = tree.docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.entities()):
        raise DocumentError(f"{path.name} declares XML entities, which XLIFF files do not need and entity attacks use")
    return tree, data


def write_file(tree: etree._ElementTree, original: bytes, path: Path) -> None:
    """The tree written as the source was (its encoding and declaration), ending in the line end it ended in."""
    data = serialise_xml(tree, original)
    end = b"\r\n" if original.endswith(b"\r\n") else b"\n" if original.endswith(b"\n") else b""
    path.write_bytes(data if data.endswith(end) else data + end)


def where(element: etree._Element, path: Path) -> str:
    """"file.xlf line 12" for messages."""
    return f"{path.name} line {element.sourceline}" if element.sourceline else path.name


def child(element: etree._Element, name: str) -> etree._Element | None:
    """The first child named `name` (any namespace)."""
    return next((c for c in element if local(c) == name), None)


def translatable(element: etree._Element) -> bool:
    """False where the element or the nearest ancestor that says so has translate="no" (both XLIFFs inherit it)."""
    node = element
    while node is not None:
        if node.get("translate") is not None:
            return node.get("translate") != "no"
        node = node.getparent()
    return True
