"""`translate-file --tm` with the bundled en-de model in a child process: a block the memory holds exactly is
the memory's target (never the model's: the memory's target here is no translation the model would make), a
fuzzy match is listed for the reviewer, an XLIFF segment is filled from the memory too."""

from __future__ import annotations

from pathlib import Path

from cli_runner import assert_one_error_line, run_cli

from nmt_desktop.core.memory import Entry, Pair, TranslationMemory
from nmt_desktop.core.bilingual import read_bilingual

XLIFF = """<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
 <file original="app" source-language="en" target-language="de" datatype="plaintext"><body>
  <trans-unit id="1"><source>The cat sleeps on the sofa.</source></trans-unit>
  <trans-unit id="2"><source>Where is the station?</source></trans-unit>
 </body></file>
</xliff>
"""


def _memory(path: Path) -> Path:
    with TranslationMemory(path) as memory:
        memory.add([Entry("The cat sleeps on the sofa.", "DIE KATZE AUS DEM SPEICHER.", Pair("en", "de")),
                    Entry("The dog sleeps in the garden.", "Der Hund schläft im Garten.", Pair("en", "de")),
                    Entry("Where is the station?", "Où est la gare ?", Pair("en", "fr"))])
    return path


def test_exact_matches_are_reused_and_fuzzy_ones_listed(tmp_path):
    tm = _memory(tmp_path / "tm.sqlite")
    source = tmp_path / "notes.txt"
    source.write_text("The cat sleeps on the sofa.\n\nThe dog sleeps in the garden today.\n\nWhere is the station?\n",
                      encoding="utf-8")
    done = run_cli("translate-file", str(source), "-m", "en-de", "--tm", str(tm))
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "notes.de.txt").read_text(encoding="utf-8").split("\n")
    assert lines[0] == "DIE KATZE AUS DEM SPEICHER."
    assert lines[2] and lines[2] != "Der Hund schläft im Garten." and lines[4] != "Où est la gare ?"
    assert "2 sentences in 5 blocks translated" in done.stderr
    assert "memory (en-de): 1 segment reused (100% matches), 1 fuzzy match of 75% or more for review:" in done.stderr
    assert "line 3: 83% 'The dog sleeps in the garden.' -> 'Der Hund schläft im Garten.' (differs: +today)" in done.stderr


def test_an_xliff_segment_is_filled_from_the_memory(tmp_path):
    tm = _memory(tmp_path / "tm.sqlite")
    source = tmp_path / "app.xlf"
    source.write_text(XLIFF, encoding="utf-8")
    done = run_cli("translate-file", str(source), "-m", "en-de", "--tm", str(tm), "--tm-min", "90")
    assert done.returncode == 0, done.stderr
    units = read_bilingual(tmp_path / "app.de.xlf").units
    assert units[0].target == "DIE KATZE AUS DEM SPEICHER." and units[1].target not in ("", "Où est la gare ?")
    assert "1 segment reused (100% matches), 0 fuzzy matches of 90% or more for review" in done.stderr


def test_a_missing_memory_is_one_line(tmp_path):
    source = tmp_path / "notes.txt"
    source.write_text("Hello.\n", encoding="utf-8")
    line = assert_one_error_line(run_cli("translate-file", str(source), "-m", "en-de", "--tm", str(tmp_path / "no.sqlite")), 1)
    assert "no translation memory there" in line and not (tmp_path / "notes.de.txt").exists()


def test_a_tagged_segment_takes_the_memorys_target_with_its_tags_on_the_aligned_words(tmp_path):
    """A segment with inline tags whose plain text the memory holds: the memory's target, not the model's, with
    the tags put where the model aligns them (the model reads the target, it does not write it)."""
    tm = tmp_path / "tm.sqlite"
    with TranslationMemory(tm) as memory:
        memory.add([Entry("Click the big button.", "KLICKEN Sie auf die große Schaltfläche.", Pair("en", "de"))])
    source = tmp_path / "app.xlf"
    source.write_text(XLIFF.replace("The cat sleeps on the sofa.", 'Click the <g id="1">big</g> button.'),
                      encoding="utf-8")
    done = run_cli("translate-file", str(source), "-m", "en-de", "--tm", str(tm))
    assert done.returncode == 0, done.stderr
    assert "1 segment reused (100% matches)" in done.stderr
    out = tmp_path / "app.de.xlf"
    unit = read_bilingual(out).units[0]
    assert unit.target == "KLICKEN Sie auf die große Schaltfläche." and unit.state == "translated"
    assert [(t.kind, t.id, t.name) for t in unit.target_tags] == [("open", "1", "g"), ("close", "1", "g")]
    assert '<g id="1">große</g>' in out.read_text(encoding="utf-8")
