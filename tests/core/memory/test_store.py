"""The memory file (core/memory/store.py, schema.py): a real SQLite file in WAL mode with a versioned schema,
duplicates merged, exact and fuzzy lookups with what differs, per language pair."""

from __future__ import annotations

import sqlite3

import pytest

from nmt_desktop.core.memory import Entry, Pair, Tag, TranslationMemory, TranslationMemoryError
from nmt_desktop.core.memory.schema import SCHEMA_VERSION

EN_DE = Pair("en", "de")
SENTENCES = [("The cat sleeps on the sofa.", "Die Katze schläft auf dem Sofa."),
             ("The dog sleeps in the garden.", "Der Hund schläft im Garten."),
             ("Open the file menu and choose Save.", "Öffnen Sie das Menü Datei und wählen Sie Speichern."),
             ("Close the window.", "Schließen Sie das Fenster."),
             ("Printing is not available on this computer.", "Drucken ist auf diesem Computer nicht verfügbar.")]


def _memory(path) -> TranslationMemory:
    memory = TranslationMemory(path)
    memory.add(Entry(s, t, EN_DE) for s, t in SENTENCES)
    return memory


def test_a_real_sqlite_file_in_wal_mode_with_the_schema_version(tmp_path):
    path = tmp_path / "tm.sqlite"
    _memory(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == len(SENTENCES)
    db.close()
    with TranslationMemory(path, create=False) as memory:  # opens again: nothing migrated twice
        assert memory.count(EN_DE) == len(SENTENCES)


def test_a_file_from_a_newer_version_or_not_a_memory_is_refused_in_one_sentence(tmp_path):
    newer = tmp_path / "newer.sqlite"
    _memory(newer).close()
    db = sqlite3.connect(newer)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(TranslationMemoryError, match="newer nmt-desktop"):
        TranslationMemory(newer)
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.close()
    with pytest.raises(TranslationMemoryError, match="not a translation memory"):
        TranslationMemory(other)
    text = tmp_path / "notes.sqlite"
    text.write_text("hello, this is no database at all" * 100)
    with pytest.raises(TranslationMemoryError, match="not a translation memory"):
        TranslationMemory(text)
    with pytest.raises(TranslationMemoryError, match="no translation memory there"):
        TranslationMemory(tmp_path / "missing.sqlite", create=False)


def test_duplicates_merge_keeping_the_stronger_origin_and_the_later_change(tmp_path):
    with _memory(tmp_path / "tm.sqlite") as memory:
        result = memory.add([Entry(SENTENCES[0][0], SENTENCES[0][1], EN_DE, "confirmed", context="pets",
                                   changed=2_000_000_000),
                             Entry(SENTENCES[0][0], "Die Katze pennt auf dem Sofa.", EN_DE),
                             Entry(SENTENCES[0][0], SENTENCES[0][1], Pair("en", "fr"))])
        assert (result.added, result.merged) == (2, 1)
        assert memory.count() == len(SENTENCES) + 2
        exact = memory.exact(SENTENCES[0][0], EN_DE)
        assert [m.entry.target for m in exact] == [SENTENCES[0][1], "Die Katze pennt auf dem Sofa."]
        assert (exact[0].entry.origin, exact[0].entry.context, exact[0].entry.changed) == ("confirmed", "pets", 2_000_000_000)
        memory.add([Entry(SENTENCES[0][0], SENTENCES[0][1], EN_DE, "file")])  # a weaker origin does not win
        assert memory.exact(SENTENCES[0][0], EN_DE)[0].entry.origin == "confirmed"


def test_exact_matches_first_then_fuzzy_ones_with_the_differing_words(tmp_path):
    with _memory(tmp_path / "tm.sqlite") as memory:
        found = memory.search("The cat sleeps on the sofa.", EN_DE)
        assert found[0].exact and found[0].entry.target == "Die Katze schläft auf dem Sofa." and not found[0].differences
        assert all(not m.exact for m in found[1:])
        fuzzy = memory.search("The cat sleeps on the bed.", EN_DE)
        assert fuzzy[0].entry.source == "The cat sleeps on the sofa."
        assert 70 <= fuzzy[0].score < 100
        assert [d.describe() for d in fuzzy[0].differences] == ["sofa -> bed"]
        assert [(d.op, d.memory, d.text) for d in memory.search("Close the main window.", EN_DE)[0].differences] \
            == [("insert", "", "main")]
        assert memory.search("Completely unrelated words here.", EN_DE, min_score=60) == []
        assert all(m.score >= 80 for m in memory.search("The dog sleeps in the house.", EN_DE, min_score=80))


def test_lookups_read_only_their_pair_and_a_language_reads_its_regions(tmp_path):
    with TranslationMemory(tmp_path / "tm.sqlite") as memory:
        memory.add([Entry("Close the window.", "Schließen Sie das Fenster.", Pair.of("en-US", "de-DE")),
                    Entry("Close the window.", "Fermez la fenêtre.", Pair.of("EN_us", "fr"))])
        assert [m.entry.target for m in memory.search("Close the window.", Pair("en", "de"))] == ["Schließen Sie das Fenster."]
        assert [m.entry.target for m in memory.search("Close the windows.", Pair("en-us", "fr"))] == ["Fermez la fenêtre."]
        assert memory.search("Close the window.", Pair("de", "en")) == []
        assert sorted(str(p) for p in memory.pairs()) == ["en-us-de-de", "en-us-fr"]


def test_tags_are_kept_and_scripts_without_spaces_are_found_fuzzily(tmp_path):
    tags = [Tag("open", "1", "g", 4, "<b>"), Tag("close", "1", "g", 7, "</b>"), Tag("standalone", "2", "x", 8)]
    with TranslationMemory(tmp_path / "tm.sqlite") as memory:
        memory.add([Entry("The cat sleeps.", "Die Katze schläft.", EN_DE, source_tags=tags, target_tags=tags[:1]),
                    Entry("我今天很高兴见到你。", "Ich freue mich, dich heute zu sehen.", Pair("zh", "de"))])
        entry = memory.exact("The cat sleeps.", EN_DE)[0].entry
        assert (entry.source_tags, entry.target_tags) == (tags, tags[:1])
        found = memory.search("我今天很高兴见到他。", Pair("zh", "de"))
        assert found and found[0].entry.source == "我今天很高兴见到你。" and 80 < found[0].score < 100


def test_an_add_cut_short_keeps_every_committed_chunk(tmp_path):
    """A failure in the third chunk rolls that chunk back; the two before it stay (what kill -9 relies on)."""
    def entries():
        for i in range(25):
            if i == 22:
                raise RuntimeError("cut")
            yield Entry(f"Sentence number {i}.", f"Satz Nummer {i}.", EN_DE)

    with TranslationMemory(tmp_path / "tm.sqlite") as memory:
        with pytest.raises(RuntimeError):
            memory.add(entries(), chunk=10)
    with TranslationMemory(tmp_path / "tm.sqlite") as memory:
        assert memory.count() == 20
        assert [e.source for e in memory.entries()] == [f"Sentence number {i}." for i in range(20)]
        assert memory.search("Sentence number 7.", EN_DE)[0].exact
