"""The memory file's schema and its versions: `PRAGMA user_version` says which migrations a file has had,
and opening a file runs the missing ones in one transaction each. A file from a newer app is refused.

WAL journal (a reader, such as a lookup while an import runs, never waits for the writer) with
synchronous=FULL: every committed transaction survives a kill -9 and a power cut; a transaction cut short
leaves nothing. Per language pair one FTS5 table of the sources' words and word pairs (index_words.py) (`words_<pair id>`), made with the
pair: fuzzy candidates are found in the pair's own index, never filtered out of every pair's.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from nmt_desktop.core.memory.entries import TranslationMemoryError
from nmt_desktop.core.memory.index_words import TOKENIZER

# Each migration takes the file from version i to i + 1; append, never edit a released one.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE pairs (
        id INTEGER PRIMARY KEY,
        source_language TEXT NOT NULL,
        target_language TEXT NOT NULL,
        UNIQUE (source_language, target_language)
    );
    CREATE TABLE entries (
        id INTEGER PRIMARY KEY,
        pair_id INTEGER NOT NULL REFERENCES pairs(id),
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        source_hash INTEGER NOT NULL,  -- 64 bits of BLAKE2b of the source: the exact-match index
        target_hash INTEGER NOT NULL,
        source_tags TEXT NOT NULL DEFAULT '',  -- entries.tags_json
        target_tags TEXT NOT NULL DEFAULT '',
        origin TEXT NOT NULL,
        context TEXT NOT NULL DEFAULT '',
        document TEXT NOT NULL DEFAULT '',
        created INTEGER NOT NULL,
        changed INTEGER NOT NULL,
        UNIQUE (pair_id, source_hash, target_hash)  -- a duplicate merges into the entry it repeats
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def words_table(pair_id: int) -> str:
    return f"words_{int(pair_id)}"


def create_words_table(db: sqlite3.Connection, pair_id: int) -> None:
    """The pair's word index: contentless (the words are not stored twice), rowid = the entry's id."""
    table = words_table(pair_id)
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(words, content='', detail=none, "
               f"tokenize=\"{TOKENIZER}\")")
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table}_vocabulary USING fts5vocab({table}, 'row')")


def connect(path: Path, create: bool = True) -> sqlite3.Connection:
    """The memory file opened and brought to SCHEMA_VERSION; TranslationMemoryError in one sentence if it is not
    a memory, is from a newer version, or (create=False) does not exist."""
    path = Path(path)
    if not path.exists():
        if not create:
            raise TranslationMemoryError(f"{path}: no translation memory there")
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        db = sqlite3.connect(path, timeout=30, isolation_level=None)  # transactions are begun explicitly
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0 and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise TranslationMemoryError(f"{path}: an SQLite file but not a translation memory")
    except sqlite3.DatabaseError as exc:
        raise TranslationMemoryError(f"{path}: not a translation memory ({exc})") from None
    if version > SCHEMA_VERSION:
        db.close()
        raise TranslationMemoryError(f"{path}: made by a newer nmt-desktop (memory version {version}, this one reads "
                                     f"up to {SCHEMA_VERSION})")
    for number in range(version, SCHEMA_VERSION):
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] == number:  # another process may have migrated it
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version={number + 1}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return db
