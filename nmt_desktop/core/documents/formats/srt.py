"""SubRip (.srt) subtitles, read and written with the `srt` library: one block per cue.

A cue's lines are joined with a space (a translation reflows them), and its inline tags (<i>, <b>, <u>,
<font …>) become runs styled by the chain of open tags, so italics follow the words aligned to them. A
leading position tag ({\\an8}) is kept in front. On save, indexes, timings and cue settings stay as they
were; a translated cue is re-wrapped (`wrap`: at most 2 balanced lines of at most 42 characters where the
words allow), and a cue that comes back unchanged keeps its lines exactly. The cue-text helpers here are
shared with vtt.py.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import srt

from nmt_desktop.core.documents.blocks import (
    Block,
    DocumentError,
    Run,
    TranslatedBlock,
    check_translated,
    untranslated,
)
from nmt_desktop.core.documents.safety import read_text

LINE_WIDTH = 42  # characters a subtitle line holds (the common broadcast guideline)
MAX_LINES = 2
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)([.\s][^>]*)?>|<[^>]*>")
_HIDDEN = re.compile(r"<[^>]*>|&(?:#\d+|#x[0-9a-fA-F]+|\w+);")  # a tag shows nothing, a reference one character
_POSITION = re.compile(r"^(?:\{\\[^}]*\})+")

Style = tuple[tuple[str, str], ...]  # the open tags, outermost first: (name, opening tag as written)


def cue_runs(text: str, unescape: bool = False) -> list[Run]:
    """The runs of a cue's text (lines joined with a space): a run per stretch under one chain of open
    tags; an unknown or timestamp tag (<00:01.000>) is a verbatim run, so it is never lost."""
    runs: list[Run] = []
    chain: list[tuple[str, str]] = []
    position = 0
    text = " ".join(line.strip() for line in text.splitlines())

    def add(piece: str) -> None:
        if piece:
            runs.append(Run(html.unescape(piece) if unescape else piece, tuple(chain) or None))

    for match in _TAG.finditer(text):
        add(text[position:match.start()])
        position = match.end()
        closing, name = match.group(1), (match.group(2) or "").lower()
        if not name:
            runs.append(Run(match.group(), tuple(chain) or None, verbatim=True))
        elif closing:
            names = [n for n, _ in chain]
            if name in names:
                del chain[len(names) - 1 - names[::-1].index(name):]
        else:
            chain.append((name, match.group()))
    add(text[position:])
    merged: list[Run] = []  # "<i>A single</i>\n<i>italic cue</i>" is one italic run
    for run in runs:
        if (len(merged) >= 2 and not run.verbatim and not merged[-2].verbatim and run.style == merged[-2].style
                and not merged[-1].verbatim and not merged[-1].text.strip()):
            space = merged.pop()
            merged[-1] = Run(merged[-1].text + space.text + run.text, run.style)
        else:
            merged.append(run)
    return merged


def cue_markup(block: Block, translated: TranslatedBlock, escape: bool = False) -> str:
    """A cue's translated runs written back with their tags: the tags of consecutive runs' common chain
    stay open, the others are closed and opened around each run."""
    out: list[str] = []
    open_: list[tuple[str, str]] = []
    for item in translated:
        run = block.runs[item.index]
        chain = list(run.style or ())
        common = 0
        while common < min(len(chain), len(open_)) and chain[common] == open_[common]:
            common += 1
        out.extend(f"</{name}>" for name, _ in reversed(open_[common:]))
        out.extend(tag for _, tag in chain[common:])
        open_ = chain
        text = run.text if run.verbatim else " ".join(item.text.split("\n"))
        out.append(html.escape(text, quote=False) if escape and not run.verbatim else text)
    out.extend(f"</{name}>" for name, _ in reversed(open_))
    text = re.sub(r" {2,}", " ", "".join(out)).strip()
    return re.sub(r" +((?:</\w+>)+)$", r"\1", text)  # no space left before the closing tags


def wrap(markup: str, width: int = LINE_WIDTH, lines: int = MAX_LINES) -> list[str]:
    """A cue's text in at most `lines` (1 or 2) lines of at most `width` visible characters (tags count nothing),
    split at the space that balances the lines best; lines grow longer only when the words do not fit,
    and no text is ever dropped."""
    visible, where = [], []  # the visible characters and their offsets in markup
    position = 0
    for match in list(_HIDDEN.finditer(markup)) + [None]:
        end = match.start() if match else len(markup)
        visible.extend(markup[position:end])
        where.extend(range(position, end))
        if match and match.group().startswith("&"):
            visible.append("&")
            where.append(match.start())
        position = match.end() if match else position
    text = "".join(visible)
    if len(text.strip()) <= width or lines < 2:
        return [markup]
    spaces = [i for i, char in enumerate(text) if char == " "]
    if not spaces:
        return [markup]

    def cost(i: int) -> tuple[int, int]:
        left, right = len(text[:i].strip()), len(text[i + 1:].strip())
        return (max(left, right) > width, abs(left - right))

    best = min(spaces, key=cost)
    cut = where[best]
    return [markup[:cut].rstrip(), markup[cut + 1:].lstrip()]


def keep_or_wrap(block: Block, translated: TranslatedBlock, original: list[str],
                 markup: Callable[[Block, TranslatedBlock], str]) -> list[str]:
    """A cue's new lines: its original lines when it comes back unchanged, else the rewrapped markup."""
    check_translated(block, translated)
    if list(translated) == untranslated(block):
        return original
    return wrap(markup(block, translated))


@dataclass
class SubRipDocument:
    path: Path
    subtitles: list[srt.Subtitle]
    eol: str = "\n"
    blocks: list[Block] = field(default_factory=list)
    positions: list[str] = field(default_factory=list)  # each cue's leading {\an8} tags

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        if len(translated) != len(self.blocks):
            raise ValueError(f"{self.path.name}: {len(translated)} translated blocks for {len(self.blocks)} cues")
        subtitles = []
        for sub, block, runs, position in zip(self.subtitles, self.blocks, translated, self.positions):
            original = sub.content.splitlines()
            lines = keep_or_wrap(block, runs, original, cue_markup)
            if lines is not original:
                lines[0] = position + lines[0]
            subtitles.append(srt.Subtitle(sub.index, sub.start, sub.end, "\n".join(lines), sub.proprietary))
        text = srt.compose(subtitles, reindex=False, strict=False, eol=self.eol)
        Path(path).write_text(text, encoding="utf-8", newline="")


def open_document(path: Path) -> SubRipDocument:
    text = read_text(path)
    try:
        subtitles = list(srt.parse(text))
    except srt.SRTParseError as exc:
        raise DocumentError(f"{Path(path).name} is not a SubRip subtitle file: {exc}") from None
    document = SubRipDocument(Path(path), subtitles, "\r\n" if "\r\n" in text else "\n")
    for number, sub in enumerate(subtitles, 1):
        position = _POSITION.match(sub.content.lstrip())
        document.positions.append(position.group() if position else "")
        content = sub.content.lstrip()[position.end():] if position else sub.content
        where = f"cue {number} ({srt.timedelta_to_srt_timestamp(sub.start)})"
        document.blocks.append(Block(cue_runs(content), where=where))
    return document
