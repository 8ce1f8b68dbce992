"""read_bilingual (issue 44): the units of XLIFF 1.2, XLIFF 2.0 and PO files, their state, context, tags and
languages, as the translation memory and the desk read them; bad files refused in one sentence."""

from __future__ import annotations

import pytest

from nmt_desktop.core.bilingual import read_bilingual
from nmt_desktop.core.documents.blocks import DocumentError
from tests.core.bilingual.samples import write_po, write_xliff12, write_xliff20


def test_xliff12_units_state_tags_and_segments(tmp_path):
    read = read_bilingual(write_xliff12(tmp_path))
    assert (read.format, read.source_language, read.target_language) == ("XLIFF 1.2", "en", "")
    units = {u.id: u for u in read.units}
    assert list(units) == ["1", "2", "3", "3b", "4/a", "4/b", "5", "6"]
    first = units["1"]
    assert first.source == "Click the  big button %d times now."
    assert (first.target, first.confirmed, first.context) == ("", False, "greeting")
    assert [(t.kind, t.name, t.id, t.position) for t in first.tags] == [
        ("open", "g", "1", 6), ("standalone", "x", "2", 10), ("close", "g", "1", 14),
        ("open", "bpt", "3", 31), ("close", "ept", "3", 34)]
    assert first.tags[3].code == "<b>"
    assert units["2"].confirmed and units["2"].target == "Hallo Welt" and units["2"].state == "final"
    assert not units["3"].translatable and not units["3b"].translatable
    assert (units["4/a"].source, units["4/b"].source, units["4/a"].context) == ("The first sentence.", "The second one.", "a note")
    assert units["5"].target == "Ich habe einen Hund." and not units["5"].confirmed  # translated, not approved
    assert [t.name for t in units["5"].tags] == ["ph", "it", "bx", "ex"]
    assert units["6"].source == "The ACME team thanks you."  # a protected mrk's text is the unit's text


def test_xliff20_units_segments_and_original_data(tmp_path):
    read = read_bilingual(write_xliff20(tmp_path))
    assert (read.format, read.source_language, read.target_language) == ("XLIFF 2", "en", "")
    units = {u.id: u for u in read.units}
    assert list(units) == ["u1/s1", "u1/s2", "u2", "u3", "u5", "u6", "u4"]
    assert [(t.kind, t.name) for t in units["u6"].tags] == [("open", "sm"), ("open", "pc"), ("close", "pc"), ("close", "em")]
    first = units["u1/s1"]
    assert first.source == "Press Save now, then quit {0}."
    assert first.context == "save | On the toolbar"
    assert [(t.kind, t.name, t.code) for t in first.tags] == [
        ("open", "pc", "<b>"), ("close", "pc", "</b>"), ("open", "sc", ""), ("close", "ec", ""),
        ("standalone", "ph", "<br/>")]
    assert units["u1/s2"].confirmed and units["u3"].confirmed and units["u3"].state == "reviewed"
    assert not units["u2"].translatable
    assert not units["u4"].confirmed and units["u4"].target == ""


def test_po_entries_plurals_context_and_state(tmp_path):
    read = read_bilingual(write_po(tmp_path))
    assert read.format == "PO"
    units = read.units
    assert [u.source for u in units] == ["Found %d files in %s", "Open", "Close the window", "One file",
                                         "%(count)s files", "The first line\nThe second line {name}\n"]
    assert [u.confirmed for u in units] == [False, True, False, False, False, False]
    assert units[1].context == "menu" and units[1].id == "menu\x04Open"
    assert units[2].state == "fuzzy" and units[2].target == "Fenster"
    assert [u.plural for u in units[3:5]] == [0, 1]


@pytest.mark.parametrize("name, content, words", [
    ("broken.xlf", "<xliff version='1.2'><file>", "not well-formed XML"),
    ("entities.xlf", '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><xliff version="1.2"/>', "entities"),
    ("other.xlf", "<html/>", "not an XLIFF 1.2 file"),
    ("nofile.xlf", "<xliff version='1.2'/>", "at least one <file>"),
    ("nosrc.xlf", "<xliff version='2.0' xmlns='urn:oasis:names:tc:xliff:document:2.0'><file id='f'/></xliff>", "srcLang"),
    ("bad.po", 'msgid "a"\nmsgstr "b"\nfoo bar\n', "line 3 is not PO syntax"),
    ("notes.txt", "hello", "bilingual files are"),
])
def test_bad_files_are_refused_in_one_sentence(tmp_path, name, content, words):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DocumentError) as caught:
        read_bilingual(path)
    message = str(caught.value)
    assert words in message and name in message and "\n" not in message and "Traceback" not in message


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(DocumentError, match="does not exist"):
        read_bilingual(tmp_path / "gone.po")
