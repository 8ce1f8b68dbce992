"""Saving a translator's confirmed segments into the bilingual file (issue 44, core/bilingual/confirmed.py): per
format, on files made by hand, with polib and on the real files of tests/real_documents/bilingual/, after the
machine filled them for review: confirmed units read back confirmed with the typed text, other units and other
tools' markup as they were, tags intact, paired and valid against OASIS's schemas, placed by the tiny model's
alignment or by position; the file replaced atomically (a child killed inside the save leaves it whole)."""

from __future__ import annotations

import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import polib
import pytest
from lxml import etree

from nmt_desktop.core.bilingual import read_bilingual
from nmt_desktop.core.bilingual.confirmed import ConfirmedSave, save_confirmed
from nmt_desktop.core.documents.blocks import DocumentError
from nmt_desktop.core.documents.formats import open_document
from tests.core.bilingual import xliff_schemas
from tests.core.bilingual.samples import write_po, write_xliff12, write_xliff20
from tests.core.bilingual.test_bilingual_round_trip import REAL, REAL_FILES, _paired
from tests.core.documents.fake_translation import fake_translate_all

REPO = Path(__file__).resolve().parents[3]


def _machine_filled(path: Path, overwrite: bool = False) -> Path:
    """The file as translate-file (--overwrite) leaves it for review: the blocks the model's, with a trust estimate."""
    document = open_document(path)
    document.select(overwrite)
    document.target_language = document.file.target_language or "de"
    document.block_trust = [[SimpleNamespace(qe=61.4, trust="medium")]] * len(document.blocks)
    document.save(path, fake_translate_all(document.blocks))
    return path


def _typed(unit) -> str:
    """What a translator might type: the source's words reversed, upper-cased, spaces as they were, no tags."""
    return "Ü " + " ".join(reversed(unit.source.split())).upper() + "  ende"


def _group(unit_id: str, fmt: str) -> str:
    """What carries the state a unit reads as confirmed by: an XLIFF 1.2 trans-unit (all its seg-source
    segments), a PO entry (all its plural forms), an XLIFF 2 segment (itself)."""
    return unit_id.split("/")[0] if fmt == "XLIFF 1.2" else re.sub(r"\[\d+\]$", "", unit_id) if fmt == "PO" else unit_id


def _check_saved(before, after, confirmed: dict[str, str]) -> None:
    assert [u.id for u in after.units] == [u.id for u in before.units]
    whole = {_group(u.id, before.format) for u in before.units} - \
        {_group(u.id, before.format) for u in before.units if u.id not in confirmed and not u.confirmed}
    for old, new in zip(before.units, after.units):
        assert (new.source, new.tags) == (old.source, old.tags)
        if old.id not in confirmed:
            assert (new.target, new.confirmed, new.state, new.target_tags) == \
                (old.target, old.confirmed, old.state, old.target_tags), old.id
            continue
        assert new.confirmed == (_group(old.id, before.format) in whole), old.id
        assert _reads_as_typed(new.target, confirmed[old.id], old), (old.id, new.target)
        assert _same_tags(new.target_tags, old.tags), old.id
        assert _paired(new.target_tags), new.target_tags


def _same_tags(written, source) -> bool:
    """Every tag of the source once: a pair that holds no typed word is an empty element (g, pc, mrk), which
    reads back as one standalone tag."""
    pairs = {(t.id, t.name) for t in source if t.kind == "open"}
    found = Counter()
    for t in written:
        if t.kind == "standalone" and (t.id, t.name) in pairs:
            found.update([("open", t.id, t.name), ("close", t.id, t.name)])
        else:
            found[(t.kind, t.id, t.name)] += 1
    return found == Counter((t.kind, t.id, t.name) for t in source)


def _reads_as_typed(target: str, typed: str, unit) -> bool:
    """The target is the typed text, or the typed text with a span not to translate kept whole (its element
    and text, where the translator did not type its text)."""
    spans = [unit.source[a.position:b.position] for a, b in zip(unit.tags, unit.tags[1:])
             if a.kind == "open" and b.kind == "close" and a.id == b.id and b.position > a.position]
    return target == typed or any(s not in typed and target.replace(s, "", 1) == typed for s in spans)


def _schema_errors(path: Path, fmt: str) -> list[str]:
    return xliff_schemas.errors(xliff_schemas.xliff12() if fmt == "XLIFF 1.2" else xliff_schemas.xliff20(), path)


def test_xliff12_confirmed_units_turn_final_with_the_typed_text(tmp_path):
    path = _machine_filled(write_xliff12(tmp_path))
    before = read_bilingual(path)
    confirmed = {"1": "Klicken Sie   jetzt auf die große Taste %d Mal.", "4/a": "Der erste Satz.", "5": "Ich habe eine Katze."}
    saved = save_confirmed(path, confirmed)
    assert saved == ConfirmedSave(3, "position", path, {})
    after = read_bilingual(path)
    _check_saved(before, after, confirmed)
    assert _schema_errors(path, "XLIFF 1.2") == []
    root = etree.parse(str(path)).getroot()
    ns = {"x": "urn:oasis:names:tc:xliff:document:1.2"}
    tu = {t.get("id"): t for t in root.iterfind(".//x:trans-unit", ns)}
    assert tu["1"].find("x:target", ns).attrib == {"state": "final"}  # no leveraged-mt qualifier
    assert not tu["1"].findall("x:alt-trans", ns) and not tu["5"].findall("x:alt-trans", ns)
    assert tu["6"].find("x:target", ns).get("state-qualifier") == "leveraged-mt"  # not confirmed: as it was
    assert len(tu["6"].findall("x:alt-trans", ns)) == 1
    # 4 has two seg-source segments: 4/a confirmed, 4/b still the machine's, so the trans-unit stays for review
    assert {u.id: u.state for u in after.units}["4/a"] == "needs-review-translation"
    assert [a.get("mid") for a in tu["4"].findall("x:alt-trans", ns)] == ["b"]
    save_confirmed(path, {"4/b": "Der zweite."})
    assert {u.id: u.confirmed for u in read_bilingual(path).units}["4/a"] is False  # 4/a was not in this save
    save_confirmed(path, {"4/a": "Der erste Satz.", "4/b": "Der zweite."})
    units = {u.id: u for u in read_bilingual(path).units}
    assert units["4/a"].confirmed and units["4/b"].confirmed and units["4/b"].target == "Der zweite."


def test_other_tools_alternatives_stay(tmp_path):
    path = _machine_filled(write_xliff12(tmp_path))
    text = path.read_text(encoding="utf-8").replace(
        '<trans-unit id="1" resname="greeting">',
        '<trans-unit id="1" resname="greeting"><alt-trans origin="other-tool"><target>Anders</target></alt-trans>')
    path.write_text(text, encoding="utf-8")
    save_confirmed(path, {"1": "Klicken Sie"})
    saved = path.read_text(encoding="utf-8")
    assert '<alt-trans origin="other-tool"><target>Anders</target></alt-trans>' in saved
    assert saved.count('origin="nmt-desktop"') == 3  # 4/a, 4/b, 6: not 1's any more


def test_xliff20_confirmed_segments_turn_final_and_our_matches_go(tmp_path):
    path = _machine_filled(write_xliff20(tmp_path))
    before = read_bilingual(path)
    confirmed = {"u1/s1": "Drücken Sie jetzt Speichern, dann beenden {0}.", "u5": "Fett fett und kursiv und %s.",
                 "u6": "Siehe das Kleingedruckte unten.", "u4": "Der Garten ist Gartenzwerg grün."}
    saved = save_confirmed(path, confirmed)
    assert (saved.written, saved.tags_placed_by, saved.missing_placeholders) == (4, "position", {})
    after = read_bilingual(path)
    _check_saved(before, after, confirmed)
    assert _schema_errors(path, "XLIFF 2") == []
    text = path.read_text(encoding="utf-8")
    assert 'ref="#s1"' not in text and text.count('type="mt" origin="nmt-desktop"') == 0  # u1's other, u5/u6/u4's
    root = etree.parse(str(path)).getroot()
    units = {u.get("id"): u for u in root.iter("{urn:oasis:names:tc:xliff:document:2.0}unit")}
    assert units["u1"].find("{urn:oasis:names:tc:xliff:matches:2.0}matches") is None  # emptied, so removed
    assert '<mrk id="m1" translate="no">Gartenzwerg</mrk>' in text  # the protected span holds the typed copy


def test_xliff20_an_unconfirmed_segments_match_stays(tmp_path):
    path = _machine_filled(write_xliff20(tmp_path))
    before = read_bilingual(path)
    save_confirmed(path, {"u5": "Fett und %s."})
    _check_saved(before, read_bilingual(path), {"u5": "Fett und %s."})
    text = path.read_text(encoding="utf-8")
    assert 'ref="#s1"' in text and text.count('type="mt" origin="nmt-desktop"') == 3  # u1/s1, u6, u4
    assert _schema_errors(path, "XLIFF 2") == []


def test_po_plurals_context_fuzzy_and_our_comments(tmp_path):
    path = _machine_filled(write_po(tmp_path, language="de"), overwrite=True)
    entry = next(e for e in polib.pofile(str(path)) if e.msgid == "Close the window")
    assert entry.fuzzy and entry.tcomment.startswith("machine translation (nmt-desktop)")
    po = polib.pofile(str(path))  # another tool's comment and a previous msgid beside ours
    entry = next(e for e in po if e.msgid == "Close the window")
    entry.tcomment = "checked by Anna\n" + entry.tcomment
    entry.previous_msgid = "Close window"
    po.save(str(path))
    before = read_bilingual(path)
    confirmed = {"Close the window": "Fenster schließen", "menu\x04Open": "Öffnen…", "One file[0]": "Eine Datei",
                 "One file[1]": "%(count)s Dateien", "Found %d files in %s": "%d Dateien gefunden"}
    saved = save_confirmed(path, confirmed)
    assert (saved.written, saved.tags_placed_by) == (5, "none")
    assert saved.missing_placeholders == {"Found %d files in %s": ["%s"]}
    after = read_bilingual(path)
    _check_saved(before, after, confirmed)
    entries = {(e.msgctxt, e.msgid): e for e in polib.pofile(str(path))}
    closing = entries[(None, "Close the window")]
    assert not closing.fuzzy and closing.tcomment == "checked by Anna" and closing.previous_msgid is None
    plural = entries[(None, "One file")]
    assert plural.msgstr_plural == {0: "Eine Datei", 1: "%(count)s Dateien"} and not plural.fuzzy
    assert plural.flags == ["python-format"] and entries[(None, "Found %d files in %s")].flags == ["c-format"]
    assert entries[("menu", "Open")].msgstr == "Öffnen…"
    multi = entries[(None, "The first line\nThe second line {name}\n")]
    assert multi.fuzzy and multi.tcomment.startswith("machine translation (nmt-desktop)")  # not confirmed
    assert "#~ msgid \"Old text\"" in path.read_text(encoding="utf-8")


def test_po_a_plural_confirmed_in_part_stays_fuzzy(tmp_path):
    path = _machine_filled(write_po(tmp_path, language="de"))
    save_confirmed(path, {"One file[0]": "Eine Datei"})
    entry = next(e for e in polib.pofile(str(path)) if e.msgid == "One file")
    assert entry.fuzzy and entry.msgstr_plural[0] == "Eine Datei" and entry.msgstr_plural[1]
    units = {u.id: u for u in read_bilingual(path).units}
    assert not units["One file[0]"].confirmed


def test_pot_template(tmp_path):
    pot = polib.POFile()
    pot.metadata = {"Project-Id-Version": "demo", "Content-Type": "text/plain; charset=CHARSET",
                    "Plural-Forms": "nplurals=INTEGER; plural=EXPRESSION;"}
    pot.append(polib.POEntry(msgid="Save", msgstr="", msgctxt="button"))
    pot.append(polib.POEntry(msgid="%d day", msgid_plural="%d days", msgstr_plural={0: "", 1: ""}, flags=["c-format"]))
    pot.append(polib.POEntry(msgid="Quit", msgstr=""))
    path = tmp_path / "app.pot"
    pot.save(str(path))
    template = path.read_bytes()
    out = tmp_path / "app.de.po"
    saved = save_confirmed(path, {"button\x04Save": "Speichern", "%d day[0]": "%d Tag", "%d day[1]": "%d Tage"}, out=out)
    assert saved.path == out and saved.written == 3
    assert path.read_bytes() == template
    units = {u.id: u for u in read_bilingual(out).units}
    assert units["button\x04Save"].confirmed and units["button\x04Save"].target == "Speichern"
    assert units["%d day[1]"].target == "%d Tage" and units["%d day[1]"].confirmed
    assert not units["Quit"].confirmed and units["Quit"].target == ""
    assert "charset=UTF-8" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", [name for name, _overwrite in REAL_FILES])
def test_real_files(tmp_path, name):
    path = tmp_path / name
    shutil.copyfile(REAL / name, path)
    _machine_filled(path)
    before = read_bilingual(path)
    chosen = [u for u in before.units if u.translatable and u.source.strip()][::2]  # every other unit
    confirmed = {u.id: _typed(u) for u in chosen}
    assert confirmed
    saved = save_confirmed(path, confirmed)
    assert saved.written == sum(1 for u in before.units if u.id in confirmed)
    after = read_bilingual(path)
    _check_saved(before, after, confirmed)
    if path.suffix == ".xlf":
        original = tmp_path / f"original{path.suffix}"
        shutil.copyfile(REAL / name, original)
        assert set(_schema_errors(path, before.format)) <= set(_schema_errors(original, before.format))
    else:
        assert len(polib.pofile(str(path))) == len(polib.pofile(str(REAL / name)))


TAGGED = """<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="a.txt" source-language="en" target-language="xx" datatype="plaintext"><body>
    <trans-unit id="1"><source>big red <g id="1">cat</g> sleeps</source></trans-unit>
    <trans-unit id="2"><source>big red cat <x id="1"/>sleeps</source></trans-unit>
  </body></file>
</xliff>
"""


def test_tags_go_where_the_models_alignment_puts_them(tmp_path, tiny_translator):
    """The typed translation is faithful but longer: by the model's reading of it (teacher forcing), the bold
    word is katze and the tag stands before schlaeft; by position alone both land a word later."""
    typed = "gross rot katze schlaeft sonne mond"
    placed = {}
    for who, translator in (("alignment", tiny_translator), ("position", None)):
        path = tmp_path / f"{who}.xlf"
        path.write_text(TAGGED, encoding="utf-8")
        saved = save_confirmed(path, {"1": typed, "2": typed}, translator)
        assert saved.tags_placed_by == who
        assert _schema_errors(path, "XLIFF 1.2") == []
        assert all(u.target == typed and u.confirmed for u in read_bilingual(path).units)
        placed[who] = re.findall(r'<target state="final">(.*?)</target>', path.read_text(encoding="utf-8"))
    assert placed["alignment"] == ['gross rot <g id="1">katze</g> schlaeft sonne mond',
                                   'gross rot katze <x id="1"/>schlaeft sonne mond']
    assert placed["position"] == ['gross rot katze <g id="1">schlaeft</g> sonne mond',
                                  'gross rot katze schlaeft <x id="1"/>sonne mond']


def test_the_sample_files_with_the_model(tmp_path, tiny_translator):
    for path in (_machine_filled(write_xliff12(tmp_path)), _machine_filled(write_xliff20(tmp_path))):
        before = read_bilingual(path)
        confirmed = {u.id: _typed(u) for u in before.units if u.translatable and u.source.strip()}
        assert save_confirmed(path, confirmed, tiny_translator).tags_placed_by == "alignment"
        _check_saved(before, read_bilingual(path), confirmed)
        assert _schema_errors(path, before.format) == []


@pytest.mark.parametrize("write", [write_xliff12, write_xliff20])
def test_any_typed_text_comes_back_as_typed_with_every_tag(tmp_path, write):
    """Whatever the translator types (words, spaces, punctuation, a placeholder or not), the target reads back
    as typed, with every tag of the source once and paired, valid against the schema."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    source = _machine_filled(write(tmp_path))
    fmt = read_bilingual(source).format
    units = [u for u in read_bilingual(source).units if u.translatable and u.source.strip() and u.tags]
    word = st.sampled_from(["Fett", "und", "kursiv", "%s", "{0}", "(x)", "…", "Sehr-langes-Wort", ",", "ß",
                            "ACME", "Gartenzwerg"])  # the last two: the text of a span not to translate
    space = st.sampled_from([" ", "  ", "\t", ""])

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(st.tuples(word, space), min_size=1, max_size=9), st.sampled_from(units))
    def check(pieces, unit):
        typed = "".join(w + s for w, s in pieces).strip() or "x"
        path = tmp_path / "typed.xlf"
        shutil.copyfile(source, path)
        save_confirmed(path, {unit.id: typed})
        after = {u.id: u for u in read_bilingual(path).units}[unit.id]
        assert _reads_as_typed(after.target, typed, unit), after.target
        assert _same_tags(after.target_tags, unit.tags) and _paired(after.target_tags)
        assert _schema_errors(path, fmt) == []

    check()


def test_unknown_ids_and_empty_texts_are_refused_in_one_sentence(tmp_path):
    path = _machine_filled(write_xliff12(tmp_path))
    data = path.read_bytes()
    for confirmed, words in (({"1": "Ja", "99": "Nein"}, "has no unit with the id '99'"),
                             ({"3": "Nein"}, "'3' is marked not to translate"),
                             ({"1": "  "}, "translation of unit '1' is empty")):
        with pytest.raises(DocumentError) as error:
            save_confirmed(path, confirmed)
        message = str(error.value)
        assert words in message and message.count(".") <= 1 and "\n" not in message and "sample.xlf" in message
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sample.xlf"]  # no temporary file left


def test_missing_placeholders_are_reported_not_invented(tmp_path):
    path = write_xliff12(tmp_path)
    saved = save_confirmed(path, {"1": "Klicken Sie jetzt."})
    assert saved.missing_placeholders == {"1": ["%d"]}
    unit = {u.id: u for u in read_bilingual(path).units}["1"]
    assert unit.target == "Klicken Sie jetzt." and "%d" not in path.read_text(encoding="utf-8").split("<target")[1]


CHILD = """
import os, signal, sys
from pathlib import Path
from nmt_desktop.core.bilingual.confirmed import save_confirmed
where = sys.argv[2]
if where == "replace":  # the new file written and fsync'd, not yet renamed over the old one
    os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)
elif where == "fsync":  # the new file written, not yet on disk
    os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)
save_confirmed(Path(sys.argv[1]), {"1": "Klicken Sie", "2": "Hallo"})
print("saved")
"""


@pytest.mark.parametrize("where", ["replace", "fsync"])
def test_a_save_killed_midway_leaves_the_old_file_whole(tmp_path, where):
    path = _machine_filled(write_xliff12(tmp_path))
    data = path.read_bytes()
    child = subprocess.run([sys.executable, "-c", CHILD, str(path), where], cwd=REPO, capture_output=True,
                           text=True, timeout=300, env=os.environ | {"PYTHONPATH": str(REPO)})
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    assert path.read_bytes() == data
    left = [p for p in tmp_path.iterdir() if p != path]
    assert len(left) == 1 and left[0].name.startswith(".sample.xlf.")  # the temporary file, in the same folder
    if where == "replace":  # complete before the rename: the new file whole
        units = {u.id: u for u in read_bilingual(left[0].rename(tmp_path / "new.xlf")).units}
        assert units["1"].confirmed and units["1"].target == "Klicken Sie"
    finished = subprocess.run([sys.executable, "-c", CHILD, str(path), "nowhere"], cwd=REPO, capture_output=True,
                              text=True, timeout=300, env=os.environ | {"PYTHONPATH": str(REPO)})
    assert finished.returncode == 0 and "saved" in finished.stdout, finished.stderr[-2000:]
    assert {u.id: u.target for u in read_bilingual(path).units}["1"] == "Klicken Sie"


def test_only_the_confirmed_segment_changes(tmp_path):
    """Confirming one segment of a file the app wrote changes that segment's lines, and nothing else."""
    path = _machine_filled(write_xliff20(tmp_path))
    before = path.read_text(encoding="utf-8").splitlines(keepends=True)
    save_confirmed(path, {"u6": "Siehe unten."})
    after = path.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = [line for line in difflib.unified_diff(before, after, n=0) if line[:1] in "+-" and line[:3] not in "+++---"]
    assert len(changed) == 2 and all('<unit id="u6">' in line for line in changed), changed
    assert path.read_bytes().endswith(b"</xliff>\n")  # the line end the file ended in


def test_out_writes_elsewhere_and_keeps_the_files_permissions(tmp_path):
    path = _machine_filled(write_xliff12(tmp_path))
    os.chmod(path, 0o640)
    data = path.read_bytes()
    out = tmp_path / "confirmed.xlf"
    save_confirmed(path, {"2": "Hallo Welt!"}, out=out)
    assert path.read_bytes() == data and os.stat(out).st_mode & 0o777 == 0o640
    save_confirmed(path, {"2": "Hallo Welt!"})
    assert os.stat(path).st_mode & 0o777 == 0o640 and path.read_bytes() == out.read_bytes()


def test_a_protected_span_of_several_words_holds_its_typed_copy(tmp_path):
    path = tmp_path / "p.xlf"
    path.write_text(TAGGED.replace("big red cat <x id=\"1\"/>sleeps",
                                   'Thanks from the <mrk mtype="protected">ACME Corp</mrk> team, <x id="1"/>today'),
                    encoding="utf-8")
    for typed, holds_it in (("Das Team der ACME Corp dankt, heute", True), ("Danke vom ACME-Team", False)):
        save_confirmed(path, {"2": typed})
        unit = {u.id: u for u in read_bilingual(path).units}["2"]
        text = path.read_text(encoding="utf-8")
        assert text.count('<mrk mtype="protected">ACME Corp</mrk>') == 2  # the source's and the target's, once
        assert (unit.target == typed) == holds_it and _reads_as_typed(unit.target, typed, unit)
        assert _schema_errors(path, "XLIFF 1.2") == []
