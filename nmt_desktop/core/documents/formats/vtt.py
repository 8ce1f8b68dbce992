"""WebVTT (.vtt) subtitles: one block per cue (per speaker turn of a dialogue cue), checked and read with
`webvtt-py`, written back in place.

webvtt-py parses and validates the file (its captions are the cues); the cues' lines are found by cutting
the file into blocks by the same WebVTT rules (an empty line ends a block, a line of spaces does not, a
"-->" line that cannot be the block's timings starts one) and matching each caption by timings and text,
so a block webvtt-py skips stays as it is. Saving replaces only each cue's text lines in the source,
because re-serialising with the library reformats NOTE blocks: the header, NOTE, STYLE and REGION blocks,
cue identifiers, timings and cue settings stay byte for byte, in the source's encoding. Cue text becomes
runs as in srt.py (<i>, <b>, <u>, <c.x>, <v Speaker>, <lang>; timestamps are verbatim runs; speaker
dashes kept), with HTML character references (&amp;) decoded for translation and re-escaped on save; a
translated cue is re-wrapped as srt.py does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import webvtt
from webvtt.errors import MalformedCaptionError, MalformedFileError

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
    candidates = list(_cue_candidates(document.lines))
    found = 0
    for number, caption in enumerate(captions, 1):
        key = (caption.start, caption.end, caption.raw_text)
        while found < len(candidates) and candidates[found][0] != key:
            found += 1  # a block webvtt-py does not read as a cue (a malformed timing) stays as it is
        if found == len(candidates):
            raise DocumentError(f"{path.name}: webvtt-py reads cue {number} ({caption.start}) where the file's "
                                f"blocks hold none, so the file cannot be written back safely")
        place = candidates[found][1]
        found += 1
        document.places.append(place)
        source = "\n".join(document.lines[i].rstrip("\r\n") for i in place.text_lines)
        cue = read_cue(source, f"cue {number} ({caption.start})", unescape=True)
        document.cues.append(cue)
        document.blocks.extend(cue.blocks)
    return document


_TIMINGS = re.compile(r"\s*((?:\d+:)?\d{1,2}:\d{1,2}\.\d{1,3})\s*-->\s*((?:\d+:)?\d{1,2}:\d{1,2}\.\d{1,3})")


def _cue_candidates(lines: list[str]):
    """((start, end, text) as webvtt-py writes them, the cue's text lines) of each block that may be a cue."""
    for start, stop in _blocks(lines):
        heads = [lines[i].rstrip("\r\n") for i in range(start, min(start + 2, stop))]
        timing = 0 if "-->" in heads[0] else 1 if len(heads) > 1 and "-->" in heads[1] else None
        match = _TIMINGS.match(heads[timing]) if timing is not None else None
        if match is None:
            continue
        try:
            caption = webvtt.Caption(match.group(1), match.group(2))
        except MalformedCaptionError:
            continue
        first = start + timing + 1
        text = "\n".join(lines[i].rstrip("\r\n") for i in range(first, stop))
        eol = lines[start + timing][len(heads[timing]):] or "\n"
        yield (caption.start, caption.end, text), CueLines(range(first, stop), eol)


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """The (start, stop) line ranges of the file's blocks as webvtt-py (and the WebVTT parsing rules)
    cut them: a block ends at an empty line (a line of spaces belongs to it), and a line with "-->" that
    cannot be the current block's timings starts a new one; the header is the first block."""
    spans: list[tuple[int, int]] = []
    start, header = None, True
    for i, line in enumerate(lines + [""]):
        content = line.rstrip("\r\n")
        arrow_starts = (start is not None and "-->" in content
                        and (header or i - start > 1 or "-->" in lines[start]))
        if not content or arrow_starts:
            if start is not None:
                spans.append((start, i))
                start, header = None, False
        if content and start is None:
            start = i
    return spans[1:] if spans and lines and lines[0].startswith("WEBVTT") else spans
