"""What the Translate tab says of a token that came from the translation memory (issue 45, core/adaptation): the
tooltip line naming the memory segments its neighbours came from, with their weights. Qt-free: output_html.py
puts it in the token's title, on the theme's `memory_background` tint with an underline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..formatting import format_prob

if TYPE_CHECKING:
    from nmt_desktop.core.adaptation.memory_use import MemorySource, MemoryUse

SHOWN_SOURCES = 3  # memory segments named in a token's tooltip, the weightiest first
SEGMENT_CHARS = 60  # a segment's text in the tooltip, cut with "…" beyond


def _cut(text: str) -> str:
    return text if len(text) <= SEGMENT_CHARS else text[: SEGMENT_CHARS - 1] + "…"


def segment_line(source: MemorySource) -> str:
    """One memory segment as a person reads it: “source” → “target” (entry #id), its weight."""
    return f"#{source.entry_id} “{_cut(source.source)}” → “{_cut(source.target)}”  ({format_prob(source.weight)})"


def memory_tip(use: MemoryUse) -> str:
    """The tooltip lines of a token whose probability came partly from the memory."""
    lines = [f"From your memory: {format_prob(use.share)} of this token's probability"
             + (", from" if use.sources else "")]
    lines += [f"  {segment_line(s)}" for s in use.sources[:SHOWN_SOURCES]]
    if len(use.sources) > SHOWN_SOURCES:
        lines.append(f"  and {len(use.sources) - SHOWN_SOURCES} more")
    return "\n".join(lines)
