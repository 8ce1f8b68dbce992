"""The Pharaoh format of word alignments: "i-j i-j ..." (source word i, target word j, 0-based).

Reading and writing links only; the alignments themselves are alignment.py's.
"""

from __future__ import annotations

from typing import Sequence


def to_pharaoh(links: Sequence[tuple[int, int]]) -> str:
    """Links -> Pharaoh format "i-j i-j ..." (source word i, target word j), sorted."""
    return " ".join(f"{i}-{j}" for i, j in sorted(set(links)))


def parse_pharaoh(text: str) -> set[tuple[int, int]]:
    """Pharaoh "i-j ..." -> {(i, j)}; ValueError on a malformed link."""
    links = set()
    for item in text.split():
        parts = item.split("-")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(f"not a Pharaoh link (i-j): {item!r}")
        links.add((int(parts[0]), int(parts[1])))
    return links
