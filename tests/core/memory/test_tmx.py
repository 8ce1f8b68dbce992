"""TMX 1.4 in and out (core/memory/tmx_file.py): a hand-made file and LISA's compliance-kit file (data/README.md)
imported, looked up and exported; the export valid against the TMX 1.4 DTD and read back to the same entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from nmt_desktop.core.memory import Pair, TranslationMemory, TranslationMemoryError
from nmt_desktop.core.memory.importing import import_files
from nmt_desktop.core.memory.tmx_file import read_tmx, write_tmx

DATA = Path(__file__).parent / "data"
HAND_MADE = """<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4">
<header creationtool="hand" creationtoolversion="1" segtype="sentence" o-tmf="none" adminlang="en" srclang="en"
 datatype="html"/>
<body>
<tu creationdate="20240102T030405Z" changedate="20250102T030405Z"><prop type="x-context">menu</prop>
 <tuv xml:lang="en"><seg>Press <bpt i="1">&lt;b&gt;</bpt>Save<ept i="1">&lt;/b&gt;</ept> to keep <ph x="2">&lt;br/&gt;</ph>your work.</seg></tuv>
 <tuv xml:lang="de"><seg>Drücken Sie <bpt i="1">&lt;b&gt;</bpt>Speichern<ept i="1">&lt;/b&gt;</ept>, um <ph x="2">&lt;br/&gt;</ph>Ihre Arbeit zu behalten.</seg></tuv>
</tu>
<tu>
 <tuv xml:lang="en"><seg>The <hi>first</hi> step &amp; the last.</seg></tuv>
 <tuv xml:lang="de"><seg>Der <hi>erste</hi> Schritt &amp; der letzte.</seg></tuv>
 <tuv xml:lang="fr"><seg>La <hi>première</hi> étape &amp; la dernière.</seg></tuv>
</tu>
<tu><tuv xml:lang="en"><seg>Only one language here.</seg></tuv></tu>
</body>
</tmx>
"""


def _valid(path: Path) -> None:
    dtd = etree.DTD(str(DATA / "tmx14.dtd"))
    tree = etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True))
    assert dtd.validate(tree), dtd.error_log.filter_from_errors()


def _plain(entries):
    """What must survive a round trip: texts, pair, context, and the tags' kinds, positions and codes."""
    return sorted((e.pair.source, e.pair.target, e.source, e.target, e.context,
                   [(t.kind, t.position, t.code) for t in e.source_tags],
                   [(t.kind, t.position, t.code) for t in e.target_tags]) for e in entries)


def test_a_hand_made_tmx_imports_with_its_tags_and_exports_valid_and_equal(tmp_path):
    source = tmp_path / "hand.tmx"
    source.write_text(HAND_MADE, encoding="utf-8")
    entries = list(read_tmx(source))
    assert [(str(e.pair), e.source, e.target) for e in entries] == [
        ("en-de", "Press Save to keep your work.", "Drücken Sie Speichern, um Ihre Arbeit zu behalten."),
        ("en-de", "The first step & the last.", "Der erste Schritt & der letzte."),
        ("en-fr", "The first step & the last.", "La première étape & la dernière.")]
    first = entries[0]
    assert [(t.kind, t.name, t.position, t.code) for t in first.source_tags] == [
        ("open", "bpt", 6, "<b>"), ("close", "ept", 10, "</b>"), ("standalone", "ph", 19, "<br/>")]
    assert (first.context, first.created, first.changed) == ("menu", 1704164645, 1735787045)
    with TranslationMemory(tmp_path / "tm.sqlite") as memory:
        [done] = import_files(memory, [source])
        assert (done.added, done.merged) == (3, 0)
        match = memory.search("Press Save to keep all your work.", Pair("en", "de"))[0]
        assert match.entry.target == first.target and [d.describe() for d in match.differences] == ["+all"]
        out = tmp_path / "out.tmx"
        assert write_tmx(out, memory.entries(), "en") == 3
    _valid(out)
    again = list(read_tmx(out))
    assert _plain(again) == _plain(entries)
    assert {e.origin for e in again} == {"file"} and {e.document for e in again} == {"hand.tmx"}
    exported = out.read_text(encoding="utf-8")
    assert '<bpt i="1">&lt;b&gt;</bpt>Save<ept i="1">&lt;/b&gt;</ept>' in exported
    assert "<ph>&lt;br/&gt;</ph>your work." in exported


def test_the_lisa_compliance_kit_unit_round_trips(tmp_path):
    """ImportTest2C: it, bpt/ept, a ph holding a sub, hi, comments, notes and a DOCTYPE naming the DTD."""
    entries = list(read_tmx(DATA / "ImportTest2C.tmx"))
    assert sorted(str(e.pair) for e in entries) == ["en-us-en-gb", "en-us-fr"]
    fr = next(e for e in entries if e.pair.target == "fr")
    assert (fr.source, fr.target) == ("Click  to start.", "Cliquez  pour commencer.")
    assert [(t.kind, t.name, t.code) for t in fr.target_tags] == [
        ("standalone", "it", "<I>"), ("open", "bpt", "<B>"), ("standalone", "ph", '<IMG SRC="here.png" ALT="Commencez ici !">'),
        ("open", "hi", ""), ("close", "hi", ""), ("close", "ept", "</B>")]
    assert fr.context == "Text of tu note 1 Text of tu note 2"
    with TranslationMemory(tmp_path / "tm.sqlite") as memory:
        import_files(memory, [DATA / "ImportTest2C.tmx"])
        assert memory.search("Click  to start.", Pair("en", "fr"))[0].entry.target == "Cliquez  pour commencer."
        write_tmx(tmp_path / "out.tmx", memory.entries(), "en-us")
    _valid(tmp_path / "out.tmx")
    assert _plain(read_tmx(tmp_path / "out.tmx")) == _plain(entries)
    assert [e.target for e in read_tmx(DATA / "ImportTest2C.tmx", "en", "fr")] == ["Cliquez  pour commencer."]


@pytest.mark.parametrize("text, message", [
    ('<?xml version="1.0"?><!DOCTYPE tmx [<!ENTITY a "aaaa">]><tmx version="1.4"><body>&a;</body></tmx>',
     "declares XML entities"),
    ('<tmx version="1.4"><header srclang="en"/><body>\n<tu><tuv xml:lang="en"><seg>a</seg></tuv>\n<tuv><seg>b</seg></tuv></tu></body></tmx>',
     "line 3: a <tuv> without xml:lang"),
    ('<tmx version="1.4"><body>\n<tu><tuv xml:lang="en"><seg>a</seg></tuv></tu>\n</bod></tmx>', "line 3: not well-formed"),
])
def test_bad_files_are_refused_in_one_sentence_naming_file_and_line(tmp_path, text, message):
    path = tmp_path / "bad.tmx"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TranslationMemoryError, match=message) as caught:
        list(read_tmx(path))
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_an_unpaired_tag_end_is_written_as_it(tmp_path):
    from nmt_desktop.core.memory import Entry, Tag

    entry = Entry("Bold starts here", "Fett beginnt hier", Pair("en", "de"),
                  source_tags=[Tag("open", "7", "g", 0, "<b>")], target_tags=[Tag("close", "7", "g", 17, "</b>")])
    write_tmx(tmp_path / "out.tmx", [entry], "en")
    _valid(tmp_path / "out.tmx")
    text = (tmp_path / "out.tmx").read_text(encoding="utf-8")
    assert '<it pos="begin">&lt;b&gt;</it>Bold starts here' in text and 'Fett beginnt hier<it pos="end">' in text
