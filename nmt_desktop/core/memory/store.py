"""`TranslationMemory`: one SQLite file (schema.py) holding every language pair's entries; adding them in
committed chunks with duplicates merged, and finding them again: exact matches by the source's hash, fuzzy ones
as candidates from the pair's word index scored by fuzzy.py.

One file for all pairs, not one per pair: a translator keeps one memory (one file to back up, name with --tm,
and import a multilingual TMX into), and each pair still has its own word index (schema.words_table), so a
lookup reads only its pair's postings. The default file is `user_data_dir()/memory/memory.sqlite`.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from rapidfuzz import process

from nmt_desktop.core.memory.entries import (ORIGINS, Entry, Pair, TranslationMemoryError, tags_from_json,
                                             tags_json)
from nmt_desktop.core.memory.fuzzy import SIMILARITY, Match, differences
from nmt_desktop.core.memory.index_words import fts_query, index_terms, index_words
from nmt_desktop.core.memory.schema import connect, create_words_table, words_table

CHUNK = 2000  # entries per committed transaction while adding: what a kill -9 can lose at most
MAX_CANDIDATES = 3000  # rows the word index hands to the scorer per lookup, at most
RECALL_SCORE = 80.0  # the candidates cover the word differences this score allows (store._candidates)
_COLUMNS = "id, source, target, source_tags, target_tags, origin, context, document, created, changed"


def default_memory_path() -> Path:
    """The user's memory (core/locations.py's data folder, NMT_DESKTOP_DATA_DIR overrides it)."""
    from nmt_desktop.core.locations import user_data_dir

    return user_data_dir() / "memory" / "memory.sqlite"


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


@dataclass(frozen=True)
class Added:
    """What `add` did: entries new to the memory, and those that repeated one (merged into it)."""
    added: int = 0
    merged: int = 0

    def __add__(self, other: "Added") -> "Added":
        return Added(self.added + other.added, self.merged + other.merged)


@dataclass(frozen=True)
class PairStats:
    pair: Pair
    entries: int
    sources: int  # distinct sources
    first: int  # oldest created time (Unix seconds)
    last: int  # newest changed time


class TranslationMemory:
    """A memory file opened for reading and adding (see the module docstring); a context manager."""

    def __init__(self, path: Path | str | None = None, create: bool = True):
        self.path = Path(path) if path is not None else default_memory_path()
        self.db: sqlite3.Connection = connect(self.path, create)
        self._pair_ids: dict[Pair, int] = {}

    def __enter__(self) -> "TranslationMemory":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # --- pairs ------------------------------------------------------------------------------------

    def pairs(self) -> dict[Pair, int]:
        """Every pair the memory holds, with its id."""
        return {Pair(s, t): i for i, s, t in self.db.execute("SELECT id, source_language, target_language FROM pairs")}

    def pairs_for(self, pair: Pair) -> list[tuple[Pair, int]]:
        """The stored pairs a lookup for `pair` reads (Pair.covers: "en"-"de" reads en-us-de-at too)."""
        return [(p, i) for p, i in self.pairs().items() if pair.covers(p)]

    def _pair_id(self, pair: Pair) -> int:
        """The pair's id, the pair (and its word index) made inside the caller's transaction when new."""
        if pair not in self._pair_ids:
            row = self.db.execute("SELECT id FROM pairs WHERE source_language=? AND target_language=?",
                                  (pair.source, pair.target)).fetchone()
            if row is None:
                row = (self.db.execute("INSERT INTO pairs (source_language, target_language) VALUES (?, ?)",
                                       (pair.source, pair.target)).lastrowid,)
                create_words_table(self.db, row[0])
            self._pair_ids[pair] = row[0]
        return self._pair_ids[pair]

    # --- adding -----------------------------------------------------------------------------------

    def add(self, entries: Iterable[Entry], progress: Callable[[int], None] | None = None,
            chunk: int = CHUNK) -> Added:
        """Store entries, committing every `chunk` (a kill -9 loses at most the chunk under way; every earlier
        one is in the file). An entry with the same source, target and pair as a stored one is merged into it:
        the later change time, the stronger origin (confirmed > user > file), context and tags where it had
        none. progress(n) after each commit, n entries in that chunk."""
        total, batch = Added(), []
        for entry in entries:
            batch.append(entry)
            if len(batch) >= chunk:
                total += self._add_chunk(batch)
                if progress:
                    progress(len(batch))
                batch = []
        if batch:
            total += self._add_chunk(batch)
            if progress:
                progress(len(batch))
        return total

    def _add_chunk(self, batch: list[Entry]) -> Added:
        now, added, merged = int(time.time()), 0, 0
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for entry in batch:
                if entry.origin not in ORIGINS:
                    raise TranslationMemoryError(f"origin {entry.origin!r} is none of {', '.join(ORIGINS)}")
                pair_id = self._pair_id(entry.pair)
                created, changed = entry.created or now, entry.changed or entry.created or now
                cursor = self.db.execute(
                    "INSERT OR IGNORE INTO entries (pair_id, source, target, source_hash, target_hash, source_tags,"
                    " target_tags, origin, context, document, created, changed) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (pair_id, entry.source, entry.target, _hash(entry.source), _hash(entry.target),
                     tags_json(entry.source_tags), tags_json(entry.target_tags), entry.origin, entry.context,
                     entry.document, created, changed))
                if cursor.rowcount:
                    entry.id = cursor.lastrowid
                    self.db.execute(f"INSERT INTO {words_table(pair_id)} (rowid, words) VALUES (?, ?)",
                                    (entry.id, " ".join(index_terms(entry.source))))
                    added += 1
                else:
                    self._merge(pair_id, entry, changed)
                    merged += 1
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return Added(added, merged)

    def _merge(self, pair_id: int, entry: Entry, changed: int) -> None:
        row = self.db.execute("SELECT id, origin FROM entries WHERE pair_id=? AND source_hash=? AND target_hash=?",
                              (pair_id, _hash(entry.source), _hash(entry.target))).fetchone()
        entry.id, origin = row[0], row[1]
        stronger = entry.origin if ORIGINS.index(entry.origin) > ORIGINS.index(origin) else origin
        self.db.execute(
            "UPDATE entries SET changed=max(changed, ?), origin=?, context=CASE WHEN ?='' THEN context ELSE ? END,"
            " source_tags=CASE WHEN source_tags='' THEN ? ELSE source_tags END,"
            " target_tags=CASE WHEN target_tags='' THEN ? ELSE target_tags END WHERE id=?",
            (changed, stronger, entry.context, entry.context, tags_json(entry.source_tags),
             tags_json(entry.target_tags), entry.id))

    # --- reading ----------------------------------------------------------------------------------

    def _entry(self, row: tuple, pair: Pair) -> Entry:
        id_, source, target, source_tags, target_tags, origin, context, document, created, changed = row
        return Entry(source, target, pair, origin, context, document, tags_from_json(source_tags),
                     tags_from_json(target_tags), created, changed, id_)

    def entries(self, pair: Pair | None = None) -> Iterator[Entry]:
        """Every entry (of the pairs `pair` covers, or all), in the order they were added."""
        chosen = self.pairs_for(pair) if pair else list(self.pairs().items())
        for stored, pair_id in chosen:
            for row in self.db.execute(f"SELECT {_COLUMNS} FROM entries WHERE pair_id=? ORDER BY id", (pair_id,)):
                yield self._entry(row, stored)

    def count(self, pair: Pair | None = None) -> int:
        if pair is None:
            return self.db.execute("SELECT count(*) FROM entries").fetchone()[0]
        return sum(self.db.execute("SELECT count(*) FROM entries WHERE pair_id=?", (i,)).fetchone()[0]
                   for _p, i in self.pairs_for(pair))

    def stats(self) -> list[PairStats]:
        rows = self.db.execute("SELECT p.source_language, p.target_language, count(e.id), count(DISTINCT e.source_hash),"
                               " coalesce(min(e.created), 0), coalesce(max(e.changed), 0) FROM pairs p"
                               " LEFT JOIN entries e ON e.pair_id = p.id GROUP BY p.id ORDER BY p.id")
        return [PairStats(Pair(s, t), n, d, first, last) for s, t, n, d, first, last in rows]

    # --- finding ----------------------------------------------------------------------------------

    def exact(self, text: str, pair: Pair) -> list[Match]:
        """Entries whose source is `text` exactly, the most recently changed first."""
        found = []
        for stored, pair_id in self.pairs_for(pair):
            rows = self.db.execute(f"SELECT {_COLUMNS} FROM entries WHERE pair_id=? AND source_hash=?",
                                   (pair_id, _hash(text)))
            found += [Match(self._entry(row, stored), 100.0) for row in rows if row[1] == text]
        return sorted(found, key=lambda m: -m.entry.changed)

    def search(self, text: str, pair: Pair, limit: int = 5, min_score: float = 50.0) -> list[Match]:
        """The best `limit` matches of `text` scoring at least `min_score`: exact ones first (newest first),
        then fuzzy ones by score, each with what differs. Only the candidates of the pair's index are scored
        (`_candidates`: MAX_CANDIDATES at most), never every row as a scan does."""
        matches = self.exact(text, pair)
        seen = {m.entry.id for m in matches}
        fuzzy: list[Match] = []
        for stored, pair_id in self.pairs_for(pair):
            candidates = [(i, source) for i, source in self._candidates(text, pair_id, min_score) if i not in seen]
            best = process.extract(text, [source for _i, source in candidates], scorer=SIMILARITY,
                                   limit=limit, score_cutoff=min_score / 100.0)
            for _source, similarity, k in best:
                row = self.db.execute(f"SELECT {_COLUMNS} FROM entries WHERE id=?", (candidates[k][0],)).fetchone()
                fuzzy.append(Match(self._entry(row, stored), 100.0 * similarity, differences(text, row[1])))
        fuzzy.sort(key=lambda m: (-m.score, -m.entry.changed))
        return (matches + fuzzy)[:limit]

    def _candidates(self, text: str, pair_id: int, min_score: float) -> list[tuple[int, str]]:
        """(id, source) of the candidates for a fuzzy lookup, by the prefix filter of set-similarity search: a
        source that differs from the text in at most `e` words lacks at most 3e of the text's terms (a word and
        the two word pairs around it), so it holds at least one of the text's 3e + 1 rarest terms. e is the words
        a score of max(min_score, RECALL_SCORE) leaves free to differ. The rows holding those terms are read
        rarest term first, until MAX_CANDIDATES: a short text of common words ("Is Tom ill?") does not make a
        lookup read the hundred thousand rows holding "is"."""
        table = words_table(pair_id)
        terms = sorted(set(index_terms(text)))
        frequency: dict[str, int] = {}
        for start in range(0, len(terms), 500):  # a query's parameters are limited (32,766 by default)
            part = terms[start: start + 500]
            frequency.update(self.db.execute(f"SELECT term, doc FROM {table}_vocabulary WHERE term IN "
                                             f"({','.join('?' * len(part))})", part).fetchall())
        free = math.ceil(max(1, len(index_words(text))) * (1 - max(min_score, RECALL_SCORE) / 100))
        ids: dict[int, None] = {}
        for term in sorted(frequency, key=lambda t: (frequency[t], t))[: 3 * free + 1]:
            for (rowid,) in self.db.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?",
                                            (fts_query([term]), MAX_CANDIDATES - len(ids))):
                ids[rowid] = None
            if len(ids) >= MAX_CANDIDATES:
                break
        marks = ",".join("?" * len(ids))
        return self.db.execute(f"SELECT id, source FROM entries WHERE id IN ({marks})", list(ids)).fetchall()
