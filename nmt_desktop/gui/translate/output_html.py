"""The translation as rich text: every target token a link ("tok:UNIT:INDEX") coloured by its probability,
with its alternatives in the tooltip; a line per line of the source; and the coverage warnings under it.
Plain strings, no widgets.

Colours come from the current theme (gui/theme.py); `follow_theme` re-renders a pane when it changes.

A word's token links sit in one `white-space:nowrap` span and words are parted by real spaces, so lines
wrap between words only, never inside one ("Berl|in"); words are `word_groups`, the one rule for words.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Callable

from nmt_desktop.core.analysis.words import display_piece, word_groups
from nmt_desktop.core.tokenizer import WORD_START

from .. import theme
from ..formatting import format_prob
from ..theme import Theme
from .document_model import TranslationDocument
from .memory_marks import memory_tip
from .trust import Mark, flag_background

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

    from nmt_desktop.core.analysis.coverage import CoverageWarning
    from nmt_desktop.core.decoding.results import Step

FONT_PT, LINE_HEIGHT = 15, 1.5  # the output's font size and line spacing; the panel sizes its pane by them
OUTPUT_LINES = 6  # lines of translation the output pane shows before it scrolls


def cursor(colours: Theme) -> str:
    return f'<span style="color:{colours.accent};">&nbsp;▍</span>'


def follow_theme(owner: QObject, render: Callable[[], None]) -> None:
    """Run `render()` again after every theme change (View > Theme), while `owner` lives."""
    theme.follow(owner, lambda _theme: render())


def token_link(unit: int, index: int) -> str:
    return f"tok:{unit}:{index}"


def parse_token_link(text: str) -> tuple[int, int] | None:
    """(unit, step index) of a token link, None for anything else."""
    parts = text.split(":")
    if len(parts) != 3 or parts[0] != "tok" or not all(p.isdigit() for p in parts[1:]):
        return None
    return int(parts[1]), int(parts[2])


def probability(logprob: float) -> float:
    return max(0.0, min(1.0, math.exp(logprob)))


def token_html(unit: int, step: Step, diffuse: set[tuple[int, int]], colours: Theme, mark: Mark | None = None) -> str:
    """One token as a link coloured by its probability, its alternatives in the tooltip; a token of a word the
    quality estimate flags (`mark`, trust.py) is underlined on its kind's background, the reason first in the tip;
    a token that came from the memory (`step.memory`, issue 45) is underlined on the memory tint, the segments it
    came from named in the tip."""
    piece = step.piece
    text = html.escape(piece[1:] if piece.startswith(WORD_START) else piece) or "&nbsp;"
    prob = probability(step.logprob)
    color = colours.text if prob > 0.5 else (colours.warning if prob > 0.2 else colours.error)
    # the pieces as every other view shows them (word starts marked), no nonzero probability shown as "0%"
    alternatives = ", ".join(f"{display_piece(a.piece)} {format_prob(a.prob)}" for a in step.alternatives[:5])
    memory = step.memory
    tip = html.escape((f"{mark.reason}\n" if mark else "") + f"{display_piece(piece)}: p = {format_prob(prob)}"
                      + (f"   ·   {alternatives}" if alternatives else "")
                      + (f"\n{memory_tip(memory)}" if memory is not None else ""), quote=True)
    background = colours.diffuse_background if (unit, step.index) in diffuse else colours.token_background
    if memory is not None:
        background = colours.memory_background
    if mark is not None:
        background = flag_background(mark.kind, colours.dark)
    underline = mark is not None or memory is not None
    return (f'<a href="{token_link(unit, step.index)}" title="{tip}" style="color:{color};'
            f' text-decoration:{"underline" if underline else "none"}; background-color:{background};">{text}</a>')


def words_html(unit: int, steps: list[Step], diffuse: set[tuple[int, int]], colours: Theme | None = None,
               marks: dict[int, Mark] | None = None) -> str:
    """A unit's tokens, a word's links unbreakable together; a space (a break) before a word that has one;
    `marks`: piece index -> the quality estimate's mark of its word."""
    colours = colours or theme.current()
    pieces = [s.piece for s in steps]
    out = []
    for k, group in enumerate(word_groups(pieces)):
        gap = " " if k and pieces[group[0]].startswith(WORD_START) else ""
        links = "".join(token_html(unit, steps[i], diffuse, colours, (marks or {}).get(steps[i].index))
                        for i in group)
        out.append(f'{gap}<span style="white-space:nowrap;">{links}</span>')
    return "".join(out)


def output_html(document: TranslationDocument, running: bool, colours: Theme | None = None,
                marks: dict[int, dict[int, Mark]] | None = None) -> str:
    """The document's tokens as HTML in the theme's colours; while `running`, a cursor after the unit
    being decoded; `marks`: unit -> piece index -> the quality estimate's mark (trust.py)."""
    colours = colours or theme.current()
    diffuse = document.diffuse_tokens()
    decoding = next((i for i, u in enumerate(document.units) if u.translation is None), -1) if running else -1
    lines = []
    for line in document.lines():
        chunks = []
        for ui in line:
            chunk = words_html(ui, [s for s in document.units[ui].steps if not s.is_eos], diffuse, colours,
                               (marks or {}).get(ui))
            chunks.append(chunk + (cursor(colours) if ui == decoding else ""))
        lines.append("&nbsp; ".join(c for c in chunks if c))
    style = f"font-size:{FONT_PT}pt; line-height:{LINE_HEIGHT:.0%};"
    return f'<div style="{style}">{"<br>".join(lines)}</div>'


SUMMARY_CHARS = 110  # the warning line under the translation: longer lists become counts, the list a tooltip


def coverage_summary(coverage: list[list[CoverageWarning]]) -> tuple[str, str]:
    """(one short line, the details): the warnings of `coverage_lines` on one line when they fit in
    SUMMARY_CHARS, else counted ("diffuse attention on 80 target tokens"), with every line in the details."""
    lines = coverage_lines(coverage)
    if not lines:
        return "", ""
    details = "\n".join(lines)
    joined = " · ".join(line.removeprefix("⚠ ") for line in lines)
    if len(joined) <= SUMMARY_CHARS:
        return f"⚠ {joined}", details
    omitted = sum(w.kind == "omission" for ws in coverage for w in ws)
    diffuse = sum(w.kind == "diffuse" for ws in coverage for w in ws)
    parts = ([f"little attention on {omitted} source word{'s' * (omitted != 1)} (possible omission)"] if omitted
             else []) + ([f"diffuse attention on {diffuse} target token{'s' * (diffuse != 1)} (highlighted)"]
                         if diffuse else [])
    return f"⚠ {' · '.join(parts)}: hover for the list", details


def coverage_lines(coverage: list[list[CoverageWarning]]) -> list[str]:
    """One line per kind of warning and unit: possible omissions (source words) and diffuse target tokens."""
    lines = []
    for i, warnings in enumerate(coverage):
        where = f"sentence {i + 1}: " if len(coverage) > 1 else ""
        omitted = [f"“{w.token}”" for w in warnings if w.kind == "omission"]
        diffuse = [f"“{w.token.lstrip(WORD_START)}”" for w in warnings if w.kind == "diffuse"]
        if omitted:
            lines.append(f"⚠ {where}little attention on source {', '.join(omitted)} (possible omission)")
        if diffuse:
            lines.append(f"⚠ {where}diffuse attention for {', '.join(diffuse)} (highlighted)")
    return lines
