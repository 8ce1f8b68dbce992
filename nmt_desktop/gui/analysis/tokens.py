"""Tokens as the Analysis views show them: which tokens changed between two translations, and a
sentence of token chips with some of them highlighted."""

from __future__ import annotations

import difflib
import html


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
        text = html.escape(piece) or "&nbsp;"
        style = f"background-color:{color}; font-weight:600;" if i in marked else "background-color:#eef2ff;"
        parts.append(f'<span style="{style}">{text}</span>')
    return f'<div style="font-size:13pt; line-height:160%;">{" ".join(parts)}</div>'
