"""Tokens as the Analysis views show them: which tokens changed between two translations, and a
sentence of token chips with some of them highlighted (pieces as `words.display_piece` spells them, the
word-start mark "·" muted; dark text on the light chips in either theme)."""

from __future__ import annotations

import difflib
import html

from nmt_desktop.core.analysis.words import WORD_MARK, display_piece

_CHIP_TEXT, _MARK_COLOUR = "#111827", "#9ca3af"


def token_diff(old: list[str], new: list[str]) -> tuple[set[int], set[int]]:
    """Indices of the tokens of `old` and of `new` that are not part of their longest matching blocks."""
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    same_old, same_new = set(), set()
    for block in matcher.get_matching_blocks():
        same_old.update(range(block.a, block.a + block.size))
        same_new.update(range(block.b, block.b + block.size))
    return set(range(len(old))) - same_old, set(range(len(new))) - same_new


def tokens_html(tokens: list[str], marked: set[int], color: str = "#fde68a") -> str:
    """`tokens` as chips, the `marked` indices highlighted in `color`."""
    parts = []
    for i, piece in enumerate(tokens):
        shown = display_piece(piece)
        text = html.escape(shown) or "&nbsp;"
        if shown.startswith(WORD_MARK) and len(shown) > 1:
            text = f'<span style="color:{_MARK_COLOUR};">{WORD_MARK}</span>{html.escape(shown[1:])}'
        style = f"color:{_CHIP_TEXT}; background-color:{color if i in marked else '#eef2ff'};" + \
            (" font-weight:600;" if i in marked else "")
        parts.append(f'<span style="{style}">{text}</span>')
    return f'<div style="font-size:13pt; line-height:160%;">{" ".join(parts)}</div>'
