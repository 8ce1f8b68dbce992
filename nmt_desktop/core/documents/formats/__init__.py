"""The document formats the app reads and writes, each in its own module over its maintained library.

Every module here has `open_document(path) -> Document` (blocks.py). `open_document` below picks the
module by suffix after `safety.check_file` has refused hostile files (zip bombs, entity expansion, deep
nesting, a .docx that is not a zip) in one sentence, so no adapter sees one.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from nmt_desktop.core.documents.blocks import Document, DocumentError
# the table of formats lives apart, so that safety.py can read it without importing this package back
from nmt_desktop.core.documents.format_table import FORMATS, SUFFIXES, FormatInfo  # noqa: F401


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
    name = info.module if "." in info.module else f"nmt_desktop.core.documents.formats.{info.module}"
    module = importlib.import_module(name)
    return module.open_document(path)
