"""WebVTT (.vtt) subtitles: one block per cue, checked and read with `webvtt-py`, written back in place.

webvtt-py parses and validates the file (its captions are the cues); saving replaces only each cue's text
lines in the source, because re-serialising with the library reformats NOTE blocks: the header, NOTE,
STYLE and REGION blocks, cue identifiers, timings and cue settings stay byte for byte. Cue text becomes
runs as in srt.py (<i>, <b>, <u>, <c.x>, <v Speaker>, <lang>; timestamps are verbatim runs), with HTML
character references (&amp;) decoded for translation and re-escaped on save; a translated cue is
re-wrapped to at most 2 lines of at most 42 characters where the words allow.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import webvtt
from webvtt.errors import MalformedFileError

from nmt_desktop.core.documents.blocks import Block, DocumentError, TranslatedBlock
from nmt_desktop.core.documents.formats.srt import Cue, cue_lines, cue_markup, read_cue
from nmt_desktop.core.documents.safety import read_decoded
from nmt_desktop.core.documents.text_encoding import TextEncoding

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass
class CueLines:
    text_lines: range  # the source lines holding the cue's text
    eol: str


@dataclass
class WebVTTDocument:
    path: Path
    lines: list[str]  # the source lines, each with its line end
    encoding: TextEncoding = TextEncoding("utf-8")
    places: list[CueLines] = field(default_factory=list)
    cues: list[Cue] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)  # the cues' blocks in order

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        if len(translated) != len(self.blocks):
            raise ValueError(f"{self.path.name}: {len(translated)} translated blocks for {len(self.blocks)} cues")
        lines = list(self.lines)
        starts = [0]
        for cue in self.cues:
            starts.append(starts[-1] + len(cue.blocks))
        for place, cue, start in reversed(list(zip(self.places, self.cues, starts))):
            new = cue_lines(cue, translated[start:start + len(cue.blocks)], partial(cue_markup, escape=True))
            if new is not cue.original:
                lines[place.text_lines.start:place.text_lines.stop] = [line + place.eol for line in new]
        Path(path).write_bytes(self.encoding.encode("".join(lines)))


def open_document(path: Path) -> WebVTTDocument:
    path = Path(path)
    decoded = read_decoded(path)
    text = decoded.text
    try:
        captions = webvtt.from_string(text).captions
    except MalformedFileError as exc:
        raise DocumentError(f"{path.name} is not a WebVTT subtitle file: {exc}") from None
    document = WebVTTDocument(path, _LINE.findall(text), decoded.encoding)
    for start, stop in _paragraphs(document.lines):
        heads = [document.lines[i] for i in range(start, min(start + 2, stop))]
        timing = next((start + k for k, line in enumerate(heads) if "-->" in line), None)
        if timing is None or heads[0].startswith(("NOTE", "STYLE", "REGION", "WEBVTT")) and timing == start + 1:
            continue
        eol = document.lines[timing][len(document.lines[timing].rstrip("\r\n")):] or "\n"
        document.places.append(CueLines(range(timing + 1, stop), eol))
    if len(document.places) != len(captions):
        raise DocumentError(f"{path.name}: found {len(document.places)} cues where webvtt-py reads "
                            f"{len(captions)}, so the file cannot be written back safely")
    for number, (place, caption) in enumerate(zip(document.places, captions), 1):
        source = "\n".join(document.lines[i].rstrip("\r\n") for i in place.text_lines)
        cue = read_cue(source, f"cue {number} ({caption.start})", unescape=True)
        document.cues.append(cue)
        document.blocks.extend(cue.blocks)
    return document


def _paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """The (start, stop) line ranges of the blank-line separated blocks."""
    spans, start = [], None
    for i, line in enumerate(lines + ["\n"]):
        if line.strip():
            start = i if start is None else start
        elif start is not None:
            spans.append((start, i))
            start = None
    return spans

