"""`nmt-desktop translate-file` on bilingual files (issue 44), run for real in child processes with the bundled
en-de model: XLIFF 1.2, XLIFF 2.0 and PO targets filled with the model's translations, marked for review with
the trust estimate where each format has a place for it, confirmed and translate="no" units untouched (unless
--overwrite), tags and placeholders intact, the XLIFF valid against OASIS's schemas; bad input in one line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import polib
from cli_runner import assert_one_error_line, run_cli

from nmt_desktop.core.bilingual import read_bilingual
from nmt_desktop.core.bilingual.inline_segments import PLACEHOLDER
from tests.core.bilingual import xliff_schemas
from tests.core.bilingual.samples import write_po, write_xliff12, write_xliff20

REAL = Path(__file__).resolve().parents[1] / "real_documents" / "bilingual"


def _tags(tags) -> Counter:
    return Counter((t.kind, t.id, t.name) for t in tags)


def test_xliff12_filled_marked_and_valid(tmp_path):
    source = write_xliff12(tmp_path)
    done = run_cli("translate-file", str(source), "-m", "en-de")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "sample.de.xlf"
    assert "2 segments with a target kept as they were" in done.stderr, done.stderr
    assert xliff_schemas.errors(xliff_schemas.xliff12(), out) == []
    before, after = {u.id: u for u in read_bilingual(source).units}, {u.id: u for u in read_bilingual(out).units}
    for unit_id in ("1", "4/a", "4/b", "6"):
        assert after[unit_id].target.strip() and after[unit_id].target != before[unit_id].source
        assert _tags(after[unit_id].target_tags) == _tags(before[unit_id].tags)
        assert after[unit_id].state == "needs-review-translation"
    assert after["1"].target.count("%d") == 1
    for unit_id in ("2", "3", "3b", "5"):
        assert (after[unit_id].target, after[unit_id].state) == (before[unit_id].target, before[unit_id].state)
    text = out.read_text(encoding="utf-8")
    assert text.count('state-qualifier="leveraged-mt"') == 3 and text.count('origin="nmt-desktop"') == 4
    assert "estimated chrF" in text and 'target-language="de"' in text


def test_xliff20_overwrite_translates_confirmed_segments_too(tmp_path):
    source = write_xliff20(tmp_path)
    done = run_cli("translate-file", str(source), "-m", "en-de", "--overwrite", "-o", str(tmp_path / "out.xlf"))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out.xlf"
    assert xliff_schemas.errors(xliff_schemas.xliff20(), out) == []
    before, after = {u.id: u for u in read_bilingual(source).units}, {u.id: u for u in read_bilingual(out).units}
    assert after["u3"].target != "Das Haus ist winzig." and after["u3"].state == "initial"  # was reviewed
    assert after["u2"].target == "" and not after["u2"].translatable  # translate="no" even with --overwrite
    for unit_id in ("u1/s1", "u1/s2", "u3", "u4", "u5", "u6"):
        assert after[unit_id].target.strip()
        assert _tags(after[unit_id].target_tags) == _tags(before[unit_id].tags), unit_id
        assert Counter(PLACEHOLDER.findall(after[unit_id].target)) == Counter(PLACEHOLDER.findall(before[unit_id].source))
    text = out.read_text(encoding="utf-8")
    assert text.count("<mtc:match ") == 6 and 'type="mt"' in text and "matchQuality=" in text


def test_po_filled_fuzzy_with_trust_comment(tmp_path):
    source = write_po(tmp_path)
    done = run_cli("translate-file", str(source), "-m", "en-de")
    assert done.returncode == 0, done.stderr
    po = polib.pofile(str(tmp_path / "messages.de.po"))
    assert po.metadata["Language"] == "de"
    entries = {e.msgid: e for e in po}
    found = entries["Found %d files in %s"]
    assert found.msgstr and found.fuzzy and "trust" in found.tcomment and "estimated chrF" in found.tcomment
    assert PLACEHOLDER.findall(found.msgstr) == ["%d", "%s"]
    assert entries["Open"].msgstr == "Öffnen" and not entries["Open"].fuzzy
    assert entries["Close the window"].msgstr == "Fenster"
    assert all(entries["One file"].msgstr_plural[n] for n in (0, 1))
    assert "%(count)s" in entries["One file"].msgstr_plural[1]
    assert [e.msgid for e in po.obsolete_entries()] == ["Old text"]


def test_a_real_translated_po_keeps_every_translation(tmp_path):
    """Django's German humanize catalogue (BSD-3-Clause, tests/real_documents/bilingual/SOURCES.tsv): every entry is
    someone's translation, so a plain run changes no msgstr; the header gets today's PO-Revision-Date only."""
    source = REAL / "django-humanize-de.po"
    done = run_cli("translate-file", str(source), "-m", "en-de", "-o", str(tmp_path / "out.po"))
    assert done.returncode == 0, done.stderr
    assert "0 sentences in 0 blocks" in done.stderr and "19 segments with a target kept as they were\n" in done.stderr, done.stderr
    before, after = polib.pofile(str(source)), polib.pofile(str(tmp_path / "out.po"))
    assert [(e.msgid, e.msgstr, e.msgstr_plural, e.flags, e.occurrences) for e in after] == \
        [(e.msgid, e.msgstr, e.msgstr_plural, e.flags, e.occurrences) for e in before]
    assert after.metadata["Language"] == "de" and after.metadata["PO-Revision-Date"] != before.metadata["PO-Revision-Date"]


def test_a_real_segmented_xliff_retranslated_with_the_model(tmp_path):
    """Okapi's segsource.xlf (Apache-2.0; English to German, its targets copies of the source): --overwrite fills
    both seg-source segments with German, each in its own mrk, and the schema finds nothing new to say."""
    source = REAL / "okapi-segsource.xlf"
    done = run_cli("translate-file", str(source), "-m", "en-de", "--overwrite", "-o", str(tmp_path / "out.xlf"))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out.xlf"
    schema = xliff_schemas.xliff12()
    assert set(xliff_schemas.errors(schema, out)) <= set(xliff_schemas.errors(schema, source))
    units = read_bilingual(out).units
    assert [u.id for u in units] == ["tu1/0", "tu1/1"]
    assert all(u.target.strip() and "This is sentence" not in u.target and u.state == "needs-review-translation"
               for u in units), [u.target for u in units]
    assert out.read_text(encoding="utf-8").count('origin="nmt-desktop" mid=') == 2


def test_bad_bilingual_input_is_one_line_and_writes_nothing(tmp_path):
    broken = tmp_path / "broken.xlf"
    broken.write_text("<xliff version='1.2'><file>", encoding="utf-8")
    done = run_cli("translate-file", str(broken), "-m", "en-de")
    assert "broken.xlf is not well-formed XML" in assert_one_error_line(done, 1)
    french = tmp_path / "fr.xlf"
    french.write_text('<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en" '
                      'target-language="fr-FR" original="a" datatype="plaintext"><body><trans-unit id="1">'
                      '<source>Hello</source></trans-unit></body></file></xliff>', encoding="utf-8")
    done = run_cli("translate-file", str(french), "-m", "en-de")
    assert "fr.xlf is for target language fr-FR, but the model's target language is de" in assert_one_error_line(done, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.xlf", "fr.xlf"]


def test_a_pot_template_filled_is_saved_as_the_languages_po(tmp_path):
    """A .pot filled in a language is that language's PO file: messages.pot -> messages.de.po (not .de.pot)."""
    pot = polib.POFile()
    pot.metadata = {"Project-Id-Version": "demo", "Content-Type": "text/plain; charset=CHARSET",
                    "Plural-Forms": "nplurals=INTEGER; plural=EXPRESSION;"}
    pot.append(polib.POEntry(msgid="Open the file", msgstr=""))
    source = tmp_path / "messages.pot"
    pot.save(str(source))
    done = run_cli("translate-file", str(source), "-m", "en-de")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["messages.de.po", "messages.pot"]
    po = polib.pofile(str(tmp_path / "messages.de.po"))
    assert po.metadata["Language"] == "de" and po.metadata["Plural-Forms"].startswith("nplurals=2")
    assert po[0].msgstr.strip() and po[0].fuzzy
