"""The fidelity check every format must pass (issue 42): a source document and its translation compared with the
format's own library (or lxml on the package's parts), independently of the app's adapters.

Per text-bearing part: the output reopens; the same elements (a multiset of the tags that carry structure, links
and inline formatting); every link target kept (and, in Office files, every r:id resolving in the part's rels);
no text segment (a paragraph, cell, cue, line) left as it was in the source, since a run that succeeds reports the
whole document translated; the other zip members byte for byte where the adapter claims so. Subtitles: the same
cues, numbers, timings, tags and speaker dashes, and no line much longer than the source's.

`compare(source, output) -> Fidelity`, each broken check one sentence (`Broken.kind`, `Broken.sentence`). Used by
tests/core/documents/test_real_documents.py (fake translation, in process) and benchmarks/real_documents.py
(the real CLI and model).
"""

from __future__ import annotations

import codecs
import io
import re
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lxml import etree

KINDS = ("reopen", "elements", "links", "untranslated", "members", "cues")
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
XLINK = "http://www.w3.org/1999/xlink"
HYPERLINK_REL = R + "/hyperlink"
# what a right refusal names (SOURCES.tsv's `expect`): an encrypted file is called encrypted, not "not a zip archive"
REFUSAL_REASONS = {"refuse-encrypted": r"encrypt|password",
                   "refuse-malformed": r"truncated|damaged|not a zip|malformed|not well-formed|corrupt|cannot be read"}
MIN_WORDS = 3  # a segment of fewer words (a name, a number, "OK") may rightly stay as it is
SUBTITLE_LINE = 42  # the usual subtitle line limit; a longer source line sets the file's own


@dataclass(frozen=True)
class Broken:
    """One failed check: its kind (one of KINDS) and one sentence saying what broke, where."""
    kind: str
    sentence: str


@dataclass
class Fidelity:
    """The checks of one source/output pair: how many ran and which broke."""
    file: str
    checks: int = 0
    broken: list[Broken] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.broken

    def kinds(self) -> Counter:
        return Counter(b.kind for b in self.broken)

    def summary(self) -> str:
        return "; ".join(b.sentence for b in self.broken) or "all checks pass"


@dataclass
class Part:
    """What one text-bearing part holds: element counts, link targets, text segments, and dangling r:ids."""
    elements: Counter = field(default_factory=Counter)
    links: Counter = field(default_factory=Counter)
    texts: list[str] = field(default_factory=list)
    dangling: list[str] = field(default_factory=list)


@dataclass
class Snapshot:
    parts: dict[str, Part]
    members: dict[str, bytes] | None = None  # zip members, for the byte-for-byte check
    same_members: Callable[[str], bool] | None = None  # which members the adapter leaves byte for byte
    cues: list[tuple] | None = None  # subtitles: (index or id, start, end) per cue
    max_line: int = 0


# ---------------------------------------------------------------- shared helpers

def _local(el) -> str:
    tag = el.tag if isinstance(el.tag, str) else ""
    return tag.rsplit("}", 1)[-1]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _translatable(text: str) -> bool:
    return len(re.findall(r"[^\W\d_]{2,}", text)) >= MIN_WORDS and not re.match(r"^(https?://|www\.)\S+$", text)


def _own_text(el, paragraphs: set, skip: set, text_tags: set | None = None) -> str:
    """The text of a paragraph-like element without the text of paragraphs nested in it (a text box in a
    paragraph, a list in a list item) nor of `skip`ped elements (code, deleted text, field instructions).
    With `text_tags`, only the text of those elements counts (OOXML: w:t, a:t, t)."""
    out: list[str] = []

    def walk(node, top: bool) -> None:
        if not top:
            if node.tag in paragraphs or node.tag in skip or not isinstance(node.tag, str):
                return
        if text_tags is None or node.tag in text_tags:
            out.append(node.text or "")
        for child in node:
            walk(child, False)
            if text_tags is None and child.tail:
                out.append(child.tail)

    walk(el, True)
    return _norm("".join(out))


def _segments(root, paragraphs: set, skip: set, text_tags: set | None = None) -> list[str]:
    texts = []
    for el in root.iter(*paragraphs):
        if any(a.tag in skip for a in el.iterancestors()):
            continue
        text = _own_text(el, paragraphs, skip, text_tags)
        if text:
            texts.append(text)
    return texts


def _parse_xml(data: bytes):
    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True))


def _rels(members: dict[str, bytes], part: str) -> dict[str, tuple[str, str]]:
    """A part's relationships: id -> (type, target)."""
    p = PurePosixPath(part)
    name = str(p.parent / "_rels" / (p.name + ".rels"))
    if name not in members:
        return {}
    root = _parse_xml(members[name])
    return {r.get("Id"): (r.get("Type", ""), r.get("Target", "")) for r in root.iter(f"{{{PKG_REL}}}Relationship")}


def _zip_members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist() if not i.is_dir()}


def decode(data: bytes, html: bool = False) -> str:
    """Text bytes as a reader would take them: a BOM, else (HTML) a declared charset that decodes, else UTF-8,
    else the best guess of charset-normalizer."""
    for bom, codec in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                       (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return data.decode(codec)
    candidates = []
    if html:
        m = re.search(rb"""charset\s*=\s*["']?([\w:.-]+)""", data[:200_000], re.I)
        if m:
            candidates.append(m.group(1).decode("ascii", "replace"))
    candidates.append("utf-8")
    for codec in candidates:
        try:
            return data.decode(codec)
        except (LookupError, UnicodeDecodeError):
            continue
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    return str(best) if best is not None else data.decode("latin-1")


# ---------------------------------------------------------------- Office Open XML

def _docx_part(root, rels) -> Part:
    w = lambda t: f"{{{W}}}{t}"  # noqa: E731
    part = Part()
    for t in ("p", "tbl", "tc", "hyperlink", "footnoteReference", "endnoteReference", "ins", "del", "br", "fldSimple",
              "fldChar", "bookmarkStart", "txbxContent", "drawing", "sdt", "commentReference", "sym", "ruby"):
        part.elements[f"w:{t}"] = sum(1 for _ in root.iter(w(t)))
    part.elements["w:tab in runs"] = sum(1 for t in root.iter(w("tab")) if t.getparent().tag == w("r"))
    for ins in root.iter(w("ins")):
        part.elements["w:ins with text"] += any((t.text or "").strip() for t in ins.iter(w("t")))
    for va in root.iter(w("vertAlign")):
        run = va.getparent().getparent()
        if run.tag == w("r") and any((t.text or "").strip() for t in run.iter(w("t"))):
            part.elements[f"{va.get(w('val'))} runs with text"] += 1
    for h in root.iter(w("hyperlink")):
        rid = h.get(f"{{{R}}}id")
        if rid:
            if rid in rels:
                part.links[rels[rid][1]] += 1
            else:
                part.dangling.append(rid)
        if h.get(w("anchor")):
            part.links["#" + h.get(w("anchor"))] += 1
    for instr in root.iter(w("instrText")):
        m = re.search(r'HYPERLINK\s+"([^"]+)"', instr.text or "")
        if m:
            part.links[m.group(1)] += 1
    # field results (page numbers, dates, a TOC) are the app's verbatim text: out of the segments
    work = etree.fromstring(etree.tostring(root))
    depth, in_result, drop = 0, [], []
    for el in work.iter(w("fldChar"), w("t")):
        if el.tag == w("fldChar"):
            kind = el.get(w("fldCharType"))
            if kind == "begin":
                depth += 1
                in_result.append(False)
            elif kind == "separate" and in_result:
                in_result[-1] = True
            elif kind == "end" and in_result:
                in_result.pop()
                depth -= 1
        elif any(in_result):
            drop.append(el)
    for el in drop:
        el.text = ""
    for simple in work.iter(w("fldSimple")):
        for t in simple.iter(w("t")):
            t.text = ""
    part.texts = _segments(work, {w("p")}, {f"{{{MC}}}Fallback"}, {w("t")})
    return part


def _pptx_part(root, rels) -> Part:
    a = lambda t: f"{{{A}}}{t}"  # noqa: E731
    part = Part()
    for t in ("p", "tc", "hlinkClick", "hlinkMouseOver", "br", "fld", "tbl"):
        part.elements[f"a:{t}"] = sum(1 for _ in root.iter(a(t)))
    for rpr in root.iter(a("rPr")):
        baseline = int(rpr.get("baseline", "0") or 0)
        run = rpr.getparent()
        if baseline and run.tag == a("r") and (run.findtext(a("t")) or "").strip():
            part.elements["superscript runs with text" if baseline > 0 else "subscript runs with text"] += 1
    for h in list(root.iter(a("hlinkClick"))) + list(root.iter(a("hlinkMouseOver"))):
        rid = h.get(f"{{{R}}}id")
        if rid:
            if rid in rels:
                part.links[rels[rid][1]] += 1
            else:
                part.dangling.append(rid)
    work = etree.fromstring(etree.tostring(root))
    for fld in work.iter(a("fld")):  # slide numbers and dates
        for t in fld.iter(a("t")):
            t.text = ""
    part.texts = _segments(work, {a("p")}, {f"{{{MC}}}Fallback"}, {a("t")})
    return part


def _docx(path: Path) -> Snapshot:
    import docx

    docx.Document(str(path))  # reopens with python-docx
    members = _zip_members(path)
    names = [n for n in members if re.fullmatch(r"word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml", n)]
    parts = {n: _docx_part(_parse_xml(members[n]), _rels(members, n)) for n in names}
    return Snapshot(parts, members, lambda n: not n.endswith((".xml", ".rels")))


def _pptx(path: Path) -> Snapshot:
    import pptx

    pptx.Presentation(str(path))
    members = _zip_members(path)
    names = [n for n in members if re.fullmatch(r"ppt/(slides/slide|notesSlides/notesSlide)\d+\.xml", n)]
    parts = {n: _pptx_part(_parse_xml(members[n]), _rels(members, n)) for n in names}
    return Snapshot(parts, members, lambda n: not n.endswith((".xml", ".rels")))


def _xlsx(path: Path) -> Snapshot:
    import openpyxl

    openpyxl.load_workbook(path, rich_text=True).close()
    members = _zip_members(path)
    s = lambda t: f"{{{S}}}{t}"  # noqa: E731
    parts = {}
    for name, data in members.items():
        if name == "xl/sharedStrings.xml" or re.fullmatch(r"xl/worksheets/sheet\d+\.xml", name):
            root = _parse_xml(data)
            part = Part()
            items = list(root.iter(s("si"), s("is")))
            part.elements["strings"] = len(items)
            part.elements["rich-text runs"] = sum(1 for i in items for _ in i.iter(s("r")))
            part.elements["phonetic runs"] = sum(1 for i in items for _ in i.iter(s("rPh")))
            part.elements["in-cell line breaks"] = sum(
                (t.text or "").count("\n") for i in items for t in i.iter(s("t")) if t.getparent().tag != s("rPh"))
            for i in items:
                text = "".join(t.text or "" for t in i.iter(s("t")) if t.getparent().tag != s("rPh"))
                if _norm(text):
                    part.texts.append(_norm(text))
            for hf in root.iter(s("oddHeader"), s("oddFooter"), s("evenHeader"), s("evenFooter"), s("firstHeader"),
                                s("firstFooter")):
                part.elements["header/footer"] += 1
                codes = r'&"[^"]*"|&K[0-9A-Fa-f]{6}|&K\d\d[+-]\d{3}|&\d+|&[A-Z]'
                for piece in re.split(codes, (hf.text or "").replace("&&", "&")):
                    piece = _norm(piece)
                    if piece:
                        part.texts.append(piece)
            if part.elements["strings"] or part.elements["header/footer"]:
                parts[name] = part
        elif re.fullmatch(r"xl/drawings/drawing\d+\.xml", name):
            parts[name] = _pptx_part(_parse_xml(data), _rels(members, name))  # text boxes: DrawingML
    return Snapshot(parts, members, lambda n: n not in parts and not n.startswith("docProps/"))


# ---------------------------------------------------------------- ODF and (X)HTML

ODF_PARAS = {f"{{{TEXT}}}p", f"{{{TEXT}}}h"}
ODF_ELEMENTS = ("p", "h", "a", "span", "note", "line-break", "tab", "list-item", "bookmark", "bookmark-start",
                "sequence", "user-field-get", "date", "page-number", "title")


def _odt(path: Path) -> Snapshot:
    members = _zip_members(path)
    parts = {}
    for name in ("content.xml", "styles.xml"):
        if name not in members:
            continue
        root = _parse_xml(members[name])
        part = Part()
        for t in ODF_ELEMENTS:
            part.elements[f"text:{t}"] = sum(1 for _ in root.iter(f"{{{TEXT}}}{t}"))
        for t in ("{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}frame",
                  "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}table-cell",
                  "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}annotation"):
            part.elements[t.split("}")[1]] = sum(1 for _ in root.iter(t))
        for a in root.iter(f"{{{TEXT}}}a"):
            part.links[a.get(f"{{{XLINK}}}href", "")] += 1
        fields = {f"{{{TEXT}}}{t}" for t in ("page-number", "date", "time", "user-field-get", "sequence",
                                             "note-citation", "bookmark-ref", "page-count")}
        part.texts = _segments(root, ODF_PARAS, fields)
        parts[name] = part
    for name, data in members.items():
        if name.endswith(".xml") and name not in parts and data.strip():
            _parse_xml(data)  # every XML member still parses
    return Snapshot(parts, members, lambda n: n not in parts and n not in ("META-INF/manifest.xml", "meta.xml"))


HTML_ELEMENTS = ("a", "sub", "sup", "i", "em", "b", "strong", "abbr", "time", "code", "kbd", "var", "span", "img",
                 "br", "p", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "table", "q", "cite", "mark",
                 "small", "u", "s", "dfn", "ruby", "blockquote", "pre", "title")
HTML_PARAS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "td", "th", "dt", "dd", "caption", "figcaption",
              "blockquote", "div", "title", "body", "section", "article", "header", "footer", "nav", "aside", "main",
              "label", "button", "option", "legend", "summary", "address", "center", "font-block"}
HTML_SKIP = {"script", "style", "pre", "code", "kbd", "samp", "var", "noscript", "svg", "math", "template"}


def _html_tree_part(root) -> Part:
    """An HTML or XHTML tree, its tags compared by local name."""
    for el in root.iter():
        if isinstance(el.tag, str) and "}" in el.tag:
            el.tag = _local(el)
    part = Part()
    for t in HTML_ELEMENTS:
        part.elements[f"<{t}>"] = sum(1 for _ in root.iter(t))
    for a in root.iter("a"):
        if a.get("href") is not None:
            part.links[a.get("href")] += 1
    for img in root.iter("img"):
        part.links[img.get("src", "")] += 1
        if _norm(img.get("alt", "")):
            part.texts.append(_norm(img.get("alt", "")))
    part.texts += _segments(root, HTML_PARAS, HTML_SKIP | {"head"} - {"title"})
    title = root.find(".//title")
    if title is not None and _norm(title.text or ""):
        part.texts.append(_norm(title.text or ""))
    return part


def _html(path: Path) -> Snapshot:
    import lxml.html

    text = decode(path.read_bytes(), html=True)
    text = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)  # lxml refuses a str with an encoding declaration
    root = lxml.html.document_fromstring(text or "<html></html>")
    return Snapshot({"text": _html_tree_part(root)})


def _epub(path: Path) -> Snapshot:
    members = _zip_members(path)
    parts = {}
    for name, data in members.items():
        if name.startswith("__MACOSX/"):  # AppleDouble resource forks, not the book
            continue
        if name.endswith((".xhtml", ".html", ".htm")) or (name.endswith(".xml") and b"<html" in data[:2000]):
            parts[name] = _html_tree_part(_parse_xml(data))
        elif name.endswith((".opf", ".ncx")):
            root = _parse_xml(data)
            part = Part()
            labels = {"title", "text"}  # dc:title, an NCX label
            part.texts = [_norm(e.text or "") for e in root.iter() if _local(e) in labels and _norm(e.text or "")]
            part.elements["items"] = sum(1 for e in root.iter() if _local(e) in ("item", "itemref", "navPoint"))
            parts[name] = part
    return Snapshot(parts, members, lambda n: n not in parts)


# ---------------------------------------------------------------- Markdown, subtitles, text

def _markdown(path: Path) -> Snapshot:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(decode(path.read_bytes()))
    part = Part()
    for tok in tokens:
        if tok.type in ("fence", "code_block"):
            part.elements[f"{tok.type} (same content)"] += 1
            part.links["code block: " + tok.content[:60]] += 1
        elif tok.type.endswith("_open") or tok.type in ("html_block", "hr"):
            part.elements[tok.type] += 1
        if tok.type != "inline":
            continue
        out = []
        for child in tok.children or []:
            if child.type.endswith("_open") or child.type in ("html_inline", "image", "code_inline", "hardbreak"):
                part.elements[child.type] += 1
            if child.type == "link_open":
                part.links[child.attrs.get("href", "")] += 1
            elif child.type == "image":
                part.links[child.attrs.get("src", "")] += 1
            elif child.type == "code_inline":
                part.links["`" + child.content + "`"] += 1  # a code span comes back as it was
                out.append(" ")
            elif child.type == "text":
                out.append(child.content)
            elif child.type == "softbreak":
                out.append(" ")
        if _norm("".join(out)):
            part.texts.append(_norm("".join(out)))
    return Snapshot({"text": part})


SUB_TAG = re.compile(r"</?(?:i|b|u|font|v|c|ruby|rt|lang)\b[^>]*>|<\d\d:[\d:.]+>|\{\\[^}]*\}", re.I)
DASH = re.compile(r"^\s*(?:<[^>]+>)*\s*[-–—]\s")


def _cue_part(texts: list[str], part: Part) -> int:
    longest = 0
    for text in texts:
        lines = text.split("\n")
        part.elements["speaker dashes"] += sum(1 for line in lines if DASH.match(line))
        for tag in SUB_TAG.findall(text):
            key = "<timestamp>" if re.match(r"<\d", tag) else re.sub(r"[\s.].*|>", "", tag.lower()) + ">"
            part.elements[key] += 1
        longest = max([longest] + [len(SUB_TAG.sub("", line)) for line in lines])
        plain = _norm(SUB_TAG.sub("", text))
        if plain:
            part.texts.append(plain)
    return longest


def _srt(path: Path) -> Snapshot:
    import srt

    subs = list(srt.parse(decode(path.read_bytes()), ignore_errors=False))
    part = Part()
    part.elements["cues"] = len(subs)
    longest = _cue_part([s.content for s in subs], part)
    return Snapshot({"text": part}, cues=[(s.index, s.start, s.end) for s in subs], max_line=longest)


def _vtt(path: Path) -> Snapshot:
    import webvtt

    vtt = webvtt.from_buffer(io.StringIO(decode(path.read_bytes())))
    part = Part()
    part.elements["cues"] = len(vtt.captions)
    longest = _cue_part([c.raw_text for c in vtt.captions], part)
    return Snapshot({"text": part}, cues=[(c.identifier, c.start, c.end) for c in vtt.captions], max_line=longest)


def _txt(path: Path) -> Snapshot:
    lines = decode(path.read_bytes()).splitlines()
    part = Part()
    part.elements["lines"] = len(lines)
    part.texts = [_norm(line) for line in lines if _norm(line)]
    return Snapshot({"text": part})


READERS: dict[str, Callable[[Path], Snapshot]] = {
    ".docx": _docx, ".pptx": _pptx, ".xlsx": _xlsx, ".odt": _odt, ".epub": _epub, ".html": _html, ".htm": _html,
    ".md": _markdown, ".markdown": _markdown, ".srt": _srt, ".vtt": _vtt, ".txt": _txt}


def snapshot(path: Path) -> Snapshot:
    return READERS[path.suffix.lower()](path)


# ---------------------------------------------------------------- the comparison

def _diff(before: Counter, after: Counter) -> str:
    keys = sorted(k for k in set(before) | set(after) if before[k] != after[k])
    return ", ".join(f"{k} {before[k]} -> {after[k]}" for k in keys)


def compare(source: Path, output: Path) -> Fidelity:
    """Every check of `output` (the translation) against `source`; a source the checker cannot read is itself
    reported (kind "reopen"), so a corpus file is never silently skipped."""
    result = Fidelity(source.name)
    try:
        before = snapshot(source)
    except Exception as exc:  # noqa: BLE001 - the checker's own limits are reported, not raised
        result.broken.append(Broken("reopen", f"the checker cannot read the source: {type(exc).__name__}: {exc}"))
        return result
    result.checks += 1
    try:
        after = snapshot(output)
    except Exception as exc:  # noqa: BLE001
        result.broken.append(Broken("reopen", f"the output does not reopen: {type(exc).__name__}: {exc}"))
        return result
    if after.members is not None and before.members is not None:
        result.checks += 1
        missing = sorted(set(before.members) - set(after.members))
        extra = sorted(set(after.members) - set(before.members))
        changed = sorted(n for n in before.members if n in after.members and before.same_members(n)
                         and before.members[n] != after.members[n])
        for what, names in (("lost", missing), ("gained", extra), ("changed", changed)):
            if names:
                result.broken.append(Broken("members", f"the package {what} {len(names)} member(s) that should stay "
                                            f"as they were: {', '.join(names[:4])}"))
    for name, part in before.parts.items():
        out = after.parts.get(name)
        result.checks += 4
        if out is None:
            result.broken.append(Broken("members", f"{name} is missing from the output"))
            continue
        lost_chars = sum(t.count("\ufffd") for t in out.texts) - sum(t.count("\ufffd") for t in part.texts)
        if lost_chars > 0:  # a page read in the wrong character set and written back with what it could not decode
            result.broken.append(Broken("elements", f"{name}: {lost_chars} replacement character(s) (U+FFFD) that "
                                        "the source does not have: text decoded in the wrong character set"))
        if diff := _diff(part.elements, out.elements):
            result.broken.append(Broken("elements", f"{name}: {diff}"))
        lost = part.links - out.links
        if lost:
            result.broken.append(Broken("links", f"{name}: {sum(lost.values())} link target(s) or code span(s) lost, "
                                        f"e.g. {next(iter(lost))!r}"))
        if out.dangling and len(out.dangling) > len(part.dangling):
            result.broken.append(Broken("links", f"{name}: hyperlink id(s) {', '.join(out.dangling[:3])} have no "
                                        "relationship in the part's rels"))
        left = Counter(t for t in part.texts if _translatable(t)) & Counter(out.texts)
        if left:
            example = next(iter(left))
            result.broken.append(Broken("untranslated", f"{name}: {sum(left.values())} text segment(s) left as the "
                                        f"source though the run reported the document translated, e.g. "
                                        f"{example[:70]!r}"))
    if before.cues is not None:
        result.checks += 2
        if [c[1:] for c in before.cues] != [c[1:] for c in (after.cues or [])]:
            result.broken.append(Broken("cues", f"the cues' timings changed ({len(before.cues)} cues -> "
                                        f"{len(after.cues or [])})"))
        elif [c[0] for c in before.cues] != [c[0] for c in after.cues]:
            bad = next(a[0] for b, a in zip(before.cues, after.cues) if b[0] != a[0])
            result.broken.append(Broken("cues", f"the cue numbers or identifiers changed (e.g. {bad!r})"))
        limit = max(SUBTITLE_LINE, before.max_line) + 10
        if after.max_line > limit:
            result.broken.append(Broken("cues", f"a subtitle line of {after.max_line} characters (the source's "
                                        f"longest is {before.max_line}; at most {limit} expected)"))
    return result
