"""XLIFF and PO into the memory (core/memory/importing.py through core/bilingual's reader): confirmed segments
only, with their inline tags, written back out as TMX bpt/ept."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt_desktop.core.memory import Pair, TranslationMemory, TranslationMemoryError
from nmt_desktop.core.memory.importing import file_entries, import_files
from nmt_desktop.core.memory.tmx_file import read_tmx, write_tmx
from tests.core.bilingual.samples import write_po

XLIFF12 = """<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file original="app.html" source-language="en" target-language="de" datatype="html"><body>
  <trans-unit id="1"><source>Click <g id="1">here</g>.</source></trans-unit>
  <trans-unit id="2" approved="yes"><source>Hello world</source><target state="final">Hallo Welt</target></trans-unit>
  <trans-unit id="3"><source>I have a dog.</source><target state="translated">Ich habe einen Hund.</target></trans-unit>
  <trans-unit id="4"><source>Press <g id="1">Save</g>.</source><target state="signed-off">Drücken Sie <g id="1">Speichern</g>.</target></trans-unit>
 </body></file>
</xliff>
"""
XLIFF20 = """<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="de">
 <file id="f1">
  <unit id="u1"><segment id="s1"><source>Save now.</source></segment>
   <segment id="s2" state="final"><source>Done.</source><target>Fertig.</target></segment></unit>
  <unit id="u2"><segment state="reviewed"><source>The house is small.</source><target>Das Haus ist klein.</target></segment></unit>
  <unit id="u3"><segment state="translated"><source>Not yet.</source><target>Noch nicht.</target></segment></unit>
 </file>
</xliff>
"""

REAL = Path(__file__).resolve().parents[2] / "real_documents" / "bilingual"


def test_xliff_gives_its_confirmed_segments_only(tmp_path):
    (tmp_path / "one.xlf").write_text(XLIFF12, encoding="utf-8")
    one = list(file_entries(tmp_path / "one.xlf"))
    assert [(e.source, e.target, str(e.pair)) for e in one] == [("Hello world", "Hallo Welt", "en-de"),
                                                                 ("Press Save.", "Drücken Sie Speichern.", "en-de")]
    assert [(t.kind, t.position) for t in one[1].target_tags] == [("open", 12), ("close", 21)]
    (tmp_path / "two.xlf").write_text(XLIFF20, encoding="utf-8")
    two = list(file_entries(tmp_path / "two.xlf"))
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
