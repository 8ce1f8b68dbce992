"""Bilingual files (issue 44): XLIFF 1.2, XLIFF 2.x and PO/POT read as units of source and target, and
translated through the document pipeline with their targets filled, their confirmed units kept.

`read_bilingual(path)` is the reader the translation memory and the desk use; each format's module also
holds its `Document` (core/documents/blocks.py), which `translate-file` opens by suffix (format_table.py).
"""

from nmt_desktop.core.bilingual.reading import BILINGUAL_SUFFIXES, read_bilingual
from nmt_desktop.core.bilingual.units import BilingualFile, BilingualUnit, InlineTag

__all__ = ["BILINGUAL_SUFFIXES", "BilingualFile", "BilingualUnit", "InlineTag", "read_bilingual"]
