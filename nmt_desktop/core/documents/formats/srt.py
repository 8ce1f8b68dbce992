"""SubRip (.srt) subtitles, read and written with the `srt` library: one block per cue, or per speaker.

A cue's lines are joined with a space (a translation reflows them), and its inline tags (<i>, <b>, <u>,
<font …>) become runs styled by the chain of open tags, so italics follow the words aligned to them. A
dialogue cue ("- Hi.\n- Hello.") is a block per speaker turn, its dashes kept as written. A leading
position tag ({\\an8}) is kept in front. On save, indexes (1, 2, 3... where the source had none), timings
and cue settings stay as they were; a translated cue is re-wrapped (`wrap`: balanced lines of at most 42
characters, or the source's longer ones, at most 2 (or the source's count) where they hold the text, more
rather than one overlong line; a dialogue turn per line), and a cue that comes back unchanged keeps its
lines exactly. The file is read in whatever encoding it is and written back in it (text_encoding.py).
The cue-text helpers here are shared with vtt.py.
"""

from __future__ import annotations

import html
import itertools
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
from nmt_desktop.core.documents.formats.inline_tree import whole_elements
from nmt_desktop.core.documents.safety import read_decoded
from nmt_desktop.core.documents.text_encoding import TextEncoding

LINE_WIDTH = 42  # characters a subtitle line holds (the common broadcast guideline)
MAX_LINES = 2
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)([.\s][^>]*)?>|<[^>]*>")
_HIDDEN = re.compile(r"<[^>]*>|&(?:#\d+|#x[0-9a-fA-F]+|\w+);")  # a tag shows nothing, a reference one character
_POSITION = re.compile(r"^(?:\{\\[^}]*\})+")

Style = tuple[tuple[str, str, int], ...]  # the open tags, outermost first: (name, opening tag as written, element)
_ELEMENTS = itertools.count()  # each opened element's own number: two <c> of one cue are two elements


def cue_runs(text: str, unescape: bool = False, chain: list[tuple[str, str, int]] | None = None) -> list[Run]:
    """The runs of a cue's text (lines joined with a space): a run per stretch under one chain of open
    tags; an unknown or timestamp tag (<00:01.000>) is a verbatim run, so it is never lost. `chain` holds
    the tags left open by the text before (a dialogue's earlier turn) and is left holding this text's; a
    tag opened again while open adds nothing (written back once, never as </u></u>)."""
    runs: list[Run] = []
    chain = [] if chain is None else chain
    position = 0
    text = " ".join(line.strip() for line in text.splitlines() if line.strip())

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
            names = [n for n, _, _ in chain]
            if name in names:
                del chain[len(names) - 1 - names[::-1].index(name):]
        elif not any((n, t) == (name, match.group()) for n, t, _ in chain):
            chain.append((name, match.group(), next(_ELEMENTS)))
    add(text[position:])
    merged: list[Run] = []  # "<i>A single</i>\n<i>italic cue</i>" is one italic run
    for run in runs:
        if (len(merged) >= 2 and not run.verbatim and not merged[-2].verbatim
                and look(run.style) == look(merged[-2].style) and not merged[-1].verbatim
                and not merged[-1].text.strip()):
            space = merged.pop()
            merged[-1] = Run(merged[-1].text + space.text + run.text, merged[-1].style)
        else:
            merged.append(run)
    return merged


def look(style: Style | None) -> tuple[tuple[str, str], ...]:
    """The tags of a style without the elements' numbers: what a reader sees."""
    return tuple((name, tag) for name, tag, _ in style or ())


def cue_markup(block: Block, translated: TranslatedBlock, escape: bool = False) -> str:
    """A cue's translated runs written back with their tags: the tags of consecutive runs' common chain
    stay open, the others are closed and opened around each run; an element whose runs the translation
    put apart is written once, around what lies between them (inline_tree.whole_elements: a karaoke
    cue's <c> per word stays one <c> per word, never two)."""
    out: list[str] = []
    open_: list[tuple[str, str, int]] = []
    chains = whole_elements([tuple(block.runs[item.index].style or ()) for item in translated])
    for item, chain_ in zip(translated, chains):
        run = block.runs[item.index]
        chain = list(chain_)
        common = 0
        while common < min(len(chain), len(open_)) and chain[common] == open_[common]:
            common += 1
        out.extend(f"</{name}>" for name, _, _ in reversed(open_[common:]))
        out.extend(tag for _, tag, _ in chain[common:])
        open_ = chain
        text = run.text if run.verbatim else " ".join(item.text.split("\n"))
        out.append(html.escape(text, quote=False) if escape and not run.verbatim else text)
    out.extend(f"</{name}>" for name, _, _ in reversed(open_))
    text = re.sub(r" {2,}", " ", "".join(out)).strip()
    return re.sub(r" +((?:</\w+>)+)$", r"\1", text)  # no space left before the closing tags


def _visible(markup: str) -> tuple[str, list[int]]:
    """The characters a cue's markup shows (a tag nothing, a character reference one) and their offsets."""
    visible, where = [], []
    position = 0
    for match in list(_HIDDEN.finditer(markup)) + [None]:
        end = match.start() if match else len(markup)
        visible.extend(markup[position:end])
        where.extend(range(position, end))
        if match and match.group().startswith("&"):
            visible.append("&")
            where.append(match.start())
        position = match.end() if match else position
    return "".join(visible), where


def visible_length(line: str) -> int:
    return len(_visible(line)[0].strip())


def wrap(markup: str, width: int = LINE_WIDTH, lines: int = MAX_LINES) -> list[str]:
    """A cue's text in as few lines of at most `width` visible characters as hold it (tags count nothing),
    cut at the spaces that balance the lines best: at most `lines` where the text fits, more lines of
    that width where it does not (never one overlong line: subtitle guidelines' 2 lines of 42); a word
    longer than `width` is kept whole, and no text is ever dropped."""
    text, where = _visible(markup)
    if len(text.strip()) <= width:
        return [markup]
    spaces = [i for i, char in enumerate(text)  # a line never starts with a dash: it reads as a new speaker
              if char == " " and text[:i].strip() and text[i + 1:].strip() and text[i + 1] not in DASHES]
    if not spaces:
        return [markup]
    longest = max(len(word) for word in text.split())
    cuts: list[int] = []
    for count in range(2, len(spaces) + 2):
        cuts = _balanced_cuts(text, spaces, count, width)
        bounds = [-1, *cuts, len(text)]
        if all(len(text[a + 1:b].strip()) <= max(width, longest) for a, b in zip(bounds, bounds[1:])):
            break
    out, start = [], 0
    for cut in cuts:
        out.append(markup[start:where[cut]].strip())
        start = where[cut] + 1
    out.append(markup[start:].strip())
    return [line for line in out if line]


def _balanced_cuts(text: str, spaces: list[int], count: int, width: int) -> list[int]:
    """The `count - 1` spaces to cut at for `count` lines: least sum of squared line lengths, a line over
    `width` costing more than any balance (dynamic programming over the spaces)."""
    bounds = [-1, *spaces, len(text)]

    def cost(a: int, b: int) -> int:
        length = len(text[bounds[a] + 1:bounds[b]].strip())
        return length * length + (10**9 * (length - width) if length > width else 0)

    best: dict[tuple[int, int], tuple[int, list[int]]] = {(0, 0): (0, [])}
    for lines_so_far in range(1, count + 1):
        for b in range(1, len(bounds)):
            if lines_so_far == count and b != len(bounds) - 1:
                continue
            options = [(total + cost(a, b), cuts + ([b] if b != len(bounds) - 1 else []))
                       for (k, a), (total, cuts) in best.items() if k == lines_so_far - 1 and a < b]
            if options:
                best[(lines_so_far, b)] = min(options, key=lambda option: option[0])
    _, chosen = best.get((count, len(bounds) - 1), (0, []))
    return [bounds[i] for i in chosen]


DASHES = "-\u2010\u2013\u2014"
_DASH = re.compile(rf"^((?:<[^>]*>)*)([{DASHES}](?![-\d])\s*)")
_FRAMED = re.compile(rf"((?:<[^>]*>)*[{DASHES}]+\s+)(.*?)(\s+[{DASHES}]+(?:<[^>]*>)*)")  # "- Author -"


@dataclass(frozen=True)
class Cue:
    """A cue's text as blocks: one per speaker turn of a dialogue cue ("- Hi.\n- Hello."), each with its
    speaker dash as written, so the dashes survive translation; one per line of a credit framed by dashes
    ("- Author -"), the frame kept around it; else one block."""
    dashes: list[str]  # what stands before each block's text: its speaker dash or frame, or ""
    blocks: list[Block]
    original: list[str]  # the cue's text lines as they were
    ends: list[str] = field(default_factory=list)  # what stands after each block's text: a frame's dashes


def read_cue(text: str, where: str, unescape: bool = False) -> Cue:
    lines = text.splitlines() or [""]
    turns: list[tuple[str, list[str], str]] = []
    # "- Subtitles by -" / "-- www.site.com --": every line framed by dashes is decoration, not speakers (an
    # interrupted speaker's "- But I -" ends with one too, but the other speaker's line does not)
    frames = [_FRAMED.fullmatch(line.strip()) for line in lines if line.strip()]
    if frames and all(frames):
        turns = [(frame.group(1), [frame.group(2)], frame.group(3)) for frame in frames]
    for line in lines if not turns else ():
        dash = _DASH.match(line.strip())  # a turn starts at a dash, the first one also without
        if dash:
            turns.append((dash.group(2), [dash.group(1) + line.strip()[dash.end():]], ""))
        elif turns:
            turns[-1][1].append(line)
        else:
            turns.append(("", [line], ""))
    chain: list[tuple[str, str, int]] = []
    blocks = [Block(cue_runs("\n".join(body), unescape, chain),
                    where=where if len(turns) == 1 else f"{where}, speaker {number}")
              for number, (_, body, _) in enumerate(turns, 1)]
    return Cue([dash for dash, _, _ in turns], blocks, lines, [end for _, _, end in turns])


def cue_lines(cue: Cue, translated: Sequence[TranslatedBlock],
              markup: Callable[[Block, TranslatedBlock], str]) -> list[str]:
    """A cue's new text lines: its original lines when it comes back unchanged; else each turn's markup
    after its dash, wrapped to the source's line width (at least 42) and line count (at least 2), a
    dialogue's turn on a line of its own."""
    for block, runs in zip(cue.blocks, translated, strict=True):
        check_translated(block, runs)
    if all(list(runs) == untranslated(block) for block, runs in zip(cue.blocks, translated)):
        return cue.original
    width = max([LINE_WIDTH] + [visible_length(line) for line in cue.original])
    if cue.dashes == [""]:
        return wrap(markup(cue.blocks[0], translated[0]), width, max(MAX_LINES, len(cue.original)))
    lines: list[str] = []
    for dash, block, runs, end in zip(cue.dashes, cue.blocks, translated, cue.ends):
        turn = wrap(markup(block, runs), width - len(dash) - len(end), 1) or [""]
        turn = [dash + turn[0], *turn[1:]]
        lines += [*turn[:-1], turn[-1] + end]
    return lines


@dataclass
class SubRipDocument:
    path: Path
    subtitles: list[srt.Subtitle]
    eol: str = "\n"
    encoding: TextEncoding = TextEncoding("utf-8")
    cues: list[Cue] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)  # the cues' blocks in order
    positions: list[str] = field(default_factory=list)  # each cue's leading {\an8} tags

    def save(self, path: Path, translated: Sequence[TranslatedBlock]) -> None:
        if len(translated) != len(self.blocks):
            raise ValueError(f"{self.path.name}: {len(translated)} translated blocks for {len(self.blocks)} cues")
        subtitles, done = [], 0
        for number, (sub, cue, position) in enumerate(zip(self.subtitles, self.cues, self.positions), 1):
            lines = cue_lines(cue, translated[done:done + len(cue.blocks)], cue_markup)
            done += len(cue.blocks)
            if lines is not cue.original:
                lines = [position + lines[0], *lines[1:]]
            content = "\n".join(lines) if lines is not cue.original else sub.content
            index = number if sub.index is None else sub.index  # a file without numbers gets 1, 2, 3...
            subtitles.append(srt.Subtitle(index, sub.start, sub.end, content, sub.proprietary))
        text = srt.compose(subtitles, reindex=False, strict=False, eol=self.eol)
        Path(path).write_bytes(self.encoding.encode(text))


def open_document(path: Path) -> SubRipDocument:
    decoded = read_decoded(path)
    text = decoded.text
    try:
        subtitles = list(srt.parse(text))
    except srt.SRTParseError as exc:
        raise DocumentError(f"{Path(path).name} is not a SubRip subtitle file: {exc}") from None
    document = SubRipDocument(Path(path), subtitles, "\r\n" if "\r\n" in text else "\n", decoded.encoding)
    for number, sub in enumerate(subtitles, 1):
        position = _POSITION.match(sub.content.lstrip())
        document.positions.append(position.group() if position else "")
        content = sub.content.lstrip()[position.end():] if position else sub.content
        cue = read_cue(content, f"cue {number} ({srt.timedelta_to_srt_timestamp(sub.start)})")
        document.cues.append(cue)
        document.blocks.extend(cue.blocks)
    return document
