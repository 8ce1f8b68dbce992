"""Labels whose text comes from the user or the model (a title quoting a translation, a training status) and
so must never widen the window: a QLabel's minimum width is its longest unbreakable run, and a translation
in Chinese, a URL or a model's long pieces is one run thousands of pixels wide (the window grew to 6,117 px
with an OPUS-MT-size model's output in the Analysis title)."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QLabel, QSizePolicy

ZERO_WIDTH_SPACE = "\u200b"
_RUN = re.compile(r"\S{24,}")  # runs this long get a break opportunity every 12 characters


def breakable(text: str, every: int = 12) -> str:
    """`text` with a zero-width space every `every` characters inside long runs without spaces, so word
    wrapping can break them (the text reads and copies the same)."""
    def split(match: re.Match[str]) -> str:
        run = match.group(0)
        return ZERO_WIDTH_SPACE.join(run[i:i + every] for i in range(0, len(run), every))

    return _RUN.sub(split, text)


def fit_width(label: QLabel) -> QLabel:
    """Wrap the label's text to the width the layout gives it and never ask for more (horizontal policy
    Ignored); set its text with `set_fitting_text`."""
    label.setWordWrap(True)
    policy = label.sizePolicy()
    policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
    label.setSizePolicy(policy)
    label.setMinimumWidth(0)
    return label


def set_fitting_text(label: QLabel, text: str) -> None:
    """Set a `fit_width` label's text with break opportunities in its long runs."""
    label.setText(breakable(text))
