"""Refusing hostile or unreadable files before any format's library opens them.

Libraries that read documents (python-docx, python-pptx, lxml) trust their input: a zip bomb fills the disk
or memory, an XML entity bomb ("billion laughs") or external entity (XXE) expands or leaks, and deeply
nested elements exhaust the stack. `check_file` looks at a file with bounded work (declared zip sizes,
one streaming parse per XML part that never expands entities) and raises `DocumentError` in one sentence
naming the file and saying what is wrong (encrypted with a password, truncated, malformed, a bomb), so no
adapter ever sees such a file and nothing is written. Only what is really wrong is refused: every member
counts for a bomb, but only the members the format's adapter parses (`PARSED_PARTS`) are parsed here, so
a junk or empty member nobody reads (LibreOffice's Configurations2/accelerator/current.xml, __MACOSX
leftovers in an EPUB) is copied as it is; text is read in its own encoding (text_encoding.py).
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import IO
from urllib.parse import unquote

from lxml import etree

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.format_table import FormatInfo
from nmt_desktop.core.documents.text_encoding import BOMS, DecodedText, decode_text

MAX_BYTES = 200_000_000  # any document file
MAX_UNPACKED = 1_000_000_000  # a zip's members together, as declared (zipfile stops reading at the declared size)
MAX_RATIO = 200  # a member's uncompressed/compressed size ...
RATIO_MIN_SIZE = 5_000_000  # ... counted only for a member larger than this (small XML compresses well)
MAX_MEMBERS = 10_000
MAX_STRUCTURE = 20_000_000  # a package's own lists (relationships, container, manifest), read whole to find parts
# Deeper elements are refused. libxml2 itself stops at 256 levels (the XML parser with an error, the HTML
# one by flattening silently), so the limit sits just below it: every parse here and in the adapters
# stays bounded, and a deeper document is refused rather than read wrongly.
MAX_DEPTH = 255
HTML_SUFFIXES = (".html", ".htm")
_CHUNK = 1 << 20


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
    """The text of a text file in whatever encoding it is (text_encoding.py), a byte-order mark
    dropped, line ends as they are; DocumentError in one sentence. Shared by the text formats."""
    return read_decoded(path).text


def read_decoded(path: Path) -> DecodedText:
    """`read_text` with the encoding it found, for the adapters that write text back in it."""
    path = Path(path)
    return decode_text(read_capped(path), path.name)


def read_capped(path: Path, kind: str = "a text file") -> bytes:
    """The file's bytes, within MAX_BYTES; DocumentError in one sentence for a missing, huge, unreadable file
    or a folder (`kind`: what the file should have been, for that sentence)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise DocumentError(f"{path.name} is larger than {MAX_BYTES // 1_000_000} MB")
        return path.read_bytes()
    except FileNotFoundError:
        raise DocumentError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise DocumentError(f"{path.name} is a folder, not {kind}") from None
    except OSError as exc:
        raise DocumentError(f"cannot read {path.name}: {exc.strerror or exc}") from None


def _check_text(path: Path) -> None:
    """Refuse binary data and bytes that no encoding reads (the adapter reads the file again: text
    files are small beside the 200 MB cap's worst case)."""
    read_decoded(path)


def _check_html_file(path: Path) -> None:
    """An HTML page may declare any charset lxml decodes; only binary data (NUL bytes without a UTF-16
    byte-order mark), entity declarations and deep nesting are refused."""
    with path.open("rb") as file:
        head = file.read(4)
        if not any(head.startswith(bom) for bom, codec in BOMS if codec != "utf-8"):
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
    """Refuse a file that is not a zip (a password-protected Office file, an old binary one, a truncated
    one, each said as such), a zip bomb (by every member's declared size and ratio, which zipfile enforces
    when reading), encrypted members, and hostile or malformed XML in the members the adapter parses.
    A member nobody parses (LibreOffice's empty Configurations2/accelerator/current.xml) is no reason to
    refuse: the adapters copy it byte for byte."""
    not_it = f"{path.name} is not {_article(info.name)} {info.name}"
    with path.open("rb") as file:
        head = file.read(8)
    if head == CFB_MAGIC:
        raise _compound_file_refusal(path, info, not_it)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError):
        if head.startswith(b"PK\x03\x04"):
            raise DocumentError(f"{path.name} is truncated or damaged: its zip directory cannot be read") from None
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
                raise DocumentError(f"{path.name} is encrypted with a password ({member.filename} is "
                                    f"encrypted): save it without a password and open it again")
            ratio = member.file_size / max(member.compress_size, 1)
            if member.file_size > RATIO_MIN_SIZE and ratio > MAX_RATIO:
                raise DocumentError(f"{path.name} is a zip bomb: {member.filename} unpacks {ratio:.0f} times "
                                    f"larger than it is stored")
        package = _Package(archive, path)
        if info.module == "odt" and _odf_encrypted(package):
            raise DocumentError(f"{path.name} is encrypted with a password: save it without a password and "
                                f"open it again")
        for name in PARSED_PARTS[info.module](package):
            package.check(name)


CFB_MAGIC = bytes.fromhex("D0CF11E0A1B11AE1")  # OLE2 compound file: old .doc/.xls/.ppt, or an encrypted OOXML
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")  # the stream (a directory entry's name) of one


def _compound_file_refusal(path: Path, info: FormatInfo, not_it: str) -> DocumentError:
    """Office saves a password-protected .docx/.pptx/.xlsx as a compound file holding an EncryptedPackage
    stream (MS-OFFCRYPTO); any other compound file is the old binary format."""
    tail = b""
    with path.open("rb") as file:
        while chunk := file.read(_CHUNK):
            if _ENCRYPTED_PACKAGE in tail + chunk:
                return DocumentError(f"{path.name} is encrypted with a password: save it without a password "
                                     f"and open it again")
            tail = chunk[-len(_ENCRYPTED_PACKAGE):]
    suffix = info.suffixes[0]
    return DocumentError(f"{not_it}: it is an older binary Office file (.doc, .xls or .ppt), so save it as "
                         f"{suffix} and open it again")


def _check_member(archive: zipfile.ZipFile, path: Path, name: str) -> None:
    """One parsed member: hostile or malformed XML (HTML for .html/.htm members) refused."""
    suffix = PurePosixPath(name).suffix.lower()
    try:
        with archive.open(name) as stream:
            _check_markup(stream, html=suffix in HTML_SUFFIXES, where=f"{path.name} ({name})")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError,
            NotImplementedError) as exc:
        raise DocumentError(f"{path.name} is damaged: {name} cannot be unpacked ({exc})") from None


class _Package:
    """A zip whose members are checked before they are parsed for the names of the next ones."""

    def __init__(self, archive: zipfile.ZipFile, path: Path):
        self.archive, self.path = archive, path
        self.names = {m.filename for m in archive.infolist() if not m.is_dir()}
        self.checked: set[str] = set()

    def check(self, name: str) -> None:
        if name not in self.checked:
            _check_member(self.archive, self.path, name)
            self.checked.add(name)

    def root(self, name: str) -> etree._Element | None:
        """A member's XML root (checked first), or None when it is absent or holds no element."""
        if name not in self.names:
            return None
        self.check(name)
        size = self.archive.getinfo(name).file_size
        if size > MAX_STRUCTURE:
            raise DocumentError(f"{self.path.name} is malformed: its {name} unpacks to {size:,} bytes, "
                                f"where a package's list of parts takes a few thousand")
        try:
            return etree.fromstring(self.archive.read(name), _SAFE_PARSER)
        except etree.XMLSyntaxError:
            return None


_SAFE_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def _odf_parts(package: _Package) -> list[str]:
    """odt.py parses content.xml, styles.xml and meta.xml; the manifest is read here for encryption."""
    return [n for n in ("META-INF/manifest.xml", "content.xml", "styles.xml", "meta.xml") if n in package.names]


def _odf_encrypted(package: _Package) -> bool:
    """Whether an ODF package's manifest lists encryption data (its XML parts are then ciphertext)."""
    root = package.root("META-INF/manifest.xml")
    return root is not None and any(etree.QName(el).localname == "encryption-data"
                                    for el in root.iter() if isinstance(el.tag, str))


def _ooxml_parts(package: _Package) -> list[str]:
    """[Content_Types].xml, the relationships and every part reached through them whose content type is
    an Office XML one ("...+xml": what python-docx, python-pptx and xlsx.py parse; custom XML data, typed
    plain application/xml, stays bytes), plus the worksheets xlsx.py reads without a relationship."""
    types = package.root("[Content_Types].xml")
    defaults: dict[str, str] = {}
    overrides: dict[str, str] = {}
    for el in types if types is not None else ():
        kind = (el.get("ContentType") or "").lower()
        if el.get("Extension"):
            defaults[el.get("Extension").lower()] = kind
        elif el.get("PartName"):
            overrides[el.get("PartName").lstrip("/")] = kind
    parsed = ["[Content_Types].xml"] if types is not None else []
    queue, seen = [("", "_rels/.rels")], set()
    while queue:
        source, rels_name = queue.pop()
        if rels_name in seen or rels_name not in package.names:
            continue
        seen.add(rels_name)
        parsed.append(rels_name)
        rels = package.root(rels_name)
        for rel in rels if rels is not None else ():
            target = (rel.get("Target") or "").split("#")[0]
            if (rel.get("TargetMode") or "").lower() == "external" or not target:
                continue
            name = target.lstrip("/") if target.startswith("/") else \
                posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
            if name not in package.names or name in seen:
                continue
            seen.add(name)
            kind = overrides.get(name, defaults.get(PurePosixPath(name).suffix.lower().lstrip("."), ""))
            if kind.endswith("+xml"):
                parsed.append(name)
            folder, base = posixpath.split(name)
            queue.append((name, posixpath.join(folder, "_rels", base + ".rels")))
    parsed += [n for n in sorted(package.names) if re.fullmatch(r"xl/worksheets/[^/]+\.xml", n) and n not in seen]
    return parsed


def _epub_parts(package: _Package) -> list[str]:
    """The container, the package file it names and the manifest's XHTML and NCX documents (epub.py reads
    the spine's and the nav among them)."""
    parts = ["META-INF/container.xml"] if "META-INF/container.xml" in package.names else []
    container = package.root("META-INF/container.xml")
    rootfile = None if container is None else next(
        (el for el in container.iter() if isinstance(el.tag, str) and etree.QName(el).localname == "rootfile"), None)
    opf_name = rootfile.get("full-path") if rootfile is not None else None
    opf = package.root(opf_name) if opf_name else None
    if opf is None:
        return parts
    parts.append(opf_name)
    for item in opf.iter():
        if not isinstance(item.tag, str) or etree.QName(item).localname != "item":
            continue
        if item.get("media-type", "") in ("application/xhtml+xml", "text/html", "application/x-dtbncx+xml"):
            href = unquote(item.get("href", "").split("#")[0])
            name = posixpath.normpath(posixpath.join(posixpath.dirname(opf_name), href))
            if name in package.names and name not in parts:
                parts.append(name)
    return parts


# which members each zipped format's adapter parses, by its module name
PARSED_PARTS: dict[str, Callable[[_Package], list[str]]] = {
    "odt": _odf_parts, "docx": _ooxml_parts, "pptx": _ooxml_parts, "xlsx": _ooxml_parts, "epub": _epub_parts}


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
