"""Refusing hostile or unreadable files before any format's library opens them.

Libraries that read documents (python-docx, python-pptx, lxml) trust their input: a zip bomb fills the disk
or memory, an XML entity bomb ("billion laughs") or external entity (XXE) expands or leaks, and deeply
nested elements exhaust the stack. `check_file` looks at a file with bounded work (declared zip sizes,
one streaming parse per XML part that never expands entities) and raises `DocumentError` in one sentence
naming the file, so no adapter ever sees such a file and nothing is written.
"""

from __future__ import annotations

import codecs
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from lxml import etree

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.format_table import FormatInfo

MAX_BYTES = 200_000_000  # any document file
MAX_UNPACKED = 1_000_000_000  # a zip's members together, as declared (zipfile stops reading at the declared size)
MAX_RATIO = 200  # a member's uncompressed/compressed size ...
RATIO_MIN_SIZE = 5_000_000  # ... counted only for a member larger than this (small XML compresses well)
MAX_MEMBERS = 10_000
# Deeper elements are refused. libxml2 itself stops at 256 levels (the XML parser with an error, the HTML
# one by flattening silently), so the limit sits just below it: every parse here and in the adapters
# stays bounded, and a deeper document is refused rather than read wrongly.
MAX_DEPTH = 255
XML_SUFFIXES = (".xml", ".rels", ".xhtml", ".opf", ".ncx", ".svg")
HTML_SUFFIXES = (".html", ".htm")
_CHUNK = 1 << 20
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def check_file(path: Path, info: FormatInfo) -> None:
    """DocumentError unless `path` is a readable, safe file of format `info` (see the module docstring)."""
    path = Path(path)
    if path.is_dir():
        raise DocumentError(f"{path.name} is a folder, not a {info.name} file")
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise DocumentError(f"{path} does not exist") from None
    except OSError as exc:
        raise DocumentError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    if size > MAX_BYTES:
        raise DocumentError(f"{path.name} is {size // 1_000_000} MB: the app translates documents up to "
                            f"{MAX_BYTES // 1_000_000} MB")
    if info.zipped:
        _check_zip(path, info)
    elif path.suffix.lower() in HTML_SUFFIXES:
        _check_html_file(path)
    else:
        _check_text(path)


def read_text(path: Path) -> str:
    """The text of a UTF-8 file (a byte-order mark dropped, line ends as they are), or DocumentError in
    one sentence; shared by the text formats (Markdown, subtitles, plain text)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise DocumentError(f"{path.name} is larger than {MAX_BYTES // 1_000_000} MB")
        data = path.read_bytes()
    except FileNotFoundError:
        raise DocumentError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise DocumentError(f"{path.name} is a folder, not a text file") from None
    except OSError as exc:
        raise DocumentError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    if b"\0" in data:
        raise DocumentError(f"{path.name} is not a text file (it holds binary data)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{path.name} is not UTF-8 text (byte {exc.start}): save it as UTF-8 and open "
                            f"it again") from None


def _check_text(path: Path) -> None:
    """Refuse binary or non-UTF-8 text, reading a chunk at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    with path.open("rb") as file:
        while chunk := file.read(_CHUNK):
            if b"\0" in chunk:
                raise DocumentError(f"{path.name} is not a text file (it holds binary data)")
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                raise DocumentError(f"{path.name} is not UTF-8 text (byte {offset + exc.start}): save it as "
                                    f"UTF-8 and open it again") from None
            offset += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise DocumentError(f"{path.name} is not UTF-8 text (it ends inside a character): save it as "
                                f"UTF-8 and open it again") from None


def _check_html_file(path: Path) -> None:
    """An HTML page may declare any charset lxml decodes; only binary data (NUL bytes without a UTF-16
    byte-order mark), entity declarations and deep nesting are refused."""
    with path.open("rb") as file:
        head = file.read(4)
        if not head.startswith(_BOMS[1:]):
            file.seek(0)
            tail = b""
            while chunk := file.read(_CHUNK):
                if b"\0" in chunk:
                    raise DocumentError(f"{path.name} is not an HTML page (it holds binary data)")
                if b"<!entity" in (tail + chunk).lower():  # the HTML parser ignores them; refused all the same
                    raise DocumentError(f"{path.name} declares XML entities, which pages do not need and "
                                        f"entity bombs use")
                tail = chunk[-8:]
        file.seek(0)
        _check_markup(file, html=True, where=path.name)


def _article(name: str) -> str:
    return "an" if name[:1].upper() in "AEIOU" else "a"


def _check_zip(path: Path, info: FormatInfo) -> None:
    """Refuse a file that is not a zip, a zip bomb (by declared sizes, which zipfile enforces when reading),
    encrypted members, and any hostile XML or HTML member."""
    not_it = f"{path.name} is not {_article(info.name)} {info.name}"
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError):
        raise DocumentError(f"{not_it}: it is not a zip archive") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise DocumentError(f"{not_it}: it holds {len(members)} files (more than {MAX_MEMBERS}), as a "
                                f"zip bomb does")
        total = sum(m.file_size for m in members)
        if total > MAX_UNPACKED:
            raise DocumentError(f"{path.name} unpacks to {total // 1_000_000} MB (more than "
                                f"{MAX_UNPACKED // 1_000_000} MB), as a zip bomb does")
        for member in members:
            if member.flag_bits & 0x1:
                raise DocumentError(f"{path.name} is encrypted ({member.filename}): save it without a password")
            ratio = member.file_size / max(member.compress_size, 1)
            if member.file_size > RATIO_MIN_SIZE and ratio > MAX_RATIO:
                raise DocumentError(f"{path.name} is a zip bomb: {member.filename} unpacks {ratio:.0f} times "
                                    f"larger than it is stored")
        for member in members:
            suffix = PurePosixPath(member.filename).suffix.lower()
            if member.is_dir() or suffix not in XML_SUFFIXES + HTML_SUFFIXES:
                continue
            try:
                with archive.open(member) as stream:
                    _check_markup(stream, html=suffix in HTML_SUFFIXES, where=f"{path.name} ({member.filename})")
            except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError,
                    NotImplementedError) as exc:
                raise DocumentError(f"{path.name} is damaged: {member.filename} cannot be unpacked ({exc})") from None


def _check_markup(stream: IO[bytes], html: bool, where: str) -> None:
    """One streaming parse of an XML or HTML part that never loads a DTD, resolves an entity or reaches the
    network; refuses entity declarations, elements nested deeper than MAX_DEPTH and malformed XML. Parsed
    elements are dropped as they end, so memory stays bounded."""
    depth, first = 0, True
    parser = etree.iterparse(stream, events=("start", "end"), html=html, resolve_entities=False,
                             no_network=True, load_dtd=False, huge_tree=False, remove_comments=True)
    try:
        for event, element in parser:
            if first:
                first = False
                dtd = element.getroottree().docinfo.internalDTD
                if dtd is not None and any(True for _ in dtd.entities()):
                    raise DocumentError(f"{where} declares XML entities, which documents do not need and "
                                        f"entity bombs and external-entity attacks use")
            if event == "start":
                depth += 1
                if depth > MAX_DEPTH:
                    raise DocumentError(f"{where} nests elements more than {MAX_DEPTH} deep")
            else:
                depth -= 1
                element.clear()
                while element.getprevious() is not None:
                    del element.getparent()[0]
    except etree.XMLSyntaxError as exc:
        message = str(exc)
        if "depth" in message.lower():
            raise DocumentError(f"{where} nests elements more than {MAX_DEPTH} deep") from None
        if "entit" in message.lower():
            raise DocumentError(f"{where} declares XML entities, which documents do not need and entity "
                                f"bombs use") from None
        raise DocumentError(f"{where} is not well-formed XML ({message})") from None
