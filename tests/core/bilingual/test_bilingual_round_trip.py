"""Bilingual files through translate-file's document path (issue 44), on files made by hand and with polib and on
real files of Okapi and XliffLib (tests/real_documents/bilingual/SOURCES.tsv): every unit kept, empty targets
filled, confirmed and translate="no" units untouched, inline tags and placeholders intact and paired, review
marks set, and the XLIFF valid against OASIS's schemas (no complaint the input did not already have).

The translation is the stand-in of tests/core/documents/fake_translation.py, which reverses each block's runs as
a real word order does, so that tags must be gathered back into valid nesting; test_translate_file_bilingual.py
runs the real model through the real command line."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import polib
import pytest

from nmt_desktop.core.bilingual import read_bilingual
from nmt_desktop.core.bilingual.inline_segments import PLACEHOLDER
from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.formats import open_document
from tests.core.bilingual import xliff_schemas
from tests.core.bilingual.samples import write_po, write_xliff12, write_xliff20
from tests.core.documents.fake_translation import MARK, fake_translate_all

REAL = Path(__file__).resolve().parents[2] / "real_documents" / "bilingual"


def _translated(source: Path, out: Path, overwrite: bool = False):
    document = open_document(source)
    if overwrite:
        document.select(overwrite=True)
    chosen = {u.id for u in document.chosen_units}
    document.target_language = document.file.target_language or "de"  # what a model for the file's pair says
    document.save(out, fake_translate_all(document.blocks))
    return read_bilingual(source), read_bilingual(out), chosen


def _paired(tags) -> bool:
    """Every open tag closed after it, by the same id, in nesting order."""
    stack = []
    for tag in tags:
        if tag.kind == "open":
            stack.append(tag.id)
        elif tag.kind == "close":
            if not stack or stack.pop() != tag.id:
                return False
    return not stack


def _check(before, after, chosen):
    assert [u.id for u in after.units] == [u.id for u in before.units]
    for old, new in zip(before.units, after.units):
        assert new.source == old.source and [t.name for t in new.tags] == [t.name for t in old.tags]
        if old.id not in chosen:
            assert (new.target, new.confirmed, new.state) == (old.target, old.confirmed, old.state), old.id
            continue
        assert old.translatable
        assert new.target.strip(), old.id
        if re.search(r"[^\W\d_]{2}", PLACEHOLDER.sub("", old.source)):  # words to translate, not "%1s %2s" alone
            assert MARK in new.target, old.id
        assert not new.confirmed
        assert Counter((t.kind, t.id, t.name) for t in new.target_tags) == Counter((t.kind, t.id, t.name) for t in old.tags)
        assert _paired(new.target_tags), new.target_tags
        assert Counter(PLACEHOLDER.findall(new.target)) == Counter(PLACEHOLDER.findall(old.source)), (old.source, new.target)
    assert chosen, "the file had nothing to fill"


def test_xliff12_made_by_hand(tmp_path):
    before, after, chosen = _translated(write_xliff12(tmp_path), tmp_path / "out.xlf")
    _check(before, after, chosen)
    assert chosen == {"1", "4/a", "4/b", "6"}  # 2 confirmed, 3 and 3b translate="no", 5 has a target
    assert xliff_schemas.errors(xliff_schemas.xliff12(), tmp_path / "out.xlf") == []
    text = (tmp_path / "out.xlf").read_text(encoding="utf-8")
    assert text.count('state="needs-review-translation" state-qualifier="leveraged-mt"') == 3
    assert 'target-language="de"' in text
    units = {u.id: u for u in after.units}
    assert units["6"].target.count("ACME") == 1  # the protected mrk comes back as it was
    assert re.search(r'<mrk mtype="seg" mid="a">ÜT [^<]*</mrk> <mrk mtype="seg" mid="b">ÜT ', text)


def test_xliff12_overwrite_retranslates_confirmed_units(tmp_path):
    before, after, chosen = _translated(write_xliff12(tmp_path), tmp_path / "out.xlf", overwrite=True)
    _check(before, after, chosen)
    assert {"2", "5"} <= chosen and "3" not in chosen
    assert 'approved="no"' in (tmp_path / "out.xlf").read_text(encoding="utf-8")
    assert xliff_schemas.errors(xliff_schemas.xliff12(), tmp_path / "out.xlf") == []


def test_xliff20_made_by_hand(tmp_path):
    before, after, chosen = _translated(write_xliff20(tmp_path), tmp_path / "out.xlf")
    _check(before, after, chosen)
    assert chosen == {"u1/s1", "u4", "u5", "u6"}
    assert xliff_schemas.errors(xliff_schemas.xliff20(), tmp_path / "out.xlf") == []
    text = (tmp_path / "out.xlf").read_text(encoding="utf-8")
    assert 'trgLang="de"' in text and text.count('state="initial"') == 4
    units = {u.id: u for u in after.units}
    assert units["u4"].target.count("Gartenzwerg") == 1  # translate="no" mrk kept once, as it was
    # overlapping sc/ec pairs keep the source's order, so each ec still follows its sc
    assert [(t.name, t.id) for t in units["u5"].target_tags] == [("sc", "1"), ("sc", "2"), ("ec", "1"), ("ec", "2")]


def test_po_made_with_polib(tmp_path):
    before, after, chosen = _translated(write_po(tmp_path), tmp_path / "out.po")
    _check(before, after, chosen)
    po = polib.pofile(str(tmp_path / "out.po"))
    assert po.metadata["Language"] == "de" and po.metadata["PO-Revision-Date"].startswith("20")
    entries = {e.msgid: e for e in po}
    assert entries["Found %d files in %s"].fuzzy and "c-format" in entries["Found %d files in %s"].flags
    assert entries["Found %d files in %s"].occurrences == [("src/main.c", "10")]
    # the stand-in reversed the runs: printf's arguments are put back in the source's order
    assert PLACEHOLDER.findall(entries["Found %d files in %s"].msgstr) == ["%d", "%s"]
    assert entries["Open"].msgstr == "Öffnen" and not entries["Open"].fuzzy
    assert entries["Close the window"].msgstr == "Fenster"  # fuzzy, not empty: someone's work, kept
    plural = entries["One file"]
    assert sorted(plural.msgstr_plural) == [0, 1] and all(MARK in v for v in plural.msgstr_plural.values())
    assert "%(count)s" in plural.msgstr_plural[1]
    lines = entries["The first line\nThe second line {name}\n"].msgstr
    assert lines.count("\n") == 2 and lines.endswith("\n") and "{name}" in lines
    assert [(e.msgid, e.msgstr) for e in po.obsolete_entries()] == [("Old text", "Alter Text")]


def test_po_plurals_follow_the_files_plural_forms(tmp_path):
    po = polib.POFile()
    po.metadata = {"Language": "ru", "Content-Type": "text/plain; charset=UTF-8",
                   "Plural-Forms": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"}
    po.append(polib.POEntry(msgid="%d apple", msgid_plural="%d apples", msgstr_plural={0: "", 1: ""}))
    po.save(str(tmp_path / "ru.po"))
    document = open_document(tmp_path / "ru.po")
    document.save(tmp_path / "out.po", fake_translate_all(document.blocks))
    entry = polib.pofile(str(tmp_path / "out.po"))[0]
    assert sorted(entry.msgstr_plural) == [0, 1, 2] and all("%d" in v for v in entry.msgstr_plural.values())


def test_a_pot_template_gets_the_model_languages_header_and_forms(tmp_path):
    pot = tmp_path / "messages.pot"
    pot.write_text('msgid ""\nmsgstr ""\n"Language: \\n"\n"Content-Type: text/plain; charset=CHARSET\\n"\n'
                   '"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"\n\n'
                   'msgid "%d apple"\nmsgid_plural "%d apples"\nmsgstr[0] ""\nmsgstr[1] ""\n', encoding="utf-8")
    document = open_document(pot)
    document.target_language = "fr"
    document.save(tmp_path / "out.pot", fake_translate_all(document.blocks))
    po = polib.pofile(str(tmp_path / "out.pot"))
    assert po.metadata["Language"] == "fr" and po.metadata["Plural-Forms"] == "nplurals=2; plural=(n > 1);"
    assert "charset=UTF-8" in po.metadata["Content-Type"]
    assert sorted(po[0].msgstr_plural) == [0, 1] and MARK in po[0].msgstr_plural[1]


def test_saving_into_another_language_than_the_files_is_refused(tmp_path):
    source = tmp_path / "fr.xlf"
    source.write_text('<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en" '
                      'target-language="fr-FR" original="a" datatype="plaintext"><body><trans-unit id="1">'
                      '<source>Hello</source></trans-unit></body></file></xliff>', encoding="utf-8")
    document = open_document(source)
    document.target_language = "de"
    with pytest.raises(DocumentError, match="fr.xlf is for target language fr-FR, but the model's target language is de"):
        document.save(tmp_path / "out.xlf", fake_translate_all(document.blocks))
    document.target_language = "fr"
    document.save(tmp_path / "out.xlf", fake_translate_all(document.blocks))


REAL_FILES = [("okapi-segsource.xlf", True), ("okapi-context-and-ph.xlf", False), ("okapi-translate-no.xlf", True),
              ("okapi-xliff2-test01.xlf", False), ("okapi-xliff2-comprehensive.xlf", False),
              ("xlifflib-inline-link.xlf", False), ("okapi-all-cases.po", False), ("django-humanize-de.po", True)]


@pytest.mark.parametrize("name, overwrite", REAL_FILES)
def test_real_files(tmp_path, name, overwrite):
    source = tmp_path / name
    shutil.copyfile(REAL / name, source)
    out = tmp_path / f"out{source.suffix}"
    before, after, chosen = _translated(source, out, overwrite)
    _check(before, after, chosen)
    if source.suffix == ".xlf":
        schema = xliff_schemas.xliff12() if before.format == "XLIFF 1.2" else xliff_schemas.xliff20()
        assert set(xliff_schemas.errors(schema, out)) <= set(xliff_schemas.errors(schema, source))
    else:
        po = polib.pofile(str(out))
        assert len(po) == len(polib.pofile(str(source)))
        assert all(e.fuzzy for e in po if e.msgid in {u.source for u in before.units if u.id in chosen})


def test_the_real_files_are_the_listed_ones():
    listed = {line.split("\t")[0] for line in (REAL / "SOURCES.tsv").read_text(encoding="utf-8").splitlines()[1:]}
    present = {p.relative_to(REAL).as_posix() for p in REAL.rglob("*") if p.is_file() and p.name != "SOURCES.tsv"}
    assert listed == present


def _reviewed(source: Path, out: Path):
    """The file saved as translate-file --tm leaves it: the first block from the memory (no sentence went to
    the model), the others the model's with a trust estimate, the last with a fuzzy memory match."""
    document = open_document(source)
    n = len(document.blocks)
    document.block_trust = [[]] + [[SimpleNamespace(qe=61.4, trust="medium")]] * (n - 1)
    document.memory_matches = [None] * (n - 1) + [SimpleNamespace(score=87.0, entry=SimpleNamespace(
        source="The second sentence.", target="Der zweite Satz & mehr"))]
    document.save(out, fake_translate_all(document.blocks))
    return document


def test_xliff12_memory_reuse_and_matches_for_the_reviewer(tmp_path):
    _reviewed(write_xliff12(tmp_path), tmp_path / "out.xlf")
    assert xliff_schemas.errors(xliff_schemas.xliff12(), tmp_path / "out.xlf") == []
    text = (tmp_path / "out.xlf").read_text(encoding="utf-8")
    assert text.count('state="translated" state-qualifier="exact-match"') == 1  # trans-unit 1, from the memory
    document = open_document(tmp_path / "sample.xlf")  # 4/a the model's, 4/b from the memory: trans-unit 4 for review
    model = [SimpleNamespace(qe=50.0, trust="medium")]
    document.block_trust = [model, model, [], model]
    document.save(tmp_path / "mixed.xlf", fake_translate_all(document.blocks))
    units = {u.id: u for u in read_bilingual(tmp_path / "mixed.xlf").units}
    assert units["4/a"].state == units["4/b"].state == "needs-review-translation"
    assert text.count('match-quality="61" origin="nmt-desktop"') == 3  # 4/a, 4/b, 6: the model's, with its trust
    assert ('<alt-trans match-quality="87" origin="nmt-desktop translation memory"><source>The second sentence.'
            '</source><target>Der zweite Satz &amp; mehr</target></alt-trans>') in text


def test_xliff20_memory_reuse_and_matches_for_the_reviewer(tmp_path):
    _reviewed(write_xliff20(tmp_path), tmp_path / "out.xlf")
    assert xliff_schemas.errors(xliff_schemas.xliff20(), tmp_path / "out.xlf") == []
    text = (tmp_path / "out.xlf").read_text(encoding="utf-8")
    assert '<segment id="s1" state="translated">' in text
    assert text.count('type="mt" origin="nmt-desktop" matchQuality="61"') == 3
    assert 'type="tm" origin="nmt-desktop translation memory" similarity="87"><source>The second sentence.' in text


def test_po_memory_reuse_and_matches_for_the_reviewer(tmp_path):
    _reviewed(write_po(tmp_path), tmp_path / "out.po")
    entries = {e.msgid: e for e in polib.pofile(str(tmp_path / "out.po"))}
    reused = entries["Found %d files in %s"]
    assert not reused.fuzzy and reused.tcomment == "translation memory (nmt-desktop): 100% match"
    plural = entries["One file"]
    assert plural.fuzzy and plural.tcomment == "machine translation (nmt-desktop), trust medium, estimated chrF 61"
    last = entries["The first line\nThe second line {name}\n"]
    assert last.tcomment.splitlines()[-1] == "translation memory match 87%: Der zweite Satz & mehr"
