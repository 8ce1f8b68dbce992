"""`import_files`: TMX, XLIFF and PO files into a memory. TMX through tmx_file.py; XLIFF and PO through
core/bilingual's reader, confirmed segments only (a translator's unreviewed or machine-filled targets are not
memory). Each file's entries go in committed chunks (store.CHUNK), so an import cut short keeps every chunk
before the cut; importing the same file again merges what is already there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from nmt_desktop.core.memory.entries import Entry, Pair, Tag, TranslationMemoryError
from nmt_desktop.core.memory.store import Added, TranslationMemory
from nmt_desktop.core.memory.tmx_file import read_tmx

BILINGUAL = (".xlf", ".xliff", ".sdlxliff", ".mqxliff", ".po", ".pot")


@dataclass(frozen=True)
class Imported:
    path: Path
    added: int
    merged: int


def file_entries(path: Path, source: str | None = None, target: str | None = None) -> Iterator[Entry]:
    """The entries a file gives (see the module docstring); TranslationMemoryError for a format it cannot be."""
    suffix = path.suffix.lower()
    if suffix == ".tmx":
        return read_tmx(path, source, target)
    if suffix in BILINGUAL:
        return _bilingual_entries(path, source, target)
    raise TranslationMemoryError(f"{path}: not a TMX, XLIFF or PO file (by its suffix {suffix or '(none)'})")


def _bilingual_entries(path: Path, source: str | None, target: str | None) -> Iterator[Entry]:
    from nmt_desktop.core.bilingual import read_bilingual
    from nmt_desktop.core.documents.blocks import DocumentError

    try:
        file = read_bilingual(path)
    except DocumentError as exc:
        raise TranslationMemoryError(str(exc)) from None
    source = source or file.source_language
    target = target or file.target_language
    if not source or not target:
        missing = "source" if not source else "target"
        raise TranslationMemoryError(f"{path}: the file names no {missing} language: give --{missing} CODE")
    pair = Pair.of(source, target)
    for unit in file.units:
        if unit.confirmed and unit.source.strip() and unit.target.strip():
            yield Entry(unit.source, unit.target, pair, "file", unit.context, path.name,
                        [Tag(t.kind, t.id, t.name, t.position, t.code) for t in unit.tags],
                        [Tag(t.kind, t.id, t.name, t.position, t.code) for t in unit.target_tags])


def import_files(memory: TranslationMemory, paths: list[Path], source: str | None = None, target: str | None = None,
                 progress: Callable[[int], None] | None = None) -> list[Imported]:
    """Each file imported in turn (all of a file's errors are found before the next file starts)."""
    done = []
    for path in paths:
        if not path.is_file():
            raise TranslationMemoryError(f"{path}: no such file")
        result: Added = memory.add(file_entries(path, source, target), progress)
        done.append(Imported(path, result.added, result.merged))
    return done
