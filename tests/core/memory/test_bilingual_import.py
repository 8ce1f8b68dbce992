"""XLIFF and PO into the memory (core/memory/importing.py through core/bilingual's reader): confirmed segments
only, with their inline tags, written back out as TMX bpt/ept."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt_desktop.core.memory import Pair, TranslationMemory, TranslationMemoryError
from nmt_desktop.core.memory.importing import file_entries, import_files
from nmt_desktop.core.memory.tmx_file import read_tmx, write_tmx
from tests.core.bilingual.samples import write_po, write_xliff12, write_xliff20

REAL = Path(__file__).resolve().parents[2] / "real_documents" / "bilingual"


def test_xliff_gives_its_confirmed_segments_only(tmp_path):
    one = list(file_entries(write_xliff12(tmp_path), target="de"))  # 1.2 sample: only unit 2 is final
    assert [(e.source, e.target, str(e.pair)) for e in one] == [("Hello world", "Hallo Welt", "en-de")]
    two = list(file_entries(write_xliff20(tmp_path), target="de"))  # 2.0 sample: final and reviewed segments
    assert [(e.source, e.target) for e in two] == [("Done.", "Fertig."), ("The house is small.", "Das Haus ist klein.")]


def test_a_real_xliff2_file_keeps_its_tags_through_the_memory_into_tmx(tmp_path):
    """Okapi's comprehensive XLIFF 2.0 test file (tests/real_documents/bilingual/SOURCES.tsv)."""
    with TranslationMemory(tmp_path / "tm.sqlite") as memory:
        [done] = import_files(memory, [REAL / "okapi-xliff2-comprehensive.xlf"])
        assert (done.added, done.merged) == (1, 1)  # its two files hold the same confirmed segment: merged
        match = memory.search("Some source information.", Pair("en", "fr"))[0]
        assert match.exact and match.entry.target == "Certaines sources informations."
        assert [(t.kind, t.code) for t in match.entry.target_tags] == [("open", "<b>"), ("close", "</b>")]
        write_tmx(tmp_path / "out.tmx", memory.entries(), "en")
    text = (tmp_path / "out.tmx").read_text(encoding="utf-8")
    assert '<bpt i="1">&lt;b&gt;</bpt>' in text and '<ept i="1">&lt;/b&gt;</ept>' in text
    back = next(e for e in read_tmx(tmp_path / "out.tmx") if e.source == "Some source information.")
    assert [(t.kind, t.position) for t in back.target_tags] == [(t.kind, t.position) for t in match.entry.target_tags]


def test_po_gives_translated_entries_not_fuzzy_ones_and_needs_its_source_language(tmp_path):
    po = write_po(tmp_path, language="de")
    with pytest.raises(TranslationMemoryError, match="names no source language: give --source CODE"):
        list(file_entries(po))
    entries = list(file_entries(po, source="en"))
    assert [(e.source, e.target, e.context, str(e.pair)) for e in entries] == [("Open", "Öffnen", "menu", "en-de")]
