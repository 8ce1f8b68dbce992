"""The document formats the app reads and writes, each in its own module over its maintained library.

Every module here has `open_document(path) -> Document` (blocks.py). `open_document` below picks the
module by suffix after `safety.check_file` has refused hostile files (zip bombs, entity expansion, deep
nesting, a .docx that is not a zip) in one sentence, so no adapter sees one.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from nmt_desktop.core.documents.blocks import Document, DocumentError


@dataclass(frozen=True)
class FormatInfo:
    """A format: its name (messages, the formats table), suffixes, the module under formats/, the library
    that reads it, and whether it is a zip of XML parts (what safety.py checks)."""
    name: str
    suffixes: tuple[str, ...]
    module: str
    library: str
    zipped: bool


FORMATS: tuple[FormatInfo, ...] = (
    FormatInfo("Word document", (".docx",), "docx", "python-docx", True),
    FormatInfo("OpenDocument text", (".odt",), "odt", "lxml (ODF's XML in its zip)", True),
    FormatInfo("PowerPoint presentation", (".pptx",), "pptx", "python-pptx", True),
    FormatInfo("Excel workbook", (".xlsx",), "xlsx", "lxml (SpreadsheetML strings in its zip)", True),
    FormatInfo("HTML page", (".html", ".htm"), "html", "lxml.html", False),
    FormatInfo("Markdown", (".md", ".markdown"), "markdown", "markdown-it-py", False),
    FormatInfo("SubRip subtitles", (".srt",), "srt", "srt", False),
    FormatInfo("WebVTT subtitles", (".vtt",), "vtt", "webvtt-py", False),
    FormatInfo("EPUB book", (".epub",), "epub", "lxml (EPUB's XHTML in its zip)", True),
    FormatInfo("Plain text", (".txt",), "txt", "(none: UTF-8 lines)", False),
)
SUFFIXES: tuple[str, ...] = tuple(s for f in FORMATS for s in f.suffixes)


def format_of(path: str | Path) -> FormatInfo:
    """The format of a file by its suffix, or DocumentError naming the suffixes the app reads."""
    suffix = Path(path).suffix.lower()
    for info in FORMATS:
        if suffix in info.suffixes:
            return info
    raise DocumentError(f"{Path(path).name}: the app translates {', '.join(SUFFIXES)} files, not "
                        f"{suffix or 'files without a suffix'}")


def open_document(path: str | Path) -> Document:
    """The document at `path`, read by its format's module; DocumentError (one sentence) for a file that is
    missing, hostile or unreadable."""
    path = Path(path)
    info = format_of(path)
    from nmt_desktop.core.documents.safety import check_file

    check_file(path, info)
    module = importlib.import_module(f"nmt_desktop.core.documents.formats.{info.module}")
    return module.open_document(path)
