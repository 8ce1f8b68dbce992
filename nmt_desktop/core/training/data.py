"""Parallel corpora: reading, validation, encoding and token-budget batching.

Reading. `read_corpus(CorpusSpec(...))` reads one of
  * TSV: `source<TAB>target` per line, further columns ignored (`.tsv`, `.tab`, or any text file
    whose first non-blank line has a tab);
  * two aligned plain-text files (`src_path`, `tgt_path`), one segment per line;
  * TMX 1.4 (`.tmx`): languages picked by `src_lang`/`tgt_lang` (case-insensitive, "en" matches
    "en-US"), inline codes (<bpt> <ept> <ph> <it> <ut>) dropped, text of <hi> and <sub> kept.
`reverse=True` swaps the sides (train German->English from an English<TAB>German file).
Text files must be UTF-8; a BOM and CRLF line ends are dropped silently. Only "\\n" ends a line,
so aligned files stay aligned even when a segment holds U+2028 or U+0085. Every segment is
whitespace-normalised: runs of ASCII whitespace become one space and the ends are stripped
(no-break and other Unicode spaces are kept). Pairs with an empty side are skipped, pairs with a
side longer than `max_chars` characters filtered; both are counted in `CorpusStats`.
Any problem with the input raises `CorpusError`, one sentence naming the file and line.

Encoding. `encode_pairs` turns text pairs into id sequences: source tokens (+ </s> when
`cfg.src_add_eos`) and the decoder sequence [decoder_start] + tokens + [</s>], dropping (and
counting) pairs over `max_tokens` per side or beyond `cfg.max_positions`.

Batching and data position. `batches_for_epoch(encoded, budget, seed, epoch)` returns the batches
of one epoch: pairs are shuffled, sorted by length inside pools of about `pool_factor` batches,
packed so that rows * max(src_len, tgt_len) <= budget, and the batch order is shuffled again.
The result is a deterministic function of (data, budget, seed, epoch, pool_factor) (and of the
torch version, whose generator does the shuffling), so a training run's exact place in its data
is the `DataPosition(epoch, batch)`: to resume, rebuild that epoch's batches and continue at
index `batch`. With several processes, `shard_batches(batches, rank, world_size)` gives each rank
an equal, disjoint subset, and the position indexes the rank's shard (the same on every rank).
`iter_batches` walks epochs endlessly from a position.
"""

from __future__ import annotations

import array
import codecs
import dataclasses
import hashlib
import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal, overload

import torch
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence

from nmt_desktop.core.config import ModelConfig
from nmt_desktop.core.tokenizer import TokenizerPair

Pair = tuple[str, str]
Format = Literal["auto", "tsv", "tmx", "aligned"]
FORMATS = ("auto", "tsv", "tmx", "aligned")

_SPACE = re.compile(r"[ \t\n\r\f\v]+")
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_CODES = frozenset({"bpt", "ept", "ph", "it", "ut"})  # TMX inline codes: native markup, dropped
_DTD_WORDS = ("<!DOCTYPE", "<!ENTITY")
_DTD_PATTERNS = tuple((word, word.encode(enc)) for word in _DTD_WORDS
                      for enc in ("utf-8", "utf-16-le", "utf-16-be"))
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# `<!DOCTYPE tmx SYSTEM "tmx14.dtd">` with no internal subset: expat never fetches external DTDs.
_EXTERNAL_DOCTYPE = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*'
    rb'(<!DOCTYPE\s+[\w:.-]+\s+(?:SYSTEM\s+"[^"<>\[]*"|PUBLIC\s+"[^"<>\[]*"\s+"[^"<>\[]*")\s*>)', re.S)
_ENCODE_CHUNK = 10_000  # pairs tokenised per encode_batch call


class CorpusError(ValueError):
    """A corpus file is missing, malformed or yields no usable sentence pairs."""


def normalize_space(text: str) -> str:
    """Collapse runs of ASCII whitespace (tabs, newlines too) to one space and strip the ends."""
    return _SPACE.sub(" ", text).strip()


# -- corpus ---------------------------------------------------------------------------------------


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
    tmx = _TmxReader(files[0], spec.src_lang, spec.tgt_lang) if fmt == "tmx" else None
    if tmx is not None:
        raw: Iterable[Pair] = tmx.pairs()
    elif fmt == "tsv":
        raw = _tsv_pairs(files[0])
    else:
        raw = _aligned_pairs(files[0], files[1])
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
    dev_rows = set(torch.randperm(n, generator=_generator(seed, "dev"))[:n_dev].tolist())
    train = [p for i, p in enumerate(corpus.pairs) if i not in dev_rows]
    dev = [p for i, p in enumerate(corpus.pairs) if i in dev_rows]
    return Corpus(train, _part_stats(corpus.stats, len(train))), Corpus(dev, _part_stats(corpus.stats, len(dev)))


def _part_stats(stats: CorpusStats, kept: int) -> CorpusStats:
    return dataclasses.replace(stats, kept=kept, source_files=list(stats.source_files))


def train_tokenizers(pairs: Corpus | Sequence[Pair], vocab_size: int = 8000, joint: bool = True,
                     min_frequency: int = 2) -> TokenizerPair:
    """Train the vocabularies on a corpus's sides (one joint vocabulary, or one per side)."""
    rows = pairs.pairs if isinstance(pairs, Corpus) else pairs
    return TokenizerPair.train((s for s, _ in rows), (t for _, t in rows), vocab_size=vocab_size,
                               joint=joint, min_frequency=min_frequency)


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


def _no_pairs_message(stats: CorpusStats, tmx: _TmxReader | None) -> str:
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


# -- format detection ---------------------------------------------------------------------------


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
            _check_file(f)
        return "aligned", files
    path = Path(spec.path)
    _check_file(path)
    if spec.format == "aligned":
        raise CorpusError(f"{path}: format 'aligned' needs a source and a target path.")
    return (spec.format if spec.format != "auto" else _detect(path)), [path]


def _check_file(path: Path) -> None:
    if not path.exists():
        raise CorpusError(f"{path}: file not found.")
    if not path.is_file():
        raise CorpusError(f"{path}: not a file.")


def _detect(path: Path) -> str:
    """'tmx' or 'tsv' from the extension, else from the first bytes."""
    suffix = path.suffix.lower()
    if suffix == ".tmx":
        return "tmx"
    if suffix in (".tsv", ".tab"):
        return "tsv"
    head = _read_head(path)
    if head.startswith(_UTF16_BOMS) or head.removeprefix(codecs.BOM_UTF8).lstrip().startswith((b"<?xml", b"<tmx")):
        return "tmx"
    first = next((line for line in head.split(b"\n") if line.strip()), None)
    if first is None or b"\t" in first:
        return "tsv"  # an empty file reads as an empty TSV corpus
    raise CorpusError(f"{path}: cannot tell the corpus format (the first line has no tab and it is not TMX); "
                      f"use source<TAB>target lines, a .tmx file, or two aligned files.")


def _read_head(path: Path, size: int = 65536) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read file ({exc.strerror or exc}).") from None


# -- text formats ---------------------------------------------------------------------------------


def _text_lines(path: Path) -> Iterator[str]:
    """Lines of a UTF-8 file without line ends; a leading BOM and the CR of CRLF are dropped."""
    offset = 0
    try:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                yield _decode_line(path, number, raw, offset)
                offset += len(raw)
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read file ({exc.strerror or exc}).") from None


def _decode_line(path: Path, number: int, raw: bytes, offset: int) -> str:
    start = 0
    if number == 1:
        if raw.startswith(_UTF16_BOMS):
            raise CorpusError(f"{path}, line 1: the file is UTF-16 text (it starts with a UTF-16 byte-order mark); "
                              f"save it as UTF-8.")
        if raw.startswith(codecs.BOM_UTF8):
            start = len(codecs.BOM_UTF8)
    body = raw[start:].removesuffix(b"\n").removesuffix(b"\r")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = start + exc.start
        raise CorpusError(f"{path}, line {number}: invalid UTF-8 (byte 0x{raw[at]:02X} at byte offset "
                          f"{offset + at} of the file).") from None


def _tsv_pairs(path: Path) -> Iterator[Pair]:
    """(source, target) from the first two tab-separated columns; a blank line is an empty pair."""
    for number, line in enumerate(_text_lines(path), 1):
        if not line.strip():
            yield "", ""
            continue
        columns = line.split("\t")
        if len(columns) < 2:
            raise CorpusError(f"{path}, line {number}: expected at least 2 tab-separated columns, found 1.")
        yield columns[0], columns[1]


def _aligned_pairs(src: Path, tgt: Path) -> Iterator[Pair]:
    """Line i of `src` with line i of `tgt`; CorpusError if the line counts differ."""
    src_lines, tgt_lines = _text_lines(src), _text_lines(tgt)
    n = 0
    for s, t in itertools.zip_longest(src_lines, tgt_lines):
        if s is None or t is None:
            n_src = n + (s is not None) + sum(1 for _ in src_lines)
            n_tgt = n + (t is not None) + sum(1 for _ in tgt_lines)
            raise CorpusError(f"{src} has {n_src} lines but {tgt} has {n_tgt}; aligned files must have "
                              f"the same number of lines.")
        n += 1
        yield s, t


# -- TMX ------------------------------------------------------------------------------------------


def _local(tag: str) -> str:
    """Element name without its namespace."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _lang_matches(code: str, want: str) -> bool:
    """Case-insensitive match of a language code against a wanted code or prefix ("en" ~ "en-US")."""
    code, want = code.lower().replace("_", "-"), want.lower().replace("_", "-")
    return code == want or code.startswith(want + "-")


def _seg_text(seg: ET.Element) -> str:
    """Plain text of a TMX <seg>: inline codes dropped, <hi>/<sub> text kept, whitespace normalised."""
    parts: list[str] = []
    _collect_text(seg, parts, keep=True)
    return normalize_space("".join(parts))


def _collect_text(elem: ET.Element, parts: list[str], keep: bool) -> None:
    """Append the kept text under `elem`; inside a code only the text of nested <sub> survives."""
    if keep and elem.text:
        parts.append(elem.text)
    for child in elem:
        tag = _local(child.tag)
        if tag == "sub":  # a sub-flow inside a code is kept, set apart from its neighbours by spaces
            parts.append(" ")
            _collect_text(child, parts, keep=True)
            parts.append(" ")
        else:
            _collect_text(child, parts, keep=keep and tag not in _CODES)
        if keep and child.tail:
            parts.append(child.tail)


def _refuse_dtd(path: Path, chunk_size: int = 1 << 20) -> None:
    """CorpusError (naming the line) if the file contains <!DOCTYPE or <!ENTITY (UTF-8 or UTF-16)."""
    keep = max(len(p) for _, p in _DTD_PATTERNS) - 1
    carry, lines_before, first = b"", 0, True
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            if first:  # a plain external declaration (OmegaT writes one) neither expands nor loads anything
                m = _EXTERNAL_DOCTYPE.match(chunk)
                if m:
                    chunk = chunk[: m.start(1)] + b" " * (m.end(1) - m.start(1)) + chunk[m.end(1):]
                first = False
            data = carry + chunk
            hits = [(pos, word) for word, p in _DTD_PATTERNS if (pos := data.find(p)) >= 0]
            if hits:
                pos, word = min(hits)
                line = lines_before + data.count(b"\n", 0, pos) + 1
                raise CorpusError(f"{path}, line {line}: {word} declarations are not allowed in TMX files "
                                  f"(they can expand entities or load external files); remove it and try again.")
            cut = max(0, len(data) - keep)
            lines_before += data.count(b"\n", 0, cut)
            carry = data[cut:]


class _TmxReader:
    """Streams (source, target) segment texts from a TMX file with iterparse."""

    def __init__(self, path: Path, src_lang: str | None, tgt_lang: str | None):
        self.path = path
        self.src, self.tgt = src_lang, tgt_lang  # resolved from the data when None
        self.header_src: str | None = None
        self.languages: set[str] = set()  # codes seen (for error messages), at most 50
        self.matched = 0  # units with both languages

    def pairs(self) -> Iterator[Pair]:
        try:
            _refuse_dtd(self.path)
            with open(self.path, "rb") as f:
                yield from self._parse(f)
        except ET.ParseError as exc:
            line, column = exc.position
            reason = str(exc).split(":")[0]
            raise CorpusError(f"{self.path}, line {line}: malformed XML ({reason}, column {column + 1}).") from None
        except CorpusError:
            raise
        except (LookupError, ValueError) as exc:  # an encoding declaration Python or expat cannot read
            raise CorpusError(f"{self.path}: cannot read the XML encoding ({exc}); save the file as UTF-8.") from None
        except OSError as exc:
            raise CorpusError(f"{self.path}: cannot read file ({exc.strerror or exc}).") from None

    def _parse(self, source: BinaryIO) -> Iterator[Pair]:
        stack: list[ET.Element] = []
        for event, elem in ET.iterparse(source, events=("start", "end")):
            tag = _local(elem.tag)
            if event == "start":
                if not stack and tag != "tmx":
                    raise CorpusError(f"{self.path}: not a TMX file (the root element is <{tag}>, expected <tmx>).")
                if tag == "header":
                    self.header_src = elem.get("srclang")
                stack.append(elem)
                continue
            stack.pop()
            if tag == "tu":
                yield self._pair(self._segments(elem))
                elem.clear()  # stream: forget finished units
                if stack:
                    stack[-1].remove(elem)

    def _segments(self, tu: ET.Element) -> list[tuple[str, str]]:
        """(language, text) of each <tuv> with a language and a <seg>."""
        found = []
        for tuv in tu:
            if _local(tuv.tag) != "tuv":
                continue
            lang = tuv.get(_XML_LANG) or tuv.get("lang")
            seg = next((c for c in tuv if _local(c.tag) == "seg"), None)
            if lang and seg is not None:
                found.append((lang, _seg_text(seg)))
                if len(self.languages) < 50:
                    self.languages.add(lang)
        return found

    def _pair(self, segs: list[tuple[str, str]]) -> Pair:
        """The unit's source and target text ("" for a missing side)."""
        self._resolve_langs(segs)
        src_i = next((i for i, (lang, _) in enumerate(segs) if self.src and _lang_matches(lang, self.src)), None)
        tgt_i = next((i for i, (lang, _) in enumerate(segs)
                      if i != src_i and self.tgt and _lang_matches(lang, self.tgt)), None)
        if src_i is None or tgt_i is None:
            return "", ""  # counted as a pair with an empty side
        self.matched += 1
        return segs[src_i][1], segs[tgt_i][1]

    def _resolve_langs(self, segs: list[tuple[str, str]]) -> None:
        """Fix missing languages from the first unit that has two: source = header srclang or the
        unit's first language, target = the unit's first other language."""
        if self.src and self.tgt or len({lang.lower() for lang, _ in segs}) < 2:
            return
        if not self.src:
            header = self.header_src if self.header_src and self.header_src != "*all*" else None
            matching = header and any(_lang_matches(lang, header) for lang, _ in segs)
            self.src = header if matching else segs[0][0]
        if not self.tgt:
            self.tgt = next((lang for lang, _ in segs if not _lang_matches(lang, self.src)), None)


# -- encoding -------------------------------------------------------------------------------------


@dataclass
class EncodedCorpus:
    """Id sequences of the kept pairs, concatenated into flat int32 tensors (compact for millions).

    Pair i's source is `src_ids[src_offsets[i]:src_offsets[i + 1]]` (tokens + </s> if
    src_add_eos); its target is the decoder sequence [decoder_start] + tokens + [</s>].
    """

    src_ids: Tensor  # (total source tokens,) int32
    src_offsets: Tensor  # (N + 1,) int64
    tgt_ids: Tensor  # (total target tokens,) int32
    tgt_offsets: Tensor  # (N + 1,) int64
    pair_index: Tensor  # (N,) int64: index of each kept pair in the pairs given to encode_pairs
    pad_id: int
    dropped_long: int = 0  # over max_tokens on a side, or beyond max_positions
    dropped_empty: int = 0  # a side with no tokens

    def __len__(self) -> int:
        return len(self.pair_index)

    @property
    def src_lengths(self) -> Tensor:
        """(N,) source sequence lengths (the width each needs in `Batch.src`)."""
        return self.src_offsets[1:] - self.src_offsets[:-1]

    @property
    def tgt_lengths(self) -> Tensor:
        """(N,) decoder steps: the width each needs in `Batch.tgt_in` / `tgt_out` (tokens + 1)."""
        return self.tgt_offsets[1:] - self.tgt_offsets[:-1] - 1

    def source(self, i: int) -> list[int]:
        return self.src_ids[self.src_offsets[i]:self.src_offsets[i + 1]].tolist()

    def target(self, i: int) -> list[int]:
        """The full decoder sequence [decoder_start] + tokens + [</s>]."""
        return self.tgt_ids[self.tgt_offsets[i]:self.tgt_offsets[i + 1]].tolist()


def encode_pairs(pairs: Corpus | Sequence[Pair], tokenizers: TokenizerPair, cfg: ModelConfig,
                 max_tokens: int | None = None) -> EncodedCorpus:
    """Tokenise pairs into model sequences, dropping pairs that are empty or too long.

    A pair is too long when a side has more than `max_tokens` subword tokens (special tokens not
    counted; None: no limit) or its source or decoder sequence exceeds `cfg.max_positions`.
    Raises CorpusError if pairs were given but none is kept.
    """
    rows = pairs.pairs if isinstance(pairs, Corpus) else pairs
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    src_ids, tgt_ids = array.array("i"), array.array("i")
    src_off, tgt_off, kept = array.array("q", [0]), array.array("q", [0]), array.array("q")
    dropped_long = dropped_empty = 0
    for start in range(0, len(rows), _ENCODE_CHUNK):
        chunk = rows[start:start + _ENCODE_CHUNK]
        src_tok = tokenizers.source.encode_batch([s for s, _ in chunk])
        tgt_tok = tokenizers.target.encode_batch([t for _, t in chunk])
        for j, (a, b) in enumerate(zip(src_tok, tgt_tok)):
            src = a + [cfg.eos_id] if cfg.src_add_eos else a
            tgt = [cfg.decoder_start_id, *b, cfg.eos_id]
            if not a or not b:
                dropped_empty += 1
            elif _too_long(len(a), len(b), len(src), len(tgt) - 1, max_tokens, cfg.max_positions):
                dropped_long += 1
            else:
                src_ids.extend(src)
                tgt_ids.extend(tgt)
                src_off.append(len(src_ids))
                tgt_off.append(len(tgt_ids))
                kept.append(start + j)
    if rows and not kept:
        raise CorpusError(f"no usable sentence pairs after tokenisation ({dropped_long} of {len(rows)} longer than "
                          f"{max_tokens or cfg.max_positions} tokens, {dropped_empty} empty).")
    return EncodedCorpus(_tensor(src_ids, torch.int32), _tensor(src_off, torch.int64), _tensor(tgt_ids, torch.int32),
                         _tensor(tgt_off, torch.int64), _tensor(kept, torch.int64), cfg.pad_id,
                         dropped_long, dropped_empty)


def _too_long(n_src_tokens: int, n_tgt_tokens: int, src_len: int, tgt_steps: int, max_tokens: int | None,
              max_positions: int) -> bool:
    over_budget = max_tokens is not None and max(n_src_tokens, n_tgt_tokens) > max_tokens
    return over_budget or src_len > max_positions or tgt_steps > max_positions


def _tensor(values: array.array, dtype: torch.dtype) -> Tensor:
    if not values:
        return torch.zeros(0, dtype=dtype)
    return torch.frombuffer(bytearray(values.tobytes()), dtype=dtype)


# -- batches --------------------------------------------------------------------------------------


@dataclass
class Batch:
    """A padded training batch; rows are right-padded with pad_id."""

    src: Tensor  # (B, S) int64: source tokens (+ </s>)
    tgt_in: Tensor  # (B, T) int64: decoder input, [decoder_start] + tokens
    tgt_out: Tensor  # (B, T) int64: gold next tokens, tokens + [</s>] (tgt_in shifted left by one)
    n_src_tokens: int  # real source positions
    n_tgt_tokens: int  # real target positions (what the loss averages over)
    pair_index: Tensor  # (B,) int64: each row's index in the pairs given to encode_pairs

    @property
    def rows(self) -> int:
        return self.src.shape[0]

    @property
    def padding_fraction(self) -> float:
        """Share of pad positions in `src` and `tgt_out` together."""
        total = self.src.numel() + self.tgt_out.numel()
        return 1.0 - (self.n_src_tokens + self.n_tgt_tokens) / total if total else 0.0

    def to(self, device: torch.device | str, non_blocking: bool = False) -> "Batch":
        move = lambda t: t.to(device, non_blocking=non_blocking)  # noqa: E731
        return dataclasses.replace(self, src=move(self.src), tgt_in=move(self.tgt_in), tgt_out=move(self.tgt_out))


def padding_fraction(batches: Iterable[Batch]) -> float:
    """Share of pad positions over all batches (source and target)."""
    real = total = 0
    for b in batches:
        real += b.n_src_tokens + b.n_tgt_tokens
        total += b.src.numel() + b.tgt_out.numel()
    return 1.0 - real / total if total else 0.0


def collate(encoded: EncodedCorpus, rows: Sequence[int]) -> Batch:
    """Pad the given rows of `encoded` into a Batch."""
    idx = torch.as_tensor(rows, dtype=torch.int64)  # (B,)
    s0, s1 = encoded.src_offsets[idx].tolist(), encoded.src_offsets[idx + 1].tolist()
    t0, t1 = encoded.tgt_offsets[idx].tolist(), encoded.tgt_offsets[idx + 1].tolist()
    src = [encoded.src_ids[a:b] for a, b in zip(s0, s1)]
    tgt_in = [encoded.tgt_ids[a:b - 1] for a, b in zip(t0, t1)]
    tgt_out = [encoded.tgt_ids[a + 1:b] for a, b in zip(t0, t1)]
    pad = encoded.pad_id
    return Batch(
        src=pad_sequence(src, batch_first=True, padding_value=pad).long(),  # (B, S)
        tgt_in=pad_sequence(tgt_in, batch_first=True, padding_value=pad).long(),  # (B, T)
        tgt_out=pad_sequence(tgt_out, batch_first=True, padding_value=pad).long(),  # (B, T)
        n_src_tokens=sum(len(x) for x in src),
        n_tgt_tokens=sum(len(x) for x in tgt_out),
        pair_index=encoded.pair_index[idx],
    )


def plan_batches(encoded: EncodedCorpus, max_tokens_per_batch: int, seed: int = 0, epoch: int = 0,
                 pool_factor: float = 100, shuffle: bool = True) -> list[list[int]]:
    """Row indices of each batch of an epoch, such that rows * max(src_len, tgt_len) <= budget.

    shuffle=True: rows are permuted by (seed, epoch), sorted by length inside consecutive pools
    of about `pool_factor` average batches, packed greedily in that order, and the batch order is
    permuted.
    shuffle=False: the same without randomness (pools follow corpus order). pool_factor <= 0
    turns length sorting off. A single pair wider than the budget forms a batch of its own.
    """
    if max_tokens_per_batch < 1:
        raise ValueError(f"max_tokens_per_batch must be >= 1, got {max_tokens_per_batch}")
    n = len(encoded)
    if n == 0:
        return []
    src_len, tgt_len = encoded.src_lengths, encoded.tgt_lengths  # (N,), (N,)
    width = torch.maximum(src_len, tgt_len)  # (N,) padded width each pair needs
    gen = _generator(seed, epoch)
    order = torch.randperm(n, generator=gen) if shuffle else torch.arange(n)  # (N,)
    pool = _pool_size(width, max_tokens_per_batch, pool_factor)
    if pool > 1:
        key = width * (int(src_len.max()) + 1) + src_len  # (N,) by width, then source length
        order = torch.cat([rows[torch.sort(key[rows], stable=True).indices] for rows in order.split(pool)])
    plans = _pack(order.tolist(), width.tolist(), max_tokens_per_batch)
    if shuffle:
        plans = [plans[i] for i in torch.randperm(len(plans), generator=gen).tolist()]
    return plans


def _pool_size(width: Tensor, budget: int, pool_factor: float) -> int:
    """Pairs per sorting pool: pool_factor times the average rows of a batch (1 = no sorting)."""
    if pool_factor <= 0:
        return 1
    rows_per_batch = max(1.0, budget / float(width.float().mean()))
    return max(1, round(pool_factor * rows_per_batch))


def _pack(rows: list[int], widths: list[int], budget: int) -> list[list[int]]:
    """Greedy packing in the given order: close a batch when one more row would exceed the budget."""
    batches, current, current_width = [], [], 0
    for r in rows:
        w = max(current_width, widths[r])
        if current and (len(current) + 1) * w > budget:
            batches.append(current)
            current, w = [], widths[r]
        current.append(r)
        current_width = w
    if current:
        batches.append(current)
    return batches


def make_batches(encoded: EncodedCorpus, max_tokens_per_batch: int, seed: int = 0, epoch: int = 0,
                 pool_factor: float = 100, shuffle: bool = True) -> list[Batch]:
    """All batches of one epoch as tensors (see `plan_batches`); deterministic for (seed, epoch)."""
    plans = plan_batches(encoded, max_tokens_per_batch, seed, epoch, pool_factor, shuffle)
    return [collate(encoded, rows) for rows in plans]


class EpochBatches(Sequence[Batch]):
    """The batches of one epoch, padded on access (memory stays at one batch).

    Indexing gives a Batch; slicing gives another EpochBatches (e.g. one rank's shard).
    """

    def __init__(self, encoded: EncodedCorpus, plans: list[list[int]], epoch: int):
        self.encoded, self.plans, self.epoch = encoded, plans, epoch

    def __len__(self) -> int:
        return len(self.plans)

    @overload
    def __getitem__(self, i: int) -> Batch: ...

    @overload
    def __getitem__(self, i: slice) -> "EpochBatches": ...

    def __getitem__(self, i: int | slice) -> "Batch | EpochBatches":
        if isinstance(i, slice):
            return EpochBatches(self.encoded, self.plans[i], self.epoch)
        return collate(self.encoded, self.plans[i])


def batches_for_epoch(encoded: EncodedCorpus, max_tokens_per_batch: int, seed: int, epoch: int,
                      pool_factor: float = 100) -> EpochBatches:
    """The shuffled, length-bucketed batches of `epoch`: a pure function of (data, budget, seed,
    epoch, pool_factor), so `DataPosition(epoch, i)` names batch `i` exactly across restarts."""
    return EpochBatches(encoded, plan_batches(encoded, max_tokens_per_batch, seed, epoch, pool_factor), epoch)


def shard_batches(batches: Sequence[Batch], rank: int, world_size: int) -> Sequence[Batch]:
    """Rank `rank`'s share: every world_size-th batch from index `rank`, after dropping the last
    len % world_size batches so every rank gets the same count. Shards are disjoint."""
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"need 0 <= rank < world_size, got rank {rank} and world_size {world_size}")
    usable = len(batches) // world_size * world_size
    return batches[rank:usable:world_size]


@dataclass(frozen=True)
class DataPosition:
    """Exact place in the training data: batch index `batch` of epoch `epoch` (of this rank's shard).

    Save `position.next()` with a checkpoint taken after training on the batch at `position`;
    an index at or past the end of an epoch simply continues with the next epoch.
    """

    epoch: int = 0
    batch: int = 0

    def next(self) -> "DataPosition":
        return DataPosition(self.epoch, self.batch + 1)


def iter_batches(encoded: EncodedCorpus, max_tokens_per_batch: int, seed: int,
                 start: DataPosition = DataPosition(), rank: int = 0, world_size: int = 1,
                 pool_factor: float = 100) -> Iterator[tuple[DataPosition, Batch]]:
    """Endless (position, batch) from `start`, epoch after epoch, for one rank."""
    epoch, index = start.epoch, start.batch
    while True:
        batches = shard_batches(batches_for_epoch(encoded, max_tokens_per_batch, seed, epoch, pool_factor),
                                rank, world_size)
        if not batches:
            raise CorpusError(f"epoch {epoch} has no batches for rank {rank} of {world_size}; "
                              f"the training data is too small.")
        for i in range(index, len(batches)):
            yield DataPosition(epoch, i), batches[i]
        epoch, index = epoch + 1, 0


def _generator(seed: int, salt: int | str) -> torch.Generator:
    """A torch generator seeded from (seed, salt) by hashing, so nearby seeds/epochs do not collide."""
    digest = hashlib.sha256(f"{seed}:{salt}".encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF)
