"""The translation memory (issue 44): confirmed source/target segments per language pair in one SQLite file,
found again exactly (a hash index) or fuzzily (word postings for candidates, rapidfuzz for the score and what
differs). TMX in and out (tmx_file.py); XLIFF and PO in through core/bilingual's reader (importing.py).

Issue 45's adaptation reads it through `TranslationMemory.search(text, pair, limit)`: the top matches of one
source sentence with their targets, per pair, in a few milliseconds at a million segments.
"""

from nmt_desktop.core.memory.entries import Entry, TranslationMemoryError, Pair, Tag
from nmt_desktop.core.memory.fuzzy import Difference, Match
from nmt_desktop.core.memory.store import TranslationMemory, default_memory_path

__all__ = ["Difference", "Entry", "Match", "TranslationMemoryError", "Pair", "Tag", "TranslationMemory", "default_memory_path"]
