"""HTML pages (.html, .htm) through lxml.html; `html_slots` is also epub.py's reader for XHTML chapters.

Every block-level element's inline content is a block (a div's or li's text between nested blocks is
cut at them, and each line between <br>s is a block of its own, the <br> staying between them); b/i/a/span... are runs' styles; code/kbd/samp/var and EPUB note references are verbatim
runs, <pre> a verbatim block; alt, title, placeholder and the meta description are blocks of their own.
script/style are never read. The file is written in the encoding it declared, with its doctype, and a
translation's <html lang> says the target language.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import lxml.html
from lxml import etree

from nmt_desktop.core.documents.blocks import Block, DocumentError, Run
from nmt_desktop.core.documents.formats.inline_tree import InlineRules, Kind, spans_of
from nmt_desktop.core.documents.formats.xml_parts import (
    Loaded,
    XML_LANG,
    Slot,
    SlotDocument,
    attr_slot,
    mark_language,
    span_slots,
)
from nmt_desktop.core.documents.text_encoding import decode_html

BLOCKS = frozenset({
    "html", "head", "body", "title", "address", "article", "aside", "blockquote", "details", "dialog", "dd",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
    "h6", "header", "hgroup", "hr", "li", "main", "nav", "ol", "p", "section", "table", "thead", "tbody",
    "tfoot", "tr", "td", "th", "caption", "ul", "summary", "button", "label", "select", "optgroup",
    "option", "datalist", "legend", "menu", "center", "noscript"})
SKIPPED = frozenset({"script", "style", "template", "svg", "math", "iframe", "object", "canvas", "textarea"})
VERBATIM = frozenset(["code", "kbd", "samp", "var", "tt"])
ATTRIBUTES = ("alt", "title", "placeholder")
EPUB_TYPE = "{http://www.idpf.org/2007/ops}type"


def local(el: etree._Element) -> str:
    """The tag without its namespace, lower case (XHTML's tags are namespaced, HTML's are not; a Word page's
    <o:p> is kept as "o:p", which lxml's QName refuses)."""
    return el.tag.rsplit("}", 1)[-1].lower() if isinstance(el.tag, str) else ""


def _kind(el: etree._Element) -> Kind:
    name = local(el)
    if name in VERBATIM or "noteref" in (el.get(EPUB_TYPE) or "").split():  # a note's number
        return "verbatim"
    if name == "br":
        return "break"  # the text on each side is a block of its own: "Name<br>Address" never reaches the model
    if name in SKIPPED or name in BLOCKS or name == "pre":
        return "atom"  # a block inside an inline element (an <a> around a <div>) moves whole
    return "chain"


RULES = InlineRules(kind=_kind)


def _splits(el: etree._Element) -> bool:
    return local(el) in BLOCKS or local(el) == "pre"


def html_slots(root: etree._Element) -> list[Slot]:
    """The blocks of an (X)HTML tree in reading order, attribute texts where their element starts."""
    slots: list[Slot] = []
    counts: dict[str, int] = {}

    def visit(el: etree._Element) -> None:
        name = local(el)
        if not name or name in SKIPPED:
            return
        for attr in ATTRIBUTES:
            if (el.get(attr) or "").strip():
                slots.append(attr_slot(el, attr, f"<{name}> {attr} text"))
        if name == "meta" and (el.get("name") or "").lower() == "description" and el.get("content"):
            slots.append(attr_slot(el, "content", "page description"))
        if name == "pre":
            counts[name] = counts.get(name, 0) + 1
            text = "".join(el.itertext())
            if text.strip():
                slots.append(Slot(Block([Run(text, None, True)], f"<pre> {counts[name]}", True),
                                  lambda t: None))
            return
        if name in BLOCKS:
            for span in spans_of(el, _splits, RULES):
                counts[name] = counts.get(name, 0) + 1
                slots.extend(span_slots(span, f"<{name}> {counts[name]}"))
        for child in el:
            visit(child)

    visit(root)
    return slots


def encoding_of(data: bytes, name: str) -> str:
    """The page's encoding as libxml2 names it (text_encoding.py decides: BOM, a declaration anywhere in
    the head, UTF-8, else detected); a UTF-16/32 page keeps its BOM through lxml's own serialiser."""
    codec = decode_html(data, name).codec
    encoding = _LIBXML2_NAMES.get(codec, codec)
    try:
        etree.HTMLParser(encoding=encoding)
    except LookupError:
        raise DocumentError(f"{name} is in the {encoding} character set, which the HTML reader cannot "
                            f"read") from None
    return encoding


# Python's codec names that libxml2 (iconv) spells otherwise; UTF-16/32 with a BOM read and written with it
_LIBXML2_NAMES = {f"cp125{i}": f"windows-125{i}" for i in range(9)} | {
    "iso8859-1": "iso-8859-1", "mac-roman": "macintosh", "mac-cyrillic": "x-mac-cyrillic",
    "utf-16-le": "utf-16", "utf-16-be": "utf-16", "utf-32-le": "utf-32", "utf-32-be": "utf-32"}


def _load(path: Path) -> Loaded:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise DocumentError(f"{path.name} cannot be read ({e.strerror})") from None
    encoding = encoding_of(data, path.name)
    parser = lxml.html.HTMLParser(encoding=encoding, no_network=True, remove_comments=False,
                                  remove_blank_text=False, huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as e:
        raise DocumentError(f"{path.name} is not a readable HTML page ({e})") from None
    if root is None:
        raise DocumentError(f"{path.name} is an empty HTML page")
    tree = root.getroottree()

    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""

    def serialise(target: Path, language: str | None) -> None:
        if language and local(root) == "html":  # the page says it is in the translation's language
            root.set("lang", language)
            mark_language(root, language, (XML_LANG,))
        target.write_bytes(bom + etree.tostring(tree, method="html", encoding=encoding))

    return html_slots(root), serialise


def open_document(path: Path) -> SlotDocument:
    return SlotDocument(Path(path), _load)
