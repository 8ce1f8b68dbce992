"""Which language a text is in (POST /detect, `source=auto`): py3langid's probabilities
(core/decoding/source_language.py's identifier), as LibreTranslate's [{"confidence": 0-100, "language"}]."""

from __future__ import annotations

from typing import Any, Sequence


def detect(text: str, among: Sequence[str] | None = None, count: int = 3) -> list[dict[str, Any]]:
    """The most likely languages of `text`, best first; `among`: only these codes, their probabilities
    renormalised (the sources a server can translate from)."""
    from nmt_desktop.core.decoding.source_language import identifier

    ranked = identifier().rank(text)
    if among is not None:
        wanted = {code.split("-")[0].lower(): code for code in among}
        ranked = [(wanted[c], p) for c, p in ranked if c in wanted]
        total = sum(p for _c, p in ranked) or 1.0
        ranked = [(c, p / total) for c, p in ranked]
    return [{"confidence": round(100.0 * p, 2), "language": c} for c, p in ranked[:count]]
