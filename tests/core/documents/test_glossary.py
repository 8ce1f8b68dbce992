"""Glossaries: TSV and TBX read and written, bad lines named, terms found in inflected forms."""

from __future__ import annotations

import pytest

from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.glossary import Glossary, Term, find_terms, merged, target_present


def test_tsv_round_trip_with_header_comments_and_notes(tmp_path):
    path = tmp_path / "g.tsv"
    path.write_text("source\ttarget\tnote\n# a comment\npower supply\tNetzteil\tnot 'Stromversorgung'\n"
                    "\nserver\tServer\n", encoding="utf-8")
    glossary = Glossary.read(path)
    assert glossary.terms == [Term("power supply", "Netzteil", "not 'Stromversorgung'"), Term("server", "Server")]
    glossary.write(tmp_path / "out.tsv")
    assert Glossary.read(tmp_path / "out.tsv").terms == glossary.terms


def test_tbx_round_trip_and_v3_entries(tmp_path):
    glossary = Glossary([Term("dog", "Hund", "animal"), Term("power supply", "Netzteil")])
    glossary.write(tmp_path / "g.tbx", "en", "de")
    assert Glossary.read(tmp_path / "g.tbx").terms == glossary.terms
    v3 = ('<tbx xmlns="urn:iso:std:iso:30042:ed-2" type="TBX-Core"><text><body><conceptEntry id="1">'
          '<langSec xml:lang="en"><termSec><term>cat</term></termSec></langSec>'
          '<langSec xml:lang="fr"><termSec><term>chat</term></termSec></langSec></conceptEntry></body></text></tbx>')
    (tmp_path / "v3.tbx").write_text(v3, encoding="utf-8")
    assert Glossary.read(tmp_path / "v3.tbx").terms == [Term("cat", "chat")]


@pytest.mark.parametrize("content, where", [
    ("dog\tHund\nbad line\n", "g.tsv, line 2"),
    ("dog\tHund\na\tb\tc\td\n", "g.tsv, line 2"),
    ("\tHund\n", "g.tsv, line 1"),
])
def test_bad_tsv_lines_are_named(tmp_path, content, where):
    (tmp_path / "g.tsv").write_text(content, encoding="utf-8")
    with pytest.raises(DocumentError, match=where):
        Glossary.read(tmp_path / "g.tsv")


def test_tbx_with_entities_or_one_language_is_refused(tmp_path):
    bomb = ('<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
            '<martif><text><body><termEntry><langSet><tig><term>&b;</term></tig></langSet>'
            '<langSet><tig><term>x</term></tig></langSet></termEntry></body></text></martif>')
    (tmp_path / "bomb.tbx").write_text(bomb, encoding="utf-8")
    with pytest.raises(DocumentError, match="entities"):
        Glossary.read(tmp_path / "bomb.tbx")
    one = "<martif><text><body><termEntry><langSet><tig><term>x</term></tig></langSet></termEntry></body></text></martif>"
    (tmp_path / "one.tbx").write_text(one, encoding="utf-8")
    with pytest.raises(DocumentError, match="one.tbx, line 1: a term entry needs a term in two languages"):
        Glossary.read(tmp_path / "one.tbx")


def test_terms_are_found_in_inflected_forms_longest_first():
    terms = [Term("power", "Strom"), Term("power supply", "Netzteil"), Term("policy", "Richtlinie"),
             Term("server", "Server"), Term("box", "Kiste")]
    sentence = "The power supplies of both Servers follow our policies, not the boxes."
    found = [(sentence[m.start:m.end], m.term.target) for m in find_terms(sentence, terms)]
    assert found == [("power supplies", "Netzteil"), ("Servers", "Server"), ("policies", "Richtlinie"),
                     ("boxes", "Kiste")]
    assert find_terms("The powerful serverless app.", terms) == []


def test_target_present_allows_a_capitalised_start_and_an_inflected_end():
    assert target_present("Netzteile sind teuer.", Term("x", "netzteil"))
    assert target_present("Die Farbe des Gebäudes.", Term("x", "Gebäude"))
    assert not target_present("Das Hauptgebäude.", Term("x", "Gebäude"))


def test_merged_later_glossary_wins():
    model = Glossary([Term("dog", "Hund"), Term("cat", "Katze")])
    document = Glossary([Term("Dog", "Köter")])
    assert {t.source.lower(): t.target for t in merged([model, document]).terms} == {"dog": "Köter", "cat": "Katze"}
