"""The Translate tab's n-best list: one row per hypothesis ("1.  -0.412   the translation…"), wrapped.

A hypothesis is a whole sentence, far wider than the inspect tabs beside the attention grid: unwrapped, each
row needed horizontal scrolling to be read (issue 29). Rows wrap at the list's width instead and grow as
tall as their text; there is never a horizontal scroll bar."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QListView, QListWidget, QWidget


class NBestList(QListWidget):
    """A list whose rows wrap to its width (re-wrapped when it is resized)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setResizeMode(QListView.ResizeMode.Adjust)  # lay the rows out again at the new width
        self.setUniformItemSizes(False)  # a long hypothesis takes more lines than a short one
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)  # tall rows scroll smoothly
        self.setSpacing(1)
