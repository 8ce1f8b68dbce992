"""Corpus files read as raw (source, target) pairs: format detection, TSV and aligned text files.

TSV is `source<TAB>target` per line, further columns ignored (`.tsv`, `.tab`, or any text file whose
first non-blank line has a tab); aligned text is two files with one segment per line (TMX: tmx.py).
Text files must be UTF-8; a BOM and CRLF line ends are dropped silently. Only "\\n" ends a line,
so aligned files stay aligned even when a segment holds U+2028 or U+0085. Any problem with the input
raises `CorpusError`, one sentence naming the file and line.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

Pair = tuple[str, str]
Format = Literal["auto", "tsv", "tmx", "aligned"]
FORMATS = ("auto", "tsv", "tmx", "aligned")

_SPACE = re.compile(r"[ \t\n\r\f\v]+")
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


class CorpusError(ValueError):
    """A corpus file is missing, malformed or yields no usable sentence pairs."""


def normalize_space(text: str) -> str:
    """Collapse runs of ASCII whitespace (tabs, newlines too) to one space and strip the ends."""
    return _SPACE.sub(" ", text).strip()


# -- format detection ---------------------------------------------------------------------------


def check_file(path: Path) -> None:
    if not path.exists():
        raise CorpusError(f"{path}: file not found.")
    if not path.is_file():
        raise CorpusError(f"{path}: not a file.")


def detect_format(path: Path) -> str:
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


def tsv_pairs(path: Path) -> Iterator[Pair]:
    """(source, target) from the first two tab-separated columns; a blank line is an empty pair."""
    for number, line in enumerate(_text_lines(path), 1):
        if not line.strip():
            yield "", ""
            continue
        columns = line.split("\t")
        if len(columns) < 2:
            raise CorpusError(f"{path}, line {number}: expected at least 2 tab-separated columns, found 1.")
        yield columns[0], columns[1]


def aligned_pairs(src: Path, tgt: Path) -> Iterator[Pair]:
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
