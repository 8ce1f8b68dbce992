"""The translation as rich text: every target token a link ("tok:UNIT:INDEX") coloured by its probability,
with its alternatives in the tooltip; a line per line of the source; and the coverage warnings under it.
Plain strings, no widgets."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

from nmt_desktop.core.tokenizer import WORD_START

from .document_model import TranslationDocument

if TYPE_CHECKING:
    from nmt_desktop.core.analysis.heads import CoverageWarning

CURSOR = '<span style="color:#6366f1;">&nbsp;▍</span>'


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


def output_html(document: TranslationDocument, running: bool) -> str:
    """The document's tokens as HTML; while `running`, a cursor after the unit being decoded."""
    diffuse = document.diffuse_tokens()
    decoding = next((i for i, u in enumerate(document.units) if u.translation is None), -1) if running else -1
    lines = []
    for line in document.lines():
        chunks = []
        for ui in line:
            words = []
            for step in document.units[ui].steps:
                if step.is_eos:
                    continue
                piece = step.piece
                gap = piece.startswith(WORD_START) or not words
                text = html.escape(piece[1:] if piece.startswith(WORD_START) else piece) or "&nbsp;"
                prob = probability(step.logprob)
                color = "#1f2937" if prob > 0.5 else ("#92400e" if prob > 0.2 else "#b91c1c")
                alternatives = ", ".join(f"{a.piece.lstrip(WORD_START)} {a.prob:.0%}" for a in step.alternatives[:5])
                tip = html.escape(f"p = {prob:.1%}" + (f"   ·   {alternatives}" if alternatives else ""), quote=True)
                background = "#fed7aa" if (ui, step.index) in diffuse else "#eef2ff"
                words.append(("&nbsp;" if gap and words else "")
                             + f'<a href="{token_link(ui, step.index)}" title="{tip}" style="color:{color};'
                               f' text-decoration:none; background-color:{background};">{text}</a>')
            if ui == decoding:
                words.append(CURSOR)
            chunks.append("".join(words))
        lines.append("&nbsp; ".join(c for c in chunks if c))
    return f'<div style="font-size:15pt; line-height:150%;">{"<br>".join(lines)}</div>'


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
