"""The document formats the app reads: a row each (name, suffixes, adapter module, library, zipped).

Apart from formats/__init__.py so that safety.py (which checks a zipped format's parts) can read it while
formats/ imports safety.py: no cycle.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FormatInfo:
    """A format: its name (messages, the formats table), suffixes, the module under formats/ (or a full
    module path: the bilingual formats' in core/bilingual/, which imports core/documents/), the library
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
    # bilingual files (issue 44): their adapters live in core/bilingual/, named by full module path
    FormatInfo("XLIFF", (".xlf", ".xliff"), "nmt_desktop.core.bilingual.reading", "lxml (XLIFF 1.2 and 2.x)", False),
    FormatInfo("PO/POT", (".po", ".pot"), "nmt_desktop.core.bilingual.reading", "polib", False),
)
SUFFIXES: tuple[str, ...] = tuple(s for f in FORMATS for s in f.suffixes)
