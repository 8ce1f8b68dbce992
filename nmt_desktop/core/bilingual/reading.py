"""`read_bilingual`: any bilingual file (.xlf/.xliff in XLIFF 1.2 or 2.x, .po/.pot) as units; and
`open_document`, the same file as translate-file's Document (format_table.py names this module)."""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from nmt_desktop.core.bilingual.bilingual_document import BilingualDocument
from nmt_desktop.core.bilingual.units import BilingualFile
from nmt_desktop.core.documents.blocks import DocumentError

XLIFF_SUFFIXES = (".xlf", ".xliff")
PO_SUFFIXES = (".po", ".pot")
BILINGUAL_SUFFIXES = XLIFF_SUFFIXES + PO_SUFFIXES


def read_bilingual(path: str | Path) -> BilingualFile:
    """The units of a bilingual file, its languages and format; DocumentError (one sentence) for a file
    that is missing, hostile, malformed or of another kind."""
    return open_document(path).file


def open_document(path: str | Path) -> BilingualDocument:
    """The file as a Document whose blocks are the segments to fill (bilingual_document.py)."""
    from nmt_desktop.core.documents.formats import format_of
    from nmt_desktop.core.documents.safety import check_file

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in BILINGUAL_SUFFIXES:
        raise DocumentError(f"{path.name}: bilingual files are {', '.join(BILINGUAL_SUFFIXES)}, not "
                            f"{suffix or 'files without a suffix'}")
    check_file(path, format_of(path))
    if suffix in PO_SUFFIXES:
        from nmt_desktop.core.bilingual import po

        return po.open_document(path)
    if _xliff_version(path).startswith("2."):
        from nmt_desktop.core.bilingual import xliff2

        return xliff2.open_document(path)
    from nmt_desktop.core.bilingual import xliff1

    return xliff1.open_document(path)


def _xliff_version(path: Path) -> str:
    """The root's version attribute, read from the first element only ("" when unreadable: the 1.2 reader
    then says what is wrong)."""
    try:
        with path.open("rb") as stream:
            for _event, element in etree.iterparse(stream, events=("start",), resolve_entities=False,
                                                   no_network=True, load_dtd=False):
                return element.get("version", "")
    except (etree.XMLSyntaxError, OSError):
        return ""
    return ""
