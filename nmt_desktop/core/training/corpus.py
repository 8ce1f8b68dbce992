"""Parallel corpora: read, validated and normalised sentence pairs, and the dev split.

`read_corpus(CorpusSpec(...))` reads a TSV file, two aligned text files (corpus_formats.py) or a TMX
file (tmx.py); `reverse=True` swaps the sides (train German->English from an English<TAB>German
file). Every segment is whitespace-normalised: runs of ASCII whitespace become one space and the ends
are stripped (no-break and other Unicode spaces are kept). Pairs with an empty side are skipped,
pairs with a side longer than `max_chars` characters filtered; both are counted in `CorpusStats`.
Any problem with the input raises `CorpusError`, one sentence naming the file and line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from nmt_desktop.core.training.corpus_formats import (FORMATS, CorpusError, Format, Pair, aligned_pairs, check_file,
                                                    detect_format, normalize_space, tsv_pairs)
from nmt_desktop.core.training.seeding import seeded_generator
from nmt_desktop.core.training.tmx import TmxReader


@dataclass
class CorpusSpec:
    """What to read: one `path` (TSV or TMX), or `src_path` and `tgt_path` (aligned text files).

    `format` "auto" decides from the extension and content; `src_lang`/`tgt_lang` pick TMX
    languages (default: the header's srclang, or the first language of a unit, and the other one);
    `reverse` swaps the sides; `max_chars` filters pairs with a longer side (None: no limit).
    """

    path: str | Path | None = None
    src_path: str | Path | None = None
    tgt_path: str | Path | None = None
    format: Format = "auto"
    reverse: bool = False
    src_lang: str | None = None
    tgt_lang: str | None = None
    max_chars: int | None = None


@dataclass
class CorpusStats:
    """Counts from reading: every pair read is kept or skipped for one reason."""

    read: int = 0
    kept: int = 0
    skipped_empty: int = 0  # a side empty after whitespace normalisation (TMX: or missing)
    skipped_long: int = 0  # a side longer than max_chars
    source_files: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for logs and the UI."""
        files = " and ".join(self.source_files) or "no file"
        return (f"{self.read} pairs read from {files}: {self.kept} kept, {self.skipped_empty} skipped "
                f"with an empty side, {self.skipped_long} skipped as too long.")


@dataclass
class Corpus:
    """Sentence pairs (source, target) in file order, with reading statistics."""

    pairs: list[Pair]
    stats: CorpusStats

    def __len__(self) -> int:
        return len(self.pairs)

    def preview(self, n: int = 5) -> list[Pair]:
        """The first `n` pairs."""
        return self.pairs[:max(n, 0)]

    def sources(self) -> list[str]:
        return [s for s, _ in self.pairs]

    def targets(self) -> list[str]:
        return [t for _, t in self.pairs]


def read_corpus(spec: CorpusSpec) -> Corpus:
    """Read, validate and normalise a parallel corpus; raises CorpusError on any problem."""
    if spec.max_chars is not None and spec.max_chars < 1:
        raise CorpusError(f"max_chars must be at least 1, got {spec.max_chars}.")
    fmt, files = _resolve(spec)
    stats = CorpusStats(source_files=[str(f) for f in files])
    tmx = TmxReader(files[0], spec.src_lang, spec.tgt_lang) if fmt == "tmx" else None
    if tmx is not None:
        raw: Iterable[Pair] = tmx.pairs()
    elif fmt == "tsv":
        raw = tsv_pairs(files[0])
    else:
        raw = aligned_pairs(files[0], files[1])
    pairs = _clean(raw, spec, stats)
    if not pairs:
        raise CorpusError(_no_pairs_message(stats, tmx))
    return Corpus(pairs, stats)


def split_dev(corpus: Corpus, fraction: float, seed: int = 0) -> tuple[Corpus, Corpus]:
    """Split off a random dev set of round(fraction * n) pairs (at least 1, leaving at least 1).

    Deterministic for (corpus, fraction, seed); both parts keep file order and are disjoint by
    position (identical pairs in the file may still land on both sides). The parts' stats are the
    whole corpus's, with `kept` set to the part's size.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"dev fraction must be between 0 and 1, got {fraction}")
    n = len(corpus.pairs)
    if n < 2:
        raise CorpusError(f"{_files(corpus.stats)}: need at least 2 sentence pairs to split off a dev set, found {n}.")
    n_dev = min(n - 1, max(1, round(n * fraction)))
    dev_rows = set(torch.randperm(n, generator=seeded_generator(seed, "dev"))[:n_dev].tolist())
    train = [p for i, p in enumerate(corpus.pairs) if i not in dev_rows]
    dev = [p for i, p in enumerate(corpus.pairs) if i in dev_rows]
    return Corpus(train, _part_stats(corpus.stats, len(train))), Corpus(dev, _part_stats(corpus.stats, len(dev)))


def _part_stats(stats: CorpusStats, kept: int) -> CorpusStats:
    return dataclasses.replace(stats, kept=kept, source_files=list(stats.source_files))


def _clean(raw: Iterable[Pair], spec: CorpusSpec, stats: CorpusStats) -> list[Pair]:
    """Normalise whitespace, orient, and keep pairs with two non-empty sides within max_chars."""
    pairs = []
    for src, tgt in raw:
        stats.read += 1
        src, tgt = normalize_space(src), normalize_space(tgt)
        if spec.reverse:
            src, tgt = tgt, src
        if not src or not tgt:
            stats.skipped_empty += 1
        elif spec.max_chars is not None and max(len(src), len(tgt)) > spec.max_chars:
            stats.skipped_long += 1
        else:
            pairs.append((src, tgt))
    stats.kept = len(pairs)
    return pairs


def _quoted(lang: str | None, default: str) -> str:
    return f"'{lang}'" if lang else default


def _files(stats: CorpusStats) -> str:
    return " and ".join(stats.source_files)


def _no_pairs_message(stats: CorpusStats, tmx: TmxReader | None) -> str:
    where = _files(stats)
    if tmx is not None and not tmx.languages:
        return f"{where}: no usable sentence pairs (no translation units with text found)."
    if tmx is not None and not tmx.matched:
        found = ", ".join(sorted(tmx.languages))
        return (f"{where}: no usable sentence pairs (no translation unit has both "
                f"{_quoted(tmx.src, 'a source language')} and {_quoted(tmx.tgt, 'a second language')}; "
                f"languages found: {found}).")
    if stats.read == 0:
        return f"{where}: no usable sentence pairs (the file is empty)."
    return (f"{where}: no usable sentence pairs ({stats.read} read, {stats.skipped_empty} with an "
            f"empty side, {stats.skipped_long} too long).")


def _resolve(spec: CorpusSpec) -> tuple[str, list[Path]]:
    """(format, files) for a spec, checking that the files exist."""
    if spec.format not in FORMATS:
        raise CorpusError(f"unknown corpus format {spec.format!r}; use one of {', '.join(FORMATS)}.")
    if spec.path is not None and (spec.src_path is not None or spec.tgt_path is not None):
        raise CorpusError("give either one corpus path or a source and a target path, not both.")
    if spec.path is None:
        if spec.src_path is None or spec.tgt_path is None:
            raise CorpusError("no corpus given: pass a TSV or TMX path, or a source and a target path.")
        if spec.format not in ("auto", "aligned"):
            raise CorpusError(f"format {spec.format!r} reads one file; two files are read as 'aligned'.")
        files = [Path(spec.src_path), Path(spec.tgt_path)]
        for f in files:
            check_file(f)
        return "aligned", files
    path = Path(spec.path)
    check_file(path)
    if spec.format == "aligned":
        raise CorpusError(f"{path}: format 'aligned' needs a source and a target path.")
    return (spec.format if spec.format != "auto" else detect_format(path)), [path]
